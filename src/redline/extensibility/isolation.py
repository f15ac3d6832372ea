"""Calling plugin code without letting it take the process down or hold it hostage.

Every call into a plugin (import, factory, ``execute``, ``apply``, ``reject``) goes
through this module:

- plugin code runs in a daemon thread of its own (or, for ``async`` plugin code, in a
  task of the session's loop), so a plugin that never returns is abandoned rather than
  waited for, and a stuck thread never keeps the interpreter from exiting;
- anything it raises, including ``SystemExit``, ``KeyboardInterrupt`` and
  ``GeneratorExit``, becomes an ordinary exception (:class:`PluginCrash`) reported as that
  plugin's error. A real Ctrl-C is not mistaken for one: Python delivers ``SIGINT`` to
  the main thread only, and plugin code never runs there, so a ``KeyboardInterrupt``
  seen in a plugin thread was raised by the plugin itself;
- what it prints to ``sys.stdout`` or ``sys.stderr`` is captured line by line and handed
  to a sink (the session turns it into ``plugin_output`` events), never written to the
  process's own output;
- when plugin threads are still running at exit, a last-resort watchdog ends the
  process shortly after (``os._exit`` after flushing, and ``faulthandler`` as a backstop
  that works even while a plugin holds the GIL in C code).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import faulthandler
import io
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

log = logging.getLogger("redline.plugins")

T = TypeVar("T")

#: ``sink(origin, stream, text)``: receives what a plugin printed, whole lines at a time.
OutputSink = Callable[[str, str, str], None]

#: Lines of output kept per plugin call (the rest is counted, not kept), and characters
#: per line: a plugin printing in a loop must not flood the activity or the session log.
MAX_LINES = 200
MAX_LINE_CHARS = 2000

#: How long the process may take to exit once it is shutting down with plugin code
#: still running, before the watchdog ends it.
EXIT_GRACE = 1.5


class PluginCrash(Exception):
    """Plugin code raised something that is not an ``Exception``.

    ``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit`` and other ``BaseException``
    subclasses from plugin code are wrapped in this so they are reported like any other
    plugin error and never stop the session. ``original`` is what the plugin raised.
    """

    def __init__(self, original: BaseException) -> None:
        self.original = original
        detail = safe_str(original)
        super().__init__(
            f"{type(original).__name__}: {detail}" if detail else type(original).__name__
        )


class PluginTimeout(Exception):
    """Plugin code did not finish within its time; it was abandoned (left running)."""


def safe_str(value: object) -> str:
    """``str(value)`` for an object plugin code made: a ``__str__`` that raises gives ``''``."""
    try:
        return str(value)
    except BaseException:
        return ""


def contain(exc: BaseException) -> Exception:
    """``exc`` as an ordinary exception: itself, or wrapped in :class:`PluginCrash`."""
    if isinstance(exc, Exception):
        return exc
    crash = PluginCrash(exc)
    crash.__traceback__ = exc.__traceback__
    return crash


# -- capturing output --------------------------------------------------------------------


class Capture:
    """Collects a plugin call's output and hands complete lines to ``sink``.

    At most :data:`MAX_LINES` lines per call are kept (each cut to
    :data:`MAX_LINE_CHARS`); :meth:`flush`, at the end of the call, reports how many
    were not.
    """

    def __init__(self, origin: str, sink: OutputSink | None) -> None:
        self.origin = origin
        self.sink = sink
        self._parts: dict[str, str] = {}
        self._lines = 0
        self._dropped = 0
        self._lock = threading.Lock()

    def write(self, stream: str, text: str) -> None:
        with self._lock:
            buffered = self._parts.get(stream, "") + text
            head, newline, tail = buffered.rpartition("\n")
            # An endless line is cut rather than kept growing.
            self._parts[stream] = tail[-MAX_LINE_CHARS:]
        if newline:
            self._keep(stream, head)

    def flush(self) -> None:
        with self._lock:
            parts, self._parts = self._parts, {}
            dropped, self._dropped = self._dropped, 0
            self._lines = 0  # the cap is per call (an apply may be retried)
        for stream, text in parts.items():
            if text:
                self._keep(stream, text)
        if dropped:
            self._deliver("stderr", f"({dropped} more lines of output not kept)")

    def _keep(self, stream: str, text: str) -> None:
        lines = text.split("\n")
        with self._lock:
            room = max(0, MAX_LINES - self._lines)
            kept = lines[:room]
            self._lines += len(kept)
            self._dropped += len(lines) - len(kept)
        if kept:
            self._deliver(stream, "\n".join(line[:MAX_LINE_CHARS] for line in kept))

    def _deliver(self, stream: str, text: str) -> None:
        # Output that redline itself produces while delivering (a listener printing the
        # event) is not the plugin's: run the sink outside the capture.
        token = _CAPTURE.set(None)
        try:
            if self.sink is not None:
                self.sink(self.origin, stream, text)
            else:
                log.info("plugin %s wrote to %s: %s", self.origin, stream, text)
        except Exception:
            log.exception("delivering output of plugin %s failed", self.origin)
        finally:
            _CAPTURE.reset(token)


_CAPTURE: contextvars.ContextVar[Capture | None] = contextvars.ContextVar(
    "redline_plugin_capture", default=None
)


class _Router(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr``: plugin writes go to the capture of the
    running plugin call, everything else to the stream it replaced."""

    def __init__(self, target: TextIO, stream: str) -> None:
        self.target = target
        self.stream = stream

    def _out(self) -> TextIO:
        # The stream replaced may have been closed since (a test harness's capture): fall
        # back to the interpreter's own.
        target = self.target
        if getattr(target, "closed", False):
            fallback = sys.__stdout__ if self.stream == "stdout" else sys.__stderr__
            if fallback is not None:
                return fallback
        return target

    def write(self, text: str) -> int:
        capture = _CAPTURE.get()
        if capture is None:
            return self._out().write(text)
        capture.write(self.stream, safe_str(text))
        return len(text)

    def flush(self) -> None:
        if _CAPTURE.get() is None:
            self._out().flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return _CAPTURE.get() is None and self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", None) or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


