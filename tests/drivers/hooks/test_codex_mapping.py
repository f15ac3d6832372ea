"""Codex's recorded apply_patch payloads → one change per file; the patch reader/writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from redline.drivers.hooks.codex_patch import (
    PatchError,
    apply_chunks,
    expressible,
    generate,
    parse,
)
from redline.drivers.hooks.mapping import MappingError, map_codex
from redline.drivers.hooks.payload import parse_payload

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks" / "codex"
RECORDED_ROOT = "/tmp/redline-e2e/ws"


def recorded(name: str, root: Path, **tool_input: Any) -> bytes:
    """A recorded Codex payload moved into ``root``; ``tool_input`` overrides."""
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    assert data["cwd"] == RECORDED_ROOT
    data["cwd"] = str(root)
    data["tool_input"].update(tool_input)
    return json.dumps(data).encode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello\n", encoding="utf-8")
    (ws / "gone.txt").write_text("bye\n", encoding="utf-8")
    return ws


def changes_of(root: Path, name: str) -> list[tuple[str, str | None, str, bool]]:
    payload = parse_payload("codex", recorded(name, root))
    assert payload.is_pre and payload.tool_name == "apply_patch"
    return [(c.rel, c.old_text, c.new_text, c.delete) for c in map_codex(root, payload)]


def test_update(root: Path) -> None:
    assert changes_of(root, "PreToolUse.apply_patch.update.json") == [
        ("hello.txt", "hello\n", "hello world\n", False)
    ]


def test_several_files_are_one_change_each(root: Path) -> None:
    assert changes_of(root, "PreToolUse.apply_patch.multi_file.json") == [
        ("new.txt", None, "brand new\nsecond line\n", False),
        ("gone.txt", "bye\n", "", True),
        ("hello.txt", "hello\n", "hello world\n", False),
    ]


def test_a_move_deletes_the_old_path_and_writes_the_new(root: Path) -> None:
    assert changes_of(root, "PreToolUse.apply_patch.move.json") == [
        ("hello.txt", "hello\n", "", True),
        ("moved.txt", None, "hello moved\n", False),
    ]


def test_a_patch_that_does_not_fit_is_refused_in_codex_words(root: Path) -> None:
    with pytest.raises(MappingError, match="apply_patch verification failed: Failed to find"):
        changes_of(root, "PreToolUse.apply_patch.verification_fails.json")


@pytest.mark.parametrize(
    ("command", "cause"),
    [
        ("not a patch", "must be '\\*\\*\\* Begin Patch'"),
        ("*** Begin Patch\n*** Update File: hello.txt\n", "must be '\\*\\*\\* End Patch'"),
        ("*** Begin Patch\n*** Frobnicate: x\n*** End Patch", "not a valid hunk header"),
        ("*** Begin Patch\n*** Update File: ../out.txt\n@@\n-a\n+b\n*** End Patch", "outside"),
        ("*** Begin Patch\n*** Add File: .git/config\n+x\n*** End Patch", ".git/"),
        ("*** Begin Patch\n*** Delete File: nothere.txt\n*** End Patch", "Failed to read file"),
    ],
)
def test_bad_patches_are_refused_with_the_cause(root: Path, command: str, cause: str) -> None:
    payload = parse_payload(
        "codex", recorded("PreToolUse.apply_patch.update.json", root, command=command)
    )
    with pytest.raises(MappingError, match=cause):
        map_codex(root, payload)


def test_chunks_use_context_and_fuzzy_whitespace_like_codex() -> None:
    text = "def f():\n    pass\n\ndef g():\n    pass  \n"
    [section] = parse(
        "*** Begin Patch\n*** Update File: m.py\n@@ def g():\n-    pass\n+    return 1\n"
        "*** End Patch"
    )
    assert apply_chunks(text, section.chunks, "m.py") == (
        "def f():\n    pass\n\ndef g():\n    return 1\n"
    )
    [section] = parse("*** Begin Patch\n*** Update File: m.py\n@@\n+tail\n*** End Patch")
    assert apply_chunks("a\nb", section.chunks, "m.py") == "a\nb\ntail\n"
    with pytest.raises(PatchError, match="Failed to find context 'nope'"):
        [section] = parse("*** Begin Patch\n*** Update File: m.py\n@@ nope\n-a\n*** End Patch")
        apply_chunks("a\n", section.chunks, "m.py")


@pytest.mark.parametrize(
    ("current", "wanted"),
    [
        ("hello\n", "hello, reviewed\n"),
        (None, "brand new\n\nwith a blank line\n"),
        ("a\nb\n", None),
        ("", "now something\n"),
        ("x\n", ""),
        ("*** End Patch\n-minus\n+plus\n", "@@ looks like a marker\n*** End of File\n"),
    ],
)
def test_a_generated_patch_makes_exactly_the_wanted_text(
    current: str | None, wanted: str | None
) -> None:
    [section] = parse(generate([("f.txt", current, wanted)]))
    if wanted is None:
        assert section.op == "delete"
    elif current is None:
        assert (section.op, section.contents) == ("add", wanted)
    else:
        assert apply_chunks(current, section.chunks, "f.txt") == wanted


def test_texts_codex_cannot_write_exactly() -> None:
    assert expressible("a\n") and expressible("")
    assert not expressible("no final newline")
    assert not expressible("windows\r\n")
