"""Compiling pattern and template text into libcst trees, checked up front.

Everything that can be wrong with an operation is found here (or, for a search the `ast`
way supports, in :mod:`ops` without libcst), before any file is read: text that is not
Python once the metavariables are replaced, ``$$$`` where no sequence is, a template name
the pattern does not bind.
"""

from __future__ import annotations

import ast
import io
import itertools
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst

from redline.tools.ast_edit.metavars import (
    Meta,
    PatternError,
    Substituted,
    check_kinds,
    check_template_names,
    normalize,
    pattern_words,
    placeholder_meta,
    substitute,
)
from redline.tools.ast_edit.nodes import (
    BLOCKS,
    block_items,
    child_nodes,
    item_meta,
    multi_meta,
    parameter_items,
)
from redline.tools.ast_edit.positions import Positions
from redline.tools.ast_edit.shape import pattern_shape
from redline.workspace.pyparse import parse_module

_MAX_VARIANT_SLOTS = 6

# Which `ast` statement classes can hold a match of a compound statement pattern.
_AST_TYPES: dict[type[cst.CSTNode], tuple[type[ast.AST], ...]] = {
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    cst.TryStar: (ast.TryStar,),
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.Match: (ast.Match,),
}


_BINARY_OPS: dict[type[cst.CSTNode], type[ast.AST]] = {
    cst.Add: ast.Add,
    cst.Subtract: ast.Sub,
    cst.Multiply: ast.Mult,
    cst.Divide: ast.Div,
    cst.FloorDivide: ast.FloorDiv,
    cst.Modulo: ast.Mod,
    cst.Power: ast.Pow,
    cst.MatrixMultiply: ast.MatMult,
    cst.LeftShift: ast.LShift,
    cst.RightShift: ast.RShift,
    cst.BitAnd: ast.BitAnd,
    cst.BitOr: ast.BitOr,
    cst.BitXor: ast.BitXor,
}
# The `ast` classes every match of a pattern rooted at a libcst class is one of. Only
# exact correspondences are listed (a superset is fine, missing one would lose matches).
_KINDS: dict[type[cst.CSTNode], tuple[type[ast.AST], ...]] = {
    cst.Subscript: (ast.Subscript,),
    cst.Comparison: (ast.Compare,),
    cst.BinaryOperation: (ast.BinOp,),
    cst.BooleanOperation: (ast.BoolOp,),
    cst.ListComp: (ast.ListComp,),
    cst.SetComp: (ast.SetComp,),
    cst.DictComp: (ast.DictComp,),
    cst.GeneratorExp: (ast.GeneratorExp,),
    cst.Lambda: (ast.Lambda,),
    cst.IfExp: (ast.IfExp,),
    cst.Await: (ast.Await,),
    cst.NamedExpr: (ast.NamedExpr,),
    cst.Call: (ast.Call,),
    cst.Yield: (ast.Yield, ast.YieldFrom),
    cst.Assert: (ast.Assert,),
    cst.Return: (ast.Return,),
    cst.Raise: (ast.Raise,),
    cst.Del: (ast.Delete,),
    cst.AugAssign: (ast.AugAssign,),
    cst.AnnAssign: (ast.AnnAssign,),
    cst.Assign: (ast.Assign,),
    cst.Import: (ast.Import,),
    cst.ImportFrom: (ast.ImportFrom,),
    **{kind: types for kind, types in _AST_TYPES.items()},
}


def _kinds(root: cst.CSTNode) -> tuple[tuple[type[ast.AST], type[ast.AST] | None], ...] | None:
    """What `ast` node (and operator) every match is: a structural prefilter for patterns
    without words; None when the pattern's root gives no such guarantee."""
    if isinstance(root, cst.Expr):
        root = root.value
    types = _KINDS.get(type(root))
    if types is None:
        return None
    operator: type[ast.AST] | None = None
    if isinstance(root, cst.BinaryOperation):
        operator = _BINARY_OPS.get(type(root.operator))
    return tuple((kind, operator) for kind in types)


