"""`redline pending edit`: any file name, whatever the editor leaves, never a lost edit."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, QueueError, Source, WorkspaceQueue


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system's temporary folder for this test: what is left in it is checked."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.delenv("VISUAL", raising=False)
    return folder


def _queue_edit(root: Path, name: str) -> None:
    old = "one\n"
    (root / name).write_text(old)
    preview = Preview([FileModify(name, sha256_bytes(old.encode()), old, "two\n")])
    WorkspaceQueue(root).push(
        ActionDraft(
            label=f"Edit {name}",
            source=Source.current("exec", "test", "s1"),
            source_tool_name="edit",
            preview=preview,
        )
    )


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    script = tmp_path / "fake-editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(script))


def _run(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["pending", "-C", str(root), *args])
    out, err = capfd.readouterr()
    return code, out, err


def _pending_text(root: Path, capfd: pytest.CaptureFixture[str]) -> list[str]:
    code, out, _ = _run(capfd, root, "list", "--json")
    assert code == 0
    return [item["id"] for item in json.loads(out)["actions"]]


@pytest.mark.parametrize("name", ["..~", ".~", ".. ", "...", "-rf", "a b.py", "é.txt"])
def test_any_file_name_can_be_edited(
    tmp_path: Path,
    tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    name: str,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _queue_edit(root, name)
    seen = tmp_path / "seen"
    _editor(
        tmp_path,
        monkeypatch,
        f'stat -c %a "$(dirname "$1")" > {seen}; echo "$1" >> {seen}; echo three > "$1"',
    )
    code, out, err = _run(capfd, root, "edit", "pa-1")
    assert code == 0, err
    assert out.strip() == f"Edited {name}: pa-1 is now pa-2 (edited)."
    mode, path = seen.read_text().splitlines()
    assert mode == "700"
    assert Path(path).parent.parent == tmp
    assert list(tmp.iterdir()) == []


def test_temp_names_are_always_file_names() -> None:
    from redline.commands._editor import temp_name

    for name in ("..~", ".~", ".. ", "..", ".", "", "~", "/", "\x00"):
        safe = temp_name(name)
        assert safe not in ("", ".", "..") and "/" not in safe and "\x00" not in safe
    assert temp_name("app.py") == "app.py"
    assert temp_name("-n") == "proposal-n"


def test_whatever_the_editor_leaves_beside_the_file_is_cleaned_up(
    tmp_path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _queue_edit(root, "a.txt")
    _editor(
        tmp_path,
        monkeypatch,
        'd="$(dirname "$1")"; mkdir -p "$d/.backup/deep"; echo x > "$d/.backup/deep/f"; '
        'echo y > "$d/a.txt~"; chmod 500 "$d/.backup/deep"; echo three > "$1"',
    )
    code, out, err = _run(capfd, root, "edit", "pa-1")
    assert code == 0, err
    assert "Traceback" not in err
    assert out.strip() == "Edited a.txt: pa-1 is now pa-2 (edited)."
    assert list(tmp.iterdir()) == []


def test_an_edit_that_cannot_be_read_back_is_kept_and_said_where(
    tmp_path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _queue_edit(root, "a.txt")
    # The editor saved elsewhere and left a folder where the file was.
    _editor(tmp_path, monkeypatch, 'echo three > "$1.saved"; rm "$1"; mkdir "$1"')
    code, _, err = _run(capfd, root, "edit", "pa-1")
    assert code == 1
    assert "Traceback" not in err
    assert "cannot read the edited text back" in err
    (folder,) = tmp.iterdir()
    assert f"kept in {folder}" in err
    assert (folder / "a.txt.saved").read_text() == "three\n"
    assert _pending_text(root, capfd) == ["pa-1"]


def test_an_edit_the_file_cannot_hold_is_kept_and_said_where(
    tmp_path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _queue_edit(root, "a.txt")
    _editor(tmp_path, monkeypatch, "printf 'three \\377\\n' > \"$1\"")
    code, _, err = _run(capfd, root, "edit", "pa-1")
    assert code == 1
    (folder,) = tmp.iterdir()
    kept = folder / "a.txt"
    assert f"your edited text is kept in {kept}" in err
    assert kept.read_bytes() == b"three \xff\n"
    assert _pending_text(root, capfd) == ["pa-1"]


def test_an_edit_the_queue_refuses_is_kept_and_said_where(
    tmp_path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _queue_edit(root, "a.txt")
    _editor(tmp_path, monkeypatch, 'echo three > "$1"')

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise QueueError("the queue folder is read-only")

    from redline.workspace.queue import claims

    monkeypatch.setattr(claims.Claim, "replace", refuse)
    code, _, err = _run(capfd, root, "edit", "pa-1")
    assert code == 1
    assert "the queue folder is read-only" in err
    (folder,) = tmp.iterdir()
    assert f"your edited text is kept in {folder / 'a.txt'}" in err
    assert (folder / "a.txt").read_text() == "three\n"


def test_cancelled_and_unchanged_edits_leave_nothing(
    tmp_path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _queue_edit(root, "a.txt")
    _editor(tmp_path, monkeypatch, 'mkdir "$1.d"; exit 3')
    code, out, _ = _run(capfd, root, "edit", "pa-1")
    assert code == 0 and "cancelled" in out
    _editor(tmp_path, monkeypatch, "true")
    code, out, _ = _run(capfd, root, "edit", "pa-1")
    assert code == 0 and "unchanged" in out
    assert list(tmp.iterdir()) == []
    assert os.environ["EDITOR"]
