"""What can act now in the inbox: the controls its keys and resolve bar follow, the words
the footer gives ``y``/``n``, and which keys are live, greyed or hidden (:mod:`redline.tui.
controls` decides each from the controls).

A decision is busy from the moment it starts (a second ``y`` or ``u`` is refused), but it
looks busy -- keys and buttons greyed -- only once it has run :data:`BUSY_LOOK_AFTER`: a
quick one goes from one action to the next in one frame, its thread started before any
restyle, and nothing greys only to light again a few milliseconds later (issue 44's ``y``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.actions import parse as parse_action
from textual.screen import Screen
from textual.widgets import Input

from redline.tui.controls import BUSY_REFUSAL, Controls, key_state, refusal
from redline.tui.key_words import describe_keys
from redline.tui.screens.conversation import REQUEST_CHANGES

if TYPE_CHECKING:
    from redline.review.store import PendingAction
    from redline.tui.pending import PendingList
    from redline.tui.protocol import SessionLike
    from redline.tui.source_list import SourceList
    from redline.tui.widgets.pending_stack import PendingStack
    from redline.tui.widgets.preview_panel import PreviewPanel
    from redline.tui.widgets.resolve_bar import ResolveBar
    from redline.tui.widgets.search_input import SearchInput

BUSY_LOOK_AFTER = 0.15  # seconds a decision runs before its keys and buttons grey


class InboxKeys(Screen[None]):
    """A base of :class:`~redline.tui.screens.inbox.InboxScreen`, which owns the state."""

    if TYPE_CHECKING:
        session: SessionLike
        pending: PendingList | SourceList
        controls: Controls
        agent_ended: str | None
        can_undo: bool
        _ready: bool

        @property
        def stack(self) -> PendingStack: ...

        @property
        def preview(self) -> PreviewPanel: ...

        @property
        def resolve_bar(self) -> ResolveBar: ...

        @property
        def search(self) -> SearchInput: ...

        def _alive(self) -> bool: ...

        def selected_action(self) -> PendingAction | None: ...

        def _source_refusals(self) -> dict[str, str]: ...

        def _discard_label(self) -> str: ...

    _busy = False
    # The decision started by busy_quietly() that does not look busy yet (None: none).
    _quiet: object | None = None

    @property
    def busy(self) -> bool:
        """A resolve, a batch or an undo is on its way through the session."""
        return self._busy

    @busy.setter
    def busy(self, busy: bool) -> None:
        self._busy = busy
        self._quiet = None  # whatever set it shows it at the next _update_controls

    def busy_quietly(self) -> None:
        """Busy with a decision that looks busy only once it has run BUSY_LOOK_AFTER."""
        self.busy = True
        quiet = self._quiet = object()
        self.set_timer(BUSY_LOOK_AFTER, lambda: self._look_busy(quiet))

    def _look_busy(self, quiet: object) -> None:
        if self._quiet is quiet:
            self._quiet = None
            if self._alive():
                self._update_controls()

    def refuse_while_busy(self) -> bool:
        """Say so and True while busy (a key pressed before the busy look greyed it)."""
        if self.busy:
            self.notify(BUSY_REFUSAL, title="Nothing done", severity="warning")
        return self.busy

    def _update_controls(self) -> None:
        top = self.pending.get(self.stack.top_id)
        selected = self.selected_action()
        marked = self.stack.marked
        preview = self.preview
        shown = preview.action is not None and selected is not None
        limits = self.pending.limits(selected.id if selected is not None else None)
        parts = len(preview.units) if shown else 0
        # A part that cannot be done is never counted: no "Apply 2 of 3 hunks" for an
        # action that would refuse it.
        picked = len(preview.selection()) if shown and not limits.parts else 0
        # A decision's first moments look idle (see busy_quietly); its keys refuse already.
        busy = self.busy and self._quiet is None
        self.controls = Controls(
            has_top=top is not None,
            top_stale=top is not None and top.stale,
            busy=busy,
            selected_stale=selected is not None and selected.stale,
            selected_has_preview=selected is not None and bool(selected.preview),
            file_count=preview.file_count,
            has_selected=selected is not None,
            picked=picked,
            parts=parts,
            can_undo=self.can_undo,
            marked=len(marked),
            selected_id=selected.id if selected is not None else "",
            parts_refusal=limits.parts,
            edit_refusal=limits.edit,
            repreview_refusal=limits.repreview,
            **self._source_refusals(),
        )
        self.resolve_bar.set_enabled(
            apply=bool(marked) or (selected is not None and not selected.stale)
            if not busy
            else False,
            discard=(bool(marked) or selected is not None) and not busy,
        )
        discard_word = self._footer_target(picked, parts, len(marked))
        self.resolve_bar.set_target(
            selected.id if selected is not None else None,
            picked=picked,
            parts=parts,
            whole_only=selected is not None and (not preview.selectable or bool(limits.parts)),
            marked=len(marked),
            request_changes=discard_word == REQUEST_CHANGES,
        )

    def _footer_target(self, picked: int, parts: int, marked: int = 0) -> str:
        """The footer's y/n say whether they act on marked actions, picked hunks or the
        whole selected action; the discard's word."""
        if marked:
            apply, discard = f"Apply {marked} marked", f"Discard {marked} marked"
        else:
            apply = f"Apply {picked}/{parts} hunks" if picked else "Apply"
            discard = f"Discard {picked}/{parts}" if picked else self._discard_label()
        describe_keys(self, (("y", apply), ("n", discard)))
        return discard

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self._alive():
            return False
        if not self._ready:
            return True
        # Under a dialog too: the footer behind it keeps which keys are live and greyed.
        search = self.search
        return key_state(
            action,
            self.controls,
            outside_editor=not self.app.is_web,
            has_rules=self.session.capabilities.rules and self.session.rules is not None,
            prompting=self.agent_ended is None,
            searching=search.searching,
            search_open=search.target is not None,
        )

    def _refusal(self, action: str) -> str:
        return refusal(
            action,
            self.controls,
            outside_editor=not self.app.is_web,
            has_rules=self.session.capabilities.rules and self.session.rules is not None,
            prompting=self.agent_ended is None,
        )

    def on_key(self, event: events.Key) -> None:
        """A greyed-out key reaches here unhandled: say why it does nothing now."""
        if not self._ready or self.app.screen is not self or isinstance(self.focused, Input):
            return
        nodes = (self.stack, self) if self.focused is self.stack else (self,)
        refused = ""
        for node in nodes:
            for binding in node._bindings.key_to_bindings.get(event.key, ()):
                namespace, name, parameters = parse_action(binding.action)
                if namespace not in ("", "screen") or self.check_action(name, parameters):
                    return  # a live binding (or another node's) takes the key
                refused = refused or self._refusal(name)
        if refused:
            event.stop()
            self.notify(refused, title="Nothing done", severity="warning")
