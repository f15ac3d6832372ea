"""A hostile ACP agent: malformed lines are answered or logged in one line and skipped;
the connection survives, and methods redline does not offer are "method not found"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.drivers.acp_client.test_exec_agent import of, run_exec

METHOD_NOT_FOUND = -32601
INVALID_REQUEST = -32600

MALFORMED = [
    "[1,2,3]",
    "this is not JSON",
    '"just a string"',
    "42",
    "null",
    "{",
    '{"jsonrpc": "2.0", "id": [1], "result": 1}',
    '{"jsonrpc": "2.0", "id": {"x": 1}, "error": "boom"}',
    '{"jsonrpc": "2.0", "id": 0, "error": "not an object"}',
    '{"jsonrpc": "2.0", "method": ["session/update"], "params": {}}',
    '{"jsonrpc": "2.0", "method": "session/update", "params": {"bogus": 1}}',
    '{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "scripted-1", '
    '"update": {"sessionUpdate": "nope"}}}',
    '{"jsonrpc": "2.0", "method": "x/unknown", "params": {}}',
]


def test_malformed_lines_never_end_the_turn(tmp_path: Path, workspace: Path) -> None:
    steps = [{"do": "raw", "line": line} for line in MALFORMED]
    steps += [
        {"do": "raw", "line": '{"jsonrpc": "2.0", "id": "bad-1", "method": 5}'},
        {"do": "raw", "line": '{"jsonrpc": "2.0", "id": "bad-2", "method": "fs/x", "params": 3}'},
        {"do": "request", "method": "fs/read_text_file", "params": {"nopath": 1}},
        {"do": "request", "method": "no/such/method", "params": {}},
        {"do": "text", "text": "still alive"},
    ]
    code, events, heard, stderr = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0, stderr
    assert "".join(e["text"] for e in of(events, "acp_message")) == "still alive"
    assert of(events, "agent_end")[-1]["status"] == "done"
    assert "Traceback" not in stderr
    assert "Connection closed" not in stderr
    # A request with an id gets a JSON-RPC error instead of silence.
    strays = {h["message"]["id"]: h["message"] for h in heard if h["event"] == "stray_answer"}
    assert strays["bad-1"]["error"]["code"] == INVALID_REQUEST
    assert strays["bad-2"]["error"]["code"] == INVALID_REQUEST
    # Well-formed requests the client cannot serve are answered with an error.
    answers = {h["method"]: h for h in heard if h["event"] == "request"}
    assert answers["fs/read_text_file"]["code"] == -32602
    assert answers["no/such/method"]["code"] == METHOD_NOT_FOUND
    # Everything else is one line each in the log, no traceback.
    skipped = [line for line in stderr.splitlines() if "malformed message" in line]
    assert len(skipped) >= len(MALFORMED) - 1, stderr


def test_terminal_methods_are_method_not_found(tmp_path: Path, workspace: Path) -> None:
    session = {"sessionId": "scripted-1"}
    steps = [
        {"do": "request", "method": "terminal/create", "params": {**session, "command": "ls"}},
        {"do": "request", "method": "terminal/output", "params": {**session, "terminalId": "t"}},
        {"do": "request", "method": "terminal/release", "params": {**session, "terminalId": "t"}},
        {
            "do": "request",
            "method": "terminal/wait_for_exit",
            "params": {**session, "terminalId": "t"},
        },
        {"do": "request", "method": "terminal/kill", "params": {**session, "terminalId": "t"}},
        {"do": "text", "text": "done"},
    ]
    code, _, heard, stderr = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0, stderr
    answers = {h["method"]: h for h in heard if h["event"] == "request"}
    assert set(answers) == {
        "terminal/create",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
        "terminal/kill",
    }
    for method, answer in answers.items():
        assert answer.get("code") == METHOD_NOT_FOUND, (method, answer)
    assert "Traceback" not in stderr


def test_nul_byte_paths_are_refused_without_a_traceback(tmp_path: Path, workspace: Path) -> None:
    steps = [
        {"do": "fs_read", "path": "app\u0000.py"},
        {"do": "fs_write", "path": "x\u0000.py", "content": "evil\n"},
        {"do": "text", "text": "after"},
    ]
    code, events, heard, stderr = run_exec(tmp_path, workspace, steps, resolver="human")
    assert code == 0, stderr
    read = next(h for h in heard if h["event"] == "read")
    write = next(h for h in heard if h["event"] == "write")
    assert "NUL byte" in read["error"] and "NUL byte" in write["error"]
    assert of(events, "pending_pushed") == []
    assert "Traceback" not in stderr
    assert "".join(e["text"] for e in of(events, "acp_message")) == "after"


# -- the screen itself ------------------------------------------------------------------


def test_screen_passes_well_formed_messages_unchanged() -> None:
    from redline.drivers.acp.wire import screen

    for line in (
        b'{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"path":"a"}}',
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}',
        b'{"jsonrpc":"2.0","method":"_vendor/ping","params":{}}',
        b'{"jsonrpc":"2.0","id":"x","result":null}',
        b'{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}',
    ):
        verdict = screen(line + b"\r\n")
        assert verdict.forward == line and verdict.reply is None and verdict.problem == ""
    assert screen(b"   \n") == screen(b"")


def test_screen_verdicts_on_malformed_lines() -> None:
    from redline.drivers.acp.wire import INVALID_REQUEST, screen

    assert screen(b"[1,2,3]").problem == "an array, not a JSON-RPC object"
    assert screen(b"[1,2,3]").forward is None
    assert screen(b"not json\x00").problem == "not JSON: not json\\0"
    assert screen(b"[" * 100_000).problem.startswith("not JSON")
    assert screen(b'{"id": true, "result": 1}').problem == "its id is a boolean"
    assert screen(b'{"params": {}}').problem == "neither a request, a notification nor an answer"
    request = screen(b'{"id": 9, "method": 5}')
    assert request.forward is None and request.reply is not None
    assert request.reply["id"] == 9 and request.reply["error"]["code"] == INVALID_REQUEST
    notification = screen(b'{"method": "x", "params": "y"}')
    assert notification.reply is None and "params of x are a string" in notification.problem
    assert screen(b'{"method": "x/y"}').problem == "unknown notification x/y"
    bad_update = screen(b'{"method": "session/update", "params": {"sessionId": "s"}}')
    assert bad_update.problem == "session/update with invalid params (update: Field required)"
    fixed = screen(b'{"id": 4, "error": "boom"}')
    assert fixed.forward is not None
    error = json.loads(fixed.forward)["error"]
    assert error["code"] == -32603 and "malformed error" in error["message"]


# -- a symlinked folder (issue 29, item 1) -------------------------------------------------


def test_acp_writes_through_a_symlinked_folder_name_the_real_path(
    tmp_path: Path, workspace: Path
) -> None:
    from redline.workspace.journal import undo_history

    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("a = 1\n")
    (workspace / "src" / "b.py").write_text("b = 1\n")
    (workspace / "tests").symlink_to("src")
    steps = [
        {"do": "fs_write", "path": "tests/a.py", "content": "a = 2\n"},
        {"do": "claude_edit", "path": "tests/b.py", "old": "b = 1", "new": "b = 2"},
    ]
    code, events, _, stderr = run_exec(tmp_path, workspace, steps)
    assert code == 0, stderr
    pushed = of(events, "pending_pushed")
    assert [p["preview"]["files"][0]["path"] for p in pushed] == ["src/a.py", "src/b.py"]
    assert (workspace / "src" / "a.py").read_text() == "a = 2\n"
    assert (workspace / "src" / "b.py").read_text() == "b = 2\n"
    history = {tuple(h.files): h.via for h in undo_history(workspace)}
    assert history == {
        ("src/a.py",): {"src/a.py": "tests/a.py"},
        ("src/b.py",): {"src/b.py": "tests/b.py"},
    }