_router_lock = threading.Lock()


def _install_routers() -> None:
    """Route ``sys.stdout``/``sys.stderr`` through the capture (again, if replaced since)."""
    with _router_lock:
        if not isinstance(sys.stdout, _Router) and sys.stdout is not None:
            sys.stdout = _Router(sys.stdout, "stdout")
        if not isinstance(sys.stderr, _Router) and sys.stderr is not None:
            sys.stderr = _Router(sys.stderr, "stderr")


def unwrap(stream: TextIO) -> TextIO:
    """The real stream behind a router (for redline's own output, e.g. ``exec --json``)."""
    while isinstance(stream, _Router):
        stream = stream.target
    return stream


@contextmanager
def capturing(capture: Capture | None) -> Iterator[None]:
    """Run the body with its prints captured (``None``: not captured)."""
    if capture is not None:
        _install_routers()
    token = _CAPTURE.set(capture)
    try:
        yield
    finally:
        _CAPTURE.reset(token)
        if capture is not None:
            capture.flush()


@contextmanager
def not_capturing() -> Iterator[None]:
    """Redline code called back from plugin code (pushing an action): not the plugin's output."""
    token = _CAPTURE.set(None)
    try:
        yield
    finally:
        _CAPTURE.reset(token)


# -- running plugin code in daemon threads -----------------------------------------------

_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_threads_lock = threading.Lock()


def running_plugin_threads() -> list[threading.Thread]:
    """Plugin threads still running (abandoned after a timeout or a stop, or still busy)."""
    with _threads_lock:
        return [thread for thread in _threads if thread.is_alive()]


def _start(target: Callable[[], None], name: str) -> threading.Thread:
    _register_exit_watchdog()
    thread = threading.Thread(target=target, name=f"redline-plugin {name}", daemon=True)
    with _threads_lock:
        _threads.add(thread)
    thread.start()
    return thread


