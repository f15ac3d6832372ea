"""Every deciding surface × every action source × every decision kind: exactly what was
approved lands (issue 42).

Surfaces: ``session`` (``ReviewSession.decide`` / ``edit`` / ``repreview`` / ``undo``: what
the dashboard and ``serve`` call), ``cli`` (``redline pending`` / ``redline undo``), ``sdk``
(``resolve_queued``, docs/sdk.md). Sources: the deciding session's own agent, ``exec``, an
MCP client (the real ``Proposals``), ``pending import`` (the real command), a hook while it
waits (``redline hook claude`` on a recorded payload, in a thread as the agent runs it) and
a hook after it handed its action over. Rules (whole only) are covered at the end.

Each cell checks the bytes on disk, what stays pending, and what the agent hears; cells
that must refuse are asserted as refusals.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded

from redline.cli import main
from redline.commands import hook as hook_command
from redline.drivers.hooks.answers import Rendered
from redline.review.event_stream import EventStream
from redline.review.file_action import file_action
from redline.review.follower import follow
from redline.review.queued import resolve_queued
from redline.review.session import Decision, ReviewSession
from redline.review.store import PendingActionStore
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, QueueRecord, Source, WorkspaceQueue

LINES = [f"line {n}\n" for n in range(1, 15)]
BASE = "".join(LINES)
NEW = BASE.replace("line 2\n", "LINE 2\n").replace("line 13\n", "LINE 13\n")
FIRST_ONLY = BASE.replace("line 2\n", "LINE 2\n")
SECOND_ONLY = BASE.replace("line 13\n", "LINE 13\n")
EDITED = BASE.replace("line 2\n", "EDITED 2\n")
ELSEWHERE = BASE.replace("line 7\n", "line seven\n")

SURFACES = ("session", "cli", "sdk")
SOURCES = ("agent", "exec", "mcp", "import", "hook", "handed")
KINDS = (
    "apply",
    "apply_hunks",
    "discard_hunks",
    "edit_apply",
    "discard_reason",
    "repreview",
    "undo",
)


@dataclass
class World:
    root: Path
    queue: WorkspaceQueue
    # The dashboard's session: the own agent's actions are in its store.
    session: ReviewSession
    action_id: str = ""
    hook: Future[Rendered] | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def pending(self) -> list[QueueRecord]:
        return self.queue.list()

    def text(self) -> str:
        return (self.root / "a.txt").read_text(encoding="utf-8")

    def answer(self) -> dict[str, Any]:
        assert self.hook is not None
        rendered = self.hook.result(60)
        assert rendered.code == 0, rendered.stderr
        return dict(json.loads(rendered.stdout)["hookSpecificOutput"])


def _wait_queued(queue: WorkspaceQueue, count: int = 1) -> list[QueueRecord]:
    changed = threading.Event()
    stop = follow(queue, changed.set)
    try:
        while len(queue.list()) < count:
            assert changed.wait(30), "nothing was queued"
            changed.clear()
        return queue.list()
    finally:
        stop()


def _start_hook(raw: bytes) -> Future[Rendered]:
    done: Future[Rendered] = Future()

    def run() -> None:
        try:
            done.set_result(hook_command.handle("claude", raw))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done


def _queue_from(world: World, source: str, tmp_path: Path, user_config: Path) -> None:
    root, queue = world.root, world.queue
    if source == "agent":
        action = file_action(
            root,
            Preview([FileModify("a.txt", sha256_bytes(BASE.encode()), BASE, NEW)]),
            label="edit a.txt",
            source_tool_name="edit",
            applied_text="Applied the edit.",
            repreview=None,
        )
        world.action_id = world.session.propose(action).id
    elif source == "exec":
        draft = ActionDraft(
            label="edit a.txt",
            source=Source.current("exec", "exec", "s1"),
            source_tool_name="edit",
            preview=Preview([FileModify("a.txt", sha256_bytes(BASE.encode()), BASE, NEW)]),
        )
        world.action_id = queue.push(draft).id
    elif source == "mcp":
        from redline.mcp_server.proposals import Proposals

        proposals = Proposals(root)
        world.closers.append(proposals.close)
        asyncio.run(proposals.propose_write("cursor", "s1", "a.txt", NEW))
        [record] = queue.list()
        world.action_id = record.id
    elif source == "import":
        patch = tmp_path / "change.patch"
        lines = difflib.unified_diff(
            BASE.splitlines(keepends=True),
            NEW.splitlines(keepends=True),
            "a/a.txt",
            "b/a.txt",
        )
        patch.write_text("".join(lines), encoding="utf-8")
        assert main(["-C", str(root), "pending", "import", str(patch)]) == 0
        [record] = queue.list()
        world.action_id = record.id
    else:
        if source == "handed":
            (user_config / "config.toml").write_text(
                "[hooks]\nwait_seconds = 0.05\n", encoding="utf-8"
            )
        world.hook = _start_hook(recorded("pre-write-2.json", root, content=NEW))
        [record] = _wait_queued(queue)
        world.action_id = record.id
        if source == "handed":
            answer = world.answer()
            assert answer["permissionDecision"] == "deny"
            assert "still pending review" in answer["permissionDecisionReason"]
            [record] = queue.list()
            assert record.applied_by == "preview"
        else:
            assert record.applied_by == "owner" and record.owner_serves == ["parts"]


@pytest.fixture
def make_world(tmp_path: Path, isolated_user_config: Path) -> Iterator[Callable[[str], World]]:
    worlds: list[World] = []

    def make(source: str) -> World:
        root = tmp_path / "ws"
        (root / ".git").mkdir(parents=True)
        (root / "a.txt").write_text(BASE, encoding="utf-8")
        queue = WorkspaceQueue(root)
        follow(queue, lambda: None)()  # the queue's folders exist before a hook runs
        store = PendingActionStore(queue=queue, source=Source.current("agent", "dash", "d1"))
        session = ReviewSession(root, store, EventStream("d1"))
        world = World(root, queue, session)
        worlds.append(world)
        _queue_from(world, source, tmp_path, isolated_user_config)
        return world

    yield make
    for world in worlds:
        for close in world.closers:
            close()
        world.session.close()
        world.queue.close()


# -- the surfaces ---------------------------------------------------------------------
def _decide(surface: str, world: World, verb: str, reason: str, only: list[str] | None) -> bool:
    """Apply or discard through ``surface``; whether it succeeded."""
    action_id = world.action_id
    if surface == "session":
        decision = Decision(
            "apply" if verb == "apply" else "discard", reason, tuple(only) if only else None
        )
        outcome = asyncio.run(world.session.decide(action_id, decision))
        return not outcome.is_error
    if surface == "cli":
        argv = ["-C", str(world.root), "pending", verb, action_id, "--reason", reason]
        for part in only or ():
            argv += ["--only", part]
        return main(argv) == 0
    result = asyncio.run(resolve_queued(world.queue, action_id, verb, reason, only=only))
    return not result.is_error


def _edit(surface: str, world: World, text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A person's edit of a.txt through ``surface``: the new id."""
    if surface == "cli":
        script = world.root.parent / "editor.py"
        script.write_text(f"import sys\nopen(sys.argv[1], 'w').write({text!r})\n", encoding="utf-8")
        import sys

        monkeypatch.setenv("VISUAL", f"{sys.executable} {script}")
        assert main(["-C", str(world.root), "pending", "edit", world.action_id]) == 0
    else:  # the SDK has no edit call of its own: the session's is the one path
        outcome = asyncio.run(world.session.edit(world.action_id, "a.txt", text))
        assert outcome.kind == "edited", outcome.text
    [record] = world.pending()
    assert record.edited
    return record.id


