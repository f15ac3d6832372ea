"""Records one real example of every event type into ``fixtures/events.json``.

Run ``uv run python -m tests.drivers.model.record_events`` to refresh the fixture. It drives real
sessions through the public SDK only (no ``emit`` calls), so the recording is what
``redline exec --json`` and the session log show. ``test_events.py`` pins every event
class's ``to_dict()`` against these examples.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from redline.drivers.model.providers.base import (
    ModelRequest,
    ModelResponse,
    Provider,
    ProviderError,
    TextSink,
    ToolCall,
    Usage,
)
from redline.review.result import ToolResult
from redline.review.store import PendingAction
from redline.rules import Rule
from redline.sdk import create_agent_session
from redline.tools.base import Tool, ToolContext

FIXTURE = Path(__file__).parent / "fixtures" / "events.json"

GOOD_PLUGIN = """
from pydantic import BaseModel


class Params(BaseModel):
    text: str = ""


class Shout:
    name = "shout"
    label = "Shout"
    description = "Upper-case a text."
    parameters = Params

    def __init__(self, api):
        self.api = api

    def execute(self, tool_call_id, params):
        return params.text.upper()


def factory(api):
    print("shout is ready")
    return Shout(api)
"""


class Played(Provider):
    """Plays fixed replies (with token usage), then raises, so the run ends in an error."""

    label = "record:played"

    def __init__(self, replies: list[ModelResponse]) -> None:
        self.replies = list(replies)

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        if not self.replies:
            raise ProviderError("record: no more replies")
        response = self.replies.pop(0)
        if response.text:
            on_text(response.text)
        return response


class ProgressParams(BaseModel):
    steps: int = 1


class ProgressTool(Tool):
    name = "progress"
    description = "Report progress"
    parameters = ProgressParams

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, ProgressParams)
        for step in range(params.steps):
            ctx.update(f"step {step + 1} of {params.steps}")
        return ToolResult.text_result("progress reported")


def _call(call_id: str, name: str, **args: Any) -> ToolCall:
    return ToolCall(call_id, name, args, json.dumps(args))


def record() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "app.py").write_text("a = 1\n", encoding="utf-8")
        plugins = root / "plugins"
        plugins.mkdir()
        (plugins / "broken.py").write_text("def factory(api:\n", encoding="utf-8")
        usage = Usage(input_tokens=120, output_tokens=30)
        provider = Played(
            [
                ModelResponse(
                    text="Looking first.",
                    tool_calls=(
                        _call("c1", "read", path="app.py"),
                        _call("c2", "progress", steps=1),
                        _call("c3", "edit", path="app.py", old="a = 1", new="a = 2"),
                    ),
                    usage=usage,
                ),
                ModelResponse(
                    tool_calls=(_call("c4", "resolve", action="apply", reason="looks right"),),
                    usage=usage,
                ),
                ModelResponse(
                    tool_calls=(_call("c5", "write", path="notes.md", content="hello\n"),),
                ),
            ]
        )
        session = create_agent_session(
            root,
            provider,
            tool_paths=[plugins / "broken.py"],
            session_id="rec-session",
            clock=lambda: 1700000000.0,
            log_session=False,
        )
        session.add_tool(ProgressTool())
        session.subscribe(lambda event: events.append(event.to_dict()), replay=True)
        with session:
            session.prompt("Change a to 2")  # ends with the provider error
            # notes.md is pending now: stale, re-preview, refused, discarded.
            (root / "notes.md").write_text("someone else\n", encoding="utf-8")
            session.check_staleness()
            top = session.store.peek()
            assert top is not None
            session.resolve("apply", "try anyway")  # refused: stale -> failed notice
            session.repreview(top.id)
            (root / "notes.md").unlink()
            session.check_staleness()
            session.resolve("discard", "not needed")
            session.undo()  # the apply of app.py
            session.undo()  # nothing left: a plain notice
            (plugins / "good.py").write_text(GOOD_PLUGIN, encoding="utf-8")
            session.plugins.reload(plugins / "good.py")
            # A review rule resolves a pending action: by "rule", with the rule's name.
            assert session.rules is not None
            session.store.push(PendingAction("Note: draft", apply=lambda reason: "kept"))
            session.rules.add_session_rule(
                Rule(name="no-notes", decision="discard", reason="notes are kept by hand")
            )
            session.apply_rules()
    # The temporary folder's name changes every run; the fixture names a fixed one.
    text = json.dumps(events).replace(str(root), "/workspace")
    loaded: list[dict[str, Any]] = json.loads(text)
    return loaded


def examples(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every distinct key set per event type, first occurrence of each."""
    chosen: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        group = chosen.setdefault(event["type"], [])
        if all(set(e) != set(event) or e.get("failed") != event.get("failed") for e in group):
            group.append(event)
    return chosen


def main() -> int:
    chosen = examples(record())
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(chosen, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{FIXTURE}: {sum(len(v) for v in chosen.values())} examples of {len(chosen)} types")
    print(", ".join(sorted(chosen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
