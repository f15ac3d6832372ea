"""Searching on Python's own `ast` tree, with libcst's match semantics, for common shapes.

libcst parses about nine times slower than :func:`ast.parse`, and a search (no rewrite)
needs no libcst tree at all when its matches can be found and placed on the `ast` tree
exactly as the libcst matcher finds and places them. This module does that for the
patterns whose every part has a known one-to-one counterpart in `ast` (calls,
attributes, comparisons, binary and unary operators, subscripts, comprehensions,
lambdas, names and literals, and ``raise``/``assert`` statements; ``$X`` and ``$$$X``
without repeated names). Any other pattern is *unsupported*: it goes the libcst way.

The translation stays exact by refusing, not by guessing: where `ast` and libcst could
disagree about a node (f-string parts `ast` cannot place for sure, ``case`` patterns,
a parenthesised tuple index it cannot tell apart, starred subscripts, a statement
before ``;``), a match there makes :func:`search_text` answer
``None`` and the whole file takes the libcst way. The same matcher serves rewrites as a
filter (:func:`node_may_match`): without the source text it answers "maybe" wherever it
cannot be sure, so it never drops a statement that libcst would match in.

Positions: `ast` columns count UTF-8 bytes; matches report character offsets into the
text. An `ast` expression's span leaves out its own parentheses, as the libcst matcher's
spans do (a parenthesised tuple is the exception, hence no tuple roots here).
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from redline.tools.ast_edit.locate import line_starts
from redline.tools.ast_edit.metavars import (
    PLACEHOLDER_PREFIX,
    PatternError,
    placeholder_meta,
    substitute,
)
from redline.tools.ast_edit.results import FileResult, Match
from redline.tools.ast_edit.skeleton import data_fits, rarest
from redline.workspace.pyparse import parse_expression, parse_module

# Pattern roots the fast search places exactly. Names are left out (libcst's Name also
# stands for attribute names, keywords and definitions), attributes too (libcst spells
# dotted module names in imports as attributes), tuples (`ast` spans include their
# parentheses) and generator expressions (`f(x for x in y)` shares the call's brackets).
_ROOTS: tuple[type[ast.AST], ...] = (
    ast.Call,
    ast.Compare,
    ast.BinOp,
    ast.UnaryOp,
    ast.Subscript,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.Lambda,
)


_STATEMENT_ROOTS: tuple[type[ast.AST], ...] = (ast.Raise, ast.Assert, ast.For, ast.With)


class Unsupported(Exception):
    """The pattern has a part without an exact `ast` counterpart here."""


class Unsure(Exception):
    """This code could be matched differently by libcst: the file takes the libcst way."""


@dataclass(frozen=True)
class AstPattern:
    """A pattern as an `ast` tree; its literal nodes carry their raw text (``rl_raw``)."""

    root: ast.AST

    @property
    def root_type(self) -> type[ast.AST]:
        return type(self.root)


# -- compiling -------------------------------------------------------------------------


def _is_multi(node: ast.AST) -> bool:
    if isinstance(node, ast.Starred):
        node = node.value
    meta = placeholder_meta(node.id) if isinstance(node, ast.Name) else None
    return meta is not None and meta.multi


def _single(node: ast.AST) -> bool:
    meta = placeholder_meta(node.id) if isinstance(node, ast.Name) else None
    return meta is not None and not meta.multi


def _check(node: ast.AST, text: str) -> None:
    """Raise Unsupported unless every part of the pattern tree is handled below."""
    if isinstance(node, ast.Name):
        meta = placeholder_meta(node.id)
        if meta is not None and meta.multi:
            raise Unsupported("$$$ outside a call's arguments")
        return
    if isinstance(node, ast.Constant):
        if node.value is None or isinstance(node.value, bool) or node.value is Ellipsis:
            return
        raw = ast.get_source_segment(text, node)
        if raw is None or not isinstance(node.value, (int, float, complex, str, bytes)):
            raise Unsupported("literal")
        if isinstance(node.value, (str, bytes)):
            # One plain literal token: an implicit concatenation is a different node.
            if raw[-1:] not in ("'", '"') or any(c.isspace() for c in raw):
                raise Unsupported("string literal")
            if "f" in raw[: raw.find(raw[-1])].lower():
                raise Unsupported("f-string")
        node.rl_raw = raw  # type: ignore[attr-defined]
        return
    if isinstance(node, ast.Call):
        _check(node.func, text)
        multis = 0
        for arg in node.args:
            if _is_multi(arg):
                multis += 1
                continue
            if isinstance(arg, ast.Starred):
                raise Unsupported("starred argument")
            _check(arg, text)
        for keyword in node.keywords:
            if keyword.arg is None:
                if _is_multi(keyword.value):
                    multis += 1
                    continue
                raise Unsupported("** argument")
            if keyword.arg.startswith(PLACEHOLDER_PREFIX):
                raise Unsupported("metavariable keyword")
            _check(keyword.value, text)
        if node.keywords and node.args:
            last_arg = node.args[-1]
            first_kw = node.keywords[0]
            if (last_arg.lineno, last_arg.col_offset) > (first_kw.lineno, first_kw.col_offset):
                raise Unsupported("positional argument after a keyword")
        return
    if isinstance(node, ast.Attribute):
        _check(node.value, text)
        return
    if isinstance(node, ast.Compare):
        for child in (node.left, *node.comparators):
            _check(child, text)
        return
    if isinstance(node, ast.BinOp):
        _check(node.left, text)
        _check(node.right, text)
        return
    if isinstance(node, ast.UnaryOp):
        _check(node.operand, text)
        return
    if isinstance(node, ast.Subscript):
        _check(node.value, text)
        if isinstance(node.slice, (ast.Tuple, ast.Slice, ast.Starred)):
            raise Unsupported("slice or tuple index")
        _check(node.slice, text)
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        if isinstance(node, ast.DictComp):
            _check(node.key, text)
            _check(node.value, text)
        else:
            _check(node.elt, text)
        for comp in node.generators:
            if not isinstance(comp.target, ast.Name):
                raise Unsupported("comprehension target")
            _check(comp.target, text)
            _check(comp.iter, text)
            for condition in comp.ifs:
                _check(condition, text)
        return
    if isinstance(node, ast.Lambda):
        args = node.args
        items = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        extra = [args.vararg, args.kwarg]
        any_params = (
            len(args.args) == 1
            and not args.posonlyargs
            and not args.kwonlyargs
            and not any(extra)
            and not args.defaults
            and _is_multi(ast.Name(args.args[0].arg))
        )
        # Only `lambda $$$A: ...` (any parameters) and `lambda: ...` (none).
        if (items or any(extra) or args.defaults or args.kw_defaults) and not any_params:
            raise Unsupported("lambda parameters")
        _check(node.body, text)
        return
    if isinstance(node, (ast.For, ast.With)):
        # Only a body of `$$$B` (any statements), no `else`.
        body = node.body
        if len(body) != 1 or not isinstance(body[0], ast.Expr) or not _is_multi(body[0].value):
            raise Unsupported("a compound statement's body other than $$$")
        if isinstance(node, ast.For):
            if node.orelse:
                raise Unsupported("for ... else")
            _check(node.target, text)
            _check(node.iter, text)
            return
        for item in node.items:
            _check(item.context_expr, text)
            if item.optional_vars is not None:
                _check(item.optional_vars, text)
        return
    if isinstance(node, ast.Raise):
        for part in (node.exc, node.cause):
            if part is not None:
                _check(part, text)
        return
    if isinstance(node, ast.Assert):
        _check(node.test, text)
        if node.msg is not None:
            _check(node.msg, text)
        return
    raise Unsupported(type(node).__name__)


def _names(node: ast.AST) -> list[str]:
    out: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id.startswith(PLACEHOLDER_PREFIX):
            out.append(child.id)
        elif isinstance(child, ast.arg) and child.arg.startswith(PLACEHOLDER_PREFIX):
            out.append(child.arg)
        elif isinstance(child, ast.Attribute) and child.attr.startswith(PLACEHOLDER_PREFIX):
            out.append(child.attr)
    return out


@lru_cache(maxsize=64)
def compile_ast_pattern(source: str) -> AstPattern | None:
    """The `ast` form of an expression pattern's text, or None when unsupported."""
    try:
        text = substitute(source, "pattern").text
    except PatternError:
        return None
    root: ast.AST
    try:
        root = parse_expression(text)
    except (SyntaxError, ValueError, RecursionError):
        try:
            module = parse_module(text)
        except (SyntaxError, ValueError, RecursionError):
            return None
        # One `raise` or `assert` statement (they are statements in both trees).
        if len(module.body) != 1 or not isinstance(module.body[0], _STATEMENT_ROOTS):
            return None
        root = module.body[0]
    if isinstance(root, ast.Yield | ast.YieldFrom) or not isinstance(
        root, (*_ROOTS, *_STATEMENT_ROOTS)
    ):
        return None
    named = [n for n in _names(root) if (m := placeholder_meta(n)) is not None and m.name]
    if len(named) != len(set(named)):
        return None  # a repeated metavariable compares captures: libcst decides
    try:
        _check(root, text)
    except Unsupported:
        return None
    return AstPattern(root)