@dataclass(frozen=True)
class CompiledPattern:
    source: str
    expression: cst.BaseExpression | None
    statements: tuple[cst.CSTNode, ...]
    words: frozenset[str]
    bound: Mapping[str, Meta]
    # For statement patterns of one compound statement: the `ast` classes it can match.
    compound_types: tuple[type[ast.AST], ...] | None
    # The `ast` node kinds (and binary operator) a match must be, when known.
    kinds: tuple[tuple[type[ast.AST], type[ast.AST] | None], ...] | None = None
    # An expression pattern's own `ast`, for the coarse shape test (shape.fits).
    shape: ast.expr | None = None

    @property
    def whole_file(self) -> bool:
        """Statement sequences may span top-level statements: they need the whole file."""
        return self.expression is None and (
            len(self.statements) != 1 or multi_meta(self.statements[0]) is not None
        )


@dataclass(frozen=True)
class TemplateSlot:
    """Where a capture goes in a template's text, and what surrounds it there."""

    start: int
    end: int
    name: str
    multi: bool
    parent: cst.CSTNode | None
    field: str
    line_indent: str
    own_line: bool


@dataclass(frozen=True)
class CompiledTemplate:
    source: str
    text: str
    slots: tuple[TemplateSlot, ...]
    root: cst.CSTNode | None
    string_lines: frozenset[int]


def _syntax_message(exc: Exception) -> str:
    if isinstance(exc, cst.ParserSyntaxError):
        return f"{exc.message} (line {exc.raw_line}, column {exc.raw_column + 1})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _parse(
    sub: Substituted, what: str
) -> tuple[cst.CSTNode, str, tuple[int, ...], tuple[str, ...]]:
    """Parse as an expression, else as statements; ``$$$`` may need a ``*``/``**`` form."""
    multis = [index for index, occ in enumerate(sub.occurrences) if occ.meta.multi]
    choices: Iterable[tuple[str, ...]] = itertools.product(
        ("", "*", "**"), repeat=min(len(multis), _MAX_VARIANT_SLOTS)
    )
    first_error: Exception | None = None
    for choice in choices:
        prefixes = [""] * len(sub.occurrences)
        for slot, prefix in zip(multis, choice, strict=False):
            prefixes[slot] = prefix
        text, starts = sub.render(tuple(prefixes))
        tree: cst.CSTNode
        try:
            tree = cst.parse_expression(text)
        except Exception:
            try:
                tree = cst.parse_module(text + "\n")
            except Exception as exc:
                first_error = first_error or exc
                continue
        return tree, text, starts, tuple(prefixes)
    assert first_error is not None
    message = _syntax_message(first_error)
    try:
        parse_module(sub.text)
    except SyntaxError as exc:
        # Python's own wording is shorter and familiar.
        message = f"{exc.msg} (line {exc.lineno}, column {exc.offset})"
    raise PatternError(f"{what} is not valid Python once its metavariables are replaced: {message}")


def _placeholder_names(tree: cst.CSTNode) -> list[tuple[cst.Name, cst.CSTNode | None, str]]:
    found: list[tuple[cst.Name, cst.CSTNode | None, str]] = []
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None, str]] = [(tree, None, "")]
    while stack:
        node, parent, field = stack.pop()
        if isinstance(node, cst.Name) and placeholder_meta(node.value) is not None:
            found.append((node, parent, field))
        stack.extend((child, node, name) for child, name in child_nodes(node))
    return found


def _sequence_wrapped(tree: cst.CSTNode) -> set[int]:
    """Ids of placeholder Names that stand as whole items of a sequence."""
    wrapped: set[int] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        lists: list[Sequence[cst.CSTNode]] = []
        if isinstance(node, cst.Parameters):
            lists.append(parameter_items(node))
        if isinstance(node, BLOCKS):
            lists.append(block_items(node))
        for name in type(node).__dataclass_fields__:
            value = getattr(node, name)
            if isinstance(value, (tuple, list)):
                lists.append(value)
        for items in lists:
            for item in items:
                if isinstance(item, cst.CSTNode) and multi_meta(item) is not None:
                    stack_names = [item]
                    while stack_names:
                        current = stack_names.pop()
                        if isinstance(current, cst.Name):
                            wrapped.add(id(current))
                        else:
                            stack_names.extend(child for child, _ in child_nodes(current))
        stack.extend(child for child, _ in child_nodes(node))
    return wrapped


def _yield_expression(tree: cst.CSTNode) -> cst.CSTNode:
    """``yield $A`` parses only as a statement, but is an expression: it matches (and is
    rewritten) wherever it stands, as in ``x = yield $A`` or ``return (yield from $A)``."""
    if isinstance(tree, cst.Module) and len(tree.body) == 1:
        line = tree.body[0]
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            statement = line.body[0]
            if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Yield):
                return statement.value
    return tree


