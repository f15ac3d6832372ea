"""The decisions log: every applied or discarded action of a workspace, kept for good.

``redline log`` reads it. The queue's resolved log is bounded (retention prunes it); this
one is append-only and never pruned, one JSON object a line. Like the used-id set it lives
in the user's state folder, not in the workspace (whoever can write the workspace could
rewrite it there): ``decisions/<sha256 of the workspace's resolved root>.jsonl``.

A line with ``"decision": "committed"`` is not a decision of its own: it names the commit
an apply lives in (and, for a hook's write, the bytes written and who assisted) since some
time after it was logged (a hook's allowed call, committed
once the agent's write was recorded; an action of a batch commit that an undo of another
action rewrote). :func:`read` folds it into that action's newest ``applied`` line (the
newest such line wins), so ``redline log`` and undo see one decision with its commit.

Appends take a ``flock`` on the file, write one line with ``O_APPEND`` and ``fsync`` it,
so concurrent redline processes never interleave lines. Reading skips (and counts) lines
that are not a decision: the file is data, never trusted to be well formed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from redline.paths import UserDirError, user_state_dir

DECISIONS_DIR = "decisions"
#: The fields of one decision, in the order ``redline log --json`` prints them.
FIELDS = (
    "id",
    "label",
    "source",
    "decision",
    "edited",
    "reason",
    "resolved_by",
    "reviewer",
    "time",
    "commit",
    "via",
    "rule",
    "parts",
    "applied",
    "assisted_by",
    "why",
)
MAX_LINE = 1024 * 1024


class DecisionsError(OSError):
    """The decisions log cannot be read or written; the message names the file and cause."""


@dataclass(frozen=True)
class DecisionRecord:
    """One line of the log. ``decision``: ``applied``, ``discarded`` or ``undone``;
    ``time``: seconds since the epoch; ``commit``: the commit made for it, or None."""

    id: str
    label: str
    source: str
    decision: str
    edited: bool
    reason: str
    resolved_by: str
    reviewer: str
    time: float
    commit: str | None = None
    files: tuple[str, ...] = ()
    #: The redline surface that made the decision (``dashboard``, ``cli``, ``hook``, …).
    via: str = ""
    #: The rule's name when a rule decided.
    rule: str | None = None
    #: ``"2 of 3 hunks"`` for an apply of some hunks.
    parts: str | None = None
    #: What an apply really wrote: ``{PATH: {"sha256": …, "blob": …}}`` (None: deleted;
    #: ``blob`` is ``git hash-object --path``'s id, None outside git).
    applied: dict[str, dict[str, str | None] | None] | None = None
    #: ``AGENT:MODEL`` of the edit's agent when both are known; else None and ``why``.
    assisted_by: str | None = None
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["files"] = list(self.files)
        return data

    @classmethod
    def from_dict(cls, data: object) -> DecisionRecord | None:
        """The record a line holds, or None when it is not one."""
        if not isinstance(data, dict):
            return None
        try:
            commit = data.get("commit")
            files = data.get("files", [])
            record = cls(
                id=_str(data["id"]),
                label=_str(data["label"]),
                source=_str(data["source"]),
                decision=_str(data["decision"]),
                edited=bool(data["edited"]) if isinstance(data["edited"], bool) else False,
                reason=_str(data.get("reason", "")),
                resolved_by=_str(data.get("resolved_by", "")),
                reviewer=_str(data.get("reviewer", "")),
                time=float(data["time"]),
                commit=None if commit is None else _str(commit),
                files=tuple(_str(f) for f in files) if isinstance(files, list) else (),
                via=_str(data.get("via", "")),
                rule=_opt(data.get("rule")),
                parts=_opt(data.get("parts")),
                applied=_applied(data.get("applied")),
                assisted_by=_opt(data.get("assisted_by")),
                why=_str(data.get("why", "")),
            )
        except (KeyError, TypeError, ValueError):
            return None
        return record


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _opt(value: object) -> str | None:
    return None if value is None else _str(value)


def _applied(value: object) -> dict[str, dict[str, str | None] | None] | None:
    """An ``applied`` map as the log holds it (anything malformed reads as None)."""
    if not isinstance(value, dict):
        return None
    found: dict[str, dict[str, str | None] | None] = {}
    for path, facts in value.items():
        if not isinstance(path, str):
            return None
        if facts is None:
            found[path] = None
        elif isinstance(facts, dict):
            found[path] = {
                "sha256": _opt(facts.get("sha256")),
                "blob": _opt(facts.get("blob")),
            }
        else:
            return None
    return found


def log_path(root: Path) -> Path:
    """Where ``root``'s decisions are kept (the state folder, keyed by the resolved root)."""
    key = hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()
    try:
        base = user_state_dir()
    except UserDirError as exc:
        raise DecisionsError(f"the decisions log has no home: {exc}") from None
    return base / DECISIONS_DIR / f"{key}.jsonl"


