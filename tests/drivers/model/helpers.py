"""Small providers and tools for driving AgentSession in tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from redline.drivers.model.providers.base import (
    ModelRequest,
    ModelResponse,
    Provider,
    TextSink,
    ToolCall,
)
from redline.drivers.model.session import AgentSession, Resolver
from redline.review.events import Event, EventStream
from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.tools.base import PREVIEW_BANNER, Tool, ToolContext

Reply = Callable[[ModelRequest], ModelResponse] | ModelResponse


def call(name: str, call_id: str = "c1", **args: Any) -> ToolCall:
    return ToolCall(call_id, name, args, json.dumps(args))


def reply(*calls: ToolCall, text: str = "") -> ModelResponse:
    return ModelResponse(text=text, tool_calls=tuple(calls))


class ProgrammableProvider(Provider):
    """Answers from a list of replies and records every request."""

    label = "test:programmable"

    def __init__(self, replies: list[Reply], *, can_force_tool: bool = True) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []
        self.can_force_tool = can_force_tool

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        self.requests.append(request)
        if not self.replies:
            return ModelResponse(text="done")
        item = self.replies.pop(0)
        response = item(request) if callable(item) else item
        if response.text:
            on_text(response.text)
        return response


class NoteParams(BaseModel):
    text: str


class PreviewNoteTool(Tool):
    """A deferrable tool: each call pushes an action that records its reason when applied."""

    name = "note"
    label = "Note"
    description = "Queue a note"
    parameters = NoteParams
    deferrable = True

    def __init__(self) -> None:
        self.applied: list[tuple[str, str]] = []
        self.discarded: list[tuple[str, str]] = []

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, NoteParams) and ctx.store is not None
        text = params.text

        def apply(reason: str) -> str:
            self.applied.append((text, reason))
            return f"Noted {text}."

        def reject(reason: str) -> None:
            self.discarded.append((text, reason))

        action = ctx.store.push(
            PendingAction(
                label=f"Note: {text}", apply=apply, reject=reject, source_tool_name="note"
            )
        )
        return ToolResult.text_result(f"{PREVIEW_BANNER}\nQueued {action.id}.")


class EchoParams(BaseModel):
    value: str = ""


class EchoTool(Tool):
    name = "echo"
    description = "Echo"
    parameters = EchoParams

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, EchoParams)
        self.calls.append(params.value)
        return ToolResult.text_result(f"echo {params.value}")


class SlowProvider(Provider):
    label = "test:slow"

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        on_text("thinking")
        # Far longer than any hang guard: only abort() ends it in a test.
        await asyncio.sleep(600)
        return ModelResponse(text="late")


def make_session(
    tmp_path: Path,
    provider: Provider,
    *,
    resolver: Resolver = "agent",
    tools: list[Tool] | None = None,
    max_turns: int = 50,
) -> tuple[AgentSession, list[Event]]:
    events: list[Event] = []
    stream = EventStream("test-session", clock=lambda: 0.0)
    stream.subscribe(events.append)
    session = AgentSession(
        cwd=tmp_path,
        provider=provider,
        tools=tools if tools is not None else [PreviewNoteTool(), EchoTool()],
        resolver=resolver,
        stream=stream,
        max_turns=max_turns,
    )
    return session, events


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


E = TypeVar("E", bound=Event)


def of_type(events: list[Event], kind: type[E]) -> list[E]:
    """The events of one class, typed (so a test reading a wrong field fails mypy)."""
    return [e for e in events if isinstance(e, kind)]
