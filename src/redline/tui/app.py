"""RedlineApp: watch the agent work and review every queued change before it lands.

The app takes an already-created session and wires it to the review inbox
(:class:`~redline.tui.screens.inbox.InboxScreen`, the first screen), which owns the review
keys and every call they make into the session. The app keeps what spans the session:
session and store callbacks become messages in :mod:`redline.tui.bridge` and land here;
the agent runs on the session's own loop while an async worker awaits the run's future,
so the UI never waits on the agent; quitting, stopping and resuming the agent, the
palette's commands and the theme. Whether stop is live follows ``agent_state``, a
reactive declared with ``bindings=True``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import events, on, work
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import Input

from redline.drivers.acp.events import AcpAgentExit
from redline.review.events import (
    AgentEnd,
    AgentState,
    ErrorEvent,
    MessageDelta,
    MessageEnd,
    PendingReplaced,
)
from redline.review.store import PendingAction
from redline.tui.activity_format import (
    detail_lines,
    edited_lines,
    error_lines,
    format_event,
    plugin_error_lines,
)
from redline.tui.agent_ended import exit_error_lines
from redline.tui.agent_run import AgentRuns
from redline.tui.bridge import EventBridge
from redline.tui.command_palette import dashboard_commands
from redline.tui.frame import css_paths, size_classes
from redline.tui.hook_activity import (
    HookActivityArrived,
    HookActivityFeed,
    hook_lines,
    skipped_line,
)
from redline.tui.messages import (
    BatchFinished,
    EventsAvailable,
    MarkedFinished,
    NotifyFailed,
    ResolutionFinished,
    RunFinished,
    StackChanged,
)
from redline.tui.notices import ArrivalNotices
from redline.tui.palette import readable_variables
from redline.tui.pending import PendingList, session_queue, workspace_source
from redline.tui.protocol import SessionLike, WatcherFactory, WatcherLike
from redline.tui.screens.inbox import InboxScreen
from redline.tui.screens.quit import QuitScreen
from redline.tui.screens.trust import TrustScreen
from redline.tui.shown import ShownApp
from redline.tui.widgets.activity_log import ActivityLog
from redline.tui.widgets.pending_stack import PendingStack
from redline.tui.widgets.preview_panel import PreviewPanel
from redline.tui.widgets.resolve_bar import ResolveBar
from redline.tui.widgets.status_line import StatusLine

log = logging.getLogger(__name__)

QUIT_GRACE_SECONDS = 2.0
# How often a live run over an external agent is asked whether it only waits on review.
WAITING_POLL_SECONDS = 0.2


def _default_watcher_factory(root: Path, on_change: Callable[[set[str]], None]) -> WatcherLike:
    from redline.workspace.watch import WorkspaceWatcher

    watcher: WatcherLike = WorkspaceWatcher(root, on_change)
    return watcher


class RedlineApp(ShownApp[int]):
    """The review dashboard for one session."""

    TITLE = "redline"
    CSS_PATH = css_paths()
    AUTO_FOCUS = "#stack"
    ENABLE_COMMAND_PALETTE = True
    # Setting either refreshes the footer's keys (only when the value really changes).
    agent_state: reactive[AgentState] = reactive(AgentState.IDLE, bindings=True, init=False)
    # How the external agent's process ended on its own (None: alive, or not external).
    agent_ended: reactive[str | None] = reactive(None, bindings=True, init=False)

    # Live on every screen (the editor, the dialogs); the inbox screen has the review keys.
    BINDINGS: ClassVar[list[BindingType]] = [
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
        # The listing the arrival notices last looked at.
        self._noticed: tuple[PendingAction, ...] | None = None
        self.bridge = EventBridge(self.post_message)
        self.runs = AgentRuns(session, self.bridge)
        self._inbox: InboxScreen | None = None
        self._exiting = False
        self._trust_asked = False
        self._tool_names: dict[str, str] = {}
        # [notify]: the bell, the desktop notice and the user's command for unseen arrivals.
        self._notices: ArrivalNotices | None = None
        # Follows the agents' hook calls (`redline hook`) over a queue-backed session.
        self._hook_feed: HookActivityFeed | None = None

    def get_css_variables(self) -> dict[str, str]:
        # Recomputed on every theme change, so the readable colours follow the theme.
        variables = super().get_css_variables()
        return {**variables, **readable_variables(variables)}

    # -- the inbox screen ----------------------------------------------------------------
    def get_default_screen(self) -> Screen[Any]:
        if self._inbox is None:
            # The one screen over the session's workspace as a review source: the session's
            # own actions and every other process's, decided through the session.
            self._inbox = InboxScreen(
                self.session,
                workspace_label=self.workspace_label,
                source=workspace_source(self.session),
            )
        return self._inbox

    @property
    def inbox(self) -> InboxScreen:
        """The dashboard's screen (the first on the stack; a dialog on top does not hide it)."""
        inbox = self._inbox
        assert inbox is not None, "the inbox screen is made when the app starts"
        return inbox

    @property
    def stack(self) -> PendingStack:
        return self.inbox.stack

    @property
    def preview(self) -> PreviewPanel:
        return self.inbox.preview

    @property
    def activity(self) -> ActivityLog:
        return self.inbox.activity

    @property
    def resolve_bar(self) -> ResolveBar:
        return self.inbox.resolve_bar

    @property
    def status_line(self) -> StatusLine:
        return self.inbox.status_line

    # -- terminal size ---------------------------------------------------------------
    def _size_classes(self, width: int, height: int) -> None:
        """One class per axis on the app; styles/layout.tcss reshapes the panels by them."""
        size_classes(self, width, height)

    def on_resize(self, event: events.Resize) -> None:
        self._size_classes(event.size.width, event.size.height)

    async def on_mount(self) -> None:
        self._size_classes(self.size.width, self.size.height)
        # The inbox composes itself on its own task: start once its widgets are there.
        await AwaitMount(self.inbox, [self.inbox])
        self.inbox.start()
        self._notices, notes = ArrivalNotices.load(
            self.session.cwd, lambda text: self.post_message(NotifyFailed(text))
        )
        for note in notes:
            self.activity.write_lines([Content.styled(f"ℹ {note}", "$redline-text-warning")])
        self.bridge.attach(self.session)
        self._attach_queue()
        # The workspace's watcher first: from the first listing on, every file that changes
        # is reported, so a re-read checks only the actions on those files again.
        watch_error = self._start_watcher()
        # A long queue: the top action first, the rest (and the arrivals' baseline) after.
        if not self.inbox.show_first(self._first_read):
            self._refresh_stack()
        for notice in self.startup_notices:
            self.activity.write_lines([Content.styled(f"ℹ {notice}", "$redline-text-warning")])
        for error in self.session.plugin_errors:
            self._show_plugin_error(error)
        rules = self.session.rules
        if rules is not None:  # broken rules files, an untrusted workspace's ignored rules
            for note in rules.snapshot().notes:
                line = f"ℹ Review rules: {note}"
                self.activity.write_lines([Content.styled(line, "$redline-text-warning")])
        if watch_error:
            self.activity.write_lines(
                [
                    Content.styled(
                        f"ℹ live staleness checks are off: {watch_error}", "$redline-text-warning"
                    )
                ]
            )
        self.inbox.check_undo()
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
        if self._hook_feed is not None:
            self._hook_feed.stop()
        if self._notices is not None:
            self._notices.close()
        if self._watcher is not None:
            try:
                self._watcher.stop()
            except Exception:
                log.exception("stopping the workspace watcher failed")

    def _start_initial_prompt(self) -> None:
        if self.initial_prompt:
            self.start_run(self.initial_prompt)

    def _start_watcher(self) -> str:
        """Start the workspace's watcher; why it cannot run ("" when it runs)."""
        try:
            self._watcher = self._watcher_factory(self.session.cwd, self._files_changed)
            self._watcher.start()
        except Exception as exc:
            self._watcher = None
            self._files_watched(False)
            return str(exc)
        self._files_watched(True)
        return ""

    def _files_watched(self, watched: bool) -> None:
        """Tell the stack whether the workspace's watcher reports changed files (then a
        re-read checks only the actions on those files again, not every file)."""
        pending = self.inbox.pending
        if isinstance(pending, PendingList):
            pending.watch_files(watched)

    def _files_changed(self, paths: set[str]) -> None:
        # Runs on the watcher's thread; the session hashes the files (the hash is the truth).
        pending = self.inbox.pending
        if isinstance(pending, PendingList):
            pending.files_changed(paths)
        try:
            self.session.check_staleness(paths)
        except Exception:
            log.exception("staleness check failed for %s", sorted(paths))
        if self.session.queue is not None:
            # Other processes' actions: the stack re-reads them and hashes their files, so
            # one goes STALE as soon as `redline pending list` would say so.
            self.bridge.on_store_event(None)

    def _show_plugin_error(self, error: Any) -> None:
        where = str(getattr(error, "path", "") or getattr(error, "source", "") or "")
        message = str(getattr(error, "message", "") or error)
        self.activity.write_lines(plugin_error_lines(where, message))

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

    def action_trust(self) -> None:
        self.inbox.run_command("trust", self.session.trust_workspace)

    def action_undo(self) -> None:
        """Undo the workspace's last apply (the inbox's ``u``)."""
        self.inbox.action_undo()

    # -- session events and the stack ----------------------------------------------------
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
                    case PendingReplaced(old_action_id=old) if self.inbox.took_edit(old):
                        activity.write_lines(edited_lines(event))
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

    def _attach_queue(self) -> None:
        queue = session_queue(self.session)
        if queue is None:
            return
        pending = self.inbox.pending
        listing = pending if isinstance(pending, PendingList) else None
        try:
            self.bridge.attach_queue(queue, None if listing is None else listing.records_changed)
        except Exception as exc:
            if listing is not None:
                listing.watch_records(False)
            self.activity.write_lines(
                [
                    Content.styled(
                        f"ℹ other processes' actions will not show: {exc}", "$redline-text-warning"
                    )
                ]
            )
        else:
            if listing is not None:
                # From the first listing on, the queue's watcher names every record it
                # sees change: a re-read looks only at those (issue 44).
                listing.watch_records(True)
        feed = HookActivityFeed(queue.root, self.post_message)
        try:
            feed.start()
        except Exception as exc:
            self.activity.write_lines(
                [Content.styled(f"ℹ hook calls will not show: {exc}", "$redline-text-warning")]
            )
        else:
            self._hook_feed = feed

    def on_hook_activity_arrived(self, message: HookActivityArrived) -> None:
        """Steps of hook calls in the agents' own processes (``redline hook``)."""
        if not self._alive():
            return
        activity = self.activity
        with activity.batch_writes():
            for entry in message.entries:
                lines, detail = hook_lines(entry)
                activity.write_lines(lines, detail)
            if message.skipped:
                activity.write_lines([skipped_line(message.skipped)])

    def _first_read(self) -> None:
        """The whole of a long queue has been listed (see InboxScreen.show_first)."""
        self._notice_arrivals()
        self._maybe_resume()

    def _refresh_stack(self) -> None:
        self.inbox.refresh_stack()
        self._notice_arrivals()
        self._maybe_resume()

    # -- telling the person that something waits -----------------------------------------
    @property
    def dashboard_in_front(self) -> bool:
        """The terminal has focus and no dialog or editor covers the inbox."""
        return self.app_focus and self.screen is self._inbox

    def _notice_arrivals(self) -> None:
        notices = self._notices
        if notices is None or self.inbox.reading:  # the baseline is the whole first list
            return
        pending = self.inbox.pending
        listed = pending.listed()
        if listed is self._noticed:
            return  # not listed again since (a re-read put off while a decision runs)
        before, self._noticed = self._noticed, listed
        gone = pending.gone_since(before, listed) if isinstance(pending, PendingList) else None
        if gone is not None and notices.left(gone):
            return  # only departures and replacements since: nothing arrived
        arrived = notices.arrived(listed)
        if arrived and not self.dashboard_in_front:
            notices.send(arrived, self.write_terminal)

    def write_terminal(self, text: str) -> None:
        """Write raw bytes (the bell, an escape sequence) to the terminal through the driver."""
        driver = self._driver
        if driver is not None:
            driver.write(text)

    def on_notify_failed(self, message: NotifyFailed) -> None:
        if self._alive():
            self.activity.write_lines(
                [Content.styled(f"ℹ {message.text}", "$redline-text-warning")]
            )

    def on_resolution_finished(self, _message: ResolutionFinished) -> None:
        # The inbox screen has shown the outcome; the agent may go on now.
        if self._alive():
            self._maybe_resume()

    def on_batch_finished(self, _message: BatchFinished) -> None:
        if self._alive():
            self._maybe_resume()

    def on_marked_finished(self, _message: MarkedFinished) -> None:
        if self._alive():
            self._maybe_resume()

    def _alive(self) -> bool:
        """False once quitting started (a key, or a test's shutdown: no longer running) or
        the screens are gone: late messages -- a queue's report -- do nothing."""
        return self.is_running and not self._exiting and bool(self.screen_stack)

    def exit(
        self, result: int | None = None, return_code: int = 0, message: Any | None = None
    ) -> None:
        self._exiting = True
        super().exit(result, return_code, message)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self._alive():
            return False
        if action == "stop_agent":
            if not self.inbox.ready:
                return True
            return True if self._can_stop() else None
        # Every other dashboard key is the inbox screen's; asking the app answers for it too.
        return self.inbox.check_action(action, parameters)

    def watch_agent_state(self, state: AgentState) -> None:
        self.status_line.state = state

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
            and not self.inbox.busy
            and not self.session.store.has_pending
        ):
            if self.runs.live:
                # An external agent's turn is still open: the answers let it go on, and
                # the session tells it the reasons once the turn ends.
                self.agent_state = AgentState.RUNNING
            elif self.agent_ended is None:
                self.start_run(None)

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
        self.inbox.show_agent_ended(self.session.model_label, how)
        # Its actions are marked with the ended session: the stack and preview show it.
        self._refresh_stack()

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

    # -- command palette -------------------------------------------------------------
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from dashboard_commands(self.inbox, self)
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
