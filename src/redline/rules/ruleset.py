"""The rules in force for one workspace: session rules, then the workspace's, then the user's.

Files are re-read on every evaluation (two small reads and a trust look-up, well under a
millisecond) and re-parsed only when their bytes changed, so a file edited while a session
runs takes effect at the next pushed action, without a watcher thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from redline.rules.model import ActionFacts, Decision, Rule, decide
from redline.rules.parse import RulesFileError, parse_rules

RULES_FILE_NAME = "rules.toml"
MAX_RULES_BYTES = 1024 * 1024


def user_rules_file() -> Path:
    from redline.paths import user_config_dir

    return user_config_dir() / RULES_FILE_NAME


def workspace_rules_file(root: Path) -> Path:
    from redline.workspace.state import state_dir

    return state_dir(root) / RULES_FILE_NAME


@dataclass(frozen=True)
class RulesSnapshot:
    """The rules in force at one moment, in evaluation order, and what was left out."""

    rules: tuple[Rule, ...]
    errors: tuple[str, ...] = ()
    workspace_trusted: bool = False
    # The workspace's rules file when it exists but is ignored (the workspace is not trusted).
    ignored_workspace_file: str | None = None

    def decide(self, facts: ActionFacts) -> Decision:
        return decide(self.rules, facts)

    @property
    def notes(self) -> tuple[str, ...]:
        """Errors and the ignored-file note, for the activity log and ``redline rules``."""
        notes = list(self.errors)
        if self.ignored_workspace_file is not None:
            notes.append(
                f"{self.ignored_workspace_file}: ignored, this workspace is not trusted "
                "(`redline trust` lets its rules count)"
            )
        return tuple(notes)


def _read_user_file() -> tuple[bytes | None, str]:
    path = user_rules_file()
    shown = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_RULES_BYTES + 1)
    except FileNotFoundError:
        return None, shown
    except IsADirectoryError:
        raise RulesFileError(shown, 0, "", "is a folder, not a rules file") from None
    except OSError as exc:
        raise RulesFileError(shown, 0, "", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_RULES_BYTES:
        raise RulesFileError(shown, 0, "", f"larger than {MAX_RULES_BYTES} bytes")
    return data, shown


def _read_workspace_file(root: Path) -> tuple[bytes | None, str]:
    from redline.workspace.state import StateFolderError, read_state_file

    shown = str(workspace_rules_file(root))
    try:
        return read_state_file(root, RULES_FILE_NAME, limit=MAX_RULES_BYTES), shown
    except StateFolderError as exc:
        raise RulesFileError(shown, 0, "", str(exc)) from None
    except NotADirectoryError:
        return None, shown  # no usable .redline/ folder: opening the session refuses it
    except OSError as exc:
        raise RulesFileError(shown, 0, "", f"cannot read: {exc.strerror or exc}") from None


class RuleSet:
    """Live rules for the workspace ``root``.

    ``trusted`` forces the workspace's trust (``--trust`` for one run); None asks
    :func:`redline.trust.is_trusted` at each evaluation, so trusting or
    revoking while a session runs takes effect too. Session rules (made in the dashboard)
    are held in memory and come first.
    """

    def __init__(self, root: Path, *, trusted: bool | None = None) -> None:
        self.root = Path(root)
        self._trusted = trusted
        self._lock = threading.Lock()
        self._session: list[Rule] = []
        self._cache: dict[str, tuple[bytes | None, tuple[Rule, ...], str | None]] = {}
        self._last_notes: tuple[str, ...] = ()
        self._listeners: list[Callable[[RulesSnapshot], None]] = []

    # -- session rules ------------------------------------------------------------
    def add_session_rule(self, rule: Rule) -> Rule:
        """Add an in-memory rule evaluated before every file rule; returns it as stored."""
        stored = replace(rule, origin="session", file="", line=0)
        with self._lock:
            if any(r.name == stored.name for r in self._session):
                raise ValueError(f"a session rule named {stored.name!r} already exists")
            self._session.append(stored)
        return stored

    def remove_session_rule(self, name: str) -> bool:
        with self._lock:
            before = len(self._session)
            self._session = [r for r in self._session if r.name != name]
            return len(self._session) != before

    @property
    def session_rules(self) -> tuple[Rule, ...]:
        with self._lock:
            return tuple(self._session)

    def on_notes_changed(self, listener: Callable[[RulesSnapshot], None]) -> None:
        """Call ``listener`` whenever the errors or the ignored-file note change."""
        self._listeners.append(listener)

    # -- evaluation ---------------------------------------------------------------
    def trusted(self) -> bool:
        if self._trusted is not None:
            return self._trusted
        from redline.trust import is_trusted

        return is_trusted(self.root)

    def snapshot(self) -> RulesSnapshot:
        """The rules in force now (files re-read; re-parsed only if they changed)."""
        trusted = self.trusted()
        errors: list[str] = []
        ignored: str | None = None
        workspace: tuple[Rule, ...] = ()
        try:
            data, shown = _read_workspace_file(self.root)
        except RulesFileError as exc:
            data, shown = None, exc.file
            if trusted:
                errors.append(str(exc))
            else:
                ignored = exc.file
        else:
            if data is not None:
                if trusted:
                    workspace = self._parsed("workspace", data, shown, errors)
                else:
                    ignored = shown
        user: tuple[Rule, ...] = ()
        try:
            udata, ushown = _read_user_file()
        except RulesFileError as exc:
            errors.append(str(exc))
        else:
            if udata is not None:
                user = self._parsed("user", udata, ushown, errors)
        with self._lock:
            session = tuple(self._session)
        snap = RulesSnapshot(
            rules=(*session, *workspace, *user),
            errors=tuple(errors),
            workspace_trusted=trusted,
            ignored_workspace_file=ignored,
        )
        notes = snap.notes
        changed = False
        with self._lock:
            if notes != self._last_notes:
                self._last_notes = notes
                changed = True
        if changed:
            for listener in list(self._listeners):
                listener(snap)
        return snap

    def decide(self, facts: ActionFacts) -> Decision:
        return self.snapshot().decide(facts)

    def _parsed(self, origin: str, data: bytes, shown: str, errors: list[str]) -> tuple[Rule, ...]:
        with self._lock:
            cached = self._cache.get(origin)
        if cached is not None and cached[0] == data:
            rules, error = cached[1], cached[2]
        else:
            try:
                rules, error = parse_rules(data, shown, origin), None  # type: ignore[arg-type]
            except RulesFileError as exc:
                rules, error = (), str(exc)
            with self._lock:
                self._cache[origin] = (data, rules, error)
        if error is not None:
            errors.append(error)
        return rules
