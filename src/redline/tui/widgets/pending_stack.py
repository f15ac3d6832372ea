"""The pending-action stack, top first, two lines per action, drawn with the Line API.

Only visible rows are rendered, so a stack of 1,000 actions scrolls as fast as one of
three. Row facts (files, +/- lines) are computed once per action id and cached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from redline.review.source import WorkspaceRef
from redline.review.store import PendingAction
from redline.review.workspace_source import spliced
from redline.termtext import one_line
from redline.tui.agent_ended import ended_note
from redline.tui.pending import ListingChange, QueuedCopy, RowFacts
from redline.tui.render import content_strip, fit

ROW_HEIGHT = 2
# Below this terminal height every action takes one line (the stack must stay in sight).
COMPACT_BELOW = 32
# Columns a label keeps beside the badges (a long source badge is cut first).
LABEL_MIN = 20
# A badge's colour by the source's kind (the part of ``kind:name`` before the colon).
SOURCE_STYLE = {
    "agent": "$text-secondary",
    "exec": "$redline-text-accent",
    "sdk": "$redline-text-accent",
    "acp": "$redline-text-warning",
    "mcp": "$redline-text-success",
    "hook": "$redline-text-warning",
}
# The badge of an action that carries no source (a store without one: tests, scripts).
NO_SOURCE = "agent"


def action_source(action: PendingAction) -> str:
    """Who pushed ``action``: its source's canonical ``kind:name`` (``exec``, ``acp:gemini``,
    ``mcp:zed``), the one string the badge, the filter and the counts use."""
    return action.source.canonical if action.source is not None else NO_SOURCE


def source_badge(origin: str) -> Content:
    """``‹acp:gemini›`` in its kind's colour."""
    style = SOURCE_STYLE.get(origin.partition(":")[0], "$text-secondary")
    return Content.styled(f"‹{origin}›", f"bold {style}")


def source_counts(actions: Iterable[PendingAction]) -> tuple[tuple[str, int], ...]:
    """Pending actions per source, in order of first appearance."""
    counts: dict[str, int] = {}
    for action in actions:
        badge = action_source(action)
        counts[badge] = counts.get(badge, 0) + 1
    return tuple(counts.items())


@dataclass(frozen=True, slots=True)
class StackRow:
    action_id: str
    label: str
    source: str
    files: tuple[str, ...]
    added: int
    removed: int
    stale: bool
    stale_reason: str
    origin: str = "agent"
    # How the agent that left this action ended (empty: its agent is alive or unknown).
    ended: str = ""
    # The workspace it belongs to, badged when the list spans several workspaces.
    workspace: WorkspaceRef | None = None


def workspace_name(workspace: WorkspaceRef) -> str:
    """A workspace's badge: its folder's name (its id when the path has none)."""
    return workspace.path.rstrip("/").rpartition("/")[2] or workspace.id


def _facts(action: PendingAction) -> tuple[tuple[str, ...], int, int]:
    if isinstance(action, QueuedCopy) and not action.loaded:
        return action.facts  # from the queue's index: its Preview is read when shown
    if action.preview is None:
        return (), 0, 0
    summary = action.preview.summary()
    files = tuple(str(entry["path"]) for entry in summary["files"])
    return files, int(summary["added"]), int(summary["removed"])


