"""After a decision or a report of the queue's watcher the stack reads only what changed (issue 44).

With 10,000 pending every decision re-listed the whole queue. The workspace source now brings
its last listing up to date from the record files' identities (arrivals, departures,
rewrites) and the files the decision or the workspace's watcher named; these tests check
that what it shows is exactly what a whole listing shows -- the right rows, in the right
order, with the right staleness -- for actions queued by another process, and that it falls
back to the whole listing when the last one cannot be used. The later tests: while the
queue's watcher names the records it saw change, no re-read looks at every record file,
and a record whose name was lost still arrives or leaves.
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
from redline.tui import pending as tui_pending
from redline.tui.app import RedlineApp
from redline.tui.pending import PendingList
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


# -- the queue's watcher names the records it saw change -------------------------------


class Looks:
    """Counts the queue's looks at record files: every one (``identities``) or only the
    ones named (``identities_named``), and what each brought-up-to-date re-read was told."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.every = 0
        self.named: list[set[str]] = []
        self.told: list[object] = []  # relisted's ``named`` argument, per call
        every, named = WorkspaceQueue.identities, WorkspaceQueue.identities_named
        relisted = WorkspaceSource.relisted

        def counting_every(queue: WorkspaceQueue, *args: Any) -> Any:
            self.every += 1
            return every(queue, *args)

        def counting_named(queue: WorkspaceQueue, ids: Any) -> Any:
            ids = set(ids)
            self.named.append(ids)
            return named(queue, ids)

        def telling(source: WorkspaceSource, *args: Any) -> Any:
            self.told.append(args[2] if len(args) > 2 else None)
            return relisted(source, *args)

        monkeypatch.setattr(WorkspaceQueue, "identities", counting_every)
        monkeypatch.setattr(WorkspaceQueue, "identities_named", counting_named)
        monkeypatch.setattr(WorkspaceSource, "relisted", telling)


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> Looks:
    return Looks(monkeypatch)


REDLINE = [sys.executable, "-m", "redline", "pending"]


