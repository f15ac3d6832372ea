"""The team dashboard, ``redline --queue URL``: review every workspace's pending actions.

No workspace is needed: the list, the diffs and the decisions live in the team queue, and
each workspace's own follower (``redline pending follow``, or that workspace's dashboard)
carries a decision out — this app never writes a file. Every database call runs on a
thread worker and posts its outcome back (:mod:`redline.tui.team.messages`); the live
list comes from :meth:`TeamSource.watch` (``LISTEN``/``NOTIFY`` with a catch-up after
every reconnect) on a worker of its own.

The keys keep the workspace dashboard's habits: ``y`` applies and ``n`` discards the
selected action with the reason in the field; in the field, Enter discards (it never
applies) and the Apply / Discard buttons never take focus.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList

from redline.teamqueue.settings import TeamQueueError
from redline.termtext import one_line as clean
from redline.tui.shown import ShownApp
from redline.tui.team.action_list import TeamActionList
from redline.tui.team.detail import TeamDetail
from redline.tui.team.messages import (
    ActionShown,
    DecidedElsewhere,
    DecisionMade,
    LinkChanged,
    RowsArrived,
)
from redline.tui.team.source import TeamSource
from redline.tui.team.status import TeamStatus
from redline.tui.widgets.fitting_footer import FittingFooter
from redline.tui.widgets.reason_input import ReasonInput
from redline.tui.widgets.resolve_bar import ResolveBar

NOTHING_SELECTED = "Nothing selected: pick an action with j / k."
EMPTY = "Nothing is pending in the team queue."


class TeamApp(ShownApp[int]):
    TITLE = "redline — team queue"
    AUTO_FOCUS = "#team-list"
    # Below 80 columns the list and the diff are stacked: side by side the diff would be a
    # strip too narrow to read.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-wide")]  # noqa: RUF012 (Textual: not a ClassVar)
    DEFAULT_CSS = """
    Screen.-narrow #team-main {
        layout: vertical;
    }
    Screen.-narrow #team-left {
        width: 100%;
        min-width: 0;
        height: 45%;
    }
    Screen.-narrow TeamDetail {
        width: 100%;
        height: 1fr;
    }
    #team-main {
        height: 1fr;
    }
    #team-left {
        width: 45%;
        min-width: 40;
    }
    #team-list {
        height: 1fr;
        border: round $panel-lighten-2;
    }
    #team-list:focus-within {
        border: round $accent;
    }
    TeamDetail {
        width: 1fr;
        border: round $panel-lighten-2;
    }
    TeamDetail:focus-within {
        border: round $accent;
    }
    /* The resolve bar as the workspace dashboard draws it (styles/stack.tcss). */
    ResolveBar ReasonInput {
        width: 1fr;
        border: none;
        height: 1;
        padding: 0 1;
        background: $boost;
    }
    ResolveBar ReasonInput:focus {
        background: $primary-muted;
    }
    ResolveBar Button {
        margin: 0 0 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide('apply')", "Apply"),
        Binding("n", "decide('discard')", "Discard"),
        Binding("r", "focus_reason", "Reason"),
        Binding("f", "filter_workspace", "Filter workspace"),
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
        Binding("g", "edge(False)", "Top", show=False),
        Binding("G", "edge(True)", "Bottom", show=False),
        Binding("d", "focus_diff", "Diff"),
        Binding("escape", "focus_list", "List", show=False),
    ]

    def __init__(self, source: TeamSource, *, reviewer: str, workspace: str | None = None) -> None:
        """``reviewer``: who the server says this client decides as (the top line shows
        it); ``workspace``: show only that workspace's actions at first (``-C PATH``)."""
        super().__init__()
        self.source = source
        self.reviewer = reviewer
        # What the detail panel shows (with its view hash): a decision binds this view.
        self._shown_data: dict[str, Any] | None = None
        self.all_rows: list[dict[str, Any]] = []
        self.filter_workspace: str | None = workspace
        # The team id a decision of ours is on its way for (one at a time).
        self.deciding: str | None = None
        # Team ids this reviewer decided: their leaving the list is no news.
        self._mine: set[str] = set()
        # The selected action was decided elsewhere: select nothing until the person moves.
        self._hold = False
        self._shown_row: dict[str, Any] | None = None
        self._stop = threading.Event()
        self.watch_stopped = threading.Event()
        self.rows_seen = 0

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield TeamStatus(id="team-status")
        with Horizontal(id="team-main"):
            with Vertical(id="team-left"):
                yield TeamActionList(id="team-list")
                yield ResolveBar(id="team-resolve")
            yield TeamDetail(id="team-detail")
        # The keys that decide get the room first on a narrow terminal; none is cut in half.
        yield FittingFooter(first=("decide('apply')", "decide('discard')", "focus_reason"))

    @property
    def action_list(self) -> TeamActionList:
        return self.query_one(TeamActionList)

    @property
    def detail(self) -> TeamDetail:
        return self.query_one(TeamDetail)

    @property
    def status(self) -> TeamStatus:
        return self.query_one(TeamStatus)

    @property
    def bar(self) -> ResolveBar:
        return self.query_one(ResolveBar)

    def on_mount(self) -> None:
        self.action_list.border_title = "Team queue"
        self.detail.border_title = "Diff"
        self.status.reviewer = self.reviewer
        if self.filter_workspace is not None:
            self.status.filter = f"workspace {clean(self.filter_workspace)}"
        self.status.counts = "…"
        self.status.redraw()
        self.detail.show_note("Reading the team queue…")
        self._selection_changed()
        self._watch()

    def on_unmount(self) -> None:
        self._stop.set()

    # -- workers (the only callers of the source) ------------------------------------------
    @work(thread=True, group="watch")
    def _watch(self) -> None:
        try:
            self.source.watch(
                self._stop,
                lambda rows: self.post_message(RowsArrived(rows)),
                lambda online, text: self.post_message(LinkChanged(online, text)),
            )
        finally:
            self.source.close()
            self.watch_stopped.set()

    @work(thread=True, group="show")
    def _fetch(self, team_id: str) -> None:
        try:
            data = self.source.show(team_id)
        except TeamQueueError as exc:
            self.post_message(ActionShown(team_id, None, str(exc)))
            return
        self.post_message(ActionShown(team_id, data))

    @work(thread=True, group="decide")
    def _decide(self, team_id: str, verb: str, reason: str, view_hash: str) -> None:
        try:
            decided = self.source.decide(team_id, verb, reason, view_hash)
        except TeamQueueError as exc:
            self.post_message(DecisionMade(team_id, False, str(exc), failed=True))
            return
        self.post_message(DecisionMade(team_id, decided.won, decided.text))

    @work(thread=True, group="show")
    def _look_up_gone(self, team_id: str) -> None:
        from redline.teamqueue.remote import decided_text

        try:
            text = decided_text(self.source.show(team_id))
        except TeamQueueError as exc:
            text = f"{team_id} left the team queue ({exc})"
        self.post_message(DecidedElsewhere(team_id, text))

    # -- what the workers report -----------------------------------------------------------
    def on_rows_arrived(self, message: RowsArrived) -> None:
        self.all_rows = message.rows
        self.rows_seen += 1
        self._refresh_list()

    def on_link_changed(self, message: LinkChanged) -> None:
        self.status.online = message.online
        self.status.link_text = message.text
        self.status.redraw()

    def on_action_shown(self, message: ActionShown) -> None:
        if message.team_id != self.action_list.selected_id:
            return  # the person moved on meanwhile
        if message.data is None:
            self._shown_data = None
            self.detail.show_note(f"Cannot show {message.team_id}: {message.error}")
            return
        self._shown_data = message.data
        self.detail.show_action(message.data)

    def on_decision_made(self, message: DecisionMade) -> None:
        self.deciding = None
        selected = self.action_list.selected_id
        if message.won:
            self._mine.add(message.team_id)
            self.status.show_outcome(message.text)
            self.bar.clear_reason()
            if selected is None and self._hold:  # it left the list already: on to the next
                self._hold = False
                ids = [row["id"] for row in self.action_list.rows]
                self.action_list.select(ids[0] if ids else None)
        else:
            self.status.show_outcome(message.text, bad=True)
            if not message.failed and selected in (message.team_id, None):
                self._hold = True
                self.action_list.select(None)
                self.detail.show_note(message.text, team_id=message.team_id)
        self._selection_changed()

    def on_decided_elsewhere(self, message: DecidedElsewhere) -> None:
        self.status.show_outcome(message.text, bad=True)
        if self.action_list.selected_id is None:
            self.detail.show_note(message.text, team_id=message.team_id)

    # -- the list --------------------------------------------------------------------------
    def _visible(self) -> list[dict[str, Any]]:
        wanted = self.filter_workspace
        return [r for r in self.all_rows if wanted is None or r["workspace"]["id"] == wanted]

    def _refresh_list(self) -> None:
        visible = self._visible()
        ids = [row["id"] for row in visible]
        previous = self.action_list.selected_id
        select: str | None = None
        if previous in ids:
            select = previous
        elif previous is not None and previous not in {r["id"] for r in self.all_rows}:
            if previous in self._mine:  # our own decision went through: on to the next
                select = ids[0] if ids else None
            elif previous == self.deciding:  # ours or not: its answer says, select none
                self._hold = True
            else:  # someone else decided what the person was reading: say who, select none
                self._hold = True
                self._look_up_gone(previous)
        elif not self._hold:
            select = ids[0] if ids else None
        self.action_list.set_rows(visible, select)
        self._update_counts()
        self._selection_changed()

    def _update_counts(self) -> None:
        total = len(self.all_rows)
        spaces = len({r["workspace"]["id"] for r in self.all_rows})
        text = f"{total} pending in {spaces} workspace{'s' if spaces != 1 else ''}"
        if self.filter_workspace is not None:
            text = f"{len(self._visible())} of {text}"
        self.status.counts = text
        self.status.redraw()

    def _selection_changed(self) -> None:
        selected = self.action_list.selected_id
        self.bar.set_target(selected)
        live = selected is not None and self.deciding is None
        self.bar.set_enabled(apply=live, discard=live)
        if selected is None:
            self._shown_row = None
            self._shown_data = None
            if not self._hold:
                self.detail.show_note(EMPTY if not self._visible() else NOTHING_SELECTED)
            return
        row = next((r for r in self.action_list.rows if r["id"] == selected), None)
        if row is not None and row != self._shown_row:
            self._shown_row = row
            self._shown_data = None
            self._fetch(selected)

    @on(OptionList.OptionHighlighted, "#team-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # A highlight message can arrive after the list moved on (a racing decision
        # selected nothing meanwhile): only one that is still the list's selection is the
        # person picking an action again.
        if event.option.id is None or event.option.id != self.action_list.selected_id:
            return
        self._hold = False
        self._selection_changed()

    # -- keys ------------------------------------------------------------------------------
    def action_decide(self, verb: str) -> None:
        team_id = self.action_list.selected_id
        if team_id is None:
            self.status.show_outcome(NOTHING_SELECTED, bad=True)
            self.bell()
            return
        if self.deciding is not None:
            self.status.show_outcome(
                f"A decision on {self.deciding} is on its way; wait for it.", bad=True
            )
            return
        shown = self._shown_data
        if shown is None or shown.get("id") != team_id or not shown.get("view_hash"):
            # A decision binds what the person read: nothing is sent before it is shown.
            self.status.show_outcome(
                f"{team_id} is not shown yet: decide once its diff is on the screen.", bad=True
            )
            self.bell()
            return
        self.deciding = team_id
        self.bar.set_enabled(apply=False, discard=False)
        done = "apply" if verb == "apply" else "discard"
        self.status.show_outcome(f"Sending: {done} {team_id}…")
        self._decide(team_id, verb, self.bar.reason, str(shown["view_hash"]))

    @on(ResolveBar.Requested)
    def _button(self, event: ResolveBar.Requested) -> None:
        event.stop()
        self.action_decide(event.verb)

    @on(ReasonInput.DiscardRequested)
    def _enter_in_reason(self, event: ReasonInput.DiscardRequested) -> None:
        # As in the workspace dashboard: back to the list, so the next key is a key again
        # rather than more of the reason.
        event.stop()
        self.action_list.focus()
        self.action_decide("discard")

    @on(ReasonInput.Done)
    def _reason_done(self, event: ReasonInput.Done) -> None:
        event.stop()
        self.action_list.focus()

    def action_focus_reason(self) -> None:
        self.bar.focus_reason()

    def action_focus_list(self) -> None:
        self.action_list.focus()

    def action_focus_diff(self) -> None:
        self.detail.diff.focus()

    def action_move(self, delta: int) -> None:
        if delta > 0:
            self.action_list.action_cursor_down()
        else:
            self.action_list.action_cursor_up()

    def action_edge(self, last: bool) -> None:
        if last:
            self.action_list.action_last()
        else:
            self.action_list.action_first()

    def action_filter_workspace(self) -> None:
        """All workspaces → the first → the next … → all again (by path)."""
        spaces = sorted({(r["workspace"]["path"], r["workspace"]["id"]) for r in self.all_rows})
        order = [ident for _path, ident in spaces]
        if self.filter_workspace is None:
            self.filter_workspace = order[0] if order else None
        elif self.filter_workspace in order:
            at = order.index(self.filter_workspace) + 1
            self.filter_workspace = order[at] if at < len(order) else None
        else:
            self.filter_workspace = None
        path = dict((ident, path) for path, ident in spaces).get(self.filter_workspace or "")
        self.status.filter = (
            "all workspaces"
            if self.filter_workspace is None
            else f"workspace {self.filter_workspace} {clean(path or '')}".rstrip()
        )
        self._hold = False
        self._refresh_list()