def compile_pattern(text: str, what: str = "pattern") -> CompiledPattern:
    source = normalize(text)
    if not source:
        raise PatternError(f"{what} is empty")
    sub = substitute(source, what)
    bound = check_kinds(sub, what)
    tree, rendered, _starts, _prefixes = _parse(sub, what)
    wrapped = _sequence_wrapped(tree)
    for name, _parent, _field in _placeholder_names(tree):
        meta = placeholder_meta(name.value)
        if meta is not None and meta.multi and id(name) not in wrapped:
            raise PatternError(
                f"{what}: {meta.spelled} can only stand for items of a list "
                "(call arguments, elements, parameters or statements)"
            )
    tree = _yield_expression(tree)
    if isinstance(tree, cst.BaseExpression):
        return CompiledPattern(
            source,
            tree,
            (),
            pattern_words(rendered),
            bound,
            compound_types=None,
            kinds=_kinds(tree),
            shape=pattern_shape(rendered),
        )
    assert isinstance(tree, cst.Module)
    items = tuple(block_items(tree))
    if not items:
        raise PatternError(f"{what} has no code (only comments or blank lines)")
    if all(multi_meta(item) is not None for item in items):
        raise PatternError(f"{what} must contain more than $$$ metavariables")
    compound = None
    if len(items) == 1 and isinstance(items[0], cst.BaseCompoundStatement):
        compound = _AST_TYPES.get(type(items[0]), ())
    kinds = (
        _kinds(items[0])
        if len(items) == 1 and multi_meta(items[0]) is None and item_meta(items[0]) is None
        else None
    )
    return CompiledPattern(source, None, items, pattern_words(rendered), bound, compound, kinds)


def _string_lines(text: str) -> frozenset[int]:
    """0-based indices of lines that begin inside a multi-line string literal."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                lines.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return frozenset()
    return frozenset(lines)


def compile_template(
    text: str, pattern: CompiledPattern, what: str = "rewrite"
) -> CompiledTemplate:
    source = normalize(text)
    sub = substitute(source, what)
    check_template_names(sub, pattern.bound, what)
    if not source:
        return CompiledTemplate(source, "", (), None, frozenset())
    tree, rendered, starts, prefixes = _parse(sub, what)
    positions = Positions.of_module(tree) if isinstance(tree, cst.Module) else Positions(tree)
    by_start: dict[int, tuple[cst.CSTNode | None, str]] = {}
    for name, parent, field in _placeholder_names(tree):
        by_start[positions.syntactic(name)[0]] = (parent, field)
    slots: list[TemplateSlot] = []
    for occ, start, prefix in zip(sub.occurrences, starts, prefixes, strict=True):
        parent, field = by_start.get(start, (None, ""))
        region = (start - len(prefix), start + len(occ.placeholder))
        line_start = rendered.rfind("\n", 0, region[0]) + 1
        line_end = rendered.find("\n", region[1])
        line_end = len(rendered) if line_end < 0 else line_end
        before = rendered[line_start : region[0]]
        indent = before[: len(before) - len(before.lstrip(" \t"))]
        own_line = not before.strip() and not rendered[region[1] : line_end].strip()
        assert occ.meta.name is not None
        slots.append(
            TemplateSlot(
                region[0], region[1], occ.meta.name, occ.meta.multi, parent, field, indent, own_line
            )
        )
    yielded = _yield_expression(tree)
    root = yielded if isinstance(yielded, cst.BaseExpression) else None
    return CompiledTemplate(source, rendered, tuple(slots), root, _string_lines(rendered))


def compile_op(
    index: int, pat: str, out: str | None, prefix: str | None = None
) -> tuple[CompiledPattern, CompiledTemplate | None]:
    """One operation's pattern and template (None to search); PatternError on bad input.

    ``prefix`` starts an error's message (default ``operation N: ``; the command line names
    its ``--pattern`` options instead)."""
    if prefix is None:
        prefix = f"operation {index + 1}: "
    pattern = compile_pattern(pat, f"{prefix}pattern {pat!r}")
    template = None if out is None else compile_template(out, pattern, f"{prefix}rewrite {out!r}")
    return pattern, template
