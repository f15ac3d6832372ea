"""Files in, results out: listing, prefilter, result cache, process pool, streaming.

The main process lists files, reads and hashes them and applies the word prefilter
(cheap); only files that can match are parsed: here, or in worker processes when there
are enough of them for the CPUs free now (:mod:`.cpus`: from ``POOL_IDLE_MIN_BYTES``, 1 MB,
with two or more idle and a forked pool; else from ``POOL_MIN_BYTES``, 12 MB). Results come
back in path order as soon as each is ready, so the first file's result is available
long before the last file is parsed.

The pool is started the first time a search is large enough, and kept for the next.
Its workers are forked when this process runs no other thread (the command line), else
started with forkserver (or spawn): a forked child can inherit locks held by other
threads, and the dashboard has threads. Like any multiprocessing code, a script calling
this API must guard its entry point with ``if __name__ == "__main__":`` (or pass
``workers=1``); from stdin or a REPL the pool is skipped automatically.
"""

from __future__ import annotations

import atexit
import fnmatch
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from redline.tools.ast_edit.analyze import analyze, truncate
from redline.tools.ast_edit.ast_prefilter import bytes_may_match
from redline.tools.ast_edit.locate import bytes_have_words
from redline.tools.ast_edit.ops import CompiledOp, compile_ops, ops_key
from redline.tools.ast_edit.results import AstEditReport, FileResult, splice
from redline.workspace.fsutil import open_regular
from redline.workspace.paths import (
    ConfinementError,
    iter_workspace_files,
    relative_to_root,
    resolve_inside,
)
from redline.workspace.textcodec import DecodeError, decode_text, sha256_bytes

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from redline.tools.ast_edit.forked import Forked

PYTHON_SUFFIXES = (".py", ".pyi")
CACHE_VERSION = 1
# Below these, a search runs in this process: starting workers costs more than they
# save. Measured with bench/ast_edit_pool.py on the project's shared 2-core machine
# (five runs at load averages 3.5-11, docs/performance.md): a cold pool of two workers
# lost below 3 MB of files to parse in every run, won 2 of 9 measurements from 3 to
# 10 MB and 2 of 4 from 12.8 MB; normal projects stay in one process, the large corpora
# (31-48 MB) still get the workers.
POOL_MIN_FILES = 4
POOL_MIN_BYTES = 12_000_000
# With at least two CPUs idle now (tools/ast_edit/cpus.py) and workers that are forked
# (the command line: about 20-40 ms for two, bench/ast_edit_pool_start.py) or already
# running, the workers pay from far less: they get CPUs nobody else uses. The figure
# (issue 44): forked start-up over what the second core saves, ``start * rate``, with
# in-process parsing at 2-4 MB per CPU-second -- a few hundred kB -- doubled for safety.
POOL_IDLE_MIN_BYTES = 1_000_000
# A rewrite's file costs about twice a search's per byte (its matches' statements are
# parsed by libcst too, and the rewritten file is checked): measured on the ten
# standard-library packages, `print($$$A)` in one process, 0.18 CPU-s to rewrite
# against 0.08 to search. Against the idle threshold a rewrite's bytes count double.
REWRITE_WEIGHT = 2
_GLOB_CHARS = frozenset("*?[")

OpsKey = tuple[tuple[str, str | None], ...]


class TargetError(ValueError):
    """A path, folder or glob to search that is unusable (outside, missing, not Python)."""


# -- listing ---------------------------------------------------------------------------


def _is_python(rel: str) -> bool:
    return rel.endswith(PYTHON_SUFFIXES)


def _glob_match(rel: str, pattern: str) -> bool:
    pattern = pattern.replace("\\", "/")
    candidates = {pattern}
    while pattern.startswith("**/"):
        pattern = pattern[3:]
        candidates.add(pattern)
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], p) for p in candidates)
    return any(fnmatch.fnmatchcase(rel, p) for p in candidates)


def _read_regular(path: str | Path) -> bytes:
    """A regular file's bytes; a FIFO or device swapped in since the listing is refused
    (an OSError), never read (reading one could block forever)."""
    with open_regular(Path(path)) as handle:
        return handle.read()


