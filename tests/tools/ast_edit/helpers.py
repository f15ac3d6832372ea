"""Helpers for ast_edit tests: operations on text without touching the disk."""

from __future__ import annotations

from pathlib import Path

from redline.tools.ast_edit import FileResult, compile_ops
from redline.tools.ast_edit.analyze import analyze


def run(text: str, *ops: tuple[str, str | None], rewrite: bool = True) -> FileResult:
    return analyze(text, compile_ops(ops), rewrite)


def rewritten(text: str, pat: str, out: str) -> str:
    result = run(text, (pat, out))
    assert result.error is None, result.error
    assert result.new_text is not None, "no match"
    return result.new_text


def matched(text: str, pat: str) -> list[str]:
    result = run(text, (pat, None), rewrite=False)
    assert result.error is None, result.error
    return [match.text for match in result.matches]


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path
