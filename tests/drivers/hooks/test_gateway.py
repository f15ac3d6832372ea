"""``redline hook claude`` end to end in-process: the decision → the answer, undo, fail closed.

The hook runs in a thread (as the agent would run it as a process); the test decides as a
person would, through the workspace queue (``resolve_queued``, ``redline pending``).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded

from redline.commands import hook as hook_command
from redline.drivers.hooks.answers import Rendered
from redline.review.follower import follow
from redline.review.queued import resolve_queued
from redline.workspace.queue import QueueRecord, WorkspaceQueue


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\nworld\n", encoding="utf-8")
    return ws


@pytest.fixture
def queue(root: Path) -> Iterator[WorkspaceQueue]:
    q = WorkspaceQueue(root)
    follow(q, lambda: None)()  # the queue's folders exist before any hook runs
    yield q
    q.close()


def start_hook(raw: bytes) -> Future[Rendered]:
    """Run one hook call in a thread; its future holds what it printed and its exit."""
    done: Future[Rendered] = Future()

    def run() -> None:
        try:
            done.set_result(hook_command.handle("claude", raw))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done


def pending(queue: WorkspaceQueue, count: int = 1) -> list[QueueRecord]:
    """Wait (on the queue's follower, no polling delay) until ``count`` actions are queued."""
    changed = threading.Event()
    stop = follow(queue, changed.set)
    try:
        while len(queue.list()) < count:
            assert changed.wait(30), "the hook queued nothing"
            changed.clear()
        return queue.list()
    finally:
        stop()


def decide(queue: WorkspaceQueue, action_id: str, verb: str, reason: str = "") -> Any:
    return asyncio.run(resolve_queued(queue, action_id, verb, reason))


def answer_of(rendered: Rendered) -> dict[str, Any]:
    assert rendered.code == 0, rendered.stderr
    output = json.loads(rendered.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    return dict(output)


def test_apply_allows_with_the_approved_text_and_undo_reverts(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("pre-edit.json", root))
    [record] = pending(queue)
    assert record.source.canonical == "hook:claude"
    assert record.source_tool_name == "hook:Edit"
    assert record.applied_by == "owner"
    assert (root / "a.txt").read_text(encoding="utf-8") == "hello\nworld\n"
    result = decide(queue, record.id, "apply", "fine")
    assert not result.is_error, result.text
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "allow"
    assert output["updatedInput"]["old_string"] == "hello\nworld\n"
    assert output["updatedInput"]["new_string"] == "hello\nthere\n"
    # The agent writes; its PostToolUse hook records the write for undo.
    (root / "a.txt").write_text("hello\nthere\n", encoding="utf-8")
    post = hook_command.handle("claude", recorded("post-edit.json", root))
    assert (post.code, post.stdout) == (0, "")
    from redline.workspace.journal import undo_last

    undo_last(root)
    assert (root / "a.txt").read_text(encoding="utf-8") == "hello\nworld\n"


def test_an_agent_that_writes_something_else_is_reported(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("pre-write-2.json", root))
    [record] = pending(queue)
    decide(queue, record.id, "apply")
    assert answer_of(future.result(30))["permissionDecision"] == "allow"
    (root / "a.txt").write_text("something else\n", encoding="utf-8")
    post = hook_command.handle("claude", recorded("post-write-2.json", root))
    assert "differs from what the reviewer approved" in post.stderr
    assert "+something else" in post.stderr
    assert "additionalContext" in post.stdout


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("not this file", "Discarded by the reviewer: not this file"),
        ("", "Discarded by the reviewer: no reason given"),
    ],
)
def test_discard_denies_with_the_reason(
    root: Path, queue: WorkspaceQueue, reason: str, expected: str
) -> None:
    future = start_hook(recorded("pre-write.json", root))
    [record] = pending(queue)
    decide(queue, record.id, "discard", reason)
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"] == expected
    assert not (root / "new.txt").exists()


