"""How many CPUs a search may use now: the ones this process may run on, within the
container's quota, less what other work keeps busy.

* **May run on**: ``os.sched_getaffinity`` (Linux); elsewhere (macOS has none)
  ``os.cpu_count()``.
* **Quota**: cgroup v2's ``/sys/fs/cgroup/cpu.max`` (``"max 100000"`` or ``"QUOTA PERIOD"``):
  in a container the affinity still lists the host's cores, the quota says how many of
  them the container gets; rounded up.
* **Busy**: the lesser of the 1-minute load average and the tasks other than this one
  runnable at this instant (``/proc/loadavg``'s fourth field, ``RUNNABLE/TOTAL``; Linux
  only). The average lags by about a minute, so on its own it still counts work that has
  just ended (a benchmark's previous runs, a test suite that finished); the instant count
  sees that the CPUs are free now, and the average keeps one moment's burst from reading as
  a busy machine. Where there is no ``/proc/loadavg`` (macOS) the average alone counts.
  What is left of the usable CPUs once that is subtracted, rounded to the nearest whole
  CPU, at least one.

Reading these costs a few microseconds and three small reads; nothing here raises.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
LOADAVG = Path("/proc/loadavg")


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


def runnable_now(path: Path = LOADAVG) -> int | None:
    """Tasks other than this one that are runnable at this instant (None: unknown).

    ``/proc/loadavg`` reads like ``0.52 0.61 0.70 3/412 12345``: the fourth field's first
    number counts the tasks running or waiting for a CPU now, this process (reading it)
    included.
    """
    try:
        fields = path.read_text(encoding="ascii").split()
        runnable = int(fields[3].split("/", 1)[0])
    except (OSError, UnicodeDecodeError, IndexError, ValueError):
        return None
    return max(0, runnable - 1)


def load_average(path: Path = LOADAVG) -> float | None:
    """How many CPUs other work keeps busy: the lesser of the 1-minute load average and
    the tasks runnable now (either alone where the other is unknown; None: neither)."""
    try:
        average: float | None = os.getloadavg()[0]
    except (OSError, AttributeError):  # not on every platform
        average = None
    now = runnable_now(path)
    if now is None:
        return average
    if average is None:
        return float(now)
    return min(average, float(now))


def idle_cpus(usable: int | None = None, load: float | None = None) -> int:
    """Usable CPUs that other work leaves free now (at least 1).

    ``usable`` and ``load`` default to :func:`usable_cpus` and :func:`load_average`;
    with neither load figure known every usable CPU counts as free.
    """
    usable = usable_cpus() if usable is None else usable
    load = load_average() if load is None else load
    if load is None:
        return max(1, usable)
    return max(1, min(usable, math.floor(usable - load + 0.5)))
