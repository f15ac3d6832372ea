"""What the inbox lists over a review source (``review.source.ReviewSource``): the team
queue, or every workspace on the machine — the dashboard's one screen with the source's
listed actions instead of a session's stack.

The rows arrive from the source's ``watch`` (a worker of the app) as listed actions; each
is shown as a display copy, a ``PendingAction`` made once per row and view (never changed
afterwards), whose Preview is the loaded view's when the source has one. The view (the
Preview, or the unified diff the team queue mirrored) is loaded by the screen on a worker
when the action is first shown (:meth:`SourceList.needs_view`).
"""

from __future__ import annotations

from collections.abc import Sequence

from redline.review.result import ToolResult
from redline.review.source import ActionView, ListedAction, ReviewSource
from redline.review.store import PendingAction
from redline.tui.pending import Departed, Limits, RowFacts, limits_of
from redline.workspace.details import details_from_json
from redline.workspace.queue import Source

#: The label a row without one is shown with (a display copy needs one).
NO_LABEL = "(no label)"


def source_of(canonical: str) -> Source:
    """A ``Source`` for a canonical badge (``acp:gemini``, ``exec``)."""
    kind, _, name = canonical.partition(":")
    return Source(kind or "agent", name)


def display_action(row: ListedAction, view: ActionView | None) -> PendingAction:
    """A display copy of ``row`` (with ``view``'s Preview once loaded); it is decided through
    the source, never by its own apply."""

    def elsewhere(_reason: str) -> ToolResult:
        return ToolResult.error(f"{row.id} is decided through its review source")

    label = (row.label.strip() and row.label) or NO_LABEL
    if row.note:  # decided before, but its workspace could not carry it out: decide again
        label = f"{label}  [{row.note}]"
    return PendingAction(
        label,
        elsewhere,
        details=details_from_json(row.kind or "custom", row.details),
        source_tool_name=row.source_tool_name or row.applied_by or "",
        preview=view.preview if view is not None else None,
        id=row.id,
        created_at=row.created_at or 0.0,
        stale=row.stale,
        stale_reason=row.stale_reason,
        kind=row.kind or "custom",
        source=source_of(row.source),
    )


class SourceList:
    """The source's listed actions, newest first, and each of them by id (the
    :class:`~redline.tui.pending.PendingList` of a screen over a review source)."""

    def __init__(self, source: ReviewSource) -> None:
        self.source = source
        self._rows: tuple[ListedAction, ...] = ()
        self._listed: dict[str, ListedAction] = {}
        self._views: dict[str, ActionView] = {}
        self._copies: dict[str, tuple[ListedAction, ActionView | None, PendingAction]] = {}
        self._actions: dict[str, PendingAction] = {}
        #: How many listings have arrived (none yet: the first is on its way).
        self.arrivals = 0

    def set_rows(self, rows: Sequence[ListedAction]) -> None:
        """A fresh listing from the source (the next :meth:`read` shows it)."""
        self._rows = tuple(rows)
        self._listed = {row.id: row for row in self._rows}
        self.arrivals += 1
        # A view is kept only while its row is listed as it was when the view was read.
        self._views = {
            key: view
            for key, view in self._views.items()
            if key in self._listed and self._listed[key] == view.action
        }

    def set_view(self, view: ActionView) -> bool:
        """Keep ``view`` for its action; False when the action is no longer listed."""
        row = self._listed.get(view.action.id)
        if row is None:
            return False
        self._views[row.id] = view
        return True

    def view_of(self, action_id: str | None) -> ActionView | None:
        return self._views.get(action_id) if action_id else None

    def needs_view(self, action_id: str | None) -> bool:
        """Whether ``action_id`` is listed and its view has not been read yet."""
        return bool(action_id) and action_id in self._listed and action_id not in self._views

    def row(self, action_id: str | None) -> ListedAction | None:
        return self._listed.get(action_id) if action_id else None

    def departed(self) -> list[Departed]:
        """The source says how an action left when asked (``gone_text``), not here."""
        return []

    def listed(self) -> tuple[PendingAction, ...]:
        return tuple(self._actions.values())

    def get(self, action_id: str | None) -> PendingAction | None:
        return self._actions.get(action_id) if action_id else None

    def facts_of(self, action: PendingAction) -> RowFacts | None:
        row = self._listed.get(action.id)
        return row.facts if row is not None else None

    def limits(self, action_id: str | None) -> Limits:
        row = self.row(action_id)
        if row is None:
            return Limits()
        return limits_of(self.source.allows(row))

    def read(self) -> tuple[PendingAction, ...]:
        copies: dict[str, tuple[ListedAction, ActionView | None, PendingAction]] = {}
        for row in self._rows:
            view = self._views.get(row.id)
            known = self._copies.get(row.id)
            if known is not None and known[0] == row and known[1] is view:
                copies[row.id] = known
            else:
                copies[row.id] = (row, view, display_action(row, view))
        self._copies = copies
        self._actions = {key: copy[2] for key, copy in copies.items()}
        return tuple(self._actions.values())
