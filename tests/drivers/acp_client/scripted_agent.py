"""A scripted ACP agent for tests: JSON-RPC 2.0 over stdio with the standard library alone.

Run as ``python scripted_agent.py SCRIPT.json RECORD.jsonl``. SCRIPT is a list of steps
done on the first prompt; every later prompt is answered with one line of text. Every
prompt, every answer redline gave and every cancel are appended to RECORD as JSON lines,
so a test can read what the agent heard.

It speaks ACP as the ``agent-client-protocol`` package does (newline-delimited JSON, the
same method names and camelCase fields; tests/drivers/acp_client/test_scripted_agent.py
checks every message shape against that package's schema), but imports neither it nor
pydantic: a test starts one of these per redline run, and importing the package's schema
costs about half a second of CPU each time.

Steps (``do``): ``text``, ``thought``, ``plan``, ``fs_read``, ``fs_write``,
``gemini_edit`` (permission with a whole-file diff, then fs/write_text_file),
``claude_edit`` (permission with a snippet diff, then the agent writes the file itself),
``shell`` (permission for a command, no diff), ``wait_file`` (goes on once ``path``
exists), ``wait_cancel``, ``crash``,
``write_and_crash`` (dies while its write is held), ``mcp_call`` (starts the first MCP
server offered in session/new and calls ``tool`` with ``arguments``), ``raw`` (writes
``line`` to stdout as it is: a hostile agent's malformed message), ``request`` (sends
``method`` with ``params`` and records the answer: ``result`` or the error's ``code``).

With ``SCRIPTED_AGENT_RESUMED=1`` (a resumed session) the agent counts the prompts RECORD
already holds, so the script is not done again: every prompt is answered with one line. With
``SCRIPTED_AGENT_LOAD_SESSION=1`` in its environment the agent offers ``loadSession``;
``session/load`` then replays one message and records the session id it was asked for.
With ``SCRIPTED_AGENT_MODEL=NAME`` session/new names NAME as its current model (a
``model`` config option).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

SESSION_ID = "scripted-1"
OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
#: codex-acp's options for a patch: the only way to say no is ``abort``.
CODEX_OPTIONS = [
    {"optionId": "approved", "name": "Yes", "kind": "allow_once"},
    {"optionId": "abort", "name": "No, provide feedback", "kind": "reject_once"},
]
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603


class RequestError(Exception):
    """A JSON-RPC error: one the client answered with, or one this agent answers with."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class Call:
    """A request this agent sent to the client; ``result()`` blocks until it is answered.

    ``heard``: records the answer on the reading thread, as it arrives -- before the thread
    waiting in ``result()`` runs again: when the client closes stdin right after its
    answer, the agent exits at once and that thread might never run."""

    def __init__(self, heard: Callable[[Any, RequestError | None], None] | None = None) -> None:
        self._answered = threading.Event()
        self._message: dict[str, Any] = {}
        self._heard = heard

    def answer(self, message: dict[str, Any]) -> None:
        self._message = message
        if self._heard is not None:
            error = self._error()
            self._heard(None if error is not None else message.get("result"), error)
        self._answered.set()

    def done(self) -> bool:
        return self._answered.is_set()

    def _error(self) -> RequestError | None:
        error = self._message.get("error")
        if error is None:
            return None
        return RequestError(int(error.get("code", 0)), str(error.get("message", "")))

    def result(self) -> Any:
        self._answered.wait()
        error = self._error()
        if error is not None:
            raise error
        return self._message.get("result")


