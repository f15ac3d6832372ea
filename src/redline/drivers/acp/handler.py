"""The ``acp.Client`` an agent talks to: each of its requests handed to :class:`AcpAgent`."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn, Protocol

import acp
from acp import schema

if TYPE_CHECKING:
    from redline.drivers.acp.events import SessionUpdate
    from redline.jsontypes import JsonObject


class AgentOwner(Protocol):
    """What :class:`AgentRequests` hands the agent's requests to (``AcpAgent``)."""

    def _on_update(self, update: SessionUpdate) -> None: ...

    def _read(
        self, path: str, line: int | None, limit: int | None
    ) -> schema.ReadTextFileResponse: ...

    async def _write(self, path: str, content: str) -> schema.WriteTextFileResponse | None: ...

    async def _permission(
        self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]
    ) -> schema.RequestPermissionResponse: ...


class AgentRequests:
    """The ``acp.Client`` the agent talks to; every method runs on the agent's loop."""

    def __init__(self, owner: AgentOwner) -> None:
        self.owner = owner

    def on_connect(self, conn: acp.Agent) -> None:
        pass

    async def session_update(
        self, session_id: str, update: SessionUpdate, **kwargs: object
    ) -> None:
        self.owner._on_update(update)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: object,
    ) -> schema.ReadTextFileResponse:
        return self.owner._read(path, line, limit)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: object
    ) -> schema.WriteTextFileResponse | None:
        return await self.owner._write(path, content)

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: object,
    ) -> schema.RequestPermissionResponse:
        return await self.owner._permission(tool_call, options)

    async def ext_method(self, method: str, params: JsonObject) -> JsonObject:
        raise acp.RequestError.method_not_found(method)

    # redline offers no terminal (``terminal=False`` in initialize); without these the
    # library would answer ``terminal/create`` and ``terminal/output`` with a null result,
    # a success, instead of "method not found".
    async def create_terminal(self, *args: object, **kwargs: object) -> NoReturn:
        raise acp.RequestError.method_not_found("terminal/create")

    async def terminal_output(self, *args: object, **kwargs: object) -> NoReturn:
        raise acp.RequestError.method_not_found("terminal/output")

    async def release_terminal(self, *args: object, **kwargs: object) -> NoReturn:
        raise acp.RequestError.method_not_found("terminal/release")

    async def wait_for_terminal_exit(self, *args: object, **kwargs: object) -> NoReturn:
        raise acp.RequestError.method_not_found("terminal/wait_for_exit")

    async def kill_terminal(self, *args: object, **kwargs: object) -> NoReturn:
        raise acp.RequestError.method_not_found("terminal/kill")

    async def ext_notification(self, method: str, params: JsonObject) -> None:
        return None
