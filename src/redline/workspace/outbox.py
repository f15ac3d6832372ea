"""Late outcomes for an agent's hook session: one outbox folder per session in the user's
state folder (``$XDG_STATE_HOME/redline/outbox/<agent>/<hash of the session id>/``).

When a hook hands its action over (no decision within ``[hooks] wait_seconds``), the agent
is told the change is still pending. What a person decides later — applied, discarded with
the reason, applied in part, undone — is posted here at decision time (one file per
outcome, written whole by a rename), and the agent hears it at its next hook call of that
session (``redline hook``: a prompt-time event, or Claude Code's pre-tool call).

A hook call reads this one folder and nothing else (never the queue's resolved log). It
claims each entry by renaming it to a name carrying its pid and start time; only one
process's rename of a file can succeed, so two hook processes of one session never both
tell it. The claimed files are removed once the answer is printed; a claim whose process
died before that is taken over by the next call, and an entry older than
:data:`KEEP_SECONDS` is dropped unread.
"""

from __future__ import annotations

import contextlib
import os
import time

from redline import fastjson
from redline.workspace.procs import is_alive, process_start_time

TYPE_CHECKING = False
if TYPE_CHECKING:  # every Path here comes from redline.paths: a hook call with nothing to
    from pathlib import Path  # tell never imports pathlib (docs/performance.md)

_now = time.time

FOLDER = "outbox"
SUFFIX = ".json"
CLAIMED = ".claimed"
#: Entries older than this are dropped, never told.
KEEP_SECONDS = 7 * 86400
#: The outcomes an entry tells.
OUTCOMES: tuple[str, ...] = (
    "applied",
    "discarded",
    "applied_in_part",
    "discarded_in_part",
    "undone",
)
# Checked with str methods, not patterns: `re` is not loaded on a hook call's path.
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") | _LOWER
_AGENT_CHARS = frozenset("0123456789_-") | _LOWER
_PLAIN_CHARS = _ALNUM | frozenset("_-")


def _is_agent(name: str) -> bool:
    """``[a-z][a-z0-9_-]{0,31}``."""
    return 1 <= len(name) <= 32 and name[0] in _LOWER and _AGENT_CHARS.issuperset(name)


