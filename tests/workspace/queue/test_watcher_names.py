"""A queue's watcher names the files it saw change (issue 44): the dashboard's stack then
looks only at the records named instead of every record file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from redline.review.follower import follow
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue, changed_records
from redline.workspace.queue.watcher import QueueWatcher


@pytest.mark.parametrize(
    ("paths", "ids"),
    [
        ((), set()),
        (("actions/pa-3.json", "actions/pa-12.json"), {"pa-3", "pa-12"}),
        # A record's temporary file (renamed to the record's name when written, then named).
        (("actions/.pa-3.json.tmp-1", "actions/pa-3.json"), {"pa-3"}),
        # The other folders name no record.
        (("resolved/pa-3.json", "claims/pa-3.lock", "requests/.wake-9", "next-id"), set()),
    ],
)
def test_the_records_a_report_names(paths: tuple[str, ...], ids: set[str]) -> None:
    assert changed_records(frozenset(paths)) == ids


@pytest.mark.parametrize(
    "paths",
    [
        None,  # the watch could not tell
        ("",),  # the queue folder itself
        ("actions",),  # the actions folder itself (made, removed, replaced)
        ("actions/pa-3.json", "actions/notes.txt"),  # not a record, not a temporary file
        ("actions/pa-03.json",),  # not an action id
        ("actions/sub/pa-3.json",),
    ],
)
def test_a_report_that_may_hide_a_record_names_none(paths: tuple[str, ...] | None) -> None:
    assert changed_records(None if paths is None else frozenset(paths)) is None


def test_the_watcher_tells_the_paths_below_its_folder_before_the_callback(
    tmp_path: Path,
) -> None:
    told: list[frozenset[str] | None] = []
    order: list[str] = []
    heard = threading.Event()

    def on_paths(paths: frozenset[str] | None) -> None:
        told.append(paths)
        order.append("paths")

    def changed() -> None:
        order.append("changed")
        heard.set()

    (tmp_path / "actions").mkdir()
    watcher = QueueWatcher(tmp_path, changed, on_paths=on_paths)
    watcher.start()
    try:
        (tmp_path / "actions" / "pa-7.json").write_text("{}")
        assert heard.wait(30), "the change was not heard"  # hang guard
    finally:
        watcher.stop()
    assert order[:2] == ["paths", "changed"]
    assert told[0] is not None and "actions/pa-7.json" in told[0]
    assert changed_records(told[0]) == {"pa-7"}


def test_a_follower_tells_a_subscriber_which_records_another_process_changed(
    tmp_path: Path,
) -> None:
    """Pushed through another queue object (as another process does), heard by this one's
    follower with the record's name, before the change is reported."""
    queue = WorkspaceQueue(tmp_path)
    told: list[frozenset[str] | None] = []
    order: list[str] = []
    heard = threading.Event()

    def paths(found: frozenset[str] | None) -> None:
        told.append(found)
        order.append("paths")

    def changed() -> None:
        order.append("changed")
        if any(changed_records(t) for t in told):  # the record named (not only its contents)
            heard.set()

    unsubscribe = follow(queue, changed, paths=paths)
    try:
        with WorkspaceQueue(tmp_path) as other:
            record = other.push(ActionDraft("run", Source.current("exec", "x", "s")))
        assert heard.wait(30), "the push was not heard"  # hang guard
    finally:
        unsubscribe()
        queue.close()
    assert order[:2] == ["paths", "changed"]
    assert None not in told
    assert record.id in set().union(*(changed_records(t) or set() for t in told))


def test_the_records_named_and_the_folders_names(tmp_path: Path) -> None:
    with WorkspaceQueue(tmp_path) as queue:
        source = Source.current("exec", "x", "s")
        one = queue.push(ActionDraft("one", source))
        two = queue.push(ActionDraft("two", source))
        every = queue.identities()
        assert queue.identities_named([one.id, "pa-999"]) == {one.id: every[one.id]}
        assert {f"{one.id}.json", f"{two.id}.json"} <= set(queue.record_files())
