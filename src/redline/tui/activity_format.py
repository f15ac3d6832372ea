"""How each session event reads in the activity log (pure: event data in, lines out).

Resolutions get the compact block of the design note's resolve renderer: the verdict,
the label's summary, a badge with the source tool, and the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from textual.content import Content

LABEL_WIDTH = 72
ARGS_WIDTH = 100

# Events the log leaves out: they carry nothing a reviewer reads.
QUIET = frozenset({"turn_start", "turn_end", "usage", "message_start", "message_end"})


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _first(data: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = data.get(key)
        if value not in (None, ""):
            return str(value)
    return ""


def result_text(result: Any) -> str:
    """The text of a ToolResult dict (``content`` parts) or of anything else."""
    if isinstance(result, Mapping):
        content = result.get("content")
        if isinstance(content, list):
            return "\n".join(
                str(part.get("text", "")) for part in content if isinstance(part, Mapping)
            )
        if isinstance(content, str):
            return content
    return "" if result is None else str(result)


def _is_error(result: Any) -> bool:
    return bool(result.get("is_error")) if isinstance(result, Mapping) else False


def resolution_block(
    verb: str,
    label: str,
    source: str,
    reason: str | None,
    *,
    by: str = "",
    result: Any = None,
    failed: bool = False,
) -> list[Content]:
    if failed:
        title = (
            " APPLY FAILED " if verb == "apply" else " DISCARD FAILED ",
            "bold $redline-text-error on $error-muted",
        )
    elif verb == "apply":
        title = (" ✓ APPLIED ", "bold $redline-text-success on $success-muted")
    else:
        title = (" ✗ DISCARDED ", "bold $redline-text-warning on $warning-muted")
    head: list[tuple[str, str] | str] = [
        title,
        " ",
        (_short(label, LABEL_WIDTH), "bold"),
        " ",
        (f" {source} ", "$text-secondary on $secondary-muted"),
    ]
    if by:
        head.append((f"  by {by}", "$text-muted"))
    lines = [Content.assemble(*head)]
    if reason is not None:
        lines.append(Content.assemble(("   reason: ", "$text-muted"), reason or "(none given)"))
    text = result_text(result).strip()
    if failed and text:
        for line in text.splitlines()[:6]:
            lines.append(Content.styled(f"   {line}", "$redline-text-error"))
    elif text:
        lines.append(
            Content.styled(f"   {_short(text.splitlines()[0], ARGS_WIDTH)}", "$text-muted")
        )
    return lines


def format_event(
    event_type: str, data: Mapping[str, Any], tool_names: dict[str, str]
) -> list[Content]:
    """Lines for one event (text deltas are streamed by the log itself, not formatted here)."""
    if event_type in QUIET:
        return []
    if event_type == "agent_start":
        return [Content.styled("── agent started ──", "$text-muted")]
    if event_type == "agent_end":
        status = _first(data, "status") or "done"
        style = "$redline-text-error" if status in ("error", "aborted") else "$text-muted"
        return [Content.styled(f"── agent ended: {status.replace('_', ' ')} ──", style)]
    if event_type == "tool_start":
        name = _first(data, "name") or "tool"
        call_id = _first(data, "tool_call_id")
        if call_id:
            tool_names[call_id] = name
        args = data.get("args")
        shown = json.dumps(args, ensure_ascii=False, default=str) if args is not None else ""
        return [
            Content.assemble(
                ("→ ", "$redline-text-accent"),
                (name, "bold"),
                " ",
                (_short(shown, ARGS_WIDTH), "$text-muted"),
            )
        ]
    if event_type == "tool_update":
        return [
            Content.styled(
                f"  … {_short(_first(data, 'text', 'message', 'progress'), ARGS_WIDTH)}",
                "$text-muted",
            )
        ]
    if event_type == "tool_end":
        name = tool_names.pop(_first(data, "tool_call_id"), "") or _first(data, "name") or "tool"
        result = data.get("result")
        error = bool(data.get("is_error")) or _is_error(result)
        text = result_text(result).strip().splitlines()
        first = _short(text[0], ARGS_WIDTH) if text else "(no output)"
        return [
            Content.assemble(
                ("← ", "$redline-text-error" if error else "$redline-text-success"),
                (name, "bold"),
                " ",
                (first, "$redline-text-error" if error else "$text-muted"),
            )
        ]
    if event_type == "pending_pushed":
        preview = data.get("preview")
        stats = ""
        if isinstance(preview, Mapping):
            stats = f" +{preview.get('added', 0)} -{preview.get('removed', 0)}"
        return [
            Content.assemble(
                ("⊕ queued ", "$redline-text-accent"),
                (_first(data, "action_id"), "$text-muted"),
                " ",
                (_short(_first(data, "label"), LABEL_WIDTH), "bold"),
                " ",
                (
                    f" {_first(data, 'source_tool_name') or 'custom_tool'} ",
                    "$text-secondary on $secondary-muted",
                ),
                (stats, "$text-muted"),
            )
        ]
    if event_type == "pending_resolved":
        # ``action`` is the verb; label and source may sit beside it or in the result details.
        result = data.get("result")
        details = result.get("details") if isinstance(result, Mapping) else None
        details = details if isinstance(details, Mapping) else {}
        verb = "apply" if _first(data, "action") == "apply" else "discard"
        label = _first(data, "label") or _first(details, "label")
        source = _first(data, "source_tool_name") or _first(details, "source_tool_name")
        result = data.get("result")
        return resolution_block(
            verb,
            label or _first(data, "action_id"),
            source or "custom_tool",
            _first(data, "reason"),
            by=_first(data, "by"),
            result=result,
            failed=_is_error(result),
        )
    if event_type == "pending_stale":
        return [
            Content.assemble(
                (" STALE ", "bold $redline-text-error on $error-muted"),
                " ",
                (_first(data, "action_id"), "$text-muted"),
                " ",
                _short(_first(data, "reason", "stale_reason", "message"), ARGS_WIDTH),
            )
        ]
    if event_type == "pending_replaced":
        old = _first(data, "old_action_id", "previous_action_id")
        new = _first(data, "new_action_id", "action_id") if old else ""
        old = old or _first(data, "action_id")
        replaced = f"↻ re-previewed {old}" + (f" as {new}" if new else "")
        return [Content.styled(replaced, "$redline-text-accent")]
    if event_type == "undone":
        label = _first(data, "label") or result_text(data.get("result")).strip() or "the last apply"
        return [
            Content.assemble(
                ("↶ undone ", "bold $redline-text-warning"), _short(label, LABEL_WIDTH)
            )
        ]
    if event_type == "plugin_loaded":
        name = _first(data, "name", "tool", "path")
        return [Content.styled(f"⚙ plugin loaded: {name}", "$text-muted")]
    if event_type == "plugin_error":
        return plugin_error_lines(_first(data, "path", "source"), _first(data, "message", "error"))
    if event_type == "plugin_output":
        where = (_first(data, "path") or "plugin").rsplit("/", 1)[-1]
        stream = _first(data, "stream") or "stdout"
        return [
            Content.styled(f"⚙ {where} ({stream}): {line}", "$text-muted")
            for line in (_first(data, "text") or "").splitlines()
        ]
    if event_type == "notice" and data.get("failed"):
        # A refused or failed resolution: the action stays pending and the text says why.
        return resolution_block(
            "apply" if _first(data, "action") == "apply" else "discard",
            _first(data, "label") or _first(data, "action_id"),
            _first(data, "source_tool_name") or "pending action",
            str(data["reason"]) if "reason" in data else None,
            by=_first(data, "by"),
            result={"content": [{"type": "text", "text": _first(data, "message")}]},
            failed=True,
        )
    if event_type == "notice":
        return [Content.styled(f"ℹ {_first(data, 'message', 'text')}", "$text-muted")]
    if event_type == "error":
        return [
            Content.assemble((" ERROR ", "bold $redline-text-error on $error-muted"), " ", line)
            if index == 0
            else Content.styled(f"        {line}", "$redline-text-error")
            for index, line in enumerate(
                (_first(data, "message", "error") or "unknown error").splitlines()
            )
        ]
    return []


def plugin_error_lines(where: str, message: str) -> list[Content]:
    head = Content.assemble(
        (" PLUGIN ERROR ", "bold $redline-text-error on $error-muted"),
        " ",
        (where or "plugin", "bold"),
    )
    return [
        head,
        *(Content.styled(f"   {line}", "$redline-text-error") for line in message.splitlines()),
    ]
