"""``redline pending import SOURCE``: a branch, a worktree or a patch as pending actions.

One action per changed file, source ``import:NAME``; refusals (binary files, conflicts with
the local file, paths redline may not touch) are named on stderr. Exit 0 when every file
was queued, 1 when any was refused, 2 when the source cannot be read at all.

With ``--watch`` a branch or worktree is followed after that
(:mod:`redline.workspace.git_watch`) until Ctrl-C, which ends it with exit 0 (exit 1 when
the watch ends by itself: the worktree folder is gone).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from redline.workspace.git_import import ImportPlan

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def configure(child: argparse.ArgumentParser) -> None:
    child.add_argument(
        "source",
        metavar="SOURCE",
        help="a patch file or - (unified diff or git format-patch), a worktree folder, "
        "or a git ref (a branch: its changes since the merge base with HEAD)",
    )
    kind = child.add_mutually_exclusive_group()
    kind.add_argument(
        "--patch", dest="kind", action="store_const", const="patch", help="SOURCE is a patch"
    )
    kind.add_argument(
        "--worktree",
        dest="kind",
        action="store_const",
        const="worktree",
        help="SOURCE is a worktree folder",
    )
    kind.add_argument(
        "--branch", dest="kind", action="store_const", const="branch", help="SOURCE is a git ref"
    )
    child.add_argument(
        "--watch",
        action="store_true",
        help="keep following a branch or worktree: its new changes update the actions still "
        "pending and queue new files (Ctrl-C stops)",
    )


def _out(text: str, *, err: bool = False) -> None:
    import sys

    from redline.workspace.names import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def read_source(root: Path, source: str, kind: str) -> ImportPlan:
    """The plan of an import (ImportError_ / GitError / OSError when unreadable)."""
    import sys
    from pathlib import Path

    from redline.workspace import git_import as gi

    name = gi.source_name(source, kind)
    author = ""
    assisted: tuple[str, ...] = ()
    if kind == "patch":
        data = (
            sys.stdin.buffer.read(gi.MAX_PATCH_BYTES + 1)
            if source == "-"
            else Path(source).read_bytes()
        )
        files, author = gi.patch_files(root, data)
        assisted = gi.patch_assisted(data)
    elif kind == "worktree":
        files = gi.worktree_files(Path(source).resolve())
    else:
        files, author = gi.branch_files(root, source)
        assisted = gi.branch_assisted(root, source)
    plan = gi.plan_import(root, name, kind, files, author)
    plan.assisted_by = assisted
    return plan


def run(queue_root: Path, args: argparse.Namespace) -> int:
    from redline.workspace import git_import as gi
    from redline.workspace.git import GitError
    from redline.workspace.git_watch import import_draft
    from redline.workspace.queue import QueueError, Source, WorkspaceQueue

    kind = gi.detect(args.source, args.kind, queue_root)
    if getattr(args, "watch", False):
        if kind == "patch":
            _out(
                f"redline pending import: {args.source}: --watch follows a branch or a "
                "worktree; a patch does not change",
                err=True,
            )
            return EXIT_BAD_INPUT
        return _watch(queue_root, args.source, kind)
    try:
        plan = read_source(queue_root, args.source, kind)
    except (gi.ImportError_, GitError) as exc:
        _out(f"redline pending import: {args.source}: {exc}", err=True)
        return EXIT_BAD_INPUT
    except OSError as exc:
        _out(f"redline pending import: {args.source}: {exc.strerror or exc}", err=True)
        return EXIT_BAD_INPUT
    for path, why in plan.refused:
        _out(f"redline pending import: {path}: {why}; not imported", err=True)
    queue = WorkspaceQueue(queue_root)
    try:
        source = Source.current("import", plan.name)
        for (label, preview), key in zip(plan.previews, plan.keys, strict=True):
            try:
                record = queue.push(import_draft(plan, label, preview, key, source))
            except QueueError as exc:
                _out(f"redline pending import: {exc}", err=True)
                return EXIT_FAILED
            _out(f"{record.id}: {label}")
    finally:
        queue.close()
    _out(_summary(plan, len(plan.previews)))
    return EXIT_FAILED if plan.refused else EXIT_OK


def _summary(plan: ImportPlan, count: int) -> str:
    return (
        f"Imported {count} action{'s' if count != 1 else ''} from {plan.kind} {plan.name} "
        f"(source import:{plan.name})."
        + (f" {len(plan.refused)} file(s) not imported (see above)." if plan.refused else "")
    )


def _watch(queue_root: Path, source: str, kind: str) -> int:
    """The first round (exit 2 when the source cannot be read), then every change until
    Ctrl-C (exit 0)."""
    import contextlib
    import functools
    import signal
    import threading
    from pathlib import Path

    from redline.workspace import git_import as gi
    from redline.workspace.git import GitError
    from redline.workspace.git_watch import ImportWatch
    from redline.workspace.queue import QueueError, WorkspaceQueue

    name = gi.source_name(source, kind)
    queue = WorkspaceQueue(queue_root)
    watch = ImportWatch(
        queue_root,
        queue,
        kind,
        name,
        functools.partial(read_source, queue_root, source, kind),
        lambda text, err: _out(text, err=err),
        ref=source if kind == "branch" else "",
        folder=Path(source).resolve() if kind == "worktree" else None,
    )
    stop = threading.Event()
    try:
        try:
            report = watch.round()
        except (gi.ImportError_, GitError) as exc:
            _out(f"redline pending import: {source}: {exc}", err=True)
            return EXIT_BAD_INPUT
        except OSError as exc:
            _out(f"redline pending import: {source}: {exc.strerror or exc}", err=True)
            return EXIT_BAD_INPUT
        except QueueError as exc:
            _out(f"redline pending import: {exc}", err=True)
            return EXIT_FAILED
        for line in report.err:
            _out(line, err=True)
        for line in report.out:
            _out(line)
        _out(f"Watching {kind} {name} for changes (source import:{name}); Ctrl-C stops.")
        # Ctrl-C (and SIGTERM) only set the stop event: a round in progress finishes, so a
        # queue write is never cut in half.
        on_main = threading.current_thread() is threading.main_thread()
        signals = (signal.SIGINT, signal.SIGTERM) if on_main else ()
        previous = {sig: signal.getsignal(sig) for sig in signals}
        for sig in previous:
            signal.signal(sig, lambda _sig, _frame: stop.set())
        try:
            with contextlib.suppress(KeyboardInterrupt):
                watch.run(stop)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        _out(f"Stopped watching {kind} {name}.")
        return EXIT_FAILED if watch.ended else EXIT_OK
    finally:
        stop.set()
        queue.close()
