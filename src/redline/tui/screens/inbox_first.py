"""A long queue's first frame: the top action at once, the rest listed on a thread (issue 44).

With 10,000 pending the dashboard drew nothing for seconds: it listed and checked every
action before its first frame. The queue's index orders the actions without reading them
(:meth:`~redline.workspace.queue.WorkspaceQueue.top`), so the first frame shows the top
action -- its diff -- read and verified from its own file; the whole list follows from a
worker thread. Arrival notices take their baseline only from the whole list, and any
re-read asked for meanwhile (a decision, a change in the queue) waits for it and then reads
again.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work
from textual.screen import Screen

from redline.review.store import PendingAction
from redline.tui.pending import PendingList

if TYPE_CHECKING:
    from redline.tui.source_list import SourceList
    from redline.tui.widgets.pending_stack import PendingStack

log = logging.getLogger(__name__)

# A queue this long draws its first frame from its top action; shorter ones are read at once.
LONG_QUEUE = 500


class InboxFirstFrame(Screen[None]):
    """The base of :class:`~redline.tui.screens.inbox.InboxScreen` for its first frame."""

    _reading: bool
    _resolving: bool
    _stack_outdated: bool
    pending: PendingList | SourceList

    if TYPE_CHECKING:

        @property
        def stack(self) -> PendingStack: ...

        def _show_selected(self) -> None: ...

        def _update_controls(self) -> None: ...

        def _alive(self) -> bool: ...

        def refresh_stack(self, actions: tuple[PendingAction, ...] | None = None) -> None: ...

    def show_first(self, then: Callable[[], None]) -> bool:
        """A long queue's first frame: show its top action at once and list the rest on a
        thread, then show them all and call ``then`` (issue 44). False: the queue is short
        (or the session has actions of its own): :meth:`refresh_stack` reads it all now."""
        if not isinstance(self.pending, PendingList):  # a review source lists itself
            return False
        top = self.pending.read_top(LONG_QUEUE)
        if top is None:
            return False
        self._reading = True
        self.stack.update_actions(top)
        self._show_selected()
        self._update_controls()
        self._read_rest(then)
        return True

    @work(thread=True, exit_on_error=False, group="first-read")
    def _read_rest(self, then: Callable[[], None]) -> None:
        try:
            actions: tuple[PendingAction, ...] | None = self.pending.read()
        except Exception as exc:  # shown by the ordinary re-read instead
            log.warning("reading the pending actions failed: %s", exc)
            actions = None
        self.app.call_from_thread(self._rest_read, actions, then)

    def _rest_read(
        self, actions: tuple[PendingAction, ...] | None, then: Callable[[], None]
    ) -> None:
        self._reading = False
        if not self._alive():
            return
        outdated = self._stack_outdated or actions is None
        # Shown even while a decision is under way (the arrivals' baseline must be the
        # whole list); that decision's end re-reads as usual.
        resolving, self._resolving = self._resolving, False
        self.refresh_stack(None if outdated else actions)
        self._resolving = resolving
        self._stack_outdated = self._stack_outdated or resolving
        # The long queue's listing lives as long as the dashboard (each later read keeps
        # what did not change): out of the collector's sight, as the app's start-up is, so
        # no full collection walks its 10,000 rows again while a key is handled.
        self.app.call_after_refresh(gc.freeze)
        then()

    @property
    def reading(self) -> bool:
        """The first listing of a long queue is on its way: only its top is shown."""
        return self._reading
