"""The inbox over a review source (``review.source.ReviewSource``): the team queue, or every
workspace on the machine, on the same screen as one workspace's session.

The app hands the source's listings in (:meth:`InboxSource.rows_arrived`); the selected
action's view (its Preview, or the diff the team queue mirrored) is read on a worker the
first time it is shown; a decision goes to the source's ``decide`` on a worker, carrying
the view the person read; what the source cannot do is greyed out with its reason
(``Controls``), and how a selected action that left was decided is asked of the source on
a worker too (it may be a database round trip).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from textual import work
from textual.content import Content
from textual.message import Message
from textual.screen import Screen

from redline.review.resolve import ResolveKind, ResolveOutcome
from redline.review.result import ToolResult
from redline.review.session import Decision
from redline.review.source import (
    ActionView,
    ListedAction,
    ReviewSource,
    SourceCapabilities,
    SourceOutcome,
    WorkspaceRef,
)
from redline.tui.source_list import SourceList
from redline.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from textual.widget import Widget

    from redline.review.store import PendingAction
    from redline.review.workspace_source import WorkspaceSource
    from redline.tui.checks import DashboardChecks
    from redline.tui.controls import Controls
    from redline.tui.pending import PendingList
    from redline.tui.protocol import SessionLike
    from redline.tui.widgets.activity_log import ActivityLog
    from redline.tui.widgets.pending_stack import PendingStack
    from redline.tui.widgets.preview_panel import PreviewPanel
    from redline.tui.widgets.resolve_bar import ResolveBar


class ViewLoaded(Message):
    """One action's view, read from the source (``view.error`` says why it could not be)."""

    def __init__(self, action_id: str, view: ActionView) -> None:
        self.action_id = action_id
        self.view = view
        super().__init__()


class SourceDecided(Message):
    """The source's answer to a decision made here."""

    def __init__(self, verb: str, action_id: str, outcome: SourceOutcome) -> None:
        self.verb = verb
        self.action_id = action_id
        self.outcome = outcome
        super().__init__()


class GoneTold(Message):
    """How an action that left the list was decided, as the source tells it."""

    def __init__(self, action_id: str, text: str) -> None:
        self.action_id = action_id
        self.text = text
        super().__init__()


class UndoAsked(Message):
    """What an undo in ``workspace`` would revert, as the source says ("" for nothing)."""

    def __init__(self, text: str, workspace: WorkspaceRef | None) -> None:
        self.text = text
        self.workspace = workspace
        super().__init__()


def to_result(outcome: SourceOutcome) -> ToolResult:
    return ToolResult.text_result(outcome.text) if outcome.ok else ToolResult.error(outcome.text)


