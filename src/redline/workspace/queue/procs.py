"""Is the process that pushed an action still running? (:mod:`redline.workspace.procs`,
kept importable here for the queue's modules.)"""

from __future__ import annotations

from redline.workspace.procs import is_alive, process_start_time

__all__ = ["is_alive", "process_start_time"]
