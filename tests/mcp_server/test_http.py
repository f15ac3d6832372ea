"""`redline mcp --http`: 127.0.0.1 only, token required, Host and Origin checked."""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from mcp import Client
from mcp.types import Implementation

HANG = 60.0

INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "redline.cli", "mcp", "-C", str(root), "--http", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the server prints its URL once it listens
        assert " at http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.stderr else "")
        url = line.rsplit(" at ", 1)[1].strip()
        yield root, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=HANG)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=HANG)


def post(url: str, headers: dict[str, str], *, path: str | None = None) -> tuple[int, str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=HANG)
    try:
        target = path if path is not None else f"{parts.path}?{parts.query}"
        base = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(INIT.encode())),
        }
        base.update(headers)
        conn.putrequest("POST", target, skip_host=True)
        for key, value in base.items():
            conn.putheader(key, value)
        conn.endheaders(INIT.encode())
        response = conn.getresponse()
        return response.status, response.read(2000).decode("utf-8", "replace")
    finally:
        conn.close()


def test_token_host_and_origin_are_checked(served: tuple[Path, str]) -> None:
    _root, url = served
    parts = urlsplit(url)
    token = parts.query.removeprefix("token=")
    host = f"127.0.0.1:{parts.port}"
    assert token and len(token) >= 32
    # No token, a wrong one, or a token of the right length but wrong: refused.
    assert post(url, {"Host": host}, path=parts.path)[0] == 403
    assert post(url, {"Host": host}, path=f"{parts.path}?token=wrong")[0] == 403
    assert post(url, {"Host": host, "Authorization": "Bearer nope"}, path=parts.path)[0] == 403
    # The right token with a foreign Host (DNS rebinding) or a foreign Origin: refused.
    assert post(url, {"Host": f"evil.example:{parts.port}"})[0] == 403
    assert post(url, {"Host": host, "Origin": "http://evil.example"})[0] == 403
    # The right token in the URL or as a bearer header, our Host and Origin: served.
    status, body = post(url, {"Host": host})
    assert status == 200, body
    status, body = post(
        url,
        {"Host": f"localhost:{parts.port}", "Authorization": f"Bearer {token}"},
        path=parts.path,
    )
    assert status == 200, body
    status, body = post(url, {"Host": host, "Origin": f"http://127.0.0.1:{parts.port}"})
    assert status == 200, body


async def test_a_real_client_with_the_token(served: tuple[Path, str]) -> None:
    root, url = served

    async def run() -> str:
        info = Implementation(name="first", version="1")
        async with Client(url, read_timeout_seconds=HANG, client_info=info) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert "propose_edit" in tools
            result = await client.call_tool(
                "propose_edit", {"path": "notes.txt", "old": "alpha", "new": "beta"}
            )
            assert not result.is_error
            return "\n".join(getattr(item, "text", "") for item in result.content)

    answer = await asyncio.wait_for(run(), HANG)
    assert answer.startswith("Queued pa-")
    assert (root / "notes.txt").read_text() == "alpha\n"

    async def status_of_another_client() -> str:
        info = Implementation(name="second", version="1")
        async with Client(url, read_timeout_seconds=HANG, client_info=info) as client:
            result = await client.call_tool("review_status", {})
            return "\n".join(getattr(item, "text", "") for item in result.content)

    # Each HTTP session is its own client: the first one's proposal is not listed here.
    other = await asyncio.wait_for(status_of_another_client(), HANG)
    assert other == "No pending actions proposed by this client."
