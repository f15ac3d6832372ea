"""A queue, journal and undo history written by redline before queue format version 2
(commit 9446227: version 1 records, details as plain dicts, no ``kind``) are still read,
listed, shown the same, applied, discarded and undone by the current code (issue 43).

The fixture (tests/fixtures/compat/before-v2/, made by
tests/fixtures/compat/make_fixture_before_v2.py with that code) is re-signed for the folder
the test runs in, as for v0 (tests/workspace/test_compat_v0.py): the signing scheme did not
change. ``expected.json`` holds what that version printed for ``pending list --json``,
``pending show`` (text and ``--json``) and ``undo --list``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.workspace.test_compat_v0 import relocate

from redline.cli import main
from redline.workspace.details import (
    AstEditDetails,
    FileChangeDetails,
    PermissionDetails,
    details_from_json,
    details_to_json,
)
from redline.workspace.queue import FORMAT_VERSION, WorkspaceQueue

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "compat" / "before-v2"
ORIGIN: dict[str, Any] = json.loads((FIXTURE / "ORIGIN.json").read_text(encoding="utf-8"))
EXPECTED: dict[str, Any] = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
IDS: dict[str, str] = ORIGIN["ids"]


@pytest.fixture
def old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(FIXTURE / "workspace", tmp_path / "workspace")
    root = tmp_path / "workspace"
    (root / "dot-redline").rename(root / ".redline")
    shutil.copytree(FIXTURE / "config", tmp_path / "config")
    os.chmod(tmp_path / "config" / "state.key", 0o600)
    for folder in [root / ".redline", *(p for p in (root / ".redline").rglob("*") if p.is_dir())]:
        os.chmod(folder, 0o700)
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(tmp_path / "config"))
    key = (tmp_path / "config" / "state.key").read_bytes()
    # 7 pending records, 3 resolutions, 3 journal entries (an apply, an apply, its undo).
    assert relocate(root / ".redline", key, ORIGIN["root"], str(root.resolve())) == 13
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_fixture_is_version_1() -> None:
    assert ORIGIN["commit"] == "9446227" and FORMAT_VERSION == 2
    for path in (FIXTURE / "workspace" / "dot-redline" / "queue" / "actions").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8").partition("\n")[2])
        assert record["version"] == 1 and "kind" not in record


def with_conversation(shown: dict[str, Any]) -> dict[str, Any]:
    """What main printed, with what issue 47 adds to `pending show --json` on purpose: the
    files as {"path", "viewed"} and the action's (here: no) comments."""
    files = [{"path": path, "viewed": False} for path in shown.get("files", [])]
    return {**shown, "files": files, "comments": []}


