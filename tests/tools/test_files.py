"""read, ls, find, grep: output shapes, caps, confinement and skipped folders."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pydantic import BaseModel

from redline.review.result import ToolResult
from redline.review.store import PendingActionStore
from redline.tools.base import ToolContext
from redline.tools.files import (
    FindParams,
    FindTool,
    GrepParams,
    GrepTool,
    LsParams,
    LsTool,
    ReadParams,
    ReadTool,
)
from redline.tools.files import grep as grep_module
from redline.tools.files import listing as listing_module
from redline.tools.files.globbing import compile_glob, expand_braces
from redline.tools.files.read import DEFAULT_LIMIT, MAX_LINE_CHARS
from redline.tools.registry import BUILTIN_TOOL_NAMES, builtin_tools


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A git workspace with ignored, protected and venv folders beside real files."""
    root = tmp_path / "ws"
    root.mkdir()
    _git_init(root)
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "README.md").write_text("# Demo\nhello world\n")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "core.py").write_text("def hello():\n    return 'hello'\n")
    (root / "src" / "pkg" / "util.py").write_text("import os\nHELLO = 1\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("hello = 'built'\n")
    (root / "debug.log").write_text("hello from the log\n")
    (root / ".redline").mkdir()
    (root / ".redline" / "state.py").write_text("hello = 'redline'\n")
    (root / "env").mkdir()
    (root / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "env" / "lib.py").write_text("hello = 'venv'\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.py").write_text("hello = 'node'\n")
    return root


def _ctx(root: Path) -> ToolContext:
    return ToolContext(cwd=root, store=PendingActionStore())


async def _read(root: Path, path: str, offset: int | None = None, limit: int | None = None):
    return await ReadTool().execute(ReadParams(path=path, offset=offset, limit=limit), _ctx(root))


# -- read ------------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n(ws: Path) -> None:
    result = await _read(ws, "src/pkg/core.py")
    assert not result.is_error
    assert result.text == "     1\tdef hello():\n     2\t    return 'hello'"


async def test_read_window_says_how_to_read_more(ws: Path) -> None:
    (ws / "many.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = await _read(ws, "many.txt", offset=3, limit=4)
    lines = result.text.splitlines()
    assert lines[:4] == ["     3\tline 3", "     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert lines[-1] == "[Showing lines 3-6 of 10 in many.txt. Use offset=7 to read more.]"


async def test_read_default_limit_and_total(ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"{n}\n" for n in range(1, 5001)))
    result = await _read(ws, "big.txt")
    lines = result.text.splitlines()
    assert lines[DEFAULT_LIMIT - 1] == f"{DEFAULT_LIMIT:>6}\t{DEFAULT_LIMIT}"
    assert lines[-1] == (
        f"[Showing lines 1-{DEFAULT_LIMIT} of 5000 in big.txt. "
        f"Use offset={DEFAULT_LIMIT + 1} to read more.]"
    )


async def test_read_last_window_has_no_note(ws: Path) -> None:
    (ws / "t.txt").write_text("a\nb\nc")  # no final newline
    result = await _read(ws, "t.txt", offset=2)
    assert result.text == "     2\tb\n     3\tc"


async def test_read_total_counts_unterminated_last_line(ws: Path) -> None:
    (ws / "t.txt").write_text("a\nb\nc")
    result = await _read(ws, "t.txt", limit=1)
    assert result.text.endswith("[Showing lines 1-1 of 3 in t.txt. Use offset=2 to read more.]")


async def test_read_truncates_long_lines_with_marker(ws: Path) -> None:
    (ws / "long.txt").write_text("x" * (MAX_LINE_CHARS + 500) + "\nshort\n")
    result = await _read(ws, "long.txt")
    first, second = result.text.splitlines()
    assert first == "     1\t" + "x" * MAX_LINE_CHARS + " … [line truncated; 500 more bytes]"
    assert "x" * (MAX_LINE_CHARS + 1) not in first
    assert second == "     2\tshort"


async def test_read_huge_single_line_is_bounded(ws: Path) -> None:
    (ws / "min.js").write_bytes(b"y" * 3_000_000 + b"\nend\n")
    result = await _read(ws, "min.js")
    assert len(result.text) < MAX_LINE_CHARS + 200
    assert result.text.endswith("     2\tend")
    assert "more bytes]" in result.text


async def test_read_strips_crlf_and_bom(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    result = await _read(ws, "win.txt")
    assert result.text == "     1\tone\n     2\ttwo"


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf"])
async def test_read_empty_file(ws: Path, data: bytes) -> None:
    (ws / "empty.txt").write_bytes(data)
    result = await _read(ws, "empty.txt")
    assert not result.is_error
    assert result.text == "(empty.txt is empty)"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary file"),
        (b"caf\xe9\n", "not valid UTF-8 (line 1)"),
    ],
)
async def test_read_refuses_binary_and_non_utf8(ws: Path, data: bytes, message: str) -> None:
    (ws / "blob.bin").write_bytes(data)
    result = await _read(ws, "blob.bin")
    assert result.is_error
    assert message in result.text
    assert "blob.bin" in result.text


async def test_read_directory_suggests_ls(ws: Path) -> None:
    result = await _read(ws, "src")
    assert result.is_error
    assert result.text == "src is a directory; use ls to list its entries"


async def test_read_missing_file(ws: Path) -> None:
    result = await _read(ws, "nope.txt")
    assert result.is_error
    assert result.text == "nope.txt: no such file"


async def test_read_offset_past_end(ws: Path) -> None:
    result = await _read(ws, "README.md", offset=10)
    assert result.is_error
    assert result.text == "offset 10 is past the end of README.md (2 lines)"


async def test_read_accepts_a_look_alike_model_and_rejects_a_wrong_one(ws: Path) -> None:
    class Other(BaseModel):
        name: str = "x"

    alike = await ReadTool().execute(LsParams(path="README.md"), _ctx(ws))
    assert alike.text.startswith("     1\t# Demo")
    wrong = await ReadTool().execute(Other(), _ctx(ws))
    assert wrong.is_error
    assert wrong.text.startswith("invalid parameters:")


# -- confinement (every tool) ----------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text("hello secret\n")
    return secret


def _calls(path: str) -> list[tuple[object, object]]:
    return [
        (ReadTool(), ReadParams(path=path)),
        (LsTool(), LsParams(path=path)),
        (FindTool(), FindParams(pattern="*", path=path)),
        (GrepTool(), GrepParams(pattern="hello", path=path)),
    ]


@pytest.mark.parametrize("which", range(4))
async def test_dotdot_is_refused(ws: Path, outside: Path, which: int) -> None:
    tool, params = _calls("../secret.txt")[which]
    result = await tool.execute(params, _ctx(ws))  # type: ignore[attr-defined]
    assert result.is_error
    assert "outside the workspace" in result.text


@pytest.mark.parametrize("which", range(4))
async def test_absolute_outside_is_refused(ws: Path, outside: Path, which: int) -> None:
    tool, params = _calls(str(outside))[which]
    result = await tool.execute(params, _ctx(ws))  # type: ignore[attr-defined]
    assert result.is_error
    assert "outside the workspace" in result.text


async def test_absolute_inside_is_fine(ws: Path) -> None:
    result = await _read(ws, str(ws / "README.md"))
    assert not result.is_error
    assert "hello world" in result.text


async def test_symlink_outside_is_refused(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside)
    (ws / "linkdir").symlink_to(outside.parent, target_is_directory=True)
    for path in ("link.txt", "linkdir/secret.txt"):
        result = await _read(ws, path)
        assert result.is_error, path
        assert "symlink leads outside the workspace" in result.text


async def test_grep_never_reads_through_a_symlink_outside(ws: Path, outside: Path) -> None:
    (ws / "link.txt").symlink_to(outside)
    result = await GrepTool().execute(GrepParams(pattern="secret"), _ctx(ws))
    assert "hello secret" not in result.text


@pytest.mark.parametrize("path", [".git", ".git/config", ".redline/state.py", "env/lib.py"])
async def test_protected_and_venv_paths_are_refused(ws: Path, path: str) -> None:
    result = await _read(ws, path)
    assert result.is_error
    assert "redline never touches files inside" in result.text


# -- ls --------------------------------------------------------------------------


async def test_ls_root_skips_ignored_protected_and_venvs(ws: Path) -> None:
    result = await LsTool().execute(LsParams(), _ctx(ws))
    assert not result.is_error
    assert result.text.splitlines() == [".gitignore", "README.md", "src/"]


async def test_ls_subfolder(ws: Path) -> None:
    result = await LsTool().execute(LsParams(path="src/pkg"), _ctx(ws))
    assert result.text.splitlines() == ["__init__.py", "core.py", "util.py"]


async def test_ls_without_git_uses_gitignore_and_skips_venvs(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "b.py").write_text("")
    (tmp_path / ".gitignore").write_text("dist/\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "c.py").write_text("")
    result = await LsTool().execute(LsParams(), _ctx(tmp_path))
    assert result.text.splitlines() == [".gitignore", "a.py"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("README.md", "README.md is a file, not a directory; use read to view it"),
        ("missing", "missing: no such directory"),
    ],
)
async def test_ls_errors(ws: Path, path: str, message: str) -> None:
    result = await LsTool().execute(LsParams(path=path), _ctx(ws))
    assert result.is_error
    assert result.text == message


async def test_ls_caps_entries(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing_module, "MAX_LS_ENTRIES", 2)
    result = await LsTool().execute(LsParams(), _ctx(ws))
    lines = result.text.splitlines()
    assert lines[:2] == [".gitignore", "README.md"]
    assert lines[-1].startswith("[Showing 2 of 3 entries")


# -- find ------------------------------------------------------------------------


async def _find(root: Path, pattern: str, path: str = ".") -> ToolResult:
    return await FindTool().execute(FindParams(pattern=pattern, path=path), _ctx(root))


async def test_find_by_name_at_any_depth_skips_ignored(ws: Path) -> None:
    result = await _find(ws, "*.py")
    assert result.text.splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "src/pkg/util.py",
    ]


