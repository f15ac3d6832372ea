"""After a decision or a report of the queue's watcher the stack reads only what changed (issue 44).

With 10,000 pending every decision re-listed the whole queue. The workspace source now brings
its last listing up to date from the record files' identities (arrivals, departures,
rewrites) and the files the decision or the workspace's watcher named; these tests check
that what it shows is exactly what a whole listing shows -- the right rows, in the right
order, with the right staleness -- for actions queued by another process, and that it falls
back to the whole listing when the last one cannot be used.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher

from redline.review import workspace_source
from redline.review.source import ListedAction
from redline.review.store import PendingActionStore
from redline.review.workspace_source import WorkspaceSource
from redline.tui.app import RedlineApp
from redline.workspace.queue import WorkspaceQueue, claims

SIZE = (150, 45)
BODY = "".join(f"line {n}\n" for n in range(20)) + "x = 1\n"

# Another redline process queueing actions: one per argument ``FILE[=NEW]`` (a whole line
# ``x = N`` on FILE, N the index), each on top of the ones before; prints their ids.
PUSH = """
import sys
from pathlib import Path
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

root = Path(sys.argv[1])
queue = WorkspaceQueue(root)
source = Source.current("exec", "other", "other-session")
for index, spec in enumerate(sys.argv[2:]):
    name, _, value = spec.partition("=")
    old = (root / name).read_text()
    new = old.replace("x = 1", "x = " + (value or str(index + 2)))
    preview = Preview([FileModify(name, sha256_bytes(old.encode()), old, new)])
    print(queue.push(ActionDraft("Edit " + spec, source, "edit", preview)).id)
queue.close()
"""


def push_elsewhere(root: Path, *specs: str) -> list[str]:
    """Queue one action per ``FILE[=VALUE]`` from another process; their ids."""
    done = subprocess.run(
        [sys.executable, "-c", PUSH, str(root), *specs],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for n in range(8):
        (tmp_path / f"f{n}.py").write_text(BODY)
    return tmp_path


class Spy:
    """Counts the workspace source's whole listings and its brought-up-to-date ones."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.whole = 0
        self.relisted: list[bool] = []  # one per call: whether it did the work
        listed, relisted = WorkspaceSource.listed, WorkspaceSource.relisted

        def counting_listed(source: WorkspaceSource) -> Any:
            self.whole += 1
            return listed(source)

        def counting_relisted(source: WorkspaceSource, *args: Any) -> Any:
            rows = relisted(source, *args)
            self.relisted.append(rows is not None)
            return rows

        monkeypatch.setattr(WorkspaceSource, "listed", counting_listed)
        monkeypatch.setattr(WorkspaceSource, "relisted", counting_relisted)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Spy:
    return Spy(monkeypatch)


@pytest.fixture
def app_on(root: Path) -> Iterator[Callable[[], RedlineApp]]:
    queues: list[WorkspaceQueue] = []

    def make() -> RedlineApp:
        queue = WorkspaceQueue(root)
        queues.append(queue)
        session = FakeSession(cwd=root)
        session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
        session.queue = queue  # type: ignore[attr-defined]
        return RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]

    yield make
    for queue in queues:
        queue.close()
    claims._step_hook = None


def shown(app: RedlineApp) -> list[str]:
    return [row.action_id for row in app.stack.rows]


def whole_listing(root: Path) -> list[ListedAction]:
    """What a whole listing by a fresh reader shows (ids, order, staleness)."""
    with WorkspaceQueue(root) as queue:
        return list(WorkspaceSource(queue, remember=False).listed())


def facts(rows: list[ListedAction]) -> list[tuple[str, bool]]:
    return [(row.id, row.stale) for row in rows]


def stack_facts(app: RedlineApp) -> list[tuple[str, bool]]:
    return [(row.action_id, row.stale) for row in app.stack.rows]


async def test_y_reads_only_what_changed_and_shows_what_a_whole_listing_shows(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp]
) -> None:
    ids = push_elsewhere(root, *(f"f{n}.py" for n in range(6)))
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 6)
        assert shown(app) == ids[::-1]  # the newest on top
        whole = spy.whole
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 5 and not app.inbox.busy)
        assert (root / "f5.py").read_text() == BODY.replace("x = 1", "x = 7")
        assert shown(app) == ids[-2::-1]
        # Brought up to date, not listed whole again...
        assert spy.relisted and all(spy.relisted)
        assert spy.whole == whole
        # ...and exactly what a whole listing shows.
        assert stack_facts(app) == facts(whole_listing(root))


