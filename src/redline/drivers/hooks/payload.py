"""A hook payload, read and checked without pydantic (the hook process must start fast).

Everything the agent sends is untrusted: a payload that is not a JSON object with the
fields below (of the right types) is refused with a message naming the field.
"""

from __future__ import annotations

from redline import fastjson
from redline.drivers.hooks.values import TYPE_CHECKING, Value

if TYPE_CHECKING:
    from redline.jsontypes import JsonObject, JsonValue

#: Agents ``redline hook`` understands.
AGENTS: tuple[str, ...] = ("claude", "codex", "gemini")
#: Largest payload read from stdin (a Write carries a whole file).
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024

PRE_EVENTS = {"claude": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool"}
POST_EVENTS = {"claude": "PostToolUse", "codex": "PostToolUse", "gemini": "AfterTool"}
#: The prompt-time event: the agent hears late decisions there (drivers/hooks/outbox.py).
PROMPT_EVENTS = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}


class PayloadError(ValueError):
    """The payload is not one redline understands; the message says which part."""


class HookPayload(Value):
    """One hook call: which event, which tool with which input, in which session."""

    _fields = (
        "agent",
        "event",
        "tool_name",
        "tool_input",
        "session_id",
        "cwd",
        "tool_use_id",
        "permission_mode",
        "tool_response",
        "raw",
    )
    agent: str
    event: str
    tool_name: str
    tool_input: JsonObject
    session_id: str
    cwd: str
    tool_use_id: str
    permission_mode: str
    tool_response: JsonValue
    raw: JsonObject

    def __init__(
        self,
        agent: str,
        event: str,
        tool_name: str,
        tool_input: JsonObject,
        session_id: str,
        cwd: str,
        tool_use_id: str = "",
        permission_mode: str = "",
        tool_response: JsonValue = None,
        raw: JsonObject | None = None,
    ) -> None:
        self._set(
            agent=agent,
            event=event,
            tool_name=tool_name,
            tool_input=tool_input,
            session_id=session_id,
            cwd=cwd,
            tool_use_id=tool_use_id,
            permission_mode=permission_mode,
            tool_response=tool_response,
            raw={} if raw is None else raw,
        )

    def __repr__(self) -> str:  # the raw payload (a whole file, maybe) is not shown
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields if n != "raw")
        return f"HookPayload({shown})"

    @property
    def is_pre(self) -> bool:
        return self.event == PRE_EVENTS.get(self.agent)

    @property
    def is_post(self) -> bool:
        return self.event == POST_EVENTS.get(self.agent)

    @property
    def is_prompt(self) -> bool:
        return self.event == PROMPT_EVENTS.get(self.agent)


def _string(data: JsonObject, key: str, *, required: bool = True) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        shown = "missing" if value is None else f"a {type(value).__name__}, not a string"
        raise PayloadError(f"hook payload: `{key}` is {shown}")
    return value


def _folder(data: JsonObject) -> str:
    """The payload's ``cwd``: an absolute path to an existing folder, else a PayloadError.

    The workspace is found from it, so an empty or relative one would be read against the
    hook's own folder (and a queue made there); nothing is created for a refused call."""
    import os

    cwd = _string(data, "cwd")
    if not cwd:
        raise PayloadError("hook payload: `cwd` is empty: expected the agent's absolute folder")
    if "\x00" in cwd:
        raise PayloadError("hook payload: `cwd` holds a NUL byte")
    if not os.path.isabs(cwd):
        raise PayloadError(
            f"hook payload: `cwd` {cwd!r} is a relative path: expected the agent's absolute folder"
        )
    if not os.path.isdir(cwd):
        raise PayloadError(f"hook payload: `cwd` {cwd!r} is not an existing folder")
    return cwd


def parse_payload(agent: str, raw: bytes) -> HookPayload:
    """Parse ``raw`` (the agent's stdin) as ``agent``'s hook payload."""
    if agent not in AGENTS:
        raise PayloadError(f"unknown agent {agent!r}: expected one of {', '.join(AGENTS)}")
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"hook payload is larger than {MAX_PAYLOAD_BYTES} bytes")
    if not raw.strip():
        raise PayloadError("hook payload is empty: expected a JSON object on stdin")
    try:
        data = fastjson.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PayloadError(f"hook payload is not UTF-8 (byte {exc.start})") from None
    except ValueError as exc:
        raise PayloadError(f"hook payload is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PayloadError(f"hook payload is a JSON {type(data).__name__}, not an object")
    event = _string(data, "hook_event_name")
    if event == PROMPT_EVENTS[agent]:  # no tool: only the session matters
        cwd = data.get("cwd")
        return HookPayload(
            agent=agent,
            event=event,
            tool_name="",
            tool_input={},
            session_id=_string(data, "session_id"),
            cwd=cwd if isinstance(cwd, str) else "",
            raw=data,
        )
    tool_name = _string(data, "tool_name")
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        raise PayloadError("hook payload: `tool_input` is missing or not an object")
    known = (PRE_EVENTS[agent], POST_EVENTS[agent], PROMPT_EVENTS[agent])
    if event not in known:
        raise PayloadError(
            f"hook payload: event {event!r} is not one redline handles for {agent} "
            f"(expected {', '.join(known[:-1])} or {known[-1]})"
        )
    return HookPayload(
        agent=agent,
        event=event,
        tool_name=tool_name,
        tool_input=tool_input,
        session_id=_string(data, "session_id"),
        cwd=_folder(data),
        tool_use_id=_string(data, "tool_use_id", required=False),
        permission_mode=_string(data, "permission_mode", required=False),
        tool_response=data.get("tool_response"),
        raw=data,
    )


def input_string(payload: HookPayload, key: str, *, default: str | None = None) -> str:
    """``tool_input[key]`` as a string (``default`` when absent), else a PayloadError."""
    value = payload.tool_input.get(key)
    if value is None and default is not None:
        return default
    if not isinstance(value, str):
        shown = "missing" if value is None else f"a {type(value).__name__}, not a string"
        raise PayloadError(f"{payload.tool_name}: `tool_input.{key}` is {shown}")
    return value


def input_bool(payload: HookPayload, key: str) -> bool:
    value = payload.tool_input.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise PayloadError(f"{payload.tool_name}: `tool_input.{key}` is not true or false")
    return value
