"""A dashboard over a review source (``review.source.ReviewSource``) that runs no agent:
the dashboard's one screen (the inbox, ``tui/screens/inbox.py``) given the source.

The team dashboard (``tui/team/app.py``) is this over the team queue; issue 45's
all-workspaces inbox is this over every workspace. The live list comes from the source's
``watch`` on a worker thread of its own; every other call into the source runs on the
inbox's workers, so the screen never waits on a disk or a network.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from textual import events, work
from textual.binding import Binding, BindingType
from textual.screen import Screen

from redline.review.source import ListedAction, ReviewSource
from redline.termtext import one_line as clean
from redline.tui.frame import css_paths, size_classes
from redline.tui.palette import readable_variables
from redline.tui.screens.inbox import InboxScreen
from redline.tui.shown import ShownApp
from redline.tui.source_messages import LinkChanged, RowsArrived
from redline.tui.source_session import SourceSession


class SourceApp(ShownApp[int]):
    TITLE = "redline"
    CSS_PATH = css_paths()
    AUTO_FOCUS = "#stack"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self, source: ReviewSource, *, label: str = "", workspace: str | None = None
    ) -> None:
        """``label``: what the top line says beside the source's title; ``workspace``:
        show only that workspace's actions at first (a source spanning workspaces)."""
        super().__init__()
        self.source = source
        self.filter_workspace = workspace
        self._inbox = InboxScreen(
            SourceSession(source),
            workspace_label=label or source.title,
            source=source,
            workspace_filter=workspace,
        )
        self._stop = threading.Event()
        self.watch_stopped = threading.Event()
        self.rows_seen = 0

    def get_css_variables(self) -> dict[str, str]:
        variables = super().get_css_variables()
        return {**variables, **readable_variables(variables)}

    def get_default_screen(self) -> Screen[Any]:
        return self._inbox

    @property
    def inbox(self) -> InboxScreen:
        return self._inbox

    @property
    def listed_ids(self) -> list[str]:
        """The ids the list shows (the workspace filter applied), newest first."""
        return [row.action_id for row in self._inbox.stack.rows]

    @property
    def shown_id(self) -> str | None:
        """The action whose diff is on the screen (None: a note, or nothing)."""
        return self._inbox.preview.shown_id

    def select(self, action_id: str) -> bool:
        """Select ``action_id`` in the list as the person would (False: not listed)."""
        return self._inbox.stack.select_id(action_id)

    def on_resize(self, event: events.Resize) -> None:
        size_classes(self, event.size.width, event.size.height)

    async def on_mount(self) -> None:
        size_classes(self, self.size.width, self.size.height)
        from textual.widget import AwaitMount

        await AwaitMount(self._inbox, [self._inbox])
        self._inbox.start()
        self._inbox.status_line.link = "○ connecting…"
        self._watch()

    def on_unmount(self) -> None:
        self._stop.set()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "quit":
            return True
        return self._inbox.check_action(action, parameters)

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

    def on_rows_arrived(self, message: RowsArrived) -> None:
        self.rows_seen += 1
        if self._inbox.is_attached:
            self._inbox.rows_arrived(message.rows)

    def on_link_changed(self, message: LinkChanged) -> None:
        status = self._inbox.status_line
        if message.online:
            status.link, status.link_bad = "● online", False
        else:
            status.link, status.link_bad = f"○ offline: {clean(message.text)} (retrying)", True

    def rows(self) -> Sequence[ListedAction]:
        """The last listing, every workspace."""
        return self._inbox.listing_rows()
