"""Review at the grain of hunks: split a preview, select parts of it, apply or drop them.

A preview's *units* are what a person can take or leave on their own:

- every ``@@`` block of a modify's unified diff at :data:`HUNK_CONTEXT` (3) lines of
  context (:func:`redline.workspace.diffing.grouped_opcodes`), numbered per file from 1 in
  file order and addressed ``PATH#N`` — the blocks ``redline pending show`` prints,
  whatever context the dashboard shows; a block holding several change blocks is one unit;
- every creation, deletion and rename, and a modify whose lines do not change (only its
  encoding does), as one whole unit addressed ``PATH`` (the new path for a rename).

:func:`split_for_apply` turns a selection into the preview that writes exactly those
units (against the same base, so safe apply's stale check still holds) and the preview
that remains, re-based on the files as they are after that write.
:func:`split_for_discard` drops a selection and keeps the rest against the same base.
:func:`edit_file` replaces one file's proposed text with a person's text.

Everything here is pure: no file is read or written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from redline.workspace.diffing import grouped_opcodes, opcodes
from redline.workspace.preview import (
    FileChange,
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    encode_text,
    sha256_bytes,
)
from redline.workspace.pyparse import parse_module

__all__ = [
    "HUNK_CONTEXT",
    "HUNK_NUMBERING",
    "EditError",
    "EditedPreview",
    "HunkError",
    "Origin",
    "PartialApply",
    "PartialDiscard",
    "SelectionError",
    "Unit",
    "UnitKind",
    "edit_file",
    "hunk_units",
    "line_range",
    "parse_selection",
    "python_warning",
    "split_for_apply",
    "split_for_discard",
    "unit_numbers",
]

UnitKind = Literal["hunk", "create", "delete", "rename", "file"]

#: Context lines of the unified diff whose ``@@`` blocks are the hunks ``PATH#N`` numbers.
HUNK_CONTEXT = 3
#: How hunks are numbered, stored with the team queue's hunks and decisions: a follower
#: refuses parts numbered another way. 1: every change block without context (redline
#: before 0.x); 2: the ``@@`` blocks at :data:`HUNK_CONTEXT` lines of context.
HUNK_NUMBERING = 2


class HunkError(ValueError):
    """A selection or an edit cannot be turned into a preview; the message says why."""


class SelectionError(HunkError):
    """A ``--only`` value names no file or hunk of the action."""


class EditError(HunkError):
    """A person's text cannot replace a file's proposed text."""


@dataclass(frozen=True)
class Unit:
    """One part of a preview a person can take or leave on its own.

    ``old_start``/``old_end`` and ``new_start``/``new_end`` are 0-based, end-exclusive
    line indexes into the change's old and new text (all 0 for whole units): from the
    first changed line of the ``@@`` block to its last. ``block`` is the whole ``@@``
    block with its context, as (old start, old end, new start, new end).
    """

    path: str
    number: int | None
    kind: UnitKind
    change_index: int
    old_start: int = 0
    old_end: int = 0
    new_start: int = 0
    new_end: int = 0
    old_path: str | None = None
    block: tuple[int, int, int, int] = (0, 0, 0, 0)

    @property
    def address(self) -> str:
        """``PATH#N`` for a hunk, ``PATH`` for a whole unit."""
        return self.path if self.number is None else f"{self.path}#{self.number}"

    @property
    def key(self) -> tuple[int, int | None]:
        return (self.change_index, self.number)

    @property
    def is_hunk(self) -> bool:
        return self.number is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able view for lists and events: address, kind, 1-based line range."""
        return {
            "address": self.address,
            "path": self.path,
            "hunk": self.number,
            "kind": self.kind,
            "lines": line_range(self) if self.number is not None else None,
            "old_path": self.old_path,
            "removed": self.old_end - self.old_start,
            "added": self.new_end - self.new_start,
        }

    def describe(self) -> str:
        """How the model reads this unit: ``a.py hunk 2 (lines 4–6)``, ``b.py (new file)``."""
        if self.number is not None:
            return f"{self.path} hunk {self.number} (lines {line_range(self)})"
        if self.kind == "create":
            return f"{self.path} (new file)"
        if self.kind == "delete":
            return f"{self.path} (file deletion)"
        if self.kind == "rename":
            return f"{self.path} (rename from {self.old_path})"
        return f"{self.path} (whole file)"


def line_range(unit: Unit) -> str:
    """The unit's ``@@`` block in the file its preview is based on, as ``a–b`` (U+2013):
    the lines of the block's ``-`` side, context included (1-based, ``4–4`` for one line),
    as its ``@@`` header says. A file that had no lines reads as the new side's lines.
    """
    old_start, old_end, new_start, new_end = unit.block
    if old_end > old_start:
        return f"{old_start + 1}–{old_end}"
    return f"{new_start + 1}–{max(new_end, new_start + 1)}"


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _file_units(index: int, change: FileChange) -> list[Unit]:
    if isinstance(change, FileCreate):
        return [Unit(change.path, None, "create", index)]
    if isinstance(change, FileDelete):
        return [Unit(change.path, None, "delete", index)]
    if isinstance(change, FileRename):
        return [Unit(change.new_path, None, "rename", index, old_path=change.old_path)]
    units = []
    codes = opcodes(_lines(change.old_text), _lines(change.new_text))
    for number, group in enumerate(grouped_opcodes(codes, HUNK_CONTEXT), start=1):
        changed = [code for code in group if code[0] != "equal"]
        first, last = changed[0], changed[-1]
        block = (group[0][1], group[-1][2], group[0][3], group[-1][4])
        units.append(
            Unit(
                change.path,
                number,
                "hunk",
                index,
                first[1],
                last[2],
                first[3],
                last[4],
                block=block,
            )
        )
    return units or [Unit(change.path, None, "file", index)]


def unit_numbers(old: Sequence[str], new: Sequence[str]) -> dict[tuple[int, int], int]:
    """Each change block of ``opcodes(old, new)``, by its (old start, new start), with
    the number of the hunk (``PATH#N``) it belongs to: views that show more context than
    :data:`HUNK_CONTEXT` label their rows with these."""
    codes = opcodes(list(old), list(new))
    numbers: dict[tuple[int, int], int] = {}
    for number, group in enumerate(grouped_opcodes(codes, HUNK_CONTEXT), start=1):
        for tag, i1, _i2, j1, _j2 in group:
            if tag != "equal":
                numbers[(i1, j1)] = number
    return numbers


def hunk_units(preview: Preview) -> tuple[Unit, ...]:
    """Every unit of ``preview``, in change order and, within a file, in line order."""
    units: list[Unit] = []
    for index, change in enumerate(preview.changes):
        units.extend(_file_units(index, change))
    return tuple(units)


# -- selections ---------------------------------------------------------------

_NUMBERS = re.compile(r"([0-9]+)(?:-([0-9]+))?")


_Files = Mapping[str, tuple[list[Unit], list[Unit]]]


def _by_path(units: Sequence[Unit]) -> _Files:
    """Each path (both ends of a rename) with (its units, its numbered hunks)."""
    out: dict[str, tuple[list[Unit], list[Unit]]] = {}
    for unit in units:
        for path in (unit.path, unit.old_path):
            if path is not None:
                every, hunks = out.setdefault(path, ([], []))
                every.append(unit)
                if unit.number is not None:
                    hunks.append(unit)
    return out


def _item(text: str, files: _Files) -> list[Unit] | None:
    """The units one selection item names, None if it names nothing; raises on a bad number."""
    candidates = list(dict.fromkeys((text, text.strip(), text.strip().removeprefix("./"))))
    for candidate in candidates:
        if candidate in files:
            return list(files[candidate][0])
    for candidate in candidates:
        path, sep, numbers = candidate.rpartition("#")
        if sep and path in files:
            break
    else:
        return None
    shown = text.strip()
    match = _NUMBERS.fullmatch(numbers)
    units, hunks = files[path]
    if match is None:
        raise SelectionError(
            f"{shown!r}: after '#' comes a hunk number (or a range such as 2-5), not {numbers!r}."
        )
    if not hunks:
        raise SelectionError(
            f"{shown!r}: {units[0].describe()} is taken or left as a whole; "
            f"select it as {path!r}, without a hunk number."
        )
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    if first > last:
        raise SelectionError(f"{shown!r}: the range {first}-{last} runs backwards.")
    if first < 1 or last > len(hunks):
        missing = first if first < 1 or first > len(hunks) else last
        raise SelectionError(
            f"{shown!r}: {path} has {_count(len(hunks))} (1–{len(hunks)}); "
            f"there is no hunk {missing}."
        )
    return hunks[first - 1 : last]


def _count(n: int) -> str:
    return f"{n} hunk" if n == 1 else f"{n} hunks"


def _parse_value(value: str, files: _Files, shown: str) -> list[Unit]:
    pieces = value.split(",")
    out: list[Unit] = []
    start = 0
    while start < len(pieces):
        # The longest run of comma-separated pieces that names something wins, so a file
        # name containing commas (or a whole value naming one item) is read as one item.
        for stop in range(len(pieces), start + 1, -1):
            try:
                found = _item(",".join(pieces[start:stop]), files)
            except SelectionError:
                continue  # a shorter run may still name something; its error is clearer
            if found is not None:
                out.extend(found)
                start = stop
                break
        else:
            item = pieces[start]
            start += 1
            if not item.strip():
                continue
            found = _item(item, files)  # raises the error about this one item
            if found is not None:
                out.extend(found)
                continue
            raise SelectionError(
                f"{item.strip()!r} names no file of this action; it touches {shown}. "
                "Select a whole file as PATH or one hunk as PATH#N."
            )
    return out


def parse_selection(preview: Preview, values: Iterable[str]) -> tuple[Unit, ...]:
    """The units named by ``--only`` values, in preview order, without repeats.

    Each value is one item or a comma-separated list of items. An item is ``PATH`` (the
    whole file: every hunk of a modify, or the creation, deletion or rename), ``PATH#N``
    (hunk N) or ``PATH#N-M`` (hunks N to M). An item that is exactly a path of the action
    always means that whole file, and ``#`` is split from the right, so names containing
    ``#`` work. Commas: the longest comma-joined run that names a path of the action is
    taken, so ``a,b.py`` selects the file ``a,b.py`` when the action touches it. A rename
    may be named by either path. Raises :class:`SelectionError` naming the bad item.
    """
    units = hunk_units(preview)
    files = _by_path(units)
    shown = ", ".join(dict.fromkeys(unit.path for unit in units)) or "no files"
    chosen: set[tuple[int, int | None]] = set()
    empty = True
    for value in values:
        if not isinstance(value, str):
            raise SelectionError(f"a selection item must be text, not {type(value).__name__}")
        for unit in _parse_value(value, files, shown):
            empty = False
            chosen.add(unit.key)
    if empty:
        raise SelectionError("The selection is empty: name at least one PATH or PATH#N.")
    return tuple(unit for unit in units if unit.key in chosen)


# -- splitting ----------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """What a derived action (remaining, rebased, edited) keeps of the model's proposal.

    ``label`` and ``total`` (its unit count) are the original action's, so a remaining
    action's label is built from them and never nested. ``proposal`` is the model's own
    preview, kept once a person edits it, so the model can be told what was changed.
    """

    label: str
    total: int
    proposal: Preview | None = None

    @property
    def edited(self) -> bool:
        return self.proposal is not None

    def remaining_label(self, remaining: int) -> str:
        return f"{self.label} (remaining: {remaining} of {self.total} hunks)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "total": self.total,
            "proposal": None if self.proposal is None else self.proposal.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Origin:
        label, total, proposal = data.get("label"), data.get("total"), data.get("proposal")
        if not isinstance(label, str) or not label.strip():
            raise ValueError("an action origin needs a non-empty 'label'")
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            raise ValueError("an action origin needs a 'total' count of at least 0")
        if proposal is not None and not isinstance(proposal, Mapping):
            raise ValueError("an action origin's 'proposal' must be a preview or null")
        return cls(label, total, None if proposal is None else Preview.from_dict(proposal))

    def with_proposal(self, proposal: Preview) -> Origin:
        """This origin once a person edits: the model's proposal is kept from the first edit."""
        return self if self.proposal is not None else Origin(self.label, self.total, proposal)

    @classmethod
    def of(cls, label: str, preview: Preview) -> Origin:
        """The origin of an action proposed by the model (or a tool) as it stands."""
        return cls(label, len(hunk_units(preview)))


def _take(change: FileModify, units: Sequence[Unit], keys: set[tuple[int, int | None]]) -> str:
    """``change``'s old text with only the hunks (``units``, in order) in ``keys`` applied."""
    old = _lines(change.old_text)
    new = _lines(change.new_text)
    out: list[str] = []
    at = 0
    for unit in units:
        out.extend(old[at : unit.old_start])
        if unit.key in keys:
            out.extend(new[unit.new_start : unit.new_end])
        else:
            out.extend(old[unit.old_start : unit.old_end])
        at = unit.old_end
    out.extend(old[at:])
    return "".join(out)


def _encoded(text: str, encoding: str, path: str) -> bytes:
    try:
        return encode_text(text, encoding)
    except (LookupError, UnicodeError) as exc:
        raise HunkError(f"{path}: the text cannot be encoded as {encoding}: {exc}") from None


@dataclass(frozen=True)
class PartialApply:
    """A selection to write now and the rest, re-based on the files after that write.

    ``selected`` has the original base (apply it through safe apply). ``remaining`` is
    based on the files as ``selected`` leaves them: its modifies' ``old_text`` is the
    partially applied text and ``old_sha256`` the hash of its encoded bytes.
    """

    original: Preview
    selected: Preview
    remaining: Preview
    selected_units: tuple[Unit, ...]
    total: int

    @property
    def covers_all(self) -> bool:
        """Every unit was selected: this is the whole action (resolve it as a whole)."""
        return len(self.selected_units) == self.total

    @property
    def remaining_units(self) -> tuple[Unit, ...]:
        """The remaining action's units, numbered as it numbers them, lines as on disk."""
        return hunk_units(self.remaining)


@dataclass(frozen=True)
class PartialDiscard:
    """A selection dropped and the rest kept pending against the same base."""

    original: Preview
    remaining: Preview
    discarded_units: tuple[Unit, ...]
    total: int

    @property
    def covers_all(self) -> bool:
        return len(self.discarded_units) == self.total

    @property
    def remaining_units(self) -> tuple[Unit, ...]:
        return hunk_units(self.remaining)


def _checked(
    units: Sequence[Unit], selection: Iterable[Unit]
) -> tuple[tuple[Unit, ...], set[tuple[int, int | None]]]:
    known = {unit.key: unit for unit in units}
    keys: set[tuple[int, int | None]] = set()
    for unit in selection:
        if known.get(unit.key) != unit:
            raise SelectionError(
                f"{unit.address} is not a part of this action as it stands (it may have "
                "been re-based or edited); select again from its current hunks."
            )
        keys.add(unit.key)
    if not keys:
        raise SelectionError("The selection is empty: name at least one PATH or PATH#N.")
    return tuple(unit for unit in units if unit.key in keys), keys


def _split(
    preview: Preview, all_units: Sequence[Unit], keys: set[tuple[int, int | None]]
) -> tuple[list[FileChange], list[FileChange]]:
    """(changes writing exactly ``keys`` from the base, changes doing the rest afterwards)."""
    taken: list[FileChange] = []
    rest: list[FileChange] = []
    per_change: dict[int, list[Unit]] = {}
    for unit in all_units:
        per_change.setdefault(unit.change_index, []).append(unit)
    for index, change in enumerate(preview.changes):
        units = per_change[index]
        chosen = [unit for unit in units if unit.key in keys]
        if len(chosen) == len(units):
            taken.append(change)
        elif not chosen:
            rest.append(change)
        else:
            assert isinstance(change, FileModify)
            middle = _take(change, units, keys)
            data = _encoded(middle, change.encoding, change.path)
            taken.append(
                FileModify(change.path, change.old_sha256, change.old_text, middle, change.encoding)
            )
            rest.append(
                FileModify(
                    change.path, sha256_bytes(data), middle, change.new_text, change.encoding
                )
            )
    return taken, rest


def split_for_apply(preview: Preview, selection: Iterable[Unit]) -> PartialApply:
    """Write exactly ``selection`` now; keep the rest pending, re-based on the result.

    Selecting every unit gives back ``preview`` itself as ``selected`` (and an empty
    ``remaining``), so it equals the whole apply. Raises :class:`HunkError` when a unit
    is not one of ``preview``'s or a partially applied text cannot be encoded.
    """
    units = hunk_units(preview)
    chosen, keys = _checked(units, selection)
    total = len(units)
    if len(chosen) == total:
        return PartialApply(preview, preview, Preview(), chosen, total)
    taken, rest = _split(preview, units, keys)
    return PartialApply(
        preview, Preview(taken, via=preview.via), Preview(rest, via=preview.via), chosen, total
    )


def split_for_discard(preview: Preview, selection: Iterable[Unit]) -> PartialDiscard:
    """Drop ``selection``; the rest stays pending against the unchanged base."""
    units = hunk_units(preview)
    chosen, keys = _checked(units, selection)
    if len(chosen) == len(units):
        return PartialDiscard(preview, Preview(), chosen, len(units))
    kept = {unit.key for unit in units} - keys
    taken, _ = _split(preview, units, kept)
    return PartialDiscard(preview, Preview(taken, via=preview.via), chosen, len(units))


# -- edits --------------------------------------------------------------------


@dataclass(frozen=True)
class EditedPreview:
    """A preview with one file's proposed text replaced by a person's text.

    ``changed`` is False when the text equals the proposal (saving it changes nothing).
    ``warnings`` say what to tell the person before applying (a ``.py`` file that no
    longer parses); the edit is allowed anyway.
    """

    preview: Preview
    path: str
    changed: bool
    warnings: tuple[str, ...] = field(default=())


def _line_ending(text: str) -> str | None:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf == text.count("\n") else None


def python_warning(path: str, text: str) -> str | None:
    """Why ``text`` is not valid Python when ``path`` is a Python file, else None."""
    if not path.endswith((".py", ".pyi")):
        return None
    try:
        parse_module(text)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return (
            f"{path} does not parse as Python after your edit ({where}{exc.msg}); "
            "it can still be applied."
        )
    except ValueError as exc:  # e.g. NUL characters
        return f"{path} does not parse as Python after your edit ({exc}); it can still be applied."
    return None


def edit_file(
    preview: Preview, path: str, text: str, *, keep_line_endings: bool = True
) -> EditedPreview:
    """Replace the proposed text of ``path`` (a modify or a creation) with ``text``.

    The edited change keeps its base (``old_text``/``old_sha256``) and encoding, so its
    diff is now against the person's text and safe apply's stale check still holds.
    With ``keep_line_endings``, text from an editor that uses ``\\n`` everywhere is
    written back with ``\\r\\n`` when the proposal used ``\\r\\n`` throughout.
    Raises :class:`EditError` for an unknown path, a deletion or rename, or text the
    file's encoding cannot hold.
    """
    if not isinstance(text, str):
        raise EditError(f"{path}: the edited text must be text, not {type(text).__name__}")
    changes = list(preview.changes)
    for index, change in enumerate(changes):
        if change.path != path and path not in change.paths:
            continue
        if not isinstance(change, (FileModify, FileCreate)):
            what = "deleted" if isinstance(change, FileDelete) else "renamed"
            raise EditError(
                f"{path} is {what} by this action; only a file's new content can be edited."
            )
        if keep_line_endings and "\r" not in text and _line_ending(change.new_text) == "\r\n":
            text = text.replace("\n", "\r\n")
        _encoded_for_edit(text, change.encoding, path)
        if text == change.new_text:
            return EditedPreview(preview, path, changed=False)
        if isinstance(change, FileModify):
            changes[index] = FileModify(
                change.path, change.old_sha256, change.old_text, text, change.encoding
            )
        else:
            changes[index] = FileCreate(change.path, text, change.encoding)
        warning = python_warning(path, text)
        return EditedPreview(
            Preview(changes, via=preview.via),
            path,
            changed=True,
            warnings=(warning,) if warning else (),
        )
    shown = ", ".join(preview.paths) or "no files"
    raise EditError(f"{path} is not changed by this action; it touches {shown}.")


def _encoded_for_edit(text: str, encoding: str, path: str) -> None:
    try:
        encode_text(text, encoding)
    except (LookupError, UnicodeError) as exc:
        bad = ""
        if isinstance(exc, UnicodeEncodeError):
            line = text.count("\n", 0, exc.start) + 1
            bad = f" ({text[exc.start : exc.start + 1]!r} on line {line})"
        raise EditError(
            f"{path} is written as {encoding}, which cannot hold your text{bad}; "
            "nothing was changed."
        ) from None
