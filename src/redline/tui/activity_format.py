"""How each session event reads in the activity log (pure: event data in, lines out).

Resolutions get the compact block of the design note's resolve renderer: the verdict,
the label's summary, a badge with the source tool, and the reason.
"""

from __future__ import annotations

import json
import re

from textual.content import Content

from redline.drivers.acp.events import (
    AcpAgentExit,
    AcpEvent,
    AcpMode,
    AcpPlan,
    AcpToolCall,
    AcpToolCallUpdate,
)
from redline.review import describe
from redline.review.events import (
    AgentEnd,
    AgentStart,
    ErrorEvent,
    Event,
    Notice,
    PendingPushed,
    PendingRebased,
    PendingReplaced,
    PendingResolved,
    PendingStale,
    PluginFailed,
    PluginLoaded,
    PluginOutput,
    ResolutionFailed,
    ResolveVerb,
    ToolEnd,
    ToolStart,
    ToolUpdate,
    Undone,
)
from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.termtext import one_line
from redline.workspace.queue import Resolution

LABEL_WIDTH = 72
ARGS_WIDTH = 100


#: Runs of spaces, tabs and newlines: squeezed to one space in a short field. Not
#: ``str.split()``'s whitespace, which also takes ``\r``, ``\x0b``, ``\x1c`` …: those
#: stay, for :func:`one_line` to show.
_SPACES = re.compile(r"[ \t\n]+")


def _short(text: str, width: int) -> str:
    text = one_line(_SPACES.sub(" ", text).strip(" "))
    return text if len(text) <= width else text[: width - 1] + "…"


def resolution_block(
    verb: ResolveVerb,
    label: str,
    source: str,
    reason: str,
    *,
    by: str = "",
    result_text: str = "",
    failed: bool = False,
    origin: str = "",
) -> list[Content]:
    """A resolution: what was decided on which action, from whom (``origin``, the action's
    source, when it is another process's), by whom, with which reason and outcome."""
    words = describe.verdict(verb, failed=failed)
    if failed:
        title = (f" {words} ", "bold $redline-text-error on $error-muted")
    elif verb == "apply":
        title = (f" ✓ {words} ", "bold $redline-text-success on $success-muted")
    else:
        title = (f" ✗ {words} ", "bold $redline-text-warning on $warning-muted")
    head: list[tuple[str, str] | str] = [
        title,
        " ",
        (_short(label, LABEL_WIDTH), "bold"),
        " ",
        (f" {describe.badge(source)} ", "$text-secondary on $secondary-muted"),
    ]
    if origin:
        head.extend([" ", (f"‹{origin}›", "bold $text-secondary")])
    if by:
        head.append((f"  by {by}", "$text-muted"))
    lines = [Content.assemble(*head)]
    shown_reason = one_line(describe.reason_text(reason))
    lines.append(Content.assemble(("   reason: ", "$text-muted"), shown_reason))
    text = result_text.strip()
    if failed and text:
        # Lines end at "\n" only: a "\r" (or another break of str.splitlines) in an
        # agent's text is shown, never taken as the end of what is shown.
        for line in text.split("\n")[:6]:
            lines.append(Content.styled(f"   {one_line(line)}", "$redline-text-error"))
    elif text:
        first = _without_reason(text.split("\n")[0], reason)
        if first:
            lines.append(Content.styled(f"   {_short(first, ARGS_WIDTH)}", "$text-muted"))
    return lines


def _without_reason(line: str, reason: str) -> str:
    """``line`` without a closing ``Reason: …`` that repeats the reason line above it."""
    for suffix in (f"Reason: {reason.strip()}", f"Reason: {reason.strip()}."):
        if reason.strip() and line.endswith(suffix):
            return line[: -len(suffix)].rstrip()
    return line


def _tool_end(event: ToolEnd, tool_names: dict[str, str]) -> list[Content]:
    name = tool_names.pop(event.tool_call_id, "") or event.name or "tool"
    result: ToolResult = event.result
    error = event.is_error or result.is_error
    first = _short(describe.first_line(result), ARGS_WIDTH) or "(no output)"
    return [
        Content.assemble(
            ("← ", "$redline-text-error" if error else "$redline-text-success"),
            (name, "bold"),
            " ",
            (first, "$redline-text-error" if error else "$text-muted"),
        )
    ]