# -- matching --------------------------------------------------------------------------


class Source:
    """The file's text, for literals' raw spelling and for character offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._ascii: dict[int, bool] = {}

    @property
    def starts(self) -> list[int]:
        """Line start offsets (computed on first use: most files have no match)."""
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    def offset(self, line: int, column: int) -> int:
        start = self.starts[line - 1]
        ascii_line = self._ascii.get(line)
        end = self.starts[min(line, len(self.starts) - 1)]
        if ascii_line is None:
            ascii_line = self._ascii[line] = self.text[start:end].isascii()
        if ascii_line:
            return start + column
        return start + len(self.text[start:end].encode("utf-8")[:column].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]


def _call_items(node: ast.Call) -> list[ast.AST]:
    if not node.keywords or not node.args:
        return [*node.args, *node.keywords]
    return sorted(
        [*node.args, *node.keywords],
        key=lambda item: (item.lineno, item.col_offset),  # type: ignore[attr-defined]
    )


def _match_items(
    patterns: Sequence[ast.AST], code: Sequence[ast.AST], src: Source | None, pi: int, ci: int
) -> bool:
    """Call arguments: anchored, ``$$$`` items take any run."""
    while pi < len(patterns):
        pattern = patterns[pi]
        if _is_multi(pattern) or (
            isinstance(pattern, ast.keyword) and pattern.arg is None and _is_multi(pattern.value)
        ):
            return any(
                _match_items(patterns, code, src, pi + 1, ci + take)
                for take in range(len(code) - ci + 1)
            )
        if ci == len(code):
            return False
        if not _match_item(pattern, code[ci], src):
            return False
        pi += 1
        ci += 1
    return ci == len(code)


def _match_item(pattern: ast.AST, code: ast.AST, src: Source | None) -> bool:
    if _single(pattern):
        return True  # `$X` as a whole argument stands for any one argument
    if isinstance(pattern, ast.keyword):
        return (
            isinstance(code, ast.keyword)
            and code.arg == pattern.arg
            and _match(pattern.value, code.value, src)
        )
    if isinstance(code, (ast.keyword, ast.Starred)):
        return False
    return _match(pattern, code, src)


def _tuple_parenthesized(node: ast.Tuple, src: Source | None) -> bool | None:
    """Whether a tuple carries its own parentheses (None: cannot tell)."""
    if src is None:
        return None
    start, end = src.span(node)
    text = src.text
    if text[start : start + 1] != "(":
        return False
    if text[end - 1 : end] != ")":
        return False
    # `(a, b)` or `(a), (b)`: whether the first bracket closes only at the end.
    depth = 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text[start:end]).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    significant = [t for t in tokens if t.type == tokenize.OP]
    for position, token in enumerate(significant):
        if token.string in "([{":
            depth += 1
        elif token.string in ")]}":
            depth -= 1
            if depth == 0:
                return position == len(significant) - 1
    return None


def _match(pattern: ast.AST, code: ast.AST, src: Source | None) -> bool:
    """Whether ``code`` matches ``pattern``; with ``src`` None, True when unsure."""
    kind = type(pattern)
    if kind is ast.Name:
        assert isinstance(pattern, ast.Name)
        if pattern.id.startswith(PLACEHOLDER_PREFIX):
            return True
        return type(code) is ast.Name and code.id == pattern.id
    if kind is not type(code):
        return False
    if kind is ast.Constant:
        assert isinstance(pattern, ast.Constant) and isinstance(code, ast.Constant)
        if pattern.value is None or isinstance(pattern.value, bool) or pattern.value is Ellipsis:
            return code.value is pattern.value
        if type(code.value) is not type(pattern.value) or code.value != pattern.value:
            return False
        if src is None:
            return True
        return src.segment(code) == getattr(pattern, "rl_raw", None)
    if kind is ast.Call:
        assert isinstance(pattern, ast.Call) and isinstance(code, ast.Call)
        if not _match(pattern.func, code.func, src):
            return False
        return _match_items(_call_items(pattern), _call_items(code), src, 0, 0)
    if kind is ast.Attribute:
        assert isinstance(pattern, ast.Attribute) and isinstance(code, ast.Attribute)
        if not pattern.attr.startswith(PLACEHOLDER_PREFIX) and pattern.attr != code.attr:
            return False
        return _match(pattern.value, code.value, src)
    if kind is ast.Compare:
        assert isinstance(pattern, ast.Compare) and isinstance(code, ast.Compare)
        if len(pattern.ops) != len(code.ops):
            return False
        if any(type(p) is not type(c) for p, c in zip(pattern.ops, code.ops, strict=True)):
            return False
        return _match(pattern.left, code.left, src) and all(
            _match(p, c, src) for p, c in zip(pattern.comparators, code.comparators, strict=True)
        )
    if kind is ast.BinOp:
        assert isinstance(pattern, ast.BinOp) and isinstance(code, ast.BinOp)
        return (
            type(pattern.op) is type(code.op)
            and _match(pattern.left, code.left, src)
            and _match(pattern.right, code.right, src)
        )
    if kind is ast.UnaryOp:
        assert isinstance(pattern, ast.UnaryOp) and isinstance(code, ast.UnaryOp)
        return type(pattern.op) is type(code.op) and _match(pattern.operand, code.operand, src)
    if kind is ast.Subscript:
        assert isinstance(pattern, ast.Subscript) and isinstance(code, ast.Subscript)
        if not _match(pattern.value, code.value, src):
            return False
        index = code.slice
        if isinstance(index, ast.Starred) or (
            isinstance(index, ast.Tuple) and any(isinstance(e, ast.Starred) for e in index.elts)
        ):
            if src is None:
                return True
            raise Unsure("starred subscript")
        if isinstance(index, ast.Tuple):
            parenthesized = _tuple_parenthesized(index, src)
            if parenthesized is None:
                if src is None:
                    return True
                raise Unsure("tuple subscript")
            if not parenthesized:
                return False  # several items, or one with a trailing comma
        if _single(pattern.slice):
            return True
        if isinstance(index, ast.Slice):
            return False
        return _match(pattern.slice, index, src)
    if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        if isinstance(pattern, ast.DictComp):
            assert isinstance(code, ast.DictComp)
            if not (_match(pattern.key, code.key, src) and _match(pattern.value, code.value, src)):
                return False
        elif not _match(pattern.elt, code.elt, src):  # type: ignore[attr-defined]
            return False
        generators: list[ast.comprehension] = pattern.generators  # type: ignore[attr-defined]
        code_generators: list[ast.comprehension] = code.generators  # type: ignore[attr-defined]
        if len(generators) != len(code_generators):
            return False
        for p, c in zip(generators, code_generators, strict=True):
            if p.is_async != c.is_async or len(p.ifs) != len(c.ifs):
                return False
            if not (_match(p.target, c.target, src) and _match(p.iter, c.iter, src)):
                return False
            if not all(_match(pi, ci, src) for pi, ci in zip(p.ifs, c.ifs, strict=True)):
                return False
        return True
    if kind is ast.Lambda:
        assert isinstance(pattern, ast.Lambda) and isinstance(code, ast.Lambda)
        if not pattern.args.args:
            a = code.args
            if a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg:
                return False
        return _match(pattern.body, code.body, src)
    if kind is ast.For or kind is ast.With:
        if kind is ast.For:
            assert isinstance(pattern, ast.For) and isinstance(code, ast.For)
            if code.orelse:
                return False
            if not (
                _match(pattern.target, code.target, src) and _match(pattern.iter, code.iter, src)
            ):
                return False
        else:
            assert isinstance(pattern, ast.With) and isinstance(code, ast.With)
            if len(pattern.items) != len(code.items):
                return False
            for p_item, c_item in zip(pattern.items, code.items, strict=True):
                if p_item.optional_vars is None and _single(p_item.context_expr):
                    continue  # `$A` as a whole item stands for any item, `as` and all
                if not _match(p_item.context_expr, c_item.context_expr, src):
                    return False
                p_vars, c_vars = p_item.optional_vars, c_item.optional_vars
                if (p_vars is None) != (c_vars is None):
                    return False
                if p_vars is not None and not _match(p_vars, c_vars, src):  # type: ignore[arg-type]
                    return False
        if src is not None:
            # The body's last statement before `;`: libcst's span there may differ (and
            # `ast` counts the `;` into the compound statement).
            _, end = src.span(code)
            if src.text[end - 1 : end] == ";" or src.text[end : end + 80].lstrip(" \t").startswith(
                ";"
            ):
                raise Unsure("a statement before `;`")
        return True
    if kind is ast.Raise or kind is ast.Assert:
        fields = ("exc", "cause") if kind is ast.Raise else ("test", "msg")
        for name in fields:
            left, right = getattr(pattern, name), getattr(code, name)
            if (left is None) != (right is None):
                return False
            if left is not None and not _match(left, right, src):
                return False
        if src is not None:
            # libcst's span of a statement before `;` may differ: let it decide there.
            _, end = src.span(code)
            rest = src.text[end : end + 80].lstrip(" \t")
            if rest.startswith(";"):
                raise Unsure("a statement before `;`")
        return True
    raise Unsure(kind.__name__)  # not reached: _check admits no other kind


def pattern_for(source: str) -> AstPattern | None:
    return compile_ast_pattern(source)


def node_may_match(source: str, node: ast.AST) -> bool:
    """Filter for the libcst way: False only when ``node`` surely does not match."""
    pattern = pattern_for(source)
    if pattern is None:
        return True
    try:
        return _match(pattern.root, node, None)
    except Unsure:
        return True


def _placed(node: ast.AST, fstring: ast.AST, src: Source, index: int) -> tuple[int, int, int]:
    """The span of a match inside an f-string, if `ast` surely placed it right.

    Before Python 3.12, `ast` places an f-string's parts by searching the string for
    their text, so only text found once in the f-string is trusted, and it must parse
    back to the same tree.
    """
    start, end = src.span(node)
    outer_start, outer_end = src.span(fstring)
    if src.text[outer_start:outer_end].count(src.text[start:end]) != 1:
        raise Unsure("an f-string part that may be placed loosely")
    try:
        again = parse_expression(src.text[start:end])
    except (SyntaxError, ValueError, RecursionError):
        raise Unsure("an f-string part placed loosely") from None
    if ast.dump(again) != ast.dump(node):
        raise Unsure("an f-string part placed loosely")
    return start, end, index


# -- searching -------------------------------------------------------------------------

_OPAQUE = (ast.JoinedStr, ast.match_case)
# Fields never holding a node worth visiting: names, flags, operators, contexts.
_SCALAR_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "id",
        "attr",
        "arg",
        "type_comment",
        "kind",
        "level",
        "module",
        "is_async",
        "conversion",
        "simple",
        "name",
        "asname",
        "names",
        "type_ignores",
        "tag",
    }
)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {ast.Constant: ()}


def _child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of ``kind`` that hold nodes (or lists of nodes) to walk into."""
    if issubclass(kind, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
        fields: tuple[str, ...] = ()
    else:
        fields = tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)
    _CHILD_FIELDS[kind] = fields
    return fields


