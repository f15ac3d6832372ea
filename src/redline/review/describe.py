"""Words both event printers use: the CLI's (``agent/render.py``) and the dashboard's.

Each fact has its wording here once, so ``redline exec`` and the activity log agree.
"""

from __future__ import annotations

from redline.review.events import ResolvedBy, ResolveVerb, RunStatus
from redline.review.result import ToolResult
from redline.workspace.summary import PreviewSummary

# Shown in place of a missing source tool name.
UNKNOWN_SOURCE = "custom_tool"


def first_line(result: ToolResult) -> str:
    """The first line of a result's text ('' when it has none)."""
    # Only "\n" ends the line: a "\r" in a model's or agent's text does not cut it short.
    return result.text.strip().split("\n")[0]


def preview_stats(preview: PreviewSummary | None) -> str:
    """`` +3 -1`` for a file preview, '' for an action without one."""
    return "" if preview is None else f" +{preview['added']} -{preview['removed']}"


def verdict(verb: ResolveVerb, *, failed: bool = False) -> str:
    """``APPLIED``, ``DISCARDED``, ``APPLY FAILED`` or ``DISCARD FAILED``."""
    if failed:
        return f"{verb.upper()} FAILED"
    return "APPLIED" if verb == "apply" else "DISCARDED"


def badge(source_tool_name: str) -> str:
    """The tool that queued an action, as its badge shows it."""
    return source_tool_name or UNKNOWN_SOURCE


def run_status(status: RunStatus) -> str:
    """``awaiting review`` for ``awaiting_review``, and so on."""
    return status.replace("_", " ")


def replaced(old_action_id: str, action_id: str) -> str:
    return f"re-previewed {old_action_id} as {action_id}"


def plugin_name(path: str) -> str:
    """A plugin's file name without its folder (``plugin`` when unknown)."""
    return path.rsplit("/", 1)[-1] or "plugin"


def reason_text(reason: str) -> str:
    return reason or "(none given)"


__all__ = [
    "UNKNOWN_SOURCE",
    "badge",
    "first_line",
    "plugin_name",
    "preview_stats",
    "reason_text",
    "replaced",
    "run_status",
    "verdict",
]


def resolver(by: ResolvedBy, rule: str | None = None) -> str:
    """Who resolved: ``human``/``agent``/``auto``, or ``rule NAME`` for a review rule."""
    return f"rule {rule}" if by == "rule" and rule else by
