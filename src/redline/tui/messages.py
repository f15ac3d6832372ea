"""Messages posted from other threads (``post_message`` is thread-safe).

The bridge posts session events and store changes to the app. The inbox screen's thread
workers post their outcomes to the screen; resolutions and batches then bubble on to the
app, which resumes the agent once nothing it waits on is pending.

Each run of the agent gets a run id; anything stamped with an old run id is dropped, so
a stopped run cannot write into the next one.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from redline.review.events import Event, RunStatus
from redline.review.resolve import ResolveOutcome
from redline.review.result import ToolResult


@dataclass(frozen=True)
class StampedEvent:
    """A session event and the run that was live when it was emitted (0: between runs)."""

    run_id: int
    event: Event


class EventsAvailable(Message):
    """Session events wait in the bridge's queue; the app drains them all at once."""


class StackChanged(Message):
    """The pending-action store changed; the stack view re-reads its snapshot."""


@dataclass
class NotifyFailed(Message):
    """The ``[notify] command`` failed (``text`` says how); the activity log shows it."""

    text: str


@dataclass
class RunFinished(Message):
    """``prompt()`` or ``resume()`` returned (``error`` when it raised)."""

    run_id: int
    status: RunStatus
    error: str = ""


@dataclass
class ResolutionFinished(Message):
    """The person's apply or discard came back from the session."""

    verb: str
    action_id: str
    reason: str
    outcome: ResolveOutcome


@dataclass
class BatchFinished(Message):
    """Apply all / discard all stopped: ``stopped_at`` explains why it stopped early."""

    verb: str
    done: int
    stopped_at: str = ""


@dataclass
class MarkedFinished(Message):
    """Apply or discard of the marked actions ended: one ``(id, outcome)`` per action, in
    the order they were resolved (an id a rebase renamed meanwhile is its new id);
    ``notes``: the ``git:`` lines of their one commit (``[git] on_apply = "commit"``)."""

    verb: str
    results: tuple[tuple[str, ResolveOutcome], ...]
    notes: tuple[str, ...] = ()


@dataclass
class ForeignResolved(Message):
    """Another process's action was resolved through the workspace queue (before its
    :class:`ResolutionFinished`)."""

    verb: str
    action_id: str
    text: str


@dataclass
class CommandFinished(Message):
    """Undo, re-preview or trust came back from the session."""

    command: str
    result: ToolResult
    # True when the session already wrote the outcome to the event stream.
    logged: bool = False


@dataclass
class UndoChecked(Message):
    """Whether the workspace has an apply to undo (the journal was read on a thread)."""

    available: bool
