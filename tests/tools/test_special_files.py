"""Tools refuse named pipes (and devices) with a clear error instead of blocking on them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from redline.review.result import ToolResult
from redline.review.store import PendingActionStore
from redline.tools.ast_edit.engine import TargetError, list_files
from redline.tools.base import ToolContext
from redline.tools.files import (
    EditParams,
    EditTool,
    GrepParams,
    GrepTool,
    ReadParams,
    ReadTool,
    WriteParams,
    WriteTool,
)
from redline.workspace import fsutil

T = TypeVar("T")

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


def _release(fifo: Path) -> None:
    """Open the pipe's writing end once, so a reader stuck in open() (the bug) returns."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.txt").write_text("hello\n")
    os.mkfifo(root / "pipe.txt")
    os.mkfifo(root / "pipe.py")
    yield root
    _release(root / "pipe.txt")
    _release(root / "pipe.py")


async def _bounded(ws: Path, call: Awaitable[T]) -> T:
    """``call``'s result; a hang guard, not a timing assertion: if the tool blocks on the
    pipe (the bug), the pipe is released and the test fails instead of hanging."""
    try:
        return await asyncio.wait_for(call, timeout=60)
    except TimeoutError:
        _release(ws / "pipe.txt")
        _release(ws / "pipe.py")
        pytest.fail("the tool blocked on a named pipe")


def _ctx(root: Path) -> ToolContext:
    return ToolContext(cwd=root, store=PendingActionStore())


async def test_read_refuses_a_fifo(ws: Path) -> None:
    result: ToolResult = await _bounded(
        ws, ReadTool().execute(ReadParams(path="pipe.txt"), _ctx(ws))
    )
    assert result.is_error
    assert result.text == (
        "pipe.txt is a named pipe (FIFO), not a regular file; read shows regular text files only"
    )


async def test_edit_and_write_refuse_a_fifo(ws: Path) -> None:
    store = PendingActionStore()
    ctx = ToolContext(cwd=ws, store=store)
    edited = await _bounded(
        ws, EditTool().execute(EditParams(path="pipe.txt", old="a", new="b"), ctx)
    )
    written = await _bounded(
        ws, WriteTool().execute(WriteParams(path="pipe.txt", content="x\n"), ctx)
    )
    for result in (edited, written):
        assert result.is_error
        assert "pipe.txt is a named pipe (FIFO), not a regular file" in result.text
    assert store.count == 0


async def test_grep_of_a_fifo_finds_nothing_and_does_not_block(ws: Path) -> None:
    result = await _bounded(ws, GrepTool().execute(GrepParams(pattern="hello"), _ctx(ws)))
    assert not result.is_error
    assert "ok.txt:1: hello" in result.text
    assert "pipe" not in result.text


def test_ast_edit_names_a_fifo_target(ws: Path) -> None:
    with pytest.raises(TargetError, match=r"pipe\.py: not a regular file or folder"):
        list_files(ws, ["pipe.py"])


def test_open_regular_refuses_a_fifo_swapped_in_after_the_check(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check on the open descriptor: a pipe that replaced the file after the stat is
    opened without blocking and refused."""
    real_stat = os.stat

    def regular_looking(path: object, *args: object, **kwargs: object) -> os.stat_result:
        st = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path).endswith("pipe.txt"):
            fields = list(st)
            fields[0] = stat.S_IFREG | 0o644
            return os.stat_result(fields)
        return st

    monkeypatch.setattr(fsutil.os, "stat", regular_looking)
    with pytest.raises(fsutil.NotRegularFileError, match="named pipe"):
        fsutil.open_regular(ws / "pipe.txt")
    with fsutil.open_regular(ws / "ok.txt") as handle:
        assert handle.read() == b"hello\n"


def test_read_current_refuses_a_fifo_without_blocking(ws: Path) -> None:
    assert fsutil.read_current(ws / "pipe.txt").kind == "other"


def test_device_files_are_refused_by_kind() -> None:
    if not Path("/dev/null").exists() or not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        pytest.skip("no /dev/null character device")
    with pytest.raises(fsutil.NotRegularFileError, match="is a character device"):
        fsutil.open_regular(Path("/dev/null"))
