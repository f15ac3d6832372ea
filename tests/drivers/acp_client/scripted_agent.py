"""A scripted ACP agent for tests, built on the same ``agent-client-protocol`` package.

Run as ``python scripted_agent.py SCRIPT.json RECORD.jsonl``. SCRIPT is a list of steps
done on the first prompt; every later prompt is answered with one line of text. Every
prompt, every answer redline gave and every cancel are appended to RECORD as JSON lines,
so a test can read what the agent heard.

Steps (``do``): ``text``, ``thought``, ``plan``, ``fs_read``, ``fs_write``,
``gemini_edit`` (permission with a whole-file diff, then fs/write_text_file),
``claude_edit`` (permission with a snippet diff, then the agent writes the file itself),
``shell`` (permission for a command, no diff), ``wait_cancel``, ``crash``,
``write_and_crash`` (dies while its write is held), ``mcp_call`` (starts the first MCP
server offered in session/new and calls ``tool`` with ``arguments``).

With ``SCRIPTED_AGENT_RESUMED=1`` (a resumed session) the agent counts the prompts RECORD
already holds, so the script is not done again: every prompt is answered with one line. With
``SCRIPTED_AGENT_LOAD_SESSION=1`` in its environment the agent offers ``loadSession``;
``session/load`` then replays one message and records the session id it was asked for.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp import schema

OPTIONS = [
    schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class ScriptedAgent:
    def __init__(self, steps: list[dict[str, Any]], record: Path) -> None:
        self.steps = steps
        self.record_path = record
        self.conn: Any = None
        self.cwd = Path(".")
        self.prompts = 0
        self.cancelled = asyncio.Event()
        self.calls = 0
        self.mcp_servers: list[Any] = []
        self.offers_load = os.environ.get("SCRIPTED_AGENT_LOAD_SESSION") == "1"
        if os.environ.get("SCRIPTED_AGENT_RESUMED") == "1" and record.exists():
            for line in record.read_text().splitlines():
                if json.loads(line).get("event") == "prompt":
                    self.prompts += 1

    def record(self, **data: Any) -> None:
        with self.record_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(data) + "\n")

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **kw: Any):
        fs = client_capabilities.fs if client_capabilities else None
        self.record(
            event="initialize",
            protocol_version=protocol_version,
            read=bool(fs and fs.read_text_file),
            write=bool(fs and fs.write_text_file),
        )
        return schema.InitializeResponse(
            protocol_version=1,
            agent_capabilities=schema.AgentCapabilities(load_session=self.offers_load),
            agent_info=schema.Implementation(name="scripted-agent", version="1.0"),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kw: Any):
        self.cwd = Path(cwd)
        self.mcp_servers = list(mcp_servers or [])
        servers = [
            server.model_dump(mode="json", by_alias=True, exclude_none=True)
            for server in (mcp_servers or [])
        ]
        self.record(event="new_session", cwd=cwd, mcp_servers=servers)
        return schema.NewSessionResponse(session_id="scripted-1")

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kw: Any
    ) -> schema.LoadSessionResponse:
        self.cwd = Path(cwd)
        self.mcp_servers = list(mcp_servers or [])
        self.record(event="load_session", cwd=cwd, session_id=session_id)
        if session_id != "scripted-1":
            raise acp.RequestError.invalid_params({"session_id": "no such session"})
        await self.say(session_id, "(replayed history)")
        return schema.LoadSessionResponse()

    async def cancel(self, session_id: str, **kw: Any) -> None:
        self.record(event="cancel")
        self.cancelled.set()

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any):
        text = "".join(getattr(block, "text", "") for block in prompt)
        self.prompts += 1
        self.record(event="prompt", text=text, n=self.prompts)
        if self.prompts > 1:
            await self.say(session_id, f"Noted ({self.prompts}).")
            return schema.PromptResponse(stop_reason="end_turn")
        for step in self.steps:
            if self.cancelled.is_set():
                return schema.PromptResponse(stop_reason="cancelled")
            stop = await self.do(session_id, step)
            if stop:
                return schema.PromptResponse(stop_reason=stop)
        return schema.PromptResponse(stop_reason="end_turn")

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, acp.update_agent_message_text(text))

    def abs(self, path: str) -> str:
        return path if os.path.isabs(path) else str(self.cwd / path)

    async def permission(self, sid: str, call_id: str, **tool: Any) -> str:
        try:
            answer = await self.conn.request_permission(
                session_id=sid,
                tool_call=schema.ToolCallUpdate(tool_call_id=call_id, **tool),
                options=OPTIONS,
            )
        except acp.RequestError as exc:
            self.record(event="permission", call=call_id, error=str(exc))
            return "error"
        outcome = answer.outcome
        chosen = getattr(outcome, "option_id", None) or outcome.outcome
        self.record(event="permission", call=call_id, outcome=chosen)
        return str(chosen)

    async def fs_write(self, sid: str, path: str, content: str) -> bool:
        try:
            await self.conn.write_text_file(session_id=sid, path=self.abs(path), content=content)
        except acp.RequestError as exc:
            self.record(event="write", path=path, error=str(exc), code=exc.code)
            return False
        self.record(event="write", path=path, ok=True)
        return True

    async def mcp_call(self, tool: str, arguments: dict[str, Any]) -> None:
        """Start the first MCP server offered in session/new, as an agent would, and call one tool.

        Only the offered environment is passed (the mcp package adds HOME, PATH and the
        like), so the call works only if redline offered everything its server needs.
        """
        from mcp import Client, StdioServerParameters
        from mcp.types import Implementation

        if not self.mcp_servers:
            self.record(event="mcp_call", tool=tool, error="no MCP server offered")
            return
        server = self.mcp_servers[0]
        params = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env={item.name: item.value for item in server.env},
        )
        async with Client(
            params,
            client_info=Implementation(name="scripted-agent", version="1.0"),
            read_timeout_seconds=60.0,
        ) as client:
            result = await client.call_tool(tool, arguments)
        text = "\n".join(getattr(item, "text", "") for item in result.content)
        self.record(event="mcp_call", tool=tool, error=bool(result.is_error), text=text)

    async def do(self, sid: str, step: dict[str, Any]) -> str | None:
        kind = step["do"]
        self.calls += 1
        call_id = f"call-{self.calls}"
        if kind == "text":
            await self.say(sid, step["text"])
        elif kind == "thought":
            await self.conn.session_update(sid, acp.update_agent_thought_text(step["text"]))
        elif kind == "plan":
            entries = [acp.plan_entry(e, status="pending") for e in step["entries"]]
            await self.conn.session_update(sid, acp.update_plan(entries))
        elif kind == "fs_read":
            try:
                answer = await self.conn.read_text_file(
                    session_id=sid,
                    path=self.abs(step["path"]),
                    line=step.get("line"),
                    limit=step.get("limit"),
                )
                self.record(event="read", path=step["path"], content=answer.content)
            except acp.RequestError as exc:
                self.record(event="read", path=step["path"], error=str(exc))
        elif kind == "fs_write":
            await self.fs_write(sid, step["path"], step["content"])
        elif kind == "gemini_edit":
            path = self.abs(step["path"])
            old = Path(path).read_text() if Path(path).exists() else None
            await self.conn.session_update(
                sid, acp.start_tool_call(call_id, f"Edit {step['path']}", kind="edit")
            )
            chosen = await self.permission(
                sid,
                call_id,
                title=f"Edit {step['path']}",
                kind="edit",
                content=[acp.tool_diff_content(path, step["content"], old)],
            )
            if chosen == "allow":
                await self.fs_write(sid, step["path"], step["content"])
            status = "completed" if chosen == "allow" else "failed"
            await self.conn.session_update(sid, acp.update_tool_call(call_id, status=status))
        elif kind == "claude_edit":
            path = self.abs(step["path"])
            await self.conn.session_update(
                sid, acp.start_tool_call(call_id, f"Edit {step['path']}", kind="edit")
            )
            chosen = await self.permission(
                sid,
                call_id,
                title=f"Edit {step['path']}",
                kind="edit",
                content=[acp.tool_diff_content(path, step["new"], step["old"])],
            )
            if chosen == "allow":
                text = Path(path).read_text()
                written = step.get("actually", step["new"])
                Path(path).write_text(text.replace(step["old"], written, 1))
                self.record(event="self_write", path=step["path"])
            status = "completed" if chosen == "allow" else "failed"
            await self.conn.session_update(sid, acp.update_tool_call(call_id, status=status))
        elif kind == "shell":
            await self.conn.session_update(
                sid,
                acp.start_tool_call(
                    call_id,
                    f"Run {step['command']}",
                    kind="execute",
                    raw_input={"command": step["command"]},
                ),
            )
            await self.permission(sid, call_id, title=f"Run {step['command']}", kind="execute")
        elif kind == "mcp_call":
            await self.mcp_call(step["tool"], step["arguments"])
        elif kind == "wait_cancel":
            await self.say(sid, "waiting")
            await self.cancelled.wait()
            return "cancelled"
        elif kind == "write_and_crash":
            pending = asyncio.ensure_future(self.fs_write(sid, step["path"], step["content"]))
            await asyncio.sleep(0.5)  # let the request reach the pipe
            self.record(event="crashing", answered=pending.done())
            os._exit(9)
        elif kind == "crash":
            os._exit(step.get("status", 3))
        return None

    async def authenticate(self, method_id: str, **kw: Any) -> None:
        return None


async def main() -> None:
    steps = json.loads(Path(sys.argv[1]).read_text())
    agent = ScriptedAgent(steps, Path(sys.argv[2]))
    print("scripted agent started", file=sys.stderr, flush=True)
    await acp.run_agent(agent)  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(main())
