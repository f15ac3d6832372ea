"""The shapes stored in the workspace queue: sources, action records, resolutions.

Every record is a JSON object ``{"version": V, "record": {...}, "tag": HMAC}``; the tag
covers the canonical JSON of ``record`` (which repeats the version). Texts of a Preview are
not inside the record: each is a reference ``{"blob": SHA256}`` into the content store, so
one 50 MB file is stored once however many actions touch it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from redline.workspace.details import ACTION_KINDS, ActionKind, infer_kind
from redline.workspace.queue.procs import is_alive, process_start_time

if TYPE_CHECKING:
    from redline.jsontypes import JsonValue

# Version 1 is the first queue format. Raise it when a field changes meaning; keep reading
# every older version here and refuse a newer one (see QueueRecordError).
#
# Version 2 (issue 43) covers everything this round adds to records, in one bump:
# - ``kind``: the action's kind (``file_change``, ``ast_edit``, ``permission``, ``custom``),
#   by which ``details`` are read back typed (redline.workspace.details); a version 1
#   record has none and its kind is inferred (``details.infer_kind``);
# - hunks: every ``PATH#N`` a version 2 file names (an owner request's ``only``) counts the
#   ``@@`` blocks at 3 lines of context: hunk numbering :data:`RECORD_HUNK_NUMBERING`, which is
#   ``redline.workspace.hunks.HUNK_NUMBERING`` (a test keeps them equal);
# - comments and revisions (issue 47, later this round) add OPTIONAL fields under version 2:
#   a reader that does not know them ignores them, so they need no further bump.
# Records, resolutions and journals written by version 1 are read, listed, applied and undone
# as before (tests/workspace/test_compat_v2.py).
FORMAT_VERSION = 2
#: How hunks named in a version 2 queue file are numbered (see above).
RECORD_HUNK_NUMBERING = 2

SourceKind: TypeAlias = Literal["agent", "exec", "sdk", "acp", "mcp"]
SOURCE_KINDS: tuple[str, ...] = ("agent", "exec", "sdk", "acp", "mcp", "hook", "import")
AppliedBy: TypeAlias = Literal["preview", "owner"]
RecordState: TypeAlias = Literal["pending", "applying"]
Decision: TypeAlias = Literal["apply", "discard", "replaced", "removed"]
ResolvedBy: TypeAlias = Literal["person", "rule", "agent", "recovery"]

ORPHANED_REASON = "its tool's process has ended"


class QueueError(Exception):
    """Base of every queue failure; the message names the record and the cause."""


class QueueRecordError(QueueError):
    """One record cannot be used (corrupt, truncated, tampered, newer version, blob lost)."""

    def __init__(self, action_id: str, message: str) -> None:
        super().__init__(message)
        self.action_id = action_id


class ReplayedRecord(QueueRecordError):
    """A record whose id has already left the queue (a leftover, or a copy put back)."""


class ActionGone(QueueError):
    """The action is no longer pending (resolved, replaced) in any process."""

    def __init__(self, action_id: str, message: str, replaced_by: str | None = None) -> None:
        super().__init__(message)
        self.action_id = action_id
        self.replaced_by = replaced_by


class ActionBusy(QueueError):
    """Another process is resolving this action right now."""


class QueueUnavailable(QueueError):
    """The queue folder cannot be opened or written."""


def canonical(data: Any) -> bytes:
    """The bytes a tag covers: sorted keys, no spaces, ASCII (lone surrogates as \\udcXX)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode(
        "ascii"
    )


#: How redline before 0.x named an MCP client's actions: ``NAME via MCP``, or this when the
#: client sent no name. Records queued then still read as ``mcp:NAME`` (or ``mcp``).
LEGACY_MCP_SUFFIX = " via MCP"
LEGACY_MCP_UNNAMED = "MCP client"


def legacy_mcp_name(name: str) -> str:
    """An MCP client's name as sources spell it now (``cursor via MCP`` → ``cursor``)."""
    if name == LEGACY_MCP_UNNAMED:
        return ""
    return (
        name.removesuffix(LEGACY_MCP_SUFFIX).strip() if name.endswith(LEGACY_MCP_SUFFIX) else name
    )


def iso_utc(timestamp: float) -> str:
    """``2026-12-01T05:26:11.123456+00:00`` style ISO-8601 in UTC."""
    from datetime import UTC, datetime  # not on the hook's queueing path

    return datetime.fromtimestamp(timestamp, UTC).isoformat()


def id_number(action_id: str) -> int | None:
    """N of ``pa-N``, or None for anything else."""
    if not action_id.startswith("pa-"):
        return None
    digits = action_id[3:]
    if not digits.isdigit() or (len(digits) > 1 and digits[0] == "0") or len(digits) > 18:
        return None
    return int(digits)


