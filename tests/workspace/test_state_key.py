"""The state key is the user's, wherever redline is started from: another config folder, an
MCP server started with a bare environment. A record from another workspace still fails."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation
from tests.workspace.queue.helpers import edit_draft

from redline.cli import main
from redline.workspace import auth
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import WorkspaceQueue
from redline.workspace.safe_apply import apply_preview

HANG = 60.0


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _history(ws: Path) -> str:
    """One apply in the journal and one action waiting in the queue; returns the action id."""
    (ws / "a.txt").write_text("hello\n")
    old = "hello\n"
    apply_preview(
        ws, Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, "hello, world\n")])
    )
    with WorkspaceQueue(ws) as queue:
        return queue.push(edit_draft(ws, new="hello, world\nmore\n")).id


def test_another_config_folder_keeps_history_queue_and_undo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    action_id = _history(ws)
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(tmp_path / "another-config"))
    auth._cache.clear()

    code, out, err = run(capsys, "pending", "-C", str(ws), "list", "--json")
    assert (code, err) == (0, "")
    assert [a["id"] for a in json.loads(out)["actions"]] == [action_id]
    code, out, err = run(capsys, "undo", "-C", str(ws), "--list")
    assert code == 0 and "undoable" in out and "foreign" not in out + err
    code, out, err = run(capsys, "undo", "-C", str(ws))
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "hello\n"
    # The action went stale with the undo, but it is still this user's and can be discarded.
    code, out, err = run(capsys, "pending", "-C", str(ws), "discard", action_id, "--reason", "x")
    assert code == 0, err


# A bare environment: `env -i PATH=...` clears everything the MCP SDK would add (HOME,
# USER, ...). The home folder then comes from the passwd database; as the tests cannot add
# a user, the child's passwd answer for its own uid is the test's home folder.
BARE_SERVER = """
import os, pwd, sys
home, root = sys.argv[1], sys.argv[2]
assert set(os.environ) <= {"PATH", "LC_CTYPE"}, sorted(os.environ)  # LC_CTYPE: PEP 538
real = pwd.getpwuid
class Entry:
    pw_dir = home
pwd.getpwuid = lambda uid: Entry if uid == os.getuid() else real(uid)
from redline.cli import main
sys.exit(main(["mcp", "-C", root]))
"""


async def _propose_from_a_bare_server(home: Path, ws: Path) -> str:
    env = shutil.which("env")
    assert env is not None
    params = StdioServerParameters(
        command=env,
        args=[
            "-i",
            f"PATH={os.environ['PATH']}",
            sys.executable,
            "-c",
            BARE_SERVER,
            str(home),
            str(ws),
        ],
    )
    async with Client(
        params, client_info=Implementation(name="bare", version="1.0"), read_timeout_seconds=HANG
    ) as client:
        result = await asyncio.wait_for(
            client.call_tool(
                "propose_edit", {"path": "a.txt", "old": "hello\n", "new": "hi there\n"}
            ),
            HANG,
        )
    text = "\n".join(getattr(item, "text", "") for item in result.content)
    assert not result.is_error, text
    assert text.startswith("Queued pa-"), text
    return text.split()[1]


def test_mcp_server_started_with_a_bare_environment_signs_as_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    # The user's own shell: HOME set, no XDG_STATE_HOME, its own REDLINE_CONFIG_DIR.
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_STATE_HOME")
    auth._cache.clear()

    action_id = asyncio.run(_propose_from_a_bare_server(home, ws))

    key = home / ".local" / "state" / "redline" / auth.KEY_FILE_NAME
    assert auth.key_path() == key and key.stat().st_size == 32
    code, out, err = run(capsys, "pending", "-C", str(ws), "list", "--json")
    assert (code, err) == (0, "")
    listed = json.loads(out)
    assert [a["id"] for a in listed["actions"]] == [action_id]
    assert listed["actions"][0]["source"]["kind"] == "mcp"
    code, out, err = run(capsys, "pending", "-C", str(ws), "apply", action_id)
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "hi there\n"


def test_a_record_copied_from_another_workspace_is_still_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for ws in (first, second):
        ws.mkdir()
        (ws / "a.txt").write_text("hello\n")
    with WorkspaceQueue(first) as queue:
        action_id = queue.push(edit_draft(first)).id
    with WorkspaceQueue(second) as queue:
        queue.list()  # creates its folders
    for folder in ("actions", "contents"):
        for item in (first / ".redline/queue" / folder).iterdir():
            shutil.copy2(item, second / ".redline/queue" / folder / item.name)

    code, out, err = run(capsys, "pending", "-C", str(second), "list", "--json")
    assert code == 1
    listed = json.loads(out)
    assert listed["actions"] == []
    assert [u["file"] for u in listed["unusable"]] == [f".redline/queue/actions/{action_id}.json"]
    assert "does not carry this user's signature" in listed["unusable"][0]["why"]
    code, out, err = run(capsys, "pending", "-C", str(second), "apply", action_id)
    assert code == 1 and "does not carry this user's signature" in err
    assert (second / "a.txt").read_text() == "hello\n"


def test_under_another_key_nothing_is_moved_and_switching_back_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    action_id = _history(ws)
    entry_id = sorted(p.name for p in (ws / ".redline/journal").iterdir())[-1]
    users_state = os.environ["XDG_STATE_HOME"]
    # Another key: a state folder of its own (another machine's HOME, a test setup, ...).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-state"))
    auth._cache.clear()

    code, out, err = run(capsys, "undo", "-C", str(ws), "--list")
    assert code == 0
    assert "1 entry signed with another key (or not written by your redline for this " in out
    assert f"{entry_id}  foreign" in out
    code, out, err = run(capsys, "undo", "-C", str(ws))
    assert code == 1 and f"The newest journal entry {entry_id} cannot be used" in err
    code, out, err = run(capsys, "pending", "-C", str(ws), "list", "--json")
    assert code == 1
    listed = json.loads(out)
    assert listed["actions"] == []
    assert listed["unusable"] == [
        {
            "file": f".redline/queue/actions/{action_id}.json",
            "why": listed["unusable"][0]["why"],
        }
    ]
    assert "does not carry this user's signature" in listed["unusable"][0]["why"]
    # Nothing was moved or removed.
    assert (ws / ".redline/journal" / entry_id).is_dir()
    assert not (ws / ".redline/journal-aside").exists()
    assert (ws / ".redline/queue/actions" / f"{action_id}.json").is_file()

    # The right key again: every entry and record counts again.
    monkeypatch.setenv("XDG_STATE_HOME", users_state)
    auth._cache.clear()
    code, out, err = run(capsys, "undo", "-C", str(ws), "--list")
    assert code == 0 and f"{entry_id}  undoable" in out and "another key" not in out + err
    code, out, err = run(capsys, "pending", "-C", str(ws), "list", "--json")
    assert (code, err) == (0, "") and [a["id"] for a in json.loads(out)["actions"]] == [action_id]
    code, out, err = run(capsys, "undo", "-C", str(ws))
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "hello\n"