def test_listed_and_shown_as_before(old: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "pending", "-C", str(old), "list", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == EXPECTED["list"]
    for action_id, shown in EXPECTED["show"].items():
        code, out, err = run(capsys, "pending", "-C", str(old), "show", action_id, "--json")
        assert (code, err) == (0, ""), action_id
        assert json.loads(out) == with_conversation(shown), action_id
        code, out, err = run(capsys, "pending", "-C", str(old), "show", action_id)
        assert (code, err) == (0, ""), action_id
        assert out == EXPECTED["show_text"][action_id], action_id


def test_old_details_read_typed_and_back_unchanged(old: Path) -> None:
    with WorkspaceQueue(old) as queue:
        records = {r.id: r for r in queue.list()}
    kinds = {name: records[IDS[name]].kind for name in IDS if IDS[name] in records}
    kinds["custom"] = kinds.pop("custom_rebased")
    assert kinds == {
        "ast_edit": "ast_edit",
        "hook_change": "file_change",
        "hook_shell": "permission",
        "acp_write": "file_change",
        "acp_permission": "permission",
        "custom": "custom",
        "import": "file_change",
    }
    for record in records.values():
        typed = details_from_json(record.kind, record.details)
        assert details_to_json(typed) == record.details, record.id
    ast = details_from_json("ast_edit", records[IDS["ast_edit"]].details)
    assert isinstance(ast, AstEditDetails) and ast.replacements == 2 and ast.files == ("code.py",)
    hook = details_from_json("file_change", records[IDS["hook_change"]].details)
    assert isinstance(hook, FileChangeDetails) and hook.call is not None
    assert (hook.call.agent, hook.call.tool_name, hook.extra) == ("claude", "Write", {})
    shell = details_from_json("permission", records[IDS["hook_shell"]].details)
    assert isinstance(shell, PermissionDetails) and shell.tool_input is not None
    assert shell.tool_input["command"] == "npm test" and shell.extra == {}
    acp = details_from_json("permission", records[IDS["acp_permission"]].details)
    assert isinstance(acp, PermissionDetails) and acp.acp and acp.extra == {}
    assert (acp.tool_kind, acp.agent_ended) == ("edit", "exited with status 1")
    assert acp.diffs is not None and acp.diffs[0].old_text is None
    write = details_from_json("file_change", records[IDS["acp_write"]].details)
    assert isinstance(write, FileChangeDetails) and write.acp and write.extra == {}
    assert (write.path, write.change) == ("acp.txt", "create")
    imported = details_from_json("file_change", records[IDS["import"]].details)
    assert isinstance(imported, FileChangeDetails) and imported.imported is not None
    assert imported.imported.author == "Ann <ann@example.org>" and imported.extra == {}


def test_old_actions_apply_discard_and_undo(old: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pending = ["pending", "-C", str(old)]
    code, out, err = run(capsys, *pending, "apply", IDS["ast_edit"], "--reason", "ok")
    assert (code, err) == (0, ""), out
    assert (old / "code.py").read_text(encoding="utf-8") == (
        "def f(x):\n    log(x)\n    log(x, x)\n"
    )
    code, out, err = run(capsys, *pending, "apply", IDS["custom_rebased"], "--only", "a.txt#1")
    assert (code, err) == (0, ""), out
    assert (old / "a.txt").read_text(encoding="utf-8") == ORIGIN["a_new"].replace("13", "XIII")
    for name in ("hook_change", "hook_shell", "acp_permission"):
        code, out, err = run(capsys, *pending, "discard", IDS[name], "--reason", "not now")
        assert (code, err) == (0, ""), (name, out)
    code, out, err = run(capsys, *pending, "apply", IDS["acp_write"], IDS["import"])
    assert code == 0, out + err
    assert (old / "acp.txt").read_text(encoding="utf-8") == "from the agent\n"
    code, out, _ = run(capsys, *pending, "list", "--json")
    assert code == 0 and json.loads(out) == {"actions": []}
    # A record the current code rewrites on its way out is read back from the resolved log.
    code, out, _ = run(capsys, *pending, "show", IDS["hook_shell"], "--json")
    assert code == 0 and json.loads(out)["resolution"]["reason"] == "not now"

    # The old entries sit under the new ones; each one undoes, the old apply last.
    code, out, _ = run(capsys, "undo", "-C", str(old), "--list")
    assert code == 0
    listed = re.findall(r"^(\d{6})\s+(\w+)\s.*?\s{2}(pa-\d+)\s{2}", out, re.M)
    # (blocked until the newer applies to a.txt are undone first)
    assert listed[-1] == ("000001", "blocked", IDS["edit"])
    old_line = EXPECTED["undo_list"].splitlines()[-1]
    assert old_line.replace("undoable", "blocked ") in out.splitlines()
    assert len(listed) == 5
    for _ in listed:
        code, out, err = run(capsys, "undo", "-C", str(old))
        assert (code, err) == (0, ""), out
    assert (old / "a.txt").read_text(encoding="utf-8") == ORIGIN["a_old"]
    assert (old / "code.py").read_text(
        encoding="utf-8"
    ) == "def f(x):\n    print(x)\n    print(x, x)\n"
    assert not (old / "acp.txt").exists() and not (old / "imported.txt").exists()


def test_version_2_keeps_the_hunk_numbering() -> None:
    """Hunks named in version 2 queue files are numbered as the dashboard numbers them."""
    from redline.workspace.hunks import HUNK_NUMBERING
    from redline.workspace.queue.records import RECORD_HUNK_NUMBERING

    assert RECORD_HUNK_NUMBERING == HUNK_NUMBERING
