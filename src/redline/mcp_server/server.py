"""The MCP server of ``redline mcp``: tools that only propose, over stdio or local HTTP."""

# No ``from __future__ import annotations``: MCPServer reads the tool signatures at runtime.
import logging
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field, ValidationError

from redline.mcp_server.proposals import (
    DEFAULT_WAIT_SECONDS,
    MAX_WAIT_SECONDS,
    STILL_PENDING,
    ProposalError,
    Proposals,
)

log = logging.getLogger(__name__)

SERVER_NAME = "redline"
INSTRUCTIONS = (
    "Every change you make through these tools waits in redline's review queue: a person "
    "applies or discards it. The propose tools answer at once with the action id and the diff; "
    "call await_review (or review_status) with that id to learn the outcome and the reason."
)


REVISES_TEXT = (
    "The id of a discarded action this proposal revises (pa-K, as its discard named it): "
    "the reviewer then sees what changed since that one, and its comments come along"
)


def _implicit(connection: str) -> bool:
    """May this client's proposals be linked to its last discarded action unnamed? Not
    for stateless HTTP requests: nothing ties one to another but the client's name."""
    return not connection.startswith("http-client:")


class AstEditOp(BaseModel):
    pat: str = Field(description="Python pattern; $NAME, $$$NAME, $_ and $$$ are metavariables")
    out: str = Field(description="Rewrite template using the pattern's metavariable names")


def _client_name(ctx: "Context[Any, Any]") -> str:
    try:
        params = ctx.session.client_params
    except Exception:  # no session details on this transport
        params = None
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", "") if info is not None else ""
    # The source is ``mcp:NAME``: NAME exactly as the client names itself in ``initialize``.
    return str(name).strip()[:100]


def _connection(ctx: "Context[Any, Any]") -> str:
    """Which client a request comes from: its HTTP session, else its name.

    Over stdio every request comes from the one client that started this process. Over
    HTTP a client with an ``Mcp-Session-Id`` is one client; stateless requests (the
    2026 protocol) are told apart by the client's name only.
    """
    request = None
    try:
        request = ctx.request_context.request
    except Exception:
        request = None
    headers = getattr(request, "headers", None)
    if headers is None:
        return "stdio"
    session = headers.get("mcp-session-id")
    if session:
        return f"http-session:{session}"
    return f"http-client:{_client_name(ctx)}"


def invalid_arguments_text(tool: str, exc: ValidationError) -> str:
    """A client's arguments that do not fit a tool's schema, said plainly: each field
    and what was wrong with it (never pydantic's raw report with its links)."""
    problems = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "arguments"
        message = str(err["msg"])
        if err["type"] == "missing":
            message = "required, but not given"
        problems.append(f"{field}: {message}")
    return f"Invalid arguments for {tool}: " + "; ".join(problems) + "."


