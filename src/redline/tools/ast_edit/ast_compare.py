"""Comparing a compiled pattern's `ast` tree with code's, with libcst's match semantics.

:func:`match_node` answers whether a code node matches a pattern root; with the source
text (:class:`Source`) it is exact or raises :class:`Unsure` where libcst could disagree,
without it (:func:`node_may_match`, the rewrite filter) it answers "maybe" when unsure.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Sequence

from redline.tools.ast_edit.ast_pattern import is_multi, is_single, pattern_for
from redline.tools.ast_edit.locate import line_starts
from redline.tools.ast_edit.metavars import PLACEHOLDER_PREFIX


class Unsure(Exception):
    """This code could be matched differently by libcst: the file takes the libcst way."""


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
        if is_multi(pattern) or (
            isinstance(pattern, ast.keyword) and pattern.arg is None and is_multi(pattern.value)
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
    if is_single(pattern):
        return True  # `$X` as a whole argument stands for any one argument
    if isinstance(pattern, ast.keyword):
        return (
            isinstance(code, ast.keyword)
            and code.arg == pattern.arg
            and match_node(pattern.value, code.value, src)
        )
    if isinstance(code, (ast.keyword, ast.Starred)):
        return False
    return match_node(pattern, code, src)


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


def match_node(pattern: ast.AST, code: ast.AST, src: Source | None) -> bool:
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
        if not match_node(pattern.func, code.func, src):
            return False
        return _match_items(_call_items(pattern), _call_items(code), src, 0, 0)
    if kind is ast.Attribute:
        assert isinstance(pattern, ast.Attribute) and isinstance(code, ast.Attribute)
        if not pattern.attr.startswith(PLACEHOLDER_PREFIX) and pattern.attr != code.attr:
            return False
        return match_node(pattern.value, code.value, src)
    if kind is ast.Compare:
        assert isinstance(pattern, ast.Compare) and isinstance(code, ast.Compare)
        if len(pattern.ops) != len(code.ops):
            return False
        if any(type(p) is not type(c) for p, c in zip(pattern.ops, code.ops, strict=True)):
            return False
        return match_node(pattern.left, code.left, src) and all(
            match_node(p, c, src)
            for p, c in zip(pattern.comparators, code.comparators, strict=True)
        )
    if kind is ast.BinOp:
        assert isinstance(pattern, ast.BinOp) and isinstance(code, ast.BinOp)
        return (
            type(pattern.op) is type(code.op)
            and match_node(pattern.left, code.left, src)
            and match_node(pattern.right, code.right, src)
        )
    if kind is ast.UnaryOp:
        assert isinstance(pattern, ast.UnaryOp) and isinstance(code, ast.UnaryOp)
        return type(pattern.op) is type(code.op) and match_node(pattern.operand, code.operand, src)
    if kind is ast.Subscript:
        assert isinstance(pattern, ast.Subscript) and isinstance(code, ast.Subscript)
        if not match_node(pattern.value, code.value, src):
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
        if is_single(pattern.slice):
            return True
        if isinstance(index, ast.Slice):
            return False
        return match_node(pattern.slice, index, src)
    if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
        if isinstance(pattern, ast.DictComp):
            assert isinstance(code, ast.DictComp)
            if not (
                match_node(pattern.key, code.key, src)
                and match_node(pattern.value, code.value, src)
            ):
                return False
        elif not match_node(pattern.elt, code.elt, src):  # type: ignore[attr-defined]
            return False
        generators: list[ast.comprehension] = pattern.generators  # type: ignore[attr-defined]
        code_generators: list[ast.comprehension] = code.generators  # type: ignore[attr-defined]
        if len(generators) != len(code_generators):
            return False
        for p, c in zip(generators, code_generators, strict=True):
            if p.is_async != c.is_async or len(p.ifs) != len(c.ifs):
                return False
            if not (match_node(p.target, c.target, src) and match_node(p.iter, c.iter, src)):
                return False
            if not all(match_node(pi, ci, src) for pi, ci in zip(p.ifs, c.ifs, strict=True)):
                return False
        return True
    if kind is ast.Lambda:
        assert isinstance(pattern, ast.Lambda) and isinstance(code, ast.Lambda)
        if not pattern.args.args:
            a = code.args
            if a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg:
                return False
        return match_node(pattern.body, code.body, src)
    if kind is ast.For or kind is ast.With:
        if kind is ast.For:
            assert isinstance(pattern, ast.For) and isinstance(code, ast.For)
            if code.orelse:
                return False
            if not (
                match_node(pattern.target, code.target, src)
                and match_node(pattern.iter, code.iter, src)
            ):
                return False
        else:
            assert isinstance(pattern, ast.With) and isinstance(code, ast.With)
            if len(pattern.items) != len(code.items):
                return False
            for p_item, c_item in zip(pattern.items, code.items, strict=True):
                if p_item.optional_vars is None and is_single(p_item.context_expr):
                    continue  # `$A` as a whole item stands for any item, `as` and all
                if not match_node(p_item.context_expr, c_item.context_expr, src):
                    return False
                p_vars, c_vars = p_item.optional_vars, c_item.optional_vars
                if (p_vars is None) != (c_vars is None):
                    return False
                if p_vars is not None and not match_node(p_vars, c_vars, src):  # type: ignore[arg-type]
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
            if left is not None and not match_node(left, right, src):
                return False
        if src is not None:
            # libcst's span of a statement before `;` may differ: let it decide there.
            _, end = src.span(code)
            rest = src.text[end : end + 80].lstrip(" \t")
            if rest.startswith(";"):
                raise Unsure("a statement before `;`")
        return True
    raise Unsure(kind.__name__)  # not reached: ast_pattern._check admits no other kind


def node_may_match(source: str, node: ast.AST) -> bool:
    """Filter for the libcst way: False only when ``node`` surely does not match."""
    pattern = pattern_for(source)
    if pattern is None:
        return True
    try:
        return match_node(pattern.root, node, None)
    except Unsure:
        return True