def append(root: Path, record: DecisionRecord) -> None:
    """Add ``record`` to ``root``'s log (one line, flushed to disk)."""
    path = log_path(root)
    line = json.dumps(record.to_dict(), ensure_ascii=True, separators=(",", ":")) + "\n"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(
            path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
    except OSError as exc:
        raise DecisionsError(
            f"cannot write the decisions log {path}: {exc.strerror or exc}"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = line.encode("ascii")
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except OSError as exc:
        raise DecisionsError(
            f"cannot write the decisions log {path}: {exc.strerror or exc}"
        ) from None
    finally:
        os.close(fd)


def read(root: Path) -> tuple[list[DecisionRecord], int]:
    """Every decision of ``root``, oldest first, and how many lines were not decisions."""
    path = log_path(root)
    records: list[DecisionRecord] = []
    bad = 0
    for raw in _lines(path):
        try:
            record = DecisionRecord.from_dict(json.loads(raw))
        except ValueError:
            record = None
        if record is None:
            bad += 1
        elif record.decision == COMMITTED:
            _link_commit(records, record)
        else:
            records.append(record)
    return records, bad


#: The ``decision`` of a line that only links a later commit to an earlier apply.
COMMITTED = "committed"


def _link_commit(records: list[DecisionRecord], link: DecisionRecord) -> None:
    from dataclasses import replace

    for at in range(len(records) - 1, -1, -1):
        if records[at].id == link.id and records[at].decision == "applied":
            # A hook's write also brings what it really wrote and who assisted.
            was = records[at]
            records[at] = replace(
                was,
                commit=link.commit if link.commit is not None else was.commit,
                applied=link.applied if link.applied is not None else was.applied,
                assisted_by=link.assisted_by or was.assisted_by,
                why=link.why if link.assisted_by or link.why else was.why,
            )
            return


def latest_applied(root: Path, action_id: str) -> DecisionRecord | None:
    """The newest ``applied`` decision of ``action_id``, if the log has one."""
    found: DecisionRecord | None = None
    for record in read(root)[0]:
        if record.id == action_id and record.decision == "applied":
            found = record
    return found


def _lines(path: Path) -> Iterator[bytes]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DecisionsError(
            f"cannot read the decisions log {path}: {exc.strerror or exc}"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        for raw in handle:
            if len(raw) > MAX_LINE:
                yield b"{}"  # counted as not a decision
            elif raw.strip():
                yield raw


def commit_of(root: Path, action_id: str) -> str | None:
    """The commit the newest ``applied`` decision of ``action_id`` made, if any."""
    found: str | None = None
    for record in read(root)[0]:
        if record.id == action_id and record.decision == "applied":
            found = record.commit
    return found


def living_in(root: Path, commit: str) -> list[DecisionRecord]:
    """The actions whose newest decision is an apply that lives in ``commit`` (not undone
    since), oldest first."""
    newest: dict[str, DecisionRecord] = {}
    for record in read(root)[0]:
        newest.pop(record.id, None)  # keeps the order of the newest decisions
        newest[record.id] = record
    return [r for r in newest.values() if r.decision == "applied" and r.commit == commit]
