"""A screen between an agent's stdout and the ACP library: only well-formed messages pass.

The ``agent-client-protocol`` library reads newline-delimited JSON-RPC from the agent. A
line that is not JSON makes it log a traceback; one that is JSON but not an object
(``[1,2,3]``), or an answer whose id cannot be a key (``"id": [1]``), or an error that is
not an object, ends its receive loop, and with it the agent's turn. An agent is untrusted,
so every line goes through :func:`screen` first, in :class:`ScreenedStdout`, a reader the
library reads instead of the process's stdout:

* a well-formed message passes unchanged;
* a request with a usable id but a malformed shape is answered with a JSON-RPC
  ``Invalid Request`` error, as JSON-RPC 2.0 asks;
* an answer whose ``error`` is malformed passes with a well-formed error in its place, so
  the request waiting for it fails with a clear message instead of waiting forever;
* anything else is logged in one line and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import acp

    from redline.jsontypes import JsonObject, JsonValue

log = logging.getLogger(__name__)

INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
# Longest line passed on; a longer one is skipped (and logged) without being kept in memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
_SHOWN = 80


@dataclass(frozen=True)
class Screened:
    """What to do with one line: pass ``forward`` on, answer ``reply``, log ``problem``."""

    forward: bytes | None = None
    reply: JsonObject | None = None
    problem: str = ""


def _shown(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    text = text.replace("\x00", "\\0").replace("\r", "\\r")
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _usable_id(value: object) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _invalid(message_id: JsonValue, why: str) -> Screened:
    reply: JsonObject = {
        "jsonrpc": "2.0",
        "id": message_id,
        "error": {"code": INVALID_REQUEST, "message": f"Invalid Request: {why}"},
    }
    return Screened(reply=reply, problem=why)


def screen(line: bytes) -> Screened:
    """The verdict on one line the agent wrote (without its newline)."""
    stripped = line.strip()
    if not stripped:
        return Screened()
    try:
        message = json.loads(stripped)
    except (ValueError, RecursionError):
        return Screened(problem=f"not JSON: {_shown(stripped)}")
    if not isinstance(message, dict):
        return Screened(problem=f"{_type_name(message)}, not a JSON-RPC object")
    has_id = "id" in message
    message_id = message.get("id")
    if has_id and not _usable_id(message_id):
        return Screened(problem=f"its id is {_type_name(message_id)}")
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            why = f"method is {_type_name(method)}, not a string"
            return _invalid(message_id, why) if has_id else Screened(problem=why)
        params = message.get("params")
        if "params" in message and not isinstance(params, (dict, list)):
            why = f"params of {method} are {_type_name(params)}, not an object"
            return _invalid(message_id, why) if has_id else Screened(problem=why)
        if not has_id:
            # A notification gets no answer; the library would log a traceback for one
            # it cannot route or whose params do not validate, so those stop here.
            problem = _notification_problem(method, params)
            if problem:
                return Screened(problem=problem)
        return Screened(forward=stripped)
    if not has_id:
        return Screened(problem="neither a request, a notification nor an answer")
    if "error" in message and not _well_formed_error(message["error"]):
        fixed = dict(message)
        fixed.pop("result", None)
        fixed["error"] = {
            "code": INTERNAL_ERROR,
            "message": f"the agent answered with a malformed error: {_shown(stripped)}",
        }
        return Screened(
            forward=json.dumps(fixed).encode("utf-8"),
            problem=f"answer {message_id!r} has a malformed error",
        )
    return Screened(forward=stripped)


def _notification_problem(method: str, params: object) -> str:
    """Why a notification cannot be handled ("" when it can): only ``session/update`` and
    extension notifications (``_name``) are routed to redline's client."""
    if method.startswith("_"):
        return ""
    if method != "session/update":
        return f"unknown notification {_shown(method.encode('utf-8', 'replace'))}"
    from acp import schema
    from pydantic import ValidationError

    try:
        schema.SessionNotification.model_validate(params)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "params"
        return f"session/update with invalid params ({where}: {first.get('msg', 'invalid')})"
    return ""


def _well_formed_error(error: object) -> bool:
    if not isinstance(error, Mapping):
        return False
    code = error.get("code")
    return (
        isinstance(code, int)
        and not isinstance(code, bool)
        and isinstance(error.get("message", ""), str)
    )


class ScreenedStdout:
    """The agent's stdout as the library sees it: :meth:`pump` screens every line."""

    def __init__(
        self, source: asyncio.StreamReader, answer: asyncio.StreamWriter, agent: str
    ) -> None:
        self.source = source
        self.answer = answer
        self.agent = agent
        self.reader = asyncio.StreamReader()
        self.skipped = 0

    async def _line(self) -> bytes | None:
        """The next line (None at the end); an over-long one is skipped, never kept."""
        chunks: list[bytes] = []
        size = 0
        too_long = False
        while True:
            try:
                piece = await self.source.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                piece = await self.source.readexactly(exc.consumed)
                done = False
            except asyncio.IncompleteReadError as exc:
                piece, done = exc.partial, True
                if not piece and not chunks:
                    return None
            else:
                done = True
            size += len(piece)
            if size > MAX_LINE_BYTES:
                too_long = True
                chunks.clear()
            elif not too_long:
                chunks.append(piece)
            if done:
                break
        if too_long:
            self._skip(f"a line over {MAX_LINE_BYTES} bytes")
            return b""
        return b"".join(chunks)

    def _skip(self, problem: str) -> None:
        self.skipped += 1
        log.warning("%s: skipped a malformed message from the agent (%s)", self.agent, problem)

    async def pump(self) -> None:
        try:
            while True:
                line = await self._line()
                if line is None:
                    break
                verdict = screen(line)
                if verdict.reply is not None:
                    self._skip(f"{verdict.problem}; answered Invalid Request")
                    self.answer.write(json.dumps(verdict.reply).encode("utf-8") + b"\n")
                    with contextlib.suppress(ConnectionError):
                        await self.answer.drain()
                elif verdict.problem:
                    self._skip(verdict.problem)
                if verdict.forward is not None:
                    self.reader.feed_data(verdict.forward + b"\n")
        except (ConnectionError, OSError) as exc:
            log.warning("%s: reading the agent's output failed: %s", self.agent, exc)
        finally:
            self.reader.feed_eof()


@contextlib.asynccontextmanager
async def spawn_screened_agent(
    client: acp.Client,
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    shutdown_timeout: float = 2.0,
    name: str = "agent",
) -> AsyncIterator[tuple[acp.ClientSideConnection, asyncio.subprocess.Process]]:
    """``acp.spawn_agent_process`` with :class:`ScreenedStdout` between the process and the
    library: the same process handling and shutdown (the library's
    ``spawn_stdio_transport``), the same connection (``acp.connect_to_agent``)."""
    import acp

    async with acp.spawn_stdio_transport(
        command, *args, env=env, cwd=cwd, shutdown_timeout=shutdown_timeout
    ) as (stdout, stdin, process):
        screened = ScreenedStdout(stdout, stdin, name)
        pump = asyncio.create_task(screened.pump(), name="redline.acp.screen")
        conn = acp.connect_to_agent(client, stdin, screened.reader)
        try:
            yield conn, process
        finally:
            try:
                await conn.close()
            finally:
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump
