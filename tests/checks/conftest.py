"""Small generated projects, the checks that run on them, and a private cache folder."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

CALC = """import os


def add(a, b):
    return a + b


def mul(a, b):
    return a * b
"""

TESTS = """from pkg.calc import add, mul


def test_add():
    assert add(1, 2) == 3


def test_mul():
    assert mul(2, 3) == 6


def test_old_failure():
    assert add(0, 0) == 1
"""

# The proposal: an unused import (new F401) and a broken mul (test_mul fails).
BROKEN = CALC.replace("import os\n", "import os\nimport sys\n").replace("a * b", "a - b")

RUFF = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache"]
RUFF += ["--output-format=json", "{files}"]


def _no_installed_plugins() -> list[str]:
    """``-p no:NAME`` for every pytest plugin installed in this environment (xdist, asyncio,
    the Textual snapshot plugin with syrupy, hypothesis, ...): the generated projects' tests
    need none, and loading them made each check's pytest start cost about 2 s of CPU instead
    of 0.4 s (issue 44). Read from the entry points, so a plugin added later is left out too."""
    from importlib.metadata import entry_points

    names = sorted({entry.name for entry in entry_points(group="pytest11")} | {"randomly"})
    return [part for name in names for part in ("-p", f"no:{name}")]


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
PYTEST += [*_no_installed_plugins(), "--junitxml={report}", "tests"]


def toml_list(argv: list[str]) -> str:
    import json

    return "[" + ", ".join(json.dumps(part) for part in argv) + "]"


def checks_toml(*entries: tuple[str, list[str], str, float]) -> str:
    out = []
    for name, command, fmt, timeout in entries:
        out.append(
            f'[[checks]]\nname = "{name}"\ncommand = {toml_list(command)}\n'
            f'format = "{fmt}"\ntimeout = {timeout}\n'
        )
    return "\n".join(out)


STANDARD = checks_toml(("ruff", RUFF, "ruff-json", 60), ("pytest", PYTEST, "pytest", 120))


@pytest.fixture(autouse=True)
def private_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    cache = tmp_path_factory.mktemp("redline-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def make_project(root: Path, *, git: bool) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TESTS)
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        run = ["git", "-C", str(root)]
        subprocess.run([*run, "init", "-q"], check=True)
        subprocess.run([*run, "add", "-A"], check=True)
        subprocess.run(
            [*run, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
            check=True,
        )
    return root


#: The default test run needs no working user namespaces: the checks here run unsandboxed
#: (tests/checks/test_sandbox_real.py, marker ``sandbox``, runs them in the real sandbox).
SANDBOX_OFF = '[check_runner]\nsandbox = "off"\n'


def user_config(config_dir: Path, text: str, *, sandbox_off: bool = True) -> None:
    if sandbox_off and "[check_runner]" in text:
        text = text.replace("[check_runner]\n", SANDBOX_OFF, 1)
    elif sandbox_off:
        text = f"{text}\n{SANDBOX_OFF}"
    (config_dir / "config.toml").write_text(text)


def push_edit(queue: WorkspaceQueue, path: str, new: str) -> str:
    old = (queue.root / path).read_text()
    preview = Preview([FileModify(path, sha256_bytes(old.encode()), old, new)])
    record = queue.push(
        ActionDraft(
            label=f"Edit {path}",
            source=Source.current("exec", "test", "s1"),
            source_tool_name="edit",
            preview=preview,
        )
    )
    return record.id


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` but .redline and .git, by content hash."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".redline", ".git"} & set(p.relative_to(root).parts)
    }


Snapshot = Callable[[Path], dict[str, str]]