class Connection:
    """Newline-delimited JSON-RPC on this process's stdin and stdout.

    The reading thread answers the client's requests (``session/prompt`` on a thread of its
    own, so that the answers to the prompt's own requests and a ``session/cancel`` still get
    through) and hands each answer to the :class:`Call` waiting for it.
    """

    def __init__(self, agent: ScriptedAgent) -> None:
        self.agent = agent
        self._write_lock = threading.Lock()
        self._calls: dict[int, Call] = {}
        self._next_id = 0

    def _send(self, message: dict[str, Any]) -> None:
        data = (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode("utf-8")
        with self._write_lock:
            view = memoryview(data)
            while view:  # in the pipe when this returns
                view = view[os.write(1, view) :]

    def send_raw(self, line: str) -> None:
        """One line exactly as given (a malformed message, for hostile-agent tests)."""
        data = (line + "\n").encode("utf-8", "surrogateescape")
        with self._write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(1, view) :]

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"method": method, "params": params})

    def start(
        self,
        method: str,
        params: dict[str, Any],
        heard: Callable[[Any, RequestError | None], None] | None = None,
    ) -> Call:
        """Send a request; its :class:`Call` is answered when the client replies."""
        call = Call(heard)
        with self._write_lock:
            request_id = self._next_id
            self._next_id += 1
            self._calls[request_id] = call
        self._send({"id": request_id, "method": method, "params": params})
        return call

    def request(
        self,
        method: str,
        params: dict[str, Any],
        heard: Callable[[Any, RequestError | None], None] | None = None,
    ) -> Any:
        return self.start(method, params, heard).result()

    def session_update(self, update: dict[str, Any]) -> None:
        self.notify("session/update", {"sessionId": SESSION_ID, "update": update})

    def serve(self) -> None:
        for line in sys.stdin.buffer:
            if not line.strip():
                continue
            message = json.loads(line)
            if not isinstance(message, dict):
                continue
            method = message.get("method")
            if method is None:
                with self._write_lock:
                    call = self._calls.pop(message.get("id"), None)  # type: ignore[arg-type]
                if call is not None:
                    call.answer(message)
                else:  # an answer to nothing this agent asked (a malformed line it sent)
                    self.agent.record(event="stray_answer", message=message)
            elif "id" not in message:
                self.agent.notification(method, message.get("params") or {})
            elif method == "session/prompt":
                threading.Thread(target=self._answer, args=(message,), daemon=True).start()
            else:
                self._answer(message)
        # The client closed our stdin: it has ended the session.
        os._exit(0)

    def _answer(self, message: dict[str, Any]) -> None:
        try:
            result = self.agent.handle(message["method"], message.get("params") or {})
        except RequestError as exc:
            error = {"code": exc.code, "message": str(exc), "data": exc.data}
            self._send({"id": message["id"], "error": error})
        except Exception as exc:  # a bug in a step: answered, never a hang
            error = {"code": INTERNAL_ERROR, "message": "Internal error", "data": repr(exc)}
            self._send({"id": message["id"], "error": error})
            raise
        else:
            self._send({"id": message["id"], "result": result})


def chosen_of(answer: Any) -> Any:
    """The option a permission's answer chose (or its outcome, ``cancelled``)."""
    outcome = answer["outcome"]
    return outcome.get("optionId") or outcome["outcome"]


def text_update(kind: str, text: str) -> dict[str, Any]:
    return {"content": {"text": text, "type": "text"}, "sessionUpdate": kind}


def tool_call(call_id: str, title: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "toolCallId": call_id,
        "title": title,
        "kind": kind,
        **extra,
        "sessionUpdate": "tool_call",
    }


def tool_call_update(call_id: str, status: str) -> dict[str, Any]:
    return {"toolCallId": call_id, "status": status, "sessionUpdate": "tool_call_update"}


def diff(path: str, new: str, old: str | None) -> dict[str, Any]:
    content: dict[str, Any] = {"path": path}
    if old is not None:
        content["oldText"] = old
    content.update(newText=new, type="diff")
    return content