def list_files(root: Path, targets: Sequence[str] = (".",), glob: str | None = None) -> list[str]:
    """Sorted root-relative POSIX paths of the Python files the targets name."""
    root = root.resolve()
    found: set[str] = set()
    for target in targets or (".",):
        text = str(target)
        if any(char in _GLOB_CHARS for char in text):
            pattern = text.replace("\\", "/").removeprefix("./")
            for rel in iter_workspace_files(root):
                if _is_python(rel) and _glob_match(rel, pattern) and _glob_ok(rel, "", glob):
                    found.add(rel)
            continue
        try:
            path = resolve_inside(root, text)
        except ConfinementError as exc:
            raise TargetError(str(exc)) from None
        if not path.exists():
            raise TargetError(f"{text}: no such file or folder in the workspace")
        if not path.is_file() and not path.is_dir():
            raise TargetError(
                f"{text}: not a regular file or folder (a named pipe, device or socket); "
                "ast_edit reads regular .py and .pyi files only"
            )
        if path.is_file():
            rel = relative_to_root(root, path)
            if not _is_python(rel):
                raise TargetError(f"{text}: not a Python file (ast_edit reads .py and .pyi files)")
            if _glob_ok(rel, "", glob):
                found.add(rel)
            continue
        base = relative_to_root(root, path)
        prefix = "" if base == "." else base + "/"
        for rel in iter_workspace_files(root, path):
            if _is_python(rel) and _glob_ok(rel, prefix, glob):
                found.add(rel)
    return sorted(found)


def _glob_ok(rel: str, prefix: str, glob: str | None) -> bool:
    if not glob:
        return True
    inner = rel[len(prefix) :] if prefix and rel.startswith(prefix) else rel
    return _glob_match(inner, glob) or _glob_match(rel, glob)


# -- cache -----------------------------------------------------------------------------


