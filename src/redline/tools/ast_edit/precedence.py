"""Operator precedence: when an expression needs parentheses in the slot it lands in.

Numbers follow the Python reference's precedence table, low to high. A slot states the
lowest precedence it accepts unparenthesised.
"""

from __future__ import annotations

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


def precedence(node: cst.CSTNode) -> int:
    """How tightly an expression binds; parenthesised expressions are atoms."""
    if getattr(node, "lpar", None):
        return ATOM
    if isinstance(node, cst.Yield):
        return -2
    if isinstance(node, (cst.Tuple, cst.GeneratorExp)):
        return -1
    if isinstance(node, cst.NamedExpr):
        return 0
    if isinstance(node, cst.Lambda):
        return 1
    if isinstance(node, cst.IfExp):
        return 2
    if isinstance(node, cst.BooleanOperation):
        return 3 if isinstance(node.operator, cst.Or) else 4
    if isinstance(node, cst.UnaryOperation):
        return 5 if isinstance(node.operator, cst.Not) else 13
    if isinstance(node, cst.Comparison):
        return 6
    if isinstance(node, cst.BinaryOperation):
        return _BINARY.get(type(node.operator), 12)
    if isinstance(node, cst.Await):
        return 15
    return ATOM


def slot_minimum(parent: cst.CSTNode | None, field: str) -> int | None:
    """The lowest precedence the ``field`` of ``parent`` accepts; None: no expression slot."""
    if parent is None:
        return None
    kind = type(parent).__name__
    if isinstance(parent, cst.BinaryOperation):
        level = _BINARY.get(type(parent.operator), 12)
        if level == 14:
            return 15 if field == "left" else 13
        return level if field == "left" else level + 1
    if isinstance(parent, cst.BooleanOperation):
        level = 3 if isinstance(parent.operator, cst.Or) else 4
        return level if field == "left" else level + 1
    if isinstance(parent, cst.UnaryOperation):
        return 5 if isinstance(parent.operator, cst.Not) else 13
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
        return 7
    if isinstance(parent, cst.IfExp):
        return 2 if field == "orelse" else 3
    if isinstance(parent, cst.Lambda):
        return 1
    if isinstance(parent, cst.Await):
        return ATOM
    if isinstance(parent, (cst.Attribute, cst.Call, cst.Subscript)) and field in (
        "value",
        "func",
    ):
        return ATOM
    if isinstance(parent, cst.Arg):
        return 0 if parent.keyword is None and parent.star == "" else 1
    if isinstance(parent, cst.Element):
        return 0
    if isinstance(parent, (cst.StarredElement, cst.StarredDictElement)):
        return 7
    if isinstance(parent, (cst.CompFor, cst.CompIf)):
        return 3 if field in ("iter", "test") else None
    if (kind, field) in _STATEMENT_SLOTS:
        return -2
    if isinstance(parent, (cst.Return, cst.For, cst.Yield)) and field in ("value", "iter"):
        return -1
    if isinstance(parent, (cst.If, cst.While, cst.Decorator)):
        return 0
    return 1


def needs_parens(node: cst.CSTNode, parent: cst.CSTNode | None, field: str) -> bool:
    """Whether ``node`` must be wrapped to keep its meaning in ``parent.field``."""
    if not isinstance(node, cst.BaseExpression) or isinstance(node, cst.StarredElement):
        return False
    minimum = slot_minimum(parent, field)
    if minimum is None:
        return False
    if (
        isinstance(node, cst.NamedExpr)
        and not node.lpar
        and (type(parent).__name__, field) in _STATEMENT_SLOTS
    ):
        return True
    return precedence(node) < minimum
