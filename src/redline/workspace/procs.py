"""Is a process still running? (An action's owner, a dashboard's presence, a claim.)

Outside the queue package, so a hook call that only checks presence or its outbox does not
import the queue.

A pid alone is not enough: pids are reused. A record keeps the pid *and* the process's
start time (``/proc/<pid>/stat`` field 22, in clock ticks since boot), and a process
counts as alive only while both match. Where ``/proc`` is missing the start time is
``None`` and only the pid is checked.
"""

from __future__ import annotations

import os


def process_start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot, or None (no /proc, no such pid)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself contain ") ".
    tail = raw[raw.rfind(b")") + 2 :].split()
    try:
        if tail[0] == b"Z":  # a zombie has ended; only its exit status is left
            return None
        return int(tail[19])
    except (IndexError, ValueError):
        return None


def is_alive(pid: int, start_time: int | None) -> bool:
    """Whether the process ``pid`` that started at ``start_time`` still runs."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    except OSError:
        return False
    now = process_start_time(pid)
    if start_time is None:
        return now is not None or not os.path.isdir("/proc")
    return now == start_time