def import_patch_elsewhere(root: Path, name: str, value: str) -> None:
    """``redline pending import --patch``, run as its own process, queues one action."""
    old = (root / name).read_text()
    new = old.replace("x = 1", f"x = {value}")
    patch = root.parent / f"{root.name}-{name}.patch"
    lines = old.splitlines(keepends=True)
    at = lines.index("x = 1\n")
    patch.write_text(
        f"--- a/{name}\n+++ b/{name}\n@@ -{at + 1} +{at + 1} @@\n-x = 1\n+x = {value}\n"
    )
    assert new != old
    done = subprocess.run(
        [*REDLINE, "-C", str(root), "import", "--patch", str(patch)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


async def test_with_the_queue_watcher_naming_records_no_read_looks_at_every_record(
    root: Path, looks: Looks, app_on: Callable[[], RedlineApp]
) -> None:
    ids = push_elsewhere(root, "f0.py", "f1.py", "f2.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 3)
        every = looks.every
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 2 and not app.inbox.busy)
        assert shown(app) == [ids[1], ids[0]]
        # Another process queues one (`redline pending import`) and marks one stale: both
        # show, from the records the watcher named.
        import_patch_elsewhere(root, "f6.py", "42")
        await wait_until(pilot, lambda: len(app.stack.rows) == 3)
        with WorkspaceQueue(root) as other:
            other.update(ids[0], stale=True, stale_reason="its agent says so")
        await wait_until(pilot, lambda: app.stack.rows[-1].stale)
        assert stack_facts(app) == facts(whole_listing(root))
        assert looks.every == every  # not one look at every record file since the start
        assert looks.told and all(told is not None for told in looks.told)
        assert any(ids[0] in named for named in looks.named)  # the stale mark, named


async def test_the_first_decision_after_a_listing_lists_no_folder(
    root: Path, app_on: Callable[[], RedlineApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision's re-read lists the actions folder's names only when the last listing did
    not say what they were (issue 44: 10,000 names per y). The whole listing notes the
    folder as it was before its own read, so even the first decision after it lists none;
    the watcher's report of the decision's writes compares them (the next test)."""
    ids = push_elsewhere(root, "f0.py", "f1.py", "f2.py")
    listings: list[tuple[bool, int]] = []  # (a decision's re-read, folders listed in it)
    record_files, relisted = WorkspaceQueue.record_files, WorkspaceSource.relisted
    inside: list[int] = []

    def counting_files(queue: WorkspaceQueue) -> Any:
        if inside:
            inside[-1] += 1
        return record_files(queue)

    def counting_relisted(source: WorkspaceSource, gone: Any, *args: Any) -> Any:
        inside.append(0)
        try:
            return relisted(source, gone, *args)
        finally:
            listings.append((bool(gone), inside.pop()))

    monkeypatch.setattr(WorkspaceQueue, "record_files", counting_files)
    monkeypatch.setattr(WorkspaceSource, "relisted", counting_relisted)
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 3 and app.inbox.ready)
        before = len(listings)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 2 and not app.inbox.busy)
        decided = [listed for was_decision, listed in listings[before:] if was_decision]
        assert decided == [0]
        assert shown(app) == [ids[1], ids[0]]
        assert stack_facts(app) == facts(whole_listing(root))


async def test_an_arrival_and_a_departure_whose_names_were_lost_still_show(
    root: Path, looks: Looks, app_on: Callable[[], RedlineApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """watchfiles drops the kernel's overflow notice: a report may miss a record. The
    folder's names are compared at every re-read, so nothing waits unseen."""
    ids = push_elsewhere(root, "f0.py", "f1.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        # Every report from now on names no record (as if the kernel had lost them all).
        monkeypatch.setattr(tui_pending, "changed_records", lambda _paths: set())
        every = looks.every
        later = push_elsewhere(root, "f2.py")
        await wait_until(pilot, lambda: len(app.stack.rows) == 3)
        assert shown(app) == [later[0], ids[1], ids[0]]
        done = subprocess.run(
            [*REDLINE, "-C", str(root), "discard", ids[0], "--reason", "not needed"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        assert stack_facts(app) == facts(whole_listing(root))
        assert looks.every == every


async def test_a_report_that_cannot_name_records_makes_every_read_look_at_all_of_them(
    root: Path, looks: Looks, app_on: Callable[[], RedlineApp]
) -> None:
    ids = push_elsewhere(root, "f0.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 1)
        pending = app.inbox.pending
        assert isinstance(pending, PendingList)
        # A watch that cannot tell which files changed (watchfiles without its RustNotify,
        # a watch ended on an error), or a change to the actions folder itself.
        pending.records_changed(frozenset({"actions"}))
        every = looks.every
        later = push_elsewhere(root, "f1.py")
        await wait_until(pilot, lambda: len(app.stack.rows) == 2)
        assert shown(app) == [later[0], ids[0]]
        assert looks.every > every
        assert looks.told[-1] is None
        assert stack_facts(app) == facts(whole_listing(root))


async def test_a_re_read_that_finds_nothing_new_shows_the_very_rows(
    root: Path, looks: Looks, app_on: Callable[[], RedlineApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The queue watcher's report of the decision's own writes (after the decision's
    re-read) changes nothing: the stack is not built again."""
    push_elsewhere(root, "f0.py", "f1.py", "f2.py")
    app = app_on()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.stack.rows) == 3)
        built: list[int] = []
        update = app.stack.update_actions

        def counting(actions: Any, **options: Any) -> None:
            built.append(len(actions))
            update(actions, **options)

        monkeypatch.setattr(app.stack, "update_actions", counting)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 2 and not app.inbox.busy)
        listed = app.inbox.pending.listed()
        reads = len(looks.told)
        # The echo: the watcher names the decided record (gone) and the resolved log.
        pending = app.inbox.pending
        assert isinstance(pending, PendingList)
        pending.records_changed(frozenset({"actions/pa-3.json", "resolved/pa-3.json"}))
        app.inbox.refresh_stack()
        assert len(looks.told) > reads  # read again...
        assert app.inbox.pending.listed() is listed  # ...and found the very listing
        assert built == [2]  # the stack built once, for the decision


async def test_after_y_the_stack_its_counts_and_the_arrival_notices_match_a_whole_build(
    root: Path, app_on: Callable[[], RedlineApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision's re-read shows the rows that left or changed only (the stack, its
    source counts, the arrival notices): what they show is what a whole build shows, and
    an action another process queues afterwards is still noticed as new."""
    from tests.tui.test_notify_arrivals import record_terminal
    from textual import events

    from redline.tui.widgets.pending_stack import source_counts

    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("VTE_VERSION", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    ids = push_elsewhere(root, "f0.py", "f1.py", "f2.py", "f3.py")
    app = app_on()
    written: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        record_terminal(app, written)
        await wait_until(pilot, lambda: len(app.stack.rows) == 4)
        listed = app.inbox.pending.listed()
        await pilot.press("y")
        await wait_until(pilot, lambda: len(app.stack.rows) == 3 and not app.inbox.busy)
        pending = app.inbox.pending
        assert isinstance(pending, PendingList)
        assert pending.gone_since(listed, pending.listed()) == {ids[3]}  # (the change path)
        assert app.stack.counts == source_counts(pending.listed()) == (("exec:other", 3),)
        assert app.stack.top_id == ids[2]
        assert stack_facts(app) == facts(whole_listing(root))
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.dashboard_in_front)
        later = push_elsewhere(root, "f4.py")
        await wait_until(pilot, lambda: bool(written))
        assert later[0] in written[0] and all(old not in written[0] for old in ids)
        assert app.stack.counts == (("exec:other", 4),)
