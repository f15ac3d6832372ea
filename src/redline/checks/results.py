"""The check results of queued actions: running them for an action and storing them.

One document per action (:mod:`redline.workspace.queue.check_results`) holds one entry
per check and who is running the pending ones (pid and its start time): a reader whose
runner has ended shows those as ``error`` ("the process running it ended"), never as a
pass. :func:`run_for_action` is what ``redline pending check``, the dashboard's background
runner and rules with ``checks = "pass"`` call.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redline.checks.config import ChecksConfig, CheckSpec
from redline.checks.run import (
    NO_FILES,
    Cancelled,
    CheckResult,
    base_tree_hash,
    check_preview,
    skipped_results,
)
from redline.workspace.preview import Preview
from redline.workspace.queue import QueueError, QueueRecordError, WorkspaceQueue
from redline.workspace.queue.check_results import (
    read_check_results,
    remove_check_results,
    write_check_results,
)
from redline.workspace.queue.procs import is_alive, process_start_time

RUNNER_ENDED = "the process that was running it ended before it finished"
AGE_UNKNOWN = "age unknown"
CONFIG_CHANGED = "the check's config changed"
FILES_CHANGED = "the files changed since"


@dataclass(frozen=True)
class StoredResults:
    """What the queue holds for one action."""

    action_id: str
    results: tuple[CheckResult, ...]
    problem: str = ""

    def by_name(self) -> dict[str, CheckResult]:
        return {r.name: r for r in self.results}


def load_results(queue: WorkspaceQueue, action_id: str) -> StoredResults:
    """The stored results of ``action_id`` (running entries of an ended runner → error)."""
    try:
        data = read_check_results(queue, action_id)
    except QueueRecordError as exc:
        return StoredResults(action_id, (), str(exc))
    if data is None:
        return StoredResults(action_id, ())
    if data.get("id") != action_id:
        return StoredResults(action_id, (), f"check results of {action_id} name another action")
    pid, start = data.get("pid"), data.get("pid_start")
    alive = isinstance(pid, int) and is_alive(pid, start if isinstance(start, int) else None)
    results = []
    for entry in data.get("checks") or []:
        try:
            result = CheckResult.from_dict(entry)
        except ValueError as exc:
            return StoredResults(action_id, (), f"check results of {action_id}: {exc}")
        if result.status == "running" and not alive:
            result = CheckResult(result.name, "error", why=RUNNER_ENDED)
        results.append(result)
    return StoredResults(action_id, tuple(results))


def _write(queue: WorkspaceQueue, action_id: str, results: Sequence[CheckResult]) -> None:
    pid = os.getpid()
    write_check_results(
        queue,
        action_id,
        {
            "id": action_id,
            "pid": pid,
            "pid_start": process_start_time(pid),
            "time": time.time(),
            "checks": [r.to_dict(stored=True) for r in results],
        },
    )


def _merge(old: Sequence[CheckResult], new: Sequence[CheckResult]) -> list[CheckResult]:
    merged = {r.name: r for r in old}
    merged.update((r.name, r) for r in new)
    return list(merged.values())


def run_for_action(
    queue: WorkspaceQueue,
    action_id: str,
    preview: Preview,
    config: ChecksConfig,
    *,
    specs: Sequence[CheckSpec] | None = None,
    cancel: threading.Event | None = None,
    store: bool = True,
) -> list[CheckResult]:
    """Run ``specs`` (default: every configured check) on the action and store the results
    with it (entries show ``running`` meanwhile). Returns one result per configured check,
    the skipped ones included. Raises :class:`Cancelled` if ``cancel`` is set or the action
    leaves the queue meanwhile (its results are then removed)."""
    chosen = list(config.checks if specs is None else specs)
    skipped = skipped_results(config)
    previous = load_results(queue, action_id).results if store else ()
    if store:
        running = [CheckResult(s.name, "running", config=s.key()) for s in chosen]
        _write(queue, action_id, _merge(previous, [*running, *skipped]))
    try:
        results = check_preview(
            queue.root, preview, chosen, jobs=config.jobs, cancel=cancel, slots=config.jobs
        )
    except BaseException:
        if store:
            _forget(queue, action_id, previous)
        raise
    if store:
        try:
            # Cancelled meanwhile (the action was resolved): its killed run is no result.
            still = not (cancel is not None and cancel.is_set())
            still = still and queue.get(action_id) is not None
        except QueueError:
            still = False
        if not still:
            _forget(queue, action_id, ())
            raise Cancelled()
        _write(queue, action_id, _merge(previous, [*results, *skipped]))
    order = {name: index for index, name in enumerate(config.names)}
    everything = _merge(previous, [*results, *skipped])
    return sorted(everything, key=lambda r: order.get(r.name, len(order)))


def _forget(queue: WorkspaceQueue, action_id: str, previous: Sequence[CheckResult]) -> None:
    try:
        if previous:
            _write(queue, action_id, previous)
        else:
            remove_check_results(queue, action_id)
    except QueueError:
        pass


def out_of_date(
    config: ChecksConfig, results: Sequence[CheckResult], base: Callable[[], str] | None
) -> dict[str, str]:
    """Which stored ``results`` no longer describe the action, and why: name →
    :data:`AGE_UNKNOWN` (stored before results recorded their configuration),
    :data:`CONFIG_CHANGED` or :data:`FILES_CHANGED` (the tree without the change is not the
    one it ran on). ``base`` gives the tree's hash now; it is asked at most once, and only
    when a result's configuration is current (None: the files are not compared)."""
    specs = {spec.name: spec for spec in config.checks}
    found: dict[str, str] = {}
    now: list[str] = []
    for result in results:
        spec = specs.get(result.name)
        if spec is None or result.status == "running":
            continue
        if result.status == "skipped" and result.why != NO_FILES:
            continue  # a check this workspace may not run: that is decided afresh
        if result.status == "error" and result.why == RUNNER_ENDED:
            continue
        if not result.config:
            found[result.name] = AGE_UNKNOWN
        elif result.config != spec.key():
            found[result.name] = CONFIG_CHANGED
        elif result.base and base is not None:
            if not now:
                now.append(base())
            if result.base != now[0]:
                found[result.name] = FILES_CHANGED
    return found