class RedlineMCPServer(MCPServer):
    """The mcp SDK's server, with invalid arguments reported field by field."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(invalid_arguments_text(name, exc.__cause__)) from exc.__cause__
            raise


def build_server(root: Path, proposals: Proposals | None = None) -> MCPServer:
    """An MCPServer whose five tools propose to (and report on) ``root``'s review queue."""
    from redline import __version__

    work = proposals or Proposals(root)
    server: MCPServer = RedlineMCPServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def fail(exc: ProposalError) -> ToolError:
        return ToolError(str(exc))

    @server.tool(
        name="propose_edit",
        structured_output=False,
        description=(
            "Propose replacing one exact piece of text in an existing workspace file. `old` must "
            "occur exactly once (include surrounding lines to make it unique). Nothing is "
            "written: the change waits in redline's review queue for a person. After a "
            'discard, propose the fix with `revises="pa-K"` naming the discarded action.'
        ),
    )
    async def propose_edit(
        path: Annotated[str, Field(description="File to change, relative to the workspace root")],
        old: Annotated[str, Field(description="Exact text to replace; must occur exactly once")],
        new: Annotated[str, Field(description="Text to put in its place")],
        ctx: Context,
        revises: Annotated[str | None, Field(description=REVISES_TEXT)] = None,
    ) -> str:
        connection = _connection(ctx)
        try:
            outcome = await work.propose_edit(
                _client_name(ctx),
                work.session_for(connection),
                path,
                old,
                new,
                revises,
                _implicit(connection),
            )
        except ProposalError as exc:
            raise fail(exc) from None
        return outcome.text

    @server.tool(
        name="propose_write",
        structured_output=False,
        description=(
            "Propose creating a workspace file, or replacing one with new complete content. "
            "Nothing is written: the change waits in redline's review queue for a person. "
            'After a discard, propose the fix with `revises="pa-K"` naming the discarded action.'
        ),
    )
    async def propose_write(
        path: Annotated[str, Field(description="File to create or replace, relative to the root")],
        content: Annotated[str, Field(description="The complete new content of the file")],
        ctx: Context,
        revises: Annotated[str | None, Field(description=REVISES_TEXT)] = None,
    ) -> str:
        connection = _connection(ctx)
        try:
            outcome = await work.propose_write(
                _client_name(ctx),
                work.session_for(connection),
                path,
                content,
                revises,
                _implicit(connection),
            )
        except ProposalError as exc:
            raise fail(exc) from None
        return outcome.text

    @server.tool(
        name="ast_edit",
        structured_output=False,
        description=(
            "Structural search-and-replace for Python code (ast-grep pattern syntax). Each op "
            "has a pattern `pat` and a rewrite `out`. In patterns $NAME matches one node, "
            "$$$NAME zero or more items, $_ and $$$ match without capturing; whitespace, "
            "comments, redundant parentheses and trailing commas are ignored. Example: "
            "{'pat': 'print($$$A)', 'out': 'logger.info($$$A)'}. Nothing is written: the "
            "rewrite waits in redline's review queue for a person. After a discard, propose "
            'the fix with `revises="pa-K"` naming the discarded action.'
        ),
    )
    async def ast_edit(
        ops: Annotated[
            list[AstEditOp],
            Field(description="Operations, all matched against the original files", min_length=1),
        ],
        ctx: Context,
        path: Annotated[
            str | None, Field(description="File, folder or glob relative to the workspace root")
        ] = None,
        glob: Annotated[str | None, Field(description="Extra file filter under path")] = None,
        limit: Annotated[int | None, Field(description="Maximum total replacements", ge=1)] = None,
        revises: Annotated[str | None, Field(description=REVISES_TEXT)] = None,
    ) -> str:
        connection = _connection(ctx)
        try:
            outcome = await work.ast_edit(
                _client_name(ctx),
                work.session_for(connection),
                [op.model_dump() for op in ops],
                path,
                glob,
                limit,
                revises,
                _implicit(connection),
            )
        except ProposalError as exc:
            raise fail(exc) from None
        return outcome.text

    @server.tool(
        name="review_status",
        structured_output=False,
        description=(
            "Without `id`: the pending actions this client proposed. With `id`: its state "
            "(pending, applied, discarded with the reason, or replaced by another id) and the "
            "reviewer's comments, one per line as PATH:LINE: TEXT."
        ),
    )
    async def review_status(
        ctx: Context,
        id: Annotated[str | None, Field(description="A pending action id such as pa-3")] = None,
    ) -> str:
        import asyncio

        try:
            return await asyncio.to_thread(work.status, work.session_for(_connection(ctx)), id)
        except ProposalError as exc:
            raise fail(exc) from None

    @server.tool(
        name="await_review",
        structured_output=False,
        description=(
            "Wait until a person resolves the action `id` (at most `timeout_s` seconds, default "
            f"{DEFAULT_WAIT_SECONDS:g}, at most {MAX_WAIT_SECONDS:g}). Returns the outcome line "
            "with the reviewer's reason and the result text, or `still pending`."
        ),
    )
    async def await_review(
        id: Annotated[str, Field(description="A pending action id such as pa-3")],
        timeout_s: Annotated[
            float,
            Field(description="Seconds to wait (at most 50)", ge=0, le=MAX_WAIT_SECONDS),
        ] = DEFAULT_WAIT_SECONDS,
    ) -> str | CallToolResult:
        import asyncio

        try:
            text = await work.await_review(id, timeout_s)
        except ProposalError as exc:
            raise fail(exc) from None
        if text == STILL_PENDING:
            return text
        comments = await asyncio.to_thread(work.comments_json, id)
        if not comments:
            return text
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content={"comments": comments},
        )

    return server


def quiet_logging() -> None:
    """Library logs go to stderr only, and only warnings: stdout belongs to the protocol."""
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("redline mcp: %(name)s: %(message)s"))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)


async def serve_stdio(root: Path) -> None:
    proposals = Proposals(root)
    try:
        server = build_server(root, proposals)
        quiet_logging()
        await server.run_stdio_async()
    finally:
        proposals.close()
