"""A search shared with forked children (issue 44): the command line on idle CPUs."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from redline.tools.ast_edit import cpus, engine, forked, search
from redline.tools.ast_edit.results import FileResult

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")


@pytest.mark.parametrize(
    ("sizes", "parts", "expected"),
    [
        ([10, 10, 10, 10], 2, [range(0, 2), range(2, 4)]),
        ([30, 5, 5, 5, 5], 2, [range(0, 1), range(1, 5)]),
        ([1, 1, 1, 1, 1, 1], 3, [range(0, 2), range(2, 4), range(4, 6)]),
        ([100], 2, [range(0, 1)]),  # one file: nothing to share
        ([], 2, []),
        ([5, 5, 5], 1, [range(0, 3)]),
    ],
)
def test_runs_of_neighbouring_files_of_about_the_same_size(
    sizes: list[int], parts: int, expected: list[range]
) -> None:
    assert forked.runs(sizes, parts) == expected


def _reaped(pids: list[int]) -> None:
    assert pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # no such child left: reaped


def _results(items: Sequence[str]) -> list[FileResult]:
    return [FileResult(item, sha256=str(os.getpid())) for item in items]


def test_a_child_answers_for_its_run_and_is_reaped() -> None:
    share: forked.Forked[str] = forked.Forked()
    items = ["a.py", "b.py"]
    assert share.start(items, _results)
    assert share.holds("a.py") or share.holds(items[0])
    first, second = share.result(items[0]), share.result(items[1])
    assert first is not None and second is not None
    assert (first.path, second.path) == ("a.py", "b.py")
    assert first.sha256 != str(os.getpid())  # worked out in the child
    share.close()
    _reaped(share.pids)


def test_a_failing_child_answers_none() -> None:
    def fails(items: Sequence[str]) -> list[FileResult]:
        raise RuntimeError("out of memory, say")

    share: forked.Forked[str] = forked.Forked()
    items = ["a.py"]
    assert share.start(items, fails)
    assert share.result(items[0]) is None
    share.close()


def test_closing_kills_a_child_still_working() -> None:
    read, write = os.pipe()

    def blocks(items: Sequence[str]) -> list[FileResult]:
        os.close(write)
        os.read(read, 1)  # nothing is ever written: waits until killed
        return []

    share: forked.Forked[str] = forked.Forked()
    assert share.start(["a.py"], blocks)
    share.close()  # returns: the child was killed and reaped
    os.close(read)
    os.close(write)
    _reaped(share.pids)


def _corpus(root: Path) -> None:
    for index in range(12):
        body = "".join(f"value_{n} = left_{n} + right_{n}[{n}]\n" for n in range(300))
        (root / f"m{index:02}.py").write_text(body + "print(value_1)\n")
    (root / "broken.py").write_text("def f(:\n    x[1]\n")


@pytest.fixture
def idle(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Two CPUs free, no pool running, a small threshold; the ids of the children forked."""
    monkeypatch.setattr(cpus, "usable_cpus", lambda path=cpus.CPU_MAX: 2)
    monkeypatch.setattr(cpus, "load_average", lambda: 0.0)
    monkeypatch.setattr(engine, "POOL_IDLE_MIN_BYTES", 1_000)
    monkeypatch.setattr(engine, "_cheap_start", lambda workers: True)
    monkeypatch.setattr(forked, "can_fork", lambda: True)
    monkeypatch.setattr(engine, "_get_executor", lambda *a: pytest.fail("no pool here"))
    engine.shutdown_pool()
    started: list[int] = []
    real = forked.Forked.start

    def counted(self: forked.Forked[object], items: Sequence[object], work: object) -> bool:
        ok = real(self, items, work)  # type: ignore[arg-type]
        started.append(self.pids[-1])
        return ok

    monkeypatch.setattr(forked.Forked, "start", counted)
    return started


@pytest.mark.parametrize(
    "ops",
    [[("$A[$B]", None)], [("$A + $B", "$B + $A")], [("print($$$A)", "log($$$A)")]],
)
def test_a_search_shared_with_a_child_gives_the_same_report(
    tmp_path: Path, idle: list[int], ops: list[tuple[str, str | None]]
) -> None:
    _corpus(tmp_path)
    alone = search(tmp_path, ops, workers=1, cache=None)
    shared = search(tmp_path, ops, cache=None)
    assert len(idle) == 1  # one child, with the later run of the files
    assert shared == alone
    _reaped(idle)


def test_a_child_that_dies_leaves_its_files_to_this_process(
    tmp_path: Path, idle: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _corpus(tmp_path)
    ops = [("$A + $B", "$B + $A")]
    alone = search(tmp_path, ops, workers=1, cache=None)
    parent = os.getpid()
    real = engine._process

    def dies_in_the_child(data: bytes, rel: str, key: object, rewrite: bool) -> FileResult:
        if os.getpid() != parent:
            os._exit(9)
        return real(data, rel, key, rewrite)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "_process", dies_in_the_child)
    assert search(tmp_path, ops, cache=None) == alone
    _reaped(idle)


def test_stopping_early_reaps_the_children(tmp_path: Path, idle: list[int]) -> None:
    _corpus(tmp_path)
    files = engine.list_files(tmp_path)
    stream = engine.iter_search(tmp_path, [("$A[$B]", None)], files, cache=None)
    first = next(stream)
    stream.close()
    assert first.path == files[0]
    _reaped(idle)


def test_a_process_with_threads_never_forks() -> None:
    import threading

    ready = threading.Event()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (ready.set(), done.wait()))
    thread.start()
    try:
        ready.wait()
        assert not forked.can_fork()
    finally:
        done.set()
        thread.join()
    assert forked.can_fork() == (threading.active_count() == 1 and sys.platform != "win32")