def _is_plain(session_id: str) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9_-]{0,127}``, never "h-…" (the hashed ones' prefix): a
    session id used as a folder name as it is."""
    return (
        1 <= len(session_id) <= 128
        and session_id[0] in _ALNUM
        and _PLAIN_CHARS.issuperset(session_id)
        and not session_id.startswith("h-")
    )


def session_folder(agent: str, session_id: str) -> Path:
    """The outbox of ``agent``'s session ``session_id``: named by the id itself when it is
    a plain one (the agents send UUIDs), else by its hash (any text makes a safe name)."""
    from redline.paths import user_state_dir

    return user_state_dir() / FOLDER / agent / _name(agent, session_id)


def _name(agent: str, session_id: str) -> str:
    if not _is_agent(agent):
        raise ValueError(f"not an agent name: {agent!r}")
    name = session_id
    if not _is_plain(session_id):
        import hashlib  # only here: the usual id needs no hashing on the hook's path

        name = "h-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
    return name


class Late:
    """One outcome the agent has not heard yet (a plain class: no dataclass code generation
    on the hook's path)."""

    __slots__ = (
        "action_id",
        "files",
        "label",
        "notes",
        "outcome",
        "parts",
        "reason",
        "remaining",
        "time",
        "workspace",
    )

    def __init__(
        self,
        action_id: str,
        label: str,
        outcome: str,
        reason: str = "",
        files: tuple[str, ...] = (),
        remaining: str = "",
        parts: str = "",
        workspace: str = "",
        time: float | None = None,
        notes: str = "",
    ) -> None:
        self.action_id = action_id
        self.label = label
        self.outcome = outcome
        self.reason = reason
        self.files = tuple(files)
        #: The action left pending with the rest of a partial decision.
        self.remaining = remaining
        #: ``"2 of 3 hunks"`` for a partial decision.
        self.parts = parts
        self.workspace = workspace
        self.time = _now() if time is None else time
        #: The reviewer's comments (docs/review-conversation.md), on lines of their own.
        self.notes = notes

    def __repr__(self) -> str:
        return f"Late({self.action_id!r}, {self.outcome!r})"

    @property
    def text(self) -> str:
        """What the agent reads: the outcome, then the reviewer's comments, if any."""
        told = self._told()
        return f"{told}\n{self.notes}" if self.notes.strip() else told

    def _told(self) -> str:
        head = f"{self.action_id} ({self.label}), which you proposed earlier,"
        files = ", ".join(self.files) or "the files it touched"
        reread = f"re-read {files} before editing it"
        reason = self.reason.strip() or "no reason given"
        rest = f"; {self.remaining} holds the rest, still pending review" if self.remaining else ""
        parts = f" ({self.parts})" if self.parts else ""
        if self.outcome == "applied":
            return f"{head} was applied — {reread}"
        if self.outcome == "applied_in_part":
            return f"{head} was applied in part{parts} — {reread}{rest}"
        if self.outcome == "discarded_in_part":
            return f"{head} was discarded in part{parts}: {reason}{rest}"
        if self.outcome == "undone":
            return f"{head} was applied, then undone — {reread}"
        return f"{head} was discarded: {reason}"

    def to_json(self) -> dict[str, object]:
        return {
            "action_id": self.action_id,
            "label": self.label,
            "outcome": self.outcome,
            "reason": self.reason,
            "files": list(self.files),
            "remaining": self.remaining,
            "parts": self.parts,
            "workspace": self.workspace,
            "time": self.time,
            "notes": self.notes,
        }

    @classmethod
    def from_json(cls, data: object) -> Late | None:
        if not isinstance(data, dict):
            return None
        strings = (
            "action_id",
            "label",
            "outcome",
            "reason",
            "remaining",
            "parts",
            "workspace",
            "notes",
        )
        if not all(isinstance(data.get(key, ""), str) for key in strings):
            return None
        files, when = data.get("files", []), data.get("time")
        if (
            data.get("outcome") not in OUTCOMES
            or not isinstance(files, list)
            or not all(isinstance(f, str) for f in files)
            or not isinstance(when, int | float)
            or isinstance(when, bool)
        ):
            return None
        return cls(
            action_id=str(data.get("action_id", "")),
            label=str(data.get("label", "")),
            outcome=str(data["outcome"]),
            reason=str(data.get("reason", "")),
            files=tuple(files),
            remaining=str(data.get("remaining", "")),
            parts=str(data.get("parts", "")),
            workspace=str(data.get("workspace", "")),
            time=float(when),
            notes=str(data.get("notes", "")),
        )


def post(agent: str, session_id: str, late: Late) -> Path | None:
    """Put ``late`` in the session's outbox (best effort: None when it cannot be written)."""
    try:
        folder = session_folder(agent, session_id)
    except ValueError:
        return None
    import re  # here only: writing a late outcome is off a pass-through's path

    safe_id = re.sub(r"[^A-Za-z0-9@._-]", "_", late.action_id)[:80]
    name = f"{time.time_ns():020d}-{os.getpid()}-{safe_id}-{late.outcome}{SUFFIX}"
    for attempt in range(2):
        try:
            os.makedirs(folder.parent.parent, mode=0o700, exist_ok=True)
            os.makedirs(folder, mode=0o700, exist_ok=True)
            temporary = folder / f".{name}.tmp"
            temporary.write_text(fastjson.dumps(late.to_json()) + "\n", encoding="utf-8")
            os.replace(temporary, folder / name)
            break
        except FileNotFoundError:
            if attempt:  # removed twice under us: give up (best effort)
                return None
            continue  # a prune removed the empty folder meanwhile: make it again
        except OSError:
            return None
    prune(folder.parent.parent)
    return folder / name


def prune(outbox: Path, now: float | None = None) -> None:
    """Drop every session's entries older than :data:`KEEP_SECONDS`, and session folders
    empty for an hour (a younger one may be about to get its first entry)."""
    moment = time.time() if now is None else now
    cutoff = moment - KEEP_SECONDS
    with contextlib.suppress(OSError):
        for agent in os.scandir(outbox):
            if not agent.is_dir(follow_symlinks=False):
                continue
            for session in os.scandir(agent.path):
                if not session.is_dir(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError):
                    left = 0
                    for entry in os.scandir(session.path):
                        if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                            with contextlib.suppress(OSError):
                                os.unlink(entry.path)
                                continue
                        left += 1
                    if not left and session.stat(follow_symlinks=False).st_mtime < moment - 3600:
                        os.rmdir(session.path)


class Taken:
    """The entries one hook call claimed: tell them, then :meth:`done` (or :meth:`give_back`
    when the answer could not carry them)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.entries: list[tuple[str, Late]] = []

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def text(self) -> str:
        return "\n".join(late.text for _name, late in self.entries)

    def done(self) -> None:
        """The answer carrying them is printed: they are told, for good."""
        for claimed, _late in self.entries:
            with contextlib.suppress(OSError):
                os.unlink(self._path(claimed))
        self.entries = []

    def give_back(self) -> None:
        """Not told after all: back in the outbox for the session's next call."""
        for claimed, _late in self.entries:
            original = claimed.split(".", 4)[-1]
            with contextlib.suppress(OSError):
                os.rename(self._path(claimed), self._path(original))
        self.entries = []

    def _path(self, name: str) -> Path:
        assert self.folder is not None
        return self.folder / name


def _claimer(name: str) -> tuple[int, int | None] | None:
    # ".claimed.<pid>.<start or ->.<original name>"
    parts = name.split(".", 4)
    if len(parts) != 5 or f".{parts[1]}" != CLAIMED or not parts[2].isdigit():
        return None
    start = int(parts[3]) if parts[3].isdigit() else None
    return int(parts[2]), start


def take(agent: str, session_id: str, *, now: float | None = None) -> Taken:
    """Claim every entry of the session's outbox not claimed by a live process, oldest
    first. Costs one ``listdir`` when there is nothing (the usual case)."""
    from redline.paths import user_state_dir_text

    try:
        text = os.path.join(user_state_dir_text(), FOLDER, agent, _name(agent, session_id))
        names = os.listdir(text)
    except (OSError, ValueError):
        return Taken()
    if not names:
        return Taken()
    folder = session_folder(agent, session_id)
    taken = Taken(folder)
    pid = os.getpid()
    start = process_start_time(pid)
    mine = f"{CLAIMED}.{pid}.{start if start is not None else '-'}."
    cutoff = (time.time() if now is None else now) - KEEP_SECONDS
    for name in sorted(names, key=lambda n: n.split(".", 4)[-1] if n.startswith(CLAIMED) else n):
        if name.startswith(CLAIMED):
            claimer = _claimer(name)
            if claimer is None or is_alive(*claimer):
                continue  # someone is telling it right now
            original = name.split(".", 4)[-1]  # its teller died before the answer went out
        elif name.startswith(".") or not name.endswith(SUFFIX):
            continue
        else:
            original = name
        claimed = mine + original
        try:
            os.rename(folder / name, folder / claimed)
        except OSError:
            continue  # another call of the session claimed it first
        late = _read(folder / claimed)
        if late is None or late.time < cutoff:
            with contextlib.suppress(OSError):
                os.unlink(folder / claimed)
            continue
        taken.entries.append((claimed, late))
    return taken


def _read(path: Path) -> Late | None:
    try:
        return Late.from_json(fastjson.loads(path.read_bytes().decode("utf-8")))
    except (OSError, ValueError):
        return None


__all__ = ["KEEP_SECONDS", "OUTCOMES", "Late", "Taken", "post", "prune", "session_folder", "take"]