def _repreview(surface: str, world: World) -> tuple[bool, str]:
    if surface == "cli":
        code = main(["-C", str(world.root), "pending", "repreview", world.action_id, "--json"])
        return code == 0, ""
    if surface == "sdk":
        from redline.review.decide import repreview_queued

        outcome = repreview_queued(world.queue, world.action_id)
        return not outcome.is_error, outcome.text
    result = asyncio.run(world.session.repreview(world.action_id))
    return not result.is_error, result.text


def _undo(surface: str, world: World) -> bool:
    if surface == "cli":
        return main(["-C", str(world.root), "undo"]) == 0
    if surface == "sdk":
        from redline.review.git_undo import undo

        undo(world.root, None)
        return True
    return not world.session.undo().is_error


def _agent_writes(world: World, text: str) -> None:
    """The agent was allowed: it writes, and its post-tool hook journals the write."""
    (world.root / "a.txt").write_text(text, encoding="utf-8")
    post = hook_command.handle("claude", recorded("post-write-2.json", world.root, content=text))
    assert post.code == 0, post.stderr


# -- the matrix -----------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("surface", SURFACES)
def test_exactly_the_approved_selection_lands(
    surface: str,
    source: str,
    kind: str,
    make_world: Callable[[str], World],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    world = make_world(source)
    waiting = source == "hook"
    if kind == "apply":
        assert _decide(surface, world, "apply", "good", None)
        if waiting:
            answer = world.answer()
            assert answer["permissionDecision"] == "allow"
            assert answer["updatedInput"]["content"] == NEW
            _agent_writes(world, NEW)
        assert world.text() == NEW and world.pending() == []
    elif kind == "apply_hunks":
        assert _decide(surface, world, "apply", "first only", ["a.txt#1"])
        assert world.text() == FIRST_ONLY
        [rest] = world.pending()
        assert rest.applied_by == "preview" and rest.id != world.action_id
        if waiting:
            answer = world.answer()
            assert answer["permissionDecision"] == "deny"
            said = answer["permissionDecisionReason"]
            assert said.startswith(f"Applied in part as reviewed ({world.action_id}): ")
            assert f"; {rest.id} holds the rest" in said and "+LINE 2" in said
            assert "LINE 13" not in said.split("holds the rest")[0]
        world.action_id = rest.id
        assert _decide(surface, world, "apply", "now the rest", None)
        assert world.text() == NEW and world.pending() == []
    elif kind == "discard_hunks":
        assert _decide(surface, world, "discard", "not the first", ["a.txt#1"])
        assert world.text() == BASE
        [rest] = world.pending()
        assert rest.applied_by == "preview"
        if waiting:
            answer = world.answer()
            assert answer["permissionDecision"] == "deny"
            said = answer["permissionDecisionReason"]
            assert f"Discarded in part by the reviewer ({world.action_id})" in said
            assert f"{rest.id} holds the rest" in said and "not the first" in said
        world.action_id = rest.id
        assert _decide(surface, world, "apply", "the rest", None)
        assert world.text() == SECOND_ONLY and world.pending() == []
    elif kind == "edit_apply":
        world.action_id = _edit(surface, world, EDITED, monkeypatch)
        assert _decide(surface, world, "apply", "as edited", None)
        if waiting:
            answer = world.answer()
            assert answer["permissionDecision"] == "allow"
            assert answer["updatedInput"]["content"] == EDITED
            _agent_writes(world, EDITED)
        assert world.text() == EDITED and world.pending() == []
    elif kind == "discard_reason":
        assert _decide(surface, world, "discard", "wrong approach", None)
        assert world.text() == BASE and world.pending() == []
        resolution = world.queue.resolution(world.action_id)
        assert resolution is not None and resolution.reason == "wrong approach"
        if waiting:
            answer = world.answer()
            assert answer["permissionDecision"] == "deny"
            assert answer["permissionDecisionReason"].endswith("wrong approach")
    elif kind == "repreview":
        (world.root / "a.txt").write_text(ELSEWHERE, encoding="utf-8")
        if source == "agent":  # its own session learns of outside edits from its watcher
            world.session.check_staleness({"a.txt"})
        ok, text = _repreview(surface, world)
        if waiting:
            # Its hook proposed it: the agent must propose again. Nothing changed.
            assert not ok
            if surface != "cli":
                assert "is waiting in its agent's hook: ask the agent to propose again" in text
            assert world.text() == ELSEWHERE and [r.id for r in world.pending()] == [
                world.action_id
            ]
            assert _decide(surface, world, "discard", "stale", None)
            assert world.answer()["permissionDecision"] == "deny"
            return
        assert ok, text
        [fresh] = world.pending()
        assert fresh.id != world.action_id and not fresh.stale
        world.action_id = fresh.id
        assert _decide(surface, world, "apply", "merged", None)
        merged = ELSEWHERE.replace("line 2\n", "LINE 2\n").replace("line 13\n", "LINE 13\n")
        assert world.text() == merged
    else:  # undo
        assert _decide(surface, world, "apply", "good", None)
        if waiting:
            assert world.answer()["permissionDecision"] == "allow"
            _agent_writes(world, NEW)
        assert world.text() == NEW
        assert _undo(surface, world)
        assert world.text() == BASE
    capfd.readouterr()


def test_a_picked_hunk_of_an_older_hook_is_refused_not_applied_whole(
    make_world: Callable[[str], World],
) -> None:
    """An owner whose record does not say it serves parts (an older redline's hook, an
    ACP agent's request) is never asked for parts: the selection is refused, nothing
    lands, and the action stays pending for a whole decision."""
    world = make_world("hook")
    with world.queue.claim(world.action_id) as claim:
        claim.record.owner_serves = []
        world.queue._write_record(claim.record)
    result = asyncio.run(
        resolve_queued(world.queue, world.action_id, "apply", "", only=["a.txt#1"])
    )
    assert result.is_error and "only as a whole" in result.text
    assert world.text() == BASE and [r.id for r in world.pending()] == [world.action_id]
    assert _decide("session", world, "discard", "whole", None)
    assert world.answer()["permissionDecision"] == "deny"


@pytest.mark.parametrize("source", ("exec", "mcp", "import", "handed"))
@pytest.mark.parametrize("verb", ("apply", "discard"))
def test_rules_decide_whole_actions_of_every_source(
    source: str, verb: str, make_world: Callable[[str], World]
) -> None:
    """A review rule decides whole actions only, through the same queued path."""
    world = make_world(source)
    result = asyncio.run(
        resolve_queued(world.queue, world.action_id, verb, "by rule", resolved_by="rule", rule="r")
    )
    assert not result.is_error, result.text
    assert world.text() == (NEW if verb == "apply" else BASE) and world.pending() == []
    resolution = world.queue.resolution(world.action_id)
    assert resolution is not None and resolution.resolved_by == "rule"


# -- who decided a hook's action, through its owner request (issues 40 and 48) ---------------
@pytest.mark.parametrize("only", [None, ["a.txt#1"]], ids=["whole", "parts"])
def test_a_team_reviewer_deciding_a_hooks_action_is_named_by_the_hook(
    only: list[str] | None, make_world: Callable[[str], World]
) -> None:
    """The team follower decides an action a hook still waits on: the hook process logs the
    decision, naming the reviewer the server recorded (not this machine's git user)."""
    from redline.workspace.decisions import read

    world = make_world("hook")
    action_id = world.action_id
    result = asyncio.run(
        resolve_queued(
            world.queue, action_id, "apply", "ok", only=only, reviewer="Alice A <a@x>", via="team"
        )
    )
    assert not result.is_error, result.text
    if only is None:
        assert world.answer()["permissionDecision"] == "allow"
    else:
        assert world.text() == FIRST_ONLY
    [logged] = [entry for entry in read(world.root)[0] if entry.id == action_id]
    assert logged.reviewer == "Alice A <a@x>"
    assert logged.via == "team"
