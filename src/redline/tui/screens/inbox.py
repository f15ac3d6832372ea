"""The review inbox: the pending stack and its preview, the activity log and the prompt.

The screen owns the review keys (their order here is the footer's), which of them are live
(``controls`` and ``agent_ended``, reactives with ``bindings=True``) and the calls those keys
make into the session: resolving, undo, re-preview, edits and session rules run on thread
workers (:mod:`redline.tui.session_calls`) that post their outcome back here. Resolutions
and batches then go on to the app, which resumes the agent once nothing is pending.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from redline.review.source import ReviewSource
from redline.review.store import PendingAction
from redline.review.workspace_source import WorkspaceSource
from redline.tui.activity_format import departure_block, error_lines
from redline.tui.agent_ended import ended_note
from redline.tui.checks import DashboardChecks
from redline.tui.controls import Controls
from redline.tui.messages import (
    CommandFinished,
    ForeignResolved,
    ResolutionFinished,
    UndoChecked,
)
from redline.tui.pending import PendingList
from redline.tui.protocol import SessionLike
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.editor import EditorScreen, edit_outside
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.inbox_batches import NO_REASON, InboxBatches
from redline.tui.screens.inbox_checks import InboxChecks
from redline.tui.screens.inbox_conversation import InboxConversation
from redline.tui.screens.inbox_first import InboxFirstFrame
from redline.tui.screens.inbox_keys import InboxKeys
from redline.tui.screens.inbox_search import InboxSearch
from redline.tui.screens.inbox_source import InboxSource
from redline.tui.session_calls import (
    apply_session_rules,
    resolve_action,
    run_command,
    undo_available,
)
from redline.tui.source_list import SourceList
from redline.tui.widgets.activity_log import ActivityLog
from redline.tui.widgets.ended_banner import EndedBanner
from redline.tui.widgets.fitting_footer import FittingFooter
from redline.tui.widgets.pending_stack import PendingStack, action_source
from redline.tui.widgets.preview_panel import PreviewPanel
from redline.tui.widgets.prompt_input import PromptInput
from redline.tui.widgets.reason_input import ReasonInput
from redline.tui.widgets.resolve_bar import ResolveBar
from redline.tui.widgets.search_input import SearchBar, SearchInput
from redline.tui.widgets.status_line import StatusLine

UNDO_BLOCKED_HINT = (
    "Hint: put those files back as the apply left them and press u again, or undo an older "
    "change whose files are unchanged: `redline undo --list`, then `redline undo ID`."
)
_W = TypeVar("_W", bound=Widget)
# The footer shows as many keys as fit whole; these actions get the room first, in this order.
FOOTER_FIRST = (
    "apply_top",
    "discard_top",
    "focus_reason",
    "focus_prompt",
    "help",
    "quit",
    "stop_agent",
)


class InboxScreen(
    InboxKeys,
    InboxFirstFrame,
    InboxBatches,
    InboxChecks,
    InboxSearch,
    InboxSource,
    InboxConversation,
):
    """The dashboard's screen for one session (the first on the stack; dialogs open above)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # ctrl+q is the app's (a priority key there, live on every screen). Named first here
        # only so the footer shows it first: the app's binding takes this place in the footer.
        Binding("ctrl+q", "app.quit", "Quit"),
        # The footer shows them in this order, as many as fit whole (FOOTER_FIRST get room
        # first); ctrl+x (stop) and ctrl+p (the palette) are the app's and come last.
        Binding("y", "apply_top", "Apply"),
        Binding("n", "discard_top", "Discard"),
        Binding("right_curly_bracket", "step_hunk(1)", "Next hunk", key_display="}"),
        Binding("left_curly_bracket", "step_hunk(-1)", "Prev hunk", key_display="{", show=False),
        Binding("space", "toggle_part", "Select hunk"),
        Binding("e", "edit", "Edit"),
        Binding("E", "edit_external", "$EDITOR", key_display="E", show=False),
        Binding("r", "focus_reason", "Reason"),
        Binding("i", "focus_prompt", "Prompt"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("f3", "search_step(1)", "Next match"),
        Binding("shift+f3", "search_step(-1)", "Prev match"),
        Binding("escape", "close_search", "Close search", show=False),
        Binding("u", "undo", "Undo"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("p", "repreview", "Re-preview"),
        Binding("a", "always_apply", "Always apply", show=False),
        Binding("left_square_bracket", "step_file(-1)", "Prev file", key_display="["),
        Binding("right_square_bracket", "step_file(1)", "Next", key_display="]"),
        Binding("s", "toggle_split", "Split"),
        Binding("plus,equals_sign", "context(True)", "Context", key_display="+"),
        Binding("minus", "context(False)", "Less context", key_display="-", show=False),
        Binding("d", "focus_diff", "Diff", show=False),
        Binding("g", "stack_edge(False)", "Top of stack", show=False),
        Binding("G", "stack_edge(True)", "Bottom of stack", show=False),
        Binding("f", "filter_source", "Filter source", show=False),
        Binding("c", "run_checks", "Run checks", show=False),
        Binding("N", "discard_citing_checks", "Discard citing checks", key_display="N", show=False),
    ]

    # Setting either refreshes the footer's keys (only when the value really changes). The
    # screen draws nothing from ``controls``: no repaint of the whole screen (issue 44).
    controls: reactive[Controls] = reactive(Controls(), bindings=True, init=False, repaint=False)
    # How the external agent's process ended (None: alive, or not external): no prompting.
    agent_ended: reactive[str | None] = reactive(None, bindings=True, init=False)

    def __init__(
        self,
        session: SessionLike,
        *,
        workspace_label: str,
        source: ReviewSource | None = None,
        workspace_filter: str | None = None,
    ) -> None:
        """``source``: list and decide through this review source (the team queue, every
        workspace) instead of the session's workspace; ``session`` then only labels the
        screen (``tui.source_session.SourceSession``). A ``WorkspaceSource`` over
        ``session`` itself is the session's workspace (the workspace dashboard; also what
        no ``source`` means). ``workspace_filter``: show only
        that workspace's actions at first (a source spanning workspaces; ``f`` steps on)."""
        super().__init__()
        self.session = session
        self.workspace_label = workspace_label
        if isinstance(source, WorkspaceSource) and source.session is session:
            # The session's own workspace (``redline``): listed and decided through that
            # source, with what only a session has (its agent, checks and rules) and its
            # actions shown at once (the own ones at hand, others' Previews read lazily).
            self.pending: PendingList | SourceList = PendingList(session, source)
            source = None
        else:
            self.pending = PendingList(session) if source is None else SourceList(source)
        self.source = source
        self._workspace_filter = workspace_filter
        # A resolve, a batch or an undo is on its way through the session.
        self.busy = False
        # One action is being resolved: the stack is re-read once it is done, not on each
        # of the queue's file changes meanwhile (each re-read lists the whole queue).
        self._resolving = False
        self._reading = False  # see InboxFirstFrame
        self._stack_outdated = False
        # Actions this screen decided that the stack still lists: the next re-read brings
        # the last listing up to date instead of listing the whole queue (issue 44).
        self._decided: set[str] = set()
        self._shown: tuple[PendingAction, ...] | None = None  # what the stack shows
        self.can_undo = True
        self._ready = False
        self._previewed: tuple[object, ...] | bool | None = False
        # Widgets are looked up once (the keys and the session's events ask for them often).
        self._widgets: dict[type[Widget], Widget] = {}
        self._panels: dict[str, Widget] = {}
        # Ids this screen resolved, edited or re-previewed: their leaving the stack is no
        # news (any other selected action that leaves was decided elsewhere: said so).
        self._own: set[str] = set()
        # Actions a person's edit is replacing (their replacement is logged as the edit).
        self._edits: set[str] = set()
        self.checks: DashboardChecks | None = None

    # -- layout ----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusLine(
            self.session.model_label,
            self.workspace_label,
            scripted=self.session.scripted,
            id="status",
        )
        yield EndedBanner(id="ended-banner")
        with Horizontal(id="main"):
            with Vertical(id="stack-panel"):
                yield PendingStack(id="stack")
                yield ResolveBar(id="resolve-bar")
            yield PreviewPanel(id="preview")
        with Vertical(id="activity-panel"):
            yield ActivityLog(id="activity")
            yield PromptInput(placeholder="talk to the agent (i; Enter sends)", id="prompt")
        yield SearchBar(placeholder="search (Enter finds, Escape closes)", id="search-bar")
        yield FittingFooter(first=FOOTER_FIRST)

    @property
    def workspace_source(self) -> WorkspaceSource:
        """The session's workspace as the review source the stack lists and decides
        through (a screen given another ``source`` has none)."""
        pending = self.pending
        assert isinstance(pending, PendingList), "the inbox is over a session's workspace"
        return pending.source

    @property
    def stack(self) -> PendingStack:
        return self._widget(PendingStack)

    @property
    def preview(self) -> PreviewPanel:
        return self._widget(PreviewPanel)

    @property
    def activity(self) -> ActivityLog:
        return self._widget(ActivityLog)

    @property
    def resolve_bar(self) -> ResolveBar:
        return self._widget(ResolveBar)

    @property
    def status_line(self) -> StatusLine:
        return self._widget(StatusLine)

    @property
    def search(self) -> SearchInput:
        return self._widget(SearchInput)

    def _widget(self, kind: type[_W]) -> _W:
        found = self._widgets.get(kind)
        if found is None:
            found = self._widgets[kind] = self.query_one(kind)
        assert isinstance(found, kind)
        return found

    def _panel(self, panel_id: str) -> Widget:
        found = self._panels.get(panel_id)
        if found is None:
            found = self._panels[panel_id] = self.query_one(f"#{panel_id}", Widget)
        return found

    @property
    def ready(self) -> bool:
        """Whether the app has started the inbox (until then every key counts as live)."""
        return self._ready

    def start(self) -> None:
        """Title the panels; from now on the keys follow the state (the app is mounted)."""
        self._ready = True
        self._panel("stack-panel").border_title = "Pending"
        self.preview.border_title = "Preview"
        self._panel("activity-panel").border_title = "Activity"
        if self.source is not None:
            self._start_over_source(self.source)
            self._source_checks(self.source)
            return
        self.checks = DashboardChecks(self)
        self.preview.mount(self.checks.pane)
        queue = self.workspace_source.queue
        if queue is not None:  # its housekeeping waits until a decision's outcome is posted
            queue.defer_pruning = True

    def _alive(self) -> bool:
        """False once quitting started or the screen is gone (late messages do nothing)."""
        return self.is_attached and self.app.is_running

    # -- the stack and the selected action -------------------------------------------
    def refresh_stack(self, actions: tuple[PendingAction, ...] | None = None) -> None:
        """Re-read what is pending (or show ``actions``, read on a thread) and show it."""
        if self._resolving or self._reading:
            self._stack_outdated = True
            return
        self._stack_outdated = False
        before = self.stack.selected_id
        decided, self._decided = self._decided, set()
        if actions is None:
            pending = self.pending
            actions = (
                pending.read_after(decided) if isinstance(pending, PendingList) else pending.read()
            )
        self._log_departures()
        gone = (
            before is not None
            and before not in self._own
            and not self.busy
            and all(action.id != before for action in actions)
        )
        # The selection follows the top until the person moves it; an action they moved to
        # never slides onto another: the next y would apply something they have not read.
        # Over a review source spanning workspaces (the team queue) nothing is selected then
        # either: the next action may be another workspace's, read by no one yet.
        follows = self.stack.follows_top and not (
            self.source is not None and self.source.spans_workspaces
        )
        # The very listing shown already (nothing changed since): no row to make again.
        same = actions is self._shown and isinstance(self.pending, PendingList) and not gone
        self._shown = actions
        change = self.pending.change(actions) if isinstance(self.pending, PendingList) else None
        if not same:
            self.stack.update_actions(actions, clear=gone and not follows, change=change)
        if gone and before is not None:
            then = "The top is selected now." if follows else "Nothing is selected: pick one."
            told = (
                self.workspace_source.gone_text(before)
                if self.source is None
                else self.tell_gone(before)
            )
            text = f"{told} {then}"
            self.notify(text, title="Selected action gone", severity="warning")
            self.activity.write_lines([Content.styled(f"ℹ {text}", "$redline-text-warning")])
        if self.checks is not None and not same:
            self.checks.sync(actions, change)
        self._widget(EndedBanner).set_left(self._ended_left())
        self.status_line.pending = len(actions)
        self.status_line.sources = self.stack.counts
        panel, title = self._panel("stack-panel"), self._stack_title()
        if panel.border_title != title:  # each setting repaints the panel, even the same
            panel.border_title = title
        self._show_selected()
        self._update_controls()

    def _log_departures(self) -> None:
        """Say how other processes' actions left the list: the verdict and who decided (an
        apply elsewhere can be undone here: undo is checked again)."""
        departed = self.pending.departed()
        if departed and self._ready:
            self.check_undo()
        for gone in departed:
            self.activity.write_lines(
                departure_block(gone.action, gone.resolution, action_source(gone.action))
            )

    def _stack_title(self) -> str:
        # Every listed action: this session's and, over a queue, every other process's.
        total = self.stack.total
        shown = [
            shown
            for shown in (self.stack.source_filter, self.stack.workspace_filter)
            if shown is not None
        ]
        if not shown:
            return f"Pending ({total})"
        return f"Pending ({len(self.stack.rows)} of {total}, {', '.join(shown)})"

    def selected_action(self) -> PendingAction | None:
        return self.pending.get(self.stack.selected_id)

    def _show_selected(self) -> None:
        action = self.selected_action()
        if self.source is not None:
            self.show_from_source(action)
            return
        key = (
            (id(action), action.stale, action.stale_reason, ended_note(action.details))
            if action
            else ("nothing selected", self.stack.total)
        )
        if key != self._previewed:
            self._previewed = key
            self.preview.show_action(action, listed=self.stack.total)
        if self.checks is not None:
            self.checks.show(action)

    @on(PendingStack.Selected)
    def _stack_selected(self, _message: PendingStack.Selected) -> None:
        # Queued selections can arrive while the app shuts down, after this screen went.
        if not self._alive():
            return
        if self.stack.selected_id is not None:
            self.held_note = ""
        self._show_selected()
        self._update_controls()

    # -- the external agent's end -------------------------------------------------------
    def show_agent_ended(self, agent: str, how: str) -> None:
        """The external agent's process ended on its own: say so until the app closes."""
        self.agent_ended = how
        self._widget(EndedBanner).show_ended(agent, how, self._ended_left())
        prompt = self.query_one("#prompt", PromptInput)
        prompt.placeholder = "the agent has ended: review what it left above"
        prompt.disabled = True

    def _ended_left(self) -> int:
        """How many of this session's pending actions the ended agent left."""
        if self.agent_ended is None:
            return 0
        return self.session.store.count

    # -- resolving -------------------------------------------------------------------
    def action_apply_top(self) -> None:
        self._resolve_selected("apply")

    def action_discard_top(self) -> None:
        self._resolve_selected("discard")

    @on(ResolveBar.Requested)
    def _bar_requested(self, message: ResolveBar.Requested) -> None:
        self._resolve_selected(message.verb)

    def _resolve_selected(self, verb: str, reason: str | None = None) -> None:
        """Apply or discard the marked actions, else the action shown in the preview (its
        selected parts, if any); ``reason`` overrides the reason field's text."""
        if self.refuse_while_busy():
            return
        if self.stack.marked:
            self._resolve_marked(verb)
            return
        action = self.selected_action()
        if action is None:
            self.notify(self._refusal("apply_top"), title="Nothing done", severity="warning")
            return
        if verb == "apply" and action.stale:
            self.notify(
                f"{action.id} was not applied: it is stale "
                f"({action.stale_reason or 'its files changed since the preview'}). "
                "Re-preview it (p) or discard it (n).",
                title="Nothing applied",
                severity="warning",
            )
            return
        shown = self.preview.action is action and not self.controls.parts_refusal
        only = self.preview.selection() if shown else []
        self._own.add(action.id)
        self.busy_quietly()
        self._resolving = True
        self._resolve_worker(verb, action.id, reason or self.resolve_bar.reason or NO_REASON, only)

    @work(thread=True, exit_on_error=False, group="resolve")
    def _resolve_worker(
        self, verb: str, action_id: str, reason: str, only: list[str] | None = None
    ) -> None:
        if self.source is not None:
            self.decide_in_source(verb, action_id, reason, only or [])
            return

        def foreign_done(text: str) -> None:
            self.post_message(ForeignResolved(verb, action_id, text))

        source = self.workspace_source
        outcome = resolve_action(source, verb, action_id, reason, only, foreign_done)
        self.post_message(ResolutionFinished(verb, action_id, reason, outcome))
        if source.queue is not None:
            source.queue.housekeep()  # what the decision made due, off the person's wait

    def on_foreign_resolved(self, message: ForeignResolved) -> None:
        # The activity says how it went once the action leaves the list (_log_departures).
        self._resolving = False
        self._decided.add(message.action_id)
        self.refresh_stack()

    def on_resolution_finished(self, message: ResolutionFinished) -> None:
        # Not stopped: it goes on to the app, which resumes the agent when it can.
        self.busy = False
        self._resolving = False
        if not self._alive():
            return
        outcome = message.outcome
        if not outcome.is_error and self.pending.get(message.action_id) is not None:
            self._decided.add(message.action_id)  # still listed: not re-read since
        if self._stack_outdated or self._decided:
            self.refresh_stack()
        if outcome.is_error:
            self._own.discard(message.action_id)
        if message.verb == "apply":
            self.check_undo()
        if not outcome.is_error:
            self.resolve_bar.clear_reason()
        elif outcome.top_changed:
            self.notify(outcome.text, title="Top changed", severity="warning")
            self.activity.write_lines(
                [Content.styled(f"ℹ {outcome.text}", "$redline-text-warning")]
            )
        else:
            # A failure about an action is logged by the session (a resolution-failed event);
            # the toast makes sure whoever pressed the key sees it with the log scrolled away.
            self.notify(outcome.text, title=f"{message.verb.capitalize()} failed", severity="error")
            if outcome.action is None:
                self.activity.write_lines(error_lines(outcome.text))
        self._update_controls()

    # -- undo, re-preview, session rules, edits ---------------------------------------
    def action_undo(self) -> None:
        if self.refuse_while_busy():
            return
        if self.source is not None:
            self.ask_undo()  # what it would undo, and where, confirmed first
            return
        self.busy = True
        self._update_controls()
        self.run_command("undo", self.source_undo)

    def action_repreview(self) -> None:
        action = self.selected_action()
        if action is None or not action.stale or self.controls.repreview_refusal:
            self.notify(self._refusal("repreview"), title="Nothing done", severity="warning")
            return
        action_id = action.id
        self._own.add(action_id)
        self.run_command("repreview", lambda: self.source_repreview(action_id))

    def action_always_apply(self) -> None:
        """Offer a session rule: always apply this tool's changes under this folder."""
        from redline.tui.session_rule import offer_for

        action = self.selected_action()
        rules = self.session.rules if self.session.capabilities.rules else None
        if action is None or rules is None:
            return
        offer = offer_for(self.session, action, rules.snapshot().rules)
        if offer is None:
            self.notify("Only changes to files can get a session rule.", title="Always apply")
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            with contextlib.suppress(ValueError):  # the same rule is already in force
                rules.add_session_rule(offer.rule)
            self.activity.write_lines(
                [Content.styled(f"ℹ session rule: {offer.rule.name}", "$text-muted")]
            )
            session = self.session
            self.run_command("rules", lambda: "\n".join(apply_session_rules(session)))

        self.app.push_screen(
            ConfirmScreen(offer.question, yes="Always apply", no="Cancel"), answered
        )

    def action_edit(self) -> None:
        target = self.preview.edit_target()
        if target is None:
            return
        action_id, path, text = target

        def saved(new_text: str | None) -> None:
            if new_text is not None:
                self._save_edit(action_id, path, new_text)

        self.app.push_screen(EditorScreen(action_id, path, text), saved)

    def action_edit_external(self) -> None:
        target = self.preview.edit_target()
        if target is None:
            return
        action_id, path, text = target
        new_text = edit_outside(self.app, path, text)
        if new_text is not None:
            self._save_edit(action_id, path, new_text)

    def _save_edit(self, action_id: str, path: str, text: str) -> None:
        self._own.add(action_id)
        # The replacement it makes is logged as an edit, not a re-preview (took_edit).
        self._edits.add(action_id)

        self.run_command("edit", lambda: self.source_edit(action_id, path, text))

    def took_edit(self, action_id: str) -> bool:
        """Whether ``action_id`` was replaced by a person's edit made here (asked once)."""
        if action_id in self._edits:
            self._edits.discard(action_id)
            return True
        return False

    def run_command(self, command: str, call: Callable[[], Any]) -> None:
        """Run ``call`` on a thread worker; its outcome comes back as a CommandFinished."""
        self._command_worker(command, call)

    @work(thread=True, exit_on_error=False, group="commands")
    def _command_worker(self, command: str, call: Callable[[], Any]) -> None:
        self.post_message(run_command(command, call))

    def on_command_finished(self, message: CommandFinished) -> None:
        if message.command == "undo":
            self.busy = False
        if not self._alive():
            return
        result = message.result
        if result.is_error:
            # Each fact once in the log: the toast is for whoever pressed the key.
            text = result.text
            if message.command == "undo" and "changed since it was applied" in text:
                text = f"{text}\n{UNDO_BLOCKED_HINT}"
                self.activity.write_lines([Content.styled(f"ℹ {UNDO_BLOCKED_HINT}", "$text-muted")])
            self.notify(text, title=f"{message.command} failed", severity="error")
            if not message.logged:
                self.activity.write_lines(
                    [Content.styled(f"✗ {result.text}", "$redline-text-error")]
                )
        elif message.command == "undo":
            self.notify(result.text or "Undone.", title="Undo")
        if message.command == "undo":
            self.check_undo()
        elif message.command == "trust":
            # Load errors of the newly trusted plugins arrive as plugin_error events.
            self.notify("Workspace trusted; its plugins are loaded.", title="Trust")
        self._update_controls()

    # -- undo availability -------------------------------------------------------------
    def check_undo(self) -> None:
        """Ask the journal (on a thread) whether there is an apply to undo."""
        self._undo_worker()

    @work(thread=True, exit_on_error=False, group="undo-check", exclusive=True)
    def _undo_worker(self) -> None:
        self.post_message(UndoChecked(undo_available(self.session)))

    def on_undo_checked(self, message: UndoChecked) -> None:
        self.can_undo = message.available
        if self._alive():
            self._update_controls()

    # -- hunks and the preview -----------------------------------------------------------
    def action_step_hunk(self, delta: int) -> None:
        self.preview.step_hunk(delta)
        if self.focused is self.stack:
            # Over to the diff, so space there picks the hunk (space in the stack marks).
            self.preview.diff_view.focus()

    def action_toggle_part(self) -> None:
        if self.controls.parts_refusal:
            self.notify(self.controls.parts_refusal, title="Nothing done", severity="warning")
            return
        focused = self.focused
        in_file_list = focused is not None and focused.id == "file-list"
        if self.preview.toggle_part(whole_file=in_file_list):
            self._update_controls()

    def action_step_file(self, delta: int) -> None:
        self.preview.step_file(delta)

    def action_toggle_split(self) -> None:
        self.preview.toggle_split()

    def action_context(self, more: bool) -> None:
        self.preview.change_context(more)

    # -- focus keys, stack jumps, source filter, help ------------------------------------
    def action_focus_reason(self) -> None:
        self.resolve_bar.focus_reason()

    @on(ReasonInput.Done)
    def _reason_done(self) -> None:
        self.stack.focus()

    @on(ReasonInput.DiscardRequested)
    def _reason_entered(self) -> None:
        """Enter in the reason field discards with that reason (never applies)."""
        self.stack.focus()
        self._resolve_selected("discard")

    def action_focus_prompt(self) -> None:
        self.query_one("#prompt", PromptInput).focus()

    @on(PromptInput.Done)
    def _prompt_done(self) -> None:
        self.stack.focus()

    def action_focus_diff(self) -> None:
        self.preview.diff_view.focus()

    def action_stack_edge(self, bottom: bool) -> None:
        stack = self.stack
        stack.focus()
        if bottom:
            stack.action_cursor_end()
        else:
            stack.action_cursor_home()

    def action_filter_source(self) -> None:
        if self.source is not None and self.source.spans_workspaces:
            showing = self.cycle_workspace()
            self._panel("stack-panel").border_title = self._stack_title()
            self.refresh_stack()
            self.notify(f"Showing {showing}.", title="Filter")
            return
        shown = self.stack.cycle_filter()
        self._panel("stack-panel").border_title = self._stack_title()
        self.notify(f"Showing {shown or 'every source'}.", title="Filter")

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.unavailable_keys()))

    # -- search --------------------------------------------------------------------------
