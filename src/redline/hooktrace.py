"""Opt-in timestamps of a hook call's steps, for finding where its time goes.

``REDLINE_HOOK_TRACE=FILE`` makes every redline process append ``PID MONOTONIC STEP``
lines to FILE at the steps of a hook call and of the decision that answers it (queued,
request written, watch heard, served, answered, exit; docs/performance.md, issue 49).
The clock is the system's monotonic one, shared by every process of the machine, so the
deciding command's lines and the hook's line up. Unset (always, in use), :func:`mark`
is one comparison.
"""

from __future__ import annotations

import os

_FILE = os.environ.get("REDLINE_HOOK_TRACE") or None


def mark(step: str) -> None:
    """Append this process's ``step`` with the time, when tracing is on."""
    if _FILE is None:
        return
    import time

    line = f"{os.getpid()} {time.monotonic():.6f} {step}\n".encode()
    fd = os.open(_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
