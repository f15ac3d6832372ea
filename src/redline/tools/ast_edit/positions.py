"""Character offsets of libcst nodes, from one code-generation pass.

libcst's PositionProvider and ByteSpanPositionProvider run the same code generation
plus their own bookkeeping (about 4x the cost of this pass, see docs/performance.md);
rewriting needs plain offsets into the exact source text, which the codegen hooks give
directly.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import cast

import libcst as cst
from libcst._nodes.internal import CodegenState

from redline.tools.ast_edit.nodes import child_nodes
from redline.tools.ast_edit.precedence import is_a

Span = tuple[int, int]
_LINE_BREAK = re.compile("[\r\n]")


class _Syntactic:
    """``record_syntactic_position`` without a generator: libcst enters one per
    expression and statement, so its cost is a large part of the whole pass."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self,
        state: _OffsetState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exc: object) -> None:
        state = self.state
        start = self.start
        end = len(state.tokens)
        if self.start_node is not None:
            start = state.span(self.start_node)[0]
        if self.end_node is not None:
            end = state.span(self.end_node)[1]
        state.syntactic[id(self.node)] = (start, end)


@dataclass
class _OffsetState(CodegenState):
    """Records where each node's tokens begin and end, as indices into ``tokens``
    (turned into character offsets once, when the pass is over): no work per token."""

    full: dict[int, Span] = field(default_factory=dict)
    syntactic: dict[int, Span] = field(default_factory=dict)
    stack: list[int] = field(default_factory=list)
    popped: str = ""

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            # Spans recorded before the pop may still reach past it; keep its length.
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.full[id(node)] = (self.stack.pop(), len(self.tokens))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)

    def span(self, node: cst.CSTNode) -> Span:
        return self.syntactic.get(id(node)) or self.full[id(node)]

    def offsets(self) -> list[int]:
        """Character offset of each token index (one past the popped newline too)."""
        return [0, *accumulate(map(len, [*self.tokens, self.popped]))]


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
        self._offsets = state.offsets()
        # Keep the tree alive: offsets are keyed by node identity.
        self._root = root
        self._newline: str | None = None
        self._line_starts: list[int] | None = None

    @property
    def newline(self) -> str:
        """The line break new lines get: CRLF if the code uses it anywhere, else LF."""
        if self._newline is None:
            self._newline = "\r\n" if "\r\n" in self.code else "\n"
        return self._newline

    def line_start(self, offset: int) -> int:
        """Where the line holding ``offset`` begins (after the last CR or LF before it)."""
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in _LINE_BREAK.finditer(self.code))]
        return self._line_starts[bisect.bisect_right(self._line_starts, offset) - 1]

    @classmethod
    def of_module(cls, module: cst.Module, source: str | None = None) -> Positions:
        return cls(module, module.default_indent, module.default_newline, source)

    def _mapped(self, span: Span) -> Span:
        """Character offsets in the source of a span of token indices."""
        start, end = self._offsets[span[0]], self._offsets[span[1]]
        if self._map is None:
            return start, end
        return self._map(start), self._map(end)

    def full(self, node: cst.CSTNode) -> Span:
        """Everything the node prints, its own parentheses included."""
        return self._mapped(self._full[id(node)])

    def syntactic(self, node: cst.CSTNode) -> Span:
        """The node without surrounding parentheses, commas and trailing whitespace."""
        span = self._syntactic.get(id(node)) or self._full[id(node)]
        if is_a(node, cst.BaseSmallStatement):
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
        if is_a(node, cst.BaseExpression) and not is_a(node, cst.StarredElement):
            return self.expression(node)
        start, end = self.syntactic(node)
        if is_a(node, cst.BaseCompoundStatement):
            start = self.statement_start(node)
        elif is_a(node, cst.Param):
            param = cast(cst.Param, node)
            last: cst.CSTNode | None = param.default
            if last is None and param.annotation is not None:
                last = param.annotation.annotation
            if last is not None:
                end = max(end, self.expression(last)[1])
        elif is_a(node, (cst.DictElement, cst.StarredDictElement)):
            value = cast(cst.DictElement | cst.StarredDictElement, node).value
            end = max(end, self.expression(value)[1])
        elif is_a(node, (cst.Element, cst.StarredElement)):
            value = cast(cst.Element | cst.StarredElement, node).value
            end = max(end, self.expression(value)[1])
            if is_a(node, cst.Element):
                start = self.expression(value)[0]
        elif is_a(node, cst.ImportAlias):
            alias = cast(cst.ImportAlias, node)
            target = alias.asname.name if alias.asname is not None else alias.name
            end = max(end, self.syntactic(target)[1])
        elif is_a(node, cst.WithItem):
            item = cast(cst.WithItem, node)
            tail = item.asname.name if item.asname is not None else item.item
            end = max(end, self.full(tail)[1])
        # A separating comma after the item (``assert``'s comma is inside it).
        comma = None if is_a(node, cst.Assert) else getattr(node, "comma", None)
        if is_a(comma, cst.Comma) and id(comma) in self._full:
            end = min(end, self.full(cast(cst.Comma, comma))[0])
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
