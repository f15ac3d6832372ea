"""The scripted provider: a JSON plan plays the model. Offline, deterministic, no key.

A plan is ``{"name": ..., "steps": [...]}``; each step is one model turn:
``{"say": TEXT}``, ``{"call": [{"tool": NAME, "args": {...}}, ...]}``,
``{"resolve": "apply" | "discard", "reason": TEXT}`` or ``{"wait": SECONDS}`` (a pause
before the next turn, so people can watch). A ``say`` directly followed by a ``call``
is one turn (text, then the calls); a ``say`` on its own ends the run, like a model's
final answer.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

from redline.drivers.model.providers.base import (
    ForceTool,
    ModelRequest,
    ModelResponse,
    Provider,
    TextSink,
    ToolCall,
)
from redline.jsontypes import JsonObject

SCRIPTED_NOTE = "scripted run — calls no language model"
# Set to a number to scale every {"wait": ...} step (0 skips them; tests and CI use 0).
WAIT_SCALE_ENV = "REDLINE_SCRIPTED_WAIT_SCALE"


class PlanError(ValueError):
    """The plan file is missing or malformed; the message names the file and the step."""


@dataclass(frozen=True)
class Step:
    kind: str
    text: str = ""
    calls: tuple[tuple[str, JsonObject], ...] = ()
    action: str = ""
    seconds: float = 0.0


def _parse_step(index: int, raw: object, where: str) -> Step:
    if not isinstance(raw, dict) or len(raw.keys() - {"reason"}) != 1:
        raise PlanError(
            f"{where}: step {index + 1} must be an object with one of say, call, resolve, wait"
        )
    if "say" in raw:
        if not isinstance(raw["say"], str):
            raise PlanError(f"{where}: step {index + 1}: 'say' must be a string")
        return Step("say", text=raw["say"])
    if "call" in raw:
        calls = raw["call"]
        if not isinstance(calls, list) or not calls:
            raise PlanError(f"{where}: step {index + 1}: 'call' must be a non-empty list")
        parsed = []
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
                raise PlanError(f"{where}: step {index + 1}: each call needs a 'tool' name")
            args = call.get("args", {})
            if not isinstance(args, dict):
                raise PlanError(
                    f"{where}: step {index + 1}: 'args' of {call['tool']} must be an object"
                )
            parsed.append((call["tool"], args))
        return Step("call", calls=tuple(parsed))
    if "resolve" in raw:
        if raw["resolve"] not in ("apply", "discard"):
            raise PlanError(f"{where}: step {index + 1}: 'resolve' must be 'apply' or 'discard'")
        return Step("resolve", action=raw["resolve"], text=str(raw.get("reason", "")))
    if "wait" in raw:
        seconds = raw["wait"]
        if not isinstance(seconds, (int, float)) or seconds < 0:
            raise PlanError(f"{where}: step {index + 1}: 'wait' must be a number of seconds >= 0")
        return Step("wait", seconds=float(seconds))
    raise PlanError(f"{where}: step {index + 1}: unknown step {sorted(raw)!r}")


def load_plan(path: Path) -> tuple[str, list[Step]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"plan file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"plan file {path}: cannot read it: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"plan file {path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise PlanError(f'plan file {path}: expected {{"name": ..., "steps": [...]}}')
    name = str(data.get("name") or path.stem)
    return name, [_parse_step(i, step, f"plan file {path}") for i, step in enumerate(data["steps"])]


class ScriptedProvider(Provider):
    scripted = True
    can_force_tool = True

    def __init__(self, plan_path: Path, *, wait_scale: float | None = None) -> None:
        self.plan_path = plan_path
        self.name, self.steps = load_plan(plan_path)
        self.label = f"scripted:{self.name}"
        if wait_scale is None:
            env = os.environ.get(WAIT_SCALE_ENV)
            try:
                wait_scale = float(env) if env else 1.0
            except ValueError:
                wait_scale = 1.0
        self.wait_scale = wait_scale
        self._next = 0
        self._calls = 0

    def _call_id(self) -> str:
        self._calls += 1
        return f"call-{self._calls}"

    async def _say(self, text: str, on_text: TextSink) -> None:
        # Stream word by word, as a real model would, so the activity log fills live.
        pieces = text.split(" ")
        for index, piece in enumerate(pieces):
            on_text(piece if index == len(pieces) - 1 else piece + " ")
            await asyncio.sleep(0)

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        offered = {tool.name for tool in request.tools}
        forced = (
            isinstance(request.tool_choice, ForceTool) and request.tool_choice.name == "resolve"
        )
        while self._next < len(self.steps):
            step = self.steps[self._next]
            if step.kind == "wait":
                self._next += 1
                if self.wait_scale > 0 and step.seconds > 0:
                    await asyncio.sleep(step.seconds * self.wait_scale)
                continue
            if step.kind == "resolve" and "resolve" not in offered:
                self._next += 1  # a person resolves under the human resolver
                continue
            if forced and step.kind != "resolve":
                return self._resolve_response("apply", "scripted plan")
            self._next += 1
            if step.kind == "say":
                await self._say(step.text, on_text)
                # Text followed directly by calls is one turn, as a real model would send it;
                # text alone ends the run.
                follow = self.steps[self._next] if self._next < len(self.steps) else None
                if follow is not None and follow.kind == "call":
                    self._next += 1
                    return ModelResponse(
                        text=step.text, tool_calls=self._calls_of(follow), stop_reason="tool_calls"
                    )
                return ModelResponse(text=step.text, stop_reason="stop")
            if step.kind == "resolve":
                return self._resolve_response(step.action, step.text or "scripted plan")
            return ModelResponse(tool_calls=self._calls_of(step), stop_reason="tool_calls")
        if forced:
            return self._resolve_response("apply", "scripted plan")
        return ModelResponse(text="", stop_reason="end_of_plan")

    def _calls_of(self, step: Step) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(self._call_id(), name, dict(args), json.dumps(args))
            for name, args in step.calls
        )

    def _resolve_response(self, action: str, reason: str) -> ModelResponse:
        args: JsonObject = {"action": action, "reason": reason}
        call = ToolCall(self._call_id(), "resolve", args, json.dumps(args))
        return ModelResponse(tool_calls=(call,), stop_reason="tool_calls")
