"""Claude Code's recorded hook payloads → the whole-file change, and malformed payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from redline.drivers.hooks.mapping import MappingError, map_call
from redline.drivers.hooks.payload import PayloadError, parse_payload

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks" / "claude"
RECORDED_ROOT = "/tmp/rec/proj"


def recorded(name: str, root: Path, **tool_input: Any) -> bytes:
    """A recorded payload moved into ``root`` (its cwd and paths), ``tool_input`` overrides."""
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    for key, value in list(data["tool_input"].items()):
        if isinstance(value, str) and value.startswith(RECORDED_ROOT):
            data["tool_input"][key] = str(root) + value[len(RECORDED_ROOT) :]
    data["tool_input"].update(tool_input)
    return json.dumps(data).encode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("hello\nworld\n", encoding="utf-8")
    return tmp_path


def test_write_of_a_new_file(root: Path) -> None:
    payload = parse_payload("claude", recorded("pre-write.json", root))
    assert payload.is_pre and payload.tool_use_id and payload.session_id
    change = map_call(root, payload)
    assert change is not None
    assert (change.rel, change.old_text, change.new_text) == ("new.txt", None, "new file\n")


def test_write_over_an_existing_file(root: Path) -> None:
    change = map_call(root, parse_payload("claude", recorded("pre-write-2.json", root)))
    assert change is not None
    assert (change.rel, change.old_text, change.new_text) == (
        "a.txt",
        "hello\nworld\n",
        "overwritten\n",
    )


def test_edit_is_applied_to_the_file_on_disk(root: Path) -> None:
    change = map_call(root, parse_payload("claude", recorded("pre-edit.json", root)))
    assert change is not None
    assert change.new_text == "hello\nthere\n"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"old_string": "zzz"}, "String to replace not found in file.\nString: zzz"),
        ({"old_string": "l", "new_string": "L"}, "Found 3 matches of the string to replace"),
        ({"old_string": "same", "new_string": "same"}, "No changes to make"),
    ],
)
def test_edit_that_cannot_work_uses_claudes_wording(
    root: Path, override: dict[str, str], message: str
) -> None:
    payload = parse_payload("claude", recorded("pre-edit.json", root, **override))
    with pytest.raises(MappingError) as caught:
        map_call(root, payload)
    assert message in str(caught.value)


def test_edit_with_replace_all(root: Path) -> None:
    payload = parse_payload(
        "claude", recorded("pre-edit.json", root, old_string="l", new_string="L", replace_all=True)
    )
    change = map_call(root, payload)
    assert change is not None and change.new_text == "heLLo\nworLd\n"


def test_notebook_edit_matches_what_claude_code_wrote(root: Path) -> None:
    before = (FIXTURES / "notebook-before.ipynb").read_text(encoding="utf-8")
    (root / "nb.ipynb").write_text(before, encoding="utf-8")
    change = map_call(root, parse_payload("claude", recorded("pre-notebookedit.json", root)))
    assert change is not None
    assert change.new_text == (FIXTURES / "notebook-after.ipynb").read_text(encoding="utf-8")


def test_a_notebook_cell_that_is_not_an_object_is_refused_by_name(root: Path) -> None:
    """A cell the edit would replace that is not a JSON object: a clear refusal, no crash."""
    (root / "nb.ipynb").write_text(json.dumps({"cells": ["print(1)"]}), encoding="utf-8")
    payload = parse_payload("claude", recorded("pre-notebookedit.json", root, cell_id="cell-0"))
    with pytest.raises(MappingError, match="Notebook is not valid JSON"):
        map_call(root, payload)


def test_multi_edit_of_older_versions(root: Path) -> None:
    data = json.loads(recorded("pre-edit.json", root))
    data["tool_name"] = "MultiEdit"
    data["tool_input"] = {
        "file_path": str(root / "a.txt"),
        "edits": [
            {"old_string": "hello", "new_string": "hi"},
            {"old_string": "world", "new_string": "there"},
        ],
    }
    change = map_call(root, parse_payload("claude", json.dumps(data).encode()))
    assert change is not None and change.new_text == "hi\nthere\n"


@pytest.mark.parametrize("name", ["pre-read.json", "pre-bash.json"])
def test_other_tools_pass_through(root: Path, name: str) -> None:
    assert map_call(root, parse_payload("claude", recorded(name, root))) is None


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", ".git/config", ".redline/x"])
def test_paths_outside_the_workspace_are_blocked(root: Path, path: str) -> None:
    payload = parse_payload("claude", recorded("pre-write.json", root, file_path=path))
    with pytest.raises(MappingError, match="Blocked by redline"):
        map_call(root, payload)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "empty"),
        (b"not json", "not JSON"),
        (b"[1]", "not an object"),
        (b'{"hook_event_name": "PreToolUse"}', "`tool_name` is missing"),
        (
            b'{"hook_event_name": "Stop", "tool_name": "Write", "tool_input": {}, '
            b'"session_id": "s", "cwd": "/"}',
            "event 'Stop'",
        ),
        (
            b'{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": [], '
            b'"session_id": "s", "cwd": "/"}',
            "`tool_input` is missing or not an object",
        ),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_payloads_are_refused(raw: bytes, message: str) -> None:
    with pytest.raises(PayloadError, match=message):
        parse_payload("claude", raw)


def test_a_write_without_content_is_refused(root: Path) -> None:
    data = json.loads(recorded("pre-write.json", root))
    del data["tool_input"]["content"]
    payload = parse_payload("claude", json.dumps(data).encode())
    with pytest.raises(PayloadError, match=r"`tool_input.content` is missing"):
        map_call(root, payload)