@dataclass(frozen=True)
class Source:
    """Who pushed an action: a kind, a human name, the session and the process."""

    kind: str = "agent"
    name: str = ""
    session_id: str = ""
    pid: int = 0
    pid_start: int | None = None

    @classmethod
    def current(cls, kind: str = "agent", name: str = "", session_id: str = "") -> Source:
        """A source for this process (pid and its start time filled in)."""
        if kind not in SOURCE_KINDS:
            raise ValueError(f"unknown source kind {kind!r}: expected one of {SOURCE_KINDS}")
        pid = os.getpid()
        return cls(kind, name or kind, session_id, pid, process_start_time(pid))

    def alive(self) -> bool:
        return is_alive(self.pid, self.pid_start)

    @property
    def canonical(self) -> str:
        """The one string badges, filters, rules and logs use: ``kind:name`` (``acp:gemini``,
        ``mcp:cursor``), or the kind alone when the name adds nothing (``exec``, ``sdk``)."""
        name = self.name.strip()
        if self.kind == "mcp":
            name = legacy_mcp_name(name)
        return self.kind if not name or name == self.kind else f"{self.kind}:{name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "session_id": self.session_id,
            "pid": self.pid,
            "pid_start": self.pid_start,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Source:
        if not isinstance(data, dict):
            raise ValueError("source is not an object")
        pid = data.get("pid", 0)
        start = data.get("pid_start")
        return cls(
            kind=str(data.get("kind", "agent")),
            name=str(data.get("name", "")),
            session_id=str(data.get("session_id", "")),
            pid=pid if isinstance(pid, int) else 0,
            pid_start=start if isinstance(start, int) else None,
        )


