"""The sandbox every check runs in (docs/checks.md, "What a check may touch").

A check runs the proposal's code (a test runner imports it), unreviewed, so it runs
walled in. On Linux that is the system's bubblewrap (``bwrap``): no network, a PID
namespace that dies with it, no capabilities, and a file system made of read-only binds of
the system folders, ``$HOME`` and the real workspace, with the credential folders and
redline's own state hidden under empty mounts, fresh ``/tmp``, ``/run`` and ``/dev/shm``,
and only the run's tree and its private temporary folder writable. Never ``/`` as a
whole: a read-only bind still lets a process connect to the host's unix sockets.

On macOS it is ``sandbox-exec`` with a generated profile (:mod:`.sandbox_macos`).

:func:`unavailable` says, before anything runs, why no sandbox can be made (each cause
with what to do); :func:`launch` wraps one check's command. Standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: Credential files and folders under ``$HOME`` that a check never sees (hidden, empty).
HIDDEN_IN_HOME: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".config/gh",
    ".npmrc",
    # The coding agents' own logins and the cargo registry token.
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
)
#: System folders bound read-only when they exist (symlinks, as on a merged-/usr system,
#: are made again as symlinks).
SYSTEM_READ_ONLY: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
)
FRESH_TMPFS: tuple[str, ...] = ("/tmp", "/run", "/var/run", "/var/tmp", "/dev/shm")
#: The environment a check keeps (plus ``LC_*`` and the names of its ``env`` key).
KEPT_ENV: tuple[str, ...] = ("PATH", "HOME", "LANG", "TZ")
#: Where to look for the system's bwrap: never the caller's PATH (a workspace's
#: ``.venv/bin`` could name another program), and Ubuntu's user-namespace allowance is
#: keyed on /usr/bin/bwrap.
BWRAP_DIRS = "/usr/bin:/bin:/usr/local/bin:/run/current-system/sw/bin"
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: How every "no sandbox here" reason of a check begins (then ``<cause> — <what to do>``).
UNAVAILABLE = "sandbox unavailable: "
OFF_HINT = 'set [check_runner] sandbox = "off" in your own config.toml to run checks unsandboxed'


@dataclass(frozen=True)
class Sandbox:
    """How a check runs: sandboxed (``enabled``) with these extra paths, or not at all.

    ``workspace`` is bound read-only; ``hide`` are more paths hidden (``[check_runner]
    hide``); ``read`` more read-only binds (``[check_runner] read``, user config only);
    ``env`` the names of the check's ``env`` key, passed through when set.
    """

    enabled: bool = True
    workspace: str = ""
    hide: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    env: tuple[str, ...] = ()


# -- which sandbox, and whether it works --------------------------------------------------
def bwrap_path() -> str | None:
    return shutil.which("bwrap", path=BWRAP_DIRS)


def bwrap_version(path: str) -> str:
    """``bwrap 0.8.0`` (or just ``bwrap`` when it does not say)."""
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "bwrap"
    words = out.split()
    return f"bwrap {words[-1]}" if len(words) >= 2 else "bwrap"


def kind() -> str:
    """``bwrap`` on Linux, ``sandbox-exec`` on macOS, else ``none``."""
    if sys.platform == "darwin":
        return "sandbox-exec"
    if sys.platform.startswith("linux"):
        return "bwrap"
    return "none"


def describe() -> str:
    """The sandbox checks would use, as ``redline sandbox`` names it."""
    if kind() == "sandbox-exec":
        return "sandbox-exec"
    path = bwrap_path()
    return bwrap_version(path) if path else "bwrap (missing)"


_WORKS: set[str] = set()
_WORKS_LOCK = threading.Lock()


def unavailable(*, fresh: bool = False) -> str:
    """Why no sandbox can be made here (``<cause> — <what to do>``), or "" when one can.

    A working bwrap is remembered for the process, and across processes until the next
    boot or another bwrap binary (a marker in redline's cache folder: a fresh ``redline
    pending check`` need not start one more sandbox to know). A missing one is asked again
    each time (the person may install bubblewrap while the dashboard runs). ``fresh``
    forgets both (a sandbox that failed to start after all).
    """
    which = kind()
    if which == "sandbox-exec":
        if os.access(SANDBOX_EXEC, os.X_OK):
            return ""
        return f"{SANDBOX_EXEC} is missing — it is part of macOS; without it, {OFF_HINT}"
    if which == "none":
        return f"redline has no sandbox for {sys.platform} — {OFF_HINT}"
    path = bwrap_path()
    if path is None:
        return (
            "bwrap is not installed — install the bubblewrap package "
            f"(apt install bubblewrap, dnf install bubblewrap), or {OFF_HINT}"
        )
    marker = _works_marker(path)
    if fresh:
        with _WORKS_LOCK:
            _WORKS.discard(path)
        if marker is not None:
            with contextlib.suppress(OSError):
                marker.unlink()
    else:
        with _WORKS_LOCK:
            if path in _WORKS:
                return ""
        if marker is not None and marker.exists():
            with _WORKS_LOCK:
                _WORKS.add(path)
            return ""
    failure = _try_bwrap(path)
    if failure:
        return diagnose(failure, host_facts())
    with _WORKS_LOCK:
        _WORKS.add(path)
    if marker is not None:
        with contextlib.suppress(OSError):
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
    return ""


def _works_marker(path: str) -> Path | None:
    """The marker of "this bwrap worked since this boot", or None when none can be named."""
    from redline.paths import UserDirError, user_cache_dir

    try:
        info = os.stat(path)
        folder = user_cache_dir() / "sandbox"
    except (OSError, UserDirError):
        return None
    boot = _read("/proc/sys/kernel/random/boot_id")
    if not boot:
        return None
    key = f"{path}\0{info.st_ino}\0{info.st_mtime_ns}\0{boot}\0{os.getuid()}"
    return folder / f"bwrap-works-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def _try_bwrap(path: str) -> str:
    """Start ``true`` in the smallest sandbox of the same kind; "" or bwrap's complaint."""
    argv = [path, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    argv += _system_binds()
    argv += ["--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap: {exc}"
    if done.returncode == 0:
        return ""
    return (done.stderr or done.stdout).strip() or f"bwrap exited with status {done.returncode}"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def host_facts() -> dict[str, str]:
    """What the causes of a failed sandbox are read from (one place, so tests can fake it)."""
    status = _read("/proc/self/status")
    seccomp = next(
        (
            line.split(":", 1)[1].strip()
            for line in status.splitlines()
            if line.startswith("Seccomp:")
        ),
        "",
    )
    nested = ""
    if os.path.exists("/.flatpak-info"):
        nested = "Flatpak"
    elif os.environ.get("CODEX_SANDBOX") or os.environ.get("CODEX_SANDBOX_NETWORK_DISABLED"):
        nested = "Codex's sandbox"
    elif os.environ.get("SANDBOX_RUNTIME"):
        nested = "Claude Code's sandbox"
    uid_map = " ".join(_read("/proc/self/uid_map").split())
    if not nested and uid_map and uid_map != "0 0 4294967295":
        nested = "a user namespace"
    container = ""
    if os.path.exists("/.dockerenv"):
        container = "docker"
    elif os.path.exists("/run/.containerenv"):
        container = "podman"
    elif os.environ.get("container"):  # noqa: SIM112 (systemd's name for it)
        container = os.environ["container"]  # noqa: SIM112
    return {
        "uid": str(os.getuid()),
        "apparmor_restrict": _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
        "max_user_namespaces": _read("/proc/sys/user/max_user_namespaces"),
        "unprivileged_userns_clone": _read("/proc/sys/kernel/unprivileged_userns_clone"),
        "seccomp": seccomp,
        "nested": nested,
        "container": container,
    }


def diagnose(failure: str, facts: Mapping[str, str]) -> str:
    """The cause of a failed ``bwrap`` and what to do, from its message and the host."""
    said = failure.strip().splitlines()[0] if failure.strip() else "bwrap failed"
    root = facts.get("uid") == "0"
    if facts.get("max_user_namespaces") == "0":
        return (
            f"user namespaces are turned off (user.max_user_namespaces=0; bwrap said: {said}) "
            "— allow them: sysctl -w user.max_user_namespaces=15000 (and in /etc/sysctl.d/), "
            f"or {OFF_HINT}"
        )
    if facts.get("unprivileged_userns_clone") == "0" and not root:
        return (
            "unprivileged user namespaces are turned off (kernel.unprivileged_userns_clone=0; "
            f"bwrap said: {said}) — allow them: sysctl -w kernel.unprivileged_userns_clone=1, "
            f"or {OFF_HINT}"
        )
    if facts.get("apparmor_restrict") == "1" and not root:
        return (
            "Ubuntu's AppArmor forbids unprivileged user namespaces "
            f"(kernel.apparmor_restrict_unprivileged_userns=1; bwrap said: {said}) — give "
            "/usr/bin/bwrap an AppArmor profile that allows them (docs/checks.md shows one) "
            f"and use the bubblewrap package's /usr/bin/bwrap, or {OFF_HINT}"
        )
    nested = facts.get("nested", "")
    if nested:
        return (
            f"redline runs inside another sandbox ({nested}), which forbids making one more "
            f"(bwrap said: {said}) — run redline outside that sandbox, or, if that sandbox "
            f"is enough for you, {OFF_HINT}"
        )
    if facts.get("container") and facts.get("seccomp") == "2":
        return (
            f"the {facts['container']} container's seccomp profile forbids the namespaces "
            f"bwrap needs (bwrap said: {said}) — run the container with a seccomp profile "
            "that allows unshare and clone of namespaces (e.g. --security-opt "
            f"seccomp=unconfined), or {OFF_HINT}"
        )
    return f"bwrap cannot make a sandbox here (it said: {said}) — fix that, or {OFF_HINT}"


# -- one check's command, sandboxed -------------------------------------------------------
def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system_binds() -> list[str]:
    args: list[str] = []
    for folder in SYSTEM_READ_ONLY:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    return args


def home() -> str:
    from redline.paths import UserDirError, user_home

    try:
        return str(user_home())
    except UserDirError:
        return ""


def redline_folders() -> list[str]:
    """redline's own state (the state key), config (trust, rules) and cache folders."""
    from redline.paths import user_cache_dir, user_config_dir, user_state_dir

    found = []
    for where in (user_state_dir, user_config_dir, user_cache_dir):
        with contextlib.suppress(OSError, RuntimeError, KeyError):
            found.append(str(where()))
    return found


def hidden_paths(sandbox: Sandbox) -> list[str]:
    """Everything hidden from a check, as given (``~`` expanded)."""
    base = home()
    paths = [os.path.join(base, rel) for rel in HIDDEN_IN_HOME] if base else []
    paths += redline_folders()
    if sandbox.workspace:
        paths.append(os.path.join(sandbox.workspace, ".redline"))
    for extra in (os.environ.get("SSH_AUTH_SOCK", ""), _docker_host_path()):
        if extra:
            paths.append(extra)
    paths += [os.path.expanduser(p) for p in sandbox.hide]
    return paths


def _docker_host_path() -> str:
    value = os.environ.get("DOCKER_HOST", "")
    return value[len("unix://") :] if value.startswith("unix://") else ""


def environment(sandbox: Sandbox, tmp: str = "/tmp") -> dict[str, str]:
    """The only variables a sandboxed check sees."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name in KEPT_ENV or name.startswith("LC_") or name in sandbox.env
    }
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if "HOME" not in env and home():
        env["HOME"] = home()
    env["TERM"] = "dumb"
    env["TMPDIR"] = tmp
    return env


def bwrap_argv(
    bwrap: str,
    sandbox: Sandbox,
    argv: Sequence[str],
    cwd: str,
    private_tmp: str,
    status_fd: int | None = None,
) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` in ``cwd`` (writable, as is
    ``private_tmp``), everything else as the module docstring says."""
    out = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    out += _system_binds()
    out += ["--proc", "/proc", "--dev", "/dev"]
    for folder in FRESH_TMPFS:
        out += ["--tmpfs", folder]
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        out += ["--tmpfs", runtime]
    # Read-only binds: (real source, where the check sees it).
    binds: list[tuple[str, str]] = []
    base = home()
    for given in [base, sandbox.workspace, *sandbox.read]:
        if given and os.path.isabs(os.path.expanduser(given)):
            shown = os.path.normpath(os.path.expanduser(given))
            real = _real(shown)
            if os.path.exists(real) and shown != "/" and real != "/":
                binds.append((real, shown))
                out += ["--ro-bind", real, shown]
    read_only: list[str] = []
    for path in _unique(hidden_paths(sandbox)):
        inside = _inside(_real(path), binds)
        if inside is None or not os.path.lexists(_real(path)):
            continue  # not visible in the sandbox anyway
        if os.path.isdir(_real(path)):
            out += ["--tmpfs", inside]
            read_only.append(inside)
        else:
            out += ["--ro-bind", "/dev/null", inside]
    for writable in (private_tmp, cwd):
        out += ["--bind", _real(writable), os.path.normpath(writable)]
    # Only now (the writable folders may sit inside a hidden one, e.g. the cache folder):
    # each hiding mount made read-only itself, the binds inside it stay as they are.
    for inside in read_only:
        out += ["--remount-ro", inside]
    out += ["--chdir", cwd]
    if status_fd is not None:
        out += ["--json-status-fd", str(status_fd)]
    out += ["--clearenv"]
    for name, value in sorted(environment(sandbox).items()):
        out += ["--setenv", name, value]
    return [*out, "--", *argv]


def _unique(paths: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(os.path.normpath(path), None)
    return list(seen)


def _inside(real: str, binds: Sequence[tuple[str, str]]) -> str | None:
    """Where the host path ``real`` shows in the sandbox (the most specific bind), or None."""
    best: tuple[str, str] | None = None
    for source, shown in binds:
        if _under(real, source) and (best is None or len(source) > len(best[0])):
            best = (source, shown)
    if best is None:
        return None
    rest = os.path.relpath(real, best[0])
    return best[1] if rest == "." else os.path.join(best[1], rest)


@dataclass
class Launch:
    """What to start for one check: ``argv``, its environment (None: redline's own) and
    the file descriptors it keeps; :meth:`failure` afterwards says whether the sandbox
    itself failed (then the check never ran)."""

    argv: list[str]
    env: dict[str, str] | None = None
    fds: tuple[int, ...] = ()
    status: IO[bytes] | None = None
    refused: str = ""
    program: str = ""

    def failure(self) -> str:
        """Once the check has ended: why it did not run in its sandbox, or "" — the sandbox
        could not be made (``sandbox unavailable: …``), or the program could not be
        started inside it. On Linux it first waits until the sandbox's PID namespace is
        gone, so that nothing the check started is still running when it returns."""
        if self.refused:
            return self.refused
        if self.status is None:
            return ""
        with self.status:
            self.status.seek(0)
            text = self.status.read().decode("utf-8", "replace")
        self.status = None
        found = re.search(r'"child-pid"\s*:\s*(\d+)', text)
        if found:
            _wait_for_namespace(int(found.group(1)))
        # bwrap writes {"child-pid": N} once the sandbox is made, {"exit-code": N} once the
        # program it started has ended; a program it could not start has no exit code.
        if '"child-pid"' not in text:
            return UNAVAILABLE + (unavailable(fresh=True) or "bwrap could not set up the sandbox")
        if '"exit-code"' not in text:
            return (
                f"cannot start {self.program} in the sandbox: it is not installed, or it (or "
                "its interpreter) lives in a folder a check may not read — a tool chain "
                "outside /usr, /opt, $HOME and the workspace needs [check_runner] read in "
                "your config.toml (docs/checks.md)"
            )
        return ""


NAMESPACE_WAIT = 10.0


def _wait_for_namespace(pid: int) -> None:
    """Wait until bwrap's process ``pid`` (the PID namespace's first process) is a zombie
    or gone. bwrap returns the check's status as soon as the check ends; the namespace's
    first process dies right after (``--die-with-parent``), and the kernel kills and reaps
    every other process in the namespace before that one can become a zombie."""
    import time

    deadline = time.monotonic() + NAMESPACE_WAIT
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            return  # gone (reaped)
        name, _, rest = stat.partition(") ")
        if not name.endswith("(bwrap") or rest[:1] in ("Z", "X"):
            return  # a zombie, or the number is another process's now
        time.sleep(0.002)


def launch(sandbox: Sandbox | None, argv: Sequence[str], cwd: Path, private_tmp: str) -> Launch:
    """The command that runs ``argv`` in ``cwd`` as ``sandbox`` says (None or disabled: as
    it is). ``private_tmp`` is the run's own temporary folder (its ``{report}``)."""
    if sandbox is None or not sandbox.enabled:
        return Launch(list(argv))
    if kind() == "sandbox-exec":
        from redline.checks.sandbox_macos import profile

        text = profile(str(cwd), private_tmp, hidden_paths(sandbox))
        env = environment(sandbox, private_tmp)
        return Launch([SANDBOX_EXEC, "-p", text, "--", *argv], env)
    bwrap = bwrap_path()
    if bwrap is None:
        # Nothing of the check runs (check_preview asks first; this is the race's answer).
        return Launch(["true"], refused=UNAVAILABLE + unavailable())
    # bwrap writes {"child-pid": …} here once the check runs; read (and closed) by failure().
    status = tempfile.TemporaryFile()  # noqa: SIM115
    fd = status.fileno()
    command = bwrap_argv(bwrap, sandbox, argv, str(cwd), private_tmp, fd)
    return Launch(command, {}, (fd,), status, program=argv[0] if argv else "")


def unavailable_why(sandboxes: Iterable[Sandbox | None]) -> str:
    """``sandbox unavailable: <cause> — <what to do>`` when any check (by its
    :class:`Sandbox`) must run sandboxed and no sandbox can be made; "" otherwise."""
    if not any(s is not None and s.enabled for s in sandboxes):
        return ""
    why = unavailable()
    return f"{UNAVAILABLE}{why}" if why else ""


def is_unavailable(why: str) -> bool:
    """Is this check's ``why`` the sandbox's "unavailable" (possibly on the base side)?"""
    return why.startswith(UNAVAILABLE) or f": {UNAVAILABLE}" in why


def first_notice(name: str) -> bool:
    """True the first time ``name`` is asked for this user (a marker file in redline's
    state folder, made atomically), False ever after; True too when no marker can be
    kept (better twice than never)."""
    from redline.paths import UserDirError, user_state_dir

    try:
        folder = user_state_dir() / "notices"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    except (OSError, UserDirError):
        return True
    os.close(fd)
    return True


def valid_env_name(name: object) -> bool:
    return isinstance(name, str) and bool(ENV_NAME.match(name))
