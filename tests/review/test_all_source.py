"""Issue 45: the all-workspaces review source (``redline --all``'s backend): every known
workspace's actions newest first as pa-N@WSID, read lazily, each decision routed into its
own workspace; missing and conflicting workspaces; the one watcher thread."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from redline.review.all_source import RULES_REFUSAL, AllWorkspacesSource
from redline.review.all_workspaces import AllWorkspaces
from redline.review.session import Decision
from redline.review.source import ListedAction
from redline.workspace.preview import FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

# Queues one action on a.txt of argv[1], labelled argv[2], in a process of its own.
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
    print(queue.push(draft).id)
"""


def _folder(root: Path, text: str = "hello\n") -> Path:
    root.mkdir(parents=True)
    (root / "a.txt").write_text(text)
    return root.resolve()


def _push(root: Path, label: str, clock: float | None = None) -> str:
    old = (root / "a.txt").read_text()
    preview = Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, old + label + "\n")])
    draft = ActionDraft(
        label=label,
        source=Source.current("exec", "t", "s"),
        source_tool_name="edit",
        preview=preview,
    )
    with WorkspaceQueue(root) as queue:
        record = queue.push(draft)
    return record.id


def _push_elsewhere(root: Path, label: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PUSH, str(root), label], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _config_id(root: Path, ident: str) -> None:
    """Give ``root`` a configured workspace id (trusted, so its [queue] is read)."""
    from redline.trust import trust

    (root / ".redline").mkdir(exist_ok=True)
    (root / ".redline" / "config.toml").write_text(f'[queue]\nworkspace_id = "{ident}"\n')
    trust(root)


@pytest.fixture
def three(tmp_path: Path) -> list[Path]:
    roots = [_folder(tmp_path / name) for name in ("api", "web", "docs")]
    for root, ident in zip(roots, ("wsapi", "wsweb", "wsdocs"), strict=True):
        _config_id(root, ident)
    return roots


def test_every_workspace_newest_first_with_team_ids(three: list[Path]) -> None:
    api, web, docs = three
    _push(api, "api one")
    _push(web, "web one")
    _push_elsewhere(docs, "docs one")
    _push(api, "api two")
    source = AllWorkspacesSource()
    try:
        rows = source.listed()
        assert [row.id for row in rows] == ["pa-2@wsapi", "pa-1@wsdocs", "pa-1@wsweb", "pa-1@wsapi"]
        top = rows[0]
        assert (top.label, top.local_id, top.source) == ("api two", "pa-2", "exec:t")
        assert top.workspace is not None and top.workspace.path == str(api)
        assert source.spans_workspaces
        assert not source.capabilities.rules.available
        assert source.capabilities.refusal("rules") == RULES_REFUSAL
        # Checks: each action's own workspace's (none configured here: said per action).
        assert source.capabilities.checks.available
        refused = source.allows(top).refusal("checks")
        assert refused.startswith("No checks are configured for workspace wsapi")
    finally:
        source.close()


def test_rows_are_made_only_when_read(three: list[Path]) -> None:
    api, web, _docs = three
    for number in range(30):
        _push(api if number % 2 else web, f"edit {number}")
    source = AllWorkspacesSource()
    try:
        rows = source.listed()
        assert len(rows) == 30
        assert rows.made() == 0  # type: ignore[attr-defined]
        assert rows[0].label == "edit 29"
        assert rows.made() == 1  # type: ignore[attr-defined]
        assert [row.label for row in rows[:3]] == ["edit 29", "edit 28", "edit 27"]
        assert rows.made() == 3  # type: ignore[attr-defined]
    finally:
        source.close()


def test_the_preview_is_read_for_one_action_on_demand(three: list[Path]) -> None:
    api, _web, _docs = three
    _push(api, "api one")
    source = AllWorkspacesSource()
    try:
        source.listed()
        view = source.view("pa-1@wsapi")
        assert not view.error
        assert view.preview is not None and view.preview.paths == ("a.txt",)
        assert view.hunks == ("a.txt#1",)
        assert view.action.id == "pa-1@wsapi"
        assert "unknown workspace nope" in source.view("pa-1@nope").error
    finally:
        source.close()


