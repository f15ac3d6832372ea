"""Telling the person that an action waits while the dashboard is not in front.

Two ways, both set in ``[notify]`` (:func:`redline.config.notify_settings`):

- **The terminal**: the bell, and a desktop notification where the terminal shows one — the
  ``OSC 9`` escape (iTerm2's, also read by WezTerm and Ghostty) or ``OSC 777;notify``
  (rxvt-unicode's, read by Ghostty, WezTerm, foot, Konsole and Fedora's VTE).
  :func:`terminal_alert` builds the bytes; the dashboard writes them through its driver.
- **The user's command**: :class:`CommandNotifier` runs ``[notify] command`` (an argv, never
  through a shell) with ``{id}``, ``{label}`` and ``{source}`` replaced, and the same values
  in ``$REDLINE_ACTION_ID``, ``$REDLINE_ACTION_LABEL`` and ``$REDLINE_ACTION_SOURCE``, on a
  thread of its own, each run stopped after ``[notify] timeout`` seconds.

An action's label and source come from an agent: they are text, never code. A placeholder
is replaced once (a label that holds ``{source}`` stays as it is), and the terminal escape
carries them without control characters, so a label cannot end the escape and write to
the terminal itself.
"""

from __future__ import annotations

import logging
import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from redline.config import NotifyConfig

log = logging.getLogger(__name__)

TITLE = "redline"
#: Environment variables the command receives (besides the placeholders in its argv).
ENV_ID = "REDLINE_ACTION_ID"
ENV_LABEL = "REDLINE_ACTION_LABEL"
ENV_SOURCE = "REDLINE_ACTION_SOURCE"
#: Longest text put in a desktop notification (the terminal shows a line or two anyway).
MAX_NOTICE_CHARS = 200
#: Arrivals waiting for the command at most; more are dropped (and logged) until it catches up.
MAX_QUEUED = 32
#: How much of a failing command's error output is shown.
MAX_ERROR_CHARS = 300

_PLACEHOLDER = re.compile(r"\{(id|label|source)\}")
# C0 controls, DEL and C1 controls: any of them could end or change an escape sequence.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
# Terminals known to show OSC 777;notify, by a part of their name.
_OSC777_NAMES = ("ghostty", "wezterm", "foot", "rxvt", "konsole")
# Terminals known to show OSC 9.
_OSC9_NAMES = ("iterm",)


@dataclass(frozen=True)
class Arrival:
    """One action that arrived: what the notification and the command are told."""

    id: str
    label: str
    source: str

    def fields(self) -> dict[str, str]:
        # argv and the environment cannot hold a NUL; everything else is passed as it is.
        return {
            "id": self.id.replace("\0", ""),
            "label": self.label.replace("\0", ""),
            "source": self.source.replace("\0", ""),
        }


# -- the terminal --------------------------------------------------------------------
def desktop_kind(setting: str, environ: Mapping[str, str]) -> str | None:
    """Which desktop escape to send: ``osc9``, ``osc777`` or None (none known to work).

    ``auto`` goes by the terminal's name (``$TERM_PROGRAM``, ``$LC_TERMINAL``, ``$TERM``)
    and ``$VTE_VERSION``; an unknown terminal gets the bell only, since some print an
    escape they do not know.
    """
    if setting in ("osc9", "osc777"):
        return setting
    if setting != "auto":
        return None
    names = " ".join(
        environ.get(key, "") for key in ("TERM_PROGRAM", "LC_TERMINAL", "TERM")
    ).lower()
    if any(name in names for name in _OSC777_NAMES) or environ.get("VTE_VERSION"):
        return "osc777"
    if any(name in names for name in _OSC9_NAMES):
        return "osc9"
    return None