def format_event(event: Event, tool_names: dict[str, str]) -> list[Content]:
    """Lines for one event (text deltas are streamed by the log itself, not formatted here).

    Events a reviewer has nothing to read in (turns, usage, message boundaries) give none.
    """
    match event:
        case AgentStart():
            return [Content.styled("── agent started ──", "$text-muted")]
        case AgentEnd(status=status):
            style = "$redline-text-error" if status in ("error", "aborted") else "$text-muted"
            return [Content.styled(f"── agent ended: {describe.run_status(status)} ──", style)]
        case ToolStart(tool_call_id=call_id, name=name, args=args):
            if call_id:
                tool_names[call_id] = name
            shown = json.dumps(args, ensure_ascii=False, default=str)
            return [
                Content.assemble(
                    ("→ ", "$redline-text-accent"),
                    (name or "tool", "bold"),
                    " ",
                    (_short(shown, ARGS_WIDTH), "$text-muted"),
                )
            ]
        case ToolUpdate(text=text):
            return [Content.styled(f"  … {_short(text, ARGS_WIDTH)}", "$text-muted")]
        case ToolEnd():
            return _tool_end(event, tool_names)
        case PendingPushed():
            return [
                Content.assemble(
                    ("⊕ queued ", "$redline-text-accent"),
                    (event.action_id, "$text-muted"),
                    " ",
                    (_short(event.label, LABEL_WIDTH), "bold"),
                    " ",
                    (
                        f" {describe.badge(event.source_tool_name)} ",
                        "$text-secondary on $secondary-muted",
                    ),
                    (describe.preview_stats(event.preview), "$text-muted"),
                )
            ]
        case PendingResolved():
            return resolution_block(
                event.action,
                event.label or event.action_id,
                event.source_tool_name,
                event.reason,
                by=describe.resolver(event.by, event.rule),
                result_text=event.result.text,
                failed=event.result.is_error,
            )
        case ResolutionFailed():
            # A refused or failed resolution: the action stays pending and the text says why.
            return resolution_block(
                event.action,
                event.label or event.action_id,
                event.source_tool_name,
                event.reason,
                by=describe.resolver(event.by, event.rule),
                result_text=event.message,
                failed=True,
            )
        case PendingStale(action_id=action_id, reason=reason):
            return [
                Content.assemble(
                    (" STALE ", "bold $redline-text-error on $error-muted"),
                    " ",
                    (action_id, "$text-muted"),
                    " ",
                    _short(reason, ARGS_WIDTH),
                )
            ]
        case PendingRebased():
            return [Content.styled(f"↻ {event.text}", "$redline-text-accent")]
        case PendingReplaced(old_action_id=old, action_id=new):
            return [Content.styled(f"↻ {describe.replaced(old, new)}", "$redline-text-accent")]
        case Undone(entry_id=entry_id, label=label, action_id=action_id):
            # "undo 000003 (pa-7)": the journal entry and the action it came from.
            origin = f" ({action_id})" if action_id else ""
            return [
                Content.assemble(
                    ("↶ undone ", "bold $redline-text-warning"),
                    (f"{entry_id}{origin} ", "$text-muted"),
                    _short(label or "the last apply", LABEL_WIDTH),
                )
            ]
        case PluginLoaded(message=message):
            return [Content.styled(f"⚙ plugin {message}", "$text-muted")]
        case PluginFailed(path=path, message=message):
            return plugin_error_lines(path, message)
        case PluginOutput(path=path, stream=stream, text=text):
            where = describe.plugin_name(path)
            return [
                Content.styled(f"⚙ {where} ({stream or 'stdout'}): {line}", "$text-muted")
                for line in text.splitlines()
            ]
        case Notice(message=message):
            return [Content.styled(f"ℹ {message}", "$text-muted")]
        case AcpEvent():
            return _acp_lines(event, tool_names)
        case ErrorEvent(message=message):
            return error_lines(message)
        case _:
            return []


