"""The dashboard's view of hook calls: the hook activity log followed into the activity pane.

``redline hook`` runs in the agent's process and appends each call's life to
``.redline/hooks/activity.jsonl`` (:mod:`redline.drivers.hooks.activity`). A
:class:`HookActivityFeed` watches that folder with the queue's watcher machinery (one
watchfiles thread), reads the new lines on that thread and posts them as one
:class:`HookActivityArrived` message; the app writes them to the activity pane, each line
labelled with the agent's source (``‹hook:claude›``) and the agent's session.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from textual.content import Content
from textual.message import Message

from redline.drivers.hooks.activity_reader import ActivityReader, HookEntry, log_folder

log = logging.getLogger(__name__)

SESSION_WIDTH = 8
TARGET_WIDTH = 80
REASON_WIDTH = 120


class HookActivityArrived(Message):
    """New lines of the hook activity log (read on the watcher's thread)."""

    def __init__(self, entries: list[HookEntry], skipped: int) -> None:
        super().__init__()
        self.entries = entries
        self.skipped = skipped


class HookActivityFeed:
    """Follows the workspace's hook activity log from now on; ``stop()`` ends it."""

    def __init__(self, root: Path, post: Callable[[Message], object]) -> None:
        self.root = root
        self._post = post
        self._reader = ActivityReader(root)
        # The reader is used by start() and then by the watcher's thread, one at a time.
        self._lock = threading.Lock()
        self._watcher: object | None = None

    def start(self) -> None:
        """Watch ``.redline/hooks/`` (made when missing); raises when it cannot."""
        from redline.workspace.queue.watcher import QueueWatcher

        folder = log_folder(self.root)
        with self._lock:
            self._reader.skip_to_end()
        watcher = QueueWatcher(folder, self.poll, suffix=".jsonl")
        watcher.start()
        self._watcher = watcher

    def poll(self) -> None:
        """Read what was appended and post it (any thread)."""
        with self._lock:
            try:
                result = self._reader.read()
            except OSError as exc:
                log.warning("reading the hook activity log failed: %s", exc)
                return
        if result.entries or result.skipped:
            self._post(HookActivityArrived(result.entries, result.skipped))

    def stop(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()  # type: ignore[attr-defined]
        with self._lock:
            self._reader.close()


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _session(session: str) -> str:
    return session if len(session) <= SESSION_WIDTH else session[:SESSION_WIDTH] + "…"


def _outcome(entry: HookEntry) -> tuple[str, str]:
    """What happened, in words, and its style."""
    action = f" ({entry.action})" if entry.action else ""
    reason = _short(entry.reason, REASON_WIDTH)
    if entry.event == "asked":
        return "asks for review", "$text-muted"
    if entry.event == "waiting":
        extra = f" ({reason})" if reason else ""
        return f"waiting as {entry.action}{extra}", "$text-secondary"
    if entry.event == "handed_over":
        return (
            f"no decision in time: {entry.action} handed over (redline writes it if applied later)",
            "$redline-text-warning",
        )
    if entry.event == "written":
        if entry.as_approved:
            return (
                f"written as approved{action}; `redline undo` reverts it",
                "$redline-text-success",
            )
        return (
            f"the agent wrote something other than what was approved{action}",
            "$redline-text-error",
        )
    said = f": {reason}" if reason else ""
    return {
        "allow": (f"allowed{action}{said}", "$redline-text-success"),
        "allow-rewritten": (
            f"allowed with the input rewritten to the approved text{action}",
            "$redline-text-success",
        ),
        "deny": (f"denied{action}{said}", "$redline-text-warning"),
        "block": (f"blocked{said}", "$redline-text-error"),
        "pass": ("passed through unreviewed", "$text-muted"),
    }.get(entry.answer, (entry.answer, ""))


def hook_lines(entry: HookEntry) -> tuple[list[Content], list[Content]]:
    """One hook call's step as a line of the activity pane, and the full text behind it
    (the reason, the diff of a different write) shown by ``enter``."""
    words, style = _outcome(entry)
    head: list[tuple[str, str] | str] = [
        (f"‹{entry.source}›", "bold $text-secondary"),
        " ",
        (f"session {_session(entry.session)}", "$text-muted"),
        ": ",
        (entry.tool, "bold"),
    ]
    if entry.target:
        head.extend([" ", _short(entry.target, TARGET_WIDTH)])
    head.extend([" → ", (words, style)])
    detail: list[Content] = []
    if entry.reason and (len(entry.reason) > REASON_WIDTH or "\n" in entry.reason):
        detail.extend(Content(line) for line in entry.reason.splitlines())
    if entry.diff:
        detail.extend(Content(line) for line in entry.diff.splitlines())
    return [Content.assemble(*head)], detail


def skipped_line(count: int) -> Content:
    plural = "line" if count == 1 else "lines"
    return Content.styled(
        f"ℹ hook activity log: {count} unreadable {plural} skipped", "$redline-text-warning"
    )
