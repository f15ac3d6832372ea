"""``redline pending check ID``: run the configured checks on one action, or show them.

Stored results (by any process) are shown as they are, and a stored result that no longer
describes the action says so (``out of date (the check's config changed): --again reruns
it``, or ``the files changed since``; ``age unknown`` for one stored before results
recorded that). Checks without a result yet, or every check with ``--again``, run now in
the foreground (a scratch copy; the workspace is only read). ``--only`` checks the chosen
hunks alone (that result is printed, not stored). Exit status: 0 when every check passed
(or was skipped) and every result shown is current, 1 when any has new findings, timed
out, failed, is still running elsewhere or is out of date, 2 for bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.checks import CheckResult
    from redline.workspace.queue import WorkspaceQueue

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure_check(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--again", action="store_true", help="run every check again, even with results stored"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="PATH#N",
        help="check only these hunks (PATH#N) or files (PATH); printed, not stored",
    )


def _out(text: str, *, err: bool = False) -> None:
    import sys

    from redline.workspace.names import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def run_check(queue: WorkspaceQueue, args: argparse.Namespace) -> int:
    from redline.checks import Cancelled, load_checks, load_results, run_for_action
    from redline.checks.results import stale_results
    from redline.config import ConfigError
    from redline.workspace.hunks import HunkError, parse_selection, split_for_apply
    from redline.workspace.queue import QueueError, check_id

    action_id = args.id
    try:
        check_id(action_id)
        record = queue.get(action_id)
        if record is None:
            _out(f"redline pending: {action_id} is not pending; nothing to check", err=True)
            return EXIT_FAILED
        preview = queue.preview(record)
    except QueueError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_BAD_INPUT if "is not a pending action id" in str(exc) else EXIT_FAILED
    if preview is None:
        _out(f"redline pending: {action_id} changes no files; there is nothing to check", err=True)
        return EXIT_FAILED
    try:
        config = load_checks(queue.root)
    except ConfigError as exc:
        _out(f"redline pending: {exc}", err=True)
        return EXIT_FAILED
    for note in config.notes:
        _out(f"redline pending: {note}", err=True)
    if not config.checks and not config.skipped:
        _out(
            "redline pending: no checks are configured; add [[checks]] to your config.toml "
            "(see docs/checks.md)",
            err=True,
        )
        return EXIT_FAILED
    store = True
    if args.only:
        try:
            selection = [part.strip() for value in args.only for part in value.split(",")]
            if not all(selection):
                raise ValueError("an empty PATH or PATH#N in the list")
            preview = split_for_apply(preview, parse_selection(preview, selection)).selected
        except (HunkError, ValueError) as exc:
            _out(f"redline pending: --only: {exc}", err=True)
            return EXIT_BAD_INPUT
        store = False
    stored = load_results(queue, action_id)
    if stored.problem:
        _out(f"redline pending: {stored.problem}; running the checks again", err=True)
    have = stored.by_name()
    if args.again or not store:
        todo = list(config.checks)
    else:
        todo = [spec for spec in config.checks if spec.name not in have]
    stale: dict[str, str] = {}
    if todo:
        try:
            results = run_for_action(queue, action_id, preview, config, specs=todo, store=store)
        except Cancelled:
            _out(f"redline pending: {action_id} was resolved while its checks ran", err=True)
            return EXIT_FAILED
        except QueueError as exc:
            _out(f"redline pending: {exc}", err=True)
            return EXIT_FAILED
    else:
        from redline.checks.run import skipped_results

        results = [have[spec.name] for spec in config.checks] + skipped_results(config)
    ran = {spec.name for spec in todo}
    shown = [r for r in results if r.name not in ran]
    if shown:
        stale = stale_results(queue, config, shown, preview)
    return _print(action_id, results, stale, args.json)


def _print(action_id: str, results: list[CheckResult], stale: dict[str, str], as_json: bool) -> int:
    from redline.checks import result_json
    from redline.checks.results import out_of_date_text
    from redline.workspace.names import json_dumps

    ok = all(r.status in ("pass", "skipped") for r in results) and not stale
    if as_json:
        data = result_json(action_id, results)
        for entry in data["checks"]:
            if entry["name"] in stale:
                entry["out_of_date"] = stale[entry["name"]]
        _out(json_dumps(data))
        return EXIT_OK if ok else EXIT_FAILED
    lines = [f"{action_id}: checks"]
    for r in results:
        head = f"  {r.name}: {r.status}"
        if r.status == "findings":
            head += f" ({len(r.new)} new)"
        if r.fixed:
            head += f", {len(r.fixed)} fixed"
        if r.why:
            head += f" — {r.why}"
        lines.append(head)
        if r.name in stale:
            lines.append(f"    {out_of_date_text(stale[r.name])}")
        for label, items in (("new", r.new), ("fixed", r.fixed)):
            for f in items:
                where = f"{f.path}:{f.line}" if f.line else f.path
                lines.append(f"    {label}  {where}: {f.code} {f.message}".rstrip())
    _out("\n".join(lines))
    return EXIT_OK if ok else EXIT_FAILED