class PendingStack(ScrollView, can_focus=True):
    """Every pending action; the top one (row 0) is the one resolve acts on."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor_down", "Down", show=False),
        Binding("k,up", "cursor_up", "Up", show=False),
        Binding("home", "cursor_home", "Top", show=False),
        Binding("end", "cursor_end", "Bottom", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        # The inbox resolves the marked actions together (y / n); elsewhere space picks hunks.
        Binding("space", "screen.toggle_mark", "Mark", show=False),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    class Selected(Message):
        """The cursor moved to another action (``action_id`` is None when the stack is empty)."""

        def __init__(self, action_id: str | None) -> None:
            self.action_id = action_id
            super().__init__()

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.rows: list[StackRow] = []
        # Each listed action's row, kept while the action object and its state stay.
        self._built: dict[str, tuple[PendingAction, StackRow]] = {}
        self._counts: tuple[tuple[str, int], ...] = ()
        self._strips: dict[tuple[int, int], Strip] = {}
        self._selected_id: str | None = None
        self._top_id: str | None = None
        self._all: tuple[PendingAction, ...] = ()
        self.source_filter: str | None = None
        self.row_height = ROW_HEIGHT
        # The selection follows the top until the person moves off it; ``_cleared``: the
        # selected action was resolved elsewhere and nothing is selected until they move.
        self._follow_top = True
        self._cleared = False
        # Actions marked (space) for one apply or discard of them all, in marking order.
        self._marked: dict[str, None] = {}
        # Each action's check badge (docs/checks.md), set by the inbox's DashboardChecks.
        self.check_badges: dict[str, Content] = {}
        # Over a review source: each row's facts and workspace come from its listed action.
        self.row_facts: Callable[[PendingAction], RowFacts | None] | None = None
        self.row_workspace: Callable[[PendingAction], WorkspaceRef | None] | None = None
        # Show only this workspace's actions (its id; None: every workspace).
        self.workspace_filter: str | None = None

    # -- data ----------------------------------------------------------------------
    @property
    def selected_id(self) -> str | None:
        return self._selected_id

    @property
    def follows_top(self) -> bool:
        """The selection is on the top and goes with it (the person has not moved off)."""
        return self._follow_top and not self._cleared

    @property
    def top_id(self) -> str | None:
        """The top of the whole stack (a source filter never changes what is on top)."""
        return self._top_id

    @property
    def total(self) -> int:
        """Every pending action listed, whatever the filter shows."""
        return len(self._all)

    @property
    def sources(self) -> list[str]:
        return [badge for badge, _ in self._counts]

    @property
    def counts(self) -> tuple[tuple[str, int], ...]:
        """Pending actions per source (of every listed action), in order of first appearance."""
        return self._counts

    def cycle_filter(self) -> str | None:
        """Show only the next source's actions (after the last: every source again)."""
        sources = self.sources
        if self.source_filter in sources:
            index = sources.index(self.source_filter) + 1
            self.source_filter = sources[index] if index < len(sources) else None
        else:
            self.source_filter = sources[0] if len(sources) > 1 else None
        self.update_actions(self._all)
        return self.source_filter

    def update_actions(
        self,
        actions: tuple[PendingAction, ...],
        *,
        clear: bool = False,
        change: ListingChange | None = None,
    ) -> None:
        """Show ``actions`` (top first), keeping the cursor on the same action if it remains.

        ``clear``: the selected action is gone (resolved elsewhere); select nothing until
        the person moves. Marks of actions that are gone are dropped. ``change``: how
        ``actions`` differ from the actions shown now (:meth:`PendingList.change`): then
        only the rows of the actions that left or were replaced are looked at.
        """
        if (
            change is not None
            and change.before is self._all
            and change.after is actions
            and self.source_filter is None
            and self.workspace_filter is None
            and len(self._counts) == 1  # (with more sources their order may change)
        ):
            self._show(actions, self._changed_rows(actions, change), clear)
            return
        rows: list[StackRow] = []
        built: dict[str, tuple[PendingAction, StackRow]] = {}
        counts: dict[str, int] = {}
        self._all = actions
        # One pass builds every action's row (kept from the last update while the action is
        # the same object in the same state: a queue of 10,000 is shown again after each
        # decision) and counts the sources; the filter picks the rows afterwards.
        for action in actions:
            known = self._built.get(action.id)
            if known is not None and known[0] is action and isinstance(action, QueuedCopy):
                # Another process's action: a new copy whenever its row changes.
                row = known[1]
                built[action.id] = known
                counts[row.origin] = counts.get(row.origin, 0) + 1
                rows.append(row)
                continue
            row = self._row(action, known)
            built[action.id] = (action, row)
            counts[row.origin] = counts.get(row.origin, 0) + 1
            rows.append(row)
        self._counts = tuple(counts.items())
        if self.source_filter is not None and self.source_filter not in counts:
            self.source_filter = None
        if self.source_filter is not None:
            rows = [row for row in rows if row.origin == self.source_filter]
        if self.workspace_filter is not None:
            rows = [
                row for row in rows if row.workspace and row.workspace.id == self.workspace_filter
            ]
        self._built = built
        self._show(actions, rows, clear)

    def _row(self, action: PendingAction, known: tuple[PendingAction, StackRow] | None) -> StackRow:
        """``action``'s row (``known``: its entry from the last update, kept if it fits)."""
        ended = ended_note(action.details) or ""
        if (
            known is not None
            and known[0] is action
            and known[1].stale == action.stale
            and known[1].stale_reason == action.stale_reason
            and known[1].ended == ended
        ):
            return known[1]
        given = self.row_facts(action) if self.row_facts is not None else None
        files, added, removed = given if given is not None else _facts(action)
        space = self.row_workspace(action) if self.row_workspace is not None else None
        return StackRow(
            action.id,
            action.label,
            action.source_tool_name,
            files,
            added,
            removed,
            action.stale,
            action.stale_reason,
            action_source(action),
            ended,
            space,
        )

    def _changed_rows(
        self, actions: tuple[PendingAction, ...], change: ListingChange
    ) -> list[StackRow]:
        """The rows of ``actions``, from the rows shown and only the changed ones made."""
        built = self._built
        counts = dict(self._counts)
        edits: dict[int, StackRow | None] = {}  # the shown row's id() -> its new row
        old: dict[str, StackRow] = {}
        for key in change.gone | change.replaced:
            known = built.pop(key, None)
            if known is not None:
                counts[known[1].origin] -= 1
                old[key] = known[1]
                edits[id(known[1])] = None
        for key in change.replaced:
            action = next((a for a in actions if a.id == key), None)
            if action is None:
                continue
            row = self._row(action, None)
            built[key] = (action, row)
            counts[row.origin] = counts.get(row.origin, 0) + 1
            if key in old:
                edits[id(old[key])] = row
        self._counts = tuple((origin, n) for origin, n in counts.items() if n > 0)
        self._all = actions
        rows = spliced(self.rows, edits) if old.keys() >= change.replaced else None
        return rows if rows is not None else [built[action.id][1] for action in actions]

    def _show(self, actions: tuple[PendingAction, ...], rows: list[StackRow], clear: bool) -> None:
        self._top_id = actions[0].id if actions else None
        self.rows = rows
        if self._marked:
            listed = {action.id for action in actions}
            self._marked = {key: None for key in self._marked if key in listed}
        self._strips.clear()
        self.virtual_size = Size(self.size.width, len(rows) * self.row_height)
        if clear and rows:
            self._cleared = True
        elif not rows:
            self._cleared = False
            self._follow_top = True
        index = 0
        if self._cleared:
            index = min(self.cursor, max(len(rows) - 1, 0))
        elif not self._follow_top and self._selected_id is not None:
            ids = [row.action_id for row in rows]
            if self._selected_id in ids:
                index = ids.index(self._selected_id)
            else:
                index = min(self.cursor, max(len(rows) - 1, 0))
        self.cursor = index
        self.refresh()

    # -- marks -----------------------------------------------------------------------
    @property
    def marked(self) -> tuple[str, ...]:
        """The marked actions' ids, top first (a source filter hides none of them)."""
        if not self._marked:
            return ()
        return tuple(action.id for action in self._all if action.id in self._marked)

    def toggle_mark(self) -> str | None:
        """Mark or unmark the selected action; returns its id (None: nothing selected)."""
        selected = self.selected_id
        if selected is None:
            return None
        if selected in self._marked:
            del self._marked[selected]
        else:
            self._marked[selected] = None
        self._strips.clear()
        self.refresh()
        return selected

    def clear_marks(self) -> None:
        self._marked.clear()
        self._strips.clear()
        self.refresh()

    def set_check_badges(self, badges: dict[str, Content]) -> None:
        if badges != self.check_badges:
            self.check_badges = badges
            self._strips.clear()
            self.refresh()

    # -- cursor ----------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.rows) - 1)) if self.rows else 0

    def watch_cursor(self, old: int, new: int) -> None:
        selected = self.rows[new].action_id if self.rows and not self._cleared else None
        self._strips.clear()
        self.refresh()
        self.scroll_to_region_for(new)
        if selected != self._selected_id:
            self._selected_id = selected
            self.post_message(self.Selected(selected))

    def scroll_to_region_for(self, index: int) -> None:
        top = index * self.row_height
        height = self.scrollable_content_region.height or self.size.height
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top + self.row_height > self.scroll_y + height:
            self.scroll_to(y=top + self.row_height - height, animate=False, immediate=True)

    def _move(self, index: int) -> None:
        """The person moved the cursor: the selection follows the top only from row 0."""
        if self._cleared:
            # Nothing was selected: the first move selects the row under the cursor.
            self._cleared = False
            index = self.cursor
        self._follow_top = self.validate_cursor(index) == 0
        self.cursor = index

    def select_id(self, action_id: str) -> bool:
        """Move the selection to ``action_id`` as the person would (False: not shown)."""
        ids = [row.action_id for row in self.rows]
        if action_id not in ids:
            return False
        self._cleared = False
        self._move(ids.index(action_id))
        return True

    def action_cursor_down(self) -> None:
        self._move(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self._move(self.cursor - 1)

    def action_cursor_home(self) -> None:
        self._cleared = False
        self._move(0)

    def action_cursor_end(self) -> None:
        self._cleared = False
        self._move(len(self.rows) - 1)

    def action_page_down(self) -> None:
        self._move(self.cursor + max(1, self.size.height // self.row_height))

    def action_page_up(self) -> None:
        self._move(self.cursor - max(1, self.size.height // self.row_height))

    def on_click(self, event: events.Click) -> None:
        self._cleared = False
        self._move((int(self.scroll_y) + event.y) // self.row_height)

    # -- rendering ----------------------------------------------------------------
    def on_resize(self) -> None:
        self.row_height = 1 if self.app.size.height < COMPACT_BELOW else ROW_HEIGHT
        self._strips.clear()
        self.virtual_size = Size(self.size.width, len(self.rows) * self.row_height)

    def render_line(self, y: int) -> Strip:
        base = self.visual_style
        width = self.scrollable_content_region.width
        line = int(self.scroll_y) + y
        index, part = divmod(line, self.row_height)
        if not self.rows:
            if line == 0:
                text = Content.styled("  Nothing pending.", "$text-muted")
                return fit(
                    content_strip(text, base, self.app.stylesheet.parse_style), 0, width, base
                )
            return Strip.blank(width, base.rich_style)
        if index >= len(self.rows):
            return Strip.blank(width, base.rich_style)
        key = (index, part)
        strip = self._strips.get(key)
        if strip is None:
            selected = index == self.cursor and not self._cleared
            row_base = base
            content = self._line(self.rows[index], index, part, width)
            if selected and self.has_focus:
                # The pieces' own colours (muted, secondary) vanish on the cursor background.
                row_base = base + self.app.stylesheet.parse_style("on $block-cursor-background")
                # From the first letter on: an SVG run starting with spaces loses them in
                # some renderers (rsvg), which would shift the exported row left.
                indent = len(content.plain) - len(content.plain.lstrip(" "))
                content = content.stylize("$block-cursor-foreground", indent)
            elif selected:
                row_base = base + self.app.stylesheet.parse_style("on $block-hover-background")
            strip = fit(
                content_strip(content, row_base, self.app.stylesheet.parse_style),
                0,
                width,
                row_base,
            )
            self._strips[key] = strip
        return strip

    def _line(self, row: StackRow, index: int, part: int, width: int) -> Content:
        if part == 0:
            on_top = row.action_id == self._top_id
            marker = ("▶ top ", "bold $redline-text-accent") if on_top else ("      ", "")
            space = row.workspace
            if space is not None:
                # Several workspaces: the local id and the workspace's badge (the id's
                # ``@WSID`` is in the preview's header).
                local = row.action_id.partition("@")[0]
                head = Content.assemble(
                    marker,
                    (f"{local:<5}", "$text-muted"),
                    " ",
                    (f"⌂ {one_line(workspace_name(space))}", "bold $text-primary"),
                    " ",
                )
            else:
                head = Content.assemble(marker, (f"{row.action_id:<7}", "$text-muted"), " ")
            if row.action_id in self._marked:
                # Marked (space) for the next y / n on all the marked actions.
                head = Content.assemble(head, ("● ", "bold $redline-text-accent"))
            badge = Content.assemble("  ", (" STALE ", "bold $text-error on $error-muted"))
            ended = Content.assemble(" ", ("agent ended", "bold $redline-text-warning"))
            rest = Content.assemble(
                ended if row.ended else "",
                Content.assemble(" ", checks)
                if (checks := self.check_badges.get(row.action_id))
                else "",
                badge if row.stale else "",
            )
            size = Content("")
            if self.row_height == 1:
                # One line per action: the size follows the label too.
                size = Content.assemble(
                    " ",
                    (f"+{row.added}", "$redline-text-success"),
                    ("/", "$text-muted"),
                    (f"-{row.removed}", "$text-error"),
                )
            # A long label gives way first, so the STALE badge stays in sight; but it keeps
            # LABEL_MIN columns: a long source badge is cut before the label is.
            source = self._badge(row)
            keep = min(cell_len(row.label), LABEL_MIN)
            fits = width - head.cell_length - keep - size.cell_length - rest.cell_length - 1
            if source.cell_length > fits:
                source = source.truncate(max(fits, 2), ellipsis=True)
            tail = Content.assemble(size, " ", source, rest)
            room = max(width - head.cell_length - tail.cell_length, 1)
            label = Content.styled(one_line(row.label), "bold").truncate(room, ellipsis=True)
            return Content.assemble(head, label, tail).truncate(width, ellipsis=True)
        files = one_line(", ".join(row.files)) if row.files else "no file changes"
        count = f"{len(row.files)} file{'s' if len(row.files) != 1 else ''}: " if row.files else ""
        return Content.assemble(
            "      ",
            (f"[{one_line(row.source)}]", "$text-secondary"),
            " ",
            (f"+{row.added}", "$redline-text-success"),
            " ",
            (f"-{row.removed}", "$text-error"),
            "  ",
            (count + files, "$text-muted"),
        ).truncate(width, ellipsis=True)

    @staticmethod
    def _badge(row: StackRow) -> Content:
        return source_badge(row.origin)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def on_focus(self) -> None:
        self._strips.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._strips.clear()
        self.refresh()
