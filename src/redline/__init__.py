"""redline: a coding-agent runtime where every change waits for review."""

from __future__ import annotations

__version__ = "0.1.0"