def call_in_thread(
    fn: Callable[..., T],
    *args: Any,
    name: str,
    timeout: float | None = None,
    capture: Capture | None = None,
) -> T:
    """Call ``fn(*args)`` in a daemon thread and wait at most ``timeout`` seconds.

    Returns its value; re-raises what it raised (``BaseException`` wrapped by
    :func:`contain`); raises :class:`PluginTimeout` when it takes longer, leaving it
    running. A real Ctrl-C interrupts the wait in this (main) thread as usual.
    """
    box: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def main() -> None:
        try:
            box["value"] = context.run(_captured_call, capture, fn, args)
        except BaseException as exc:
            box["error"] = contain(exc)
        finally:
            done.set()

    _start(main, name)
    deadline = None if timeout is None else time.monotonic() + timeout
    while not done.wait(_slice(deadline)):
        if deadline is not None and time.monotonic() >= deadline:
            raise PluginTimeout(f"did not finish within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


# Waits in the main thread wake up this often: a signal (Ctrl-C) that the kernel hands to
# another thread only sets a flag, which the main thread acts on once it runs again; an
# untimed lock wait would never notice it.
WAKE_INTERVAL = 0.2


def _slice(deadline: float | None) -> float:
    if deadline is None:
        return WAKE_INTERVAL
    return max(0.0, min(WAKE_INTERVAL, deadline - time.monotonic()))


def wait_interruptibly(future: concurrent.futures.Future[T]) -> T:
    """``future.result()`` that a real Ctrl-C always interrupts.

    Python runs signal handlers in the main thread, but the kernel may deliver ``SIGINT``
    to any thread, for example one busy in plugin code; an untimed wait in the main thread
    would then never wake up to raise ``KeyboardInterrupt``. Waiting in short slices
    lets it.
    """
    while True:
        try:
            return future.result(WAKE_INTERVAL)
        except concurrent.futures.TimeoutError:
            continue


def _captured_call(capture: Capture | None, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    with capturing(capture):
        return fn(*args)


async def await_in_thread(
    fn: Callable[..., T], *args: Any, name: str, capture: Capture | None = None
) -> T:
    """Run blocking plugin code in a daemon thread and await it from the running loop.

    Cancelling the awaiting task abandons the thread (it keeps running; nothing waits
    for it). Unlike ``asyncio.to_thread``, a thread that never returns cannot keep the
    interpreter from exiting. Context variables are copied, as ``to_thread`` does.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def main() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(_captured_call, capture, fn, args)
        except BaseException as exc:
            error = contain(exc)
        # RuntimeError: the session's loop is gone, nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, error)

    _start(main, name)
    return await future


async def await_plugin(awaitable: Any, capture: Capture | None = None) -> Any:
    """Await plugin coroutine ``awaitable`` with its output captured and its
    ``BaseException`` contained. Cancellation of the awaiting task passes through."""
    with capturing(capture):
        try:
            return await awaitable
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            raise contain(exc) from None


# -- the last-resort exit watchdog -------------------------------------------------------

_watchdog_registered = False
_watchdog_armed = False
_watchdog_lock = threading.Lock()


def _register_exit_watchdog() -> None:
    global _watchdog_registered
    with _watchdog_lock:
        if _watchdog_registered:
            return
        _watchdog_registered = True
    atexit.register(_at_exit)


def disable_exit_watchdog() -> None:
    """Never arm the exit watchdog in this process (for hosts such as a test runner that
    leave plugin threads behind on purpose and must keep their own exit status)."""
    global _watchdog_armed
    with _watchdog_lock:
        _watchdog_armed = True


def _at_exit() -> None:
    if running_plugin_threads():
        arm_exit_watchdog(EXIT_GRACE, code=None)


def _flush_all() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass


def arm_exit_watchdog(grace: float = EXIT_GRACE, code: int | None = 1) -> None:
    """End the process ``grace`` seconds from now unless it has exited by then.

    For when plugin code may be stuck: a Python thread flushes and calls ``os._exit``;
    should a plugin hold the GIL in C code, ``faulthandler``'s own C thread ends the
    process a moment later (it needs no GIL). ``code`` is the exit status to use
    (``None``: 1). Arming twice keeps the first.
    """
    global _watchdog_armed
    with _watchdog_lock:
        if _watchdog_armed:
            return
        _watchdog_armed = True
    status = 1 if code is None else code
    _flush_all()
    try:
        stderr = sys.__stderr__
        if stderr is not None:
            faulthandler.dump_traceback_later(grace + 0.5, exit=True, file=stderr)
    except (ValueError, OSError, AttributeError):
        pass

    def expire() -> None:
        time.sleep(grace)
        _flush_all()
        with contextlib.suppress(Exception):
            stderr = sys.__stderr__
            if stderr is not None:
                stderr.write("redline: plugin code did not stop; ending the process\n")
                stderr.flush()
        os._exit(status)

    threading.Thread(target=expire, name="redline-exit-watchdog", daemon=True).start()


__all__ = [
    "EXIT_GRACE",
    "Capture",
    "OutputSink",
    "PluginCrash",
    "PluginTimeout",
    "arm_exit_watchdog",
    "await_in_thread",
    "await_plugin",
    "call_in_thread",
    "capturing",
    "contain",
    "disable_exit_watchdog",
    "not_capturing",
    "running_plugin_threads",
    "safe_str",
    "unwrap",
    "wait_interruptibly",
]