class InboxSource(Screen[None]):
    """A base of :class:`~redline.tui.screens.inbox.InboxScreen`, which owns the state."""

    if TYPE_CHECKING:
        source: ReviewSource | None
        session: SessionLike
        pending: PendingList | SourceList

        @property
        def workspace_source(self) -> WorkspaceSource: ...

        _workspace_filter: str | None
        checks: DashboardChecks | None
        busy: bool
        _resolving: bool
        _stack_outdated: bool
        _previewed: tuple[object, ...] | bool | None
        controls: Controls

        @property
        def stack(self) -> PendingStack: ...

        @property
        def preview(self) -> PreviewPanel: ...

        @property
        def activity(self) -> ActivityLog: ...

        @property
        def resolve_bar(self) -> ResolveBar: ...

        def _panel(self, panel_id: str) -> Widget: ...

        def _stack_title(self) -> str: ...

        def _alive(self) -> bool: ...

        def _update_controls(self) -> None: ...

        def _show_selected(self) -> None: ...

        def refresh_stack(self) -> None: ...

        def run_command(self, command: str, call: Callable[[], object]) -> None: ...

        def selected_action(self) -> PendingAction | None: ...

    #: What the preview says while nothing is selected after a lost race or a departure
    #: (who decided), until the person picks an action again.
    held_note = ""

    @property
    def listing(self) -> SourceList:
        assert isinstance(self.pending, SourceList), "the inbox is over a review source"
        return self.pending

    def _start_over_source(self, source: ReviewSource) -> None:
        """Rows, facts and workspaces from the source's listed actions; no agent to prompt."""
        listing = self.listing
        self.stack.row_facts = listing.facts_of
        if source.spans_workspaces:
            self.stack.row_workspace = lambda action: (
                row.workspace if (row := listing.row(action.id)) is not None else None
            )
            self.stack.workspace_filter = self._workspace_filter
        prompt = self.query_one("#prompt", PromptInput)
        prompt.placeholder = f"no agent here: this dashboard reviews {source.title}"
        prompt.disabled = True
        self._panel("stack-panel").border_title = self._stack_title()
        self._show_selected()

    def _source_checks(self, source: ReviewSource) -> None:
        """Every known workspace: the selected action's checks, in its own workspace."""
        from redline.review.all_source import AllWorkspacesSource

        if not isinstance(source, AllWorkspacesSource):
            return
        from redline.tui.source_checks import SelectedChecks

        self.checks = SelectedChecks(self, source)
        self.preview.mount(self.checks.pane)

    @property
    def capabilities(self) -> SourceCapabilities:
        """What the screen's review source declares it can do: the source's, or the
        session's workspace as a source (``review.workspace_source.session_capabilities``)."""
        if self.source is not None:
            return self.source.capabilities
        from redline.review.workspace_source import session_capabilities

        session = self.session
        return session_capabilities(session.capabilities, has_rules=session.rules is not None)

    def _source_refusals(self) -> dict[str, str]:
        """What the review source cannot do at all, and why (greyed keys say it)."""
        caps = self.capabilities
        checks = self.checks
        refusals = {
            "undo_refusal": caps.refusal("undo"),
            "marks_refusal": caps.refusal("marks"),
            "checks_refusal": caps.refusal("checks")
            or (checks.refusal(self.stack.selected_id) if checks is not None else ""),
            "rules_refusal": caps.refusal("rules"),
        }
        source = self.source
        if source is None:
            return refusals
        selected = self.stack.selected_id
        view = self.listing.view_of(selected)
        mirrored = view is not None and view.preview is None and view.diff is not None
        return {
            **refusals,
            "view_refusal": f"{selected} is shown as the diff its workspace mirrored "
            f"({source.title} keeps no file contents): one view of it, read it with the "
            "arrows or d."
            if mirrored
            else "",
            "prompt_refusal": f"This dashboard runs no agent to prompt: it reviews {source.title}.",
        }

    def unavailable_keys(self) -> dict[str, str]:
        """The help's keys this screen's review source cannot serve, and why (none over a
        session: its keys say why when pressed)."""
        from redline.tui.screens.help import CAPABILITY_KEYS

        source = self.source
        if source is None:
            return {}
        caps = source.capabilities
        keys: dict[str, str] = {}
        for name, shown in CAPABILITY_KEYS.items():
            why = caps.refusal(name)
            for key in shown if why else ():
                keys[key] = why
        no_agent = f"this dashboard runs no agent: it reviews {source.title}"
        keys.update({"i": no_agent, "ctrl+x": no_agent})
        return keys

    def rows_arrived(self, rows: Sequence[ListedAction]) -> None:
        """A fresh listing from the source: show it."""
        self.listing.set_rows(rows)
        self.refresh_stack()

    # -- the selected action's view ------------------------------------------------------
    def show_from_source(self, action: PendingAction | None) -> None:
        """Show ``action`` with its view, reading the view first if it has none yet."""
        assert self.source is not None
        listing = self.listing
        action_id = action.id if action is not None else None
        row = listing.row(action_id)
        view = listing.view_of(action_id)
        if self.checks is not None:
            self.checks.show(action)
        note = ""
        if action_id is not None and listing.needs_view(action_id):
            note = f"Reading {action_id}…"
            self._read_view(action_id)
        elif view is not None and view.error:
            note = f"Cannot show {action_id}: {view.error}"
        elif action is None:
            note = self.held_note
        key = (id(action), id(view), note, self.stack.total, listing.arrivals > 0)
        if key == self._previewed:
            return
        self._previewed = key
        spans = self.source.spans_workspaces
        empty = (
            "Reading the list…"
            if listing.arrivals == 0
            else f"Nothing is pending in {self.source.title}."
        )
        self.preview.show_action(
            action,
            listed=self.stack.total,
            view=view,
            note=note,
            workspace=row.workspace if row is not None and spans else None,
            empty=empty,
        )

    @work(thread=True, exit_on_error=False, group="source-view", exclusive=True)
    def _read_view(self, action_id: str) -> None:
        assert self.source is not None
        try:
            view = self.source.view(action_id)
        except Exception as exc:
            view = ActionView(ListedAction(action_id, "", ""), error=str(exc))
        self.post_message(ViewLoaded(action_id, view))

    def on_view_loaded(self, message: ViewLoaded) -> None:
        if not self._alive():
            return
        view = message.view
        if view.error:
            # Not kept: the next time it is shown it is read again.
            if message.action_id == self.stack.selected_id:
                self._previewed = None
                self.preview.show_action(
                    self.selected_action(),
                    listed=self.stack.total,
                    note=f"Cannot show {message.action_id}: {view.error}",
                )
            return
        if self.listing.set_view(view):
            self.refresh_stack()

    # -- deciding -------------------------------------------------------------------------
    def decide_in_source(self, verb: str, action_id: str, reason: str, only: list[str]) -> None:
        """On the resolve worker: the decision through the source, with the view read."""
        assert self.source is not None
        chosen: Literal["apply", "discard"] = "apply" if verb == "apply" else "discard"
        decision = Decision(chosen, reason, tuple(only) if only else None, via="dashboard")
        try:
            outcome = self.source.decide(action_id, decision, self.listing.view_of(action_id))
        except Exception as exc:
            outcome = SourceOutcome(False, f"Could not {verb} {action_id}: {exc}")
        self.post_message(SourceDecided(verb, action_id, outcome))

    def decide_marked_in_source(
        self, verb: str, ids: tuple[str, ...], reason: str
    ) -> tuple[tuple[str, ResolveOutcome], ...]:
        """On the resolve worker: each marked action decided through the source in turn."""
        assert self.source is not None
        chosen: Literal["apply", "discard"] = "apply" if verb == "apply" else "discard"
        done: ResolveKind = "applied" if chosen == "apply" else "discarded"
        results: list[tuple[str, ResolveOutcome]] = []
        for action_id in ids:
            decision = Decision(chosen, reason, via="dashboard")
            try:
                outcome = self.source.decide(action_id, decision, self.listing.view_of(action_id))
            except Exception as exc:
                outcome = SourceOutcome(False, f"Could not {verb} {action_id}: {exc}")
            kind: ResolveKind = done if outcome.ok else "failed"
            results.append((action_id, ResolveOutcome(kind, outcome.text)))
        return tuple(results)

    def on_source_decided(self, message: SourceDecided) -> None:
        self.busy = False
        self._resolving = False
        if not self._alive():
            return
        outcome = message.outcome
        title = f"{message.verb.capitalize()}"
        if outcome.ok:
            self.resolve_bar.clear_reason()
            self.activity.write_lines([Content.assemble(("✓ ", "bold"), outcome.text)])
            self.notify(outcome.text, title=title)
        elif outcome.lost:
            # Someone else decided it first: select nothing rather than slide onto the
            # next action, and say who.
            self.held_note = outcome.text
            self.activity.write_lines([Content.styled(f"✗ {outcome.text}", "$redline-text-error")])
            self.notify(outcome.text, title=f"{title}: decided elsewhere", severity="warning")
            self.stack.update_actions(self.listing.listed(), clear=True)
        else:
            self.activity.write_lines([Content.styled(f"✗ {outcome.text}", "$redline-text-error")])
            self.notify(outcome.text, title=f"{title} failed", severity="error")
        if self._stack_outdated or outcome.lost:
            self.refresh_stack()
        else:
            self._show_selected()
            self._update_controls()

    # -- an action that left while selected --------------------------------------------
    def tell_gone(self, action_id: str) -> str:
        """Right away: that it left; then, from a worker, how (the source may be remote)."""
        self._ask_gone(action_id)
        return f"{action_id} left the list."

    @work(thread=True, exit_on_error=False, group="source-gone")
    def _ask_gone(self, action_id: str) -> None:
        assert self.source is not None
        try:
            text = self.source.gone_text(action_id)
        except Exception as exc:
            text = f"{action_id} left the list ({exc})"
        self.post_message(GoneTold(action_id, text))

    def on_gone_told(self, message: GoneTold) -> None:
        if not self._alive():
            return
        self.activity.write_lines([Content.styled(f"ℹ {message.text}", "$redline-text-warning")])
        if self.stack.selected_id is None:
            self.held_note = message.text
            self._show_selected()

    # -- the other keys, through the source ---------------------------------------------
    @property
    def review_source(self) -> ReviewSource:
        """What the screen reviews through: the source it was given, or the session's
        workspace (``review.workspace_source.WorkspaceSource``, deciding through the
        session)."""
        return self.source if self.source is not None else self.workspace_source

    def source_undo(self, workspace: WorkspaceRef | None = None) -> ToolResult:
        if workspace is None:
            row = self.pending.row(self.stack.selected_id)
            workspace = row.workspace if row is not None else None
        return to_result(self.review_source.undo(workspace))

    def ask_undo(self) -> None:
        """``u`` over a source: first what it would undo (and where), to confirm."""
        row = self.listing.row(self.stack.selected_id)
        self._ask_undo(row.workspace if row is not None else None)

    @work(thread=True, exit_on_error=False, group="source-undo", exclusive=True)
    def _ask_undo(self, workspace: WorkspaceRef | None) -> None:
        assert self.source is not None
        try:
            text = self.source.undo_target(workspace)
        except Exception:
            text = ""
        self.post_message(UndoAsked(text, workspace))

    def on_undo_asked(self, message: UndoAsked) -> None:
        if not self._alive():
            return
        workspace = message.workspace

        def undo() -> ToolResult:
            return self.source_undo(workspace)

        if not message.text:  # nothing to undo: the source says why
            self.busy = True
            self._update_controls()
            self.run_command("undo", undo)
            return

        def answered(yes: bool | None) -> None:
            if not yes or not self._alive():
                return
            self.busy = True
            self._update_controls()
            self.run_command("undo", undo)

        from redline.tui.screens.confirm import ConfirmScreen

        self.app.push_screen(ConfirmScreen(message.text, yes="Undo", no="Keep"), answered)

    def source_repreview(self, action_id: str) -> ToolResult:
        return to_result(self.review_source.repreview(action_id))

    def source_edit(self, action_id: str, path: str, text: str) -> ToolResult:
        return to_result(self.review_source.edit(action_id, path, text))

    def cycle_workspace(self) -> str:
        """``f`` over a source spanning workspaces: every workspace → the first (by path) →
        the next … → then each source (``exec``, ``mcp:cursor`` …) over every workspace →
        everything again. Returns what is shown now."""
        stack = self.stack
        if stack.source_filter is not None:  # stepping through the sources
            shown = stack.cycle_filter()
            self.held_note = ""
            return f"source {shown}" if shown else "every workspace and source"
        spaces = sorted(
            {(row.workspace.path, row.workspace.id) for row in self.listing_rows() if row.workspace}
        )
        order = [ident for _path, ident in spaces]
        current = stack.workspace_filter
        if current is None:
            chosen = order[0] if order else None
        elif current in order and order.index(current) + 1 < len(order):
            chosen = order[order.index(current) + 1]
        else:
            chosen = None
        stack.workspace_filter = chosen
        self.held_note = ""
        stack.update_actions(self.listing.listed())
        if chosen is None and current is not None:
            shown = stack.cycle_filter()  # the workspaces done: the sources next
            if shown:
                return f"source {shown}"
        path = dict((ident, path) for path, ident in spaces).get(chosen or "", "")
        return "every workspace" if chosen is None else f"workspace {chosen} {path}".rstrip()

    def listing_rows(self) -> list[ListedAction]:
        rows = (self.listing.row(action.id) for action in self.listing.listed())
        return [row for row in rows if row is not None]