async def test_actions_queued_during_and_after_a_decision_appear_in_their_place(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp]
) -> None:
    first = push_elsewhere(root, "f0.py", "f1.py")
    app = app_on()
    during: list[str] = []

    def step(text: str) -> None:
        # Mid-decision (the record just went "applying") another process queues two more.
        if text == "apply: marked applying" and not during:
            during.extend(push_elsewhere(root, "f2.py", "f3.py"))

    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        claims._step_hook = step
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.inbox.busy and first[1] not in shown(app))
        await wait_until(pilot, lambda: len(app.stack.rows) == 3)
        assert shown(app) == [during[1], during[0], first[0]]
        claims._step_hook = None
        # And one queued after it, reported by the queue's watcher.
        later = push_elsewhere(root, "f4.py")
        await wait_until(pilot, lambda: len(app.stack.rows) == 4)
        assert shown(app) == [later[0], during[1], during[0], first[0]]
        assert stack_facts(app) == facts(whole_listing(root))
        assert True in spy.relisted


async def test_an_action_on_the_decided_file_is_checked_again(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp]
) -> None:
    # Two actions on one line of f0.py: applying the top one leaves the other stale.
    older, newer = push_elsewhere(root, "f0.py=5", "f0.py=9")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        assert not any(row.stale for row in app.stack.rows)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 1 and not app.inbox.busy)
        assert (root / "f0.py").read_text() == BODY.replace("x = 1", "x = 9")
        assert app.stack.rows[0].stale
        assert shown(app) == [older]
        assert stack_facts(app) == facts(whole_listing(root))
        assert newer not in shown(app)


async def test_a_rewrite_and_a_file_change_by_others_show_after_the_watchers_report(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp]
) -> None:
    ids = push_elsewhere(root, "f0.py", "f1.py", "f2.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 3)
        # Another process marks f1's action stale (a rewrite of a listed record, same id).
        with WorkspaceQueue(root) as other:
            other.update(ids[1], stale=True, stale_reason="its agent says so")
        await wait_until(pilot, lambda: app.stack.rows[1].stale)
        assert app.stack.rows[1].stale_reason == "its agent says so"
        # Someone edits f2.py: the workspace's watcher names it, its action goes stale.
        (root / "f2.py").write_text(BODY + "# edited\n")
        FakeWatcher.instances[-1].fire("f2.py")
        await wait_until(pilot, lambda: app.stack.rows[0].stale)
        assert stack_facts(app) == facts(whole_listing(root))
        assert spy.relisted and all(spy.relisted)


async def test_too_many_changes_fall_back_to_the_whole_listing(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workspace_source, "RELIST_LIMIT", 2)
    push_elsewhere(root, "f0.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 1)
        whole = spy.whole
        push_elsewhere(root, "f1.py", "f2.py", "f3.py")  # three: more than it reads singly
        await wait_until(pilot, lambda: len(app.stack.rows) == 4)
        assert False in spy.relisted
        assert spy.whole > whole
        assert stack_facts(app) == facts(whole_listing(root))


async def test_an_unusable_record_falls_back_to_the_whole_listing(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp]
) -> None:
    ids = push_elsewhere(root, "f0.py", "f1.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        whole = spy.whole
        # A record file rewritten by something that is not redline: it does not verify.
        record = root / ".redline" / "queue" / "actions" / f"{ids[0]}.json"
        damaged = record.with_name("damaged.tmp")
        damaged.write_text("{}")
        damaged.replace(record)
        FakeWatcher.instances[-1].fire("f0.py")
        await wait_until(pilot, lambda: len(app.stack.rows) == 1)
        assert False in spy.relisted and spy.whole > whole
        assert shown(app) == [ids[1]]
        assert stack_facts(app) == facts(whole_listing(root))


async def test_without_the_workspace_watcher_every_read_lists_the_whole_queue(
    root: Path, spy: Spy, app_on: Callable[[], RedlineApp]
) -> None:
    push_elsewhere(root, "f0.py", "f1.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        app.inbox.pending.watch_files(False)  # type: ignore[union-attr]
        whole = spy.whole
        # An outside edit no watcher reports: the whole listing's own hashing finds it.
        (root / "f0.py").write_text(BODY + "# edited\n")
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 1 and not app.inbox.busy)
        assert spy.whole > whole and not spy.relisted
        assert app.stack.rows[0].stale
        assert stack_facts(app) == facts(whole_listing(root))