def test_a_hook_process_lets_its_watcher_go_once_its_answer_is_decided(
    root: Path, queue: WorkspaceQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`redline hook` (exiting) closes the queue's watch when the decision lands, beside the
    decision's last writes, not at its exit; the answer is the same."""
    from redline.review.follower import QueueFollower

    released: list[Path] = []
    release = QueueFollower.release

    def spy(self: QueueFollower) -> None:
        released.append(self.root)
        release(self)

    monkeypatch.setattr(QueueFollower, "release", spy)
    done: Future[Rendered] = Future()

    def run() -> None:
        try:
            done.set_result(
                hook_command.handle("claude", recorded("pre-write.json", root), exiting=True)
            )
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    [record] = pending(queue)
    assert released == []  # still waiting: the watch hears the decision
    decide(queue, record.id, "discard", "not now")
    output = answer_of(done.result(30))
    assert output["permissionDecisionReason"] == "Discarded by the reviewer: not now"
    assert released and set(released) == {root}
    assert queue.list() == [] and queue.resolution(record.id) is not None


def test_no_decision_in_time_hands_over_then_blocks(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nwait_seconds = 0.05\n", encoding="utf-8"
    )
    rendered = hook_command.handle("claude", recorded("pre-write.json", root))
    output = answer_of(rendered)
    assert output["permissionDecision"] == "deny"
    assert "still pending review in redline as pa-1" in output["permissionDecisionReason"]
    [record] = queue.list()
    assert record.applied_by == "preview"  # claimed: the queue writes it if applied later
    result = decide(queue, record.id, "apply")
    assert not result.is_error, result.text
    assert (root / "new.txt").read_text(encoding="utf-8") == "new file\n"


def test_a_persons_edit_is_what_the_agent_writes(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("pre-write.json", root))
    [record] = pending(queue)
    from redline.workspace.preview import FileCreate, Preview
    from redline.workspace.queue import ActionDraft

    with queue.claim(record.id) as claim:  # what `redline pending edit` does
        new = claim.replace(
            ActionDraft(
                label=record.label,
                source=record.source,
                source_tool_name=record.source_tool_name,
                preview=Preview([FileCreate("new.txt", "reviewed\n")]),
                details=record.details,
                applied_by="owner",
            ),
            resolved_by="person",
        )
    result = decide(queue, new.id, "apply")
    assert not result.is_error, result.text
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "allow"
    assert output["updatedInput"]["content"] == "reviewed\n"
    assert "reviewer's edits" in output["permissionDecisionReason"]


def test_read_passes_through_untouched(root: Path, queue: WorkspaceQueue) -> None:
    rendered = hook_command.handle("claude", recorded("pre-read.json", root))
    assert rendered == Rendered("", "", 0)
    assert queue.list() == []


def test_review_shell_makes_bash_a_permission_action(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    assert hook_command.handle("claude", recorded("pre-bash.json", root)).stdout == ""
    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nreview_shell = true\n", encoding="utf-8"
    )
    future = start_hook(recorded("pre-bash.json", root))
    [record] = pending(queue)
    assert record.label == "Bash: echo hi" and record.source_tool_name == "hook:Bash"
    decide(queue, record.id, "discard", "no shell")
    output = answer_of(future.result(30))
    assert output["permissionDecisionReason"] == "Discarded by the reviewer: no shell"


def test_outside_the_workspace_is_denied(root: Path, queue: WorkspaceQueue) -> None:
    output = answer_of(
        hook_command.handle("claude", recorded("pre-write.json", root, file_path="/etc/x"))
    )
    assert output["permissionDecision"] == "deny"
    assert "outside the workspace" in output["permissionDecisionReason"]
    assert queue.list() == []


# -- fail closed: every problem is the agent's blocking exit (2) with the cause ------
def run_cli(
    raw: bytes, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code = hook_command.run(argparse.Namespace(agent="claude"))
    return code, capsys.readouterr().err


def test_malformed_payload_blocks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(b"{not json", monkeypatch, capsys)
    assert code == 2
    assert "redline: blocked: hook payload is not JSON" in err


def test_unwritable_queue_blocks(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / ".redline").write_text("not a folder", encoding="utf-8")
    code, err = run_cli(recorded("pre-write.json", root), monkeypatch, capsys)
    assert code == 2
    assert err.startswith("redline: blocked: ")
    assert not (root / "new.txt").exists()


def test_a_crash_blocks(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from redline.drivers.hooks import gateway

    async def boom(self: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(gateway.HookCall, "run", boom)
    code, err = run_cli(recorded("pre-write.json", root), monkeypatch, capsys)
    assert (code, err) == (2, "redline: blocked: RuntimeError: disk on fire\n")


def test_missing_redline_binary_blocks_through_the_installed_guard(tmp_path: Path) -> None:
    """The installed guard: a missing binary (127) or a killed redline → exit 2 *with a
    reason on stderr* (Codex and Gemini CLI allow a silent exit 2), nothing on stdout."""
    import subprocess

    from redline.drivers.hooks.install import hook_command as installed

    for agent in ("claude", "codex", "gemini"):
        for base in (str(tmp_path / "gone" / "redline"), "sh -c 'kill -9 $$'"):
            command = installed(agent, base)
            done = subprocess.run(
                ["bash", "-c", command], input=b"{}", capture_output=True, check=False
            )
            assert done.returncode == 2
            assert done.stdout == b""
            assert b"redline hook failed: the tool call is blocked" in done.stderr


def test_a_pass_through_call_imports_neither_asyncio_nor_the_review_core(root: Path) -> None:
    """`redline hook claude` for a Read: the fast path (python -X importtime lists imports)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "redline", "hook", "claude"],
        input=recorded("pre-read.json", root),
        capture_output=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()}
    assert "redline.drivers.hooks.payload" in imported
    assert not {"asyncio", "pydantic", "redline.review.session", "redline.config"} & imported
    # What the hook's modules are typed with is imported for the type checker only.
    assert not {"redline.jsontypes", "typing_extensions", "redline.review.store"} & imported
    # Issue 49: no typing, no dataclasses (nor the inspect, ast and dis they bring), no
    # argument parser, no mapping of calls to changes, no pathlib (an empty outbox is read
    # by its path as text), no json (it imports re and enum: about 6 ms of a 9 ms bare
    # start here; redline.fastjson drives the same C scanner and encoder): the payload,
    # the answer, the outbox.
    assert (
        not {
            "json",
            "re",
            "enum",
            "pathlib",
            "typing",
            "dataclasses",
            "inspect",
            "ast",
            "argparse",
            "redline.drivers.hooks.mapping",
            "redline.workspace.preview",
        }
        & imported
    )
    assert {m for m in imported if m.startswith("redline")} <= PASS_THROUGH_MODULES


#: Every redline module a pass-through call loads (issue 49: a new one here is a cost every
#: tool call of every agent pays; docs/performance.md).
PASS_THROUGH_MODULES = {
    "redline",
    "redline.__main__",
    "redline.cli",
    "redline.commands",
    "redline.commands.hook",
    "redline.drivers",
    "redline.drivers.hooks",
    "redline.drivers.hooks.answers",
    "redline.drivers.hooks.outbox",
    "redline.drivers.hooks.payload",
    "redline.drivers.hooks.tools",
    "redline.drivers.hooks.values",
    "redline.fastjson",  # the payload and the answer without json (re, enum)
    "redline.hooktrace",  # REDLINE_HOOK_TRACE: one environment lookup
    "redline.hookserver",  # the resident hook server's client (os, sys, _socket only)
    "redline.hookserver.client",
    "redline.paths",
    "redline.workspace",
    "redline.workspace.outbox",
    "redline.workspace.procs",
}


def test_a_rule_over_sources_decides_a_hook_action(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    (isolated_user_config / "rules.toml").write_text(
        '[[rule]]\nname = "no agent writes docs"\ndecision = "discard"\n'
        'sources = ["hook:*"]\npaths = ["*.txt"]\nreason = "write docs by hand"\n',
        encoding="utf-8",
    )
    output = answer_of(hook_command.handle("claude", recorded("pre-write.json", root)))
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"] == "Discarded by the reviewer: write docs by hand"
    assert queue.list() == []
    assert queue.resolution("pa-1").rule == "no agent writes docs"  # type: ignore[union-attr]


def test_without_a_rules_file_a_reviewed_call_does_not_load_the_rules_engine(
    root: Path, isolated_user_config: Path
) -> None:
    """Start-up of a reviewed call: no rules file (user or workspace) → `redline.rules` is
    never imported (`python -X importtime`); the call times out at once and hands over."""
    import os
    import subprocess

    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nwait_seconds = 0.01\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "redline", "hook", "claude"],
        input=recorded("pre-write.json", root),
        capture_output=True,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "still pending review in redline as pa-1" in done.stdout.decode()
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()}
    assert "redline.review.session" in imported
    assert not {"redline.rules", "pydantic"} & imported


def test_a_hook_call_without_a_team_queue_imports_none_of_it(tmp_path: Path) -> None:
    """No queue configured: the reviewed call never imports the team queue (or psycopg)."""
    import os
    import subprocess
    import sys

    from tests.drivers.hooks.test_claude_mapping import recorded

    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "REDLINE_QUEUE_URL"}
    env["REDLINE_CONFIG_DIR"] = str(tmp_path / "config")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text("[hooks]\nwait_seconds = 0.01\n")
    env["REDLINE_HOOK_TRACE"] = str(tmp_path / "trace")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "redline", "hook", "claude"],
        input=recorded("pre-write.json", ws),
        capture_output=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()}
    assert "redline.review.session" in imported
    assert not {"psycopg", "redline.teamqueue.settings"} & imported


def test_a_hook_process_leaves_no_doorbell_behind(tmp_path: Path) -> None:
    """A hook process that handed its action over (no decision in ``wait_seconds``) ends
    with os._exit: its queue watcher's doorbell (``requests/.wake-PID``) is removed first,
    and its watch was handed to a keeper process (``hand_teardown_over``)."""
    import os
    import subprocess

    from tests.drivers.hooks.test_claude_mapping import recorded

    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "REDLINE_QUEUE_URL"}
    env["REDLINE_CONFIG_DIR"] = str(tmp_path / "config")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text("[hooks]\nwait_seconds = 0.01\n")
    env["REDLINE_HOOK_TRACE"] = str(tmp_path / "trace")
    done = subprocess.run(
        [sys.executable, "-m", "redline", "hook", "claude"],
        input=recorded("pre-write.json", ws),
        capture_output=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "still pending review in redline as pa-1" in done.stdout.decode()
    requests = ws / ".redline" / "queue" / "requests"
    assert [n for n in os.listdir(requests) if n.startswith(".wake-")] == []
    if sys.platform.startswith("linux"):  # its watch was handed to a keeper (no teardown wait)
        assert " watch handed over\n" in (tmp_path / "trace").read_text()


# What a call has imported when it exits (the hook command ends with os._exit).
def _told(stderr: str, tag: str) -> list[str]:
    """The JSON list the script wrote once on stderr after ``tag``."""
    lines = [line for line in stderr.splitlines() if line.startswith(f"{tag} ")]
    assert len(lines) == 1, stderr[-2000:]
    told: list[str] = json.loads(lines[0].removeprefix(f"{tag} "))
    return told


def _modules_told(script: str, tag: str, root: Path) -> tuple[str, set[str]]:
    """Run ``script`` (a hook call that tells its loaded modules after ``tag``) on the
    recorded Write in ``root``: its answer, and the modules it told."""
    import os
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", script],
        input=recorded("pre-write.json", root),
        capture_output=True,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout.decode(), set(_told(done.stderr.decode(), tag))


_AT_EXIT = """
import json, sys
import redline.cli as cli
exit_now = cli._exit_now
def spy(code):
    sys.stderr.write("AT_EXIT " + json.dumps(sorted(sys.modules)) + "\\n")
    exit_now(code)
cli._exit_now = spy
sys.argv = ["redline", "hook", "claude"]
cli.main()
"""


def test_a_rule_decided_call_loads_no_event_loop_nor_the_hunk_machinery(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    """A rule's discard at push decides through the one resolution path
    (``ReviewSession.resolve``), driven without an event loop: the call never imports
    asyncio, the queue's watcher, nor the hunk, re-base and three-way merge machinery that
    only a part, an edit or an apply's re-base needs (issue 49). Checked in a fresh
    interpreter, as the agent runs it; the decision is logged as the rule's."""

    (isolated_user_config / "rules.toml").write_text(
        '[[rule]]\nname = "no agent writes docs"\ndecision = "discard"\n'
        'sources = ["hook:*"]\npaths = ["*.txt"]\nreason = "write docs by hand"\n',
        encoding="utf-8",
    )
    out, loaded = _modules_told(_AT_EXIT, "AT_EXIT", root)
    assert "Discarded by the reviewer: write docs by hand" in out
    assert {"redline.rules", "redline.review.resolve"} <= loaded  # decided by the one path
    assert (
        not {
            "asyncio",
            "redline.review.rebase",
            "redline.workspace.rebase",
            "merge3",
            "redline.workspace.hunks",
            "redline.review.follower",
            "watchfiles",
            "redline.review.unseen",
            "redline.review.events",  # nobody hears a hook process's events: none is built
        }
        & loaded
    )
    assert queue.list() == []
    resolution = queue.resolution("pa-1")
    assert resolution is not None
    assert (resolution.decision, resolution.resolved_by, resolution.rule) == (
        "discard",
        "rule",
        "no agent writes docs",
    )


# What a reviewed call has imported at the moment its action reaches the queue: the agent
# waits for these, so none of the machinery that only a decision needs belongs here.
_AT_PUSH = """
import json, sys
from redline.review import store
push = store.PendingActionStore.push
def spy(self, action):
    pushed = push(self, action)
    sys.stderr.write("AT_PUSH " + json.dumps(sorted(sys.modules)) + "\\n")
    return pushed
store.PendingActionStore.push = spy
sys.argv = ["redline", "hook", "claude"]
from redline.cli import main
main()
"""


def test_a_reviewed_call_queues_its_action_before_loading_what_only_a_decision_needs(
    root: Path, isolated_user_config: Path
) -> None:
    """The event classes, the resolution machinery (hunks, rebase, merge3), the queue's
    watcher (watchfiles, whose package imports multiprocessing), the rules engine, pydantic,
    asyncio (and the ssl it imports) and the full command-line parser are loaded after the
    action is queued, while a person
    reviews (docs/performance.md, "`redline hook`"); the call still answers as before."""

    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nwait_seconds = 0.01\n", encoding="utf-8"
    )
    out, at_push = _modules_told(_AT_PUSH, "AT_PUSH", root)
    assert "still pending review in redline as pa-1" in out
    assert {"redline.review.session", "redline.workspace.queue"} <= at_push
    assert (
        not {
            "redline.review.events",
            "redline.review.resolve",
            "redline.review.rebase",
            "merge3",
            "redline.review.follower",
            "redline.review.decision",  # a decision's values (issue 49, third pass)
            # Issue 49: the hunk machinery, pydantic's TypedDict base and the parser.
            "redline.workspace.hunks",
            "redline.workspace.pyparse",
            "redline.workspace.summary",
            "typing_extensions",
            "argparse",
            "logging",  # imported at the first message (redline.lazylog)
            "difflib",  # a new file's line counts need no diff
            "watchfiles",
            "multiprocessing",
            "pickle",
            "redline.rules",
            "pydantic",
            "redline.commands._levels",
            "asyncio",
            "ssl",
            # The gateway's annotations (issue 43) import nothing at run time, and no
            # dashboard, AST tooling, other driver or settings-file editor comes along.
            "redline.jsontypes",
            "redline.tools",
            "redline.drivers.acp",
            "redline.drivers.model",
            "redline.drivers.hooks.codex_trust",
            "textual",
            "rich",
            "libcst",
            "tomlkit",
            "acp",
            "openai",
        }
        & at_push
    )
    # A cap on the redline modules loaded before the action is safe (48 when issue 49
    # pinned it, with issue 47's revision lookup and issue 43's typed details; issue 44's
    # QueueListing, a base class of the queue, is one more, and its memos and staleness
    # check load at the first listing, not here): a module added to the queueing path must
    # be one it cannot do without. (redline.hooktrace, issue 49's opt-in step trace, is one
    # environment lookup; redline.hookserver and its client, the resident hook server's
    # client that every hook process tries first, are two more; redline.fastjson, which
    # spares a pass-through call importing json, re and enum, is one more.)
    ours = sorted(m for m in at_push if m.startswith("redline"))
    assert len(ours) <= 52, ours
    memos = {"listing", "staleness", "hashes", "memo"}
    assert not {f"redline.workspace.queue.{name}" for name in memos} & set(ours)


_PUSH_AND_STOP = """
import json, os, sys
from redline.review import store
push = store.PendingActionStore.push
def spy(self, action):
    push(self, action)
    sys.stderr.write("AT_PUSH " + json.dumps(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
    os._exit(0)
store.PendingActionStore.push = spy
sys.argv = ["redline", "hook", "claude"]
from redline.cli import main
main()
"""


def test_a_reviewed_call_with_no_config_file_queues_without_secrets_nor_datetime(
    root: Path, isolated_user_config: Path
) -> None:
    """A temporary file's random part comes from ``os.urandom`` (not ``secrets``, which
    brings ``random`` and ``base64``) and a record's ISO time is made where one is shown:
    with the user's state key made by an earlier call and no ``config.toml`` to parse
    (``tomllib`` imports ``datetime``), none of them is loaded before the push."""
    _modules_told(_PUSH_AND_STOP, "AT_PUSH", root)  # the first call makes the state key
    _out, at_push = _modules_told(_PUSH_AND_STOP, "AT_PUSH", root)
    assert "redline.workspace.queue" in at_push
    assert not {"secrets", "random", "base64", "datetime", "tomllib"} & at_push


# What a hook process imports between a person's decision and its exit (issue 49: the
# decision -> exit path loads nothing; what it needs was loaded while the person read).
_AFTER_DECISION = """
import json, sys
import redline.cli as cli
import redline.drivers.hooks.gateway as gateway
seen = {}
reject = gateway.HookCall._on_reject
def spy(self, reason):
    seen["decided"] = set(sys.modules)
    return reject(self, reason)
gateway.HookCall._on_reject = spy
exit_now = cli._exit_now
def leave(code):
    sys.stderr.write("LATE " + json.dumps(sorted(set(sys.modules) - seen["decided"])) + "\\n")
    exit_now(code)
cli._exit_now = leave
sys.argv = ["redline", "hook", "claude"]
cli.main()
"""


def test_a_hook_process_imports_nothing_between_the_decision_and_its_exit(
    root: Path, queue: WorkspaceQueue
) -> None:
    import os
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", _AFTER_DECISION],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    assert proc.stdin is not None
    proc.stdin.write(recorded("pre-write.json", root))
    proc.stdin.close()
    proc.stdin = None
    try:
        [record] = pending(queue)
        decide(queue, record.id, "discard", "not this way")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"Discarded by the reviewer: not this way" in out, err.decode()[-2000:]
    assert _told(err.decode(), "LATE") == []


def test_a_hook_process_that_blocks_still_prints_its_reason_and_exits_2(root: Path) -> None:
    """`redline hook` ends its own process without the interpreter's teardown: what it
    printed is flushed first, and the blocking exit survives."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "redline", "hook", "claude"],
        input=b"{not json",
        capture_output=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"redline: blocked: hook payload is not JSON" in done.stderr, done.stderr
