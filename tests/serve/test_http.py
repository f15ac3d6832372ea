"""``redline serve`` over HTTP: every request and the websocket need the token, the right
Host and (when sent) the right Origin; refusals are 403 with a reason."""

from __future__ import annotations

import base64
import http.client
import ipaddress
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from tests.serve.helpers import Served, serve

from redline.commands._serve_server import GuardedServer
from redline.serve_guard import ServeGuard, host_port, interface_addresses, new_token

TIMEOUT = 60.0  # hang guard per request


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    workspace = tmp_path_factory.mktemp("served")
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    config = tmp_path_factory.mktemp("serve-config")
    env_before = os.environ.get("REDLINE_CONFIG_DIR")
    os.environ["REDLINE_CONFIG_DIR"] = str(config)
    try:
        with serve(["-C", str(workspace), "--allow-host", "devbox.test"]) as served:
            yield served
    finally:
        if env_before is None:
            os.environ.pop("REDLINE_CONFIG_DIR", None)
        else:
            os.environ["REDLINE_CONFIG_DIR"] = env_before


def request(
    served: Served,
    path: str,
    *,
    host: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=TIMEOUT)
    try:
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host if host is not None else f"127.0.0.1:{served.port}")
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        status = response.status
        got = {name.lower(): value for name, value in response.getheaders()}
        body = "" if status == 101 else response.read().decode("utf-8", "replace")
        return status, got, body
    finally:
        connection.close()


def websocket_headers(origin: str | None) -> dict[str, str]:
    headers = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
    }
    if origin is not None:
        headers["Origin"] = origin
    return headers


def test_the_printed_url_is_local_with_the_token_as_its_path(server: Served) -> None:
    assert server.url == f"http://127.0.0.1:{server.port}/{server.token}/"
    assert len(server.token) >= 40


def test_the_token_path_gets_the_page_and_no_cookie(server: Served) -> None:
    for path in (server.prefix, server.prefix.rstrip("/")):
        status, headers, body = request(server, path)
        assert status == 200, path
        assert "set-cookie" not in headers  # nothing another local port could be sent
        assert "textual-terminal" in body
        assert f"ws://127.0.0.1:{server.port}{server.prefix}ws" in body
        assert "fonts.googleapis.com" not in body  # the page loads nothing from elsewhere
        assert f"{server.prefix}static/css/xterm.css" in body
        assert f"{server.prefix}static/js/textual.js" in body
        assert '<link rel="icon" href="data:," />' in body  # no request for /favicon.ico
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["referrer-policy"] == "no-referrer"


def test_static_files_live_under_the_token_path(server: Served) -> None:
    status, headers, body = request(server, f"{server.prefix}static/js/textual.js")
    assert status == 200 and "set-cookie" not in headers and len(body) > 1000
    status, _, _ = request(server, f"{server.prefix}static/fonts/RobotoMono-VariableFont_wght.ttf")
    assert status == 200
    for missing in (
        "static/nope.js",
        "static/../server.py",
        "static/%2e%2e/server.py",
        "download/k",
    ):
        status, _, _ = request(server, f"{server.prefix}{missing}")
        assert status == 404, missing


def test_the_token_counts_only_in_the_path(server: Served) -> None:
    # Neither the old ?token= form nor a cookie holding the token opens anything.
    cookie = f"redline-serve-{server.port}={server.token}"
    for path, headers in (
        (f"/?token={server.token}", {}),
        ("/", {"Cookie": cookie}),
        ("/static/js/textual.js", {"Cookie": cookie}),
        (f"/ws?token={server.token}", {}),
    ):
        status, _, body = request(server, path, headers=headers)
        assert status == 403, path
        assert "No token" in body or "Wrong token" in body


def test_no_token_is_refused_everywhere(server: Served) -> None:
    status, _, body = request(server, "/")
    assert status == 403 and "No token" in body
    for path in ("/static/js/textual.js", "/static/", "/download/abc", "/ws", "/favicon.ico"):
        status, _, body = request(server, path)
        assert status == 403, path
        assert "Wrong token" in body


def test_wrong_token_is_refused(server: Served) -> None:
    for token in ("x", server.token[:-1], server.token + "a", "%C3%A9" * 43, "%FF"):
        for rest in ("", "ws", "static/js/textual.js"):
            status, _, body = request(server, f"/{token}/{rest}")
            assert status == 403, (token, rest)
            assert "Wrong token" in body


def test_a_foreign_host_is_refused_even_with_the_token(server: Served) -> None:
    for host in (
        "evil.example",
        f"evil.example:{server.port}",
        f"127.0.0.1:{server.port + 1}",
        f"localhost.evil.example:{server.port}",
        "",
    ):
        status, _, body = request(server, server.prefix, host=host)
        assert status == 403, host
        assert "is not this server" in body
    status, _, body = request(server, server.prefix, host=f"localhost:{server.port}")
    assert status == 200
    assert f"ws://localhost:{server.port}{server.prefix}ws" in body


def test_a_foreign_origin_is_refused(server: Served) -> None:
    for origin in ("http://evil.example", f"http://localhost:{server.port}", "null"):
        status, _, body = request(server, server.prefix, headers={"Origin": origin})
        assert status == 403, origin
        assert "may not use this server" in body


