"""A queue, journal and undo history written by redline before the module move (v0, commit
325a55b) are still read, listed, applied, discarded and undone by the current code.

The fixture (tests/fixtures/compat/v0/, made by tests/fixtures/compat/make_fixture.py with the
old code) holds a workspace and the user config folder with the test state key. Redline signs
every record with a key derived from the user's key AND the workspace's resolved absolute root
(see redline.workspace.auth), so a copy of the workspace anywhere else does not verify as is:
the fixture was made at the fixed root named in ORIGIN.json, and :func:`relocate` re-signs the
copy for the folder the test runs in, the way the old code would have signed it there. It first
recomputes every committed tag for the original root and requires them bit for bit, so the
re-signing is exactly the old scheme, and it is written here independently of redline's code:
a change to how redline derives keys or tags records fails these tests.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from redline.cli import main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "compat" / "v0"
ORIGIN: dict[str, Any] = json.loads((FIXTURE / "ORIGIN.json").read_text(encoding="utf-8"))
PENDING = ORIGIN["pending"]
# Stored as dot-redline: a .redline/ folder is per-user state and is never committed as such.
STORED_STATE = "dot-redline"
SESSION_ID = next((FIXTURE / "workspace" / STORED_STATE / "sessions").glob("*.jsonl")).stem

# What v0 signs, and with which purpose (redline.workspace.queue.core and .entries at 325a55b).
QUEUE_PURPOSES = {"actions": "queue", "resolved": "queue-resolved", "requests": "queue-request"}
# Unsigned state: blobs are named by their sha256; the rest is never trusted for its content.
UNSIGNED = re.compile(
    r"\.gitignore|lock|queue/next-id|queue/contents/[0-9a-f]{64}|sessions/[^/]+\.jsonl"
    r"|journal/\d{6}/(done|entry\.json|blobs/[0-9a-f]{64})"
)


def _v0_tag(user_key: bytes, root: str, purpose: str, payload: bytes) -> str:
    workspace_key = hmac.new(
        user_key, b"redline-workspace\0" + os.fsencode(root), hashlib.sha256
    ).digest()
    mac = hmac.new(workspace_key, purpose.encode("utf-8") + b"\0", hashlib.sha256)
    mac.update(payload)
    return mac.hexdigest()


def relocate(state: Path, user_key: bytes, old_root: str, new_root: str) -> int:
    """Re-sign every record under ``state`` (a ``.redline``) for ``new_root``; how many.

    Each committed tag must be the v0 tag for ``old_root``; any file this does not know
    fails, so a regenerated fixture with a new kind of record cannot slip through unsigned.
    """
    count = 0
    for path in sorted(p for p in state.rglob("*") if p.is_file()):
        rel = path.relative_to(state).as_posix()
        folder, _, name = rel.partition("/")
        sub = name.partition("/")[0]
        if folder == "queue" and sub in QUEUE_PURPOSES and name.endswith(".json"):
            purpose = QUEUE_PURPOSES[sub]
            header_raw, _, rest = path.read_bytes().partition(b"\n")
            tag = json.loads(header_raw)["tag"]
            payload = rest.removesuffix(b"\n")
            assert tag == _v0_tag(user_key, old_root, purpose, payload), rel
            new_tag = _v0_tag(user_key, new_root, purpose, payload)
            path.write_bytes(header_raw.replace(tag.encode(), new_tag.encode()) + b"\n" + rest)
        elif re.fullmatch(r"journal/\d{6}/entry\.hmac", rel):
            entry_id = path.parent.name
            payload = (
                b"redline-journal-entry\0"
                + entry_id.encode()
                + b"\0"
                + (path.parent / "entry.json").read_bytes()
            )
            assert path.read_text("ascii").strip() == _v0_tag(
                user_key, old_root, "journal", payload
            ), rel
            path.write_text(_v0_tag(user_key, new_root, "journal", payload), "ascii")
        else:
            assert UNSIGNED.fullmatch(rel), f"{rel}: a file the v0 fixture should not hold"
            continue
        count += 1
    return count


def copy_fixture(tmp_path: Path) -> tuple[Path, Path]:
    """The fixture's workspace and config folder under ``tmp_path``, modes as redline left them
    (git keeps neither 0600/0700 nor empty folders)."""
    shutil.copytree(FIXTURE / "workspace", tmp_path / "workspace")
    (tmp_path / "workspace" / STORED_STATE).rename(tmp_path / "workspace" / ".redline")
    shutil.copytree(FIXTURE / "config", tmp_path / "config")
    for rel, mode in ORIGIN["modes"].items():
        path = tmp_path / rel
        if not path.exists():
            path.mkdir()
        os.chmod(path, int(mode, 8))
    return tmp_path / "workspace", tmp_path / "config"


@pytest.fixture
def v0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The v0 workspace, re-signed for where it now is; REDLINE_CONFIG_DIR holds its key."""
    root, config = copy_fixture(tmp_path)
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(config))
    user_key = (config / "state.key").read_bytes()
    # 3 pending records, 2 resolutions, 1 journal entry.
    assert relocate(root / ".redline", user_key, ORIGIN["root"], str(root.resolve())) == 6
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def read(root: Path, rel: str) -> str:
    return (root / rel).read_text(encoding="utf-8")


