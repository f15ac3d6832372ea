"""Continue a session from its log: ``redline exec --resume``.

The session log (``.redline/sessions/ID.jsonl``) holds every event of a session. From it
the conversation is rebuilt (prompts, the model's replies and tool calls, tool results,
the resolution reports the model was given), and the resolutions the model has not heard
of yet are collected: those recorded in the log after the model last spoke, and those
made from another process (``redline pending``, the dashboard) while the session's
process was gone, read from the review queue's resolved log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from redline.drivers.model.providers.base import Message, ToolCall
from redline.drivers.model.session import Resolution, resolution_reminder
from redline.review.events import (
    AgentStart,
    MessageEnd,
    PendingPushed,
    PendingReplaced,
    PendingResolved,
    ToolEnd,
    ToolStart,
    Undone,
)
from redline.review.session_log import ResumeError, SessionLogError, read_log, session_log_path
from redline.workspace.queue import QueueError, WorkspaceQueue
from redline.workspace.queue import Resolution as QueueResolution


@dataclass
class History:
    """What a session log says about a session, for continuing it."""

    session_id: str
    header: dict[str, object]
    #: The conversation after the system prompt.
    messages: list[Message] = field(default_factory=list)
    #: Resolutions (and undos) the model has not been told about.
    unreported: list[Resolution] = field(default_factory=list)
    #: The session's actions that are neither resolved in the log nor replaced.
    open_ids: list[str] = field(default_factory=list)


def load_history(path: Path, queue: WorkspaceQueue | None) -> History:
    """Rebuild the conversation and the unheard resolutions from the log at ``path``."""
    try:
        header, events = read_log(path)
    except SessionLogError as exc:
        raise ResumeError(str(exc)) from None
    except OSError as exc:
        raise ResumeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    sid = str(header.get("session_id") or path.stem)
    history = History(sid, header)
    messages = history.messages
    heard: list[Resolution] = []  # recorded since the model last spoke
    open_ids: dict[str, PendingPushed | PendingReplaced] = {}
    calls: list[ToolCall] | None = None
    assistant_text = ""
    results: list[Message] = []

    def flush() -> None:
        nonlocal calls, results
        if calls is not None:
            messages.append(Message("assistant", assistant_text, tool_calls=tuple(calls)))
            messages.extend(results)
            answered = {m.tool_call_id for m in results}
            for call in calls:  # a call the log has no result for (the process ended)
                if call.id not in answered:
                    messages.append(
                        Message(
                            "tool",
                            "No result: the session ended during this call.",
                            tool_call_id=call.id,
                            name=call.name,
                            is_error=True,
                        )
                    )
        calls, results = None, []

    for event in events:
        match event:
            case AgentStart(prompt=prompt):
                flush()
                if prompt is not None:
                    messages.append(Message("user", prompt))
            case MessageEnd(text=text):
                flush()
                if heard:
                    messages.append(Message("user", resolution_reminder(heard)))
                    heard = []
                calls, assistant_text = [], text
            case ToolStart(tool_call_id=call_id, name=name, args=args):
                if calls is not None:
                    calls.append(ToolCall(call_id, name, dict(args)))
            case ToolEnd(tool_call_id=call_id, name=name, result=result, is_error=is_error):
                results.append(
                    Message("tool", result.text, tool_call_id=call_id, name=name, is_error=is_error)
                )
            case PendingPushed(action_id=action_id):
                open_ids[action_id] = event
            case PendingReplaced(old_action_id=old, action_id=new):
                open_ids.pop(old, None)
                open_ids[new] = event
            case PendingResolved(action_id=action_id, by=by):
                open_ids.pop(action_id, None)
                if by != "agent":
                    done = "applied" if event.action == "apply" else "discarded"
                    heard.append(
                        Resolution(done, action_id, event.label, event.reason, event.result.text)
                    )
            case Undone(entry_id=entry_id, label=label, files=files, action_id=undone):
                text = f"Undid {label or 'the last apply'} ({', '.join(files)})."
                heard.append(Resolution("undid", undone or entry_id, label, "", text))
            case _:
                pass
    flush()
    for action_id, pushed in list(open_ids.items()):
        if queue is None:
            break
        final_id, found = final_resolution(queue, action_id)
        if found is None or found.decision not in ("apply", "discard"):
            if found is not None:
                del open_ids[action_id]  # removed elsewhere: nothing to report
            elif final_id != action_id:
                # Replaced elsewhere (a person's edit, a re-base) and still pending.
                del open_ids[action_id]
                open_ids[final_id] = pushed
            continue
        del open_ids[action_id]
        done = "applied" if found.decision == "apply" else "discarded"
        # The result text of an edited apply carries the diff from the proposal to what
        # was written, so the model learns what is really on disk.
        heard.append(Resolution(done, final_id, pushed.label, found.reason, found.result_text))
    history.unreported = heard
    history.open_ids = list(open_ids)
    return history


def final_resolution(
    queue: WorkspaceQueue, action_id: str, *, hops: int = 64
) -> tuple[str, QueueResolution | None]:
    """Where ``action_id`` ended: its resolution, or, when it was replaced elsewhere (a
    person's ``pending edit``, a re-base), that of its replacement, followed to the end.

    Returns the last id and its resolution (None while that one is still pending)."""
    current = action_id
    for _ in range(hops):
        try:
            found = queue.resolution(current)
        except QueueError:
            return current, None
        if found is None or found.decision != "replaced" or not found.replaced_by:
            return current, found
        current = found.replaced_by
    return current, None


__all__ = ["History", "ResumeError", "load_history", "session_log_path"]
