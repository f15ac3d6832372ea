"""``[git] on_apply``: applied actions staged or committed exactly, with trailers (real git)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.hunks import Origin
from redline.workspace.preview import FileCreate, FileModify, FileRename, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

from .gitrepo import git, init_repo, isolate_git, write_config

BASE = "".join(f"line {i}\n" for i in range(1, 21))


def changed(text: str, *lines: int, mark: str = "X") -> str:
    out = text.splitlines(keepends=True)
    for number in lines:
        out[number - 1] = f"{mark} {number}\n"
    return "".join(out)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(
        tmp_path / "repo", {"a.txt": BASE, "b.txt": "b\n", "c.txt": "c\n", "d.txt": "d\n"}
    )


def propose(
    root: Path,
    name: str,
    new: str,
    *,
    label: str = "",
    source: Source | None = None,
    details: object = None,
) -> str:
    old = (root / name).read_text()
    preview = Preview([FileModify(name, sha256_bytes(old.encode()), old, new)])
    queue = WorkspaceQueue(root)
    try:
        record = queue.push(
            ActionDraft(
                label=label or f"Edit {name}",
                source=source or Source.current("hook", "claude", "s1"),
                source_tool_name="edit",
                preview=preview,
                details=details,
            )
        )
    finally:
        queue.close()
    return record.id


def pending(capfd: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["pending", "-C", str(root), *args])
    out, err = capfd.readouterr()
    return code, out, err


def commits(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def user_changes(root: Path) -> None:
    """A staged edit of b.txt, an unstaged one of c.txt and an untracked file."""
    (root / "b.txt").write_text("b staged\n")
    git(root, "add", "b.txt")
    (root / "c.txt").write_text("c unstaged\n")
    (root / "new.txt").write_text("untracked\n")


def test_commit_contains_only_the_action_and_leaves_the_rest_as_it_was(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    user_changes(repo)
    # An unstaged edit of the action's own file, away from the action's line.
    (repo / "a.txt").write_text(changed(BASE, 18, mark="mine"))
    action = propose(repo, "a.txt", changed(BASE, 2, 18, mark="mine"), label="Fix line 2")
    staged_before = git(repo, "diff", "--cached")
    code, out, err = pending(capfd, repo, "apply", action, "--reason", "looks right")
    assert (code, err) == (0, "")
    assert "git: committed pa-1 as " in out
    assert commits(repo) == 2
    # The commit is exactly line 2 of a.txt: not the person's line 18, not b/c/new.
    shown = git(repo, "show", "--format=", "HEAD")
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["a.txt"]
    assert "-line 2\n+mine 2\n" in shown and "18" not in shown
    assert git(repo, "show", "HEAD:a.txt") == changed(BASE, 2, mark="mine")
    # Everything else is exactly as it was: b staged, c and a's line 18 unstaged.
    assert git(repo, "diff", "--cached") == staged_before
    assert git(repo, "diff", "--name-only").split() == ["a.txt", "c.txt"]
    assert "+mine 18" in git(repo, "diff", "a.txt")
    assert git(repo, "status", "--porcelain", "--", "new.txt") == "?? new.txt\n"
    assert (repo / "a.txt").read_text() == changed(BASE, 2, 18, mark="mine")


def test_commit_message_has_the_label_and_trailers(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    action = propose(repo, "d.txt", "d\nmore\n", label="Add a line\nto d")
    code, _out, err = pending(capfd, repo, "apply", action, "--reason", "needed\nfor the test")
    assert (code, err) == (0, "")
    message = git(repo, "log", "-1", "--format=%B")
    assert message.splitlines()[0] == "Add a line to d"
    trailers = git(repo, "log", "-1", "--format=%(trailers:only,unfold)")
    lines = trailers.strip().splitlines()
    assert lines[1].startswith("Redline-Workspace: g")
    del lines[1]
    assert lines == [
        "Redline-Action: pa-1",
        "Redline-Source: hook:claude",
        "Redline-Reviewer: Rita Reviewer <rita@example.invalid>",
        "Redline-Reason: needed for the test",
    ]


def test_edited_action_says_so(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
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
    code, _out, err = pending(capfd, repo, "apply", "pa-2")
    assert (code, err) == (0, "")
    trailers = git(repo, "log", "-1", "--format=%(trailers:only,unfold)").split("\n")[:-2]
    assert "Redline-Edited: yes" in trailers and "Redline-Action: pa-2" in trailers
    assert git(repo, "show", "HEAD:d.txt") == "d\nperson\n"


def test_stage_adds_exactly_the_change_and_makes_no_commit(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "stage"\n')
    user_changes(repo)
    (repo / "a.txt").write_text(changed(BASE, 18, mark="mine"))
    action = propose(repo, "a.txt", changed(BASE, 2, 18, mark="mine"))
    code, out, err = pending(capfd, repo, "apply", action)
    assert (code, err) == (0, "")
    assert "git: staged pa-1." in out
    assert commits(repo) == 1
    assert git(repo, "show", ":a.txt") == changed(BASE, 2, mark="mine")  # not line 18
    assert git(repo, "show", ":b.txt") == "b staged\n"
    assert git(repo, "show", ":c.txt") == "c\n"
    assert git(repo, "diff", "--cached", "--name-only").split() == ["a.txt", "b.txt"]


def test_stage_merges_into_what_the_person_had_staged(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "stage"\n')
    (repo / "a.txt").write_text(changed(BASE, 15, mark="staged"))
    git(repo, "add", "a.txt")
    action = propose(repo, "a.txt", changed(BASE, 3, 15, mark="staged"))
    code, _out, err = pending(capfd, repo, "apply", action)
    assert (code, err) == (0, "")
    assert git(repo, "show", ":a.txt") == changed(BASE, 3, 15, mark="staged")


def test_only_the_selected_hunks_are_committed(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    action = propose(repo, "a.txt", changed(BASE, 2, 17))
    code, out, err = pending(capfd, repo, "apply", action, "--only", "a.txt#2")
    assert (code, err) == (0, ""), out
    assert git(repo, "show", "HEAD:a.txt") == changed(BASE, 17)
    assert (repo / "a.txt").read_text() == changed(BASE, 17)
    assert git(repo, "diff", "--cached") == ""  # the index agrees with the new HEAD
    code, out, err = pending(capfd, repo, "apply", "pa-2")
    assert (code, err) == (0, "")
    assert git(repo, "show", "HEAD:a.txt") == changed(BASE, 2, 17)
    assert commits(repo) == 3


def test_a_failing_pre_commit_hook_leaves_the_change_applied_and_staged(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    action = propose(repo, "d.txt", "d\nmore\n")
    code, out, err = pending(capfd, repo, "apply", action)
    assert (code, err) == (0, "")
    assert "the commit was refused, so pa-1 is applied and staged, not committed" in out
    assert "lint says no" in out
    assert commits(repo) == 1
    assert (repo / "d.txt").read_text() == "d\nmore\n"
    assert git(repo, "show", ":d.txt") == "d\nmore\n"


def test_hooks_run_and_see_only_the_action(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    seen = repo.parent / "seen.txt"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ngit diff --cached --name-only > '{seen}'\n")
    hook.chmod(0o755)
    user_changes(repo)
    action = propose(repo, "d.txt", "d\nmore\n")
    code, _out, err = pending(capfd, repo, "apply", action)
    assert (code, err) == (0, "")
    assert seen.read_text().split() == ["d.txt"]


def test_batch_makes_one_commit(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    first = propose(repo, "b.txt", "b\n1\n", label="One")
    second = propose(repo, "c.txt", "c\n2\n", label="Two")
    code, out, err = pending(capfd, repo, "apply", first, second, "--batch")
    assert (code, err) == (0, ""), out
    assert commits(repo) == 2
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["b.txt", "c.txt"]
    trailers = git(repo, "log", "-1", "--format=%(trailers:only,unfold)").split("\n")[:-2]
    assert trailers[:2] == ["Redline-Action: pa-1", "Redline-Action: pa-2"]
    assert git(repo, "log", "-1", "--format=%s") == "2 reviewed actions: One; Two\n"


def test_without_batch_each_action_is_its_own_commit(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    first = propose(repo, "b.txt", "b\n1\n")
    second = propose(repo, "c.txt", "c\n2\n")
    code, _out, err = pending(capfd, repo, "apply", first, second)
    assert (code, err) == (0, "")
    assert commits(repo) == 3


def test_create_and_rename_are_committed(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    queue = WorkspaceQueue(repo)
    source = Source.current("mcp", "cursor", "s1")
    queue.push(
        ActionDraft(
            label="Move and add",
            source=source,
            source_tool_name="write",
            preview=Preview(
                [
                    FileRename("b.txt", "sub/b2.txt", sha256_bytes(b"b\n")),
                    FileCreate("sub/new.py", "print(1)\n"),
                ]
            ),
        )
    )
    queue.close()
    code, _out, err = pending(capfd, repo, "apply", "pa-1")
    assert (code, err) == (0, "")
    status = git(repo, "show", "--format=", "--name-status", "-M", "HEAD").splitlines()
    assert sorted(status) == ["A\tsub/new.py", "R100\tb.txt\tsub/b2.txt"]
    assert git(repo, "status", "--porcelain") == ""


def test_a_workspace_below_the_repository_top(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    top = init_repo(tmp_path / "top", {"pkg/a.txt": "a\n", "other.txt": "o\n"})
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    ws = top / "pkg"
    action = propose(ws, "a.txt", "a\nb\n")
    code, _out, err = pending(capfd, ws, "apply", action)
    assert (code, err) == (0, "")
    assert git(top, "show", "HEAD:pkg/a.txt") == "a\nb\n"


def test_an_untrusted_workspace_cannot_turn_commits_on(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (repo / ".redline").mkdir(exist_ok=True)
    (repo / ".redline" / "config.toml").write_text('[git]\non_apply = "commit"\n')
    action = propose(repo, "d.txt", "d\nmore\n")
    code, out, err = pending(capfd, repo, "apply", action)
    assert (code, err) == (0, "")
    assert "git.on_apply skipped: this workspace is not trusted" in out
    assert commits(repo) == 1


def test_a_bad_on_apply_value_is_named_and_the_apply_stands(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "push"\n')
    action = propose(repo, "d.txt", "d\nmore\n")
    code, out, err = pending(capfd, repo, "apply", action)
    assert (code, err) == (0, "")
    assert "git.on_apply: expected one of none, stage, commit, got 'push'" in out
    assert (repo / "d.txt").read_text() == "d\nmore\n"


def test_outside_git_the_apply_says_nothing_was_committed(
    tmp_path: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    action = propose(ws, "a.txt", "a\nb\n")
    code, out, _err = pending(capfd, ws, "apply", action)
    assert code == 0
    assert "is not in a git working tree; nothing was committed" in out


def test_log_json_has_the_issue_shape(
    repo: Path, isolated_user_config: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    first = propose(repo, "b.txt", "b\n1\n", label="One")
    second = propose(repo, "c.txt", "c\n2\n", label="Two")
    assert pending(capfd, repo, "apply", first, "--reason", "fine")[0] == 0
    assert pending(capfd, repo, "discard", second, "--reason", "not wanted")[0] == 0
    code = main(["log", "-C", str(repo), "--json"])
    out, err = capfd.readouterr()
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert list(data) == ["decisions"]
    applied, discarded = data["decisions"]
    assert list(applied) == [
        "id",
        "label",
        "source",
        "decision",
        "edited",
        "reason",
        "resolved_by",
        "reviewer",
        "time",
        "commit",
        "via",
        "rule",
        "parts",
        "applied",
        "assisted_by",
        "why",
    ]
    assert applied["via"] == "cli" and applied["rule"] is None and applied["parts"] is None
    assert applied["applied"]["b.txt"]["sha256"] == sha256_bytes(b"b\n1\n")
    assert applied["applied"]["b.txt"]["blob"] == git(repo, "rev-parse", "HEAD:b.txt").strip()
    assert applied["assisted_by"] is None
    assert applied["why"] == "claude-code did not report its model"
    head = git(repo, "rev-parse", "HEAD").strip()
    assert applied["id"] == "pa-1" and applied["decision"] == "applied"
    assert applied["commit"] == head and applied["source"] == "hook:claude"
    assert applied["reason"] == "fine" and applied["edited"] is False
    assert applied["resolved_by"] == "person"
    assert applied["reviewer"] == "Rita Reviewer <rita@example.invalid>"
    assert discarded["decision"] == "discarded" and discarded["commit"] is None
    assert discarded["reason"] == "not wanted" and discarded["label"] == "Two"
    code = main(["log", "-C", str(repo), "--markdown"])
    out, _err = capfd.readouterr()
    assert f"- **applied** `pa-1` One (hook:claude, via cli, `{head[:12]}`): fine" in out
    assert "- **discarded** `pa-2` Two (hook:claude, via cli): not wanted" in out


def test_log_since(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    action = propose(repo, "d.txt", "d\nmore\n")
    assert pending(capfd, repo, "discard", action)[0] == 0
    code = main(["log", "-C", str(repo), "--json", "--since", "main"])
    out, _err = capfd.readouterr()
    assert code == 0 and [d["id"] for d in json.loads(out)["decisions"]] == ["pa-1"]
    code = main(["log", "-C", str(repo), "--since", "no-such-ref"])
    _out, err = capfd.readouterr()
    assert code == 2 and "--since no-such-ref" in err


def test_log_since_outside_git_is_exit_2(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["log", "-C", str(tmp_path), "--since", "main"])
    _out, err = capfd.readouterr()
    assert code == 2
    assert "is not in a git working tree" in err


def test_the_log_survives_queue_pruning_and_skips_bad_lines(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from redline.workspace.decisions import log_path

    action = propose(repo, "d.txt", "d\nmore\n")
    assert pending(capfd, repo, "apply", action)[0] == 0
    queue = WorkspaceQueue(repo)
    queue.prune()
    queue.close()
    with open(log_path(repo), "a") as handle:
        handle.write("not json\n")
    code = main(["log", "-C", str(repo), "--json"])
    out, err = capfd.readouterr()
    assert code == 0 and [d["id"] for d in json.loads(out)["decisions"]] == ["pa-1"]
    assert "1 line(s) of the decisions log are not decisions" in err
    assert os.stat(log_path(repo)).st_mode & 0o077 == 0
