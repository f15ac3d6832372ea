"""The scripted agent speaks ACP as the ``agent-client-protocol`` package does.

The agent writes its JSON-RPC by hand (it imports neither the package nor pydantic, to start
fast); here every message it sends and every answer it gives is checked against the
package's schema: each validates, and dumps back to exactly what the agent wrote.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import schema
from pydantic import BaseModel
from tests.drivers.acp_client import scripted_agent

# What the agent sends the client, by method; and what it answers, by the client's method.
SENT: dict[str, type[BaseModel]] = {
    "session/update": schema.SessionNotification,
    "session/request_permission": schema.RequestPermissionRequest,
    "fs/read_text_file": schema.ReadTextFileRequest,
    "fs/write_text_file": schema.WriteTextFileRequest,
}
ANSWERED: dict[str, type[BaseModel]] = {
    "initialize": schema.InitializeResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/prompt": schema.PromptResponse,
}
# The client's answers to the agent's requests, as redline's client sends them.
REPLIES: dict[str, Any] = {
    "session/request_permission": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    "fs/read_text_file": {"content": "print('hi')\n"},
    "fs/write_text_file": {},
}


class Recording(scripted_agent.Connection):
    """The agent's connection with the client played here: messages are kept, not sent."""

    def __init__(self, agent: scripted_agent.ScriptedAgent) -> None:
        super().__init__(agent)
        self.sent: list[dict[str, Any]] = []

    def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if "id" in message and message.get("method") in REPLIES:
            self._calls.pop(message["id"]).answer({"result": REPLIES[message["method"]]})


def conforms(model: type[BaseModel], data: dict[str, Any]) -> None:
    parsed = model.model_validate(data)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == data


@pytest.mark.parametrize("offers_load", [False, True])
def test_every_message_the_agent_sends_fits_the_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offers_load: bool
) -> None:
    monkeypatch.setenv("SCRIPTED_AGENT_LOAD_SESSION", "1" if offers_load else "0")
    (tmp_path / "app.py").write_text("print('hi')\n")
    steps = [
        {"do": "text", "text": "hello"},
        {"do": "thought", "text": "hmm"},
        {"do": "plan", "entries": ["read", "edit"]},
        {"do": "fs_read", "path": "app.py"},
        {"do": "fs_read", "path": "app.py", "line": 1, "limit": 1},
        {"do": "fs_write", "path": "new.py", "content": "x = 1\n"},
        {"do": "gemini_edit", "path": "app.py", "content": "print('bye')\n"},
        {"do": "gemini_edit", "path": "fresh.py", "content": "y = 2\n"},
        {"do": "claude_edit", "path": "app.py", "old": "bye", "new": "ciao"},
        {"do": "shell", "command": "ls"},
    ]
    agent = scripted_agent.ScriptedAgent(steps, tmp_path / "record.jsonl")
    agent.conn = connection = Recording(agent)
    answers = {
        "initialize": agent.initialize(
            {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
        ),
        "session/new": agent.new_session({"cwd": str(tmp_path), "mcpServers": []}),
        "session/load": agent.load_session({"cwd": str(tmp_path), "sessionId": "scripted-1"}),
        "session/prompt": agent.prompt(
            {"sessionId": "scripted-1", "prompt": [{"type": "text", "text": "go"}]}
        ),
    }
    for method, answer in answers.items():
        conforms(ANSWERED[method], answer)
    assert answers["session/prompt"] == {"stopReason": "end_turn"}
    methods = [message["method"] for message in connection.sent]
    assert set(methods) == set(SENT)
    for message in connection.sent:
        conforms(SENT[message["method"]], message["params"])
    updates = {m["params"]["update"]["sessionUpdate"] for m in connection.sent if "id" not in m}
    assert updates == {
        "agent_message_chunk",
        "agent_thought_chunk",
        "plan",
        "tool_call",
        "tool_call_update",
    }


def test_an_unknown_session_to_load_is_invalid_params(tmp_path: Path) -> None:
    agent = scripted_agent.ScriptedAgent([], tmp_path / "record.jsonl")
    agent.conn = Recording(agent)
    with pytest.raises(scripted_agent.RequestError) as raised:
        agent.handle("session/load", {"cwd": str(tmp_path), "sessionId": "other"})
    assert raised.value.code == -32602
    with pytest.raises(scripted_agent.RequestError) as unknown:
        agent.handle("session/set_mode", {})
    assert unknown.value.code == -32601


class Held(scripted_agent.Connection):
    """The agent's connection with its requests kept unanswered (the test answers them)."""

    def __init__(self, agent: scripted_agent.ScriptedAgent) -> None:
        super().__init__(agent)
        self.asked = threading.Event()

    def _send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.asked.set()


def test_an_answer_is_recorded_by_the_thread_that_read_it(tmp_path: Path) -> None:
    """redline may close the agent's stdin right after answering a write (a stopped run),
    and the agent then exits at once: the answer is recorded as it is read, before the
    step that waits for it runs again (else the record could miss it: a flaky test)."""
    record = tmp_path / "record.jsonl"
    agent = scripted_agent.ScriptedAgent([], record)
    agent.conn = connection = Held(agent)
    wrote: list[bool] = []
    step = threading.Thread(target=lambda: wrote.append(agent.fs_write("app.py", "x\n")))
    step.start()
    try:
        assert connection.asked.wait(30)
        [call] = connection._calls.values()
        call.answer({"error": {"code": -32003, "message": "Not written: the agent was stopped."}})
        # Recorded already, whether or not the waiting step has run since.
        heard = [json.loads(line) for line in record.read_text().splitlines()]
        assert heard == [
            {
                "event": "write",
                "path": "app.py",
                "error": "Not written: the agent was stopped.",
                "code": -32003,
            }
        ]
    finally:
        step.join(30)
    assert wrote == [False]
