"""The inbox's keys that decide several actions at once: every action of the session
(``apply_all`` / ``discard_all``, the palette's) and the marked ones (space marks, then one
``y`` / ``n`` decides them all). Each runs on a thread worker through
:mod:`redline.tui.session_calls` and posts its outcome back here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.content import Content
from textual.screen import Screen

from redline.tui.messages import BatchFinished, ForeignResolved, MarkedFinished
from redline.tui.session_calls import resolve_all, resolve_marked

if TYPE_CHECKING:
    from redline.review.resolve import ResolveOutcome
    from redline.review.source import ReviewSource
    from redline.review.workspace_source import WorkspaceSource
    from redline.tui.protocol import SessionLike
    from redline.tui.widgets.activity_log import ActivityLog
    from redline.tui.widgets.pending_stack import PendingStack
    from redline.tui.widgets.resolve_bar import ResolveBar

NO_REASON = "no reason given"


class InboxBatches(Screen[None]):
    """A base of :class:`~redline.tui.screens.inbox.InboxScreen`, which owns the state."""

    if TYPE_CHECKING:
        session: SessionLike
        busy: bool
        _own: set[str]

        @property
        def stack(self) -> PendingStack: ...

        @property
        def resolve_bar(self) -> ResolveBar: ...

        @property
        def activity(self) -> ActivityLog: ...

        def _alive(self) -> bool: ...

        def _update_controls(self) -> None: ...

        def _refusal(self, action: str) -> str: ...

        def check_undo(self) -> None: ...

        def refresh_stack(self) -> None: ...

        source: ReviewSource | None

        @property
        def workspace_source(self) -> WorkspaceSource: ...

        def decide_marked_in_source(
            self, verb: str, ids: tuple[str, ...], reason: str
        ) -> tuple[tuple[str, ResolveOutcome], ...]: ...

    def action_apply_all(self) -> None:
        self._resolve_all("apply")

    def action_discard_all(self) -> None:
        self._resolve_all("discard")

    def _resolve_all(self, verb: str) -> None:
        if self.busy or not self.session.store.has_pending:
            return
        self.busy = True
        self._update_controls()
        self._resolve_all_worker(verb, self.resolve_bar.reason or NO_REASON)

    @work(thread=True, exit_on_error=False, group="resolve")
    def _resolve_all_worker(self, verb: str, reason: str) -> None:
        source = self.workspace_source
        resolve_all(self.session, verb, reason, self.post_message, source)
        if source.queue is not None:
            source.queue.housekeep()  # what the batch made due, once its outcome is posted

    def on_batch_finished(self, message: BatchFinished) -> None:
        # Not stopped: it goes on to the app, which resumes the agent when it can.
        self.busy = False
        if not self._alive():
            return
        verb = "Applied" if message.verb == "apply" else "Discarded"
        if message.verb == "apply":
            self.check_undo()
        if message.stopped_at:
            self.notify(
                f"{verb} {message.done}; stopped at {message.stopped_at}.", severity="warning"
            )
        else:
            self.resolve_bar.clear_reason()
            self.notify(f"{verb} {message.done} action{'s' if message.done != 1 else ''}.")
        self._update_controls()

    # -- marked actions ------------------------------------------------------------------
    def action_toggle_mark(self) -> None:
        """space in the stack: mark or unmark the selected action for one y / n on all."""
        marked = self.stack.toggle_mark()
        if marked is None:
            self.notify(self._refusal("apply_top"), title="Nothing marked", severity="warning")
            return
        self._update_controls()

    def _resolve_marked(self, verb: str) -> None:
        ids = self.stack.marked
        self._own.update(ids)
        self.busy = True
        self._update_controls()
        self._marked_worker(verb, ids, self.resolve_bar.reason or NO_REASON)

    @work(thread=True, exit_on_error=False, group="resolve")
    def _marked_worker(self, verb: str, ids: tuple[str, ...], reason: str) -> None:
        if self.source is not None:
            self.post_message(MarkedFinished(verb, self.decide_marked_in_source(verb, ids, reason)))
            return

        def foreign_done(action_id: str, text: str) -> None:
            self.post_message(ForeignResolved(verb, action_id, text))

        source = self.workspace_source
        resolve_marked(self.session, verb, ids, reason, self.post_message, foreign_done, source)
        if source.queue is not None:
            source.queue.housekeep()  # what the batch made due, once its outcome is posted

    def on_marked_finished(self, message: MarkedFinished) -> None:
        # Not stopped: it goes on to the app, which resumes the agent when it can.
        self.busy = False
        if not self._alive():
            return
        if message.verb == "apply":
            self.check_undo()
        done = [action_id for action_id, outcome in message.results if not outcome.is_error]
        failed = [(action_id, o) for action_id, o in message.results if o.is_error]
        verb = "Applied" if message.verb == "apply" else "Discarded"
        lines = [
            Content.assemble((f"✓ {action_id} ", "bold"), verb.lower())
            if not outcome.is_error
            else Content.assemble((f"✗ {action_id} ", "bold"), "not resolved: ", outcome.text)
            for action_id, outcome in message.results
        ]
        summary = f"{verb} {len(done)} of {len(message.results)} marked"
        notes = [Content(note) for note in message.notes]
        self.activity.write_lines([Content.styled(f"ℹ {summary}:", "bold"), *lines, *notes])
        for action_id, _outcome in failed:
            self._own.discard(action_id)
        if failed:
            why = "; ".join(f"{action_id}: {outcome.text}" for action_id, outcome in failed)
            self.notify(
                f"{summary}. Still marked: {why}",
                title=f"{message.verb.capitalize()} marked",
                severity="warning",
            )
        else:
            self.resolve_bar.clear_reason()
            self.notify(f"{summary}.", title=f"{message.verb.capitalize()} marked")
        self.refresh_stack()