def test_the_websocket_upgrade_checks_origin_and_token(server: Served) -> None:
    own = f"http://127.0.0.1:{server.port}"
    status, _, body = request(
        server, f"{server.prefix}ws", headers=websocket_headers("http://evil.example")
    )
    assert status == 403 and "Origin" in body
    status, _, body = request(server, "/ws", headers=websocket_headers(own))
    assert status == 403 and "Wrong token" in body
    status, headers, _ = request(server, f"{server.prefix}ws", headers=websocket_headers(own))
    assert status == 101
    assert headers["upgrade"].lower() == "websocket"


def test_refusals_are_logged_without_the_token(server: Served) -> None:
    request(server, "/wrong-token-here/first")
    request(server, f"{server.prefix}ws", host="evil.example")  # the right token, refused
    request(server, f"/{server.token[:-1]}/near-miss")
    log = server.wait_printed("refused GET /***/near-miss: Wrong token")  # the last one
    assert "refused GET /***/first: Wrong token" in log
    assert "refused GET /***/ws: Host 'evil.example' is not this server" in log
    urls = [line for line in server.output if line.startswith("  http://")]
    assert len(urls) == 2  # 127.0.0.1 and the --allow-host name
    assert log.count(server.token) == 2  # only in the start URLs
    assert server.token[:-1] not in "".join(line for line in server.output if line not in urls)


def test_allow_host_lets_that_name_in(server: Served) -> None:
    assert f"  http://devbox.test:{server.port}{server.prefix}\n" in server.output
    host = f"devbox.test:{server.port}"
    status, _, body = request(
        server, server.prefix, host=host, headers={"Origin": f"http://{host}"}
    )
    assert status == 200 and f"ws://{host}{server.prefix}ws" in body
    for other in (f"devbox.test:{server.port + 1}", f"other.test:{server.port}"):
        status, _, body = request(server, server.prefix, host=other)
        assert status == 403 and "is not this server" in body, other


async def test_a_wildcard_bind_answers_to_the_machines_own_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server bound to every interface (as --host 0.0.0.0 does) serves a request whose
    Host is one of this machine's interface addresses, even where the host name resolves
    to loopback (stock Debian's /etc/hosts). The test server listens on 127.0.0.1 only."""
    monkeypatch.setattr(socket, "gethostbyname_ex", lambda name: (name, [], ["127.0.1.1"]))
    own = sorted(a for a in interface_addresses() if not ipaddress.ip_address(a).is_loopback)
    if not own:
        pytest.skip("this machine has no network address besides loopback")
    token = new_token()
    server = GuardedServer("true", host="0.0.0.0", port=0, title="redline")
    runner = web.AppRunner(await server._make_app(), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        server.guard = ServeGuard("0.0.0.0", port, token)
        async with aiohttp.ClientSession() as client:
            for address in own:
                host = host_port(address, port)
                async with client.get(
                    f"http://127.0.0.1:{port}/{token}/",
                    headers={"Host": host, "Origin": f"http://{host}"},
                ) as response:
                    assert response.status == 200, address
                    assert f"ws://{host}/{token}/ws" in await response.text()
            async with client.get(
                f"http://127.0.0.1:{port}/{token}/", headers={"Host": f"203.0.113.9:{port}"}
            ) as response:
                assert response.status == 403  # an address this machine does not have
                assert "is not this server" in await response.text()
    finally:
        await runner.cleanup()


def run_serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline", "serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_a_non_local_host_prints_a_warning(tmp_path: Path) -> None:
    # 192.0.2.1 is a documentation address this machine does not have: the warning is
    # printed before binding, then binding fails cleanly, so nothing listens beyond 127.0.0.1.
    done = run_serve("-C", str(tmp_path), "--host", "192.0.2.1", "--port", "0")
    assert "warning: serving on '192.0.2.1': other machines" in done.stderr
    assert done.returncode == 1
    assert "cannot listen on 192.0.2.1:0" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_options_are_clear_errors(tmp_path: Path) -> None:
    done = run_serve("--demo", "--model", "openai:x", "--port", "0")
    assert done.returncode == 2 and "--demo runs the scripted demo" in done.stderr
    done = run_serve("-C", str(tmp_path), "--no-wait", "--port", "0")
    assert done.returncode == 2 and "--no-wait is for --demo" in done.stderr
    done = run_serve("-C", str(tmp_path / "missing"), "--port", "0")
    assert done.returncode == 2 and "is not a folder" in done.stderr
    done = run_serve("-C", str(tmp_path), "--port", "70000")
    assert done.returncode == 2 and "65535" in done.stderr
    done = run_serve("-C", str(tmp_path), "--allow-host", "http://devbox", "--port", "0")
    assert done.returncode == 2
    assert "argument --allow-host: 'http://devbox' is not a host name" in done.stderr
    # A model every tab would fail to start with is an error before serving.
    done = run_serve("-C", str(tmp_path), "--model", "bogus", "--port", "0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.endswith(
        "redline serve: model 'bogus': expected scripted:PLAN.json, openai:MODEL or "
        "anthropic:MODEL\n"
    )
    done = run_serve("-C", str(tmp_path), "--model", "scripted:missing.json", "--port", "0")
    assert done.returncode == 2 and "missing.json does not exist" in done.stderr
    done = run_serve(
        "-C",
        str(tmp_path),
        "--model",
        "openai:m",
        "--api-key-env",
        "REDLINE_NO_SUCH_KEY",
        "--port",
        "0",
    )
    assert done.returncode == 1 and "REDLINE_NO_SUCH_KEY is not set" in done.stderr
    assert all("Traceback" not in text for text in (done.stderr, done.stdout))
