"""ast_edit: structural search-and-replace for Python, previewed as a pending action.

The pure API (no store, no writes) for the CLI and tests::

    ops = compile_ops([("print($$$A)", "logger.info($$$A)")])   # PatternError if bad
    report = search(root, ops, paths=["src"], glob=None, limit=None)
    report.preview()                                           # a Preview to apply
    for result in iter_search(root, ops, list_files(root)): ...  # streaming, path order
"""

from __future__ import annotations

from redline.tools.ast_edit.engine import (
    DEFAULT_CACHE,
    ResultCache,
    TargetError,
    iter_search,
    list_files,
    search,
    shutdown_pool,
)
from redline.tools.ast_edit.metavars import PatternError
from redline.tools.ast_edit.ops import CompiledOp, OpSpec, compile_ops
from redline.tools.ast_edit.results import AstEditReport, FileResult, Match

__all__ = [
    "DEFAULT_CACHE",
    "AstEditReport",
    "CompiledOp",
    "FileResult",
    "Match",
    "OpSpec",
    "PatternError",
    "ResultCache",
    "TargetError",
    "compile_ops",
    "iter_search",
    "list_files",
    "search",
    "shutdown_pool",
]
