"""The agent hears late decisions at its next hook call of the session (standard library
only: every hook call passes here).

Where the answer can carry text for the model (verified with the real agents,
tests/e2e/test_prompt_hooks.py): Claude Code ``UserPromptSubmit`` and ``PreToolUse``,
Codex ``UserPromptSubmit``, Gemini CLI ``BeforeAgent`` — each as
``hookSpecificOutput.additionalContext``. The entries are claimed from the session's
outbox (:mod:`redline.workspace.outbox`) before the answer is printed and removed after;
an answer that cannot carry them (a blocking exit) leaves them for the next call.
"""

from __future__ import annotations

from redline import fastjson
from redline.drivers.hooks.answers import Rendered
from redline.drivers.hooks.values import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.drivers.hooks.payload import HookPayload
    from redline.workspace.outbox import Taken

#: The events whose answer tells the agent its late outcomes, per agent.
TOLD_AT: dict[str, tuple[str, ...]] = {
    "claude": ("UserPromptSubmit", "PreToolUse"),
    "codex": ("UserPromptSubmit",),
    "gemini": ("BeforeAgent",),
}


def attach(payload: HookPayload, rendered: Rendered) -> tuple[Rendered, Taken | None]:
    """``rendered`` with the session's late outcomes added for the model, and what was
    claimed for it (call ``done()`` once printed, ``give_back()`` if printing failed)."""
    if payload.event not in TOLD_AT.get(payload.agent, ()) or rendered.code != 0:
        return rendered, None
    if not payload.session_id:
        return rendered, None
    from redline.workspace.outbox import take

    taken = take(payload.agent, payload.session_id)
    if not taken:
        return rendered, None
    merged = _merged(rendered.stdout, payload.event, taken.text)
    if merged is None:
        taken.give_back()
        return rendered, None
    return Rendered(merged, rendered.stderr, rendered.code), taken


def _merged(stdout: str, event: str, text: str) -> str | None:
    """The answer's JSON with ``text`` in ``hookSpecificOutput.additionalContext``; None
    when the answer is something else."""
    if not stdout.strip():
        output: dict[str, object] = {"hookEventName": event, "additionalContext": text}
        return fastjson.dumps({"hookSpecificOutput": output}) + "\n"
    try:
        data = fastjson.loads(stdout)
    except ValueError:
        return None
    specific = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    if not isinstance(specific, dict):
        return None
    earlier = specific.get("additionalContext")
    specific["additionalContext"] = f"{earlier}\n{text}" if isinstance(earlier, str) else text
    return fastjson.dumps(data) + "\n"


__all__ = ["TOLD_AT", "attach"]
