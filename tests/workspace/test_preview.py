from __future__ import annotations

import json

import pytest

from redline.workspace.preview import (
    DecodeError,
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    change_title,
    decode_text,
    sha256_bytes,
)

OLD = "def f():\n    return 1\n"
NEW = "def f():\n    return 2\n"


def test_modify_diff_and_stats() -> None:
    change = FileModify("pkg/a.py", sha256_bytes(OLD.encode()), OLD, NEW)
    preview = Preview([change])
    assert preview.file_diff(change) == (
        "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    )
    assert preview.stats().added == 1 and preview.stats().removed == 1


def test_create_diff() -> None:
    change = FileCreate("new.py", "x = 1\n")
    diff = Preview([change]).file_diff(change)
    assert diff.startswith("--- /dev/null\n+++ b/new.py\n")
    assert "+x = 1\n" in diff
    assert change_title(change) == "A new.py"


def test_delete_diff() -> None:
    change = FileDelete("old.py", sha256_bytes(b"y = 2\n"), "y = 2\n")
    diff = Preview([change]).file_diff(change)
    assert diff.startswith("--- a/old.py\n+++ /dev/null\n")
    assert "-y = 2\n" in diff
    assert Preview([change]).stats().removed == 1


def test_rename_diff_and_paths() -> None:
    change = FileRename("a.txt", "b.txt", sha256_bytes(b""))
    preview = Preview([change])
    assert preview.file_diff(change) == "rename from a.txt\nrename to b.txt\n"
    assert preview.paths == ("a.txt", "b.txt")
    assert change_title(change) == "R a.txt -> b.txt"


def test_missing_final_newline_is_marked() -> None:
    change = FileModify("a.py", "0", "x = 1", "x = 2")
    assert "\\ No newline at end of file" in Preview([change]).file_diff(change)


def test_crlf_kept_and_json_round_trip() -> None:
    change = FileModify("w.py", sha256_bytes(b"a\r\n"), "a\r\n", "b\r\n")
    preview = Preview(
        [change, FileCreate("n.py", "n\n"), FileRename("r1", "r2", "h"), FileDelete("d", "h", None)]
    )
    data = json.loads(json.dumps(preview.to_dict()))
    again = Preview.from_dict(data)
    assert again == preview
    assert again.changes[0].new_text == "b\r\n"  # type: ignore[union-attr]
    summary = preview.summary()
    assert [f["kind"] for f in summary["files"]] == ["modify", "create", "rename", "delete"]


def test_from_dict_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown change kind"):
        Preview.from_dict({"changes": [{"kind": "chmod"}]})
    with pytest.raises(ValueError, match="'path'"):
        Preview.from_dict({"changes": [{"kind": "create", "new_text": ""}]})


def test_decode_text() -> None:
    assert decode_text(b"\xef\xbb\xbfx\r\n", "a") == ("x\r\n", "utf-8-sig")
    with pytest.raises(DecodeError, match="binary"):
        decode_text(b"\x00\x01", "bin")
    with pytest.raises(DecodeError, match="UTF-8"):
        decode_text(b"caf\xe9", "latin.txt")
