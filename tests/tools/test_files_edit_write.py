"""edit and write: previews only, exact pending-action shape, repreview, apply wiring."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from redline.review.resolve import resolve_pending
from redline.review.result import ToolResult
from redline.review.store import PendingAction, PendingActionStore
from redline.tools.base import PREVIEW_BANNER, ToolContext
from redline.tools.files import (
    STORE_UNAVAILABLE,
    EditParams,
    EditTool,
    RepreviewError,
    WriteParams,
    WriteTool,
)
from redline.workspace.paths import ConfinementError
from redline.workspace.preview import FileCreate, FileModify


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet():\n    return 'hi'\n\n\nVALUE = 1\n")
    (root / "dup.txt").write_text("same\nother\nsame\n")
    return root


@pytest.fixture
def store() -> PendingActionStore:
    return PendingActionStore(clock=lambda: 100.0)


async def _edit(root: Path, store: PendingActionStore | None, path: str, old: str, new: str):
    return await EditTool().execute(
        EditParams(path=path, old=old, new=new), ToolContext(cwd=root, store=store)
    )


async def _write(root: Path, store: PendingActionStore | None, path: str, content: str):
    return await WriteTool().execute(
        WriteParams(path=path, content=content), ToolContext(cwd=root, store=store)
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- edit: the preview -----------------------------------------------------------


async def test_edit_pushes_exact_pending_action_and_writes_nothing(
    ws: Path, store: PendingActionStore
) -> None:
    before = (ws / "src" / "app.py").read_bytes()
    result = await _edit(ws, store, "src/app.py", "return 'hi'", "return 'hello'")
    assert not result.is_error
    assert (ws / "src" / "app.py").read_bytes() == before

    action = store.peek()
    assert action is not None and store.count == 1
    assert action.id == "pa-1"
    assert action.label == "Edit: src/app.py"
    assert action.source_tool_name == "edit"
    assert action.repreview is not None
    assert action.preview is not None
    (change,) = action.preview.changes
    assert isinstance(change, FileModify)
    assert change.path == "src/app.py"
    assert change.old_sha256 == hashlib.sha256(before).hexdigest()
    assert change.old_text == before.decode()
    assert change.new_text == before.decode().replace("'hi'", "'hello'")
    assert change.encoding == "utf-8"

    lines = result.text.splitlines()
    assert lines[0] == PREVIEW_BANNER
    assert lines[1] == "Edit src/app.py (+1 -1 lines; pending action pa-1)."
    assert "--- a/src/app.py\n+++ b/src/app.py\n" in result.text
    assert "-    return 'hi'\n+    return 'hello'\n" in result.text
    assert result.details["action_id"] == "pa-1"
    assert result.details["source_tool_name"] == "edit"
    assert result.details["preview"]["files"] == [
        {"kind": "modify", "path": "src/app.py", "added": 1, "removed": 1}
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("nothere", "x", "`old` not found in src/app.py."),
        ("VALUE", "VALUE", "`old` and `new` are identical; the edit would change nothing"),
        ("", "x", "`old` is empty; to create or replace a whole file, use write"),
    ],
)
async def test_edit_error_results(
    ws: Path, store: PendingActionStore, old: str, new: str, message: str
) -> None:
    result = await _edit(ws, store, "src/app.py", old, new)
    assert result.is_error
    assert result.text.startswith(message)
    assert not store.has_pending


async def test_edit_ambiguous_says_how_many_and_to_add_context(
    ws: Path, store: PendingActionStore
) -> None:
    result = await _edit(ws, store, "dup.txt", "same", "new")
    assert result.is_error
    assert result.text == (
        "`old` is ambiguous: it occurs 2 times in dup.txt. Add surrounding lines to `old` "
        "so it matches exactly once."
    )
    ok = await _edit(ws, store, "dup.txt", "same\nother", "new\nother")
    assert not ok.is_error


async def test_edit_counts_overlapping_occurrences(ws: Path, store: PendingActionStore) -> None:
    (ws / "a.txt").write_text("aaa\n")
    result = await _edit(ws, store, "a.txt", "aa", "b")
    assert result.is_error
    assert "occurs 2 times" in result.text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("src", "src is a directory, not a file"),
        ("missing.py", "missing.py: no such file"),
        ("../outside.txt", "../outside.txt: path leads outside the workspace"),
        (".git/config", ".git/config: redline never touches files inside .git/"),
        (".redline/x", ".redline/x: redline never touches files inside .redline/"),
    ],
)
async def test_edit_path_errors(
    ws: Path, store: PendingActionStore, path: str, message: str
) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws.parent / "outside.txt").write_text("[core]\n")
    result = await _edit(ws, store, path, "[core]", "[x]")
    assert result.is_error
    assert result.text == message
    assert not store.has_pending


async def test_edit_refuses_binary_and_non_utf8(ws: Path, store: PendingActionStore) -> None:
    (ws / "bin.dat").write_bytes(b"abc\x00def")
    (ws / "latin.txt").write_bytes(b"caf\xe9 abc\n")
    binary = await _edit(ws, store, "bin.dat", "abc", "x")
    latin = await _edit(ws, store, "latin.txt", "abc", "x")
    assert binary.is_error and "binary file" in binary.text
    assert latin.is_error and "not valid UTF-8" in latin.text
    assert not store.has_pending


async def test_edit_refuses_symlink_outside(
    ws: Path, store: PendingActionStore, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n")
    (ws / "link.txt").symlink_to(secret)
    result = await _edit(ws, store, "link.txt", "token", "stolen")
    assert result.is_error
    assert "symlink leads outside the workspace" in result.text
    assert secret.read_text() == "token\n"


async def test_edit_refuses_absolute_outside(
    ws: Path, store: PendingActionStore, tmp_path: Path
) -> None:
    other = tmp_path / "other.txt"
    other.write_text("a\n")
    result = await _edit(ws, store, str(other), "a", "b")
    assert result.is_error
    assert "absolute path outside the workspace" in result.text


async def test_edit_refuses_huge_file(
    ws: Path, store: PendingActionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.tools.files import _common

    monkeypatch.setattr(_common, "MAX_EDIT_BYTES", 8)
    result = await _edit(ws, store, "src/app.py", "VALUE", "X")
    assert result.is_error
    assert "too large to edit" in result.text


async def test_edit_without_store_is_an_error(ws: Path) -> None:
    result = await _edit(ws, None, "src/app.py", "VALUE", "X")
    assert result.is_error
    assert result.text == STORE_UNAVAILABLE


# -- edit: encodings and line endings -----------------------------------------------


async def test_crlf_file_round_trips_outside_the_edit(ws: Path, store: PendingActionStore) -> None:
    data = b"one\r\ntwo\r\nthree\r\nlast line without newline"
    (ws / "win.txt").write_bytes(data)
    result = await _edit(ws, store, "win.txt", "two", "TWO")
    assert not result.is_error
    action = store.peek()
    assert action is not None and action.preview is not None
    (change,) = action.preview.changes
    assert isinstance(change, FileModify)
    assert change.old_text == data.decode()
    assert change.new_text == "one\r\nTWO\r\nthree\r\nlast line without newline"


async def test_crlf_file_accepts_lf_old_and_keeps_crlf(ws: Path, store: PendingActionStore) -> None:
    (ws / "win.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    result = await _edit(ws, store, "win.txt", "a\nb\n", "A\nB\nextra\n")
    assert not result.is_error
    action = store.peek()
    assert action is not None and action.preview is not None
    (change,) = action.preview.changes
    assert isinstance(change, FileModify)
    assert change.new_text == "A\r\nB\r\nextra\r\nc\r\n"


async def test_bom_file_keeps_its_encoding(ws: Path, store: PendingActionStore) -> None:
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    await _edit(ws, store, "bom.txt", "hello", "bye")
    action = store.peek()
    assert action is not None and action.preview is not None
    (change,) = action.preview.changes
    assert isinstance(change, FileModify)
    assert (change.old_text, change.new_text, change.encoding) == ("hello\n", "bye\n", "utf-8-sig")


# -- edit: repreview ---------------------------------------------------------------


async def test_edit_repreview_recomputes_against_current_file(
    ws: Path, store: PendingActionStore
) -> None:
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    action = store.peek()
    assert action is not None and action.repreview is not None
    target = ws / "src" / "app.py"
    target.write_text("# a new header\n" + target.read_text())

    fresh = action.repreview()
    assert isinstance(fresh, PendingAction)
    assert fresh.id == ""  # not pushed: the caller replaces the old one
    assert fresh.label == "Edit: src/app.py" and fresh.source_tool_name == "edit"
    assert fresh.preview is not None
    (change,) = fresh.preview.changes
    assert isinstance(change, FileModify)
    assert change.old_sha256 == _sha(target)
    assert change.new_text == target.read_text().replace("VALUE = 1", "VALUE = 2")
    replaced = store.replace(action.id, fresh)
    assert replaced.id == "pa-2"
    assert fresh.repreview is not None
    again = fresh.repreview()
    assert again.preview == fresh.preview


async def test_edit_repreview_fails_when_old_is_gone_or_ambiguous(
    ws: Path, store: PendingActionStore
) -> None:
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    action = store.peek()
    assert action is not None and action.repreview is not None
    target = ws / "src" / "app.py"
    target.write_text("VALUE = 3\n")
    with pytest.raises(RepreviewError, match=r"`old` not found in src/app\.py"):
        action.repreview()
    target.write_text("VALUE = 1\nVALUE = 1\n")
    with pytest.raises(RepreviewError, match="occurs 2 times"):
        action.repreview()
    target.unlink()
    with pytest.raises(RepreviewError, match="no such file"):
        action.repreview()


# -- write -------------------------------------------------------------------------


async def test_write_new_file_is_a_create_preview(ws: Path, store: PendingActionStore) -> None:
    result = await _write(ws, store, "pkg/new.py", "x = 1\r\ny = 2\r\n")
    assert not result.is_error
    assert not (ws / "pkg").exists()
    action = store.peek()
    assert action is not None
    assert action.label == "Write: pkg/new.py"
    assert action.source_tool_name == "write"
    assert action.repreview is not None
    assert action.preview is not None
    assert action.preview.changes == (
        FileCreate(path="pkg/new.py", new_text="x = 1\r\ny = 2\r\n", encoding="utf-8"),
    )
    lines = result.text.splitlines()
    assert lines[0] == PREVIEW_BANNER
    assert lines[1] == "Create pkg/new.py (+2 -0 lines; pending action pa-1)."
    assert "--- /dev/null\n+++ b/pkg/new.py\n" in result.text


async def test_write_existing_file_is_a_modify_keeping_encoding(
    ws: Path, store: PendingActionStore
) -> None:
    (ws / "bom.txt").write_bytes(b"\xef\xbb\xbfold\n")
    result = await _write(ws, store, "bom.txt", "\ufeffnew\n")
    assert result.text.splitlines()[1] == "Overwrite bom.txt (+1 -1 lines; pending action pa-1)."
    action = store.peek()
    assert action is not None and action.preview is not None
    assert action.preview.changes == (
        FileModify(
            path="bom.txt",
            old_sha256=_sha(ws / "bom.txt"),
            old_text="old\n",
            new_text="new\n",
            encoding="utf-8-sig",
        ),
    )


async def test_write_identical_content_pushes_nothing(ws: Path, store: PendingActionStore) -> None:
    result = await _write(ws, store, "dup.txt", "same\nother\nsame\n")
    assert not result.is_error
    assert result.text == "dup.txt already has exactly this content; nothing to write."
    assert not store.has_pending


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("src", "src is a directory; write needs a file path"),
        (".", ". is a directory; write needs a file path"),
        ("dup.txt/inner.txt", "cannot write dup.txt/inner.txt: dup.txt is a file, not a directory"),
        ("../escape.txt", "../escape.txt: path leads outside the workspace"),
        (
            ".git/hooks/pre-commit",
            ".git/hooks/pre-commit: redline never touches files inside .git/",
        ),
        (".venv/x.py", ".venv/x.py: redline never touches files inside .venv/"),
    ],
)
async def test_write_path_errors(
    ws: Path, store: PendingActionStore, path: str, message: str
) -> None:
    result = await _write(ws, store, path, "data\n")
    assert result.is_error
    assert result.text == message
    assert not store.has_pending
    assert not (ws.parent / "escape.txt").exists()


async def test_write_refuses_symlinked_folder_outside(
    ws: Path, store: PendingActionStore, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws / "out").symlink_to(elsewhere, target_is_directory=True)
    result = await _write(ws, store, "out/new.txt", "x\n")
    assert result.is_error
    assert "symlink leads outside the workspace" in result.text


async def test_write_refuses_binary_overwrite(ws: Path, store: PendingActionStore) -> None:
    (ws / "img.png").write_bytes(b"\x89PNG\x00\x00")
    result = await _write(ws, store, "img.png", "text\n")
    assert result.is_error
    assert result.text.startswith("cannot overwrite img.png: binary file")


async def test_write_without_store_is_an_error(ws: Path) -> None:
    result = await _write(ws, None, "a.txt", "x")
    assert result == ToolResult.error(STORE_UNAVAILABLE)


async def test_write_repreview_switches_between_create_and_modify(
    ws: Path, store: PendingActionStore
) -> None:
    await _write(ws, store, "notes.txt", "final\n")
    action = store.peek()
    assert action is not None and action.repreview is not None
    (ws / "notes.txt").write_text("someone else\n")
    fresh = action.repreview()
    assert fresh.preview is not None
    (change,) = fresh.preview.changes
    assert isinstance(change, FileModify)
    assert (change.old_text, change.new_text) == ("someone else\n", "final\n")
    (ws / "notes.txt").write_text("final\n")
    with pytest.raises(RepreviewError, match="already has exactly this content"):
        action.repreview()


async def test_lifo_stack_of_several_previews(ws: Path, store: PendingActionStore) -> None:
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    await _write(ws, store, "new.txt", "n\n")
    assert [a.label for a in store.snapshot()] == ["Write: new.txt", "Edit: src/app.py"]


# -- apply wiring (a stand-in safe_apply records the call) ----------------------------


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.validated: list[Any] = []
        self.refuse: str | None = None


@pytest.fixture
def fake_safe_apply(monkeypatch: pytest.MonkeyPatch) -> _Recorder:
    recorder = _Recorder()
    module = types.ModuleType("redline.workspace.safe_apply")

    def apply_preview(root: Path, preview: Any, **kwargs: Any) -> Any:
        recorder.calls.append({"root": root, "preview": preview, **kwargs})
        return types.SimpleNamespace(entry_id="j-1", files=[c.path for c in preview.changes])

    def validate_preview(root: Path, preview: Any) -> None:
        recorder.validated.append(preview)
        if recorder.refuse:
            raise ConfinementError(recorder.refuse)

    module.apply_preview = apply_preview  # type: ignore[attr-defined]
    module.validate_preview = validate_preview  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "redline.workspace.safe_apply", module)
    return recorder


async def test_apply_goes_through_safe_apply_with_action_id(
    ws: Path, store: PendingActionStore, fake_safe_apply: _Recorder
) -> None:
    await _write(ws, store, "first.txt", "1\n")
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    top = store.peek()
    assert top is not None
    assert fake_safe_apply.validated == [store.snapshot()[1].preview, top.preview]

    result = await resolve_pending(store, "apply", "looks right")
    assert not result.is_error
    assert result.text == "Applied edit to src/app.py."
    assert result.result_details == {"entry_id": "j-1", "files": ["src/app.py"]}
    (call,) = fake_safe_apply.calls
    assert call["root"] == ws
    assert call["preview"] is top.preview
    assert call["label"] == "Edit: src/app.py"
    assert call["source_tool_name"] == "edit"
    assert call["action_id"] == "pa-2"

    written = await resolve_pending(store, "apply", "ok")
    assert written.text == "Applied write to first.txt (created)."
    assert fake_safe_apply.calls[1]["source_tool_name"] == "write"
    assert fake_safe_apply.calls[1]["action_id"] == "pa-1"
    assert not store.has_pending


async def test_replaced_action_applies_under_its_new_id(
    ws: Path, store: PendingActionStore, fake_safe_apply: _Recorder
) -> None:
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    action = store.peek()
    assert action is not None and action.repreview is not None
    fresh = action.repreview()
    assert isinstance(fresh, PendingAction)
    store.replace(action.id, fresh)
    await resolve_pending(store, "apply", "ok")
    assert fake_safe_apply.calls[0]["action_id"] == "pa-2"


async def test_validate_refusal_is_an_error_result(
    ws: Path, store: PendingActionStore, fake_safe_apply: _Recorder
) -> None:
    fake_safe_apply.refuse = "src/app.py: refused by validation"
    result = await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    assert result == ToolResult.error("src/app.py: refused by validation")
    assert not store.has_pending


async def test_discard_never_calls_safe_apply(
    ws: Path, store: PendingActionStore, fake_safe_apply: _Recorder
) -> None:
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    result = await resolve_pending(store, "discard", "not now")
    assert not result.is_error
    assert fake_safe_apply.calls == []
    assert "VALUE = 1" in (ws / "src" / "app.py").read_text()


# -- apply for real (needs redline.workspace.safe_apply) ------------------------------


@pytest.fixture
def real_safe_apply() -> types.ModuleType:
    return pytest.importorskip("redline.workspace.safe_apply")


async def test_real_apply_writes_edit_and_write(
    ws: Path, store: PendingActionStore, real_safe_apply: types.ModuleType
) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "win.txt").write_bytes(b"a\r\nb\r\n")
    await _edit(ws, store, "win.txt", "b", "B")
    await _write(ws, store, "deep/new.txt", "made\n")
    first = await resolve_pending(store, "apply", "ok")
    second = await resolve_pending(store, "apply", "ok")
    assert not first.is_error, first.text
    assert not second.is_error, second.text
    assert (ws / "deep" / "new.txt").read_text() == "made\n"
    assert (ws / "win.txt").read_bytes() == b"a\r\nB\r\n"


async def test_real_apply_of_stale_edit_fails_and_keeps_action(
    ws: Path, store: PendingActionStore, real_safe_apply: types.ModuleType
) -> None:
    await _edit(ws, store, "src/app.py", "VALUE = 1", "VALUE = 2")
    target = ws / "src" / "app.py"
    target.write_text(target.read_text() + "# changed meanwhile\n")
    result = await resolve_pending(store, "apply", "ok")
    assert result.is_error
    assert "src/app.py" in result.text
    assert store.count == 1
    assert target.read_text().endswith("VALUE = 1\n# changed meanwhile\n")

    action = store.peek()
    assert action is not None and action.repreview is not None
    store.replace(action.id, action.repreview())
    retried = await resolve_pending(store, "apply", "after repreview")
    assert not retried.is_error, retried.text
    assert "VALUE = 2\n# changed meanwhile\n" in target.read_text()


async def test_real_write_create_fails_if_file_appeared(
    ws: Path, store: PendingActionStore, real_safe_apply: types.ModuleType
) -> None:
    await _write(ws, store, "late.txt", "mine\n")
    (ws / "late.txt").write_text("theirs\n")
    result = await resolve_pending(store, "apply", "ok")
    assert result.is_error
    assert (ws / "late.txt").read_text() == "theirs\n"
    assert store.count == 1
