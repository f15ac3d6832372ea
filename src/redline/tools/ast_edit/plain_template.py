"""Whether libcst surely accepts a rewrite template, told with `ast` alone.

Compiling a template with libcst (:func:`.pattern.compile_template`) imports libcst
(about 0.1 s of a command's start) only to learn, for most templates, that the text is
fine. Its checks are the metavariable names (:func:`.metavars.check_template_names`, run
without libcst by both ways) and the parse: libcst's ``parse_expression`` of the text with
every metavariable swapped for its placeholder, tried first as it stands (then with
``*``/``**`` before a ``$$$``, then as statements). When that first text is a *plain*
expression -- one line of printable ASCII, no comment, parsed by `ast` as an expression
made only of the common node kinds below, which libcst's grammar has always had -- libcst
parses it too, so the template compiles and can wait until a file needs it. Anything
else (statements, a ``$$$`` that needs ``*``, f-strings, lambdas, walrus, ``await``,
soft keywords, several lines ...) is compiled with libcst up front as before, so every
error is still raised before any file is read, with the same message.
"""

from __future__ import annotations

import ast
import keyword

from redline.workspace.pyparse import parse_expression

# Node kinds a plain template may hold (each one's fields are of these kinds too).
_PLAIN: tuple[type[ast.AST], ...] = (
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.keyword,
    ast.Constant,
    ast.Compare,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.IfExp,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.comprehension,
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def plain_expression(text: str) -> bool:
    """True when ``text`` (a template with its metavariables replaced, no ``*`` added)
    is a plain expression: libcst's ``parse_expression`` surely parses it."""
    if not text or not text.isascii() or not text.isprintable() or "#" in text:
        return False
    try:
        tree = parse_expression(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    while stack:
        node, parent = stack.pop()
        if not _plain(node, parent):
            return False
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return True


def _plain(node: ast.AST, parent: ast.AST | None) -> bool:
    if isinstance(node, ast.Starred):
        # `f(*a)` only: `a[*b]` (3.11) and displays are left to libcst to judge.
        return isinstance(parent, ast.Call) and node in parent.args
    if not isinstance(node, _PLAIN):
        return False
    if isinstance(node, ast.comprehension):
        return not node.is_async
    if isinstance(node, ast.Dict):
        return None not in node.keys  # no `**m` in a display
    names: list[str | None] = []
    if isinstance(node, ast.Name):
        names.append(node.id)
    elif isinstance(node, ast.Attribute):
        names.append(node.attr)
    elif isinstance(node, ast.keyword):
        names.append(node.arg)
    return not any(name is not None and keyword.issoftkeyword(name) for name in names)
