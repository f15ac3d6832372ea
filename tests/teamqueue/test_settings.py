"""Where the team queue's URL comes from, the workspace id, and bad input — no server
needed (these run in the default suite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.teamqueue.settings import (
    TeamQueueError,
    queue_settings,
    split_team_id,
    team_id,
    workspace_id,
)
from redline.trust import trust

from .helpers import cli, make_workspace

SECRET = "hunter2-secret"
DOWN = f"postgresql://alice:{SECRET}@127.0.0.1:1/team"


def test_flag_beats_environment_beats_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_user_config: Path
) -> None:
    ws = make_workspace(tmp_path / "ws")
    assert queue_settings(ws).url is None
    (isolated_user_config / "config.toml").write_text(
        '[queue]\nurl = "postgresql://user@h/db"\nreviewer = "Alice"\n'
    )
    got = queue_settings(ws)
    assert got.url == "postgresql://user@h/db" and got.reviewer == "Alice"
    assert got.origin.endswith("config.toml")
    (ws / ".redline").mkdir()
    (ws / ".redline" / "config.toml").write_text('[queue]\nurl = "postgresql://repo@h/db"\n')
    untrusted = queue_settings(ws)
    assert untrusted.url == "postgresql://user@h/db" and "not trusted" in untrusted.warnings[0]
    trust(ws)
    assert queue_settings(ws).url == "postgresql://repo@h/db"
    monkeypatch.setenv("REDLINE_QUEUE_URL", "postgresql://env@h/db")
    assert queue_settings(ws).origin == "$REDLINE_QUEUE_URL"
    assert queue_settings(ws, "postgresql://flag@h/db").url == "postgresql://flag@h/db"


def test_bad_settings_are_named(tmp_path: Path, isolated_user_config: Path) -> None:
    with pytest.raises(TeamQueueError, match=r"--queue: 'http://\*\*\*@h/x' is not a PostgreSQL"):
        queue_settings(None, "http://u:pw@h/x")
    (isolated_user_config / "config.toml").write_text('[queue]\nurls = "x"\n')
    with pytest.raises(TeamQueueError, match=r"queue\.urls: unknown setting"):
        queue_settings(None)
    (isolated_user_config / "config.toml").write_text('[queue]\nworkspace_id = "Bad Id"\n')
    with pytest.raises(TeamQueueError, match="is not a workspace id"):
        queue_settings(None)


def test_team_ids() -> None:
    assert team_id("g123", "pa-7") == "pa-7@g123"
    assert split_team_id("pa-7@g123") == ("pa-7", "g123")
    for bad in ("pa-7", "pa-x@g1", "pa-1@", "pa-1@G!"):
        with pytest.raises(TeamQueueError, match="is not a team id"):
            split_team_id(bad)


def test_workspace_ids_are_stable_and_distinct(tmp_path: Path) -> None:
    git_one = make_workspace(tmp_path / "g1", git=True)
    git_two = make_workspace(tmp_path / "g2", git=True)
    plain = make_workspace(tmp_path / "plain")
    ids = [workspace_id(p) for p in (git_one, git_two, plain)]
    assert ids == [workspace_id(p) for p in (git_one, git_two, plain)]
    assert len(set(ids)) == 3
    assert ids[0].startswith("g") and ids[2].startswith("w")
    assert workspace_id(plain, "configured") == "configured"


def test_an_unreachable_queue_is_an_error_without_the_password(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    ws = make_workspace(tmp_path / "ws")
    for argv in (
        ["queue", "init", "--queue", DOWN],
        ["--queue", DOWN, "pending", "list"],
        ["pending", "apply", "pa-1@g1", "--queue", DOWN],
        ["pending", "follow", "--once", "-C", str(ws), "--queue", DOWN],
    ):
        code, out, err = cli(capfd, *argv)
        assert code == 1, (argv, err)
        assert "cannot connect to the team queue (postgresql://***@127.0.0.1:1/team)" in err
        assert SECRET not in out + err
    code, out, err = cli(capfd, "queue", "status", "-C", str(ws), "--queue", DOWN, "--json")
    assert code == 1 and SECRET not in out + err
    data = json.loads(out)
    # status hides only the password: the role and the database stay readable.
    assert data["reachable"] is False and data["url"] == "postgresql://alice:***@127.0.0.1:1/team"


def test_options_that_need_the_team_queue(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    ws = make_workspace(tmp_path / "ws")
    code, _out, err = cli(capfd, "pending", "-C", str(ws), "list", "--workspace", "g1")
    assert code == 2 and "--workspace needs --queue URL" in err
    code, _out, err = cli(capfd, "pending", "edit", "pa-1", "--queue", DOWN)
    assert code == 2 and "is not a team id" in err
    code, _out, err = cli(capfd, "pending", "edit", "pa-1@g1", "--queue", DOWN)
    assert code == 1 and "cannot connect to the team queue" in err and SECRET not in err
    code, _out, err = cli(
        capfd, "pending", "apply", "pa-1@g1", "pa-2@g1", "--only", "a", "--queue", DOWN
    )
    assert code == 2 and "--only picks parts of one action: give exactly one ID" in err
    code, _out, err = cli(capfd, "pending", "apply", "pa-1@g1", "--only", "a,,b", "--queue", DOWN)
    assert code == 2 and "an empty PATH or PATH#N" in err
    code, _out, err = cli(capfd, "pending", "follow", "-C", str(ws))
    assert code == 2 and "no team queue" in err
    code, _out, err = cli(capfd, "--queue", DOWN, "pending", "import", "x")
    assert code == 2 and "--queue does not apply to `redline pending import`" in err
    # The team dashboard checks the database before it opens a screen: one clear line.
    code, _out, err = cli(capfd, "-C", str(ws), "--queue", DOWN)
    assert code == 1 and "cannot connect to the team queue" in err and SECRET not in err
    assert "Traceback" not in err
    code, _out, err = cli(capfd, "--queue", DOWN, "--model", "scripted:x.json")
    assert code == 2 and "--model do not apply to the team dashboard" in err
    code, _out, err = cli(capfd, "--queue", "http://example.invalid/x")
    assert code == 2 and "is not a PostgreSQL URL" in err


def test_a_queue_given_twice_is_refused_without_either_password(
    capfd: pytest.CaptureFixture[str],
) -> None:
    other = DOWN.replace("/team", "/other")
    code, _out, err = cli(capfd, "--queue", DOWN, "pending", "list", "--queue", other)
    assert code == 2 and "--queue given more than once with different values" in err
    assert SECRET not in err and "postgresql://***@127.0.0.1:1/other" in err


def test_queue_ids_lists_records_without_reading_them(tmp_path: Path) -> None:
    from redline.workspace.queue import WorkspaceQueue

    from .helpers import propose

    ws = make_workspace(tmp_path / "ws")
    first, second = propose(ws), propose(ws, add="two\n")
    with WorkspaceQueue(ws) as queue:
        assert sorted(queue.ids()) == [first.id, second.id]
        (queue.path / "actions" / "notes.json").write_text("{}")  # not a record's name
        assert sorted(queue.ids()) == [first.id, second.id]


def test_the_team_dashboard_names_a_missing_workspace_given_with_c(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """`redline -C PATH --queue URL` opens on PATH's workspace: a PATH that is not a folder
    is exit 2 naming it, before any connection (never silently ignored)."""
    gone = tmp_path / "gone"
    code, out, err = cli(capfd, "-C", str(gone), "--queue", DOWN)
    assert code == 2, err
    assert str(gone) in err and "cannot connect" not in err and SECRET not in out + err
