"""RedlineApp: watch the agent work and review every queued change before it lands.

The app takes an already-created session. The agent runs in a thread worker; session
and store callbacks become messages in :mod:`redline.tui.bridge`; every blocking call
into the session (resolve, undo, re-preview, trust, abort) runs in a thread worker and
posts its outcome back, so the UI never waits on the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar, TypeVar

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input
from textual.worker import get_current_worker

from redline.tools.pending_action import PendingAction
from redline.tools.result import ToolResult
from redline.tui.activity_format import format_event, plugin_error_lines
from redline.tui.bridge import EventBridge
from redline.tui.messages import (
    BatchFinished,
    CommandFinished,
    EventsAvailable,
    ResolutionFinished,
    RunFinished,
    StackChanged,
)
from redline.tui.palette import readable_variables
from redline.tui.protocol import SessionLike, WatcherFactory, WatcherLike
from redline.tui.screens.confirm import ConfirmScreen
from redline.tui.screens.help import HelpScreen
from redline.tui.screens.trust import TrustScreen
from redline.tui.widgets.activity_log import ActivityLog
from redline.tui.widgets.pending_stack import PendingStack
from redline.tui.widgets.preview_panel import PreviewPanel
from redline.tui.widgets.resolve_bar import ReasonInput, ResolveBar
from redline.tui.widgets.status_line import StatusLine

log = logging.getLogger(__name__)

STYLE_FILES = ("app.tcss", "stack.tcss", "preview.tcss", "activity.tcss", "modals.tcss")
NO_REASON = "no reason given"
QUIT_GRACE_SECONDS = 2.0
# Events that belong to one run; after a stop they are dropped instead of shown.
RUN_SCOPED = frozenset(
    {
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_delta",
        "message_end",
        "tool_start",
        "tool_update",
        "tool_end",
        "usage",
        "error",
    }
)
STATUS_STATE = {
    "done": "idle",
    "max_turns": "idle",
    "awaiting_review": "waiting for review",
    "aborted": "stopped",
    "error": "failed",
}
DEAD_RUN = -1
_W = TypeVar("_W", bound=Widget)


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

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "apply_top", "Apply"),
        Binding("n", "discard_top", "Discard"),
        Binding("r", "focus_reason", "Reason"),
        Binding("p", "repreview", "Re-preview"),
        Binding("a", "always_apply", "Always apply", show=False),
        Binding("left_square_bracket", "step_file(-1)", "Prev file", key_display="["),
        Binding("right_square_bracket", "step_file(1)", "Next", key_display="]"),
        Binding("s", "toggle_split", "Split"),
        Binding("plus,equals_sign", "context(True)", "Context", key_display="+"),
        Binding("minus", "context(False)", "Less context", key_display="-", show=False),
        Binding("u", "undo", "Undo"),
        Binding("ctrl+x", "stop_agent", "Stop", priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
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
        self.agent_state = "idle"
        self._run_seq = 0
        self._live_run = 0
        self._agent_thread: threading.Thread | None = None
        self._busy = False
        self._trust_asked = False
        self._previewed: tuple[int, bool, str] | bool | None = False
        self._tool_names: dict[str, str] = {}
        self._widgets: dict[type[Widget], Widget] = {}
        self._panels: dict[str, Widget] = {}
        self._binding_state: tuple[bool | None, ...] = ()

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
        with Horizontal(id="main"):
            with Vertical(id="stack-panel"):
                yield PendingStack(id="stack")
                yield ResolveBar(id="resolve-bar")
            yield PreviewPanel(id="preview")
        with Vertical(id="activity-panel"):
            yield ActivityLog(id="activity")
            yield Input(placeholder="talk to the agent (Enter sends)", id="prompt")
        yield Footer(compact=True)

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

    def on_mount(self) -> None:
        self._panel("stack-panel").border_title = "Pending"
        self.preview.border_title = "Preview"
        self._panel("activity-panel").border_title = "Activity"
        self.bridge.attach(self.session)
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
        activity = self.activity
        with activity.batch_writes():
            for stamped in batch:
                event = stamped.event
                if (
                    event.type in RUN_SCOPED
                    and stamped.run_id != 0
                    and stamped.run_id != self._live_run
                ):
                    continue
                data = event.data
                if event.type == "message_delta":
                    activity.stream_text(str(data.get("text", data.get("delta", ""))))
                elif event.type == "message_end":
                    activity.end_text()
                else:
                    if event.type == "notice" and data.get("failed"):
                        data = self._with_action_facts(data)
                    activity.write_lines(format_event(event.type, data, self._tool_names))

    def _with_action_facts(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """A failed resolution names only the action id; the action is still on the stack."""
        action = self.session.store.get(str(data.get("action_id", "")))
        if action is None:
            return data
        return {"label": action.label, "source_tool_name": action.source_tool_name, **data}

    def on_stack_changed(self, _message: StackChanged) -> None:
        self.bridge.stack_seen()
        self._refresh_stack()

    def _refresh_stack(self) -> None:
        actions = self.session.store.snapshot()
        self.stack.update_actions(actions)
        self.status_line.pending = len(actions)
        self._panel("stack-panel").border_title = f"Pending ({len(actions)})"
        self._show_selected()
        self._update_controls()
        self._maybe_resume()

    def _selected_action(self) -> PendingAction | None:
        selected = self.stack.selected_id
        return self.session.store.get(selected) if selected else None

    def _show_selected(self, *, force: bool = False) -> None:
        action = self._selected_action()
        key = (id(action), action.stale, action.stale_reason) if action else None
        if force or key != self._previewed:
            self._previewed = key
            self.preview.show_action(action)

    @on(PendingStack.Selected)
    def _stack_selected(self, _message: PendingStack.Selected) -> None:
        self._show_selected()
        self._refresh_bindings_if_changed()

    def _update_controls(self) -> None:
        top = self.session.store.peek()
        self.resolve_bar.set_enabled(
            apply=top is not None and not top.stale and not self._busy,
            discard=top is not None and not self._busy,
        )
        self._refresh_bindings_if_changed()

    def _set_state(self, state: str) -> None:
        self.agent_state = state
        self.status_line.state = state
        self._refresh_bindings_if_changed()

    def _show_plugin_error(self, error: Any) -> None:
        where = str(getattr(error, "path", "") or getattr(error, "source", "") or "")
        message = str(getattr(error, "message", "") or error)
        self.activity.write_lines(plugin_error_lines(where, message))

    # -- the agent run ---------------------------------------------------------------
    def start_run(self, text: str | None) -> None:
        """Prompt the agent (``text``) or resume it (``None``) in the agent worker."""
        self._run_seq += 1
        run_id = self._run_seq
        self._live_run = run_id
        self.bridge.run_id = run_id
        self._set_state("running")
        self._run_agent(run_id, text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="agent")
    def _run_agent(self, run_id: int, text: str | None) -> None:
        worker = get_current_worker()
        outcome: dict[str, str] = {}

        def target() -> None:
            try:
                call = self.session.resume if text is None else lambda: self.session.prompt(text)
                outcome["status"] = str(call())
            except Exception as exc:
                outcome["error"] = (
                    f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                )

        # A daemon thread: if a run ever ignores abort, quitting still cannot hang on it.
        thread = threading.Thread(target=target, name=f"redline-agent-{run_id}", daemon=True)
        self._agent_thread = thread
        thread.start()
        while thread.is_alive():
            thread.join(0.05)
            if worker.is_cancelled:
                return
        self.post_message(
            RunFinished(run_id, outcome.get("status", "error"), outcome.get("error", ""))
        )

    def on_run_finished(self, message: RunFinished) -> None:
        if message.run_id != self._live_run:
            return
        self._live_run = 0
        self.bridge.run_id = 0
        if message.error:
            self.activity.write_lines(
                [
                    Content.assemble(
                        (" ERROR ", "bold $redline-text-error on $error-muted"), " ", message.error
                    )
                ]
            )
            self._set_state("failed")
            return
        self._set_state(STATUS_STATE.get(message.status, "idle"))
        if message.status == "awaiting_review":
            if self.session.store.has_pending:
                self.bell()
            else:
                self._maybe_resume()

    def _maybe_resume(self) -> None:
        if (
            self.agent_state == "waiting for review"
            and not self._busy
            and not self.session.store.has_pending
        ):
            self.start_run(None)

    def action_stop_agent(self) -> None:
        if self.agent_state != "running":
            return
        self._live_run = 0
        self.bridge.run_id = DEAD_RUN
        self._set_state("stopped")
        self.activity.write_lines(
            [Content.styled("■ agent stopped by you", "bold $redline-text-warning")]
        )
        threading.Thread(target=self._abort_quietly, name="redline-abort", daemon=True).start()

    def _abort_quietly(self) -> None:
        try:
            self.session.abort()
        except Exception:
            log.exception("aborting the agent failed")

    @on(Input.Submitted, "#prompt")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.agent_state == "running":
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
        if self._busy:
            self.notify("Still resolving the previous action.", severity="warning")
            return
        top_id = self.stack.top_id
        if top_id is None:
            self.notify("Nothing is pending.", severity="warning")
            return
        self._busy = True
        self._update_controls()
        self._resolve_worker(verb, top_id, self.resolve_bar.reason or NO_REASON)

    @work(thread=True, exit_on_error=False, group="resolve")
    def _resolve_worker(self, verb: str, action_id: str, reason: str) -> None:
        try:
            result = self.session.resolve(verb, reason, action_id=action_id, by="human")
        except Exception as exc:
            result = ToolResult.error(f"The session could not {verb} {action_id}: {exc}")
        self.post_message(ResolutionFinished(verb, action_id, reason, result))

    def on_resolution_finished(self, message: ResolutionFinished) -> None:
        self._busy = False
        result = message.result
        if not result.is_error:
            self.resolve_bar.clear_reason()
        elif isinstance(result.details, dict) and "expected_action_id" in result.details:
            self.notify(result.text, title="Top changed", severity="warning")
            self.activity.write_lines([Content.styled(f"ℹ {result.text}", "$redline-text-warning")])
        else:
            self._show_failure(message.verb, message.action_id, result)
        self._update_controls()
        self._maybe_resume()

    def _show_failure(self, verb: str, action_id: str, result: ToolResult) -> None:
        # The session logs the failure itself (a ``notice`` event with ``failed``); the toast
        # makes sure the person who pressed the key sees it even with the log scrolled away.
        self.notify(result.text, title=f"{verb.capitalize()} failed", severity="error")

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
        done = 0
        while True:
            top = self.session.store.peek()
            if top is None:
                break
            if verb == "apply" and top.stale:
                stop = f"{top.id} ({top.label}) is stale: {top.stale_reason}"
                self.post_message(BatchFinished(verb, done, stop))
                return
            try:
                result = self.session.resolve(verb, reason, action_id=top.id, by="human")
            except Exception as exc:
                result = ToolResult.error(str(exc))
            if result.is_error:
                self.post_message(ResolutionFinished(verb, top.id, reason, result))
                self.post_message(BatchFinished(verb, done, f"{top.id} ({top.label}) failed"))
                return
            done += 1
        self.post_message(BatchFinished(verb, done))

    def on_batch_finished(self, message: BatchFinished) -> None:
        self._busy = False
        verb = "Applied" if message.verb == "apply" else "Discarded"
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
        try:
            value = call()
            result = (
                value if isinstance(value, ToolResult) else ToolResult.text_result(str(value or ""))
            )
        except Exception as exc:
            result = ToolResult.error(f"{command} failed: {exc}")
        self.post_message(CommandFinished(command, result))

    def on_command_finished(self, message: CommandFinished) -> None:
        if message.command == "undo":
            self._busy = False
        result = message.result
        if result.is_error:
            self.notify(result.text, title=f"{message.command} failed", severity="error")
            self.activity.write_lines([Content.styled(f"✗ {result.text}", "$redline-text-error")])
        elif message.command == "undo":
            self.notify(result.text or "Undone.", title="Undo")
        elif message.command == "trust":
            self.notify("Workspace trusted; its plugins are loaded.", title="Trust")
            for error in self.session.plugin_errors:
                self._show_plugin_error(error)
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

    def action_focus_reason(self) -> None:
        self.resolve_bar.query_one(ReasonInput).focus()

    @on(ReasonInput.Done)
    def _reason_done(self) -> None:
        self.stack.focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    # -- what can act now ------------------------------------------------------------
    GATED_ACTIONS: ClassVar[tuple[str, ...]] = (
        "apply_top",
        "discard_top",
        "repreview",
        "step_file",
        "toggle_split",
        "context",
        "stop_agent",
        "undo",
    )

    def _refresh_bindings_if_changed(self) -> None:
        # The Footer recomposes on every refresh, so only refresh when a key's state flips.
        state = tuple(self.check_action(name, ()) for name in self.GATED_ACTIONS)
        if state != self._binding_state:
            self._binding_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self._widgets or self.screen.is_modal:
            return True
        top = self.session.store.peek()
        if action == "apply_top":
            return None if top is None or top.stale or self._busy else True
        if action == "discard_top":
            return None if top is None or self._busy else True
        if action == "repreview":
            selected = self._selected_action()
            return True if selected is not None and selected.stale else None
        if action == "always_apply":
            selected = self._selected_action()
            has_rules = getattr(self.session, "rules", None) is not None
            return True if has_rules and selected is not None and selected.preview else None
        if action == "step_file":
            return True if self.preview.file_count > 1 else None
        if action in ("toggle_split", "context"):
            return True if self.preview.file_count > 0 else None
        if action == "stop_agent":
            return True if self.agent_state == "running" else None
        if action == "undo":
            return None if self._busy else True
        return True

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
        yield from super().get_system_commands(screen)

    # -- quitting ---------------------------------------------------------------------
    async def action_quit(self) -> None:
        count = self.session.store.count
        if count:
            noun = "action is" if count == 1 else "actions are"
            self.push_screen(
                ConfirmScreen(
                    f"{count} {noun} still pending and will not be applied. Quit anyway?",
                    yes="Quit",
                    no="Stay",
                ),
                self._quit_answered,
            )
            return
        await self.quit_now()

    async def _quit_answered(self, answer: bool | None) -> None:
        if answer:
            await self.quit_now()

    async def quit_now(self) -> None:
        """Abort a running agent, give it at most two seconds, then exit."""
        thread = self._agent_thread
        if thread is not None and thread.is_alive():
            self._live_run = 0
            self.bridge.run_id = DEAD_RUN
            threading.Thread(target=self._abort_quietly, name="redline-abort", daemon=True).start()
            deadline = time.monotonic() + QUIT_GRACE_SECONDS
            while thread.is_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        self.workers.cancel_group(self, "agent")
        self.exit(0)
