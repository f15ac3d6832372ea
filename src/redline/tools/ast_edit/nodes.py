"""What the matcher needs to know about libcst node shapes.

Formatting (whitespace, comments, parentheses, commas, brackets) lives in dedicated
fields of libcst nodes; leaving those fields out of every comparison and walk is what
makes matching formatting-insensitive.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import libcst as cst

from redline.tools.ast_edit.metavars import Meta, placeholder_meta

_FORMAT_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "comma",
        "leading_lines",
        "lines_after_decorators",
        "trailing_whitespace",
        "semicolon",
        "header",
        "footer",
        "indent",
        "newline",
        "equal",
        "dot",
        "colon",
        "first_colon",
        "second_colon",
        "encoding",
        "default_indent",
        "default_newline",
        "has_trailing_newline",
    }
)
# In an f-string, `{x=}` differs from `{x}` only in this field.
_KEEP = {"FormattedStringExpression": frozenset({"equal"})}

_FIELD_CACHE: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def semantic_fields(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    """Field names of a node type that carry meaning (not formatting), in source order."""
    cached = _FIELD_CACHE.get(kind)
    if cached is not None:
        return cached
    keep = _KEEP.get(kind.__name__, frozenset())
    names = tuple(
        f.name
        for f in dataclasses.fields(kind)
        if f.name in keep or not (f.name in _FORMAT_FIELDS or f.name.startswith("whitespace"))
    )
    _FIELD_CACHE[kind] = names
    return names


def child_nodes(node: cst.CSTNode) -> list[tuple[cst.CSTNode, str]]:
    """Semantic children with the field they sit in, in source order."""
    out: list[tuple[cst.CSTNode, str]] = []
    for name in semantic_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append((value, name))
        elif isinstance(value, (tuple, list)):
            out.extend((item, name) for item in value if isinstance(item, cst.CSTNode))
    return out


BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Module)


def block_items(block: cst.CSTNode) -> list[cst.CSTNode]:
    """A block's statements with ``a; b`` lines split, so layout never affects matching."""
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    body: Sequence[cst.CSTNode] = getattr(block, "body", ())
    items: list[cst.CSTNode] = []
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            items.extend(statement.body)
        else:
            items.append(statement)
    return items


def parameter_items(params: cst.Parameters) -> list[cst.CSTNode]:
    """All parameters in source order, with the ``/`` and bare ``*`` markers as items."""
    items: list[cst.CSTNode] = list(params.posonly_params)
    if isinstance(params.posonly_ind, cst.ParamSlash):
        items.append(params.posonly_ind)
    items.extend(params.params)
    if isinstance(params.star_arg, (cst.Param, cst.ParamStar)):
        items.append(params.star_arg)
    items.extend(params.kwonly_params)
    if isinstance(params.star_kwarg, cst.Param):
        items.append(params.star_kwarg)
    return items


def _inner_name(item: cst.CSTNode, plain: bool) -> cst.Name | None:
    """The Name an item consists of, when the item is only a wrapper around it."""
    if isinstance(item, cst.Name):
        return item
    value: Any = None
    if isinstance(item, cst.Arg):
        if item.keyword is None and (not plain or item.star == ""):
            value = item.value
    elif isinstance(item, cst.Element):
        value = item.value
    elif isinstance(item, (cst.StarredElement, cst.StarredDictElement)):
        value = None if plain else item.value
    elif isinstance(item, cst.Param):
        star = item.star if isinstance(item.star, str) else ""
        if item.annotation is None and item.default is None and (not plain or star == ""):
            value = item.name
    elif isinstance(item, cst.Expr):
        value = item.value
    elif isinstance(item, cst.SubscriptElement):
        if isinstance(item.slice, cst.Index) and item.slice.star is None:
            value = item.slice.value
    elif isinstance(item, (cst.ImportAlias, cst.WithItem)):
        if item.asname is None:
            value = item.name if isinstance(item, cst.ImportAlias) else item.item
    elif isinstance(item, cst.NameItem):
        value = item.name
    if isinstance(value, cst.Name) and not value.lpar:
        return value
    return None


def multi_meta(item: cst.CSTNode) -> Meta | None:
    """The ``$$$`` metavariable an item of a sequence stands for, if any."""
    name = _inner_name(item, plain=False)
    if name is None:
        return None
    meta = placeholder_meta(name.value)
    return meta if meta is not None and meta.multi else None


def item_meta(item: cst.CSTNode) -> Meta | None:
    """The ``$NAME`` an item of a sequence stands for: it then matches any one item."""
    if isinstance(item, cst.Name):
        return None
    name = _inner_name(item, plain=True)
    if name is None:
        return None
    meta = placeholder_meta(name.value)
    return meta if meta is not None and not meta.multi else None


def unwrap(node: cst.CSTNode) -> cst.CSTNode:
    """The expression inside a plain item (``f(x)``'s ``x``), else the node itself.

    A plain parameter is its name, so ``lambda $X: $X`` binds ``$X`` to equal code.
    """
    if (
        isinstance(node, cst.Param)
        and node.annotation is None
        and node.default is None
        and not (node.star if isinstance(node.star, str) else "")
    ):
        return node.name
    if isinstance(node, cst.Arg) and node.keyword is None and node.star == "":
        return node.value
    if isinstance(node, (cst.Element, cst.Expr)):
        return node.value
    if (
        isinstance(node, cst.SubscriptElement)
        and isinstance(node.slice, cst.Index)
        and node.slice.star is None
    ):
        return node.slice.value
    return node
