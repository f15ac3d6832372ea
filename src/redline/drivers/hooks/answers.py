"""What the hook prints and how it exits, per agent (standard library only).

Verified with Claude Code 2.1.332 (tests/fixtures/hooks/claude/): a PreToolUse hook that
prints ``hookSpecificOutput`` with ``permissionDecision`` ``allow``/``deny`` and exits 0 is
obeyed (``updatedInput`` replaces the tool's input, a deny's reason reaches the model as
the tool's error); exit 2 blocks with stderr as the reason. Anything else fails open.
"""

from __future__ import annotations

from redline import fastjson
from redline.drivers.hooks.values import TYPE_CHECKING, Value

if TYPE_CHECKING:
    from typing import Literal

    from redline.jsontypes import JsonObject

    AnswerKind = Literal["allow", "deny", "pass", "block"]


class Answer(Value):
    """What the hook tells the agent. ``block``: fail closed (exit 2 with ``reason``)."""

    _fields = ("kind", "reason", "updated_input", "action_id")
    kind: AnswerKind
    reason: str
    updated_input: JsonObject | None
    action_id: str

    def __init__(
        self,
        kind: AnswerKind,
        reason: str = "",
        updated_input: JsonObject | None = None,
        action_id: str = "",
    ) -> None:
        self._set(kind=kind, reason=reason, updated_input=updated_input, action_id=action_id)


#: The agent's blocking exit status.
BLOCK_EXIT = 2


class Rendered(Value):
    """The hook's output: what it prints on each stream and its exit status."""

    _fields = ("stdout", "stderr", "code")
    stdout: str
    stderr: str
    code: int

    def __init__(self, stdout: str, stderr: str, code: int) -> None:
        self._set(stdout=stdout, stderr=stderr, code=code)


def blocked(reason: str) -> Rendered:
    """Fail closed: the agent's blocking exit, the cause on stderr (the model reads it)."""
    return Rendered("", f"redline: blocked: {reason}\n", BLOCK_EXIT)


def render(agent: str, event: str, answer: Answer) -> Rendered:
    """The hook's output for ``answer`` to ``agent``'s ``event``."""
    if answer.kind == "block":
        return blocked(answer.reason)
    if answer.kind == "pass":
        return Rendered("", "", 0)
    if answer.kind == "deny" and not answer.reason.strip():
        # Codex allows a deny whose reason is empty: never send one
        answer = Answer("deny", "Blocked by redline.", action_id=answer.action_id)
    if agent in ("claude", "codex"):
        output: dict[str, object] = {
            "hookEventName": event,
            "permissionDecision": answer.kind,
            "permissionDecisionReason": answer.reason,
        }
        if answer.kind == "allow" and answer.updated_input is not None:
            output["updatedInput"] = answer.updated_input
        return Rendered(fastjson.dumps({"hookSpecificOutput": output}) + "\n", "", 0)
    if agent == "gemini":
        if answer.kind == "allow" and answer.updated_input is not None:
            # observed: the whole tool_input is replaced by this one (not merged)
            output = {"hookEventName": event, "tool_input": answer.updated_input}
            return Rendered(fastjson.dumps({"hookSpecificOutput": output}) + "\n", "", 0)
        decision = "allow" if answer.kind == "allow" else "deny"
        return Rendered(
            fastjson.dumps({"decision": decision, "reason": answer.reason}) + "\n", "", 0
        )
    return blocked(f"no answer format for agent {agent!r}")


def render_post(agent: str, event: str, note: str) -> Rendered:
    """A post-tool hook's output: nothing, or the note for the model."""
    if not note:
        return Rendered("", "", 0)
    if agent == "codex":  # observed: the model reads the reason instead of the tool's text
        return Rendered(fastjson.dumps({"decision": "block", "reason": note}) + "\n", "", 0)
    if agent == "claude":
        output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": note}}
        return Rendered(fastjson.dumps(output) + "\n", note + "\n", 0)
    return Rendered("", note + "\n", 0)