def _acp_lines(event: AcpEvent, tool_names: dict[str, str]) -> list[Content]:
    """An external agent's activity (its text is streamed, like the built-in agent's)."""
    match event:
        case AcpToolCall(tool_call_id=call_id, kind=kind, title=title, raw_input=raw):
            name = f"{kind}: {title}"
            tool_names[call_id] = name
            shown = "" if raw is None else json.dumps(raw, ensure_ascii=False, default=str)
            return [
                Content.assemble(
                    ("→ ", "$redline-text-accent"),
                    (name, "bold"),
                    " ",
                    (_short(shown, ARGS_WIDTH), "$text-muted"),
                )
            ]
        case AcpToolCallUpdate(tool_call_id=call_id, status="completed" | "failed" as status):
            name = tool_names.pop(call_id, "") or event.title or "tool"
            failed = status == "failed"
            return [
                Content.assemble(
                    ("← ", "$redline-text-error" if failed else "$redline-text-success"),
                    (name, "bold"),
                    " ",
                    (status, "$redline-text-error" if failed else "$text-muted"),
                )
            ]
        case AcpPlan(entries=entries):
            steps = "; ".join(f"[{step.status}] {step.content}" for step in entries)
            return [Content.styled(f"ℹ plan: {_short(steps, ARGS_WIDTH)}", "$text-muted")]
        case AcpMode(mode_id=mode_id):
            return [Content.styled(f"ℹ agent mode {mode_id}", "$text-muted")]
        case AcpAgentExit(how=how, expected=expected):
            style = "$text-muted" if expected else "$redline-text-error"
            return [Content.styled(f"── the agent process {how} ──", style)]
        case _:
            # Messages are streamed; thoughts, usage and stderr stay in the session log.
            return []


def edited_lines(event: PendingReplaced) -> list[Content]:
    """A person's edit replaced an action (``✎ edited pa-3 as pa-6``)."""
    return [
        Content.assemble(
            (f"✎ edited {event.old_action_id} as {event.action_id} ", "$redline-text-accent"),
            (_short(event.label, LABEL_WIDTH), "bold"),
        )
    ]


def error_lines(message: str) -> list[Content]:
    return [
        Content.assemble((" ERROR ", "bold $redline-text-error on $error-muted"), " ", line)
        if index == 0
        else Content.styled(f"        {line}", "$redline-text-error")
        for index, line in enumerate((message or "unknown error").splitlines())
    ]


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


def detail_lines(event: Event) -> list[Content]:
    """The full text behind an event's one-line summary (``enter`` on it in the activity).

    A tool call shows all of its arguments; a tool result its whole text (files left out,
    errors, a preview's banner) and its details. Events with nothing more to say give none.
    """
    match event:
        case ToolStart(args=args):
            shown = json.dumps(args, ensure_ascii=False, indent=2, default=str)
            return [Content(line.expandtabs(4)) for line in shown.splitlines()]
        case ToolEnd():
            result: ToolResult = event.result
            style = "$redline-text-error" if event.is_error or result.is_error else ""
            lines = [Content.styled(line.expandtabs(4), style) for line in result.text.splitlines()]
            if result.details not in (None, {}, []):
                details = json.dumps(result.details, ensure_ascii=False, indent=2, default=str)
                lines.append(Content.styled("details:", "$text-muted"))
                lines.extend(
                    Content.styled(line.expandtabs(4), "$text-muted")
                    for line in details.splitlines()
                )
            return lines or [Content.styled("(no output)", "$text-muted")]
        case _:
            return []


def departure_block(action: PendingAction, resolution: Resolution, origin: str) -> list[Content]:
    """How another process's action left the list (``origin``: its source's badge text):
    the verdict, who decided, the reason."""
    verb: ResolveVerb = "apply" if resolution.decision == "apply" else "discard"
    # The queue says "person" where the session's own lines say "human".
    by = "human" if resolution.resolved_by == "person" else resolution.resolved_by
    if by == "rule" and resolution.rule:
        by = f"rule {resolution.rule}"
    return resolution_block(
        verb,
        f"{action.id} {action.label}",
        action.source_tool_name,
        resolution.reason,
        by=by,
        result_text=resolution.result_text,
        failed=resolution.is_error,
        origin=origin,
    )
