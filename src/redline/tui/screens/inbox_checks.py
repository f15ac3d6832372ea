"""The inbox's checks keys and messages (docs/checks.md): run the checks again (``c``),
discard citing their new findings (``N``), the findings pane's jumps into the diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

from redline.tui.widgets.checks_pane import ChecksPane

if TYPE_CHECKING:
    from redline.review.store import PendingAction
    from redline.tui.checks import DashboardChecks
    from redline.tui.widgets.resolve_bar import ResolveBar


class InboxChecks(Screen[None]):
    """The base of :class:`~redline.tui.screens.inbox.InboxScreen`, which owns ``checks``."""

    if TYPE_CHECKING:
        checks: DashboardChecks | None

        @property
        def resolve_bar(self) -> ResolveBar: ...

        def selected_action(self) -> PendingAction | None: ...

        def _alive(self) -> bool: ...

        def _resolve_selected(self, verb: str, reason: str | None = None) -> None: ...

    def on_checks_pane_changed(self, message: ChecksPane.Changed) -> None:
        message.stop()
        if self._alive() and self.checks is not None:
            self.checks.redraw()

    def on_checks_pane_jump(self, message: ChecksPane.Jump) -> None:
        message.stop()
        if self.checks is not None:
            self.checks.jump(message.path, message.line, message.new_side)

    def action_run_checks(self) -> None:
        if self.checks is None or not self.checks.run_selected():
            self.notify("No checks ran: nothing with a file change is selected, or they run.")

    def action_discard_citing_checks(self) -> None:
        reason = self.checks.discard_reason(self.selected_action()) if self.checks else ""
        if not reason:
            self.notify("The checks found nothing new to cite.", severity="warning")
            return
        typed = self.resolve_bar.reason
        self._resolve_selected("discard", f"{typed}\n{reason}" if typed else reason)

    def on_unmount(self) -> None:
        if self.checks is not None:
            self.checks.close()
