"""The pending-action stack, top first, two lines per action, drawn with the Line API.

Only visible rows are rendered, so a stack of 1,000 actions scrolls as fast as one of
three. Row facts (files, +/- lines) are computed once per action id and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from redline.tools.pending_action import PendingAction
from redline.tui.render import content_strip, fit

ROW_HEIGHT = 2


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


def _facts(action: PendingAction) -> tuple[tuple[str, ...], int, int]:
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
        self._facts: dict[str, tuple[tuple[str, ...], int, int]] = {}
        self._strips: dict[tuple[int, int], Strip] = {}
        self._selected_id: str | None = None

    # -- data ----------------------------------------------------------------------
    @property
    def selected_id(self) -> str | None:
        return self._selected_id

    @property
    def top_id(self) -> str | None:
        return self.rows[0].action_id if self.rows else None

    def update_actions(self, actions: tuple[PendingAction, ...]) -> None:
        """Show ``actions`` (top first), keeping the cursor on the same action if it remains."""
        following_top = self.cursor == 0
        rows: list[StackRow] = []
        facts: dict[str, tuple[tuple[str, ...], int, int]] = {}
        for action in actions:
            known = self._facts.get(action.id)
            if known is None:
                known = _facts(action)
            facts[action.id] = known
            files, added, removed = known
            rows.append(
                StackRow(
                    action.id,
                    action.label,
                    action.source_tool_name,
                    files,
                    added,
                    removed,
                    action.stale,
                    action.stale_reason,
                )
            )
        self._facts = facts
        self.rows = rows
        self._strips.clear()
        self.virtual_size = Size(self.size.width, len(rows) * ROW_HEIGHT)
        index = 0
        if not following_top and self._selected_id is not None:
            ids = [row.action_id for row in rows]
            if self._selected_id in ids:
                index = ids.index(self._selected_id)
            else:
                index = min(self.cursor, max(len(rows) - 1, 0))
        self.cursor = index
        self.refresh()

    # -- cursor ----------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.rows) - 1)) if self.rows else 0

    def watch_cursor(self, old: int, new: int) -> None:
        selected = self.rows[new].action_id if self.rows else None
        self._strips.clear()
        self.refresh()
        self.scroll_to_region_for(new)
        if selected != self._selected_id:
            self._selected_id = selected
            self.post_message(self.Selected(selected))

    def scroll_to_region_for(self, index: int) -> None:
        top = index * ROW_HEIGHT
        height = self.scrollable_content_region.height or self.size.height
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif top + ROW_HEIGHT > self.scroll_y + height:
            self.scroll_to(y=top + ROW_HEIGHT - height, animate=False, immediate=True)

    def action_cursor_down(self) -> None:
        self.cursor += 1

    def action_cursor_up(self) -> None:
        self.cursor -= 1

    def action_cursor_home(self) -> None:
        self.cursor = 0

    def action_cursor_end(self) -> None:
        self.cursor = len(self.rows) - 1

    def action_page_down(self) -> None:
        self.cursor += max(1, self.size.height // ROW_HEIGHT)

    def action_page_up(self) -> None:
        self.cursor -= max(1, self.size.height // ROW_HEIGHT)

    def on_click(self, event: events.Click) -> None:
        self.cursor = (int(self.scroll_y) + event.y) // ROW_HEIGHT

    # -- rendering ----------------------------------------------------------------
    def on_resize(self) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.size.width, len(self.rows) * ROW_HEIGHT)

    def render_line(self, y: int) -> Strip:
        base = self.visual_style
        width = self.scrollable_content_region.width
        line = int(self.scroll_y) + y
        index, part = divmod(line, ROW_HEIGHT)
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
            selected = index == self.cursor
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
            marker = ("▶ top ", "bold $redline-text-accent") if index == 0 else ("      ", "")
            head = Content.assemble(marker, (f"{row.action_id:<7}", "$text-muted"), " ")
            badge = Content.assemble("  ", (" STALE ", "bold $text-error on $error-muted"))
            tail = badge if row.stale else Content("")
            # A long label gives way first, so the STALE badge stays in sight.
            room = max(width - head.cell_length - tail.cell_length, 1)
            label = Content.styled(row.label, "bold").truncate(room, ellipsis=True)
            return Content.assemble(head, label, tail).truncate(width, ellipsis=True)
        files = ", ".join(row.files) if row.files else "no file changes"
        count = f"{len(row.files)} file{'s' if len(row.files) != 1 else ''}: " if row.files else ""
        return Content.assemble(
            "      ",
            (f"[{row.source}]", "$text-secondary"),
            " ",
            (f"+{row.added}", "$redline-text-success"),
            " ",
            (f"-{row.removed}", "$text-error"),
            "  ",
            (count + files, "$text-muted"),
        ).truncate(width, ellipsis=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def on_focus(self) -> None:
        self._strips.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._strips.clear()
        self.refresh()