def test_each_decision_lands_only_in_its_workspace(three: list[Path]) -> None:
    api, web, docs = three
    _push_elsewhere(api, "api")
    _push_elsewhere(web, "web")
    _push_elsewhere(docs, "docs")
    source = AllWorkspacesSource()
    try:
        source.listed()
        outcome = source.decide("pa-1@wsweb", Decision("apply"))
        assert outcome.ok, outcome.text
        assert str(web) in outcome.text
        assert (web / "a.txt").read_text() == "hello\nweb\n"
        assert (api / "a.txt").read_text() == "hello\n"
        assert (docs / "a.txt").read_text() == "hello\n"
        discarded = source.decide("pa-1@wsdocs", Decision("discard", "not now"))
        assert discarded.ok, discarded.text
        assert (docs / "a.txt").read_text() == "hello\n"
        with WorkspaceQueue(docs) as queue:
            resolution = queue.resolution("pa-1")
            assert resolution is not None and resolution.reason == "not now"
        assert [row.id for row in source.listed()] == ["pa-1@wsapi"]
        again = source.decide("pa-1@wsweb", Decision("apply"))
        assert not again.ok and again.lost
    finally:
        source.close()


def test_parts_edit_and_repreview_go_to_the_workspace(three: list[Path]) -> None:
    api, web, _docs = three
    (api / "a.txt").write_text("".join(f"line {n}\n" for n in range(30)))
    old = (api / "a.txt").read_text()
    new = old.replace("line 1\n", "line one\n").replace("line 25\n", "line twenty-five\n")
    draft = ActionDraft(
        label="two hunks",
        source=Source.current("exec", "t", "s"),
        source_tool_name="edit",
        preview=Preview([FileModify("a.txt", sha256_bytes(old.encode()), old, new)]),
    )
    with WorkspaceQueue(api) as queue:
        queue.push(draft)
    (web / "a.txt").write_text("".join(f"row {n}\n" for n in range(20)))
    _push(web, "web")
    source = AllWorkspacesSource()
    try:
        source.listed()
        assert source.view("pa-1@wsapi").hunks == ("a.txt#1", "a.txt#2")
        part = source.decide("pa-1@wsapi", Decision("apply", only=("a.txt#2",)))
        assert part.ok, part.text
        assert "line twenty-five" in (api / "a.txt").read_text()
        assert "line one" not in (api / "a.txt").read_text()
        rest = [row for row in source.listed() if row.workspace and row.workspace.id == "wsapi"]
        assert len(rest) == 1
        edited = source.edit(rest[0].id, "a.txt", (api / "a.txt").read_text() + "mine\n")
        assert edited.ok, edited.text
        # web's action made stale, then proposed again over the current file
        (web / "a.txt").write_text((web / "a.txt").read_text().replace("row 0\n", "changed\n"))
        [web_row] = [r for r in source.listed() if r.workspace and r.workspace.id == "wsweb"]
        assert web_row.stale
        again = source.repreview(web_row.id)
        assert again.ok, again.text
        assert (web / "a.txt").read_text().startswith("changed\n")
        [fresh] = [r for r in source.listed() if r.workspace and r.workspace.id == "wsweb"]
        assert not fresh.stale and fresh.local_id == "pa-2"
    finally:
        source.close()


def test_undo_names_the_apply_and_its_workspace(three: list[Path]) -> None:
    api, web, _docs = three
    _push(api, "api edit")
    _push(web, "web edit")
    source = AllWorkspacesSource()
    try:
        rows = {row.id: row for row in source.listed()}
        assert source.decide("pa-1@wsapi", Decision("apply")).ok
        assert source.decide("pa-1@wsweb", Decision("apply")).ok
        api_ref = rows["pa-1@wsapi"].workspace
        asked = source.undo_target(api_ref)
        assert "api edit" in asked and str(api) in asked and "pa-1@wsapi" in asked
        done = source.undo(api_ref)
        assert done.ok, done.text
        assert (api / "a.txt").read_text() == "hello\n"
        assert (web / "a.txt").read_text() == "hello\nweb edit\n"
        assert source.undo_target(api_ref) == ""
    finally:
        source.close()


def test_a_missing_workspace_is_shown_and_skipped(three: list[Path], tmp_path: Path) -> None:
    import shutil

    api, web, _docs = three
    _push(api, "api")
    _push(web, "web")
    moved = tmp_path / "moved-web"
    source = AllWorkspacesSource()
    try:
        assert len(source.listed()) == 2
        web.rename(moved)  # moved away while known
        source.spaces.refresh()
        assert [row.id for row in source.listed()] == ["pa-1@wsapi"]
        [gone] = [s for s in source.workspaces() if s.path == str(web)]
        assert gone.missing and gone.id == "wsweb"
        refused = source.decide("pa-1@wsweb", Decision("apply"))
        assert not refused.ok and "missing" in refused.text
        shutil.rmtree(api)  # deleted while known
        source.spaces.refresh()
        assert list(source.listed()) == []
    finally:
        source.close()


