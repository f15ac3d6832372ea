"""Issue 45 (first part): the known workspaces and ``redline workspaces list|forget``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from redline.cli import main
from redline.workspace.known import known_dir, read_all
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

# Opens the queue of argv[1] and queues one action there, in a process of its own.
_PUSH = """
import sys
from pathlib import Path
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
root = Path(sys.argv[1])
old = (root / "a.txt").read_text()
preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, old + sys.argv[2] + "\\n")])
draft = ActionDraft(label=sys.argv[2], source=Source.current("exec", "t", sys.argv[2]),
                    source_tool_name="edit", preview=preview)
with WorkspaceQueue(root) as queue:
    queue.push(draft)
"""


def _folder(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.txt").write_text("hello\n")
    return root


def _push(root: Path, label: str = "edit") -> None:
    old = (root / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, old + label + "\n")])
    draft = ActionDraft(
        label=label,
        source=Source.current("exec", "t", "s"),
        source_tool_name="edit",
        preview=preview,
    )
    with WorkspaceQueue(root) as queue:
        queue.push(draft)


def _listed(capfd: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["workspaces", "list", "--json", *extra])
    return code, json.loads(capfd.readouterr().out)


def _by_path(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["path"]: w for w in data["workspaces"]}


def test_a_queue_opened_is_remembered_once_in_one_file(tmp_path: Path) -> None:
    root = _folder(tmp_path / "proj")
    _push(root)
    [entry] = list(known_dir().iterdir())
    assert json.loads(entry.read_text()) == {"path": str(root.resolve())}
    before = entry.stat()
    _push(root, "again")  # an entry that exists is not rewritten
    after = entry.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    assert len(list(known_dir().iterdir())) == 1


def test_list_shows_counts_ids_and_the_state_folder(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    one, two = _folder(tmp_path / "one"), _folder(tmp_path / "two")
    _push(one, "a")
    _push(one, "b")
    _push(two, "c")
    (two / "a.txt").write_text("changed elsewhere\n")  # its action is now stale
    code, data = _listed(capfd)
    assert code == 0
    found = _by_path(data)
    assert set(found) == {str(one.resolve()), str(two.resolve())}
    first, second = found[str(one.resolve())], found[str(two.resolve())]
    assert set(first) == {
        "id", "path", "pending", "stale", "watched_by", "missing", "conflict"
    }  # fmt: skip
    assert (first["pending"], first["stale"], first["missing"]) == (2, 0, False)
    assert (second["pending"], second["stale"]) == (1, 1)
    assert first["watched_by"] == [] and not first["conflict"]
    from redline.workspace.identity import workspace_id

    assert first["id"] == workspace_id(one)
    # the id is cached in the entry (computing it may run git)
    cached = [json.loads(p.read_text()) for p in known_dir().iterdir()]
    assert {c.get("id") for c in cached} == {first["id"], second["id"]}
    assert main(["workspaces", "list"]) == 0
    out = capfd.readouterr().out
    assert f"Known workspaces (from {known_dir()}):" in out
    assert f"{one.resolve()}  (2 pending, 0 stale)" in out


def test_the_id_is_the_team_queues_in_git(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path / "repo")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for argv in (["init", "-q"], ["add", "a.txt"], ["commit", "-qm", "one"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True)
    _push(root)
    from redline.teamqueue.settings import workspace_id

    _code, data = _listed(capfd)
    [only] = data["workspaces"]
    assert only["id"] == workspace_id(root) and only["id"].startswith("g")


def test_two_processes_opening_one_new_workspace_leave_one_entry(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    roots = [_folder(tmp_path / f"w{n}") for n in range(3)]
    procs = [
        subprocess.Popen([sys.executable, "-c", _PUSH, str(root), f"p{n}"])
        for root in roots
        for n in range(2)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * len(procs)
    entries = sorted(known_dir().iterdir())
    assert len(entries) == 3
    assert sorted(json.loads(e.read_text())["path"] for e in entries) == sorted(
        str(r.resolve()) for r in roots
    )
    _code, data = _listed(capfd)
    assert [w["pending"] for w in data["workspaces"]] == [2, 2, 2]


def test_a_folder_deleted_while_known_is_missing_not_forgotten(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    kept, gone = _folder(tmp_path / "kept"), _folder(tmp_path / "gone")
    subprocess.run([sys.executable, "-c", _PUSH, str(gone), "x"], check=True)
    _push(kept)
    assert _listed(capfd)[0] == 0  # caches both ids
    shutil.rmtree(gone)
    code, data = _listed(capfd)
    assert code == 1
    found = _by_path(data)
    assert found[str(gone.resolve())]["missing"] is True
    assert found[str(gone.resolve())]["pending"] is None
    assert found[str(gone.resolve())]["id"]  # the cached id is still shown
    assert found[str(kept.resolve())]["missing"] is False
    assert main(["workspaces", "list"]) == 1
    assert "missing (the folder is gone" in capfd.readouterr().out
    assert not gone.exists()  # listing never recreates it
    # it comes back when the folder does (an unmounted disk)
    _folder(gone)
    assert _listed(capfd)[0] == 0
    assert main(["workspaces", "forget", str(gone)]) == 0
    assert [k.path for k in read_all()] == [str(kept.resolve())]


def test_forget_by_id_and_an_unknown_one(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    root = _folder(tmp_path / "p")
    _push(root)
    _code, data = _listed(capfd)
    ident = data["workspaces"][0]["id"]
    assert main(["workspaces", "forget", "nope"]) == 2
    assert "'nope' is neither the path nor the id of a known workspace" in capfd.readouterr().err
    assert main(["workspaces", "forget", ident]) == 0
    assert f"Forgot {root.resolve()}" in capfd.readouterr().out
    assert read_all() == []
    assert (root / ".redline" / "queue").is_dir()  # the folder and queue are untouched
    _push(root, "more")  # opened again: remembered again
    assert [k.path for k in read_all()] == [str(root.resolve())]


def test_two_paths_with_one_configured_id_are_a_conflict(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    roots = [_folder(tmp_path / "a"), _folder(tmp_path / "b"), _folder(tmp_path / "c")]
    for root in roots[:2]:
        (root / ".redline").mkdir()
        (root / ".redline" / "config.toml").write_text('[queue]\nworkspace_id = "shared"\n')
        assert main(["trust", "-C", str(root)]) == 0  # its own config needs trust
    for root in roots:
        _push(root)
    capfd.readouterr()
    code, data = _listed(capfd)
    assert code == 1
    found = _by_path(data)
    assert [found[str(r.resolve())]["conflict"] for r in roots] == [True, True, False]
    assert [found[str(r.resolve())]["id"] for r in roots[:2]] == ["shared", "shared"]
    assert main(["workspaces", "list"]) == 1
    assert "conflict: another known path has the id shared" in capfd.readouterr().out


def test_a_state_folder_that_cannot_be_written_is_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redline.workspace.known import remember

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    remember(tmp_path)  # no error: remembering never stops a queue
    assert blocker.read_text() == "x"


def test_an_empty_list_says_where_it_looked(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["workspaces", "list"]) == 0
    out = capfd.readouterr().out
    assert f"(from {known_dir()})" in out and "none yet" in out
    assert _listed(capfd) == (0, {"workspaces": []})


def _cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redline", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_pending_list_all_from_a_fourth_folder(tmp_path: Path) -> None:
    roots = [_folder(tmp_path / name) for name in ("one", "two", "three")]
    # Each action queued by a process of its own, in order: one, two, three, one.
    for root, label in ((roots[0], "a"), (roots[1], "b"), (roots[2], "c"), (roots[0], "d")):
        subprocess.run([sys.executable, "-c", _PUSH, str(root), label], check=True, timeout=120)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _cli(elsewhere, "pending", "list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    actions = json.loads(done.stdout)["actions"]
    from redline.workspace.identity import workspace_id

    ids = {root: workspace_id(root) for root in roots}
    assert [a["label"] for a in actions] == ["d", "c", "b", "a"]  # newest first
    first = actions[0]
    assert first["local_id"] == "pa-2"
    assert first["id"] == f"pa-2@{ids[roots[0]]}"
    assert first["workspace"] == {"id": ids[roots[0]], "path": str(roots[0].resolve())}
    assert {"source", "files", "added", "removed", "stale", "created_at"} <= set(first)
    assert [a["id"] for a in actions[1:]] == [
        f"pa-1@{ids[roots[2]]}",
        f"pa-1@{ids[roots[1]]}",
        f"pa-1@{ids[roots[0]]}",
    ]
    assert not (elsewhere / ".redline").exists()  # the fourth folder is not a workspace
    text = _cli(elsewhere, "pending", "list", "--all")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[1].startswith(f"pa-2@{ids[roots[0]]}  +1 -0  d")
    assert lines[1].endswith(str(roots[0].resolve()))
    assert lines[-1] == "4 pending in 3 known workspace(s), newest first."
    assert not any(a["stale"] for a in actions)
    (roots[2] / "a.txt").write_text("changed elsewhere\n")  # "c" no longer fits
    done = _cli(elsewhere, "pending", "list", "--all", "--json")
    stale = {a["label"]: a["stale"] for a in json.loads(done.stdout)["actions"]}
    assert stale == {"a": False, "b": False, "c": True, "d": False}
    # a workspace deleted while known is left out; the others still list
    shutil.rmtree(roots[1])
    done = _cli(elsewhere, "pending", "list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    assert [a["label"] for a in json.loads(done.stdout)["actions"]] == ["d", "c", "a"]


def test_pending_list_all_refuses_the_team_queue(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["pending", "list", "--all", "--queue", "postgresql://127.0.0.1:1/x"]) == 2
    assert "leave out --all" in capfd.readouterr().err
    assert main(["pending", "list", "--all"]) == 0
    assert "No pending actions in the 0 known workspace(s)." in capfd.readouterr().out


def test_an_agents_hook_in_its_own_process_makes_its_workspace_known(tmp_path: Path) -> None:
    from tests.drivers.hooks.test_confinement import payload, run_hook

    root = _folder(tmp_path / "repo")
    # The workspace is this folder, whatever an ancestor of the temporary folder holds (a
    # stray /tmp/.redline would otherwise be found first).
    (root / ".redline").mkdir()
    (tmp_path / "config-home").mkdir()
    (tmp_path / "config-home" / "config.toml").write_text("[hooks]\nwait_seconds = 0.01\n")
    proc = run_hook("claude", payload("claude", root, "new.py"), root)
    assert proc.returncode in (0, 2), proc.stderr
    assert [k.path for k in read_all()] == [str(root.resolve())]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _cli(elsewhere, "pending", "list", "--all", "--json")
    assert done.returncode == 0, done.stderr
    [action] = json.loads(done.stdout)["actions"]
    assert action["files"] == ["new.py"] and action["source"]["kind"] == "hook"
    assert action["workspace"]["path"] == str(root.resolve())


def test_pending_commands_take_a_workspace_qualified_id_from_anywhere(tmp_path: Path) -> None:
    from redline.workspace.identity import workspace_id

    one, two = _folder(tmp_path / "one"), _folder(tmp_path / "two")
    for root, label in ((one, "a"), (two, "b"), (two, "c")):
        subprocess.run([sys.executable, "-c", _PUSH, str(root), label], check=True, timeout=120)
    first, second = workspace_id(one), workspace_id(two)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shown = _cli(elsewhere, "pending", "show", f"pa-2@{second}", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["label"] == "c"
    applied = _cli(elsewhere, "pending", "apply", f"pa-1@{second}")
    assert applied.returncode == 0, applied.stderr
    assert (two / "a.txt").read_text() == "hello\nb\n"  # landed in its workspace only
    assert (one / "a.txt").read_text() == "hello\n"
    assert not (elsewhere / ".redline").exists()
    mixed = _cli(elsewhere, "pending", "apply", f"pa-1@{first}", f"pa-2@{second}", "--batch")
    assert mixed.returncode == 2 and "name more than one workspace" in mixed.stderr
    half = _cli(elsewhere, "pending", "discard", f"pa-1@{first}", "pa-2")
    assert half.returncode == 2
    unknown = _cli(elsewhere, "pending", "show", "pa-1@gffffffffff0")
    assert unknown.returncode == 2
    assert "unknown workspace gffffffffff0 here; for the team queue add --queue URL" in (
        unknown.stderr
    )
    elsewhere_c = _cli(elsewhere, "pending", "-C", str(two), "show", f"pa-1@{first}")
    assert elsewhere_c.returncode == 2 and f"is an action of {one.resolve()}" in elsewhere_c.stderr
    discarded = _cli(elsewhere, "pending", "discard", f"pa-1@{first}", "--reason", "no")
    assert discarded.returncode == 0, discarded.stderr
    listed = _cli(elsewhere, "pending", "list", "--all", "--json")
    assert [a["id"] for a in json.loads(listed.stdout)["actions"]] == [f"pa-2@{second}"]


def test_a_qualified_id_of_a_conflict_or_a_missing_workspace_is_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    roots = [_folder(tmp_path / "a"), _folder(tmp_path / "b")]
    for root in roots:
        (root / ".redline").mkdir()
        (root / ".redline" / "config.toml").write_text('[queue]\nworkspace_id = "shared"\n')
        assert main(["trust", "-C", str(root)]) == 0
        _push(root)
    capfd.readouterr()
    assert main(["pending", "show", "pa-1@shared"]) == 2
    assert "workspace id shared is shared by" in capfd.readouterr().err
    gone = _folder(tmp_path / "gone")
    _push(gone)
    assert main(["workspaces", "list"]) == 1  # caches its id
    ident = next(k.id for k in read_all() if k.path == str(gone.resolve()))
    shutil.rmtree(gone)
    capfd.readouterr()
    assert main(["pending", "show", f"pa-1@{ident}"]) == 2
    assert f"workspace {ident} ({gone.resolve()}) is missing" in capfd.readouterr().err


def test_edit_and_repreview_take_a_qualified_id(tmp_path: Path) -> None:
    from redline.workspace.identity import workspace_id

    root = _folder(tmp_path / "one")
    subprocess.run([sys.executable, "-c", _PUSH, str(root), "x"], check=True, timeout=120)
    ident = workspace_id(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "EDITOR": "sed -i s/x/EDITED/"}
    env.pop("VISUAL", None)
    edited = subprocess.run(
        [sys.executable, "-m", "redline", "pending", "edit", f"pa-1@{ident}"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert edited.returncode == 0, edited.stderr
    with WorkspaceQueue(root) as queue:
        [record] = queue.list()
    assert record.edited
    again = _cli(elsewhere, "pending", "repreview", f"{record.id}@{ident}")
    assert again.returncode == 0, again.stderr
    assert f"{record.id} is not stale; nothing to do" in again.stdout  # found in its workspace
    assert not (elsewhere / ".redline").exists()


def test_the_folders_remembering_makes_are_private(tmp_path: Path) -> None:
    root = _folder(tmp_path / "p")
    from redline.workspace.known import remember

    remember(root.resolve())  # before any state key exists
    assert known_dir().stat().st_mode & 0o777 == 0o700
    assert known_dir().parent.stat().st_mode & 0o777 == 0o700
    [entry] = known_dir().iterdir()
    assert entry.stat().st_mode & 0o777 == 0o600