@dataclass
class QueueRecord:
    """One pending action as the queue stores it (the Preview's texts are blob references)."""

    id: str
    position: int
    label: str
    source_tool_name: str
    source: Source
    created_at: float
    applied_by: str = "preview"
    #: The details as stored (JSON): ``redline.workspace.details.details_from_json``
    #: with :attr:`kind` reads them typed.
    details: JsonValue = None
    preview: dict[str, Any] | None = None  # Preview.to_dict() with texts as {"blob": sha}
    files: list[str] = field(default_factory=list)
    # Real path -> the path it was asked for, where they differ (a symlinked folder).
    via: dict[str, str] = field(default_factory=dict)
    added: int = 0
    removed: int = 0
    state: str = "pending"
    stale: bool = False
    stale_reason: str = ""
    replaces: str | None = None
    applied_text: str | None = None
    version: int = FORMAT_VERSION
    # Origin.to_dict() with the proposal's texts as {"blob": sha} (derived actions only).
    origin: dict[str, Any] | None = None
    # An owner action: what its process serves besides a whole decision (``"parts"``).
    # Records written before this field existed have none: their owner is asked for whole
    # decisions only.
    owner_serves: list[str] = field(default_factory=list)
    # A revision of a discarded action (docs/review-conversation.md): the action it revises
    # and its revision number (2 for the first revision). Optional: absent means none.
    revision_of: str | None = None
    revision: int = 0
    #: What the action is (version 2; inferred for a version 1 record).
    kind: ActionKind = "custom"

    @property
    def edited(self) -> bool:
        """A person edited the proposal (the origin keeps the model's own)."""
        return self.origin is not None and self.origin.get("proposal") is not None

    @property
    def has_preview(self) -> bool:
        return self.preview is not None

    def orphaned(self) -> bool:
        """An owner action whose pushing process has ended: it can only be discarded."""
        return self.applied_by == "owner" and not self.source.alive()

    def to_dict(self) -> dict[str, Any]:
        data = self._fields()
        if self.via:  # only then: records written before `via` existed read back the same
            data["via"] = dict(self.via)
        if self.owner_serves:  # likewise
            data["owner_serves"] = list(self.owner_serves)
        if self.revision_of is not None:  # likewise (optional fields of format 1 and on)
            data["revision_of"] = self.revision_of
            data["revision"] = self.revision
        return data

    def _fields(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "id": self.id,
            "position": self.position,
            "label": self.label,
            "source_tool_name": self.source_tool_name,
            "source": self.source.to_dict(),
            "created_at": self.created_at,
            "applied_by": self.applied_by,
            "details": self.details,
            "preview": self.preview,
            "files": self.files,
            "added": self.added,
            "removed": self.removed,
            "state": self.state,
            "stale": self.stale,
            "stale_reason": self.stale_reason,
            "replaces": self.replaces,
            "applied_text": self.applied_text,
            "origin": self.origin,
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, data: Any, shown: str) -> QueueRecord:
        """Parse a verified record; raises QueueRecordError naming ``shown``."""
        if not isinstance(data, dict):
            raise QueueRecordError(shown, f"queue record {shown} is not a JSON object")
        version = data.get("version")
        check_version(version, shown)
        try:
            action_id = data["id"]
            position = data["position"]
            label = data["label"]
            created = data["created_at"]
            if not isinstance(action_id, str) or id_number(action_id) is None:
                raise ValueError(f"bad id {action_id!r}")
            if not isinstance(position, int) or isinstance(position, bool):
                raise ValueError("position is not a number")
            if not isinstance(label, str) or not isinstance(created, (int, float)):
                raise ValueError("label or created_at has the wrong type")
            applied_by = str(data.get("applied_by", "preview"))
            if applied_by not in ("preview", "owner"):
                raise ValueError(f"unknown applied_by {applied_by!r}")
            preview = data.get("preview")
            if preview is not None and not isinstance(preview, dict):
                raise ValueError("preview is not an object")
            files = data.get("files", [])
            if not isinstance(files, list):
                raise ValueError("files is not a list")
            via = data.get("via", {})
            if not isinstance(via, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in via.items()
            ):
                raise ValueError("via is not a map of paths")
            replaces = data.get("replaces")
            applied_text = data.get("applied_text")
            origin = data.get("origin")
            if origin is not None and not isinstance(origin, dict):
                raise ValueError("origin is not an object")
            serves = data.get("owner_serves", [])
            if not isinstance(serves, list) or not all(isinstance(s, str) for s in serves):
                raise ValueError("owner_serves is not a list of names")
            revision_of = data.get("revision_of")
            revision = data.get("revision", 0)
            if revision_of is not None and (
                not isinstance(revision_of, str) or id_number(revision_of) is None
            ):
                raise ValueError("revision_of is not an action id")
            if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
                raise ValueError("revision is not a number")
            source = Source.from_dict(data.get("source", {}))
            kind = data.get("kind")
            if kind is None:  # version 1: no kind recorded
                kind = infer_kind(
                    str(data.get("source_tool_name", "")),
                    preview is not None,
                    source.kind,
                    applied_by,
                )
            elif kind not in ACTION_KINDS:
                raise ValueError(f"unknown kind {kind!r}")
            return cls(
                id=action_id,
                position=position,
                label=label,
                source_tool_name=str(data.get("source_tool_name", "")),
                source=source,
                created_at=float(created),
                applied_by=applied_by,
                details=data.get("details"),
                preview=preview,
                files=[str(f) for f in files],
                via=dict(via),
                added=int(data.get("added", 0)),
                removed=int(data.get("removed", 0)),
                state=str(data.get("state", "pending")),
                stale=bool(data.get("stale", False)),
                stale_reason=str(data.get("stale_reason", "")),
                replaces=None if replaces is None else str(replaces),
                applied_text=None if applied_text is None else str(applied_text),
                version=int(version) if isinstance(version, int) else FORMAT_VERSION,
                origin=origin,
                owner_serves=list(serves),
                revision_of=revision_of,
                revision=revision if revision_of is not None else 0,
                kind=kind,
            )
        except (KeyError, ValueError, TypeError) as exc:
            cause = f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
            raise QueueRecordError(shown, f"queue record {shown} is damaged: {cause}") from None


def check_version(version: Any, shown: str) -> None:
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise QueueRecordError(shown, f"queue record {shown} has no valid version field")
    if version > FORMAT_VERSION:
        raise QueueRecordError(
            shown,
            f"queue record {shown} was written by a newer redline (format version {version}; "
            f"this redline reads up to {FORMAT_VERSION}). Upgrade redline to review it; it is "
            "left untouched.",
        )