def test_conflicting_ids_are_refused(tmp_path: Path) -> None:
    one, two = _folder(tmp_path / "one"), _folder(tmp_path / "two")
    _config_id(one, "same")
    _config_id(two, "same")
    _push(one, "one")
    _push(two, "two")
    source = AllWorkspacesSource()
    try:
        assert list(source.listed()) == []
        spaces = source.workspaces()
        assert [s.conflict for s in spaces] == [True, True]
        refused = source.decide("pa-1@same", Decision("apply"))
        assert not refused.ok and "shared by" in refused.text
        assert (one / "a.txt").read_text() == "hello\n"
    finally:
        source.close()


class _Watching:
    """``source.watch`` on a thread of its own, each listing's ids kept as it comes."""

    def __init__(self, source: AllWorkspacesSource) -> None:
        self.listings: list[list[str]] = []
        self.heard = threading.Condition()
        self.stop = threading.Event()
        self.worker = threading.Thread(
            target=source.watch, args=(self.stop, self._on_rows, lambda *_: None)
        )
        self.worker.start()

    def _on_rows(self, rows: Sequence[ListedAction]) -> None:
        with self.heard:
            self.listings.append([r.id for r in rows])
            self.heard.notify_all()

    def wait(self, condition: Callable[[], bool]) -> bool:
        """Until ``condition`` holds after a listing (False past the hang guard)."""
        with self.heard:
            return self.heard.wait_for(condition, 30)

    def end(self) -> None:
        self.stop.set()
        self.worker.join(10)


def test_watch_follows_every_queue_on_one_thread(three: list[Path], tmp_path: Path) -> None:
    api, web, docs = three
    _push(api, "api")
    source = AllWorkspacesSource()
    watching = _Watching(source)

    def wait_for(ids: list[str], missing: str = "") -> None:
        def shown() -> bool:
            if watching.listings[-1:] != [ids]:
                return False
            return not missing or [s.missing for s in source.workspaces() if s.path == missing] == [
                True
            ]

        assert watching.wait(shown), watching.listings[-1:]

    def watchers() -> int:
        return sum(1 for t in threading.enumerate() if t.name == "redline-queues-watch")

    try:
        wait_for(["pa-1@wsapi"])
        # The watcher starts once the first listings are handed over (rows are made on
        # the watching thread): wait for it, then it is ONE thread for every queue.
        deadline = time.monotonic() + 30
        while watchers() == 0 and time.monotonic() < deadline:
            watching.stop.wait(0.01)
        assert watchers() == 1
        _push_elsewhere(docs, "docs")
        wait_for(["pa-1@wsdocs", "pa-1@wsapi"])
        # A workspace remembered while the inbox is open is picked up.
        late = _folder(tmp_path / "late")
        _config_id(late, "wslate")
        _push_elsewhere(late, "late")
        wait_for(["pa-1@wslate", "pa-1@wsdocs", "pa-1@wsapi"])
        assert watchers() == 1
        assert source.decide("pa-1@wsdocs", Decision("discard")).ok
        wait_for(["pa-1@wslate", "pa-1@wsapi"])
        import shutil

        shutil.rmtree(api)  # deleted while the inbox is open: shown missing, skipped
        wait_for(["pa-1@wslate"], missing=str(api))
        assert watchers() == 1
    finally:
        watching.end()
        source.close()
    assert not watching.worker.is_alive()
    _ = web


def test_a_folder_deleted_from_the_inside_out_is_shown_missing(three: list[Path]) -> None:
    # Deleting a folder removes its queue folder first; once that is gone nothing more is
    # heard from the workspace, yet the folder's own removal a moment later must show.
    import shutil

    api, _web, docs = three
    _push_elsewhere(api, "api")
    _push_elsewhere(docs, "docs")
    source = AllWorkspacesSource()

    def missing() -> list[bool]:
        return [s.missing for s in source.workspaces() if s.path == str(api)]

    watching = _Watching(source)
    try:
        assert watching.wait(lambda: watching.listings[-1:] == [["pa-1@wsdocs", "pa-1@wsapi"]])
        shutil.rmtree(api / ".redline" / "queue")
        assert watching.wait(lambda: watching.listings[-1:] == [["pa-1@wsdocs"]])
        assert missing() == [False]  # the folder is still there
        shutil.rmtree(api)
        assert watching.wait(lambda: missing() == [True]), missing()
    finally:
        watching.end()
        source.close()
    assert not watching.worker.is_alive()


