"""The Seatbelt profile a check runs under on macOS (``sandbox-exec -p PROFILE``).

Reads are allowed broadly (a deny-default profile cannot even start ``/bin/sh``); every
write is denied but in the run's tree, its private temporary folder and the terminal
devices; the credential paths and redline's own folders are denied for reading and
writing; all networking (TCP and unix sockets alike) is denied. In Seatbelt the last
matching rule wins, so the order below is the policy. Seatbelt cannot stop a double-forked
child from outliving the check: after the run redline kills the check's process group
(docs/checks.md says so). Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

#: Devices a check writes to (its output goes to files redline opened for it).
WRITABLE_DEVICES: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/dtracehelper")


def quote(path: str) -> str:
    """``path`` as an SBPL string literal (backslash and double quote escaped)."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _real(path: str) -> str:
    # /tmp and /var are symlinks into /private on macOS; Seatbelt matches real paths.
    return os.path.realpath(os.path.expanduser(path))


def profile(tree: str, private_tmp: str, hidden: Sequence[str]) -> str:
    """The profile text for a check run in ``tree`` with ``private_tmp`` as its TMPDIR."""
    writable = sorted({_real(tree), _real(private_tmp)})
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny network*)",
        "(deny file-write*)",
        "(allow file-write*",
        *(f"  (subpath {quote(path)})" for path in writable),
        *(f"  (literal {quote(device)})" for device in WRITABLE_DEVICES),
        '  (regex #"^/dev/tty")',
        '  (regex #"^/dev/fd/"))',
    ]
    denied = sorted({_real(path) for path in hidden if path})
    if denied:
        lines.append("(deny file-read* file-write*")
        lines += [f"  (subpath {quote(path)})" for path in denied]
        lines[-1] += ")"
        # The run's own folders may sit inside a hidden one (the cache folder): the check
        # keeps them.
        lines.append("(allow file-read* file-write*")
        lines += [f"  (subpath {quote(path)})" for path in writable]
        lines[-1] += ")"
    return "\n".join(lines) + "\n"