@dataclass(frozen=True)
class Resolution:
    """How an action left the queue; kept in the bounded resolved log."""

    id: str
    decision: str
    reason: str = ""
    resolved_by: str = "person"
    rule: str | None = None
    result_text: str = ""
    is_error: bool = False
    replaced_by: str | None = None
    time: float = field(default_factory=time.time)
    record: dict[str, Any] | None = None  # the record as it was (for `pending show`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "id": self.id,
            "decision": self.decision,
            "reason": self.reason,
            "resolved_by": self.resolved_by,
            "rule": self.rule,
            "result_text": self.result_text,
            "is_error": self.is_error,
            "replaced_by": self.replaced_by,
            "time": self.time,
            "record": self.record,
        }

    def public(self) -> dict[str, Any]:
        """The JSON ``redline pending show`` prints (no stored record, ISO time)."""
        return {
            "decision": self.decision,
            "reason": self.reason,
            "resolved_by": self.resolved_by,
            "rule": self.rule,
            "result_text": self.result_text,
            "replaced_by": self.replaced_by,
            "time": iso_utc(self.time),
        }

    @classmethod
    def from_dict(cls, data: Any, shown: str) -> Resolution:
        if not isinstance(data, dict):
            raise QueueRecordError(shown, f"resolution {shown} is not a JSON object")
        check_version(data.get("version"), shown)
        try:
            record = data.get("record")
            rule = data.get("rule")
            replaced_by = data.get("replaced_by")
            return cls(
                id=str(data["id"]),
                decision=str(data["decision"]),
                reason=str(data.get("reason", "")),
                resolved_by=str(data.get("resolved_by", "person")),
                rule=None if rule is None else str(rule),
                result_text=str(data.get("result_text", "")),
                is_error=bool(data.get("is_error", False)),
                replaced_by=None if replaced_by is None else str(replaced_by),
                time=float(data.get("time", 0.0)),
                record=record if isinstance(record, dict) else None,
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise QueueRecordError(shown, f"resolution {shown} is damaged: {exc}") from None


# An owner request that names hunks (``only``) is written in this format version, so that a
# process of an older redline, which would apply or discard the whole action, refuses it as
# written by a newer one; a whole decision keeps version 1, which every owner serves (also
# now that records are version 2: a request is read by the owner, which may be older).
PARTS_REQUEST_VERSION = 2
WHOLE_REQUEST_VERSION = 1


@dataclass(frozen=True)
class OwnerRequest:
    """Another process asks the owner of an ``applied_by == "owner"`` action to resolve it.

    ``only`` names ``PATH#N`` / ``PATH`` parts (sent only to an owner whose record lists
    ``"parts"`` in ``owner_serves``); None: the whole action.
    """

    id: str
    decision: str
    reason: str
    resolved_by: str = "person"
    rule: str | None = None
    requested_by_pid: int = 0
    time: float = field(default_factory=time.time)
    only: tuple[str, ...] | None = None
    #: The redline surface that asked (``dashboard``, ``cli``, ``team``, …), for the log.
    via: str = ""
    #: Who decided when it is not this machine's user (a team queue reviewer, as its server
    #: recorded them), for the decisions log and the commit's trailer; "" for git's user.
    reviewer: str = ""
    #: The asking process finishes the queue's part once the resolution is logged (marks
    #: the id used, removes the record: :meth:`~redline.workspace.queue.claims.Claim.log`),
    #: so the owner may answer right after logging it. An older owner ignores it and
    #: finishes itself; an older asker never sets it.
    asker_finishes: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": WHOLE_REQUEST_VERSION if self.only is None else PARTS_REQUEST_VERSION,
            "id": self.id,
            "decision": self.decision,
            "reason": self.reason,
            "resolved_by": self.resolved_by,
            "rule": self.rule,
            "requested_by_pid": self.requested_by_pid,
            "time": self.time,
            "via": self.via,
        }
        if self.reviewer:
            data["reviewer"] = self.reviewer
        if self.only is not None:
            data["only"] = list(self.only)
        if self.asker_finishes:
            data["asker_finishes"] = True
        return data

    @classmethod
    def from_dict(cls, data: Any, shown: str) -> OwnerRequest:
        if not isinstance(data, dict):
            raise QueueRecordError(shown, f"owner request {shown} is not a JSON object")
        version = data.get("version")
        if version != PARTS_REQUEST_VERSION:
            check_version(version, shown)
        decision = data.get("decision")
        if decision not in ("apply", "discard"):
            raise QueueRecordError(shown, f"owner request {shown} has no valid decision")
        only = data.get("only")
        if only is not None and (
            not isinstance(only, list) or not only or not all(isinstance(o, str) for o in only)
        ):
            raise QueueRecordError(shown, f"owner request {shown} has no valid list of parts")
        if only is None and version == PARTS_REQUEST_VERSION:
            raise QueueRecordError(shown, f"owner request {shown} names no parts")
        rule = data.get("rule")
        return cls(
            id=str(data.get("id", "")),
            decision=str(decision),
            reason=str(data.get("reason", "")),
            resolved_by=str(data.get("resolved_by", "person")),
            rule=None if rule is None else str(rule),
            requested_by_pid=int(data.get("requested_by_pid", 0)),
            time=float(data.get("time", 0.0)),
            only=None if only is None else tuple(only),
            via=str(data.get("via", "")),
            reviewer=str(data.get("reviewer") or ""),
            asker_finishes=data.get("asker_finishes") is True,
        )
