"""Operator precedence: when an expression needs parentheses in the slot it lands in.

Numbers follow the Python reference's precedence table, low to high. A slot states the
lowest precedence it accepts unparenthesised.
"""

from __future__ import annotations

from typing import cast

import libcst as cst

ATOM = 16
_STATEMENT_SLOTS = frozenset(
    {
        ("Expr", "value"),
        ("Assign", "value"),
        ("AugAssign", "value"),
        ("AnnAssign", "value"),
    }
)

_BINARY = {
    cst.BitOr: 7,
    cst.BitXor: 8,
    cst.BitAnd: 9,
    cst.LeftShift: 10,
    cst.RightShift: 10,
    cst.Add: 11,
    cst.Subtract: 11,
    cst.Multiply: 12,
    cst.Divide: 12,
    cst.FloorDivide: 12,
    cst.Modulo: 12,
    cst.MatrixMultiply: 12,
    cst.Power: 14,
}


def is_a(node: object, classes: type | tuple[type, ...]) -> bool:
    """``isinstance``, remembered per node type: libcst's node classes are abstract base
    classes, whose checks cost a Python call each, and a rewrite asks several per match."""
    key = (type(node), classes)
    known = _SUBCLASS.get(key)
    if known is None:
        known = _SUBCLASS[key] = issubclass(key[0], classes)
    return known


_SUBCLASS: dict[tuple[type, type | tuple[type, ...]], bool] = {}


def precedence(node: cst.CSTNode) -> int:
    """How tightly an expression binds; parenthesised expressions are atoms."""
    if getattr(node, "lpar", None):
        return ATOM
    if is_a(node, cst.Yield):
        return -2
    if is_a(node, (cst.Tuple, cst.GeneratorExp)):
        return -1
    if is_a(node, cst.NamedExpr):
        return 0
    if is_a(node, cst.Lambda):
        return 1
    if is_a(node, cst.IfExp):
        return 2
    if is_a(node, cst.BooleanOperation):
        node = cast(cst.BooleanOperation, node)
        return 3 if is_a(node.operator, cst.Or) else 4
    if is_a(node, cst.UnaryOperation):
        node = cast(cst.UnaryOperation, node)
        return 5 if is_a(node.operator, cst.Not) else 13
    if is_a(node, cst.Comparison):
        return 6
    if is_a(node, cst.BinaryOperation):
        node = cast(cst.BinaryOperation, node)
        return _BINARY.get(type(node.operator), 12)
    if is_a(node, cst.Await):
        return 15
    return ATOM


def slot_minimum(parent: cst.CSTNode | None, field: str) -> int | None:
    """The lowest precedence the ``field`` of ``parent`` accepts; None: no expression slot."""
    if parent is None:
        return None
    kind = type(parent).__name__
    if is_a(parent, cst.BinaryOperation):
        parent = cast(cst.BinaryOperation, parent)
        level = _BINARY.get(type(parent.operator), 12)
        if level == 14:
            return 15 if field == "left" else 13
        return level if field == "left" else level + 1
    if is_a(parent, cst.BooleanOperation):
        parent = cast(cst.BooleanOperation, parent)
        level = 3 if is_a(parent.operator, cst.Or) else 4
        return level if field == "left" else level + 1
    if is_a(parent, cst.UnaryOperation):
        parent = cast(cst.UnaryOperation, parent)
        return 5 if is_a(parent.operator, cst.Not) else 13
    if is_a(parent, (cst.Comparison, cst.ComparisonTarget)):
        return 7
    if is_a(parent, cst.IfExp):
        return 2 if field == "orelse" else 3
    if is_a(parent, cst.Lambda):
        return 1
    if is_a(parent, cst.Await):
        return ATOM
    if is_a(parent, (cst.Attribute, cst.Call, cst.Subscript)) and field in (
        "value",
        "func",
    ):
        return ATOM
    if is_a(parent, cst.Arg):
        parent = cast(cst.Arg, parent)
        return 0 if parent.keyword is None and parent.star == "" else 1
    if is_a(parent, cst.Element):
        return 0
    if is_a(parent, (cst.StarredElement, cst.StarredDictElement)):
        return 7
    if is_a(parent, (cst.CompFor, cst.CompIf)):
        return 3 if field in ("iter", "test") else None
    if (kind, field) in _STATEMENT_SLOTS:
        return -2
    if is_a(parent, (cst.Return, cst.For, cst.Yield)) and field in ("value", "iter"):
        return -1
    if is_a(parent, (cst.If, cst.While, cst.Decorator)):
        return 0
    return 1


def needs_parens(node: cst.CSTNode, parent: cst.CSTNode | None, field: str) -> bool:
    """Whether ``node`` must be wrapped to keep its meaning in ``parent.field``."""
    if not is_a(node, cst.BaseExpression) or is_a(node, cst.StarredElement):
        return False
    minimum = slot_minimum(parent, field)
    if minimum is None:
        return False
    if (
        is_a(node, cst.NamedExpr)
        and not getattr(node, "lpar", None)
        and (type(parent).__name__, field) in _STATEMENT_SLOTS
    ):
        return True
    return precedence(node) < minimum
