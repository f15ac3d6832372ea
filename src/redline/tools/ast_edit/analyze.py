"""One file, all operations: the `ast` search first, libcst only where it is needed.

Runs in worker processes, so it takes plain data (text and compiled operations) and
returns a picklable :class:`FileResult` with an empty path (the caller fills it in).

A search whose patterns :mod:`ast_match` supports runs on Python's `ast` alone and never
imports libcst, and so does a rewrite renaming a call (:mod:`ast_splice`); another
rewrite with a match, or a file where the `ast` way is unsure, goes on to
:mod:`analyze_cst` (the first such file imports libcst).
"""

from __future__ import annotations

import gc

from redline.tools.ast_edit.ast_match import Located, locate_matches, pattern_for, search_text
from redline.tools.ast_edit.ast_splice import splice_calls
from redline.tools.ast_edit.locate import text_has_words
from redline.tools.ast_edit.ops import CompiledOp
from redline.tools.ast_edit.results import FileResult, splice
from redline.tools.ast_edit.skeleton import text_fits

__all__ = ["analyze", "text_has_words", "truncate"]


def analyze(text: str, ops: list[CompiledOp], rewrite: bool, *, fast: bool = True) -> FileResult:
    """Matches (and the rewritten text) of ``ops`` in ``text``; errors as a result.

    A search whose patterns :mod:`ast_match` supports runs on Python's `ast` alone
    (``fast=False`` forces the libcst way, for comparing the two).

    The cyclic garbage collector is paused meanwhile: a parse allocates a node object
    per piece of syntax, and each few hundred allocations started a collection that
    walked the tree being built (and, the older generations, every tree still alive),
    yet trees hold no cycles -- they are freed as soon as they are dropped. Measured on
    the ten standard-library packages (`$A[$B]`, every file parsed, one process): 17 %
    of the CPU time. The collector runs again between files, so what cycles anything
    else made are still collected.
    """
    if not gc.isenabled():
        return _analyze(text, ops, rewrite, fast)
    gc.disable()
    try:
        return _analyze(text, ops, rewrite, fast)
    finally:
        gc.enable()


def _analyze(text: str, ops: list[CompiledOp], rewrite: bool, fast: bool) -> FileResult:
    located: Located | None = None
    if fast:
        active = [op for op in ops if _may_match(text, op)]
        if not active:
            return FileResult("")
        pairs = [(op.index, op.source) for op in active]
        if not rewrite:
            found = search_text(text, pairs)
            if found is not None:
                return found
        else:
            if len(active) == 1 and active[0].splice is not None:
                old, new = active[0].splice
                spliced = splice_calls(text, active[0].index, active[0].source, old, new)
                if spliced is not None:
                    return spliced
            located = locate_matches(text, pairs)
            if located is not None and not any(located.lines.values()):
                return FileResult("")
            ops = active
    from redline.tools.ast_edit.analyze_cst import analyze_cst

    return analyze_cst(text, ops, rewrite, located)


def _may_match(text: str, op: CompiledOp) -> bool:
    """The words, and for a pattern the `ast` search supports its token runs too."""
    if not text_has_words(text, op.words):
        return False
    return pattern_for(op.source) is None or text_fits(text, op.source)


def truncate(result: FileResult, keep: int) -> FileResult:
    """The result with only its first ``keep`` matches (for the replacement limit)."""
    kept = result.matches[:keep]
    if result.old_text is None or result.new_text is None:
        return FileResult(
            result.path, kept, result.error, result.error_kind, result.sha256, result.encoding
        )
    # Only a rewrite has texts: libcst is loaded already.
    from redline.tools.ast_edit.analyze_cst import parses

    new_text = splice(result.old_text, kept)
    problem = parses(new_text, True) and parses(new_text, False)
    if problem is not None:
        return FileResult(
            result.path,
            error=f"cut at the limit, the rewritten file would not parse ({problem}); left out",
            error_kind="rewrite",
            sha256=result.sha256,
        )
    return FileResult(
        result.path, kept, None, None, result.sha256, result.encoding, result.old_text, new_text
    )
