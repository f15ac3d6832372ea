"""``redline pending repreview ID [--json]``: a stale action proposed again against the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue


def _push(root: Path, path: str, old: str, new: str, *, kind: str = "exec") -> str:
    preview = Preview([FileModify(path, sha256_bytes(old.encode()), old, new)])
    draft = ActionDraft(
        label=f"edit {path}",
        source=Source.current(kind, "test", "s1"),
        source_tool_name="edit",
        preview=preview,
        applied_by="owner" if kind == "hook" else None,
    )
    with WorkspaceQueue(root) as queue:
        return queue.push(draft).id


def _run(capfd: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture
def stale(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "a.py").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
    action = _push(
        tmp_path,
        "a.py",
        "one\ntwo\nthree\nfour\nfive\nsix\n",
        "one\ntwo\nthree\nfour\nfive\nSIX\n",
    )
    (tmp_path / "a.py").write_text("ONE\ntwo\nthree\nfour\nfive\nsix\n")
    return tmp_path, action


def test_a_stale_action_is_merged_onto_the_files_under_a_new_id(
    stale: tuple[Path, str], capfd: pytest.CaptureFixture[str]
) -> None:
    root, action = stale
    code, out, _err = _run(capfd, "-C", str(root), "pending", "repreview", action)
    assert code == 0
    assert out.strip() == f"{action} is now pa-2"
    code, out, _err = _run(capfd, "-C", str(root), "pending", "apply", "pa-2")
    assert code == 0, out
    assert (root / "a.py").read_text() == "ONE\ntwo\nthree\nfour\nfive\nSIX\n"


def test_json_names_the_new_id(stale: tuple[Path, str], capfd: pytest.CaptureFixture[str]) -> None:
    root, action = stale
    code, out, _err = _run(capfd, "-C", str(root), "pending", "repreview", action, "--json")
    assert code == 0
    assert json.loads(out) == {"id": action, "new_id": "pa-2"}


def test_an_action_that_is_not_stale_is_left_alone(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    action = _push(tmp_path, "a.py", "x = 1\n", "x = 2\n")
    code, out, _err = _run(capfd, "-C", str(tmp_path), "pending", "repreview", action)
    assert (code, out.strip()) == (0, f"{action} is not stale; nothing to do")
    code, out, _err = _run(capfd, "-C", str(tmp_path), "pending", "repreview", action, "--json")
    assert code == 0 and json.loads(out) == {"id": action, "new_id": None}
    with WorkspaceQueue(tmp_path) as queue:
        assert [record.id for record in queue.list()] == [action]


def test_a_conflict_exits_1_naming_the_files(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    action = _push(tmp_path, "a.py", "x = 1\n", "x = 2\n")
    (tmp_path / "a.py").write_text("x = 3\n")
    code, out, err = _run(capfd, "-C", str(tmp_path), "pending", "repreview", action)
    assert code == 1 and "a.py" in err and out == ""
    code, out, _err = _run(capfd, "-C", str(tmp_path), "pending", "repreview", action, "--json")
    assert code == 1 and json.loads(out) == {"id": action, "conflict": ["a.py"]}
    assert (tmp_path / "a.py").read_text() == "x = 3\n"
    with WorkspaceQueue(tmp_path) as queue:
        assert [record.id for record in queue.list()] == [action]


@pytest.mark.parametrize(
    "ids", [["pa-x"], ["pa-99"], ["pa-1", "pa-2"]], ids=["malformed", "unknown", "several"]
)
def test_a_bad_id_or_several_ids_exit_2(
    ids: list[str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    _push(tmp_path, "a.py", "x = 1\n", "x = 2\n")
    _push(tmp_path, "a.py", "x = 1\n", "x = 3\n")
    code, _out, err = _run(capfd, "-C", str(tmp_path), "pending", "repreview", *ids)
    assert code == 2 and err.startswith("redline pending")
    assert "Traceback" not in err


def test_an_action_its_hook_waits_on_says_to_ask_the_agent(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    action = _push(tmp_path, "a.py", "x = 1\n", "x = 2\n", kind="hook")
    (tmp_path / "a.py").write_text("x = 5\n")
    code, _out, err = _run(capfd, "-C", str(tmp_path), "pending", "repreview", action)
    assert code == 1
    assert (
        f"{action} is waiting in its agent's hook: ask the agent to propose again, "
        "or discard it" in err
    )