async def test_find_path_patterns_and_braces(ws: Path) -> None:
    assert (await _find(ws, "src/**/c*.py")).text == "src/pkg/core.py"
    assert (await _find(ws, "**/*.{md,gitignore}")).text.splitlines() == [
        ".gitignore",
        "README.md",
    ]
    assert (await _find(ws, "*.py", path="src/pkg")).text.splitlines()[0] == ("src/pkg/__init__.py")
    assert (await _find(ws, "pkg/[cu]*.py", path="src")).text.splitlines() == [
        "src/pkg/core.py",
        "src/pkg/util.py",
    ]


async def test_find_no_match_is_not_an_error(ws: Path) -> None:
    result = await _find(ws, "*.rs")
    assert not result.is_error
    assert result.text == "No files match '*.rs' under the workspace root."


async def test_find_caps_results_with_note(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing_module, "MAX_FIND_RESULTS", 2)
    lines = (await _find(ws, "*.py")).text.splitlines()
    assert lines[:2] == ["src/pkg/__init__.py", "src/pkg/core.py"]
    assert lines[-1] == "[Showing the first 2 of 3 matches; narrow the pattern or path.]"


async def test_find_errors(ws: Path) -> None:
    assert (await _find(ws, "*.py", path="nowhere")).text == ("nowhere: no such file or directory")
    empty = await _find(ws, "  ")
    assert empty.is_error
    assert "empty" in empty.text