class ResultCache:
    """Results by (file content, operations); file stats remember content hashes.

    Trees are never cached: loading a pickled tree is barely faster than parsing and
    takes about eight times the source's size.
    """

    def __init__(self, max_entries: int = 50_000) -> None:
        self.max_entries = max_entries
        self._results: OrderedDict[tuple[str, OpsKey, bool, int], FileResult] = OrderedDict()
        self._stats: dict[str, tuple[tuple[int, int, int, int], str, str]] = {}
        self._lock = threading.Lock()

    def known_sha(self, path: str, stat: os.stat_result) -> str | None:
        key = (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
        with self._lock:
            entry = self._stats.get(path)
        return entry[1] if entry is not None and entry[0] == key else None

    def remember_sha(self, path: str, stat: os.stat_result, sha: str) -> None:
        key = (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
        with self._lock:
            self._stats[path] = (key, sha, "")

    def get(self, sha: str, key: OpsKey, rewrite: bool) -> FileResult | None:
        with self._lock:
            full = (sha, key, rewrite, CACHE_VERSION)
            result = self._results.get(full)
            if result is not None:
                self._results.move_to_end(full)
            return result

    def put(self, sha: str, key: OpsKey, rewrite: bool, result: FileResult) -> None:
        with self._lock:
            self._results[(sha, key, rewrite, CACHE_VERSION)] = result
            while len(self._results) > self.max_entries:
                self._results.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._results.clear()
            self._stats.clear()


DEFAULT_CACHE = ResultCache()


# -- workers ---------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _compiled(key: OpsKey) -> list[CompiledOp]:
    return compile_ops(key)


def _can_match(data: bytes, ops: list[CompiledOp]) -> bool:
    """The byte prefilter: some operation's words, operator tokens and token runs are all
    in the file (otherwise it cannot match and is never parsed)."""
    return any(bytes_have_words(data, op.words) and bytes_may_match(data, op.source) for op in ops)


def _process(data: bytes, rel: str, key: OpsKey, rewrite: bool) -> FileResult:
    sha = sha256_bytes(data)
    try:
        text, encoding = decode_text(data, rel)
    except DecodeError as exc:
        return FileResult(
            "", error=str(exc).removeprefix(f"{rel}: "), error_kind="read", sha256=sha
        )
    result = analyze(text, _compiled(key), rewrite)
    return replace(result, sha256=sha, encoding=encoding)


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (None elsewhere)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    return trim if callable(trim) else None


# After analysing this much source, a worker hands freed memory back to the system.
_TRIM_AFTER_BYTES = 1_000_000


def _release_memory() -> None:
    """Give the memory freed since the last call back to the system. libcst's trees and
    the native parser's buffers are freed, but glibc keeps the pages: without this a
    worker that rewrote a few large files stays at several hundred MB (measured: 360 MB
    after the 40 largest site-packages files, 70 MB with it)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _work(task: tuple[tuple[tuple[str, str], ...], OpsKey, bool]) -> list[FileResult]:
    """Pool entry point: read and analyse a batch of files (the main process has
    prefiltered them).

    The texts stay behind: the main process rereads a file with replacements and
    rebuilds the new text from the matches, which keeps the results small to send back.
    """
    files, key, rewrite = task
    results: list[FileResult] = []
    analysed = 0
    for path, rel in files:
        try:
            data = _read_regular(path)
        except OSError as exc:
            results.append(
                FileResult("", error=f"cannot read: {exc.strerror or exc}", error_kind="read")
            )
            continue
        results.append(replace(_process(data, rel, key, rewrite), old_text=None, new_text=None))
        analysed += len(data)
        if analysed >= _TRIM_AFTER_BYTES:
            _release_memory()
            analysed = 0
    if analysed:
        _release_memory()
    return results


def _with_texts(result: FileResult, item: _Pending) -> FileResult:
    """Restore the texts a worker left out (see :func:`_work`), from the bytes read here
    or by reading the file again (its content must be the one the worker saw)."""
    if not result.matches or result.old_text is not None:
        return result
    if result.matches[0].replacement is None:
        return result
    data = item.data
    if data is None:
        try:
            data = _read_regular(item.path)
        except OSError as exc:
            return FileResult(
                result.path, error=f"cannot read: {exc.strerror or exc}", error_kind="read"
            )
    if sha256_bytes(data) != result.sha256:
        return FileResult(
            result.path, error="changed while being searched; search again", error_kind="read"
        )
    old_text, _encoding = decode_text(data, result.path)
    return replace(result, old_text=old_text, new_text=splice(old_text, result.matches))


def _exit_when_gone(pid: int) -> None:
    """Block until process ``pid`` has ended, then end this process at once."""
    import select
    import time

    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        # No pidfd (old kernel, other system): poll instead.
        while True:
            time.sleep(0.25)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
    # A pidfd becomes readable when its process has ended.
    select.select([handle], [], [])
    os._exit(1)


def _watch_parent(pid: int) -> None:
    """Pool worker initializer: die with the process that started the pool.

    Workers are children of the forkserver, not of redline, and each holds the pipes
    that would tell the forkserver and the resource tracker that redline has gone; if
    redline is killed (``kill -9``), nothing else would ever end them. A thread waiting
    on the parent's pidfd ends the worker instead; then the forkserver and the resource
    tracker see their pipes close and end too. (``PR_SET_PDEATHSIG`` is no substitute:
    it fires when the parent *thread* ends, and searches run in short-lived threads.)
    """
    threading.Thread(
        target=_exit_when_gone, args=(pid,), daemon=True, name="ast-edit-parent"
    ).start()


_CST_MODULE = "redline.tools.ast_edit.analyze_cst"
_executor: ProcessPoolExecutor | None = None
_executor_size = 0
_executor_lock = threading.Lock()


def default_workers() -> int:
    """The CPUs this process may use (affinity, within the cgroup quota), at most 4."""
    from redline.tools.ast_edit.cpus import usable_cpus

    return max(1, min(usable_cpus(), 4))


def free_workers() -> int:
    """The CPUs other work leaves free now (see :mod:`.cpus`), at most 4."""
    from redline.tools.ast_edit.cpus import idle_cpus

    return max(1, min(idle_cpus(), 4))


def _plan(workers: int | None) -> tuple[int, bool]:
    """How many workers a search would use, and whether they would run on idle CPUs and
    start cheaply (then a smaller job is worth them; see :func:`_use_pool`).

    Asked for no number: as many as are free now when that is two or more and the pool
    starts cheaply; otherwise the usable CPUs, for jobs past :data:`POOL_MIN_BYTES` only
    (on a busy machine more processes still get more of its time, measured in issue 27).
    """
    if workers is not None:
        count = max(1, workers)
        return count, count > 1 and free_workers() > 1 and _cheap_start(count)
    free = free_workers()
    if free > 1 and _cheap_start(free):
        return free, True
    return default_workers(), False


def _cheap_start(workers: int) -> bool:
    """Whether a pool of ``workers`` is running already or would be forked (cheap), not
    started through a forkserver (0.3-0.4 s)."""
    if _executor is not None and _executor_size == workers:
        return True
    # As _get_executor chooses (multiprocessing lists "fork" wherever os.fork exists; it is
    # not imported here: a small search never pays for it).
    return hasattr(os, "fork") and threading.active_count() == 1


def _main_importable() -> bool:
    """Workers re-import ``__main__`` by path; from stdin or a REPL that path is no file."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None:
        return True
    return os.path.isfile(path)


def _get_executor(workers: int, rewrite: bool = False) -> ProcessPoolExecutor | None:
    """The pool of ``workers`` processes (started on first use, then kept). A forkserver
    started for a rewrite preloads libcst's half too, so its workers share it."""
    global _executor, _executor_size
    if not _main_importable():
        return None
    # Imported here: a search small enough to run in-process never pays for them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    with _executor_lock:
        if _executor is not None and _executor_size == workers:
            return _executor
        if _executor is not None:
            # Another search may still be using it: let its queued work finish.
            _executor.shutdown(wait=False)
        methods = multiprocessing.get_all_start_methods()
        # Fork only a process with no other thread (the command line): a forked child
        # can inherit locks other threads hold (the dashboard runs threads). The pool
        # forks all its workers before it starts its own thread.
        context: BaseContext
        if "fork" in methods and threading.active_count() == 1:
            context = multiprocessing.get_context("fork")
        elif "forkserver" in methods:
            forkserver = multiprocessing.get_context("forkserver")
            preload = [__name__, *([_CST_MODULE] if rewrite else [])]
            forkserver.set_forkserver_preload(preload)
            context = forkserver
        else:
            context = multiprocessing.get_context("spawn")
        _executor = ProcessPoolExecutor(
            workers, mp_context=context, initializer=_watch_parent, initargs=(os.getpid(),)
        )
        _executor_size = workers
        return _executor


def shutdown_pool() -> None:
    """Stop the worker processes (they are otherwise kept for the next search)."""
    global _executor, _executor_size
    with _executor_lock:
        if _executor is not None:
            _executor.shutdown(wait=True, cancel_futures=True)
        _executor = None
        _executor_size = 0


def _drop_broken_pool() -> None:
    global _executor, _executor_size
    with _executor_lock:
        if _executor is not None:
            _executor.shutdown(wait=False, cancel_futures=True)
        _executor = None
        _executor_size = 0


atexit.register(shutdown_pool)


# -- search ----------------------------------------------------------------------------


@dataclass
class _Pending:
    rel: str
    path: str
    data: bytes | None
    stat: os.stat_result | None
    result: FileResult | None = None


def _prepare(
    root: Path,
    rel: str,
    key: OpsKey,
    ops: list[CompiledOp],
    rewrite: bool,
    cache: ResultCache | None,
) -> _Pending:
    """Answer from the cache (by stat, then by content) or settle the file by the byte
    prefilter; what is left (``data`` set, no result) needs analysing."""
    path = str(root / rel)
    try:
        stat = os.stat(path)
    except OSError as exc:
        return _Pending(
            rel,
            path,
            None,
            None,
            FileResult(rel, error=f"cannot read: {exc.strerror}", error_kind="read"),
        )
    if cache is not None:
        sha = cache.known_sha(path, stat)
        if sha is not None:
            hit = cache.get(sha, key, rewrite)
            if hit is not None:
                return _Pending(rel, path, None, stat, replace(hit, path=rel))
    try:
        data = _read_regular(path)
    except OSError as exc:
        return _Pending(
            rel,
            path,
            None,
            stat,
            FileResult(rel, error=f"cannot read: {exc.strerror}", error_kind="read"),
        )
    sha = sha256_bytes(data)
    if cache is not None:
        cache.remember_sha(path, stat, sha)
        hit = cache.get(sha, key, rewrite)
        if hit is not None:
            return _Pending(rel, path, None, stat, replace(hit, path=rel))
    if not _can_match(data, ops):
        result = FileResult(rel, sha256=sha)
        if cache is not None:
            cache.put(sha, key, rewrite, replace(result, path=""))
        return _Pending(rel, path, None, stat, result)
    return _Pending(rel, path, data, stat)


# A worker gets files in batches of at most about this many bytes (fewer round trips for
# small files) and this many files; smaller when there is little work, so that every
# worker gets some.
_BATCH_BYTES = 256_000
_BATCH_FILES = 32


def _batches(items: list[_Pending], workers: int) -> list[list[_Pending]]:
    total = sum(len(item.data or b"") for item in items)
    limit = max(1, min(_BATCH_BYTES, total // (workers * 4)))
    batches: list[list[_Pending]] = []
    size = 0
    for item in items:
        if not batches or size >= limit or len(batches[-1]) >= _BATCH_FILES:
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += len(item.data or b"")
    return batches


def iter_search(
    root: Path,
    ops: Iterable[object] | list[CompiledOp],
    files: Sequence[str],
    *,
    rewrite: bool = True,
    workers: int | None = None,
    cache: ResultCache | None = DEFAULT_CACHE,
) -> Iterator[FileResult]:
    """Results for ``files`` (root-relative) in the order given, each as soon as it is ready.

    ``ops`` are compiled first, so bad patterns raise PatternError before any file is read.
    Stopping the iteration early stops the work.

    Files are answered from the cache or settled by the byte prefilter here; with enough
    of the rest to be worth it, worker processes analyse them in batches (rereading each
    file: the bytes are dropped here), else they are analysed here as they are taken.
    """
    raw = list(ops)
    compiled = raw if raw and all(isinstance(op, CompiledOp) for op in raw) else compile_ops(raw)
    compiled = [op for op in compiled if isinstance(op, CompiledOp)]
    key = ops_key((op.pat, op.out) for op in compiled)
    root = root.resolve()
    rewrite = rewrite and all(op.rewrites for op in compiled)
    pending = [_prepare(root, rel, key, compiled, rewrite, cache) for rel in files]
    todo = [item for item in pending if item.result is None]
    size = sum(len(item.data or b"") for item in todo)
    # The CPUs free now are looked at only for a job that could be worth workers.
    weight = REWRITE_WEIGHT if rewrite else 1
    small = size * weight < min(POOL_IDLE_MIN_BYTES, POOL_MIN_BYTES)
    count, idle = (max(1, workers or 1), False) if small else _plan(workers)
    use = _use_pool(count, len(todo), size, idle=idle, rewrite=rewrite)
    forked = _fork_parts(todo, count, key, rewrite) if use and idle else None
    executor = _get_executor(count, rewrite) if use and forked is None else None
    futures: dict[int, tuple[Future[list[FileResult]], int]] = {}
    if executor is not None:
        from concurrent.futures.process import BrokenProcessPool

        try:
            for batch in _batches(todo, count):
                task = (tuple((item.path, item.rel) for item in batch), key, rewrite)
                future = executor.submit(_work, task)
                for index, item in enumerate(batch):
                    futures[id(item)] = (future, index)
                    item.data = None  # the worker reads the file itself
        except (BrokenProcessPool, RuntimeError):
            _drop_broken_pool()
            futures.clear()
    try:
        for item in pending:
            result = item.result
            if result is None:
                found = None
                if forked is not None and forked.holds(item):
                    found = forked.result(item)  # None: that child failed, analysed here
                if found is None:
                    found = _collect(futures.get(id(item)), item, key, rewrite)
                result = _with_texts(replace(found, path=item.rel), item)
                item.data = None
                if cache is not None and result.sha256:
                    cache.put(result.sha256, key, rewrite, replace(result, path=""))
            yield result
    finally:
        # Abandoned midway (limit reached): drop queued work instead of finishing it.
        for future, _index in futures.values():
            future.cancel()
        if forked is not None:
            forked.close()


def _fork_parts(
    todo: list[_Pending], count: int, key: OpsKey, rewrite: bool
) -> Forked[_Pending] | None:
    """For a process with no other thread and no pool running: the files cut in ``count``
    runs, all but the first analysed by forked children (:mod:`.forked`), the first left
    to this process. None when the pool is used instead (or no child could start)."""
    from redline.tools.ast_edit.forked import Forked, can_fork, runs

    if _executor is not None or not can_fork():
        return None
    parts = runs([len(item.data or b"") for item in todo], count)
    forked: Forked[_Pending] = Forked()

    def work(items: Sequence[_Pending]) -> list[FileResult]:
        # As a pool worker's results: the texts stay behind (this process has the bytes).
        return [
            replace(
                _process(item.data or b"", item.rel, key, rewrite), old_text=None, new_text=None
            )
            for item in items
        ]

    for part in parts[1:]:
        if not forked.start([todo[index] for index in part], work):
            break
    return forked if len(parts) > 1 else None


def _use_pool(
    workers: int, files: int, size: int, *, idle: bool = False, rewrite: bool = False
) -> bool:
    """Whether ``files`` files of ``size`` bytes to parse are worth worker processes (the
    pool, and its imports, start only then). ``idle``: the workers would run on CPUs that
    are free now and start cheaply, so a smaller job pays (:data:`POOL_IDLE_MIN_BYTES`,
    a rewrite's bytes weighing :data:`REWRITE_WEIGHT` times a search's)."""
    if idle:
        size, least = size * (REWRITE_WEIGHT if rewrite else 1), POOL_IDLE_MIN_BYTES
    else:
        least = POOL_MIN_BYTES
    return workers > 1 and files >= max(POOL_MIN_FILES, workers) and size >= least


def _collect(
    future: tuple[Future[list[FileResult]], int] | None,
    item: _Pending,
    key: OpsKey,
    rewrite: bool,
) -> FileResult:
    if future is not None:
        from concurrent.futures import CancelledError
        from concurrent.futures.process import BrokenProcessPool

        try:
            return future[0].result()[future[1]]
        except BrokenProcessPool:
            # A worker died (killed, out of memory): finish in this process instead.
            _drop_broken_pool()
        except CancelledError:
            pass  # the pool was shut down under us (process exit, another search)
    if item.data is not None:
        return _process(item.data, item.rel, key, rewrite)
    return _work((((item.path, item.rel),), key, rewrite))[0]


def search(
    root: Path,
    ops: Iterable[object],
    paths: Sequence[str] = (".",),
    glob: str | None = None,
    limit: int | None = None,
    *,
    rewrite: bool = True,
    workers: int | None = None,
    cache: ResultCache | None = DEFAULT_CACHE,
    on_file: Callable[[FileResult], None] | None = None,
) -> AstEditReport:
    """Search (and rewrite) every Python file the paths name; the whole report.

        Raises PatternError for bad operations and TargetError for bad paths, both before
        any file is read. ``on_file(FileResult)`` sees each file that enters the report
    (with matches, or with an error) as soon as it is known, in path order.
    """
    compiled = compile_ops(ops)
    if limit is not None and limit < 1:
        raise TargetError(f"limit must be at least 1, got {limit}")
    files = list_files(root, paths, glob)
    rewrite = rewrite and all(op.rewrites for op in compiled)
    report = AstEditReport(rewrite=rewrite, files_searched=len(files), limit=limit)
    total = 0
    stream = iter_search(root, compiled, files, rewrite=rewrite, workers=workers, cache=cache)
    try:
        for result in stream:
            if result.error is None and not result.matches:
                continue
            if result.error is None and limit is not None and total + len(result.matches) > limit:
                result = truncate(result, limit - total)
                report.limit_reached = True
            if on_file is not None:
                on_file(result)
            if result.error is not None:
                report.errors.append(result)
                if report.limit_reached:
                    break
                continue
            report.files.append(result)
            total += len(result.matches)
            if limit is not None and total >= limit:
                report.limit_reached = True
                break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
    return report
