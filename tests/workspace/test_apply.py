"""Applying previews: results, kept modes/encodings, stale checks, bad input."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from redline.workspace import fsutil, paths, safe_apply
from redline.workspace.preview import FileCreate, FileModify, Preview, sha256_bytes
from redline.workspace.safe_apply import (
    ApplyError,
    ConfinementError,
    StaleError,
    WriteError,
    apply_preview,
    check_preview,
)

from .helpers import (
    create,
    delete,
    journal_is_clean,
    mixed_preview,
    modify,
    rename,
    snapshot,
    write,
)


def test_apply_every_kind_of_change(ws: Path) -> None:
    preview, _old, new = mixed_preview(ws)
    receipt = apply_preview(ws, preview, label="mixed", source_tool_name="edit", action_id="pa-3")
    assert snapshot(ws) == new
    assert receipt.entry_id == "000001"
    assert receipt.label == "mixed"
    assert receipt.files == list(preview.paths)
    assert journal_is_clean(ws)


def test_line_endings_and_bom_are_kept_byte_for_byte(ws: Path) -> None:
    write(ws, "crlf.txt", b"one\r\ntwo\r\n")
    write(ws, "bom.txt", b"\xef\xbb\xbfone\n")
    apply_preview(
        ws, Preview([modify(ws, "crlf.txt", "one\r\n2\r\n"), modify(ws, "bom.txt", "1\n")])
    )
    assert (ws / "crlf.txt").read_bytes() == b"one\r\n2\r\n"
    assert (ws / "bom.txt").read_bytes() == b"\xef\xbb\xbf1\n"


def test_file_mode_is_kept_and_rename_keeps_mode(ws: Path) -> None:
    write(ws, "run.sh", "#!/bin/sh\n", mode=0o751)
    write(ws, "tool.sh", "#!/bin/sh\n", mode=0o700)
    apply_preview(
        ws,
        Preview(
            [modify(ws, "run.sh", "#!/bin/sh\necho hi\n"), rename(ws, "tool.sh", "bin/tool.sh")]
        ),
    )
    assert stat.S_IMODE(os.stat(ws / "run.sh").st_mode) == 0o751
    assert stat.S_IMODE(os.stat(ws / "bin/tool.sh").st_mode) == 0o700


def test_state_dir_gets_a_gitignore_of_star(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    apply_preview(ws, Preview([modify(ws, "a.txt", "b\n")]))
    assert (ws / ".redline" / ".gitignore").read_text() == "*\n"


def test_empty_preview_writes_nothing(ws: Path) -> None:
    receipt = apply_preview(ws, Preview([]))
    assert receipt.entry_id == "" and receipt.files == []
    assert not (ws / ".redline").exists()


def test_check_preview_is_read_only_and_empty_when_fresh(ws: Path) -> None:
    preview, old, _ = mixed_preview(ws)
    assert check_preview(ws, preview) == []
    assert snapshot(ws) == old
    assert not (ws / ".redline").exists()


def test_stale_files_are_named_and_nothing_is_written(ws: Path) -> None:
    preview, _, _ = mixed_preview(ws)
    write(ws, "src/a.py", "edited by a person\n")
    (ws / "gone.txt").unlink()
    write(ws, "pkg/new/mod.py", "someone was faster\n")
    write(ws, "moved/renamed.txt", "in the way\n")
    before = snapshot(ws)
    reasons = check_preview(ws, preview)
    assert reasons == [
        "src/a.py (modified since the preview)",
        "pkg/new/mod.py (already exists)",
        "gone.txt (deleted since the preview)",
        "moved/renamed.txt (rename target already exists)",
    ]
    with pytest.raises(StaleError) as info:
        apply_preview(ws, preview)
    assert str(info.value) == (
        "Refused: 4 files changed since the preview: src/a.py (modified since the preview), "
        "pkg/new/mod.py (already exists), gone.txt (deleted since the preview), "
        "moved/renamed.txt (rename target already exists). Nothing was written."
    )
    assert info.value.files == ["src/a.py", "pkg/new/mod.py", "gone.txt", "moved/renamed.txt"]
    assert snapshot(ws) == before
    assert not (ws / ".redline" / "journal").exists() or not any(
        (ws / ".redline" / "journal").iterdir()
    )


def test_one_stale_file_blocks_the_fresh_ones_too(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    preview = Preview([modify(ws, "a.txt", "A\n"), modify(ws, "b.txt", "B\n")])
    write(ws, "b.txt", "b changed\n")
    with pytest.raises(StaleError, match=r"^Refused: 1 file changed since the preview: b\.txt"):
        apply_preview(ws, preview)
    assert (ws / "a.txt").read_text() == "a\n"


def test_directory_where_a_file_is_expected(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    preview = Preview([modify(ws, "a.txt", "b\n"), create("pkg", "x\n")])
    (ws / "a.txt").unlink()
    (ws / "a.txt").mkdir()
    (ws / "pkg").mkdir()
    with pytest.raises(StaleError) as info:
        apply_preview(ws, preview)
    assert "a.txt (is a folder, not a file)" in str(info.value)
    assert "pkg (a folder already exists at this path)" in str(info.value)


def test_create_below_a_file_is_refused(ws: Path) -> None:
    write(ws, "lib", "a file, not a folder\n")
    with pytest.raises(StaleError, match=r"lib/x\.py \(lib is a file, not a folder\)"):
        apply_preview(ws, Preview([create("lib/x.py", "x\n")]))


def test_read_only_file_is_refused_even_as_root(ws: Path) -> None:
    write(ws, "ro.txt", "frozen\n", mode=0o444)
    write(ws, "rw.txt", "free\n")
    preview = Preview([modify(ws, "rw.txt", "changed\n"), modify(ws, "ro.txt", "thawed\n")])
    with pytest.raises(WriteError) as info:
        apply_preview(ws, preview)
    assert str(info.value) == (
        "Refused: ro.txt (is read-only (mode 444); make it writable first (chmod u+w)). "
        "Nothing was written."
    )
    assert (ws / "ro.txt").read_text() == "frozen\n"
    assert (ws / "rw.txt").read_text() == "free\n"


def test_read_only_file_cannot_be_deleted(ws: Path) -> None:
    write(ws, "ro.txt", "frozen\n", mode=0o444)
    with pytest.raises(WriteError, match=r"ro\.txt \(is read-only"):
        apply_preview(ws, Preview([delete(ws, "ro.txt")]))
    assert (ws / "ro.txt").exists()


def test_huge_file_is_refused(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsutil, "MAX_FILE_BYTES", 1000)
    write(ws, "big.txt", "x" * 2000)
    preview = Preview(
        [delete(ws, "big.txt"), create("small.txt", "y" * 10), create("huge.txt", "z" * 5000)]
    )
    with pytest.raises(WriteError) as info:
        apply_preview(ws, preview)
    message = str(info.value)
    assert "big.txt (too large (2000 bytes; redline handles files up to 1000 bytes))" in message
    assert "huge.txt (new contents too large (5000 bytes))" in message
    assert (ws / "big.txt").exists() and not (ws / "small.txt").exists()


def test_binary_and_non_utf8_files_can_be_deleted_and_renamed(ws: Path) -> None:
    write(ws, "img.bin", b"\x89PNG\x00\x00\xff")
    write(ws, "latin1.txt", "caf\xe9\n".encode("latin-1"))
    apply_preview(ws, Preview([delete(ws, "img.bin"), rename(ws, "latin1.txt", "l1.txt")]))
    assert (ws / "l1.txt").read_bytes() == b"caf\xe9\n"
    assert not (ws / "img.bin").exists()


def test_text_that_cannot_be_encoded_is_refused(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    preview = Preview([FileModify("a.txt", sha256_bytes(b"a\n"), "a\n", "caf\u00e9\n", "ascii")])
    with pytest.raises(WriteError, match=r"a\.txt \(new text cannot be encoded as ascii"):
        apply_preview(ws, preview)
    with pytest.raises(WriteError, match="cannot be encoded as no-such-codec"):
        apply_preview(ws, Preview([FileCreate("b.txt", "b", "no-such-codec")]))
    assert (ws / "a.txt").read_text() == "a\n"


def test_file_modified_behind_the_preview_sha_but_same_text(ws: Path) -> None:
    # Only the bytes count: a changed line ending is a change.
    write(ws, "a.txt", "a\n")
    preview = Preview([modify(ws, "a.txt", "b\n")])
    write(ws, "a.txt", "a\r\n")
    assert check_preview(ws, preview) == ["a.txt (modified since the preview)"]


def test_same_file_twice_is_refused(ws: Path) -> None:
    write(ws, "a.txt", "a\n")
    preview = Preview([modify(ws, "a.txt", "b\n"), delete(ws, "a.txt")])
    with pytest.raises(WriteError, match=r"a\.txt \(touched more than once by the preview\)"):
        apply_preview(ws, preview)


def test_symlink_inside_is_written_through_and_kept(ws: Path) -> None:
    write(ws, "real.txt", "real\n")
    (ws / "link.txt").symlink_to("real.txt")
    apply_preview(ws, Preview([modify(ws, "link.txt", "changed\n")]))
    assert (ws / "link.txt").is_symlink()
    assert (ws / "real.txt").read_text() == "changed\n"


def test_symlink_is_not_deleted_or_renamed(ws: Path) -> None:
    write(ws, "real.txt", "real\n")
    (ws / "link.txt").symlink_to("real.txt")
    with pytest.raises(WriteError, match=r"link\.txt \(is a symbolic link"):
        apply_preview(ws, Preview([delete(ws, "link.txt")]))
    assert (ws / "link.txt").is_symlink()


def test_symlink_loop_is_a_clear_error(ws: Path) -> None:
    (ws / "loop").symlink_to("loop")
    preview = Preview([FileModify("loop", "0" * 64, "", "x\n")])
    with pytest.raises(ApplyError) as info:
        apply_preview(ws, preview)
    assert "loop (" in str(info.value)
    assert "Nothing was written" in str(info.value)
    assert (ws / "loop").is_symlink()


def test_unknown_workspace_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ApplyError, match="is not a folder"):
        apply_preview(tmp_path / "missing", Preview([create("a", "b")]))


def test_default_label(ws: Path) -> None:
    assert apply_preview(ws, Preview([create("a.txt", "a")])).label == "A a.txt"
    assert (
        apply_preview(ws, Preview([create("b", "b"), create("c", "c")])).label == "2 file changes"
    )


def test_errors_are_one_family() -> None:
    for cls in (
        safe_apply.StaleError,
        safe_apply.ConfinementError,
        safe_apply.LockError,
        safe_apply.WriteError,
    ):
        assert issubclass(cls, ApplyError)
    assert issubclass(ConfinementError, paths.ConfinementError)


def test_file_edited_by_another_program_during_the_apply(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(ws, "a.txt", "a\n")
    write(ws, "b.txt", "b\n")
    preview = Preview([modify(ws, "a.txt", "A\n"), modify(ws, "b.txt", "B\n")])
    real = fsutil.write_new_file_at

    def sneaky(dir_fd: int, name: str, data: bytes, *args: object, **kwargs: object) -> None:
        if name.endswith(fsutil.TEMP_SUFFIX) and name.startswith(".b.txt."):
            (ws / "b.txt").write_text("an editor saved meanwhile, longer\n")
        real(dir_fd, name, data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fsutil, "write_new_file_at", sneaky)
    with pytest.raises(StaleError) as info:
        apply_preview(ws, preview)
    assert str(info.value).startswith(
        "Refused: b.txt was modified by another program while the apply was running."
    )
    assert (ws / "a.txt").read_text() == "a\n"
    assert (ws / "b.txt").read_text() == "an editor saved meanwhile, longer\n"
    # The other program's edit is kept; the journal entry with the old bytes is set aside.
    assert "left alone b.txt (changed after the interrupted apply)" in str(info.value)
    assert (ws / ".redline/journal-aside/000001-conflict").is_dir()
    assert not any((ws / ".redline/journal").iterdir())