def test_glob_helpers() -> None:
    assert expand_braces("a.{py,{md,txt}}") == ["a.py", "a.md", "a.txt"]
    assert expand_braces("{solo}") == ["{solo}"]
    match = compile_glob("**/test_*.py")
    assert match("tests/test_a.py", "tests/test_a.py")
    assert match("test_a.py", "test_a.py")
    assert not match("tests/a.py", "tests/a.py")
    name = compile_glob("[!a]*.py")
    assert name("x/b.py", "x/b.py")
    assert not name("x/a.py", "x/a.py")


# -- grep ------------------------------------------------------------------------


async def _grep(root: Path, pattern: str, path: str = ".", glob: str | None = None) -> ToolResult:
    return await GrepTool().execute(GrepParams(pattern=pattern, path=path, glob=glob), _ctx(root))


async def test_grep_lines_skip_ignored_protected_and_venvs(ws: Path) -> None:
    result = await _grep(ws, r"hello")
    assert not result.is_error
    assert result.text.splitlines() == [
        "README.md:2: hello world",
        "src/pkg/core.py:1: def hello():",
        "src/pkg/core.py:2:     return 'hello'",
    ]


async def test_grep_path_glob_and_inline_flags(ws: Path) -> None:
    assert (await _grep(ws, "(?i)^hello", path="src")).text == "src/pkg/util.py:2: HELLO = 1"
    assert (await _grep(ws, "hello", glob="*.md")).text == "README.md:2: hello world"
    assert (await _grep(ws, "import", path="src/pkg/util.py")).text == (
        "src/pkg/util.py:1: import os"
    )


