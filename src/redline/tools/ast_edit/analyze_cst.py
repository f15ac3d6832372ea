"""One file the libcst way: locate, parse, match, rewrite, check.

:func:`redline.tools.ast_edit.analyze.analyze` comes here (and imports libcst) only for a
rewrite with a match, or a search the `ast` way cannot answer for sure. Runs in worker
processes, so it takes plain data (text and compiled operations) and returns a picklable
:class:`FileResult` with an empty path (the caller fills it in).
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, replace

import libcst as cst

from redline.tools.ast_edit.ast_match import Located, node_may_match
from redline.tools.ast_edit.locate import KIND_PREFIX, Locator, line_starts, text_has_words
from redline.tools.ast_edit.match import (
    Found,
    find_expression_matches,
    find_statement_matches,
)
from redline.tools.ast_edit.ops import CompiledOp
from redline.tools.ast_edit.positions import Positions
from redline.tools.ast_edit.results import FileResult, Match, splice
from redline.tools.ast_edit.rewrite import match_span, render
from redline.tools.ast_edit.shape import fits
from redline.workspace.pyparse import parse_module

_RECURSION = "too deeply nested for the parser (recursion limit); not searched"


_TOO_DEEP = ("too many nested", "too complex", "too many statically nested")
_MAX_FALLBACK_DEPTH = 400
# Past this many candidate statements in a file, parse it whole instead, unless it is
# larger than this: a whole-file libcst parse of a 460 kB file peaked at 218 MB.
_MAX_UNITS = 200
_WHOLE_FILE_MAX = 128_000


def _bracket_depth(text: str) -> int:
    """Deepest bracket nesting, over-counted: brackets in strings count too."""
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


class FileFailure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass
class _Unit:
    """A piece of the file for libcst: ``source`` is its text (after ``header_text``, the
    ``if 1:`` that lets an indented piece parse), parsed when first needed and dropped by
    :meth:`release`, so only one piece's tree is alive at a time."""

    source: str
    header: int
    offset: int
    ops: list[CompiledOp]
    end: int
    header_text: str = ""
    parsed: cst.Module | None = None

    @property
    def module(self) -> cst.Module:
        if self.parsed is None:
            self.parsed = _libcst_parse(self.source)
        return self.parsed

    def release(self) -> None:
        self.parsed = None

    def roots(self) -> list[cst.CSTNode]:
        if self.header:
            wrapper = self.module.body[0]
            assert isinstance(wrapper, cst.If)
            return [wrapper.body]
        return [self.module]


def _syntax_error(exc: SyntaxError) -> str:
    where = f" (line {exc.lineno})" if exc.lineno else ""
    return f"does not parse: {exc.msg}{where}"


def _libcst_parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise FileFailure("parse", f"does not parse: {exc.message} (line {exc.raw_line})") from None
    except RecursionError:
        raise FileFailure("parse", _RECURSION) from None
    except Exception as exc:
        raise FileFailure("parse", f"does not parse: {exc}") from None


Regions = list[tuple[int, int]]


def _top_regions(tree: ast.Module) -> Regions:
    return [(_stmt_first(s), s.end_lineno or s.lineno) for s in tree.body]


