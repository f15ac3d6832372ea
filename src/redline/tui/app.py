"""RedlineApp: watch the agent work and review every queued change before it lands.

The app takes an already-created session. The agent runs on the session's own loop; an
async worker awaits the run's future. Session and store callbacks become messages in
:mod:`redline.tui.bridge`; every blocking call into the session (resolve, undo,
re-preview, trust) runs in a thread worker and posts its outcome back, so the UI never
waits on the agent. Which keys are live follows two reactives (``agent_state`` and
``controls``) declared with ``bindings=True``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath
from typing import Any, ClassVar, TypeVar

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from redline.drivers.acp.events import AcpAgentExit
from redline.review.events import (
    AgentEnd,
    AgentState,
    ErrorEvent,
    MessageDelta,
    MessageEnd,
)
from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tui.activity_format import (
    detail_lines,
    error_lines,
    format_event,
    plugin_error_lines,
)
from redline.tui.agent_ended import ended_note, exit_error_lines
from redline.tui.agent_run import AgentRuns
from redline.tui.bridge import EventBridge
from redline.tui.controls import Controls, key_state
from redline.tui.messages import (
    BatchFinished,
    CommandFinished,
    EventsAvailable,
    ForeignResolved,
    ResolutionFinished,
    RunFinished,
    StackChanged,
    UndoChecked,
)
from redline.tui.palette import readable_variables
from redline.tui.pending import PendingList, session_queue
from redline.tui.protocol import SessionLike, WatcherFactory, WatcherLike
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.editor import EditorScreen, edit_outside
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.quit import QuitScreen
from redline.tui.screens.trust import TrustScreen
from redline.tui.session_calls import resolve_action, resolve_all, run_command, undo_available
from redline.tui.widgets.activity_log import ActivityLog
from redline.tui.widgets.diff_view import DiffView
from redline.tui.widgets.ended_banner import EndedBanner
from redline.tui.widgets.fitting_footer import FittingFooter
from redline.tui.widgets.pending_stack import PendingStack, source_counts
from redline.tui.widgets.preview_panel import PreviewPanel
from redline.tui.widgets.prompt_input import PromptInput
from redline.tui.widgets.reason_input import ReasonInput
from redline.tui.widgets.resolve_bar import ResolveBar
from redline.tui.widgets.search_input import Searchable, SearchInput
from redline.tui.widgets.status_line import StatusLine
from redline.workspace.queue import WorkspaceQueue

log = logging.getLogger(__name__)

STYLE_FILES = (
    "app.tcss",
    "stack.tcss",
    "preview.tcss",
    "activity.tcss",
    "modals.tcss",
    "layout.tcss",
)
NO_REASON = "no reason given"
QUIT_GRACE_SECONDS = 2.0
# How often a live run over an external agent is asked whether it only waits on review.
WAITING_POLL_SECONDS = 0.2
_W = TypeVar("_W", bound=Widget)
NARROW_BELOW = 100
TINY_BELOW = 22
SHORT_BELOW = 32
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


def _css_paths() -> list[str | PurePath]:
    from redline.resources import styles_dir

    base = styles_dir()
    return [base / name for name in STYLE_FILES]


def _default_watcher_factory(root: Path, on_change: Callable[[set[str]], None]) -> WatcherLike:
    from redline.workspace.watch import WorkspaceWatcher

    watcher: WatcherLike = WorkspaceWatcher(root, on_change)
    return watcher


class RedlineApp(App[int]):
    """The review dashboard for one session."""

    TITLE = "redline"
    CSS_PATH = _css_paths()
    AUTO_FOCUS = "#stack"
    ENABLE_COMMAND_PALETTE = True
    # Setting either refreshes the footer's keys (only when the value really changes).
    agent_state: reactive[AgentState] = reactive(AgentState.IDLE, bindings=True, init=False)
    controls: reactive[Controls] = reactive(Controls(), bindings=True, init=False)
    # How the external agent's process ended on its own (None: alive, or not external).
    agent_ended: reactive[str | None] = reactive(None, bindings=True, init=False)

    BINDINGS: ClassVar[list[BindingType]] = [
        # The footer shows them in this order, as many as fit whole (FOOTER_FIRST get room first).
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
        Binding("ctrl+x", "stop_agent", "Stop", priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        session: SessionLike,
        *,
        initial_prompt: str | None = None,
        watcher_factory: WatcherFactory | None = None,
        workspace_label: str | None = None,
        startup_notices: Iterable[str] = (),
    ) -> None:
        super().__init__()
        self.session = session
        self.initial_prompt = initial_prompt
        self.workspace_label = workspace_label or str(session.cwd)
        self.startup_notices = list(startup_notices)
        self._watcher_factory = watcher_factory or _default_watcher_factory
        self._watcher: WatcherLike | None = None
        self.bridge = EventBridge(self.post_message)
        self.runs = AgentRuns(session, self.bridge)
        self._busy = False
        self._exiting = False
        self._trust_asked = False
        self._previewed: tuple[object, ...] | bool | None = False
        self._tool_names: dict[str, str] = {}
        self._widgets: dict[type[Widget], Widget] = {}
        self._panels: dict[str, Widget] = {}
        self.pending = PendingList(session)
        self._can_undo = True

    def get_css_variables(self) -> dict[str, str]:
        # Recomputed on every theme change, so the readable colours follow the theme.
        variables = super().get_css_variables()
        return {**variables, **readable_variables(variables)}

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
        yield SearchInput(placeholder="search (Enter finds, Escape closes)", id="search")
        yield FittingFooter(first=FOOTER_FIRST)

    # Widgets are looked up once on the main screen: a modal on top must not hide them.
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

    def _widget(self, kind: type[_W]) -> _W:
        found = self._widgets.get(kind)
        if found is None:
            found = self.screen_stack[0].query_one(kind)
            self._widgets[kind] = found
        assert isinstance(found, kind)
        return found

    def _panel(self, panel_id: str) -> Widget:
        found = self._panels.get(panel_id)
        if found is None:
            found = self._panels[panel_id] = self.screen_stack[0].query_one(f"#{panel_id}", Widget)
        return found

    # -- terminal size ---------------------------------------------------------------
    def _size_classes(self, width: int, height: int) -> None:
        """One class per axis on the app; styles/layout.tcss reshapes the panels by them."""
        tall = "-tiny" if height < TINY_BELOW else "-short" if height < SHORT_BELOW else "-tall"
        self.update_classes(
            {
                "-narrow": width < NARROW_BELOW,
                "-wide": width >= NARROW_BELOW,
                "-tiny": tall == "-tiny",
                "-short": tall == "-short",
                "-tall": tall == "-tall",
            }
        )

    def on_resize(self, event: events.Resize) -> None:
        self._size_classes(event.size.width, event.size.height)

    def on_mount(self) -> None:
        self._size_classes(self.size.width, self.size.height)
        self._panel("stack-panel").border_title = "Pending"
        self.preview.border_title = "Preview"
        self._panel("activity-panel").border_title = "Activity"
        self.bridge.attach(self.session)
        self._attach_queue()
        self._refresh_stack()
        for notice in self.startup_notices:
            self.activity.write_lines([Content.styled(f"ℹ {notice}", "$redline-text-warning")])
        for error in self.session.plugin_errors:
            self._show_plugin_error(error)
        rules = getattr(self.session, "rules", None)
        if rules is not None:  # broken rules files, an untrusted workspace's ignored rules
            for note in rules.snapshot().notes:
                line = f"ℹ Review rules: {note}"
                self.activity.write_lines([Content.styled(line, "$redline-text-warning")])
        self._start_watcher()
        self._check_undo()
        if isinstance(self.runs.held_only(), bool):
            self.set_interval(WAITING_POLL_SECONDS, self._check_waiting)
        # Everything alive after start-up (Textual, the widgets, the stack) lives as long as
        # the app; moving it out of the collector's sight keeps full collections from
        # stalling key presses for tens of milliseconds.
        self.call_after_refresh(gc.freeze)
        if self.session.untrusted_plugin_dir is not None and not self._trust_asked:
            self._trust_asked = True
            self.push_screen(TrustScreen(self.session.untrusted_plugin_dir), self._trust_answered)
        else:
            self._start_initial_prompt()

    def on_unmount(self) -> None:
        self.bridge.detach()
        if self._watcher is not None:
            try:
                self._watcher.stop()
            except Exception:
                log.exception("stopping the workspace watcher failed")

    def _start_initial_prompt(self) -> None:
        if self.initial_prompt:
            self.start_run(self.initial_prompt)

    def _start_watcher(self) -> None:
        try:
            self._watcher = self._watcher_factory(self.session.cwd, self._files_changed)
            self._watcher.start()
        except Exception as exc:
            self._watcher = None
            self.activity.write_lines(
                [Content.styled(f"ℹ live staleness checks are off: {exc}", "$redline-text-warning")]
            )

    def _files_changed(self, paths: set[str]) -> None:
        # Runs on the watcher's thread; the session hashes the files (the hash is the truth).
        try:
            self.session.check_staleness(paths)
        except Exception:
            log.exception("staleness check failed for %s", sorted(paths))

    # -- session events ------------------------------------------------------------
    def on_events_available(self, _message: EventsAvailable) -> None:
        batch = self.bridge.drain()
        if not self._alive():
            return
        activity = self.activity
        with activity.batch_writes():
            for stamped in batch:
                if self.runs.dropped(stamped):
                    continue
                event = stamped.event
                after_exit = self.runs.after_exit(stamped)
                match event:
                    case MessageDelta(text=text):
                        activity.stream_text(text)
                    case MessageEnd():
                        activity.end_text()
                    case AcpAgentExit(how=how, expected=False):
                        activity.write_lines(format_event(event, self._tool_names))
                        self._agent_gone(how, stamped.run_id)
                    case AgentEnd() if after_exit:
                        pass  # the exit line already closed this run
                    case ErrorEvent(message=message) if after_exit and self.agent_ended:
                        activity.write_lines(exit_error_lines(message, self.runs.exit_how))
                    case _:
                        activity.write_lines(
                            format_event(event, self._tool_names), detail_lines(event)
                        )

    def on_stack_changed(self, _message: StackChanged) -> None:
        self.bridge.stack_seen()
        if self._alive():
            self._refresh_stack()

    # -- the workspace queue -------------------------------------------------------------
    @property
    def queue(self) -> WorkspaceQueue | None:
        """The workspace queue when the session is queue-backed (``session.queue``)."""
        return session_queue(self.session)

    def _attach_queue(self) -> None:
        queue = self.queue
        if queue is None:
            return
        try:
            self.bridge.attach_queue(queue)
        except Exception as exc:
            self.activity.write_lines(
                [
                    Content.styled(
                        f"ℹ other processes' actions will not show: {exc}", "$redline-text-warning"
                    )
                ]
            )

    def _refresh_stack(self) -> None:
        actions = self.pending.read()
        self.stack.update_actions(actions)
        self._widget(EndedBanner).set_left(self._ended_left())
        self.status_line.pending = len(actions)
        self.status_line.sources = source_counts(actions)
        self._panel("stack-panel").border_title = self._stack_title()
        self._show_selected()
        self._update_controls()
        self._maybe_resume()

    def _selected_action(self) -> PendingAction | None:
        return self.pending.get(self.stack.selected_id)

    def _show_selected(self, *, force: bool = False) -> None:
        action = self._selected_action()
        key = (
            (id(action), action.stale, action.stale_reason, ended_note(action.details))
            if action
            else None
        )
        if force or key != self._previewed:
            self._previewed = key
            self.preview.show_action(action)

    @on(PendingStack.Selected)
    def _stack_selected(self, _message: PendingStack.Selected) -> None:
        # Queued selections can arrive while the app shuts down, after the last screen went.
        if not self._alive():
            return
        self._show_selected()
        self._update_controls()

    def _alive(self) -> bool:
        """False once quitting started or the screens are gone (late messages do nothing)."""
        return not self._exiting and bool(self.screen_stack)

    def exit(
        self, result: int | None = None, return_code: int = 0, message: Any | None = None
    ) -> None:
        self._exiting = True
        super().exit(result, return_code, message)

    def _update_controls(self) -> None:
        top = self.pending.get(self.stack.top_id)
        selected = self._selected_action()
        preview = self.preview
        shown = preview.action is not None and selected is not None
        parts = len(preview.units) if shown else 0
        picked = len(preview.selection()) if shown else 0
        self.controls = Controls(
            has_top=top is not None,
            top_stale=top is not None and top.stale,
            busy=self._busy,
            selected_stale=selected is not None and selected.stale,
            selected_has_preview=selected is not None and bool(selected.preview),
            file_count=preview.file_count,
            has_selected=selected is not None,
            picked=picked,
            parts=parts,
            can_undo=self._can_undo,
        )
        self.resolve_bar.set_enabled(
            apply=selected is not None and not selected.stale and not self._busy,
            discard=selected is not None and not self._busy,
        )
        self._footer_target(picked, parts)
        self.resolve_bar.set_target(
            selected.id if selected is not None else None,
            picked=picked,
            parts=parts,
            whole_only=selected is not None and not preview.selectable,
        )

    def _footer_target(self, picked: int, parts: int) -> None:
        """The footer's y/n say whether they act on picked hunks or the whole action."""
        apply = f"Apply {picked}/{parts} hunks" if picked else "Apply"
        discard = f"Discard {picked}/{parts}" if picked else "Discard"
        changed = False
        for key, description in (("y", apply), ("n", discard)):
            bindings = self._bindings.key_to_bindings.get(key, [])
            for index, binding in enumerate(bindings):
                if binding.description != description:
                    bindings[index] = dataclasses.replace(binding, description=description)
                    changed = True
        if changed:
            self.refresh_bindings()

    def watch_agent_state(self, state: AgentState) -> None:
        self.status_line.state = state

    def _show_plugin_error(self, error: Any) -> None:
        where = str(getattr(error, "path", "") or getattr(error, "source", "") or "")
        message = str(getattr(error, "message", "") or error)
        self.activity.write_lines(plugin_error_lines(where, message))

    # -- the agent run ---------------------------------------------------------------
    def start_run(self, text: str | None) -> None:
        """Prompt the agent (``text``) or resume it (``None``) in the agent worker."""
        run_id = self.runs.begin()
        self.agent_state = AgentState.RUNNING
        self._run_agent(run_id, text)

    @work(exclusive=True, exit_on_error=False, group="agent")
    async def _run_agent(self, run_id: int, text: str | None) -> None:
        """Start the run on the session's loop and await its future (no thread here)."""
        try:
            future = self.runs.start(text)
            # Shielded: cancelling this worker (quit, a newer run) never cancels the run;
            # stopping it is the session's abort().
            status = await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            self.post_message(RunFinished(run_id, "error", error))
            return
        self.post_message(RunFinished(run_id, status))

    def on_run_finished(self, message: RunFinished) -> None:
        if not self._alive() or not self.runs.finish(message.run_id):
            return
        if self.agent_ended is not None:
            # The session marks the ended agent's actions after saying that it ended.
            self._refresh_stack()
        if message.error:
            self.activity.write_lines(error_lines(message.error))
            self.agent_state = AgentState.FAILED
            return
        self.agent_state = AgentState.after(message.status)
        if self.agent_state is AgentState.WAITING_FOR_REVIEW:
            if self.session.store.has_pending:
                self.bell()
            else:
                self._maybe_resume()

    def _maybe_resume(self) -> None:
        if (
            self.agent_state is AgentState.WAITING_FOR_REVIEW
            and not self._busy
            and not self.session.store.has_pending
        ):
            if self.runs.live:
                # An external agent's turn is still open: the answers let it go on, and
                # the session tells it the reasons once the turn ends.
                self.agent_state = AgentState.RUNNING
            elif self.agent_ended is None:
                self.start_run(None)

    # -- an external agent: waiting on review, and its process ending -------------------
    def _check_waiting(self) -> None:
        """Follow a live run over an external agent: ``waiting for review`` while every
        request it holds open is a pending action, ``running`` again once it goes on."""
        if not self._alive() or not self.runs.live or self.agent_ended is not None:
            return
        waiting = bool(self.runs.held_only()) and self.session.store.has_pending
        if waiting and self.agent_state is AgentState.RUNNING:
            self.agent_state = AgentState.WAITING_FOR_REVIEW
            self.bell()
        elif not waiting and self.agent_state is AgentState.WAITING_FOR_REVIEW:
            self.agent_state = AgentState.RUNNING

    def _agent_gone(self, how: str, run_id: int) -> None:
        """The external agent's process ended on its own: say so until the app closes."""
        self.runs.exited(how, run_id)
        self.agent_ended = how
        # An external agent's label already says so (``gemini via ACP``).
        agent = self.session.model_label
        self._widget(EndedBanner).show_ended(agent, how, self._ended_left())
        prompt = self.screen_stack[0].query_one("#prompt", PromptInput)
        prompt.placeholder = "the agent has ended: review what it left above"
        prompt.disabled = True
        # Its actions are marked with the ended session: the stack and preview show it.
        self._refresh_stack()

    def _ended_left(self) -> int:
        """How many of this session's pending actions the ended agent left."""
        if self.agent_ended is None:
            return 0
        return self.session.store.count

    def action_resume_session(self) -> None:
        if self.agent_ended is not None:
            self.notify(f"The agent {self.agent_ended}: it cannot continue.", severity="warning")
            return
        if self.agent_state is AgentState.RUNNING or self.runs.live:
            self.notify("The agent is already running.")
            return
        if self.session.store.has_pending:
            self.notify("Resolve this session's pending actions first; then it continues.")
            return
        self.start_run(None)

    def action_stop_agent(self) -> None:
        if not self._can_stop():
            return
        self.runs.drop()
        self.agent_state = AgentState.STOPPED
        self.activity.write_lines(
            [Content.styled("■ agent stopped by you", "bold $redline-text-warning")]
        )
        self.runs.abort()

    def _can_stop(self) -> bool:
        """A run is going on (also while it waits for review) and its agent is alive."""
        if self.agent_ended is not None:
            return False
        return self.agent_state is AgentState.RUNNING or (
            self.agent_state is AgentState.WAITING_FOR_REVIEW and self.runs.live != 0
        )

    @on(Input.Submitted, "#prompt")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.agent_ended is not None:
            self.notify(f"The agent {self.agent_ended}: it cannot take a prompt.")
            return
        if self.agent_state is AgentState.RUNNING or self.runs.live:
            self.notify("The agent is still running: stop it first (ctrl+x).", severity="warning")
            return
        event.input.value = ""
        self.activity.write_lines([Content.assemble(("you: ", "bold $redline-text-accent"), text)])
        self.stack.focus()
        self.start_run(text)

    # -- resolving -------------------------------------------------------------------
    def action_apply_top(self) -> None:
        self._resolve_top("apply")

    def action_discard_top(self) -> None:
        self._resolve_top("discard")

    @on(ResolveBar.Requested)
    def _bar_requested(self, message: ResolveBar.Requested) -> None:
        self._resolve_top(message.verb)

    def _resolve_top(self, verb: str) -> None:
        """Apply or discard the action shown in the preview (its selected parts, if any)."""
        if self._busy:
            self.notify("Still resolving the previous action.", severity="warning")
            return
        action = self._selected_action()
        if action is None:
            self.notify("Nothing is pending.", severity="warning")
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
        only = self.preview.selection() if self.preview.action is action else []
        self._busy = True
        self._update_controls()
        self._resolve_worker(verb, action.id, self.resolve_bar.reason or NO_REASON, only)

    @work(thread=True, exit_on_error=False, group="resolve")
    def _resolve_worker(
        self, verb: str, action_id: str, reason: str, only: list[str] | None = None
    ) -> None:
        def foreign_done(text: str) -> None:
            self.post_message(ForeignResolved(verb, action_id, text))

        outcome = resolve_action(self.session, verb, action_id, reason, only, foreign_done)
        self.post_message(ResolutionFinished(verb, action_id, reason, outcome))

    def on_foreign_resolved(self, message: ForeignResolved) -> None:
        mark = "✓" if message.verb == "apply" else "✗"
        line = Content.assemble((f"{mark} {message.action_id} ", "bold"), message.text)
        self.activity.write_lines([line])
        self._refresh_stack()

    def on_resolution_finished(self, message: ResolutionFinished) -> None:
        self._busy = False
        if not self._alive():
            return
        outcome = message.outcome
        if message.verb == "apply":
            self._check_undo()
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
        self._maybe_resume()

    def action_apply_all(self) -> None:
        self._resolve_all("apply")

    def action_discard_all(self) -> None:
        self._resolve_all("discard")

    def _resolve_all(self, verb: str) -> None:
        if self._busy or not self.session.store.has_pending:
            return
        self._busy = True
        self._update_controls()
        self._resolve_all_worker(verb, self.resolve_bar.reason or NO_REASON)

    @work(thread=True, exit_on_error=False, group="resolve")
    def _resolve_all_worker(self, verb: str, reason: str) -> None:
        resolve_all(self.session, verb, reason, self.post_message)

    def on_batch_finished(self, message: BatchFinished) -> None:
        self._busy = False
        if not self._alive():
            return
        verb = "Applied" if message.verb == "apply" else "Discarded"
        if message.verb == "apply":
            self._check_undo()
        if message.stopped_at:
            self.notify(
                f"{verb} {message.done}; stopped at {message.stopped_at}.", severity="warning"
            )
        else:
            self.resolve_bar.clear_reason()
            self.notify(f"{verb} {message.done} action{'s' if message.done != 1 else ''}.")
        self._update_controls()
        self._maybe_resume()

    # -- undo, re-preview, trust -----------------------------------------------------
    def action_undo(self) -> None:
        self._busy = True
        self._update_controls()
        self._command_worker("undo", self.session.undo)

    def action_repreview(self) -> None:
        action = self._selected_action()
        if action is None or not action.stale:
            return
        action_id = action.id
        self._command_worker("repreview", lambda: self.session.repreview(action_id))

    def action_always_apply(self) -> None:
        """Offer a session rule: always apply this tool's changes under this folder."""
        from redline.rules import ActionFacts, session_rule_for

        action = self._selected_action()
        rules = getattr(self.session, "rules", None)
        if action is None or rules is None:
            return
        rule = session_rule_for(ActionFacts.of(action))
        if rule is None:
            self.notify("Only changes to files can get a session rule.", title="Always apply")
            return
        folder = rule.paths[0] if rule.paths else "**"
        tool = rule.tools[0] if rule.tools else action.source_tool_name

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            with contextlib.suppress(ValueError):  # the same rule is already in force
                rules.add_session_rule(rule)
            apply_rules = getattr(self.session, "apply_rules", None)
            self.activity.write_lines(
                [Content.styled(f"ℹ session rule: {rule.name}", "$text-muted")]
            )
            if apply_rules is not None:
                self._command_worker("rules", lambda: "\n".join(apply_rules()))

        self.push_screen(
            ConfirmScreen(
                f"Always apply {tool} changes under {folder} for this session?",
                yes="Always apply",
                no="Cancel",
            ),
            answered,
        )

    def action_trust(self) -> None:
        self._command_worker("trust", self.session.trust_workspace)

    @work(thread=True, exit_on_error=False, group="commands")
    def _command_worker(self, command: str, call: Callable[[], Any]) -> None:
        self.post_message(run_command(command, call))

    def on_command_finished(self, message: CommandFinished) -> None:
        if message.command == "undo":
            self._busy = False
        if not self._alive():
            return
        result = message.result
        if result.is_error:
            # Each fact once in the log: the toast is for whoever pressed the key.
            self.notify(result.text, title=f"{message.command} failed", severity="error")
            if not message.logged:
                self.activity.write_lines(
                    [Content.styled(f"✗ {result.text}", "$redline-text-error")]
                )
        elif message.command == "undo":
            self.notify(result.text or "Undone.", title="Undo")
        if message.command == "undo":
            self._check_undo()
        elif message.command == "trust":
            # Load errors of the newly trusted plugins arrive as plugin_error events.
            self.notify("Workspace trusted; its plugins are loaded.", title="Trust")
        self._update_controls()

    def _trust_answered(self, trusted: bool | None) -> None:
        if trusted:
            self.action_trust()
        else:
            self.activity.write_lines(
                [
                    Content.styled(
                        "ℹ project plugins not loaded (trust them with ctrl+p → Trust)",
                        "$text-muted",
                    )
                ]
            )
        self._start_initial_prompt()

    # -- preview keys -----------------------------------------------------------------
    def action_step_file(self, delta: int) -> None:
        self.preview.step_file(delta)

    def action_toggle_split(self) -> None:
        self.preview.toggle_split()

    def action_context(self, more: bool) -> None:
        self.preview.change_context(more)

    # -- hunks and editing ----------------------------------------------------------------
    def action_step_hunk(self, delta: int) -> None:
        self.preview.step_hunk(delta)

    def action_toggle_part(self) -> None:
        focused = self.focused
        in_file_list = focused is not None and focused.id == "file-list"
        if self.preview.toggle_part(whole_file=in_file_list):
            self._update_controls()

    def action_edit(self) -> None:
        target = self.preview.edit_target()
        if target is None:
            return
        action_id, path, text = target

        def saved(new_text: str | None) -> None:
            if new_text is not None:
                self._save_edit(action_id, path, new_text)

        self.push_screen(EditorScreen(action_id, path, text), saved)

    def action_edit_external(self) -> None:
        target = self.preview.edit_target()
        if target is None:
            return
        action_id, path, text = target
        new_text = edit_outside(self, path, text)
        if new_text is not None:
            self._save_edit(action_id, path, new_text)

    def _save_edit(self, action_id: str, path: str, text: str) -> None:
        session = self.session

        def edit() -> ToolResult:
            outcome = session.edit(action_id, path, text)
            if outcome.is_error:
                return ToolResult.error(outcome.text)
            return ToolResult.text_result(outcome.text)

        self._command_worker("edit", edit)

    def action_focus_reason(self) -> None:
        self.resolve_bar.focus_reason()

    @on(ReasonInput.Done)
    def _reason_done(self) -> None:
        self.stack.focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    # -- undo availability -------------------------------------------------------------
    def _check_undo(self) -> None:
        self._undo_worker()

    @work(thread=True, exit_on_error=False, group="undo-check", exclusive=True)
    def _undo_worker(self) -> None:
        self.post_message(UndoChecked(undo_available(self.session)))

    def on_undo_checked(self, message: UndoChecked) -> None:
        self._can_undo = message.available
        if self._alive():
            self._update_controls()

    # -- focus keys, stack jumps, source filter ------------------------------------------
    def action_focus_prompt(self) -> None:
        self.screen_stack[0].query_one("#prompt", PromptInput).focus()

    @on(PromptInput.Done)
    def _prompt_done(self) -> None:
        self.stack.focus()

    def action_focus_diff(self) -> None:
        self.preview.diff_view.focus()

    def action_stack_edge(self, bottom: bool) -> None:
        self.stack.focus()
        self.stack.cursor = len(self.stack.rows) - 1 if bottom else 0

    def action_filter_source(self) -> None:
        shown = self.stack.cycle_filter()
        self._panel("stack-panel").border_title = self._stack_title()
        self.notify(f"Showing {shown or 'every source'}.", title="Filter")

    def _stack_title(self) -> str:
        total = self.session.store.count
        source = self.stack.source_filter
        if source is None:
            return f"Pending ({total})"
        return f"Pending ({len(self.stack.rows)} of {total}, {source})"

    # -- search -----------------------------------------------------------------------
    def _search_input(self) -> SearchInput:
        return self.screen_stack[0].query_one("#search", SearchInput)

    def action_search(self) -> None:
        focused = self.focused
        target: Searchable = (
            focused if isinstance(focused, ActivityLog | DiffView) else self.preview.diff_view
        )
        where = "activity" if isinstance(target, ActivityLog) else "diff"
        self._search_input().open(target, where)

    def action_search_step(self, step: int) -> None:
        self._search_input().step(step)

    @on(SearchInput.Closed)
    def _search_closed(self) -> None:
        self.action_close_search()

    def action_close_search(self) -> None:
        target = self._search_input().close()
        if isinstance(target, Widget):
            target.focus()
        else:
            self.stack.focus()

    # -- what can act now ------------------------------------------------------------
    GATED_ACTIONS: ClassVar[tuple[str, ...]] = (
        "apply_top",
        "discard_top",
        "step_hunk",
        "toggle_part",
        "edit",
        "edit_external",
        "repreview",
        "step_file",
        "toggle_split",
        "context",
        "stop_agent",
        "undo",
        "search_step",
        "close_search",
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self._alive():
            return False
        if not self._widgets or self.screen.is_modal:
            return True
        if action == "stop_agent":
            return True if self._can_stop() else None
        search = self._search_input()
        return key_state(
            action,
            self.controls,
            outside_editor=not self.is_web,
            has_rules=getattr(self.session, "rules", None) is not None,
            prompting=self.agent_ended is None,
            searching=search.searching,
            search_open=search.target is not None,
        )

    # -- command palette -------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield SystemCommand(
            "Apply all",
            "Apply every pending action, top first; stops at the first stale or failing one",
            self.action_apply_all,
        )
        yield SystemCommand(
            "Discard all", "Discard every pending action, top first", self.action_discard_all
        )
        yield SystemCommand(
            "Re-preview",
            "Recompute the selected stale action against the current files",
            self.action_repreview,
        )
        yield SystemCommand(
            "Trust this workspace", "Load this workspace's project plugins", self.action_trust
        )
        yield SystemCommand(
            "Toggle split view", "Side-by-side or unified diff", self.action_toggle_split
        )
        yield SystemCommand(
            "More context",
            "Show more unchanged lines around changes",
            lambda: self.action_context(True),
        )
        yield SystemCommand(
            "Less context",
            "Show fewer unchanged lines around changes",
            lambda: self.action_context(False),
        )
        yield SystemCommand(
            "Undo last apply", "Restore the files of the last applied action", self.action_undo
        )
        yield SystemCommand("Stop agent", "Abort the running agent", self.action_stop_agent)
        yield SystemCommand(
            "Resume the agent session",
            "Continue this session's agent once its actions are resolved",
            self.action_resume_session,
        )
        yield from super().get_system_commands(screen)

    # -- quitting ---------------------------------------------------------------------
    async def action_quit(self) -> None:
        question = self.screen
        if isinstance(question, QuitScreen):
            question.quit_anyway()
            return
        actions = self.session.store.snapshot()
        if actions:
            self.push_screen(QuitScreen(actions), self._quit_answered)
            return
        await self.quit_now()

    async def _quit_answered(self, answer: bool | None) -> None:
        if answer:
            await self.quit_now()

    async def quit_now(self) -> None:
        """Abort a running agent, give it at most two seconds, then exit."""
        future = self.runs.future
        if future is not None and not future.done():
            self.runs.drop()
            self.runs.abort()
            # A run that ignores abort must not keep the dashboard open: wait, never raise.
            await asyncio.wait([asyncio.wrap_future(future)], timeout=QUIT_GRACE_SECONDS)
        self.workers.cancel_group(self, "agent")
        self.exit(0)
