"""``redline pending import SOURCE --watch``: follow a branch or a worktree as it changes.

A first round queues the source as a plain import does (and takes in the actions an
earlier import of the same source left pending). Then, whenever the source changes — a
branch's ref moves (polled), a file in a worktree is written (watchfiles) — a round
reads it again and plans every file against the local working tree (the three-way merge
of :mod:`redline.workspace.git_import`, so an action is re-based on what the person has
locally) and brings the queue in line, one file at a time:

* a file whose action is still pending and whose planned change differs: the action is
  replaced through the queue's replace path (same place, new id, source ``import:NAME``,
  ``resolved_by="import"`` in the resolved log); a person's edit is never overwritten:
  such an action is marked stale instead, saying the source changed it again;
* a file with no action yet: a new action is queued;
* a file whose action was applied or discarded stays resolved; only a later change of
  that file by the source (a new commit, a new write) queues a new action for it;
* a pending action whose file the source no longer changes, or whose change now
  conflicts or is refused, is marked stale with the reason (discard it, or wait for the
  source to change it again).

An action being resolved at that very moment (its claim is held) is left alone and the
round runs again at the next tick. Nothing here writes the working tree.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redline.workspace.git_import import ImportPlan
    from redline.workspace.preview import Preview
    from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue

log = logging.getLogger(__name__)

#: Seconds between two looks at a branch's ref (and the longest a worktree waits).
DEFAULT_INTERVAL = 1.0


def import_draft(plan: ImportPlan, label: str, preview: Preview, key: str, source: Source) -> Any:
    """The queue draft of one imported file (``details.import.path`` names the file)."""
    from redline.workspace.details import FileChangeDetails, Imported
    from redline.workspace.queue import ActionDraft

    imported = Imported(plan.kind, plan.name, key, plan.author or None, plan.assisted_by or None)
    return ActionDraft(
        label=label,
        source=source,
        source_tool_name="import",
        preview=preview,
        details=FileChangeDetails(imported=imported).to_json(),
        applied_by="preview",
        kind="file_change",
    )


def record_key(record: QueueRecord) -> str:
    """The source's path an import action stands for (its ``details``, else its files)."""
    details = record.details
    if isinstance(details, dict):
        found = details.get("import")
        if isinstance(found, dict) and isinstance(found.get("path"), str):
            return str(found["path"])
    return record.files[-1] if record.files else ""


@dataclass
class RoundReport:
    """What one round did: lines for stdout and stderr, and whether to run again soon."""

    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    retry: bool = False