def _stmt_first(statement: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(statement, "decorator_list", None) or []
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _kind_key(op: CompiledOp) -> str:
    return f"{KIND_PREFIX}{op.index}"


def _line_starts_of(text: str) -> list[int]:
    return line_starts(text)


def _kind_offsets(
    tree: ast.Module, starts: list[int], ops: list[CompiledOp]
) -> dict[str, list[int]]:
    """For each op, the start offsets of the lines where a node of its kind begins (a
    statement holding such a line may hold a match; the others cannot)."""
    wanted: dict[type[ast.AST], list[tuple[str, type[ast.AST] | None, ast.expr | None, str]]] = {}
    found: dict[str, set[int]] = {}
    for op in ops:
        key = _kind_key(op)
        found[key] = set()
        for kind, operator in op.pattern.kinds or ():
            wanted.setdefault(kind, []).append((key, operator, op.pattern.shape, op.pattern.source))
    for node in ast.walk(tree):
        entries = wanted.get(type(node))
        if entries is None:
            continue
        line = getattr(node, "lineno", None)
        if line is None:
            continue
        for key, operator, shape, source in entries:
            if operator is not None and type(getattr(node, "op", None)) is not operator:
                continue
            if shape is not None and not fits(shape, node):
                continue
            if not node_may_match(source, node):
                continue
            found[key].add(starts[min(line - 1, len(starts) - 1)])
    return {key: sorted(lines) for key, lines in found.items()}


def _units(
    text: str, ops: list[CompiledOp], exact: Located | None = None
) -> tuple[list[_Unit], ast.Module | None, Regions]:
    """Parsed pieces of the file, its `ast` tree (None if `ast` cannot parse it), and
    the line ranges of the statements each rewrite is checked in. With ``exact`` (the
    `ast` search's exact match lines for every op) only statements holding a match
    reach libcst."""
    ast_error: str | None = None
    tree: ast.Module | None
    if exact is not None:
        tree = exact.tree
    else:
        try:
            tree = parse_module(text)
        except SyntaxError as exc:
            if any(word in exc.msg for word in _TOO_DEEP):
                raise FileFailure("parse", _RECURSION) from None
            tree, ast_error = None, _syntax_error(exc)
        except (RecursionError, MemoryError):
            raise FileFailure("parse", _RECURSION) from None
        except ValueError as exc:
            raise FileFailure("parse", f"does not parse: {exc}") from None
    if tree is None and _bracket_depth(text) > _MAX_FALLBACK_DEPTH:
        # libcst's native parser overflows the C stack (a crash, not an exception) on
        # input nested far deeper than Python itself accepts; never hand it such a file.
        raise FileFailure("parse", _RECURSION)
    op_words: dict[int, frozenset[str]] = {op.index: op.pattern.words for op in ops}
    given: dict[str, list[int]] = {}
    if tree is not None:
        kinded = [op for op in ops if op.pattern.kinds and not op.pattern.whole_file]
        if exact is not None:
            kinded = list(ops)
            starts = _line_starts_of(text)
            given = {
                _kind_key(op): [starts[line - 1] for line in exact.lines[op.index]] for op in ops
            }
        elif kinded:
            given = _kind_offsets(tree, _line_starts_of(text), kinded)
        if kinded:
            for op in kinded:
                key = _kind_key(op)
                if not given[key]:
                    # No node of the pattern's kind: no match, nothing to parse.
                    ops = [other for other in ops if other is not op]
                    op_words.pop(op.index)
                else:
                    op_words[op.index] = op.pattern.words | {key}
            if not ops:
                return [], tree, []
    whole = tree is None or any(op.pattern.whole_file or not op_words[op.index] for op in ops)
    if whole:
        try:
            module = _libcst_parse(text)
        except FileFailure as failure:
            # Python's own message is the one people know.
            raise FileFailure(failure.kind, ast_error or failure.message) from None
        return (
            [_Unit(text, 0, 0, ops, len(text), parsed=module)],
            tree,
            _top_regions(tree) if tree else [],
        )
    assert tree is not None
    locator = Locator(
        text,
        tree,
        op_words,
        {
            op.index: op.pattern.compound_types
            for op in ops
            if op.pattern.compound_types is not None
        },
        given,
    )
    starts = locator.starts
    by_index = {op.index: op for op in ops}
    newline = "\r\n" if "\r\n" in text[: starts[1] if len(starts) > 1 else 0] else "\n"
    located = locator.units()
    covered = sum(starts[min(u.last, len(starts) - 1)] - starts[u.first - 1] for u in located)
    many = len(located) > _MAX_UNITS or (len(located) > 16 and 2 * covered > len(text))
    if many and len(text) <= _WHOLE_FILE_MAX:
        # Many small pieces: one parse of the whole file costs less than one per piece
        # (but its tree takes some hundred times the text: not for a large file).
        regions = [(u.first, u.last) for u in located]
        return [_Unit(text, 0, 0, ops, len(text))], tree, regions
    units: list[_Unit] = []
    for unit in located:
        lo = starts[unit.first - 1]
        hi = starts[min(unit.last, len(starts) - 1)]
        snippet = text[lo:hi]
        header = f"if 1:{newline}" if snippet[:1] in (" ", "\t", "\f") else ""
        units.append(
            _Unit(
                header + snippet,
                len(header),
                lo,
                [by_index[i] for i in sorted(unit.ops)],
                hi,
                header,
            )
        )
    return units, tree, [(u.first, u.last) for u in located]


def _find(unit: _Unit, op: CompiledOp, nested: bool) -> list[Found]:
    roots = unit.roots()
    pattern = op.pattern
    if pattern.expression is not None:
        start: list[tuple[cst.CSTNode, cst.CSTNode | None, str]] = [
            (root, None, "") for root in roots
        ]
        return find_expression_matches(start, pattern.expression, nested)
    return find_statement_matches(roots, pattern.statements, nested)


def parses(text: str, with_ast: bool, line_shift: int = 0) -> str | None:
    """None if ``text`` parses, else why not (``line_shift`` maps lines back to the file)."""
    if with_ast:
        try:
            parse_module(text)
            return None
        except SyntaxError as exc:
            if exc.lineno is not None:
                exc.lineno += line_shift
            return _syntax_error(exc)
        except (ValueError, RecursionError, MemoryError) as exc:
            return str(exc) or type(exc).__name__
    try:
        cst.parse_module(text)
        return None
    except cst.ParserSyntaxError as exc:
        return f"does not parse: {exc.message} (line {exc.raw_line})"
    except Exception as exc:
        return str(exc) or type(exc).__name__


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = line_starts(text)

    def at(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        index = min(index, len(self.starts) - 1)
        return index + 1, offset - self.starts[index]


def _widen_deleted_line(text: str, start: int, end: int) -> tuple[int, int]:
    """Deleting a whole statement removes its line rather than leaving it blank."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    if text[line_start:start].strip(" \t\f"):
        return start, end
    line_end = end
    while line_end < len(text) and text[line_end] in " \t\f":
        line_end += 1
    if text.startswith("\r\n", line_end):
        return line_start, line_end + 2
    if line_end < len(text) and text[line_end] in "\r\n":
        return line_start, line_end + 1
    return start, end


def analyze_cst(
    text: str, ops: list[CompiledOp], rewrite: bool, located: Located | None = None
) -> FileResult:
    """Matches (and the rewritten text) of ``ops`` in ``text`` the libcst way; errors as a
    result. ``located``: where the `ast` search found each operation's matches."""
    try:
        return _analyze(text, ops, rewrite, located)
    except FileFailure as failure:
        return FileResult("", error=failure.message, error_kind=failure.kind)
    except RecursionError:
        return FileResult("", error=_RECURSION, error_kind="parse")


def _collect_matches(
    text: str, unit: _Unit, rewrite: bool, lines: _Lines, matches: list[Match]
) -> None:
    """Append the matches of ``unit``'s operations (with their replacements)."""
    found_by_op = [(op, _find(unit, op, nested=not rewrite)) for op in unit.ops]
    if not any(found for _, found in found_by_op):
        return
    positions = Positions.of_module(unit.module, unit.header_text + text[unit.offset : unit.end])
    shift = unit.offset - unit.header
    for op, found_list in found_by_op:
        for found in found_list:
            lo, hi = match_span(found, positions)
            start, end = lo + shift, hi + shift
            replacement = None
            edit = (start, end)
            if rewrite and op.rewrites:
                replacement = render(op.rendering, found, positions)
                if replacement == text[start:end]:
                    continue  # rewriting code into itself is no replacement
                if not replacement:
                    edit = _widen_deleted_line(text, start, end)
            start_line, start_col = lines.at(start)
            end_line, end_col = lines.at(end)
            matches.append(
                Match(
                    op.index,
                    start,
                    end,
                    start_line,
                    start_col,
                    end_line,
                    end_col,
                    text[start:end],
                    replacement,
                    edit[0],
                    edit[1],
                )
            )


def _analyze(
    text: str, ops: list[CompiledOp], rewrite: bool, located: Located | None = None
) -> FileResult:
    active = [op for op in ops if text_has_words(text, op.pattern.words)]
    if not active:
        return FileResult("")
    units, tree, regions = _units(text, active, located)
    ast_ok = tree is not None
    lines = _Lines(text)
    matches: list[Match] = []
    for unit in units:
        try:
            _collect_matches(text, unit, rewrite, lines, matches)
        finally:
            unit.release()
    matches.sort(key=lambda m: (m.start, m.op))
    if not matches:
        return FileResult("")
    if not rewrite:
        return FileResult("", tuple(matches))
    overlap = _overlap(matches, ops)
    if overlap is not None:
        return FileResult("", error=overlap, error_kind="overlap")
    if tree is not None:
        matches = _keep_blocks(text, tree, matches, lines)
    kept, skipped, checked = _check_regions(text, regions if ast_ok else [], matches, ast_ok, lines)
    if not kept:
        reason = skipped[0].split("would not parse: ", 1)[-1]
        return FileResult(
            "",
            error=f"the rewritten file would not parse ({reason}); file left out",
            error_kind="rewrite",
        )
    new_text = splice(text, tuple(kept))
    # When every match was kept, the whole new text may have been checked already.
    problem = None if checked else parses(new_text, ast_ok)
    if problem is not None:
        return FileResult(
            "",
            error=f"the rewritten file would not parse ({problem}); file left out",
            error_kind="rewrite",
        )
    return FileResult("", tuple(kept), old_text=text, new_text=new_text, skipped=tuple(skipped))


def _offset(text: str, lines: _Lines, line: int, column: int) -> int:
    """Character offset of an `ast` position (its columns count UTF-8 bytes)."""
    start = lines.starts[line - 1]
    end = lines.starts[min(line, len(lines.starts) - 1)]
    chunk = text[start:end]
    if chunk.isascii():
        return start + column
    return start + len(chunk.encode("utf-8")[:column].decode("utf-8", "replace"))


def _blocks(tree: ast.Module) -> list[list[ast.stmt]]:
    """Every block of statements below the module (the module may end up empty)."""
    found: list[list[ast.stmt]] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if not isinstance(node, ast.stmt) and not isinstance(node, ast.excepthandler):
            continue
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                found.append(value)
                stack.extend(value)
        for holder in getattr(node, "handlers", ()) or ():
            stack.append(holder)
        for case in getattr(node, "cases", ()) or ():
            found.append(case.body)
            stack.extend(case.body)
    return found


def _keep_blocks(text: str, tree: ast.Module, matches: list[Match], lines: _Lines) -> list[Match]:
    """A rewrite that deletes every statement of a block writes ``pass`` in the last one's
    place, so the block stays valid Python."""
    deleted = sorted((m for m in matches if m.replacement == ""), key=lambda m: m.start)
    if not deleted:
        return matches
    starts = [m.start for m in deleted]

    def covering(statement: ast.stmt) -> Match | None:
        lo = _offset(text, lines, statement.lineno, statement.col_offset)
        decorators: list[ast.expr] = getattr(statement, "decorator_list", None) or []
        if decorators:
            # The decorator's expression starts after its `@`.
            lo = _offset(text, lines, decorators[0].lineno, decorators[0].col_offset) - 1
        hi = _offset(
            text, lines, statement.end_lineno or statement.lineno, statement.end_col_offset or 0
        )
        index = bisect.bisect_right(starts, lo) - 1
        if index >= 0 and deleted[index].end >= hi:
            return deleted[index]
        return None

    replaced: dict[int, Match] = {}
    for block in _blocks(tree):
        last = covering(block[-1])
        if last is None or not all(covering(statement) for statement in block[:-1]):
            continue
        replaced[id(last)] = replace(
            last, replacement="pass", edit_start=last.start, edit_end=last.end
        )
    if not replaced:
        return matches
    return [replaced.get(id(m), m) for m in matches]


def _check_regions(
    text: str, regions: Regions, matches: list[Match], ast_ok: bool, lines: _Lines
) -> tuple[list[Match], list[str], bool]:
    """Check the whole new text; only when it would not parse, check each rewritten
    statement on its own (the rest of the file is unchanged): a statement whose rewrite
    would not parse keeps its original text, and its matches are reported instead.
    Linear in the matches: they are sorted, and each region finds its own by binary
    search. The flag says whether the whole new text (every match kept) was checked, so
    the caller need not parse it again.

    The whole text first, however few the statements: when it parses, every rewritten
    statement does on its own (Python's grammar has no context beyond the indentation the
    ``if 1:`` header gives back), and the caller needs that whole parse anyway -- checking
    the statements first (issue 44) parsed each file's rewritten statements and then the
    whole file again, a fifth of a rewrite's time."""
    problem = parses(splice(text, tuple(matches)), ast_ok)
    if problem is None:
        return list(matches), [], True
    if not regions:
        return [], [problem], False
    ordered = sorted(matches, key=lambda m: m.edit_start)
    edit_starts = [m.edit_start for m in ordered]
    newline = "\r\n" if "\r\n" in text[: lines.starts[1] if len(lines.starts) > 1 else 0] else "\n"
    dropped: set[int] = set()
    skipped: list[str] = []
    for first, last in sorted(regions):
        lo = lines.starts[first - 1]
        hi = lines.starts[min(last, len(lines.starts) - 1)]
        index = bisect.bisect_left(edit_starts, lo)
        inside: list[Match] = []
        for m in ordered[index:]:
            if m.edit_start >= hi:
                break
            if m.edit_end <= hi:
                inside.append(replace(m, edit_start=m.edit_start - lo, edit_end=m.edit_end - lo))
        if not inside:
            continue
        snippet = splice(text[lo:hi], tuple(inside))
        if not any(
            line.strip() and not line.lstrip().startswith("#") for line in snippet.splitlines()
        ):
            continue  # deleted whole; blocks that would be left empty got `pass`
        header = f"if 1:{newline}" if snippet[:1] in (" ", "\t", "\f") else ""
        problem = parses(header + snippet, ast_ok, first - 1 - (1 if header else 0))
        if problem is not None:
            dropped.update(m.edit_start + lo for m in inside)
            for m in inside:
                skipped.append(
                    f"line {lines.at(m.edit_start + lo)[0]}: left unchanged, the rewrite "
                    f"would not parse: {problem}"
                )
    kept = [m for m in matches if m.edit_start not in dropped]
    return kept, skipped, False


def _overlap(matches: list[Match], ops: list[CompiledOp]) -> str | None:
    labels = {op.index: op.label for op in ops}
    furthest: Match | None = None
    for match in matches:
        if furthest is not None and match.edit_start < furthest.edit_end:
            first, second = sorted((furthest.op, match.op))
            return (
                f"matches of {labels[first]} and {labels[second]} overlap at line "
                f"{match.start_line}; file left out (split the operations into separate calls)"
            )
        if furthest is None or match.edit_end > furthest.edit_end:
            furthest = match
    return None
