"""Pilot: a decision is busy from the moment ``y`` is pressed -- a second ``y`` or ``u`` is
refused with the reason -- but its keys and the resolve bar's buttons grey only once it has
run ``BUSY_LOOK_AFTER`` (issue 44's ``y``: a quick decision goes from one action to the
next in one frame, nothing greyed only to light again). Every action here was queued by
another process."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher
from tests.tui.test_stack_relisting import BODY, push_elsewhere
from textual.message import Message
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from redline.review.decision import Decision
from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.tui.controls import BUSY_REFUSAL
from redline.tui.messages import ResolutionFinished
from redline.tui.screens import inbox_keys
from redline.workspace.queue import WorkspaceQueue, resolved

SIZE = (160, 45)


class GatedSession(FakeSession):
    """A session whose decisions wait until the test opens the gate."""

    def __init__(self, root: Path) -> None:
        super().__init__(cwd=root)
        self.gate = threading.Event()
        self.deciding = threading.Event()

    def decide(self, action_id: str, decision: Decision) -> Any:
        self.deciding.set()
        assert self.gate.wait(60), "the test never opened the gate"
        return super().decide(action_id, decision)


def session_for(root: Path, session: FakeSession) -> tuple[FakeSession, WorkspaceQueue]:
    queue = WorkspaceQueue(root)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue
    return session, queue


@dataclasses.dataclass
class Gated:
    pilot: Any
    app: RedlineApp
    session: GatedSession
    queue: WorkspaceQueue
    looks: Looks
    lower: str
    upper: str


@contextlib.asynccontextmanager
async def gated_app(root: Path) -> AsyncIterator[Gated]:
    """Two actions queued by another process (a.py below, b.py on top), a dashboard over
    them whose decisions wait for the gate, settled on the top; the gate opens at the end."""
    lower, upper = push_elsewhere(root, "a.py", "b.py")
    gated = GatedSession(root)
    session, queue = session_for(root, gated)
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.top_id == upper and app.inbox.ready)
            await pilot.pause()
            yield Gated(pilot, app, gated, queue, Looks(app), lower, upper)
    finally:
        gated.gate.set()
        queue.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(BODY)
    return tmp_path


class Looks:
    """Every value the apply button's and the footer's ``y`` key's ``disabled`` took."""

    def __init__(self, app: RedlineApp) -> None:
        self.seen: list[tuple[str, bool]] = []
        inbox = app.inbox
        self.button = inbox.query_one("#apply", Button)
        self.key = next(key for key in inbox.query(FooterKey) if key.action == "apply_top")
        for name, node in (("button", self.button), ("key", self.key)):
            inbox.watch(node, "disabled", self._recorder(name), init=False)

    def _recorder(self, name: str) -> Any:
        return lambda disabled: self.seen.append((name, disabled))

    def greyed(self) -> bool:
        return self.button.disabled and self.key.disabled


def notified(app: RedlineApp, text: str) -> bool:
    return any(text in str(note.message) for note in app._notifications)


async def test_a_quick_decision_goes_to_the_next_action_without_greying(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox_keys, "BUSY_LOOK_AFTER", 3600.0)  # never within this test
    lower, upper = push_elsewhere(root, "a.py", "b.py")
    session, queue = session_for(root, FakeSession(cwd=root))
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.preview.action is not None)
            await wait_until(pilot, lambda: app.preview.action.id == upper)  # type: ignore[union-attr]
            await pilot.pause()
            looks = Looks(app)
            await pilot.press("y")
            await wait_until(pilot, lambda: app.stack.top_id == lower and not app.inbox.busy)
            await pilot.pause()
            assert queue.resolution(upper) is not None
            assert "x = 3" in (root / "b.py").read_text()
            # Busy all along, and never shown so: the keys went from one action to the next.
            assert looks.seen == []
            assert not looks.greyed()
    finally:
        queue.close()


async def test_keys_pressed_while_a_decision_runs_are_refused_before_it_looks_busy(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox_keys, "BUSY_LOOK_AFTER", 3600.0)
    async with gated_app(root) as scene:
        pilot, app, gated, looks, queue = (
            scene.pilot,
            scene.app,
            scene.session,
            scene.looks,
            scene.queue,
        )
        await pilot.press("y")
        await wait_until(pilot, gated.deciding.is_set)
        assert app.inbox.busy and not looks.greyed()
        await pilot.press("u")  # would undo while the apply runs: refused, with why
        await wait_until(pilot, lambda: notified(app, BUSY_REFUSAL))
        assert gated.undos == 0
        before = len(app._notifications)
        await pilot.press("n")  # a second decision: refused too
        await wait_until(pilot, lambda: len(app._notifications) > before)
        assert notified(app, BUSY_REFUSAL)
        gated.gate.set()
        await wait_until(pilot, lambda: app.stack.top_id == scene.lower and not app.inbox.busy)
        assert queue.resolution(scene.upper) is not None
        assert queue.resolution(scene.lower) is None  # the refused n decided nothing
        assert gated.undos == 0
        assert looks.seen == []


async def test_a_decision_that_takes_a_while_greys_its_keys_until_it_is_done(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox_keys, "BUSY_LOOK_AFTER", 0.001)  # busy-looking at once
    async with gated_app(root) as scene:
        pilot, app, looks = scene.pilot, scene.app, scene.looks
        await pilot.press("y")
        await wait_until(pilot, looks.greyed)
        assert app.inbox.controls.busy
        scene.session.gate.set()
        await wait_until(pilot, lambda: app.stack.top_id == scene.lower and not app.inbox.busy)
        await wait_until(pilot, lambda: not looks.greyed())
        assert ("button", True) in looks.seen and ("key", True) in looks.seen
        assert scene.queue.resolution(scene.upper) is not None


async def test_the_pruning_a_decision_makes_due_runs_after_its_outcome_is_posted(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every PRUNE_EVERY-th id a decision prunes the resolved log (a whole listing of the
    queue: ~0.2 s at 10,000 pending); the dashboard's decision posts its outcome first."""
    monkeypatch.setattr(resolved, "PRUNE_EVERY", 1)  # every decision makes it due
    monkeypatch.setattr(resolved, "KEEP_RESOLUTIONS", 1)
    lower, upper = push_elsewhere(root, "a.py", "b.py")
    session, queue = session_for(root, FakeSession(cwd=root))
    app = RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]
    order: list[str] = []
    prune = resolved.QueueResolved.prune

    def spied_prune(self: resolved.QueueResolved) -> None:
        order.append(f"prune on {threading.current_thread().name}")
        prune(self)

    monkeypatch.setattr(resolved.QueueResolved, "prune", spied_prune)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.top_id == upper and app.inbox.ready)
            post = app.inbox.post_message

            def spied_post(message: Message) -> bool:
                if isinstance(message, ResolutionFinished):
                    order.append("outcome posted")
                return post(message)

            monkeypatch.setattr(app.inbox, "post_message", spied_post)
            for done, action_id in enumerate((upper, lower), start=1):
                await wait_until(pilot, lambda a=action_id: app.stack.top_id == a)  # type: ignore[misc]
                await pilot.press("y")
                await wait_until(pilot, lambda n=done: len(order) == 2 * n and not app.inbox.busy)  # type: ignore[misc]
            assert [step.split(" on ")[0] for step in order] == ["outcome posted", "prune"] * 2
            assert all("MainThread" not in step for step in order)
            assert app.stack.top_id is None
            # Pruned indeed: the log keeps one resolution, the highest id's (pa-2, upper).
            assert os.listdir(root / ".redline/queue/resolved") == [f"{upper}.json"]
    finally:
        queue.close()
