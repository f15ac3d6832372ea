"""``-C PATH`` before, inside or after the subcommand: every command acts on that folder.

The scenarios are keyed by the commands the parser really has, so a new subcommand
without a scenario fails ``test_every_command_has_a_scenario``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from redline.cli import build_parser, main
from redline.commands._levels import CommandParser
from redline.workspace.known import read_all
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
from redline.workspace.safe_apply import apply_preview


def _commands() -> list[str]:
    parser = build_parser()
    assert isinstance(parser, CommandParser) and parser.levels is not None
    return sorted(parser.levels.leaves)


COMMANDS = _commands()


@dataclass
class Run:
    code: int
    out: str
    err: str
    target: Path
    decoy: Path
    seen: dict[str, Any] = field(default_factory=dict)


def _push(root: Path, label: str) -> None:
    old = (root / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, old + "more\n")])
    draft = ActionDraft(
        label=label,
        source=Source.current("exec", "test", "s1"),
        source_tool_name="edit",
        preview=preview,
    )
    with WorkspaceQueue(root) as queue:
        queue.push(draft)


def _pending(root: Path) -> list[str]:
    with WorkspaceQueue(root) as queue:
        return [record.label for record in queue.list()]


def _queued(root: Path) -> None:
    _push(root, f"edit in {root.name}")


def _queued_then_changed(root: Path) -> None:
    """An action queued, then its file changed elsewhere (apart from its hunk): stale."""
    (root / "a.txt").write_text("top\nhello\n")
    _push(root, f"edit in {root.name}")
    (root / "a.txt").write_text("TOP\nhello\n")


def _applied(root: Path) -> None:
    old = (root / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, "changed\n")])
    apply_preview(root, preview, label=f"applied in {root.name}")


def _plugin_folder(root: Path) -> None:
    (root / ".redline" / "tools").mkdir(parents=True)
    (root / ".redline" / "tools" / "mine.py").write_text("TOOLS = []\n")


def _id_of(root: Path) -> str:
    from redline.workspace.identity import workspace_id

    return f"{workspace_id(root):<13}"


def _untouched_queue(run: Run) -> None:
    assert _pending(run.decoy) == ["edit in decoy"]


@dataclass
class Scenario:
    words: list[str]
    extra: list[str]
    check: Callable[[Run], None]
    setup: Callable[[Path], None] = lambda root: None
    patch: Callable[[pytest.MonkeyPatch, dict[str, Any]], None] = lambda mp, seen: None


def _plan(root: Path) -> None:
    steps = [
        {"call": [{"tool": "write", "args": {"path": "notes.md", "content": "# Notes\n"}}]},
        {"resolve": "apply", "reason": "wanted"},
        {"say": "done"},
    ]
    (root.parent / "plan.json").write_text(json.dumps({"name": "t", "steps": steps}))


def _patch_dashboard(mp: pytest.MonkeyPatch, seen: dict[str, Any]) -> None:
    from redline.commands import dashboard

    def launch(session: Any, **_kw: Any) -> int:
        seen["root"] = session.cwd
        session.close()
        return 0

    mp.setattr(dashboard, "launch", launch)


def _patch_serve(mp: pytest.MonkeyPatch, seen: dict[str, Any]) -> None:
    from redline.commands import serve

    def fake_serve(
        command: str, host: str, port: int, where: str, allow_hosts: tuple[str, ...] = ()
    ) -> int:
        seen["where"] = where
        return 0

    mp.setattr(serve, "_serve", fake_serve)


def _patch_mcp(mp: pytest.MonkeyPatch, seen: dict[str, Any]) -> None:
    from redline.mcp_server import server

    async def serve_stdio(root: Path) -> None:
        seen["root"] = root

    mp.setattr(server, "serve_stdio", serve_stdio)


def _patch_sandbox(mp: pytest.MonkeyPatch, seen: dict[str, Any]) -> None:
    """The probes would need user namespaces: record which workspace they would prove."""
    from redline.checks import sandbox, sandbox_probes

    def run_probes(box: Any, root: Path, **_kw: Any) -> list[Any]:
        seen["root"], seen["workspace"] = root, box.workspace
        return [sandbox_probes.Probe("write-workspace", sandbox_probes.BLOCKED)]

    mp.setattr(sandbox, "unavailable", lambda: "")
    mp.setattr(sandbox_probes, "run_probes", run_probes)


def _claude_settings(root: Path) -> Path:
    return root / ".claude" / "settings.local.json"


def _hook_installed(root: Path) -> bool:
    settings = _claude_settings(root)
    return settings.exists() and "hook claude" in settings.read_text()


def _install_claude_hook(root: Path) -> None:
    from redline.drivers.hooks.install import install

    install("claude", root, user=False, wait_seconds=600)


def _decided(root: Path) -> None:
    """One queued action, discarded with a reason naming the folder (for ``redline log``)."""
    import asyncio

    from redline.review.queued import resolve_queued

    _queued(root)
    with WorkspaceQueue(root) as queue:
        result = asyncio.run(resolve_queued(queue, "pa-1", "discard", f"because {root.name}"))
    assert not result.is_error, result.text


def _checked_target(root: Path) -> None:
    _queued(root)
    (root / ".redline" / "config.toml").write_text(
        '[[checks]]\nname = "true"\ncommand = ["true"]\nformat = "exit-code"\n'
    )


PATCH = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+imported\n"


def _patch_file(root: Path) -> None:
    (root.parent / "change.patch").write_text(PATCH)


def _team_queue_config(root: Path) -> None:
    """A trusted workspace whose [queue] url names it (nothing listens on port 1)."""
    from redline.trust import trust

    (root / ".redline").mkdir(exist_ok=True)
    url = f"postgresql://u:pw@127.0.0.1:1/{root.name}"
    (root / ".redline" / "config.toml").write_text(f'[queue]\nurl = "{url}"\n')
    trust(root)


def _used_target_queue(run: Run) -> None:
    assert run.code == 1 and "127.0.0.1:1/target" in run.err and "decoy" not in run.err, _fail(run)


def _check_ok(run: Run) -> None:
    assert run.code == 0, run.err


SCENARIOS: dict[str, Scenario] = {
    "redline": Scenario(
        [],
        [],
        lambda r: (_check_ok(r), r.seen["root"] == r.target.resolve() or _fail(r)),
        patch=_patch_dashboard,
    ),
    "redline demo": Scenario(
        ["demo"],
        ["--headless", "--no-wait"],
        lambda r: (r.code == 2 and "-C" in r.err and "demo" in r.err) or _fail(r),
    ),
    "redline serve": Scenario(
        ["serve"],
        [],
        lambda r: (_check_ok(r), str(r.target.resolve()) in r.seen["where"] or _fail(r)),
        patch=_patch_serve,
    ),
    "redline exec": Scenario(
        ["exec"],
        ["--model", "scripted:{plan}", "--prompt", "add notes"],
        lambda r: (
            _check_ok(r),
            ((r.target / "notes.md").exists() and not (r.decoy / "notes.md").exists()) or _fail(r),
        ),
        setup=_plan,
    ),
    "redline ast-edit": Scenario(
        ["ast-edit"],
        ["--pattern", "print($X)", "--rewrite", "log($X)", "--apply"],
        lambda r: (
            _check_ok(r),
            (
                (r.target / "app.py").read_text() == "log(1)\n"
                and (r.decoy / "app.py").read_text() == "print(1)\n"
            )
            or _fail(r),
        ),
        setup=lambda root: (root / "app.py").write_text("print(1)\n"),
    ),
    "redline tools": Scenario(
        ["tools"],
        [],
        lambda r: (
            _check_ok(r),
            str(r.target.resolve() / ".redline" / "tools") in r.out or _fail(r),
        ),
        setup=_plugin_folder,
    ),
    "redline trust": Scenario(
        ["trust"],
        [],
        lambda r: (_check_ok(r), f"Trusted {r.target.resolve()}:" in r.out or _fail(r)),
    ),
    "redline undo": Scenario(
        ["undo"],
        ["--list"],
        lambda r: (
            _check_ok(r),
            ("applied in target" in r.out and "decoy" not in r.out) or _fail(r),
        ),
        setup=_applied,
    ),
    "redline pending list": Scenario(
        ["pending", "list"],
        [],
        lambda r: (_check_ok(r), ("edit in target" in r.out and "decoy" not in r.out) or _fail(r)),
        setup=_queued,
    ),
    "redline pending show": Scenario(
        ["pending", "show"],
        ["pa-1"],
        lambda r: (_check_ok(r), "edit in target" in r.out or _fail(r)),
        setup=_queued,
    ),
    "redline pending apply": Scenario(
        ["pending", "apply"],
        ["pa-1"],
        lambda r: (
            _check_ok(r),
            (r.target / "a.txt").read_text().endswith("more\n") or _fail(r),
            _untouched_queue(r),
        ),
        setup=_queued,
    ),
    "redline pending comment": Scenario(
        ["pending", "comment"],
        ["pa-1", "a.txt:1", "in target"],
        lambda r: (
            _check_ok(r),
            (r.target / ".redline/queue/comments/pa-1.json").is_file() or _fail(r),
            _untouched_queue(r),
        ),
        setup=_queued,
    ),
    "redline pending viewed": Scenario(
        ["pending", "viewed"],
        ["pa-1"],
        lambda r: (
            _check_ok(r),
            (r.target / ".redline/queue/comments/pa-1.json").is_file() or _fail(r),
            _untouched_queue(r),
        ),
        setup=_queued,
    ),
    "redline pending discard": Scenario(
        ["pending", "discard"],
        ["pa-1", "--reason", "not this one"],
        lambda r: (_check_ok(r), _pending(r.target) == [] or _fail(r), _untouched_queue(r)),
        setup=_queued,
    ),
    "redline pending edit": Scenario(
        ["pending", "edit"],
        ["pa-1"],
        lambda r: (_check_ok(r), "Edited a.txt" in r.out or _fail(r), _untouched_queue(r)),
        setup=_queued,
    ),
    "redline pending repreview": Scenario(
        ["pending", "repreview"],
        ["pa-1"],
        lambda r: (_check_ok(r), "pa-1 is now pa-2" in r.out or _fail(r), _untouched_queue(r)),
        setup=_queued_then_changed,
    ),
    "redline pending clear": Scenario(
        ["pending", "clear"],
        [],
        lambda r: (_check_ok(r), _pending(r.target) == [] or _fail(r), _untouched_queue(r)),
        setup=_queued,
    ),
    "redline hook": Scenario(
        ["hook"],
        ["claude"],
        # The hook's workspace is the payload's cwd: it takes no -C, and says so.
        lambda r: (r.code == 2 and "-C" in r.err) or _fail(r),
    ),
    "redline hook-server": Scenario(
        ["hook-server"],
        [],
        # The server serves every workspace of its callers: it takes no -C, and says so.
        lambda r: (r.code == 2 and "-C" in r.err) or _fail(r),
    ),
    "redline hooks install": Scenario(
        ["hooks", "install"],
        ["claude"],
        lambda r: (
            _check_ok(r),
            (_hook_installed(r.target) and not _claude_settings(r.decoy).exists()) or _fail(r),
        ),
    ),
    "redline hooks uninstall": Scenario(
        ["hooks", "uninstall"],
        ["claude"],
        lambda r: (
            _check_ok(r),
            (not _hook_installed(r.target) and _hook_installed(r.decoy)) or _fail(r),
        ),
        setup=_install_claude_hook,
    ),
    "redline hooks status": Scenario(
        ["hooks", "status"],
        [],
        lambda r: (
            _check_ok(r),
            (str(_claude_settings(r.target.resolve())) in r.out and "decoy" not in r.out)
            or _fail(r),
        ),
        setup=_install_claude_hook,
    ),
    "redline log": Scenario(
        ["log"],
        ["--json"],
        lambda r: (
            _check_ok(r),
            ("because target" in r.out and "because decoy" not in r.out) or _fail(r),
        ),
        setup=_decided,
    ),
    "redline pending check": Scenario(
        ["pending", "check"],
        ["pa-1", "--json"],
        # Only the target has pa-1 and a check (its workspace is untrusted: skipped, exit 0).
        lambda r: (
            _check_ok(r),
            [c["status"] for c in json.loads(r.out)["checks"]] == ["skipped"] or _fail(r),
        ),
        setup=lambda root: _checked_target(root) if root.name == "target" else None,
    ),
    "redline pending import": Scenario(
        ["pending", "import"],
        ["{tmp}/change.patch", "--patch"],
        lambda r: (
            _check_ok(r),
            (len(_pending(r.target)) == 1 and _pending(r.decoy) == []) or _fail(r),
        ),
        setup=_patch_file,
    ),
    "redline mcp": Scenario(
        ["mcp"],
        [],
        lambda r: (_check_ok(r), r.seen["root"] == r.target.resolve() or _fail(r)),
        patch=_patch_mcp,
    ),
    "redline rules list": Scenario(
        ["rules", "list"],
        [],
        lambda r: (
            _check_ok(r),
            str(r.target.resolve() / ".redline" / "rules.toml") in r.out or _fail(r),
        ),
        setup=lambda root: (
            (root / ".redline").mkdir(exist_ok=True)
            or (root / ".redline" / "rules.toml").write_text(
                '[[rules]]\nmatch = {path = "*.md"}\ndecision = "apply"\n'
            )
        ),
    ),
    "redline queue status": Scenario(
        ["queue", "status"],
        [],
        lambda r: (
            _check_ok(r),
            ("workspace: " in r.out and str(r.target.resolve()) in r.out and "decoy" not in r.out)
            or _fail(r),
        ),
    ),
    "redline queue init": Scenario(
        ["queue", "init"], [], _used_target_queue, setup=_team_queue_config
    ),
    "redline queue grant": Scenario(
        ["queue", "grant"], ["alice", "--reviewer"], _used_target_queue, setup=_team_queue_config
    ),
    "redline queue revoke": Scenario(
        ["queue", "revoke"], ["alice"], _used_target_queue, setup=_team_queue_config
    ),
    "redline pending follow": Scenario(
        ["pending", "follow"], ["--once"], _used_target_queue, setup=_team_queue_config
    ),
    "redline sandbox": Scenario(
        ["sandbox"],
        ["--json"],
        lambda r: (
            _check_ok(r),
            (
                r.seen["root"] == r.target.resolve()
                and r.seen["workspace"] == str(r.target.resolve())
                and json.loads(r.out)["probes"][0]["result"] == "blocked"
            )
            or _fail(r),
        ),
        patch=_patch_sandbox,
    ),
    "redline workspaces list": Scenario(
        ["workspaces", "list"],
        [],
        lambda r: (
            _check_ok(r),
            (
                [line for line in r.out.splitlines() if line.startswith("* ")]
                == [f"* {_id_of(r.target)} {r.target.resolve()}  (1 pending, 0 stale)"]
                and f"  {r.decoy.resolve()}  (1 pending" in r.out
            )
            or _fail(r),
        ),
        setup=_queued,
    ),
    "redline workspaces forget": Scenario(
        ["workspaces", "forget"],
        [],
        lambda r: (
            _check_ok(r),
            (
                f"Forgot {r.target.resolve()}" in r.out
                and [k.path for k in read_all()] == [str(r.decoy.resolve())]
            )
            or _fail(r),
        ),
        setup=_queued,
    ),
    "redline rules check": Scenario(
        ["rules", "check"],
        [],
        lambda r: (_check_ok(r), ("edit in target" in r.out and "decoy" not in r.out) or _fail(r)),
        setup=_queued,
    ),
}


def _fail(run: Run) -> bool:
    raise AssertionError(f"exit {run.code}\nstdout:\n{run.out}\nstderr:\n{run.err}")


def _placements(words: list[str], extra: list[str], path: str) -> dict[str, list[str]]:
    option = ["-C", path]
    placed = {"before": [*option, *words, *extra]}
    if words:
        placed["inside"] = [words[0], *option, *words[1:], *extra]
        placed["after"] = [*words, *extra, *option]
    return placed


def test_every_command_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == COMMANDS


@pytest.mark.parametrize("where", ["before", "inside", "after"])
@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_acts_on_the_C_folder(
    command: str,
    where: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    scenario = SCENARIOS.get(command)
    assert scenario is not None, f"no -C scenario for `{command}`: add one to SCENARIOS"
    placed = _placements(scenario.words, scenario.extra, str(tmp_path / "target"))
    if where not in placed:
        pytest.skip(f"`{command}` has no subcommand word to put -C after")
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")
    monkeypatch.setenv("EDITOR", "sed -i s/more/EDITED/")
    monkeypatch.delenv("VISUAL", raising=False)
    roots = {}
    for name in ("target", "decoy"):
        root = tmp_path / name
        root.mkdir()
        (root / "a.txt").write_text("hello\n")
        scenario.setup(root)
        roots[name] = root
    seen: dict[str, Any] = {}
    scenario.patch(monkeypatch, seen)
    monkeypatch.chdir(roots["decoy"])
    argv = [
        arg.replace("{plan}", str(tmp_path / "plan.json")).replace("{tmp}", str(tmp_path))
        for arg in placed[where]
    ]
    code = main(argv)
    out, err = capfd.readouterr()
    scenario.check(Run(code, out, err, roots["target"], roots["decoy"], seen))


@pytest.mark.parametrize(
    "argv",
    [
        ["-C", "{a}", "undo", "--list", "-C", "{b}"],
        ["pending", "-C", "{a}", "discard", "pa-1", "-C", "{b}"],
        ["trust", "-C", "{a}", "-C", "{b}"],
    ],
)
def test_two_different_folders_are_refused(
    argv: list[str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    argv = [arg.format(a=tmp_path / "a", b=tmp_path / "b") for arg in argv]
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert "-C given more than once with different values" in err
    assert str(tmp_path / "a") in err and str(tmp_path / "b") in err
    assert not (tmp_path / "a" / ".redline").exists() and not (tmp_path / "b" / ".redline").exists()


def test_the_same_folder_twice_is_fine(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path), "undo", "--list", "-C", f"{tmp_path}/"]) == 0
    assert "No applied changes" in capfd.readouterr().out


@pytest.mark.parametrize("command", [["undo", "--list"], ["trust"], ["pending", "list"]])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_C_path_that_is_no_folder_is_exit_2_naming_it(
    command: list[str], kind: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nope"
    if kind == "file":
        path.write_text("x\n")
    assert main(["-C", str(path), *command]) == 2
    out, err = capfd.readouterr()
    assert out == "" and f"-C {path} is not a folder" in err
    assert "Traceback" not in err


def test_an_option_the_command_does_not_take_is_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["--model", "openai:x", "-C", str(tmp_path), "pending", "list"]) == 2
    err = capfd.readouterr().err
    assert "--model does not apply to `redline pending list`" in err
    assert err.startswith("usage: redline pending list")


def test_a_top_level_option_reaches_the_subcommand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")
    _plan(tmp_path / "ws")
    (tmp_path / "ws").mkdir()
    model = f"scripted:{tmp_path / 'plan.json'}"
    argv = ["--model", model, "--resolver", "apply-all", "exec", "--prompt", "x"]
    assert main([*argv, "-C", str(tmp_path / "ws")]) == 0, capfd.readouterr().err
    assert (tmp_path / "ws" / "notes.md").exists()
    # the dashboard keeps its own choices for --resolver
    assert main(["--resolver", "apply-all", "-C", str(tmp_path)]) == 2
    assert "invalid choice: 'apply-all'" in capfd.readouterr().err


def test_two_different_values_of_any_shared_option_are_refused(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    argv = ["--model", "openai:a", "exec", "--model", "openai:b", "--prompt", "x"]
    assert main([*argv, "-C", str(tmp_path)]) == 2
    assert "--model given more than once with different values" in capfd.readouterr().err


def test_json_is_taken_at_the_group_level(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["pending", "--json", "-C", str(tmp_path), "list"]) == 0
    assert json.loads(capfd.readouterr().out) == {"actions": []}
    assert main(["rules", "--json", "list", "-C", str(tmp_path)]) == 0
    assert "rules" in json.loads(capfd.readouterr().out)
    assert main(["pending", "--json", "discard", "pa-1", "-C", str(tmp_path)]) == 2
    assert "--json does not apply to `redline pending discard`" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["pending", "discard", "pa-1", "--bogus"], "usage: redline pending discard"),
        (["pending", "--bogus", "list"], "usage: redline pending "),
        (["undo", "--bogus"], "usage: redline undo"),
        (["exec", "--bogus"], "usage: redline exec"),
        (["rules", "check", "--nope"], "usage: redline rules check"),
    ],
)
def test_a_bad_flag_prints_the_subcommands_usage(
    argv: list[str], usage: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert err.startswith(usage)
    assert "unrecognized arguments: --" in err
