"""Issue 48: who decided, through what, on which bytes: the decisions log's new fields,
the trailers per source and per ``[git] trailers``, ``signoff`` and ``redline log
--verify`` (real git in temporary repositories)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.review.queued import resolve_queued
from redline.workspace.hunks import Origin
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

from .gitrepo import git, init_repo, isolate_git, write_config
from .test_git_provenance import BASE, changed, pending, propose

COMMIT = '[git]\non_apply = "commit"\n'


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(tmp_path / "repo", {"a.txt": BASE, "b.txt": "b\n", "d.txt": "d\n"})


def log_json(capfd: pytest.CaptureFixture[str], root: Path) -> list[dict[str, object]]:
    capfd.readouterr()
    assert main(["log", "-C", str(root), "--json"]) == 0
    return list(json.loads(capfd.readouterr().out)["decisions"])


def log_text(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> str:
    capfd.readouterr()
    assert main(["log", "-C", str(root), *args]) == 0
    return capfd.readouterr().out


def trailers(root: Path) -> list[str]:
    return git(root, "log", "-1", "--format=%(trailers:only,unfold)").strip().splitlines()


def verify(capfd: pytest.CaptureFixture[str], root: Path) -> tuple[int, dict[str, list[dict]]]:
    capfd.readouterr()
    code = main(["log", "-C", str(root), "--verify", "--json"])
    return code, json.loads(capfd.readouterr().out)


def test_partial_apply_logs_its_parts_and_the_bytes_written(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT)
    action = propose(repo, "a.txt", changed(BASE, 1, 10, 20))
    code, _out, err = pending(
        capfd, repo, "apply", action, "--only", "a.txt#1", "--only", "a.txt#3"
    )
    assert code == 0, err
    [decision] = log_json(capfd, repo)
    assert decision["parts"] == "2 of 3 hunks" and decision["via"] == "cli"
    written = (repo / "a.txt").read_bytes()
    assert written == changed(BASE, 1, 20).encode()
    applied = decision["applied"]
    assert applied == {
        "a.txt": {
            "sha256": sha256_bytes(written),
            "blob": git(repo, "rev-parse", "HEAD:a.txt").strip(),
        }
    }
    assert "applied 2 of 3 hunks" in log_text(capfd, repo)
    assert "applied 2 of 3 hunks" in log_text(capfd, repo, "--markdown")


def test_an_edited_apply_records_the_persons_bytes(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    propose(repo, "d.txt", "d\nagent\n")
    queue = WorkspaceQueue(repo)
    with queue.claim("pa-1") as claim:
        record = claim.record
        proposed = queue.preview(record)
        assert proposed is not None
        edited = Preview([FileModify("d.txt", sha256_bytes(b"d\n"), "d\n", "d\nperson\n")])
        claim.replace(
            ActionDraft(
                label=record.label,
                source=record.source,
                source_tool_name="edit",
                preview=edited,
                origin=Origin.of(record.label, proposed).with_proposal(proposed),
            ),
            resolved_by="person",
        )
    queue.close()
    assert pending(capfd, repo, "apply", "pa-2")[0] == 0
    [decision] = log_json(capfd, repo)
    assert decision["edited"] is True
    assert decision["applied"]["d.txt"]["sha256"] == sha256_bytes(b"d\nperson\n")
    # Outside [git] on_apply the blob is still git's id of those bytes.
    assert (
        decision["applied"]["d.txt"]["blob"]
        == git(repo, "hash-object", "--stdin", input="d\nperson\n").strip()
    )


def test_a_rules_commit_names_the_rule_and_no_reviewer(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT)
    action = propose(repo, "b.txt", "b\nrule\n", label="Rule applied")
    queue = WorkspaceQueue(repo)
    try:
        result = asyncio.run(
            resolve_queued(
                queue, action, "apply", "docs only", resolved_by="rule", rule="docs-ok", via="mcp"
            )
        )
    finally:
        queue.close()
    assert not result.is_error, result.text
    lines = trailers(repo)
    assert "Redline-Rule: docs-ok" in lines
    assert not any(line.startswith("Redline-Reviewer:") for line in lines)
    [decision] = log_json(capfd, repo)
    assert decision["resolved_by"] == "rule" and decision["rule"] == "docs-ok"
    assert decision["reviewer"] == "" and decision["via"] == "mcp"
    assert "by rule docs-ok" in log_text(capfd, repo)
    assert "by rule docs-ok" in log_text(capfd, repo, "--markdown")


def test_workspace_trailer_and_signoff(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT + "signoff = true\n")
    action = propose(repo, "b.txt", "b\nsigned\n")
    assert pending(capfd, repo, "apply", action)[0] == 0
    lines = trailers(repo)
    assert lines[0] == f"Redline-Action: {action}"
    assert lines[1].startswith("Redline-Workspace: g")
    assert lines[-1] == "Signed-off-by: Rita Reviewer <rita@example.invalid>"
    assert sum(line.startswith("Signed-off-by:") for line in lines) == 1


def test_unknown_model_writes_no_assisted_by_and_the_log_says_why(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT)
    codex = propose(
        repo,
        "b.txt",
        "b\ncodex\n",
        source=Source.current("hook", "codex", "s1"),
        details={"model": "gpt-5.5"},
    )
    mcp = propose(repo, "d.txt", "d\nmcp\n", source=Source.current("mcp", "cursor", "s2"))
    assert pending(capfd, repo, "apply", codex)[0] == 0
    assert "Assisted-by: codex:gpt-5.5" in trailers(repo)
    assert pending(capfd, repo, "apply", mcp)[0] == 0
    assert not any(line.startswith("Assisted-by") for line in trailers(repo))
    first, second = log_json(capfd, repo)
    assert first["assisted_by"] == "codex:gpt-5.5" and first["why"] is None
    assert second["assisted_by"] is None
    assert second["why"] == "cursor (an MCP client) does not report its model"


def _agent_branch(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "agent/fix")
    (repo / "b.txt").write_text("b\nfrom the agent\n")
    git(repo, "add", "b.txt")
    git(
        repo,
        "-c",
        "user.name=Claude",
        "-c",
        "user.email=noreply@anthropic.com",
        "commit",
        "-q",
        "-m",
        "Fix b\n\nAssisted-by: claude-code:claude-opus-4-5\n",
    )
    git(repo, "checkout", "-q", "main")


@pytest.mark.parametrize("mode", ["kernel", "redline", "both"])
def test_an_import_with_an_agent_author_per_trailer_mode(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str], mode: str
) -> None:
    write_config(isolated_user_config, COMMIT + f'trailers = "{mode}"\n')
    _agent_branch(repo)
    assert main(["pending", "-C", str(repo), "import", "agent/fix"]) == 0
    capfd.readouterr()
    assert pending(capfd, repo, "apply", "pa-1")[0] == 0
    lines = trailers(repo)
    keys = [line.split(":", 1)[0] for line in lines]
    assert "Assisted-by: claude-code:claude-opus-4-5" in lines
    assert keys[:2] == ["Redline-Action", "Redline-Workspace"]
    if mode == "kernel":
        assert not [k for k in keys if k.startswith("Redline-")][2:]
        assert "Co-authored-by" not in keys
    elif mode == "redline":
        assert "Co-authored-by: Claude <noreply@anthropic.com>" in lines
        assert "Redline-Reviewer" in keys
    else:
        assert "Co-authored-by" not in keys and "Redline-Reviewer" in keys
    [decision] = log_json(capfd, repo)
    assert decision["assisted_by"] == "claude-code:claude-opus-4-5"


def test_verify_passes_catches_an_amend_and_reports_superseded(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT)
    one = propose(repo, "b.txt", "b\none\n")
    assert pending(capfd, repo, "apply", one)[0] == 0
    two = propose(repo, "a.txt", changed(BASE, 1))
    three = propose(repo, "a.txt", changed(BASE, 1, 20))
    assert pending(capfd, repo, "apply", two, three, "--batch")[0] == 0
    code, report = verify(capfd, repo)
    assert code == 0, report
    # The second apply re-based three over two: it was applied under its new id.
    last = [d["id"] for d in log_json(capfd, repo)][-1]
    assert last != three and last.startswith("pa-")
    assert [e["id"] for e in report["verified"]] == [one, last]
    assert [(e["id"], e["superseded_by"]) for e in report["superseded"]] == [(two, last)]
    assert report["mismatch"] == [] and report["missing"] == []
    # Amend the last commit to hold other bytes for a.txt: caught.
    (repo / "a.txt").write_text("something else\n")
    git(repo, "commit", "-q", "--amend", "--no-edit", "a.txt")
    code, report = verify(capfd, repo)
    assert code == 1
    assert [e["id"] for e in report["mismatch"]] == [last]
    capfd.readouterr()
    assert main(["log", "-C", str(repo), "--verify"]) == 1
    assert f"{last:<7} mismatch" in capfd.readouterr().out


def test_verify_names_a_missing_commit_and_bad_input(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write_config(isolated_user_config, COMMIT)
    one = propose(repo, "b.txt", "b\none\n")
    assert pending(capfd, repo, "apply", one)[0] == 0
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    code, report = verify(capfd, repo)
    assert code == 1 and [e["id"] for e in report["missing"]] == [one]
    outside = tmp_path / "plain"
    outside.mkdir()
    capfd.readouterr()
    assert main(["log", "-C", str(outside), "--verify"]) == 2
    assert "not in a git working tree" in capfd.readouterr().err


def test_the_workspace_trailer_is_the_team_queues_workspace_id(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from redline.review import provenance
    from redline.teamqueue.settings import queue_settings, workspace_id

    write_config(isolated_user_config, COMMIT)
    action = propose(repo, "b.txt", "b\nteam\n")
    assert pending(capfd, repo, "apply", action)[0] == 0
    expected = workspace_id(repo, queue_settings(repo).workspace_id)
    assert f"Redline-Workspace: {expected}" in trailers(repo)
    # A configured id wins, as it does for the team queue.
    provenance._known.clear()
    write_config(isolated_user_config, COMMIT + '[queue]\nworkspace_id = "team-ws-1"\n')
    action = propose(repo, "d.txt", "d\nteam\n")
    assert pending(capfd, repo, "apply", action)[0] == 0
    assert "Redline-Workspace: team-ws-1" in trailers(repo)
    provenance._known.clear()


def test_an_untrusted_workspace_may_not_sign_off_for_you(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT)
    (repo / ".redline").mkdir(exist_ok=True)
    (repo / ".redline" / "config.toml").write_text('[git]\nsignoff = true\ntrailers = "kernel"\n')
    action = propose(repo, "b.txt", "b\nmine\n")
    code, out, _err = pending(capfd, repo, "apply", action)
    assert code == 0
    assert "git.signoff skipped: this workspace is not trusted" in out
    lines = trailers(repo)
    assert not any(line.startswith("Signed-off-by") for line in lines)
    assert not any(line.startswith("Redline-Source") for line in lines)  # kernel counts


def test_a_bad_git_setting_is_named(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, COMMIT + 'trailers = "linux"\n')
    action = propose(repo, "b.txt", "b\nx\n")
    code, out, _err = pending(capfd, repo, "apply", action)
    assert code == 0  # the apply is done; git says why nothing was committed
    assert "git.trailers: expected one of redline, kernel, both, got 'linux'" in out