class ScriptedAgent:
    def __init__(self, steps: list[dict[str, Any]], record: Path) -> None:
        self.steps = steps
        self.record_path = record
        self.conn = Connection(self)
        self.cwd = Path(".")
        self.prompts = 0
        self.cancelled = threading.Event()
        self.calls = 0
        self.mcp_servers: list[dict[str, Any]] = []
        self.offers_load = os.environ.get("SCRIPTED_AGENT_LOAD_SESSION") == "1"
        self._record_lock = threading.Lock()
        if os.environ.get("SCRIPTED_AGENT_RESUMED") == "1" and record.exists():
            for line in record.read_text().splitlines():
                if json.loads(line).get("event") == "prompt":
                    self.prompts += 1
        self.methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "initialize": self.initialize,
            "authenticate": lambda _params: {},
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/prompt": self.prompt,
        }

    def record(self, **data: Any) -> None:
        with self._record_lock, self.record_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(data) + "\n")

    # -- the client's requests and notifications ------------------------------------------
    def handle(self, method: str, params: dict[str, Any]) -> Any:
        answer = self.methods.get(method)
        if answer is None:
            raise RequestError(METHOD_NOT_FOUND, "Method not found", {"method": method})
        return answer(params)

    def notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/cancel":
            self.record(event="cancel")
            self.cancelled.set()

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        fs = (params.get("clientCapabilities") or {}).get("fs") or {}
        self.record(
            event="initialize",
            protocol_version=params.get("protocolVersion"),
            read=bool(fs.get("readTextFile")),
            write=bool(fs.get("writeTextFile")),
        )
        return {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": self.offers_load},
            "agentInfo": {"name": "scripted-agent", "version": "1.0"},
        }

    def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self.cwd = Path(params["cwd"])
        self.mcp_servers = list(params.get("mcpServers") or [])
        self.record(event="new_session", cwd=params["cwd"], mcp_servers=self.mcp_servers)
        model = os.environ.get("SCRIPTED_AGENT_MODEL")
        if model:  # the agent's current model, as a "model" config option
            option = {"value": model, "name": model}
            return {
                "sessionId": SESSION_ID,
                "configOptions": [
                    {
                        "type": "select",
                        "id": "model",
                        "name": "Model",
                        "category": "model",
                        "currentValue": model,
                        "options": [option],
                    }
                ],
            }
        return {"sessionId": SESSION_ID}

    def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self.cwd = Path(params["cwd"])
        self.mcp_servers = list(params.get("mcpServers") or [])
        session_id = params.get("sessionId")
        self.record(event="load_session", cwd=params["cwd"], session_id=session_id)
        if session_id != SESSION_ID:
            raise RequestError(INVALID_PARAMS, "Invalid params", {"session_id": "no such session"})
        self.say("(replayed history)")
        return {}

    def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        text = "".join(block.get("text", "") for block in params.get("prompt") or [])
        self.prompts += 1
        self.record(event="prompt", text=text, n=self.prompts)
        if self.prompts > 1:
            self.say(f"Noted ({self.prompts}).")
            return {"stopReason": "end_turn"}
        for step in self.steps:
            if self.cancelled.is_set():
                return {"stopReason": "cancelled"}
            stop = self.do(step)
            if stop:
                return {"stopReason": stop}
        return {"stopReason": "end_turn"}

    # -- what the steps do ----------------------------------------------------------------
    def say(self, text: str) -> None:
        self.conn.session_update(text_update("agent_message_chunk", text))

    def abs(self, path: str) -> str:
        return path if os.path.isabs(path) else str(self.cwd / path)

    def permission(
        self, call_id: str, options: list[dict[str, str]] | None = None, **tool: Any
    ) -> str:
        params = {"sessionId": SESSION_ID, "toolCall": {"toolCallId": call_id, **tool}}
        offered = {**params, "options": options or OPTIONS}

        def heard(answer: Any, error: RequestError | None) -> None:
            if error is not None:
                self.record(event="permission", call=call_id, error=str(error))
            else:
                self.record(event="permission", call=call_id, outcome=chosen_of(answer))

        try:
            answer = self.conn.request("session/request_permission", offered, heard)
        except RequestError:
            return "error"
        return str(chosen_of(answer))

    def write_params(self, path: str, content: str) -> dict[str, Any]:
        return {"sessionId": SESSION_ID, "path": self.abs(path), "content": content}

    def fs_write(self, path: str, content: str) -> bool:
        def heard(_answer: Any, error: RequestError | None) -> None:
            if error is not None:
                self.record(event="write", path=path, error=str(error), code=error.code)
            else:
                self.record(event="write", path=path, ok=True)

        try:
            self.conn.request("fs/write_text_file", self.write_params(path, content), heard)
        except RequestError:
            return False
        return True

    def fs_read(self, step: dict[str, Any]) -> None:
        params: dict[str, Any] = {"sessionId": SESSION_ID, "path": self.abs(step["path"])}
        for key in ("line", "limit"):
            if step.get(key) is not None:
                params[key] = step[key]
        try:
            answer = self.conn.request("fs/read_text_file", params)
            self.record(event="read", path=step["path"], content=answer["content"])
        except RequestError as exc:
            self.record(event="read", path=step["path"], error=str(exc))

    def mcp_call(self, tool: str, arguments: dict[str, Any]) -> None:
        """Start the first MCP server offered in session/new, as an agent would, and call one tool.

        Only the offered environment is passed (the mcp package adds HOME, PATH and the
        like), so the call works only if redline offered everything its server needs.
        """
        import asyncio

        from mcp import Client, StdioServerParameters
        from mcp.types import Implementation

        if not self.mcp_servers:
            self.record(event="mcp_call", tool=tool, error="no MCP server offered")
            return
        server = self.mcp_servers[0]
        params = StdioServerParameters(
            command=server["command"],
            args=list(server.get("args") or []),
            env={item["name"]: item["value"] for item in server.get("env") or []},
        )

        async def call() -> Any:
            async with Client(
                params,
                client_info=Implementation(name="scripted-agent", version="1.0"),
                read_timeout_seconds=60.0,
            ) as client:
                return await client.call_tool(tool, arguments)

        result = asyncio.run(call())
        text = "\n".join(getattr(item, "text", "") for item in result.content)
        self.record(event="mcp_call", tool=tool, error=bool(result.is_error), text=text)

    def do(self, step: dict[str, Any]) -> str | None:
        kind = step["do"]
        self.calls += 1
        call_id = f"call-{self.calls}"
        update = self.conn.session_update
        if kind == "text":
            self.say(step["text"])
        elif kind == "thought":
            update(text_update("agent_thought_chunk", step["text"]))
        elif kind == "plan":
            entries = [
                {"content": e, "priority": "medium", "status": "pending"} for e in step["entries"]
            ]
            update({"entries": entries, "sessionUpdate": "plan"})
        elif kind == "fs_read":
            self.fs_read(step)
        elif kind == "fs_write":
            self.fs_write(step["path"], step["content"])
        elif kind == "gemini_edit":
            path = self.abs(step["path"])
            old = Path(path).read_text() if Path(path).exists() else None
            update(tool_call(call_id, f"Edit {step['path']}", "edit"))
            chosen = self.permission(
                call_id,
                kind="edit",
                title=f"Edit {step['path']}",
                content=[diff(path, step["content"], old)],
            )
            if chosen == "allow":
                self.fs_write(step["path"], step["content"])
            update(tool_call_update(call_id, "completed" if chosen == "allow" else "failed"))
        elif kind == "claude_edit":
            path = self.abs(step["path"])
            update(tool_call(call_id, f"Edit {step['path']}", "edit"))
            chosen = self.permission(
                call_id,
                kind="edit",
                title=f"Edit {step['path']}",
                content=[diff(path, step["new"], step["old"])],
            )
            if chosen == "allow":
                text = Path(path).read_text()
                written = step.get("actually", step["new"])
                Path(path).write_text(text.replace(step["old"], written, 1))
                self.record(event="self_write", path=step["path"])
            update(tool_call_update(call_id, "completed" if chosen == "allow" else "failed"))
        elif kind == "codex_edit":
            # codex-acp 0.16: "Yes" or "abort" (No, provide feedback); abort ends the turn
            # with stop reason `cancelled`, Codex's ReviewDecision::Abort.
            path = self.abs(step["path"])
            old = Path(path).read_text() if Path(path).exists() else None
            update(tool_call(call_id, f"Edit {step['path']}", "edit"))
            chosen = self.permission(
                call_id,
                CODEX_OPTIONS,
                kind="edit",
                title=f"Edit {step['path']}",
                content=[diff(path, step["content"], old)],
            )
            if chosen == "approved":
                Path(path).write_text(step["content"])
                self.record(event="self_write", path=step["path"])
            update(tool_call_update(call_id, "completed" if chosen == "approved" else "failed"))
            if chosen == "abort":
                return "cancelled"
        elif kind == "shell":
            title = f"Run {step['command']}"
            update(tool_call(call_id, title, "execute", rawInput={"command": step["command"]}))
            self.permission(call_id, kind="execute", title=title)
        elif kind == "mcp_call":
            self.mcp_call(step["tool"], step["arguments"])
        elif kind == "raw":
            self.conn.send_raw(step["line"])
        elif kind == "request":
            try:
                answer = self.conn.request(step["method"], step.get("params") or {})
            except RequestError as exc:
                self.record(event="request", method=step["method"], code=exc.code, error=str(exc))
            else:
                self.record(event="request", method=step["method"], result=answer)
        elif kind == "wait_file":
            # Its turn stays open (no request held) until the test creates ``path``.
            gate = Path(step["path"])
            while not gate.exists() and not self.cancelled.wait(0.01):
                pass
        elif kind == "wait_cancel":
            self.say("waiting")
            self.cancelled.wait()
            return "cancelled"
        elif kind == "write_and_crash":
            pending = self.conn.start(
                "fs/write_text_file", self.write_params(step["path"], step["content"])
            )
            # A barrier, not a pause: the client handles requests in the order they come, so
            # once it has answered this read it has taken the write above (and holds it).
            self.conn.request(
                "fs/read_text_file", {"sessionId": SESSION_ID, "path": self.abs(step["path"])}
            )
            self.record(event="crashing", answered=pending.done())
            os._exit(9)
        elif kind == "crash":
            os._exit(step.get("status", 3))
        return None


def main() -> None:
    steps = json.loads(Path(sys.argv[1]).read_text())
    agent = ScriptedAgent(steps, Path(sys.argv[2]))
    print("scripted agent started", file=sys.stderr, flush=True)
    agent.conn.serve()


if __name__ == "__main__":
    main()