def out_of_date_text(why: str) -> str:
    """``out of date (…): --again reruns it`` (``age unknown: --again reruns it``)."""
    head = why if why == AGE_UNKNOWN else f"out of date ({why})"
    return f"{head}: --again reruns it"


def stale_results(
    queue: WorkspaceQueue, config: ChecksConfig, results: Sequence[CheckResult], preview: Preview
) -> dict[str, str]:
    """:func:`out_of_date` for an action of ``queue`` whose Preview is ``preview``."""
    return out_of_date(config, results, lambda: base_tree_hash(queue.root, preview))


def summary(results: Sequence[CheckResult]) -> str:
    """One line: ``checks: ruff 1 new, pytest pass`` ("" without results)."""
    parts = []
    for r in results:
        if r.status == "findings":
            parts.append(f"{r.name} {len(r.new)} new")
        else:
            parts.append(f"{r.name} {r.status}")
    return ("checks: " + ", ".join(parts)) if parts else ""


def passed(config: ChecksConfig, results: Sequence[CheckResult]) -> tuple[bool, str]:
    """Did every configured check pass with no new findings? And if not, why not."""
    if config.skipped:
        names = ", ".join(s.name for s in config.skipped)
        return False, f"check(s) {names} cannot run: {config.skipped[0].why}"
    if not config.checks:
        return False, "no checks are configured"
    by_name = {r.name: r for r in results}
    looked = False
    for spec in config.checks:
        result = by_name.get(spec.name)
        if result is None:
            return False, f"check {spec.name} has no result"
        if result.status == "skipped" and result.why == NO_FILES:
            continue  # none of the action's files is one this check looks at
        looked = True
        if result.status == "findings":
            return False, f"check {spec.name} has {len(result.new)} new finding(s)"
        if result.status != "pass":
            why = f": {result.why}" if result.why else ""
            return False, f"check {spec.name} {result.status}{why}"
    if not looked:
        return False, "no configured check looks at the action's files"
    return True, "every check passed"


def findings_text(results: Sequence[CheckResult], limit: int = 20) -> str:
    """The new findings as lines ``path:line: code message`` (for a discard reason)."""
    lines: list[str] = []
    for r in results:
        for f in r.new:
            where = f"{f.path}:{f.line}" if f.line else (f.path or r.name)
            lines.append(f"{where}: {f.code} {f.message}".strip())
        if r.status in ("timeout", "error"):
            lines.append(f"{r.name}: {r.status}: {r.why}")
    if len(lines) > limit:
        lines = [*lines[:limit], f"… and {len(lines) - limit} more"]
    return "\n".join(lines)


def result_json(action_id: str, results: Sequence[CheckResult]) -> dict[str, Any]:
    """``redline pending check ID --json``."""
    return {"id": action_id, "checks": [r.to_dict() for r in results]}