class ImportWatch:
    """One source followed into one workspace queue (see the module doc).

    ``read`` returns the source's current plan (raising the import's errors); ``say`` gets
    each line (``err`` for stderr). :meth:`round` is one reconciliation; :meth:`run`
    repeats it on every change until ``stop`` is set.
    """

    def __init__(
        self,
        root: Path,
        queue: WorkspaceQueue,
        kind: str,
        name: str,
        read: Callable[[], ImportPlan],
        say: Callable[[str, bool], None],
        *,
        ref: str = "",
        folder: Path | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        from redline.workspace.queue import Source

        if kind not in ("branch", "worktree"):
            raise ValueError(f"--watch follows a branch or a worktree, not a {kind}")
        self.root = Path(root)
        self.queue = queue
        self.kind = kind
        self.name = name
        self.ref = ref
        self.folder = folder
        self.interval = interval
        self._read = read
        self._say = say
        self._source = Source.current("import", name)
        # path -> (action id, digest of the change it was queued for)
        self._queued: dict[str, tuple[str, str]] = {}
        # path -> digest of the change whose action was applied or discarded
        self._resolved: dict[str, str] = {}
        self._told: dict[str, str] = {}  # path -> the refusal last said (said once)
        self._error = ""
        self._retry = False
        self._rounds = 0
        self._changed = threading.Condition()
        #: Set once the watch is looking for changes (a worktree's watcher is running).
        self.ready = threading.Event()
        #: Why the watch ended by itself ("" while it runs, or when it was stopped).
        self.ended = ""

    # -- one round --------------------------------------------------------------------
    def round(self) -> RoundReport:
        """Read the source and bring the queue in line (the source's errors propagate)."""
        plan = self._read()
        report = RoundReport()
        pending = self._pending()
        for key, (_action_id, digest) in list(self._queued.items()):
            if key not in pending:  # applied or discarded (or replaced by something else)
                self._resolved[key] = digest
                del self._queued[key]
        for (label, preview), key in zip(plan.previews, plan.keys, strict=True):
            self._one(plan, key, label, preview, pending.get(key), report)
        for key, record in pending.items():
            if key in plan.keys:
                continue
            if key in plan.left:
                why = plan.left[key] or f"the local file already holds {self.name}'s change"
            else:
                why = f"{self.name} no longer changes {key}"
            self._stale(record, why, report)
        for path, why in plan.refused:
            if self._told.get(path) != why:
                self._told[path] = why
                report.err.append(f"redline pending import: {path}: {why}; not imported")
        for path in [p for p in self._told if p not in dict(plan.refused)]:
            del self._told[path]
        return report

    def _pending(self) -> dict[str, QueueRecord]:
        found: dict[str, QueueRecord] = {}
        for record in self.queue.list():
            source = record.source
            if source.kind == "import" and source.name == self.name and record.state == "pending":
                key = record_key(record)
                if key:
                    found[key] = record
        return found

    def _one(
        self,
        plan: ImportPlan,
        key: str,
        label: str,
        preview: Preview,
        record: QueueRecord | None,
        report: RoundReport,
    ) -> None:
        from redline.workspace.queue import ActionBusy, ActionGone

        digest = plan.digests.get(key, "")
        draft: ActionDraft = import_draft(plan, label, preview, key, self._source)
        if record is None:
            if self._resolved.get(key) == digest:
                return  # decided, and the source has not changed the file since
            new = self.queue.push(draft)
            self._queued[key] = (new.id, digest)
            self._resolved.pop(key, None)
            report.out.append(f"{new.id}: {label}")
            return
        known = self._queued.get(key)
        if known is not None and known[0] == record.id and known[1] == digest and not record.stale:
            return  # nothing new from the source for this file
        if record.edited:
            # A person's edit is never overwritten: first seen, it is taken as it is; a
            # later change of the file by the source marks it stale.
            if known is not None and known[1] != digest:
                self._stale(
                    record, f"{self.name} changed {key} again after it was edited here", report
                )
            self._queued[key] = (record.id, digest)
            return
        current = self.queue.preview(record)
        same = current is not None and tuple(current.changes) == tuple(preview.changes)
        if same and not record.stale:
            self._queued[key] = (record.id, digest)
            return
        try:
            new = self.queue.replace(record.id, draft, resolved_by="import")
        except ActionBusy:
            report.retry = True  # being resolved right now: look again at the next tick
            return
        except ActionGone:
            report.retry = True  # resolved meanwhile: the next round sees how
            return
        self._queued[key] = (new.id, digest)
        report.out.append(f"{new.id}: {label} (updated from {self.name}; replaces {record.id})")

    def _stale(self, record: QueueRecord, why: str, report: RoundReport) -> None:
        from redline.workspace.queue import ActionBusy, ActionGone

        if record.stale and record.stale_reason == why:
            return
        try:
            self.queue.update(record.id, stale=True, stale_reason=why)
        except ActionBusy:
            report.retry = True
            return
        except ActionGone:
            return
        report.out.append(f"{record.id}: marked stale: {why}")

    # -- following the source ---------------------------------------------------------
    def step(self) -> None:
        """One round with its lines said; a failure is said once and the watch goes on."""
        from redline.workspace.git import GitError
        from redline.workspace.git_import import ImportError_
        from redline.workspace.queue import QueueError

        try:
            report = self.round()
        except (ImportError_, GitError, QueueError, OSError) as exc:
            text = f"redline pending import: {self.name}: {exc}"
            if text != self._error:
                self._error = text
                self._say(text, True)
            self._retry = True
        else:
            self._error = ""
            self._retry = report.retry
            for line in report.out:
                self._say(line, False)
            for line in report.err:
                self._say(line, True)
        with self._changed:
            self._rounds += 1
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds, asking again after every round (False when
        ``timeout`` passed first)."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    @property
    def rounds(self) -> int:
        with self._changed:
            return self._rounds

    def run(self, stop: threading.Event) -> None:
        """Run a round at every change of the source until ``stop`` is set."""
        if self.kind == "branch":
            self._poll_ref(stop)
        else:
            self._watch_folder(stop)

    def _fingerprint(self) -> str:
        from redline.workspace.git import run_git

        done = run_git(
            self.root,
            "rev-parse",
            "-q",
            "--verify",
            "--end-of-options",
            f"{self.ref}^{{commit}}",
        )
        head = run_git(self.root, "rev-parse", "-q", "--verify", "HEAD")
        return done.stdout.decode("ascii", "replace") + head.stdout.decode("ascii", "replace")

    def _poll_ref(self, stop: threading.Event) -> None:
        from redline.workspace.git import GitError

        # No fingerprint yet: the first tick runs a round, catching a commit made between
        # the first import and the start of the watch.
        last: str | None = None
        self.ready.set()
        while not stop.wait(self.interval):
            try:
                now = self._fingerprint()
            except GitError as exc:
                now = f"error: {exc}"
            if now != last or self._retry:
                last = now
                self.step()

    def _watch_folder(self, stop: threading.Event) -> None:
        try:
            self._watch_changes(stop)
        except (OSError, RuntimeError) as exc:  # the watcher itself failed (folder gone, …)
            self.ended = f"redline pending import: cannot watch {self.folder}: {exc}"
            self._say(self.ended, True)

    def _watch_changes(self, stop: threading.Event) -> None:
        import watchfiles

        folder = self.folder if self.folder is not None else self.root
        git_dir = str(Path(folder) / ".git")

        def interesting(_change: Any, path: str) -> bool:
            return not (path == git_dir or path.startswith(git_dir + "/"))

        timeout = max(10, int(self.interval * 1000))
        first = True
        for changes in watchfiles.watch(
            folder,
            watch_filter=interesting,
            stop_event=stop,
            debounce=min(200, timeout),
            step=10,
            rust_timeout=timeout,
            yield_on_timeout=True,
            raise_interrupt=True,
        ):
            if not Path(folder).is_dir():
                self.ended = f"redline pending import: {folder} is gone; stopped watching"
                self._say(self.ended, True)
                return
            if changes or self._retry or first:
                # The first time: a write between the first import and the watcher's start.
                self.step()
            first = False
            self.ready.set()
