"""A spare copies the server's memory it shares while it waits, not during its call.

A fork shares its parent's pages until one of them writes a page; the first write to each
shared page then costs a fault and a copy. CPython writes a reference count into every
object it touches, so a served call's first steps fault on every page of the code they
run: about 750 pages for a reviewed call up to its queued record (about 1.5 ms of the
3–4 ms the warm fork spends there, issue 49), and more on its decision's path.

A spare has nothing to do until its call comes, so it asks the kernel to give it its own
copy of every page it still shares with the server (``madvise(MADV_POPULATE_WRITE)``,
Linux 5.14+): only pages present and shared (``/proc/self/pagemap``), a batch at a time,
stopping as soon as a connection waits (the call's pages not copied yet are then copied
as they are written, as without this). Nothing is changed in the memory itself; a spare
and its call hold a private copy of the server's written memory (about 18 MB) instead of
sharing it. Without ``ctypes``, ``madvise``, ``/proc`` or that advice, nothing is done.

Loaded by the server before its first fork (``ctypes`` is not imported by a call).
"""

from __future__ import annotations

import os
from collections.abc import Callable

#: ``MADV_POPULATE_WRITE`` (linux/mman.h): fault the range in writable, breaking copy on
#: write, without changing its contents.
POPULATE_WRITE = 23
#: Pages asked for at once, between two looks at whether a call waits.
BATCH = 128
_PRESENT = 1 << 63
_EXCLUSIVE = 1 << 56
#: Mappings that are not the process's own data.
_SKIP = frozenset({"[stack]", "[vvar]", "[vsyscall]", "[vdso]"})

Madvise = Callable[[int, int, int], int]


def load() -> Prefault | None:
    """The prefault of this platform, or ``None`` (no ``ctypes``, no ``madvise``)."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
    except (ImportError, OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return Prefault(madvise)


class Prefault:
    """Copies this process's shared writable pages (see the module's text)."""

    def __init__(self, madvise: Madvise) -> None:
        self.madvise = madvise
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.works = True

    def run(self, waiting: Callable[[], bool]) -> int:
        """Copy the shared pages, :data:`BATCH` at a time, until done or ``waiting()``;
        the number of pages copied."""
        if not self.works:
            return 0
        try:
            maps = open("/proc/self/maps", "rb")  # noqa: SIM115 - closed below
            pagemap = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return 0
        copied = since = 0
        try:
            with maps:
                ranges = [r for r in map(_writable, maps) if r is not None]
            for start, end in ranges:
                for first, count in self._shared(pagemap, start, end):
                    if since >= BATCH:
                        if waiting():
                            return copied
                        since = 0
                    if self.madvise(first, count * self.page, POPULATE_WRITE) != 0:
                        if not copied:  # refused from the start (an older kernel): off
                            self.works = False
                            return 0
                        break  # a mapping the kernel will not fill: the next one
                    copied += count
                    since += count
        except OSError:
            return copied
        finally:
            os.close(pagemap)
        return copied

    def _shared(self, pagemap: int, start: int, end: int) -> list[tuple[int, int]]:
        """Runs of present, shared pages in ``[start, end)``, at most :data:`BATCH` long."""
        page = self.page
        first_page = start // page
        raw = os.pread(pagemap, (end - start) // page * 8, first_page * 8)
        runs: list[tuple[int, int]] = []
        run_start = -1
        for index, entry in enumerate(memoryview(raw).cast("Q")):
            shared = entry & _PRESENT and not entry & _EXCLUSIVE
            if shared and run_start < 0:
                run_start = index
            if run_start >= 0 and (not shared or index - run_start == BATCH):
                runs.append(((first_page + run_start) * page, index - run_start))
                run_start = index if shared else -1
        if run_start >= 0:
            count = len(raw) // 8 - run_start
            runs.append(((first_page + run_start) * page, count))
        return runs


def _writable(line: bytes) -> tuple[int, int] | None:
    """A ``/proc/self/maps`` line's range when it is private, writable memory of this
    process's own (its heap, anonymous memory, loaded libraries' data)."""
    fields = line.split()
    if len(fields) < 5 or fields[1][1:2] != b"w" or fields[1][3:4] != b"p":
        return None
    if len(fields) > 5 and fields[5].decode("utf-8", "replace") in _SKIP:
        return None
    low, _, high = fields[0].partition(b"-")
    return int(low, 16), int(high, 16)
