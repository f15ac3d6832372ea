"""What the ACP client holds for the agent: its requests waiting on review, their outcomes,
the decisions it has not heard yet, and the JSON-RPC codes of redline's answers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from acp import schema

from redline.review.store import PendingAction

if TYPE_CHECKING:
    from redline.jsontypes import JsonObject, JsonValue


PROTOCOL_VERSION = 1
# Lines of the agent's stderr quoted when it fails to start or dies.
STDERR_TAIL = 8
# JSON-RPC error codes of redline's answers (the application range of JSON-RPC).
OUTSIDE_WORKSPACE = -32602
DISCARDED = -32001
NOT_WRITTEN = -32002
AGENT_STOPPED = -32003
FILE_UNREADABLE = -32004


class AcpError(RuntimeError):
    """The agent could not be started or stopped answering; the message says how."""


# "elsewhere": another process removed or split the action (its reason says how).
Decision = Literal["apply", "discard", "cancelled", "ended", "elsewhere"]


@dataclass
class _Outcome:
    decision: Decision
    reason: str = ""
    # The review rule that decided, when a rule did (docs/rules.md).
    rule: str | None = None


@dataclass
class HeldRequest:
    """A request of the agent redline has not answered yet: it waits for review."""

    action_id: str
    kind: Literal["write", "permission"]
    future: asyncio.Future[_Outcome]
    # A permission whose diff was verified: what stays queued once the agent is gone.
    leftover: PendingAction | None = None


@dataclass(frozen=True)
class Resolution:
    """A decision the agent has not heard about yet."""

    label: str
    decision: str
    reason: str
    action_id: str


@dataclass
class _Approval:
    """A person allowed this change of this tool call; the first matching fs write applies."""

    tool_call_id: str
    rel: str
    base_sha256: str | None
    content_sha256: str | None
    approved_text: str | None
    entry_id: str | None = None
    used: bool = False


@dataclass
class _ToolCall:
    title: str = ""
    kind: str = "other"
    raw_input: JsonValue = None
    status: str = "pending"


@dataclass(frozen=True)
class AcpSource:
    """Where an action came from; phase 2 moves this into the durable queue's record."""

    kind: str
    name: str
    session_id: str
    acp_session_id: str
    pid: int

    def to_dict(self) -> JsonObject:
        return {
            "kind": self.kind,
            "name": self.name,
            "session_id": self.session_id,
            "acp_session_id": self.acp_session_id,
            "pid": self.pid,
        }


def _option(options: list[schema.PermissionOption], *kinds: str) -> str | None:
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


_REJECT_WORDS = ("reject", "deny", "decline", "abort", "refuse", "no")


def reject_option(options: list[schema.PermissionOption]) -> str | None:
    """The option that says no for a person's discard: by kind (``reject_once``, then
    ``reject_always``), else any option that reads as a refusal and does not allow.
    codex-acp offers only ``abort`` ("No, provide feedback", kind ``reject_once``)."""
    chosen = _option(options, "reject_once", "reject_always")
    if chosen is not None:
        return chosen
    for option in options:
        if str(option.kind).startswith("allow"):
            continue
        words = f"{option.option_id} {option.name}".lower().replace(",", " ").split()
        if any(word in _REJECT_WORDS for word in words):
            return option.option_id
    return None


def rejected(report: list[Resolution]) -> bool:
    """Whether ``report`` (what the agent has not heard yet) holds a discard: then a turn
    the agent ends ``cancelled`` is its answer to the reject, not an abort (codex-acp)."""
    return any(item.decision.startswith("discard") for item in report)


def _answer(
    outcome: _Outcome, options: list[schema.PermissionOption]
) -> schema.RequestPermissionResponse:
    if outcome.decision == "apply":
        option = _option(options, "allow_once", "allow_always")
    elif outcome.decision == "discard":
        option = reject_option(options)
    else:
        option = None
    if option is None:
        return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
    return schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id=option)
    )


def _describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        import signal

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with status {returncode}"


def outcome_is_final(future: asyncio.Future[_Outcome]) -> bool:
    """Did a person decide (the action is done), rather than the agent ending?"""
    return (
        future.done()
        and not future.cancelled()
        and future.result().decision in ("apply", "discard")
    )


def resolution_prompt(resolutions: list[Resolution]) -> str:
    """The prompt that tells the agent what the reviewer decided (the outcome has no reason)."""
    lines = ["The reviewer resolved your pending requests:"]
    for item in resolutions:
        reason = item.reason.strip() or "no reason given"
        lines.append(f"- {item.label}: {item.decision}. Reason: {reason}")
    lines.append("Take these decisions into account and continue.")
    return "\n".join(lines)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("redline")
    except PackageNotFoundError:
        return "0"
