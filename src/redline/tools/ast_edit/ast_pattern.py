"""Compiling a pattern to its `ast` form for the `ast` search (:mod:`ast_match`).

A pattern compiles only when every part of it has a known one-to-one counterpart in `ast`
(:func:`compile_ast_pattern`); any other pattern is *unsupported* and goes the libcst way.
Literal nodes keep their raw text (``rl_raw``) for comparing spellings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from redline.tools.ast_edit.metavars import (
    PLACEHOLDER_PREFIX,
    PatternError,
    placeholder_meta,
    substitute,
)
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


@dataclass(frozen=True)
class AstPattern:
    """A pattern as an `ast` tree; its literal nodes carry their raw text (``rl_raw``)."""

    root: ast.AST

    @property
    def root_type(self) -> type[ast.AST]:
        return type(self.root)


def is_multi(node: ast.AST) -> bool:
    if isinstance(node, ast.Starred):
        node = node.value
    meta = placeholder_meta(node.id) if isinstance(node, ast.Name) else None
    return meta is not None and meta.multi


def is_single(node: ast.AST) -> bool:
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
            if is_multi(arg):
                multis += 1
                continue
            if isinstance(arg, ast.Starred):
                raise Unsupported("starred argument")
            _check(arg, text)
        for keyword in node.keywords:
            if keyword.arg is None:
                if is_multi(keyword.value):
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
            and is_multi(ast.Name(args.args[0].arg))
        )
        # Only `lambda $$$A: ...` (any parameters) and `lambda: ...` (none).
        if (items or any(extra) or args.defaults or args.kw_defaults) and not any_params:
            raise Unsupported("lambda parameters")
        _check(node.body, text)
        return
    if isinstance(node, (ast.For, ast.With)):
        # Only a body of `$$$B` (any statements), no `else`.
        body = node.body
        if len(body) != 1 or not isinstance(body[0], ast.Expr) or not is_multi(body[0].value):
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


def pattern_for(source: str) -> AstPattern | None:
    return compile_ast_pattern(source)