def test_the_fixture_is_what_its_script_says() -> None:
    assert ORIGIN["commit"] == "325a55b"
    assert ORIGIN["root"] == "/tmp/redline-compat-v0/workspace"
    assert (FIXTURE / "config" / "state.key").stat().st_size == 32
    assert ORIGIN["files_after"]["README.md"] == "# Demo\n\nA tiny project.\n"
    for rel, text in ORIGIN["files_after"].items():
        assert read(FIXTURE / "workspace", rel) == text


def test_copied_as_is_nothing_is_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Why the fixture is re-signed: records are bound to the workspace's absolute root."""
    root, config = copy_fixture(tmp_path)
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(config))
    code, out, err = run(capsys, "pending", "-C", str(root), "list", "--json")
    # Not an empty queue: three records this key cannot verify, named, and exit 1.
    listed = json.loads(out)
    assert code == 1 and listed["actions"] == []
    assert sorted(u["file"] for u in listed["unusable"]) == sorted(
        f".redline/queue/actions/{action_id}.json" for action_id in PENDING.values()
    )
    for action_id in PENDING.values():
        assert (
            f"queue record {action_id} (.redline/queue/actions/{action_id}.json) does not " in err
        )
    code, out, err = run(capsys, "undo", "-C", str(root))
    assert code == 1
    assert "1 entry signed with another key" in out + err
    assert "The newest journal entry 000001 cannot be used" in out + err
    # Left in place: once the workspace is re-signed for where it is, it counts again.
    assert (root / ".redline/journal/000001").is_dir()
    assert read(root, "README.md") == ORIGIN["files_after"]["README.md"]


