"""A byte prefilter for the `ast` search: files that surely hold no match are not parsed."""

from __future__ import annotations

import ast
from functools import lru_cache

from redline.tools.ast_edit.ast_pattern import compile_ast_pattern
from redline.tools.ast_edit.skeleton import data_fits

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
