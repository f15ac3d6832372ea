"""A coarse shape test on Python's `ast` tree: a necessary condition for a match.

Built from the pattern's own `ast`; checks only what `ast` and libcst agree on exactly
(node classes, names, attribute names, constants, operators), and treats everything
holding a metavariable as unknown. A node failing it cannot match, so its statement
need not reach libcst; a node passing it may still not match (libcst decides).
"""

from __future__ import annotations

import ast

from redline.tools.ast_edit.metavars import PLACEHOLDER_PREFIX
from redline.workspace.pyparse import parse_expression

# Pattern node classes whose fields are compared; any other class is checked by class
# alone (its fields may differ between `ast` and libcst in ways not worth modelling).
_DEEP = (
    ast.Call,
    ast.Attribute,
    ast.Compare,
    ast.BinOp,
    ast.BoolOp,
    ast.UnaryOp,
    ast.Subscript,
)


def _has_placeholder(node: ast.AST) -> bool:
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and child.id.startswith(PLACEHOLDER_PREFIX):
            return True
        if isinstance(child, ast.arg) and child.arg.startswith(PLACEHOLDER_PREFIX):
            return True
        if isinstance(child, ast.keyword) and (child.arg or "").startswith(PLACEHOLDER_PREFIX):
            return True
    return False


def pattern_shape(rendered: str) -> ast.expr | None:
    """The `ast` of an expression pattern (placeholders as names), or None."""
    try:
        return parse_expression(rendered.strip())
    except (SyntaxError, ValueError, RecursionError):
        return None


def fits(pattern: ast.AST, node: ast.AST) -> bool:
    """Whether ``node`` may match ``pattern`` (False only when it surely cannot)."""
    if isinstance(pattern, ast.Name):
        if pattern.id.startswith(PLACEHOLDER_PREFIX):
            return True
        return isinstance(node, ast.Name) and node.id == pattern.id
    if type(pattern) is not type(node):
        return False
    if isinstance(pattern, ast.Constant):
        assert isinstance(node, ast.Constant)
        if pattern.value is None or isinstance(pattern.value, bool):
            return node.value is pattern.value
        return True
    if not isinstance(pattern, _DEEP):
        return True
    if isinstance(pattern, ast.Attribute):
        assert isinstance(node, ast.Attribute)
        named = pattern.attr.startswith(PLACEHOLDER_PREFIX) or node.attr == pattern.attr
        return named and fits(pattern.value, node.value)
    if isinstance(pattern, ast.Call):
        assert isinstance(node, ast.Call)
        if not fits(pattern.func, node.func):
            return False
        if any(_has_placeholder(item) for item in [*pattern.args, *pattern.keywords]):
            return True
        return len(pattern.args) == len(node.args) and len(pattern.keywords) == len(node.keywords)
    if isinstance(pattern, ast.Compare):
        assert isinstance(node, ast.Compare)
        if [type(op) for op in pattern.ops] != [type(op) for op in node.ops]:
            return False
        return fits(pattern.left, node.left) and all(
            fits(p, n) for p, n in zip(pattern.comparators, node.comparators, strict=True)
        )
    if isinstance(pattern, ast.BinOp):
        assert isinstance(node, ast.BinOp)
        return (
            type(pattern.op) is type(node.op)
            and fits(pattern.left, node.left)
            and fits(pattern.right, node.right)
        )
    if isinstance(pattern, ast.UnaryOp):
        assert isinstance(node, ast.UnaryOp)
        return type(pattern.op) is type(node.op) and fits(pattern.operand, node.operand)
    if isinstance(pattern, ast.BoolOp):
        assert isinstance(node, ast.BoolOp)
        return type(pattern.op) is type(node.op)
    if isinstance(pattern, ast.Subscript):
        assert isinstance(node, ast.Subscript)
        return fits(pattern.value, node.value)
    return True
