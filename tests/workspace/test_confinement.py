"""Confinement: refused at preview time (validate_preview) and again at apply time."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.workspace import paths
from redline.workspace.preview import FileCreate, FileDelete, FileModify, FileRename, Preview
from redline.workspace.safe_apply import (
    ApplyError,
    ConfinementError,
    apply_preview,
    check_preview,
    validate_preview,
)

from .helpers import snapshot, write

BAD_PATHS = [
    ("../escape.txt", "path leads outside the workspace"),
    ("src/../../escape.txt", "path leads outside the workspace"),
    ("/etc/passwd", "absolute path outside the workspace"),
    (".git/config", "redline never touches files inside .git/"),
    (".redline/journal/x", "redline never touches files inside .redline/"),
    (".venv/lib/site.py", "redline never touches files inside .venv/"),
    ("env/lib/site.py", "redline never touches files inside env/"),
    ("out/secret.txt", "symlink leads outside the workspace"),
    ("gitlink/HEAD", "redline never touches files inside .git/"),
]


@pytest.fixture
def guarded(ws: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (ws / "out").symlink_to(outside)
    write(ws, ".git/HEAD", "ref: refs/heads/main\n")
    write(ws, ".git/config", "[core]\n")
    (ws / "gitlink").symlink_to(".git")
    write(ws, "env/pyvenv.cfg", "home = /usr\n")
    write(ws, "env/lib/site.py", "x = 1\n")
    write(ws, ".venv/lib/site.py", "x = 1\n")
    return ws


@pytest.mark.parametrize(("rel", "cause"), BAD_PATHS)
def test_bad_path_refused_at_preview_time(guarded: Path, rel: str, cause: str) -> None:
    with pytest.raises(ConfinementError) as info:
        validate_preview(guarded, Preview([FileCreate(rel, "x\n")]))
    assert cause in str(info.value)
    assert rel in str(info.value)
    # Both families catch it.
    assert isinstance(info.value, paths.ConfinementError)
    assert isinstance(info.value, ApplyError)


@pytest.mark.parametrize(("rel", "cause"), BAD_PATHS)
def test_bad_path_refused_at_apply_time_for_every_kind(guarded: Path, rel: str, cause: str) -> None:
    before = snapshot(guarded)
    outside_before = (guarded.parent / "outside" / "secret.txt").read_bytes()
    changes = [
        FileCreate(rel, "x\n"),
        FileModify(rel, "0" * 64, "", "x\n"),
        FileDelete(rel, "0" * 64),
        FileRename("ok.txt", rel, "0" * 64),
        FileRename(rel, "ok2.txt", "0" * 64),
    ]
    for change in changes:
        with pytest.raises(
            ConfinementError, match="Refused: 1 path outside what redline may touch"
        ):
            apply_preview(guarded, Preview([change]))
    assert snapshot(guarded) == before
    assert (guarded.parent / "outside" / "secret.txt").read_bytes() == outside_before


def test_confinement_rechecked_at_apply_time(ws: Path, tmp_path: Path) -> None:
    # Fine when previewed; then a folder is swapped for a symlink leading outside.
    write(ws, "sub/a.txt", "a\n")
    preview = Preview([FileCreate("sub/b.txt", "b\n")])
    validate_preview(ws, preview)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws / "sub/a.txt").unlink()
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside)
    assert check_preview(ws, preview) == [
        f"sub/b.txt (symlink leads outside the workspace (to {outside.resolve()}/b.txt))"
    ]
    with pytest.raises(ConfinementError):
        apply_preview(ws, preview)
    assert list(outside.iterdir()) == []


def test_confinement_error_lists_every_bad_path(guarded: Path) -> None:
    preview = Preview(
        [FileCreate("../a", "x"), FileCreate("fine.txt", "x"), FileCreate(".git/b", "x")]
    )
    with pytest.raises(ConfinementError) as info:
        apply_preview(guarded, preview)
    assert info.value.files == ["../a", ".git/b"]
    assert str(info.value).startswith("Refused: 2 paths outside what redline may touch: ../a (")
    assert not (guarded / "fine.txt").exists()


def test_absolute_path_inside_the_workspace_is_allowed(ws: Path) -> None:
    apply_preview(ws, Preview([FileCreate(str(ws.resolve() / "abs.txt"), "x\n")]))
    assert (ws / "abs.txt").read_text() == "x\n"
