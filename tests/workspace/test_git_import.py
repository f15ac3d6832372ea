"""``redline pending import``: a branch, a worktree or a patch as pending actions (real git)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from redline.workspace.queue import WorkspaceQueue

from .gitrepo import commit_all, git, init_repo, isolate_git, write_config
from .test_git_provenance import BASE, changed, pending


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_git(monkeypatch, tmp_path / "home")
    return init_repo(
        tmp_path / "repo", {"a.txt": BASE, "b.txt": "b\n", "old.txt": "moved\n", "gone.txt": "x\n"}
    )


def agent_branch(repo: Path) -> None:
    """A branch ``agent`` by another author: a modify, a rename, a create, a delete."""
    git(repo, "checkout", "-q", "-b", "agent")
    (repo / "a.txt").write_text(changed(BASE, 3))
    git(repo, "mv", "old.txt", "new.txt")
    (repo / "added.py").write_text("print('hi')\n")
    (repo / "gone.txt").unlink()
    git(repo, "add", "-A")
    git(
        repo,
        "-c",
        "user.name=Agent Smith",
        "-c",
        "user.email=agent@example.invalid",
        "commit",
        "-q",
        "-m",
        "agent work",
    )
    git(repo, "checkout", "-q", "main")


def listed(root: Path) -> list[dict[str, object]]:
    queue = WorkspaceQueue(root)
    try:
        return [
            {"label": r.label, "files": list(r.files), "source": r.source.canonical}
            for r in reversed(queue.list())
        ]
    finally:
        queue.close()


def test_a_branch_becomes_one_action_per_file(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    agent_branch(repo)
    (repo / "a.txt").write_text(changed(BASE, 18, mark="local"))  # local work elsewhere
    code, out, err = pending(capfd, repo, "import", "agent")
    assert (code, err) == (0, ""), out
    assert "Imported 4 actions from branch agent (source import:agent)." in out
    actions = listed(repo)
    assert sorted(a["label"] for a in actions) == [
        "Delete gone.txt (from agent)",
        "Rename old.txt to new.txt (from agent)",
        "a.txt (from agent)",
        "added.py (from agent)",
    ]
    assert {a["source"] for a in actions} == {"import:agent"}
    code, out, err = pending(capfd, repo, "list", "--json")
    assert all(len(a["files"]) <= 2 for a in json.loads(out)["actions"])
    ids = [r.id for r in WorkspaceQueue(repo).list()]
    code, out, err = pending(capfd, repo, "apply", *ids)
    assert (code, err) == (0, ""), out
    assert (repo / "a.txt").read_text() == changed(changed(BASE, 18, mark="local"), 3)
    assert (repo / "new.txt").read_text() == "moved\n" and not (repo / "old.txt").exists()
    assert not (repo / "gone.txt").exists() and (repo / "added.py").exists()


def test_hunks_of_an_imported_file_are_addressable(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    git(repo, "checkout", "-q", "-b", "two")
    (repo / "a.txt").write_text(changed(BASE, 2, 17))
    commit_all(repo, "two hunks")
    git(repo, "checkout", "-q", "main")
    assert pending(capfd, repo, "import", "two", "--branch")[0] == 0
    code, out, err = pending(capfd, repo, "apply", "pa-1", "--only", "a.txt#2")
    assert (code, err) == (0, ""), out
    assert (repo / "a.txt").read_text() == changed(BASE, 17)


def test_binary_files_and_conflicts_are_refused_by_name(
    repo: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    git(repo, "checkout", "-q", "-b", "mixed")
    (repo / "logo.png").write_bytes(b"\x89PNG\0\0binary")
    (repo / "a.txt").write_text(changed(BASE, 5, mark="theirs"))
    (repo / "b.txt").write_text("b\nfine\n")
    commit_all(repo, "mixed")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text(changed(BASE, 5, mark="ours"))
    code, out, err = pending(capfd, repo, "import", "mixed")
    assert code == 1
    assert "logo.png: binary file; redline reviews text files only; not imported" in err
    assert "a.txt: conflicts with the local file (both changed the same lines)" in err
    assert [a["label"] for a in listed(repo)] == ["b.txt (from mixed)"]
    assert "1 action from branch mixed" in out and "2 file(s) not imported" in out


def test_an_unknown_source_is_exit_2(repo: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = pending(capfd, repo, "import", "no-such-branch")
    assert code == 2 and out == ""
    assert "'no-such-branch' is not a file, a folder or a git ref" in err


def test_a_worktree_becomes_its_uncommitted_changes(
    repo: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    tree = tmp_path / "sandbox"
    git(repo, "worktree", "add", "-q", "--detach", str(tree))
    (tree / "a.txt").write_text(changed(BASE, 7))
    (tree / "fresh.txt").write_text("new file\n")
    code, out, err = pending(capfd, repo, "import", str(tree))
    assert (code, err) == (0, ""), out
    assert sorted(a["label"] for a in listed(repo)) == [
        "a.txt (from sandbox)",
        "fresh.txt (from sandbox)",
    ]
    assert {a["source"] for a in listed(repo)} == {"import:sandbox"}


PATCH = """From 1234 Mon Sep 17 00:00:00 2001
From: Patch Author <patch@example.invalid>
Subject: [PATCH] tweak

---
diff --git a/b.txt b/b.txt
index 1111111..2222222 100644
--- a/b.txt
+++ b/b.txt
@@ -1 +1,2 @@
 b
+patched
diff --git a/old.txt b/renamed.txt
similarity index 100%
rename from old.txt
rename to renamed.txt
"""


def test_a_format_patch_keeps_its_author_as_co_author(
    repo: Path,
    tmp_path: Path,
    isolated_user_config: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    write_config(isolated_user_config, '[git]\non_apply = "commit"\n')
    patch = tmp_path / "tweak.patch"
    patch.write_text(PATCH)
    code, out, err = pending(capfd, repo, "import", str(patch))
    assert (code, err) == (0, ""), out
    assert sorted(a["label"] for a in listed(repo)) == [
        "Rename old.txt to renamed.txt (from tweak.patch)",
        "b.txt (from tweak.patch)",
    ]
    code, out, err = pending(capfd, repo, "apply", "pa-1", "pa-2", "--batch")
    assert (code, err) == (0, ""), out
    assert (repo / "b.txt").read_text() == "b\npatched\n"
    message = git(repo, "log", "-1", "--format=%B")
    assert "Co-authored-by: Patch Author <patch@example.invalid>" in message
    assert "Redline-Source: import:tweak.patch" in message


def test_a_patch_on_stdin_that_does_not_apply_is_named(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    (repo / "b.txt").write_text("something else\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PATCH.encode())))
    code, _out, err = pending(capfd, repo, "import", "-")
    assert code == 1
    assert "b.txt: the patch does not apply" in err
    assert [a["label"] for a in listed(repo)] == ["Rename old.txt to renamed.txt (from stdin)"]


def test_garbage_is_not_a_patch(
    repo: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.diff"
    junk.write_text("hello\n")
    code, _out, err = pending(capfd, repo, "import", str(junk))
    assert code == 2 and "junk.diff" in err


def test_a_patch_may_not_reach_outside_the_workspace(
    repo: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    evil = tmp_path / "evil.patch"
    evil.write_text(
        "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n"
        "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+echo owned\n"
    )
    code, _out, err = pending(capfd, repo, "import", str(evil))
    assert code == 1 and ".git/hooks/pre-commit" in err
    assert listed(repo) == []
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
