"""The runner's rough edges (issue 39): stdout and stderr apart, ``{files}`` as
``./PATH``, ``files`` globs per check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from redline.checks.config import CheckSpec, load_checks
from redline.checks.run import NO_FILES, Outcome, check_preview, expand, findings_of
from redline.checks.sandbox import Sandbox
from redline.cli import main
from redline.config import ConfigError
from redline.workspace.preview import FileCreate, FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

from .conftest import CALC, RUFF, checks_toml, make_project, user_config

#: Run unsandboxed: the default test run needs no user namespaces (marker ``sandbox``).
OFF = Sandbox(enabled=False)

# The docs' own ruff check (docs/checks.md), with this environment's ruff.
DOCS_RUFF = [sys.executable, "-m", "ruff", "check", "--output-format=json", "{files}"]
UNUSED = CALC.replace("import os\n", "import os\nimport sys\n")


def push(queue: WorkspaceQueue, *changes: FileModify | FileCreate) -> str:
    record = queue.push(
        ActionDraft(
            label="Change",
            source=Source.current("exec", "test", "s1"),
            source_tool_name="edit",
            preview=Preview(list(changes)),
        )
    )
    return record.id


def modify(root: Path, path: str, new: str) -> FileModify:
    old = (root / path).read_text()
    return FileModify(path, sha256_bytes(old.encode()), old, new)


def check(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, dict]:
    code = main(["pending", "-C", str(root), "check", *args, "--json"])
    out, err = capfd.readouterr()
    assert "Traceback" not in err
    return code, {c["name"]: c for c in json.loads(out)["checks"]}


def test_the_docs_ruff_check_passes_a_markdown_change(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=True)
    (root / "CHANGELOG.md").write_text("# Changes\n")
    user_config(isolated_user_config, checks_toml(("ruff", DOCS_RUFF, "ruff-json", 60)))
    queue = WorkspaceQueue(root)
    action = push(queue, modify(root, "CHANGELOG.md", "# Changes\n\n- more\n"))
    code, results = check(capfd, root, action)
    # ruff says "No Python files found" on standard error and `[]` on standard output.
    assert results["ruff"] == {"name": "ruff", "status": "pass", "new": [], "fixed": []}
    assert code == 0
    queue.close()


def test_option_like_file_names_reach_the_check_as_paths(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    user_config(isolated_user_config, checks_toml(("ruff", RUFF, "ruff-json", 60)))
    queue = WorkspaceQueue(root)
    action = push(
        queue,
        modify(root, "pkg/calc.py", UNUSED),
        FileCreate('--config=lint.ignore=["ALL"]', "x = 1\n"),
        FileCreate("--help", "y = 2\n"),
    )
    code, results = check(capfd, root, action)
    # Read as options, the first would silence every rule, the second print the help.
    assert results["ruff"]["status"] == "findings", results
    assert [(f["path"], f["code"]) for f in results["ruff"]["new"]] == [("pkg/calc.py", "F401")]
    assert code == 1
    queue.close()


def test_files_expand_as_dot_slash_paths() -> None:
    command = ["tool", "--out={report}", "{files}", "--"]
    assert expand(command, ["--help", "a b.py", "pkg/x.py"], "/r") == [
        "tool",
        "--out=/r",
        "./--help",
        "./a b.py",
        "./pkg/x.py",
        "--",
    ]


def test_parsers_drop_a_leading_dot_slash(tmp_path: Path) -> None:
    mypy = CheckSpec("mypy", ("mypy", "{files}"), "mypy", sandbox=OFF)
    outcome = Outcome("done", 1, stdout="./pkg/calc.py:3: error: Bad  [misc]\n")
    [finding] = findings_of(mypy, outcome, tmp_path)
    assert (finding.path, finding.line, finding.code) == ("pkg/calc.py", 3, "misc")
    sarif = CheckSpec("sarif", ("tool", "{files}"), "sarif", sandbox=OFF)
    document = {
        "runs": [
            {
                "results": [
                    {
                        "ruleId": "R1",
                        "message": {"text": "m"},
                        "locations": [
                            {"physicalLocation": {"artifactLocation": {"uri": "./a/b.py"}}}
                        ],
                    }
                ]
            }
        ]
    }
    [finding] = findings_of(sarif, Outcome("done", 0, stdout=json.dumps(document)), tmp_path)
    assert finding.path == "a/b.py"


def test_stderr_is_apart_but_shown_when_a_run_fails(tmp_path: Path) -> None:
    ruff = CheckSpec("ruff", ("ruff", "{files}"), "ruff-json", sandbox=OFF)
    # Standard error beside a clean JSON output: a pass.
    assert (
        findings_of(ruff, Outcome("done", 0, "[]", "warning: No Python files found"), tmp_path)
        == []
    )
    # A usage error: the status and the end of standard error.
    from redline.checks.findings import FormatError

    with pytest.raises(FormatError, match="exited with status 2: error: unexpected argument"):
        findings_of(ruff, Outcome("done", 2, "", "error: unexpected argument\n"), tmp_path)
    with pytest.raises(FormatError, match=r"not JSON.*standard error: boom"):
        findings_of(ruff, Outcome("done", 1, "oops", "boom\n"), tmp_path)
    # exit-code: the message keeps both, standard error last.
    script = CheckSpec("make", ("make",), "exit-code", sandbox=OFF)
    [finding] = findings_of(
        script, Outcome("done", 2, "building\n", "make: *** [all] Error 1\n"), tmp_path
    )
    assert finding.message == "building\nmake: *** [all] Error 1"


SCRIPT = (
    "import sys; print('out'); print('the end of standard error', file=sys.stderr); sys.exit(3)"
)


def test_an_error_result_shows_the_stderr_tail(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws", git=False)
    spec = CheckSpec("crash", (sys.executable, "-c", SCRIPT), "ruff-json", sandbox=OFF)
    preview = Preview([modify(root, "pkg/calc.py", UNUSED)])
    [result] = check_preview(root, preview, [spec])
    assert result.status == "error"
    assert "on the workspace without the change" in result.why
    assert "exited with status 3: the end of standard error" in result.why


def test_files_globs_choose_what_a_check_gets(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "ws", git=False)
    (root / "README.md").write_text("# Read me\n")
    record = tmp_path / "args.json"
    probe = [
        sys.executable,
        "-c",
        f"import json, sys; json.dump(sys.argv[1:], open({str(record)!r}, 'w'))",
        "{files}",
    ]
    text = checks_toml(("probe", probe, "exit-code", 60)) + 'files = ["*.py", "*.pyi"]\n'
    user_config(isolated_user_config, text)
    queue = WorkspaceQueue(root)
    mixed = push(
        queue,
        modify(root, "pkg/calc.py", CALC + "# more\n"),
        modify(root, "README.md", "# Read me\n\nMore.\n"),
        FileCreate("pkg/types.pyi", "x: int\n"),
    )
    code, results = check(capfd, root, mixed)
    assert results["probe"]["status"] == "pass" and code == 0
    assert json.loads(record.read_text()) == ["./pkg/calc.py", "./pkg/types.pyi"]

    record.unlink()
    docs = push(queue, FileCreate("docs/guide.md", "# Guide\n"))
    code, results = check(capfd, root, docs)
    assert results["probe"] == {
        "name": "probe",
        "status": "skipped",
        "new": [],
        "fixed": [],
        "why": NO_FILES,
    }
    assert code == 0
    assert not record.exists()  # it never ran
    queue.close()


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ("[]", "files: expected a non-empty list of globs"),
        ('"*.py"', "files: expected a non-empty list of globs"),
        ('["!"]', "files: not a valid glob"),
    ],
)
def test_bad_files_key(isolated_user_config: Path, files: str, problem: str) -> None:
    text = checks_toml(("ruff", RUFF, "ruff-json", 60)) + f"files = {files}\n"
    user_config(isolated_user_config, text)
    with pytest.raises(ConfigError, match=problem):
        load_checks(None)


def test_the_glob_rules_are_the_rules_paths() -> None:
    spec = CheckSpec("x", ("x",), files=("*.py", "src/*.txt"), sandbox=OFF)
    paths = ["a.py", "deep/b.py", "README.md", "src/a.txt", "src/deep/b.txt"]
    assert spec.select(paths) == ["a.py", "deep/b.py", "src/a.txt"]


@pytest.mark.parametrize("given", [False, True])
def test_a_check_never_shares_a_bytecode_cache_outside_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: bool
) -> None:
    """``PYTHONPYCACHEPREFIX`` (the user's, or a test run's) does not reach a check: its
    bytecode would outlive the run's tree and a later run of another action at the same
    path could load it for a source file of the same size and time."""
    from redline.checks.run import launch

    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "shared-pycache"))
    argv = [sys.executable, "-c", "import os, sys; print(os.environ.get('PYTHONPYCACHEPREFIX'))"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": "/elsewhere"} if given else None
    done = launch(argv, tmp_path, env, timeout=60)
    assert done.stdout.strip() == "None", done
