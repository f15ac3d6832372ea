"""The structural matcher: a pattern tree against code, formatting ignored on both sides.

A match yields an environment: metavariable name -> capture. Environments are small
dicts copied on every binding, which makes backtracking over ``$$$`` free of undo logic.
Finding candidates is an explicit-stack walk (no libcst visitor: much faster, and no
recursion on deep code); only comparing a candidate recurses, as deep as the pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst import MaybeSentinel

from redline.tools.ast_edit.metavars import Meta, placeholder_meta
from redline.tools.ast_edit.nodes import (
    BLOCKS,
    block_items,
    child_nodes,
    item_meta,
    multi_meta,
    parameter_items,
    semantic_fields,
    unwrap,
)


@dataclass(frozen=True)
class Capture:
    """What a metavariable bound: one node, or a run of sequence items."""

    nodes: tuple[cst.CSTNode, ...]
    multi: bool

    @property
    def node(self) -> cst.CSTNode:
        return self.nodes[0]


Env = dict[str, Capture]


@dataclass(frozen=True)
class Found:
    """One match: the matched nodes (several for a statement sequence) and where they sit."""

    nodes: tuple[cst.CSTNode, ...]
    parent: cst.CSTNode | None
    field: str
    env: Env
    statements: bool


def _norm(value: object) -> object:
    return None if isinstance(value, MaybeSentinel) else value


def nodes_equal(left: cst.CSTNode, right: cst.CSTNode) -> bool:
    """Code equality under the matching rules (formatting ignored)."""
    return match_node(unwrap(left), unwrap(right), {}, placeholders=False) is not None


def _bind(meta: Meta, capture: Capture, env: Env) -> Env | None:
    if meta.name is None:
        return env
    previous = env.get(meta.name)
    if previous is None:
        new = dict(env)
        new[meta.name] = capture
        return new
    if len(previous.nodes) != len(capture.nodes):
        return None
    for old, now in zip(previous.nodes, capture.nodes, strict=True):
        if not nodes_equal(old, now):
            return None
    return env


def match_node(
    pattern: cst.CSTNode, code: cst.CSTNode, env: Env, placeholders: bool = True
) -> Env | None:
    """Match one pattern node against one code node; the extended env, or None."""
    if placeholders and type(pattern) is cst.Name:
        meta = placeholder_meta(pattern.value)
        if meta is not None:
            return _bind(meta, Capture((code,), False), env)
    kind = type(pattern)
    if kind is not type(code):
        if isinstance(pattern, BLOCKS) and isinstance(code, BLOCKS):
            return _match_block(pattern, code, env, placeholders)
        return None
    if isinstance(pattern, BLOCKS):
        return _match_block(pattern, code, env, placeholders)
    if kind is cst.Parameters:
        assert isinstance(pattern, cst.Parameters) and isinstance(code, cst.Parameters)
        found = match_sequence(parameter_items(pattern), parameter_items(code), env, placeholders)
        return found[0] if found else None
    if kind is cst.ImportFrom:
        assert isinstance(pattern, cst.ImportFrom) and isinstance(code, cst.ImportFrom)
        return _match_import_from(pattern, code, env, placeholders)
    if kind is cst.SimpleStatementLine:
        found = match_sequence(block_items(pattern), block_items(code), env, placeholders)
        return found[0] if found else None
    current: Env = env
    for name in semantic_fields(kind):
        left: Any = getattr(pattern, name)
        right: Any = getattr(code, name)
        if left is right:
            continue
        if isinstance(left, cst.CSTNode):
            if not isinstance(right, cst.CSTNode):
                return None
            step = match_node(left, right, current, placeholders)
            if step is None:
                return None
            current = step
        elif isinstance(left, (tuple, list)):
            if not isinstance(right, (tuple, list)):
                return None
            found = match_sequence(left, right, current, placeholders)
            if found is None:
                return None
            current = found[0]
            # `x[a,]` indexes with a tuple, `x[a]` does not.
            if (
                kind is cst.Subscript
                and len(right) == 1
                and isinstance(left[0].comma, cst.Comma) != isinstance(right[0].comma, cst.Comma)
            ):
                return None
        elif name == "star":
            if (_norm(left) or "") != (_norm(right) or ""):
                return None
        elif _norm(left) != _norm(right):
            return None
    return current


def _match_import_from(
    pattern: cst.ImportFrom, code: cst.ImportFrom, env: Env, placeholders: bool
) -> Env | None:
    """``from $M import $$$N``: ``$M`` also takes a relative module (``.``, ``..a``), and a
    lone ``$$$N`` also takes ``*``."""
    current: Env | None = env
    module = pattern.module
    meta = (
        placeholder_meta(module.value)
        if placeholders and isinstance(module, cst.Name) and not pattern.relative
        else None
    )
    if meta is not None and not meta.multi:
        parts: tuple[cst.CSTNode, ...] = tuple(code.relative)
        if code.module is not None:
            parts += (code.module,)
        current = _bind(meta, Capture(parts, False), env)
    else:
        if len(pattern.relative) != len(code.relative):
            return None
        if (pattern.module is None) != (code.module is None):
            return None
        if pattern.module is not None and code.module is not None:
            current = match_node(pattern.module, code.module, env, placeholders)
    if current is None:
        return None
    names, code_names = pattern.names, code.names
    if isinstance(names, cst.ImportStar) or isinstance(code_names, cst.ImportStar):
        if isinstance(names, cst.ImportStar) and isinstance(code_names, cst.ImportStar):
            return current
        if (
            placeholders
            and isinstance(code_names, cst.ImportStar)
            and not isinstance(names, cst.ImportStar)
            and len(names) == 1
        ):
            star_meta = multi_meta(names[0])
            if star_meta is not None:
                return _bind(star_meta, Capture((code_names,), True), current)
        return None
    found = match_sequence(names, code_names, current, placeholders)
    return found[0] if found else None


def _match_block(
    pattern: cst.CSTNode, code: cst.CSTNode, env: Env, placeholders: bool
) -> Env | None:
    found = match_sequence(block_items(pattern), block_items(code), env, placeholders)
    return found[0] if found else None


def _match_item(
    pattern: cst.CSTNode, code: cst.CSTNode, env: Env, placeholders: bool
) -> Env | None:
    if placeholders:
        meta = item_meta(pattern)
        if meta is not None:
            return _bind(meta, Capture((code,), False), env)
    return match_node(pattern, code, env, placeholders)


def match_sequence(
    patterns: Sequence[cst.CSTNode],
    code: Sequence[cst.CSTNode],
    env: Env,
    placeholders: bool = True,
    *,
    start: int = 0,
    anchored: bool = True,
) -> tuple[Env, int] | None:
    """Match pattern items against ``code[start:]``; ``$$$`` items take as few as they can.

    Anchored matches must use every code item; otherwise the end index is returned.
    """
    metas = [multi_meta(item) if placeholders else None for item in patterns]
    fixed_after = [0] * (len(patterns) + 1)
    for index in range(len(patterns) - 1, -1, -1):
        fixed_after[index] = fixed_after[index + 1] + (metas[index] is None)
    if anchored and not any(metas) and len(patterns) != len(code) - start:
        return None
    return _sequence(patterns, metas, fixed_after, code, 0, start, env, placeholders, anchored)


def _sequence(
    patterns: Sequence[cst.CSTNode],
    metas: list[Meta | None],
    fixed_after: list[int],
    code: Sequence[cst.CSTNode],
    pi: int,
    ci: int,
    env: Env,
    placeholders: bool,
    anchored: bool,
) -> tuple[Env, int] | None:
    while True:
        if pi == len(patterns):
            if anchored and ci != len(code):
                return None
            return env, ci
        if len(code) - ci < fixed_after[pi]:
            return None
        meta = metas[pi]
        if meta is None:
            found = _match_item(patterns[pi], code[ci], env, placeholders)
            if found is None:
                return None
            env = found
            pi += 1
            ci += 1
            continue
        most = len(code) - ci - fixed_after[pi + 1]
        for take in range(most + 1):
            bound = _bind(meta, Capture(tuple(code[ci : ci + take]), True), env)
            if bound is None:
                continue
            result = _sequence(
                patterns, metas, fixed_after, code, pi + 1, ci + take, bound, placeholders, anchored
            )
            if result is not None:
                return result
        return None


def find_expression_matches(
    roots: Sequence[tuple[cst.CSTNode, cst.CSTNode | None, str]],
    pattern: cst.CSTNode,
    nested: bool = False,
) -> list[Found]:
    """Matches of an expression pattern under ``roots``: the outermost only, unless
    ``nested`` (searching lists matches inside matches too; rewriting never does)."""
    wanted: type[cst.CSTNode] | None = type(pattern)
    if type(pattern) is cst.Name:
        meta = placeholder_meta(pattern.value)
        if meta is not None:
            wanted = None
    found: list[Found] = []
    stack = list(reversed(roots))
    while stack:
        node, parent, field = stack.pop()
        if (type(node) is wanted) or (wanted is None and isinstance(node, cst.BaseExpression)):
            env = match_node(pattern, node, {})
            if env is not None:
                found.append(Found((node,), parent, field, env, False))
                if not nested:
                    continue
        children = child_nodes(node)
        for child, name in reversed(children):
            stack.append((child, node, name))
    return found


def find_statement_matches(
    blocks: Sequence[cst.CSTNode], patterns: Sequence[cst.CSTNode], nested: bool = False
) -> list[Found]:
    """Matches of a statement pattern (one or more statements) in ``blocks``; the
    outermost only unless ``nested``."""
    found: list[Found] = []
    first = patterns[0]
    first_type = (
        None if multi_meta(first) is not None or item_meta(first) is not None else type(first)
    )
    stack: list[cst.CSTNode] = list(reversed(blocks))
    while stack:
        node = stack.pop()
        if isinstance(node, BLOCKS):
            items = block_items(node)
            index = 0
            descend: list[cst.CSTNode] = []
            while index < len(items):
                result = None
                if first_type is None or type(items[index]) is first_type:
                    result = match_sequence(patterns, items, {}, start=index, anchored=False)
                if result is not None and result[1] > index:
                    env, end = result
                    found.append(Found(tuple(items[index:end]), node, "body", env, True))
                    if nested:
                        descend.extend(items[index:end])
                    index = end
                    continue
                descend.append(items[index])
                index += 1
            stack.extend(
                item for item in reversed(descend) if isinstance(item, cst.BaseCompoundStatement)
            )
            continue
        for child, _name in reversed(child_nodes(node)):
            # Statements only live in blocks, never inside expressions.
            if not isinstance(child, (cst.BaseExpression, cst.BaseSmallStatement)):
                stack.append(child)
    return found