_STATEMENTS = frozenset(
    kind for kind in vars(ast).values() if isinstance(kind, type) and issubclass(kind, ast.stmt)
)
_DECORATED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def anchor_lines(src: Source, sources: Sequence[str]) -> list[int] | None:
    """Sorted numbers of the lines holding each pattern's rarest anchor (see
    :mod:`skeleton`): a statement that spans none of them holds no match. None when a
    pattern has no anchor (every statement may then hold a match)."""
    text = src.text
    offsets: list[int] = []
    for source in sources:
        anchor = rarest(text, source)
        if anchor is None:
            return None
        offsets.extend(found.start() for found in anchor.text.finditer(text))
    starts = src.starts
    return sorted({bisect.bisect_right(starts, offset) for offset in offsets})


def find_spans(
    tree: ast.Module,
    src: Source,
    patterns: Sequence[tuple[int, AstPattern]],
    lines: Sequence[int] | None = None,
) -> list[tuple[int, int, int]] | None:
    """(start, end, op) of every match, nested ones included; None when unsure.

    With ``lines`` (:func:`anchor_lines`), statements spanning none of those lines are
    not walked into: every match's text holds an anchor, and lies inside each statement
    that contains it.
    """
    wanted: dict[type[ast.AST], list[tuple[int, AstPattern]]] = {}
    for index, pattern in patterns:
        wanted.setdefault(pattern.root_type, []).append((index, pattern))
    found: list[tuple[int, int, int]] = []
    opaque: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    count = len(lines) if lines is not None else 0
    bisect_left = bisect.bisect_left
    try:
        while True:
            while stack:
                node = stack.pop()
                if node is None:
                    continue  # a dict's `**` entry has no key
                kind = type(node)
                if lines is not None and kind in _STATEMENTS:
                    first: int = node.lineno  # type: ignore[attr-defined]
                    if kind in _DECORATED and node.decorator_list:  # type: ignore[attr-defined]
                        first = node.decorator_list[0].lineno  # type: ignore[attr-defined]
                    at = bisect_left(lines, first)
                    if at == count or lines[at] > node.end_lineno:  # type: ignore[attr-defined]
                        continue
                entries = wanted.get(kind)
                if entries is not None:
                    for index, pattern in entries:
                        if _match(pattern.root, node, src):
                            start, end = src.span(node)
                            found.append((start, end, index))
                if kind in _OPAQUE:
                    opaque.append(node)
                    continue
                fields = _CHILD_FIELDS.get(kind)
                if fields is None:
                    fields = _child_fields(kind)
                for name in fields:
                    value = getattr(node, name)
                    if type(value) is list:
                        stack.extend(value)
                    elif value is not None:
                        stack.append(value)
            if not opaque:
                break
            # f-strings and `case` patterns: a match inside them makes the file unsure
            # (`ast` places f-string parts loosely before 3.12); the guard and body of a
            # case are ordinary code.
            holder = opaque.pop()
            part: ast.AST = holder
            if isinstance(holder, ast.match_case):
                part = holder.pattern
                stack.extend(holder.body)
                if holder.guard is not None:
                    stack.append(holder.guard)
            for inner in ast.walk(part):
                for index, pattern in wanted.get(type(inner), ()):
                    if not _match(pattern.root, inner, None):
                        continue
                    if part is not holder or not _match(pattern.root, inner, src):
                        raise Unsure("a match inside a case pattern")
                    found.append(_placed(inner, holder, src, index))
    except (Unsure, RecursionError):
        return None
    # The libcst way reports by start, then operation, a match before those nested in it.
    found.sort(key=lambda item: (item[0], item[2], -item[1]))
    return found