def clean(text: str, limit: int = MAX_NOTICE_CHARS) -> str:
    """``text`` on one line without control characters, at most ``limit`` characters."""
    from redline.termtext import visible

    # Controls become spaces (inside an escape sequence); bidi and invisible format
    # characters are shown, as everywhere else (redline.termtext).
    flat = visible(" ".join(_CONTROL.sub(" ", text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def notice_text(arrivals: Sequence[Arrival]) -> str:
    """What the desktop notification says: the action, or how many arrived."""
    if not arrivals:
        return ""
    newest = arrivals[-1]
    text = f"{newest.id} {newest.label} ({newest.source}) waits for review"
    if len(arrivals) > 1:
        text = f"{len(arrivals)} actions wait for review; newest: {newest.id} {newest.label}"
    return clean(text)


def _tmux_wrap(sequence: str) -> str:
    # tmux passes an escape on to the terminal outside only inside its own DCS, with every
    # ESC doubled (and only with `set -g allow-passthrough on`; otherwise it drops it).
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def terminal_alert(
    config: NotifyConfig, arrivals: Sequence[Arrival], environ: Mapping[str, str] | None = None
) -> str:
    """The bytes to write to the terminal for ``arrivals`` ("" when nothing is to be sent)."""
    if not arrivals:
        return ""
    env = os.environ if environ is None else environ
    out = "\a" if config.bell else ""
    kind = desktop_kind(config.desktop, env)
    body = notice_text(arrivals)
    sequence = ""
    if kind == "osc9":
        sequence = f"\x1b]9;{body}\x07"
    elif kind == "osc777":
        # ';' separates the title from the body: the body may keep its own.
        sequence = f"\x1b]777;notify;{TITLE};{body}\x07"
    if sequence and env.get("TMUX"):
        sequence = _tmux_wrap(sequence)
    return out + sequence


# -- the user's command ---------------------------------------------------------------
def command_argv(command: Sequence[str], arrival: Arrival) -> list[str]:
    """``command`` with ``{id}``, ``{label}`` and ``{source}`` replaced, each in one pass."""
    fields = arrival.fields()
    return [_PLACEHOLDER.sub(lambda match: fields[match.group(1)], part) for part in command]


def command_env(arrival: Arrival, base: Mapping[str, str] | None = None) -> dict[str, str]:
    fields = arrival.fields()
    env = dict(os.environ if base is None else base)
    env[ENV_ID] = fields["id"]
    env[ENV_LABEL] = fields["label"]
    env[ENV_SOURCE] = fields["source"]
    return env


def run_command(command: Sequence[str], arrival: Arrival, timeout: float) -> str | None:
    """Run the notify command once; None when it succeeded, else what went wrong.

    No shell; stdin is empty, output is discarded except the end of stderr for the error;
    after ``timeout`` seconds its whole process group is killed.
    """
    argv = command_argv(command, arrival)
    shown = argv[0]
    with tempfile.TemporaryFile() as errors:
        try:
            # An argv from the user's own config (or a trusted workspace's); no shell.
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=command_env(arrival),
                start_new_session=True,
                close_fds=True,
            )
        except FileNotFoundError:
            return f"notify command {shown!r} not found"
        except PermissionError:
            return f"notify command {shown!r} is not executable"
        except OSError as exc:
            return f"notify command {shown!r} could not start: {exc.strerror or exc}"
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return f"notify command {shown!r} did not finish within {timeout:g} s and was stopped"
        if code == 0:
            return None
        errors.seek(0)
        tail = errors.read()[-MAX_ERROR_CHARS * 4 :].decode("utf-8", "replace")
        why = clean(tail, MAX_ERROR_CHARS)
        how = f"exit status {code}" if code > 0 else f"signal {-code}"
        return f"notify command {shown!r} failed ({how})" + (f": {why}" if why else "")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    process.wait()


class CommandNotifier:
    """Runs the notify command for each arrival, one at a time, on a daemon thread.

    :meth:`notify` never blocks: arrivals queue (at most :data:`MAX_QUEUED`). ``on_error``
    is called on the notifier's thread with a one-line text when a run fails.
    """

    def __init__(
        self,
        command: Sequence[str],
        timeout: float,
        on_error: Callable[[str], object] | None = None,
    ) -> None:
        if not command:
            raise ValueError("the notify command is empty")
        self.command = tuple(command)
        self.timeout = timeout
        self._on_error = on_error
        self._queue: queue.Queue[Arrival | None] = queue.Queue(MAX_QUEUED)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def notify(self, arrival: Arrival) -> bool:
        """Queue one run; False when the notifier is closed or too far behind."""
        with self._lock:
            if self._closed:
                return False
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="redline-notify", daemon=True
                )
                self._thread.start()
            try:
                self._queue.put_nowait(arrival)
            except queue.Full:
                log.warning("notify command is behind; not run for %s", arrival.id)
                return False
        return True

    def close(self) -> None:
        """No more runs; the thread ends after the run under way (never waited for)."""
        with self._lock:
            self._closed = True
            if self._thread is None:
                return
            # What is still queued is not run any more; the stop mark then always fits.
            while True:
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
            self._queue.put_nowait(None)

    def _run(self) -> None:
        while True:
            arrival = self._queue.get()
            if arrival is None:
                return
            try:
                error = run_command(self.command, arrival, self.timeout)
            except Exception as exc:  # never let one run end the thread
                log.exception("notify command failed")
                error = f"notify command {self.command[0]!r} failed: {exc}"
            if error is not None and self._on_error is not None:
                try:
                    self._on_error(error)
                except Exception:
                    log.exception("reporting a notify failure failed")


# -- nobody watching: the notification from the process that queued the action -------------
#: What ``osascript`` runs: the text is the script's argument, never part of its source, so
#: no quote or ``$(…)`` in a label can change what runs.
OSASCRIPT_LINES = (
    "on run argv",
    f'display notification (item 1 of argv) with title "{TITLE}"',
    "end run",
)
NONE_AVAILABLE = "none available"


def platform_notifier(
    environ: Mapping[str, str] | None = None,
    system: str | None = None,
    which: Callable[[str], str | None] | None = None,
) -> tuple[str, str] | None:
    """The desktop's own notifier here, as ``(kind, program)``: ``notify-send`` where it is
    found and a desktop session is there to show it, ``osascript`` on macOS outside SSH;
    None where there is none (SSH, headless)."""
    import shutil
    import sys

    env = os.environ if environ is None else environ
    found = shutil.which if which is None else which
    platform = sys.platform if system is None else system
    over_ssh = bool(env.get("SSH_CONNECTION") or env.get("SSH_TTY"))
    forwarded = platform != "darwin" and bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))
    if over_ssh and not forwarded:
        return None  # over SSH nothing shows on the person's screen (X forwarding aside)
    if platform == "darwin":
        program = found("osascript")
        return ("osascript", program) if program else None
    if not (
        env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("DBUS_SESSION_BUS_ADDRESS")
    ):
        return None
    program = found("notify-send")
    return ("notify-send", program) if program else None