async def test_grep_skips_binary_and_non_utf8(ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"hello\x00world")
    (ws / "latin.txt").write_bytes(b"hello caf\xe9\n")
    result = await _grep(ws, "hello", glob="*.{bin,txt}")
    assert not result.is_error
    assert result.text.startswith("No matches for 'hello'")


async def test_grep_crlf_lines_have_no_carriage_return(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"one\r\nneedle\r\n")
    assert (await _grep(ws, "needle$", glob="win.txt")).text == "win.txt:2: needle"


async def test_grep_invalid_regex_is_an_error(ws: Path) -> None:
    result = await _grep(ws, "(unclosed")
    assert result.is_error
    assert result.text.startswith("invalid regular expression '(unclosed': ")


async def test_grep_caps_matches(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_module, "MAX_MATCHES", 2)
    (ws / "many.txt").write_text("x\n" * 10)
    lines = (await _grep(ws, "x", glob="many.txt")).text.splitlines()
    assert lines[:2] == ["many.txt:1: x", "many.txt:2: x"]
    assert lines[-1].startswith("[Stopped after 2 matches;")


async def test_grep_skips_huge_files_with_note(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_module, "MAX_GREP_FILE_BYTES", 10)
    result = await _grep(ws, "hello", glob="*.md")
    assert result.text.splitlines()[-1] == "[Skipped 1 file(s) over 10 bytes: README.md]"


async def test_grep_total_work_is_bounded(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_module, "MAX_GREP_TOTAL_BYTES", 40)
    result = await _grep(ws, "hello")
    assert result.text.splitlines() == [
        "README.md:2: hello world",
        "",
        "[Stopped after searching 32 bytes of files; narrow the path or glob to search the rest.]",
    ]


async def test_read_of_an_explicitly_named_ignored_file_is_allowed(ws: Path) -> None:
    # Git-ignored files are left out of listings (ls, find, grep) but a path the model
    # names on purpose, such as a build log, can still be read.
    result = await _read(ws, "debug.log")
    assert result.text == "     1\thello from the log"


async def test_grep_no_match(ws: Path) -> None:
    result = await _grep(ws, "zzz", glob="*.py")
    assert not result.is_error
    assert result.text == "No matches for 'zzz' under the workspace root (files matching '*.py')."


# -- registry --------------------------------------------------------------------


def test_builtin_tools_are_fresh_and_named() -> None:
    first, second = builtin_tools(), builtin_tools()
    names = [tool.name for tool in first]
    assert names == [name for name in BUILTIN_TOOL_NAMES if name in names]
    assert names[:6] == ["read", "ls", "find", "grep", "edit", "write"]
    assert "resolve" not in names
    assert all(a is not b for a, b in zip(first, second, strict=True))
    deferrable = {tool.name for tool in first if tool.deferrable}
    assert {"edit", "write"} <= deferrable
    assert not {"read", "ls", "find", "grep"} & deferrable
    for tool in first:
        schema = tool.parameters_schema()
        assert schema["type"] == "object"
        assert tool.description


def test_builtin_tools_include_ast_edit_when_available() -> None:
    pytest.importorskip("redline.tools.ast_edit.tool")
    assert "ast_edit" in [tool.name for tool in builtin_tools()]


async def test_null_path_means_the_workspace_root(ws: Path) -> None:
    params = LsParams.model_validate({"path": None})
    assert params.path == "."
    result = await LsTool().execute(params, _ctx(ws))
    assert "README.md" in result.text.splitlines()
    grep = GrepParams.model_validate({"pattern": "x", "path": None, "glob": None})
    assert grep.path == "."
    assert FindParams.model_validate({"pattern": "*", "path": None}).path == "."
    assert LsTool().parameters_schema()["properties"]["path"]["type"] == "string"


async def test_read_cuts_long_multibyte_lines_without_decode_errors(ws: Path) -> None:
    (ws / "euro.txt").write_text("€" * 3000 + "\n", encoding="utf-8")  # 9000 bytes
    result = await _read(ws, "euro.txt")
    assert not result.is_error
    assert result.text == "     1\t" + "€" * MAX_LINE_CHARS + " … [line truncated; 3000 more bytes]"