@dataclass(frozen=True)
class Located:
    """Where the `ast` search put each operation's matches: the lines they start on."""

    tree: ast.Module
    lines: dict[int, list[int]]


def _search(
    text: str, ops: Sequence[tuple[int, str]]
) -> tuple[ast.Module, Source, list[tuple[int, int, int]]] | None:
    """The tree, the source and the spans of every match (see :func:`find_spans`), or
    None when the libcst way must decide."""
    patterns: list[tuple[int, AstPattern]] = []
    for index, source in ops:
        pattern = pattern_for(source)
        if pattern is None:
            return None
        patterns.append((index, pattern))
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    src = Source(text)
    spans = find_spans(tree, src, patterns, anchor_lines(src, [source for _, source in ops]))
    return None if spans is None else (tree, src, spans)


def locate_matches(text: str, ops: Sequence[tuple[int, str]]) -> Located | None:
    """The `ast` tree and, per operation, the sorted lines where its matches (nested ones
    included) start; None when the libcst way must decide (as for :func:`search_text`).
    A rewrite hands libcst only the statements holding those lines."""
    found = _search(text, ops)
    if found is None:
        return None
    tree, src, spans = found
    starts = src.starts
    lines: dict[int, set[int]] = {index: set() for index, _ in ops}
    for start, _end, index in spans:
        lines[index].add(bisect.bisect_right(starts, start))
    return Located(tree, {index: sorted(numbers) for index, numbers in lines.items()})