def test_registrations_racing_leave_one_entry_each(tmp_path: Path) -> None:
    from redline.workspace.known import read_all

    roots = [_folder(tmp_path / f"p{n}") for n in range(3)]
    script = (
        "import sys\nfrom pathlib import Path\nfrom redline.workspace.known import remember\n"
        "for _ in range(200):\n    for r in sys.argv[1:]: remember(Path(r))\n"
    )
    children = [
        subprocess.Popen([sys.executable, "-c", script, *map(str, roots)]) for _ in range(4)
    ]
    assert all(child.wait(60) == 0 for child in children)
    assert sorted(k.path for k in read_all()) == sorted(map(str, roots))
    spaces = AllWorkspaces()
    assert len(spaces.refresh()) == 3
    spaces.close()


def test_it_is_a_review_source_and_says_how_an_action_left(three: list[Path]) -> None:
    from redline.review.source import ReviewSource

    api, _web, _docs = three
    _push(api, "api")
    source: ReviewSource = AllWorkspacesSource()
    try:
        source.listed()
        assert source.decide("pa-1@wsapi", Decision("discard", "no thanks")).ok
        text = source.gone_text("pa-1@wsapi")
        assert "pa-1 was discarded" in text and "no thanks" in text and str(api) in text
    finally:
        source.close()


class _Watched:
    """``source.watch`` on a thread of its own while in the ``with`` block; ``seen``: the
    ids of every listing it handed over, in order."""

    def __init__(self, source: AllWorkspacesSource) -> None:
        self.source = source
        self.seen: list[list[str]] = []
        self._heard = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=source.watch, args=(self._stop, self._rows, lambda *_: None)
        )

    def _rows(self, rows: Sequence[ListedAction]) -> None:
        with self._heard:
            self.seen.append([row.id for row in rows])
            self._heard.notify_all()

    def wait_for(self, done: Callable[[list[list[str]]], bool]) -> None:
        with self._heard:
            assert self._heard.wait_for(lambda: done(self.seen), 30), self.seen

    def __enter__(self) -> _Watched:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(30)
        self.source.close()


def test_many_workspaces_list_each_ones_top_first(
    three: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over many workspaces the first listing is each workspace's top action, newest
    first (the first frame at 10,000 actions), then the whole listing follows."""
    import redline.review.all_source as all_source

    monkeypatch.setattr(all_source, "TOP_FIRST", 3)
    api, web, docs = three
    _push(api, "api one")
    _push(web, "web one")
    _push_elsewhere(docs, "docs one")  # queued by another process
    _push(api, "api two")
    whole = ["pa-2@wsapi", "pa-1@wsdocs", "pa-1@wsweb", "pa-1@wsapi"]
    with _Watched(AllWorkspacesSource()) as watched:
        watched.wait_for(lambda seen: len(seen) >= 3)
        listings = watched.seen
        assert listings[0] == ["pa-2@wsapi", "pa-1@wsdocs", "pa-1@wsweb"]
        assert listings[1] == listings[2] == whole


def test_few_workspaces_are_listed_whole_at_once(three: list[Path]) -> None:
    api, web, _docs = three
    _push(api, "api one")
    _push(web, "web one")
    with _Watched(AllWorkspacesSource()) as watched:
        watched.wait_for(lambda seen: len(seen) >= 2)
        assert watched.seen[0] == watched.seen[1] == ["pa-1@wsweb", "pa-1@wsapi"]


def test_an_action_queued_while_the_first_listing_is_read_is_heard(
    three: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watch is set before the first read: another process's action queued in between
    (here: while the first listing is being read) comes in with the next listing, not
    only at the next change of its workspace."""
    api, web, _docs = three
    _push(api, "api")
    source = AllWorkspacesSource()
    watched = _Watched(source)
    real_read = source.spaces.read

    def read_with_an_arrival(*args: object, **kwargs: object) -> object:
        listing = real_read(*args, **kwargs)  # type: ignore[arg-type]
        if not watched.seen:  # the first read: web's action arrives just after it
            _push_elsewhere(web, "web")
        return listing

    monkeypatch.setattr(source.spaces, "read", read_with_an_arrival)
    with watched:
        watched.wait_for(lambda seen: bool(seen) and "pa-1@wsweb" in seen[-1])
        # The first listing was read before it came.
        assert watched.seen[0] == ["pa-1@wsapi"]
