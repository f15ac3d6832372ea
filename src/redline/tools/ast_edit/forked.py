"""A search shared with forked children, for a process with no other thread on idle CPUs.

The pool (:mod:`.engine`) is the general answer: kept between searches, safe beside
threads (forkserver), fed in batches. For one search from the command line on CPUs that
are free now, it costs more than it must: importing ``multiprocessing`` and
``concurrent.futures`` (about 20 ms), its feeder and manager threads, and a main process
that only waits while its own CPU could parse. Here the files to analyse are cut into
as many runs of neighbouring files as there are CPUs to use, of about the same number of
bytes; each run but the first goes to a child forked for it (the files' bytes are already
in memory, so nothing is read twice), which pickles its results into a pipe and ends;
the first run is analysed here meanwhile, so its results still come first and in order.

A child that fails (killed, out of memory, a result that cannot be pickled) only loses
its run: :meth:`Forked.result` answers None and the caller analyses those files itself.
Closing (the search stopped early, or finished) kills what still runs and reaps every
child. Only for a process running no other thread: a forked child inherits no thread,
and locks another thread held would stay locked in it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from redline.tools.ast_edit.results import FileResult

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this process may fork children for a search (it has ``os.fork`` and runs
    no other thread)."""
    return hasattr(os, "fork") and threading.active_count() == 1


def runs(sizes: Sequence[int], parts: int) -> list[range]:
    """``range(len(sizes))`` cut into at most ``parts`` runs of neighbouring indexes with
    about the same total size each (none empty)."""
    total = sum(sizes)
    cuts: list[range] = []
    start = 0
    done = 0
    for part in range(1, parts):
        goal = total * part / parts
        end = start
        while end < len(sizes) and done + sizes[end] / 2 < goal:
            done += sizes[end]
            end += 1
        if end > start:
            cuts.append(range(start, end))
            start = end
    if start < len(sizes):
        cuts.append(range(start, len(sizes)))
    return cuts


class Forked(Generic[T]):
    """The children working on runs of ``items``, and their results once read."""

    def __init__(self) -> None:
        self._where: dict[int, tuple[int, int]] = {}  # id(item) -> (child, position)
        self._children: list[tuple[int, int]] = []  # (pid, read end of its pipe)
        self._results: dict[int, list[FileResult] | None] = {}

    @property
    def pids(self) -> list[int]:
        """The children's process ids, in the order they were started."""
        return [pid for pid, _read in self._children]

    def holds(self, item: T) -> bool:
        return id(item) in self._where

    def start(self, items: Sequence[T], work: Callable[[Sequence[T]], list[FileResult]]) -> bool:
        """Fork a child to run ``work(items)``; False (nothing started) if it cannot."""
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return False
        if pid == 0:  # the child: never returns
            status = 1
            try:
                os.close(read)
                data = pickle.dumps(work(items), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(data)
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        child = len(self._children)
        self._children.append((pid, read))
        for position, item in enumerate(items):
            self._where[id(item)] = (child, position)
        return True

    def result(self, item: T) -> FileResult | None:
        """The child's result for ``item`` (waiting for that child); None if it failed."""
        child, position = self._where[id(item)]
        if child not in self._results:
            self._results[child] = self._read(child)
        found = self._results[child]
        return None if found is None or position >= len(found) else found[position]

    def _read(self, child: int) -> list[FileResult] | None:
        pid, read = self._children[child]
        chunks: list[bytes] = []
        try:
            with os.fdopen(read, "rb", closefd=False) as pipe:
                chunks.append(pipe.read())
        except OSError:
            chunks = []
        finally:
            os.close(read)
            self._children[child] = (pid, -1)
        status = self._reap(pid, kill=False)
        if status != 0 or not chunks:
            return None
        try:
            loaded = pickle.loads(b"".join(chunks))
        except Exception:  # a truncated pipe: the child died while writing
            return None
        return loaded if isinstance(loaded, list) else None

    @staticmethod
    def _reap(pid: int, *, kill: bool) -> int | None:
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            _pid, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return None
        return os.waitstatus_to_exitcode(status)

    def close(self) -> None:
        """Kill the children whose results were not read, and reap them all."""
        for child, (pid, read) in enumerate(self._children):
            if read < 0:
                continue
            os.close(read)
            self._children[child] = (pid, -1)
            self._reap(pid, kill=True)
