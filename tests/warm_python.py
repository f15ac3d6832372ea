"""``python -m redline ...`` processes started from a warm interpreter (tests/warm_server.py).

``popen`` and ``run`` take what ``subprocess.Popen`` and ``subprocess.run`` take. An argv
``[sys.executable, "-m", "redline" | "redline.cli", ...]`` becomes a child of this test
process's fork server, which has the ``acp`` package imported: the child is a process of
its own (its own pid, stdin/stdout/stderr, folder, environment, exit status), which runs
``python -m redline`` as the interpreter would, but without paying the half second of CPU
that importing ``acp`` costs each ``redline exec --agent`` process. Anything else (another
program, options the server cannot give: a new session, ``pass_fds``) is an ordinary
subprocess; a different ``PYTHON*`` environment gets a child that starts Python anew.

The Popen object is ``subprocess.Popen`` with one difference: the process is not this
process's child, so its wait status comes from the server over the request's socket
(``_internal_poll`` and ``_wait``); pipes, ``communicate``, signals and timeouts are
Popen's own. A few tests still start ``python -m redline`` the ordinary way, so the entry
point itself stays tested.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from tests import warm_server

SERVER = Path(__file__).with_name("warm_server.py")
PRELOAD = ("acp", "mcp", "mcp.server.mcpserver")
MODULES = ("redline", "redline.cli")
# Options the server cannot honour: the process then starts the ordinary way.
ORDINARY_ONLY = (
    "preexec_fn",
    "pass_fds",
    "start_new_session",
    "process_group",
    "user",
    "group",
    "extra_groups",
    "shell",
    "executable",
)


class _Server:
    """This process's fork server, started on first use, ended with this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._path = ""
        self._registered = False

    def path(self) -> str:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                folder = tempfile.mkdtemp(prefix="rlwarm")
                self._path = os.path.join(folder, "s")
                self._proc = subprocess.Popen(
                    [sys.executable, str(SERVER), "serve", self._path, *PRELOAD],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
                assert self._proc.stdout is not None
                if self._proc.stdout.readline() != b"ready\n":
                    raise RuntimeError("the warm test interpreter did not start")
                if not self._registered:
                    atexit.register(self._end)
                    self._registered = True
            return self._path

    def _end(self) -> None:
        if self._proc is not None and self._proc.stdin is not None:
            self._proc.stdin.close()
            self._proc.wait()
        shutil.rmtree(os.path.dirname(self._path), ignore_errors=True)


_SERVER = _Server()


def _warm_module(argv: Any, kwargs: dict[str, Any]) -> str | None:
    """The module a warm child would run for this argv, or None for an ordinary process."""
    if not isinstance(argv, list | tuple) or len(argv) < 3:
        return None
    if argv[0] != sys.executable or argv[1] != "-m" or argv[2] not in MODULES:
        return None
    if any(kwargs.get(name) for name in ORDINARY_ONLY):
        return None
    return str(argv[2])


class WarmPopen(subprocess.Popen[Any]):
    """A Popen whose process is forked by the warm server; see the module's docstring."""

    _lines: warm_server.Lines

    def __init__(self, module: str, argv: Any, **kwargs: Any) -> None:
        self._module = module
        super().__init__(argv, **kwargs)

    def _execute_child(  # type: ignore[override]
        self,
        args: list[str],
        executable: Any,
        preexec_fn: Any,
        close_fds: bool,
        pass_fds: Any,
        cwd: Any,
        env: Any,
        startupinfo: Any,
        creationflags: int,
        shell: bool,
        p2cread: int,
        p2cwrite: int,
        c2pread: int,
        c2pwrite: int,
        errread: int,
        errwrite: int,
        *rest: Any,
    ) -> None:
        opened: list[int] = []

        def own(fd: int, target: int) -> int:
            if fd != -1:
                return fd
            dup = os.dup(target)
            opened.append(dup)
            return dup

        fds = [own(p2cread, 0), own(c2pwrite, 1), own(errwrite, 2)]
        request = warm_server.request_for(
            self._module,
            list(args[3:]),
            os.fspath(cwd) if cwd is not None else None,
            env,
            rest[4] if len(rest) > 4 else -1,  # Popen's umask (-1: this process's)
        )
        try:
            control, self.pid = warm_server.ask(_SERVER.path(), request, fds)
        finally:
            for fd in {*opened, p2cread, c2pwrite, errwrite} - {-1}:
                os.close(fd)
            self._closed_child_pipe_fds = True
        self._lines = warm_server.Lines(control)

    def _status(self, timeout: float | None) -> bool:
        """Take the wait status if it came within ``timeout`` (0: only if already there)."""
        if self.returncode is not None:
            return True
        try:
            status = int(self._lines.next(timeout))
        except (TimeoutError, BlockingIOError):
            return False
        self._lines.control.close()
        self._handle_exitstatus(status)
        return True

    def _internal_poll(self, _deadstate: int | None = None, **_: Any) -> int | None:
        with self._waitpid_lock:
            if self.returncode is None:
                self._status(0)
        return self.returncode

    def _wait(self, timeout: float | None) -> int:
        with self._waitpid_lock:
            if not self._status(timeout):
                assert timeout is not None
                raise subprocess.TimeoutExpired(self.args, timeout)
        assert self.returncode is not None
        return self.returncode


def stdio_command(module: str, *args: str) -> tuple[str, list[str]]:
    """A command and its arguments for a program that starts ``python -m MODULE ARGS`` itself.

    The command is the launcher in tests/warm_server.py: it asks this process's server for
    the child, passes signals on and ends with the child's status. Give it this process's
    environment or one of your own.
    """
    path = _SERVER.path()
    return sys.executable, [str(SERVER), "launch", path, module, *args]


def popen(argv: Any, **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **kwargs)``, from the warm interpreter where it can be."""
    module = _warm_module(argv, kwargs)
    if module is None:
        return subprocess.Popen(argv, **kwargs)
    return WarmPopen(module, argv, **kwargs)


def run(
    argv: Any,
    *,
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` with ``popen``'s process."""
    if capture_output:
        kwargs["stdout"] = subprocess.PIPE
        kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with popen(argv, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        code = process.poll()
        assert code is not None
    if check and code:
        raise subprocess.CalledProcessError(code, argv, stdout, stderr)
    return subprocess.CompletedProcess(argv, code, stdout, stderr)
