"""Contents: drafts become records whose texts live in the content store, and back.

A Preview's texts are stored once per content under ``contents/SHA256`` and a record
refers to them as ``{"blob": digest}``; :meth:`QueueContents.preview` and
:meth:`QueueContents.origin` read them back.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redline.workspace.details import ActionKind, infer_kind
from redline.workspace.preview import Preview
from redline.workspace.queue import storage
from redline.workspace.queue.base import CONTENTS, QueueBase
from redline.workspace.queue.records import (
    QueueRecord,
    QueueRecordError,
    QueueUnavailable,
    Source,
)
from redline.workspace.realpath import canonical_preview

if TYPE_CHECKING:  # hunks imported where used: queueing an action needs none of them
    from redline.jsontypes import JsonValue
    from redline.workspace.hunks import Origin


@dataclass(frozen=True)
class ActionDraft:
    """What a push (or replacement) describes; the queue adds id, position and time."""

    label: str
    source: Source
    source_tool_name: str = "custom_tool"
    preview: Preview | None = None
    #: The details' JSON (``details.details_to_json`` of a PendingAction's).
    details: JsonValue = None
    applied_by: str | None = None  # default: "preview" with a Preview, else "owner"
    applied_text: str | None = None
    stale: bool = False
    stale_reason: str = ""
    # What a derived action (remaining, rebased, edited) keeps of the model's proposal.
    origin: Origin | None = None
    # What an owner action's process can do besides a whole apply or discard, when asked
    # (``"parts"``: apply or discard some hunks; see :class:`OwnerRequest`).
    owner_serves: tuple[str, ...] = ()
    # A revision of a discarded action named by the proposer (``revises="pa-K"``), and
    # whether it may be linked to its session's last discarded action without being named
    # (see :mod:`redline.workspace.queue.revisions`).
    revises: str | None = None
    implicit_revision: bool = True
    #: What the action is (``details.ActionKind``); None: inferred as a version 1 record's.
    kind: ActionKind | None = None


def _to_blobs(data: Any, put: Callable[[str], str]) -> Any:
    changes = []
    for change in data.get("changes", []):
        item = dict(change)
        for key in ("old_text", "new_text"):
            if isinstance(item.get(key), str):
                item[key] = {"blob": put(item[key])}
        changes.append(item)
    stored: dict[str, Any] = {"changes": changes}
    if data.get("via"):
        stored["via"] = dict(data["via"])
    return stored


class QueueContents(QueueBase):
    """Storing a draft's texts (:meth:`_new_record`) and reading a record's back."""

    def _new_record(self, draft: ActionDraft, number: int, position: int) -> QueueRecord:
        if not isinstance(draft.label, str) or not draft.label.strip():
            raise ValueError("a pending action needs a non-empty label")
        preview_data = None
        files: builtins.list[str] = []
        via: dict[str, str] = {}
        added = removed = 0
        preview = draft.preview
        if preview is not None:
            # The real paths it writes (a symlinked folder resolved), what was asked in via.
            preview = canonical_preview(self.root, preview)
            blobs = self._blobs()
            wrote = False

            def put(text: str) -> str:
                nonlocal wrote
                digest, new = blobs.put(text)
                wrote = wrote or new
                return digest

            try:
                preview_data = _to_blobs(preview.to_dict(), put)
                if wrote:
                    blobs.sync()
            except OSError as exc:
                raise QueueUnavailable(
                    f"Cannot store the contents of pa-{number} in .redline/queue/{CONTENTS}: "
                    f"{storage.error_text(exc)}. Nothing was queued."
                ) from None
            summary = preview.summary()
            files = list(preview.paths)
            via = dict(preview.via)
            added, removed = int(summary["added"]), int(summary["removed"])
        origin_data = None
        if draft.origin is not None:
            origin_data = draft.origin.to_dict()
            if draft.origin.proposal is not None:
                origin_data["proposal"] = self._store_preview(draft.origin.proposal, number)
        applied_by = draft.applied_by or ("preview" if draft.preview is not None else "owner")
        if applied_by not in ("preview", "owner"):
            raise ValueError(f"applied_by must be 'preview' or 'owner', not {applied_by!r}")
        if applied_by == "preview" and draft.preview is None:
            raise ValueError(
                "an action applied by the queue (applied_by='preview') needs a Preview"
            )
        try:
            storage.canonical_check(draft.details)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the action's details are not JSON: {exc}") from None
        return QueueRecord(
            id=f"pa-{number}",
            position=position,
            label=draft.label,
            source_tool_name=draft.source_tool_name,
            source=draft.source,
            created_at=time.time(),
            applied_by=applied_by,
            details=draft.details,
            preview=preview_data,
            files=files,
            via=via,
            added=added,
            removed=removed,
            stale=draft.stale,
            stale_reason=draft.stale_reason,
            applied_text=draft.applied_text,
            origin=origin_data,
            owner_serves=list(draft.owner_serves) if applied_by == "owner" else [],
            kind=draft.kind
            or infer_kind(
                draft.source_tool_name, draft.preview is not None, draft.source.kind, applied_by
            ),
        )

    def _store_preview(self, preview: Preview, number: int) -> dict[str, Any]:
        blobs = self._blobs()
        try:
            data = _to_blobs(preview.to_dict(), lambda text: blobs.put(text)[0])
            blobs.sync()
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot store the contents of pa-{number} in .redline/queue/{CONTENTS}: "
                f"{storage.error_text(exc)}. Nothing was queued."
            ) from None
        return dict(data)

    def origin(self, record: QueueRecord) -> Origin | None:
        """The record's origin (label, hunk count, the model's proposal once edited)."""
        if record.origin is None:
            return None
        data = dict(record.origin)
        proposal = data.get("proposal")
        if isinstance(proposal, dict):
            data["proposal"] = self._unblob(proposal, record.id).to_dict()
        from redline.workspace.hunks import Origin

        try:
            return Origin.from_dict(data)
        except ValueError as exc:
            raise QueueRecordError(
                record.id, f"queue record {record.id}: bad origin: {exc}"
            ) from None

    def preview(self, record: QueueRecord) -> Preview | None:
        """The record's Preview with its texts read back from the content store."""
        if record.preview is None:
            return None
        return self._unblob(record.preview, record.id)

    def _unblob(self, stored: dict[str, Any], action_id: str) -> Preview:
        blobs = self._blobs()
        changes = []
        for change in stored.get("changes", []):
            if not isinstance(change, dict):
                raise QueueRecordError(
                    action_id, f"queue record {action_id}: a change is not an object"
                )
            item = dict(change)
            for key in ("old_text", "new_text"):
                ref = item.get(key)
                if isinstance(ref, dict):
                    item[key] = blobs.get(str(ref.get("blob", "")), action_id)
            changes.append(item)
        try:
            return Preview.from_dict({"changes": changes, "via": stored.get("via")})
        except ValueError as exc:
            raise QueueRecordError(
                action_id, f"queue record {action_id}: bad preview: {exc}"
            ) from None