def platform_argv(kind: str, program: str, text: str) -> list[str]:
    """The notifier's argv; ``text`` is always one argument of its own (the text starts
    with the action's id, never with ``-``)."""
    if kind == "osascript":
        script: list[str] = []
        for line in OSASCRIPT_LINES:
            script += ["-e", line]
        return [program, *script, text]
    return [program, f"--app-name={TITLE}", TITLE, text]


def unseen_argv(
    config: NotifyConfig, arrival: Arrival, environ: Mapping[str, str] | None = None
) -> list[str] | None:
    """How the person is told about ``arrival`` with no dashboard open: ``[notify] command``
    when set, else the desktop's notifier (not when ``[notify] desktop = "off"``); None when
    there is no way."""
    if config.command:
        return command_argv(config.command, arrival)
    if config.desktop == "off":
        return None
    found = platform_notifier(environ)
    if found is None:
        return None
    return platform_argv(found[0], found[1], notice_text([arrival]))


def availability(config: NotifyConfig, environ: Mapping[str, str] | None = None) -> str:
    """What tells the person when no dashboard watches (``redline workspaces list``)."""
    if config.command:
        return f"[notify] command {config.command[0]} ({config.origin})"
    if config.desktop == "off":
        return f'{NONE_AVAILABLE} ([notify] desktop = "off" and no command)'
    found = platform_notifier(environ)
    return found[0] if found is not None else NONE_AVAILABLE


def spawn_detached(argv: Sequence[str], arrival: Arrival, timeout: float) -> str | None:
    """Start ``argv`` without waiting for it (its own session, no stdin/stdout/stderr: a
    hook's and an MCP server's stdout is their protocol); a daemon thread stops it after
    ``timeout`` seconds while this process lives. None when it started, else why not."""
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=command_env(arrival),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        return f"notifier {argv[0]!r} could not start: {exc.strerror or exc}"

    def reap() -> None:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)

    threading.Thread(target=reap, name="redline-notify-reap", daemon=True).start()
    return None
