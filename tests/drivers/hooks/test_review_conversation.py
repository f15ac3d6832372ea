"""Issue 47 through the hooks of all three agents (recorded payloads): the reviewer's
comments reach the agent in the deny reason of a discard, and the agent's next call in
the same session is revision 2 of the discarded action, with its interdiff and comments."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks import test_claude_mapping, test_codex_mapping, test_gemini_gateway
from tests.drivers.hooks.test_gateway import decide, pending

from redline.commands import hook as hook_command
from redline.drivers.hooks.answers import Rendered
from redline.review.comments import Target, add_comment
from redline.review.follower import follow
from redline.review.revision_info import revision_info
from redline.workspace.queue import WorkspaceQueue


def claude(root: Path, text: str) -> bytes:
    return test_claude_mapping.recorded("pre-write-2.json", root, content=text)


def gemini(root: Path, text: str) -> bytes:
    return test_gemini_gateway.recorded("BeforeTool.write_file.json", root, content=text)


def codex(root: Path, text: str) -> bytes:
    patch = f"*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+{text}*** End Patch\n"
    return test_codex_mapping.recorded("PreToolUse.apply_patch.update.json", root, command=patch)


AGENTS = {
    "claude": (claude, "a.txt", "hello\nworld\n"),
    "gemini": (gemini, "hello.txt", "hello\n"),
    "codex": (codex, "hello.txt", "hello\n"),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    return ws


@pytest.fixture
def queue(root: Path) -> Iterator[WorkspaceQueue]:
    q = WorkspaceQueue(root)
    follow(q, lambda: None)()
    yield q
    q.close()


def start_hook(agent: str, raw: bytes) -> Future[Rendered]:
    done: Future[Rendered] = Future()

    def run() -> None:
        try:
            done.set_result(hook_command.handle(agent, raw))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done


def reason_of(agent: str, rendered: Rendered) -> str:
    assert rendered.code == 0, rendered.stderr
    data: dict[str, Any] = json.loads(rendered.stdout)
    if "hookSpecificOutput" in data:
        return str(data["hookSpecificOutput"]["permissionDecisionReason"])
    return str(data["reason"])


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_comment_discard_then_revision_2(agent: str, root: Path, queue: WorkspaceQueue) -> None:
    payload, name, before = AGENTS[agent]
    (root / name).write_text(before, encoding="utf-8")
    future = start_hook(agent, payload(root, "hello there\n"))
    [record] = pending(queue)
    add_comment(queue, record.id, Target(name, 1), "say hello world\nlike the issue says")
    add_comment(queue, record.id, Target(name), "keep the file short")
    assert not decide(queue, record.id, "discard", "not yet").is_error
    said = reason_of(agent, future.result(30))
    assert said.startswith("Discarded by the reviewer: not yet")
    assert f"\n{name}:1: say hello world\n    like the issue says\n{name}: keep" in said

    second = start_hook(agent, payload(root, "hello world\n"))
    [revised] = pending(queue)
    assert (revised.revision_of, revised.revision) == (record.id, 2)
    info = revision_info(queue, revised, queue.preview(revised))
    assert info is not None and not info.base_changed
    assert "-hello there\n+hello world\n" in info.interdiff
    from redline.review.comments import listed

    carried = listed(queue, revised.id, queue.preview(revised))
    assert [(c["line"], c["outdated"]) for c in carried] == [(1, True), (None, False)]
    assert not decide(queue, revised.id, "apply").is_error
    assert second.result(30).code == 0
    if agent == "claude":  # its allow carries a reason: the comments go as notes
        assert "applied; reviewer notes:" in reason_of(agent, second.result(30))
