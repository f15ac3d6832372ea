"""Operations as given ({pat, out}), compiled and checked up front, without libcst when
they only search.

A search whose pattern the `ast` search supports (:mod:`ast_pattern`) needs nothing of
libcst unless a file makes the `ast` search unsure; such an operation compiles here from
its text alone (its words, its normalized source), and its libcst pattern
(:attr:`CompiledOp.pattern`, :mod:`pattern`) is compiled the first time it is needed. A
rewrite renaming a call (``F($$$X)`` into ``G($$$X)``, :mod:`ast_splice`) compiles the same
way, its template when first needed (both texts always compile), and so does a rewrite
whose template is a plain expression (:mod:`plain_template`: its names are checked here,
and libcst surely parses it). Any other operation, and every other rewrite, is compiled
with libcst at once, so every error a pattern or template can have is still raised before
any file is read, with the same message.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from redline.tools.ast_edit.ast_pattern import compile_ast_pattern
from redline.tools.ast_edit.metavars import (
    PatternError,
    check_kinds,
    check_template_names,
    normalize,
    pattern_words,
    substitute,
)
from redline.tools.ast_edit.plain_template import plain_expression

if TYPE_CHECKING:
    from redline.tools.ast_edit.pattern import CompiledPattern, CompiledTemplate


@dataclass(frozen=True)
class CompiledOp:
    """One operation: ``source`` is the normalized pattern text, ``words`` its identifiers
    and keywords (the prefilter's), ``template`` the compiled rewrite (None to search, or
    until first needed: :attr:`rendering`)."""

    index: int
    pat: str
    out: str | None
    source: str
    words: frozenset[str]
    template: CompiledTemplate | None = None
    compiled: CompiledPattern | None = field(default=None, repr=False, compare=False)
    #: ``(F, G)`` for a rewrite of ``F($$$X)`` into ``G($$$X)`` compiled without libcst
    #: (:mod:`.ast_splice` writes it; ``template`` is then compiled when first needed).
    splice: tuple[str, str] | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return f"operation {self.index + 1} ({self.pat!r})"

    @property
    def rewrites(self) -> bool:
        return self.out is not None

    @cached_property
    def rendering(self) -> CompiledTemplate:
        """The compiled rewrite template (imports libcst and compiles it on first use
        for an operation compiled without it)."""
        if self.template is not None:
            return self.template
        from redline.tools.ast_edit.pattern import compile_op

        template = compile_op(self.index, self.pat, self.out)[1]
        assert template is not None  # only asked of a rewrite
        return template

    @cached_property
    def pattern(self) -> CompiledPattern:
        """The libcst pattern (imports libcst and compiles it on first use)."""
        if self.compiled is not None:
            return self.compiled
        from redline.tools.ast_edit.pattern import compile_pattern

        return compile_pattern(self.pat, _what(self.index, self.pat))


def _what(index: int, pat: str) -> str:
    return f"operation {index + 1}: pattern {pat!r}"


@dataclass(frozen=True)
class OpSpec:
    pat: str
    out: str | None = None


def _spec(op: object) -> OpSpec:
    if isinstance(op, OpSpec):
        return op
    if isinstance(op, Mapping):
        return OpSpec(str(op["pat"]), None if op.get("out") is None else str(op["out"]))
    if isinstance(op, (tuple, list)) and len(op) == 2:
        return OpSpec(str(op[0]), None if op[1] is None else str(op[1]))
    pat = getattr(op, "pat", None)
    if pat is not None:
        out = getattr(op, "out", None)
        return OpSpec(str(pat), None if out is None else str(out))
    raise PatternError(f"an operation needs 'pat' (and 'out' to rewrite), got {op!r}")


def _search_only(index: int, spec: OpSpec, prefix: str) -> CompiledOp | None:
    """The operation compiled without libcst, or None when it needs libcst up front (a
    rewrite, or a pattern the `ast` search does not support). Raises the PatternError the
    libcst compile would raise first (a bad metavariable, ``$X`` with ``$$$X``)."""
    if spec.out is not None:
        return None
    source = normalize(spec.pat)
    if not source:
        return None
    what = f"{prefix}pattern {spec.pat!r}"
    sub = substitute(source, what)
    check_kinds(sub, what)
    if compile_ast_pattern(source) is None:
        return None
    return CompiledOp(index, spec.pat, None, source, pattern_words(sub.text))


# ``F($$$X)``, F a dotted name (the only shape :func:`_call_splice` takes).
_CALL = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\(\$\$\$([A-Z][A-Z0-9_]*)\)"
)


def _call_splice(index: int, spec: OpSpec, prefix: str) -> CompiledOp | None:
    """A rewrite of ``F($$$X)`` into ``G($$$X)`` (F and G dotted names, no keyword, the
    same capture), compiled without libcst: both always compile, so no error the libcst
    compile would raise is put off. None for any other operation."""
    if spec.out is None:
        return None
    pattern, template = _CALL.fullmatch(spec.pat), _CALL.fullmatch(spec.out)
    if pattern is None or template is None or pattern[2] != template[2]:
        return None
    names = pattern[1].split(".") + template[1].split(".")
    if any(keyword.iskeyword(name) or keyword.issoftkeyword(name) for name in names):
        return None
    op = _search_only(index, OpSpec(spec.pat), prefix)
    if op is None:
        return None
    return CompiledOp(
        index, spec.pat, spec.out, op.source, op.words, splice=(pattern[1], template[1])
    )


def _plain_rewrite(index: int, spec: OpSpec, prefix: str) -> CompiledOp | None:
    """A rewrite whose pattern the `ast` search supports and whose template is a plain
    expression (or empty), compiled without libcst: the template's names are checked as
    the libcst compile checks them (the same PatternError), and libcst surely parses its
    text (:func:`.plain_template.plain_expression`). None for any other operation."""
    if spec.out is None:
        return None
    op = _search_only(index, OpSpec(spec.pat), prefix)
    if op is None:
        return None
    pattern_what = f"{prefix}pattern {spec.pat!r}"
    bound = check_kinds(substitute(op.source, pattern_what), pattern_what)
    source = normalize(spec.out)
    what = f"{prefix}rewrite {spec.out!r}"
    sub = substitute(source, what)
    check_template_names(sub, bound, what)
    if source and not plain_expression(sub.text):
        return None
    return CompiledOp(index, spec.pat, spec.out, op.source, op.words)


def compile_ops(
    ops: Iterable[object], *, where: Callable[[int], str] | None = None
) -> list[CompiledOp]:
    """Compile ``[{pat, out}, ...]`` (``out`` None: search only); PatternError on bad input.

    ``where(index)`` starts an error's message (default ``operation N: ``): the command
    line names its ``--pattern`` options instead.
    """
    compiled: list[CompiledOp] = []
    for index, raw in enumerate(ops):
        spec = _spec(raw)
        prefix = where(index) if where is not None else f"operation {index + 1}: "
        op = (
            _search_only(index, spec, prefix)
            or _call_splice(index, spec, prefix)
            or _plain_rewrite(index, spec, prefix)
        )
        if op is None:
            from redline.tools.ast_edit.pattern import compile_op

            pattern, template = compile_op(index, spec.pat, spec.out, prefix)
            op = CompiledOp(
                index, spec.pat, spec.out, pattern.source, pattern.words, template, pattern
            )
        compiled.append(op)
    if not compiled:
        raise PatternError("no operations given: pass at least one pattern")
    return compiled


def ops_key(ops: Iterable[object]) -> tuple[tuple[str, str | None], ...]:
    """A hashable, picklable description of operations (cache key and worker payload)."""
    return tuple((spec.pat, spec.out) for spec in map(_spec, ops))