def search_text(text: str, ops: Sequence[tuple[int, str]]) -> FileResult | None:
    """The search result (no rewrite) for ``(op index, pattern source)`` pairs in
    ``text``, or None when the libcst way must decide (unsupported pattern, code `ast`
    cannot parse, or a match where the two could differ)."""
    found = _search(text, ops)
    if found is None:
        return None
    _tree, src, spans = found
    if not spans:
        return FileResult("")
    starts = src.starts
    matches: list[Match] = []
    for start, end, index in spans:
        sl = min(bisect.bisect_right(starts, start) - 1, len(starts) - 1)
        el = min(bisect.bisect_right(starts, end) - 1, len(starts) - 1)
        matches.append(
            Match(
                index,
                start,
                end,
                sl + 1,
                start - starts[sl],
                el + 1,
                end - starts[el],
                text[start:end],
                None,
                start,
                end,
            )
        )
    return FileResult("", tuple(matches))


# -- a byte prefilter ------------------------------------------------------------------

_SYMBOLS: dict[type[ast.AST], bytes] = {
    ast.Eq: b"==",
    ast.NotEq: b"!=",
    ast.Lt: b"<",
    ast.LtE: b"<=",
    ast.Gt: b">",
    ast.GtE: b">=",
    ast.Add: b"+",
    ast.Sub: b"-",
    ast.Mult: b"*",
    ast.Div: b"/",
    ast.FloorDiv: b"//",
    ast.Mod: b"%",
    ast.Pow: b"**",
    ast.LShift: b"<<",
    ast.RShift: b">>",
    ast.BitOr: b"|",
    ast.BitXor: b"^",
    ast.BitAnd: b"&",
    ast.MatMult: b"@",
    ast.USub: b"-",
    ast.UAdd: b"+",
    ast.Invert: b"~",
}


@lru_cache(maxsize=64)
def required_symbols(source: str) -> tuple[bytes, ...]:
    """Operator tokens every match of the pattern spells out (a supported pattern's
    operators are single tokens, so each appears as is in any matching file)."""
    pattern = compile_ast_pattern(source)
    if pattern is None:
        return ()
    found: set[bytes] = set()
    for node in ast.walk(pattern.root):
        ops: list[ast.AST] = []
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            ops.append(node.op)
        elif isinstance(node, ast.Compare):
            ops.extend(node.ops)
        for op in ops:
            symbol = _SYMBOLS.get(type(op))
            if symbol is not None:
                found.add(symbol)
    return tuple(sorted(found))


def bytes_have_symbols(data: bytes, source: str) -> bool:
    return all(symbol in data for symbol in required_symbols(source))


def bytes_may_match(data: bytes, source: str) -> bool:
    """False when a file's bytes surely hold no match of ``source``: an operator token or,
    for a pattern this module supports, a run of its tokens (:mod:`skeleton`) is missing."""
    if not bytes_have_symbols(data, source):
        return False
    return compile_ast_pattern(source) is None or data_fits(data, source)
