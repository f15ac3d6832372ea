"""Character offsets of libcst nodes, from one code-generation pass.

libcst's PositionProvider reports lines and columns through a metadata wrapper that
copies the tree; rewriting needs plain offsets into the exact source text, which the
same codegen hooks give directly.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState

from redline.tools.ast_edit.nodes import child_nodes

Span = tuple[int, int]


@dataclass
class _OffsetState(CodegenState):
    offset: int = 0
    full: dict[int, Span] = field(default_factory=dict)
    syntactic: dict[int, Span] = field(default_factory=dict)
    stack: list[int] = field(default_factory=list)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.offset -= len(self.tokens.pop())

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.full[id(node)] = (self.stack.pop(), self.offset)

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            end = self.offset
            if start_node is not None:
                start = self._pos(start_node)[0]
            if end_node is not None:
                end = self._pos(end_node)[1]
            self.syntactic[id(node)] = (start, end)

    def _pos(self, node: cst.CSTNode) -> Span:
        return self.syntactic.get(id(node)) or self.full[id(node)]


class _OffsetMap:
    """Maps offsets in libcst's regenerated code to the source it was parsed from.

    libcst reproduces source exactly except in rare spots (it drops the space in
    ``except E :``); offsets are then realigned so edits still land in the right place.
    """

    def __init__(self, code: str, source: str) -> None:
        matcher = difflib.SequenceMatcher(None, code, source, autojunk=False)
        self.blocks = [(a, b, size) for a, b, size in matcher.get_matching_blocks() if size]
        self.starts = [a for a, _b, _size in self.blocks]

    def __call__(self, offset: int) -> int:
        index = bisect.bisect_right(self.starts, offset) - 1
        if index < 0:
            return 0
        a, b, size = self.blocks[index]
        return b + min(offset - a, size)


class Positions:
    """Offsets of every node of one tree in the text it was parsed from."""

    def __init__(
        self,
        root: cst.CSTNode,
        default_indent: str = "    ",
        newline: str = "\n",
        source: str | None = None,
    ):
        state = _OffsetState(default_indent=default_indent, default_newline=newline)
        root._codegen(state)
        code = "".join(state.tokens)
        self._map = _OffsetMap(code, source) if source is not None and source != code else None
        self.code = code if source is None else source
        self._full = state.full
        self._syntactic = state.syntactic
        # Keep the tree alive: offsets are keyed by node identity.
        self._root = root
        self._newline: str | None = None

    @property
    def newline(self) -> str:
        """The line break new lines get: CRLF if the code uses it anywhere, else LF."""
        if self._newline is None:
            self._newline = "\r\n" if "\r\n" in self.code else "\n"
        return self._newline

    @classmethod
    def of_module(cls, module: cst.Module, source: str | None = None) -> Positions:
        return cls(module, module.default_indent, module.default_newline, source)

    def _mapped(self, span: Span) -> Span:
        if self._map is None:
            return span
        return self._map(span[0]), self._map(span[1])

    def full(self, node: cst.CSTNode) -> Span:
        """Everything the node prints, its own parentheses included."""
        return self._mapped(self._full[id(node)])

    def syntactic(self, node: cst.CSTNode) -> Span:
        """The node without surrounding parentheses, commas and trailing whitespace."""
        span = self._syntactic.get(id(node)) or self._full[id(node)]
        if isinstance(node, cst.BaseSmallStatement):
            # libcst's own span of some statements stops early (``assert a, msg`` ends
            # before ``, msg``): a statement always reaches the end of its last part.
            end = span[1]
            for child, _name in child_nodes(node):
                child_span = self._syntactic.get(id(child)) or self._full.get(id(child))
                if child_span is not None:
                    end = max(end, child_span[1])
            span = (span[0], end)
        return self._mapped(span)

    def expression(self, node: cst.CSTNode) -> Span:
        """An expression with its own parentheses (they belong to a capture)."""
        if getattr(node, "lpar", None):
            return self.full(node)
        return self.syntactic(node)

    def item(self, node: cst.CSTNode) -> Span:
        """An item of a sequence: its text without separators or layout around it."""
        start, end = self.syntactic(node)
        if isinstance(node, cst.BaseExpression) and not isinstance(node, cst.StarredElement):
            return self.expression(node)
        if isinstance(node, cst.BaseCompoundStatement):
            start = self.statement_start(node)
        elif isinstance(node, cst.Param):
            last: cst.CSTNode | None = node.default
            if last is None and node.annotation is not None:
                last = node.annotation.annotation
            if last is not None:
                end = max(end, self.expression(last)[1])
        elif isinstance(node, (cst.DictElement, cst.StarredDictElement)):
            end = max(end, self.expression(node.value)[1])
        elif isinstance(node, (cst.Element, cst.StarredElement)):
            end = max(end, self.expression(node.value)[1])
            if isinstance(node, cst.Element):
                start = self.expression(node.value)[0]
        elif isinstance(node, cst.ImportAlias):
            target = node.asname.name if node.asname is not None else node.name
            end = max(end, self.syntactic(target)[1])
        elif isinstance(node, cst.WithItem):
            tail = node.asname.name if node.asname is not None else node.item
            end = max(end, self.full(tail)[1])
        # A separating comma after the item (``assert``'s comma is inside it).
        comma = None if isinstance(node, cst.Assert) else getattr(node, "comma", None)
        if isinstance(comma, cst.Comma) and id(comma) in self._full:
            end = min(end, self.full(comma)[0])
        return start, end

    def statement_start(self, node: cst.CSTNode) -> int:
        """Where a statement's own text begins: its first decorator, after comments above."""
        decorators = getattr(node, "decorators", ())
        target = decorators[0] if decorators else node
        start = self.full(target)[0]
        leading = getattr(target, "leading_lines", ())
        if leading:
            start = self.full(leading[-1])[1]
        code = self.code
        while start < len(code) and code[start] in " \t\f":
            start += 1
        return start