def test_pending_list_reads_the_old_queue(v0: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "pending", "-C", str(v0), "list", "--json")
    assert code == 0 and err == ""
    actions = json.loads(out)["actions"]
    summary = [
        (a["id"], a["label"], a["source_tool_name"], a["files"], a["added"], a["removed"])
        for a in actions
    ]
    assert summary == [
        (PENDING["multi_hunk_modify"], "Write: calc.py", "write", ["calc.py"], 3, 1),
        (PENDING["create"], "Write: docs/NOTES.md", "write", ["docs/NOTES.md"], 2, 0),
        (PENDING["modify"], "Edit: greet.py", "edit", ["greet.py"], 1, 1),
    ]
    for action in actions:
        assert action["source"] == {"kind": "exec", "name": "exec", "session_id": SESSION_ID}
        assert action["applied_by"] == "preview"
        assert (action["stale"], action["orphaned"], action["edited"]) == (False, False, False)
        assert action["created_at"].endswith("+00:00")

    code, out, err = run(capsys, "pending", "-C", str(v0), "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[-1] == "3 pending (top first). Show one with `redline pending show ID`."
    assert [line.split()[0] for line in lines[1:-1]] == [a["id"] for a in actions]


def test_pending_show_reads_old_records_and_resolutions(
    v0: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    multi = PENDING["multi_hunk_modify"]
    code, out, err = run(capsys, "pending", "-C", str(v0), "show", multi)
    assert code == 0 and err == ""
    assert out.startswith(f"{multi}: Write: calc.py\n")
    assert "    calc.py#1  calc.py hunk 1 (lines 1–4)\n" in out
    assert "    calc.py#2  calc.py hunk 2 (lines 14–17)\n" in out
    assert '-"""Small arithmetic helpers."""\n+"""Small arithmetic helpers (typed)."""\n' in out
    assert '+    if b == 0:\n+        raise ZeroDivisionError("b is 0")\n' in out

    code, out, err = run(capsys, "pending", "-C", str(v0), "show", PENDING["create"], "--json")
    assert code == 0 and err == ""
    shown = json.loads(out)
    assert shown["diff"].endswith("+Notes\n+=====\n")
    assert [h["address"] for h in shown["hunks"]] == ["docs/NOTES.md"]

    # The resolved log of the old code: one apply, one discard, with their reasons.
    code, out, _ = run(capsys, "pending", "-C", str(v0), "show", ORIGIN["applied"], "--json")
    assert code == 0
    resolution = json.loads(out)["resolution"]
    assert (resolution["decision"], resolution["reason"], resolution["resolved_by"]) == (
        "apply",
        "fine",
        "person",
    )
    assert resolution["result_text"] == "Applied: Edit: README.md."
    code, out, _ = run(capsys, "pending", "-C", str(v0), "show", ORIGIN["discarded"], "--json")
    assert code == 0
    resolution = json.loads(out)["resolution"]
    assert (resolution["decision"], resolution["reason"]) == ("discard", "no TODO files here")


def test_pending_apply_and_discard_old_actions(
    v0: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = ORIGIN["files_after"]
    code, out, err = run(
        capsys, "pending", "-C", str(v0), "apply", PENDING["multi_hunk_modify"], "--reason", "ok"
    )
    assert (code, err) == (0, "")
    assert out == "Applied: Write: calc.py.\n"
    assert read(v0, "calc.py") == ORIGIN["calc_py_proposed"]

    code, out, err = run(capsys, "pending", "-C", str(v0), "apply", PENDING["modify"])
    assert (code, out, err) == (0, "Applied: Edit: greet.py.\n", "")
    assert read(v0, "greet.py") == before["greet.py"].replace("Helo", "Hello")

    code, out, err = run(
        capsys, "pending", "-C", str(v0), "discard", PENDING["create"], "--reason", "r"
    )
    assert (code, out, err) == (0, "Discarded: Write: docs/NOTES.md. Reason: r\n", "")
    assert not (v0 / "docs").exists()
    assert read(v0, "README.md") == before["README.md"]

    code, out, _ = run(capsys, "pending", "-C", str(v0), "list", "--json")
    assert code == 0 and json.loads(out) == {"actions": []}
    for action_id, reason in ((PENDING["multi_hunk_modify"], "ok"), (PENDING["create"], "r")):
        code, out, _ = run(capsys, "pending", "-C", str(v0), "show", action_id, "--json")
        assert code == 0 and json.loads(out)["resolution"]["reason"] == reason

    # The old journal entry sits under the two new ones, all undoable.
    code, out, _ = run(capsys, "undo", "-C", str(v0), "--list")
    assert code == 0
    assert re.findall(r"^(\d{6})\s+(\w+)\s.*?\s{2}(pa-\d+)\s{2}(.+?)\s+\((.+)\)$", out, re.M) == [
        ("000003", "undoable", PENDING["modify"], "Edit: greet.py", "greet.py"),
        ("000002", "undoable", PENDING["multi_hunk_modify"], "Write: calc.py", "calc.py"),
        ("000001", "undoable", ORIGIN["applied"], "Edit: README.md", "README.md"),
    ]


def test_part_of_an_old_multi_hunk_action(v0: Path, capsys: pytest.CaptureFixture[str]) -> None:
    multi = PENDING["multi_hunk_modify"]
    code, out, err = run(
        capsys, "pending", "-C", str(v0), "apply", multi, "--only", "calc.py#2", "--reason", "half"
    )
    assert (code, err) == (0, "")
    assert out == (
        "Applied 1 of 2 hunks: Write: calc.py. Reason: half\n"
        "Still pending as pa-6: calc.py hunk 1 (lines 1–4)\n"
    )
    calc = read(v0, "calc.py")
    assert calc.startswith('"""Small arithmetic helpers."""\n')
    assert calc.endswith(
        '    if b == 0:\n        raise ZeroDivisionError("b is 0")\n    return a / b\n'
    )
    code, out, _ = run(capsys, "pending", "-C", str(v0), "list", "--json")
    assert [a["id"] for a in json.loads(out)["actions"]] == [
        "pa-6",
        PENDING["create"],
        PENDING["modify"],
    ]


def test_undo_reverses_the_old_apply(v0: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "undo", "-C", str(v0), "--list")
    assert (code, err) == (0, "")
    assert re.fullmatch(
        r"000001  undoable  \d{4}-\d\d-\d\d \d\d:\d\d  pa-1  Edit: README\.md  \(README\.md\)\n",
        out,
    )

    code, out, err = run(capsys, "undo", "-C", str(v0))
    assert (code, out, err) == (0, "Undid: Edit: README.md (1 file: README.md).\n", "")
    assert read(v0, "README.md") == ORIGIN["files_before"]["README.md"]
    for rel in ("calc.py", "greet.py"):
        assert read(v0, rel) == ORIGIN["files_after"][rel]

    code, out, _ = run(capsys, "undo", "-C", str(v0), "--list")
    assert (code, out) == (0, "No applied changes in the journal.\n")
    code, _, err = run(capsys, "undo", "-C", str(v0))
    assert code == 1 and "Nothing to undo" in err
    # The old queue is untouched by the undo: its actions still apply.
    code, out, _ = run(capsys, "pending", "-C", str(v0), "apply", PENDING["modify"])
    assert (code, out) == (0, "Applied: Edit: greet.py.\n")
