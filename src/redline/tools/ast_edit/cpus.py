"""How many CPUs a search may use now: the ones this process may run on, within the
container's quota, less what other work keeps busy.

* **May run on**: ``os.sched_getaffinity`` (Linux); elsewhere (macOS has none)
  ``os.cpu_count()``.
* **Quota**: cgroup v2's ``/sys/fs/cgroup/cpu.max`` (``"max 100000"`` or ``"QUOTA PERIOD"``):
  in a container the affinity still lists the host's cores, the quota says how many of
  them the container gets; rounded up.
* **Busy**: the 1-minute load average (runnable processes, including this one once it
  runs). What is left of the usable CPUs once that load is subtracted, rounded to the
  nearest whole CPU, at least one.

Reading these costs a few microseconds and two small reads; nothing here raises.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def affinity_cpus() -> int:
    """The CPUs this process may run on (``os.cpu_count()`` where affinity is unknown)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        try:
            return max(1, len(getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def quota_cpus(path: Path = CPU_MAX) -> int | None:
    """The cgroup v2 CPU quota in whole CPUs, rounded up (None: no quota, or unknown)."""
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, math.ceil(quota / period))


def usable_cpus(path: Path = CPU_MAX) -> int:
    """The CPUs this process may use: its affinity, within the cgroup quota."""
    usable = affinity_cpus()
    quota = quota_cpus(path)
    return min(usable, quota) if quota is not None else usable


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):  # not on every platform
        return None


def idle_cpus(usable: int | None = None, load: float | None = None) -> int:
    """Usable CPUs that other work leaves free now (at least 1).

    ``usable`` and ``load`` default to :func:`usable_cpus` and the 1-minute load average;
    with no load average every usable CPU counts as free.
    """
    usable = usable_cpus() if usable is None else usable
    load = load_average() if load is None else load
    if load is None:
        return max(1, usable)
    return max(1, min(usable, math.floor(usable - load + 0.5)))
