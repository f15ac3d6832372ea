"""Pilot tests for the dashboard's decision flow: keys that must never apply by accident,
the selection when others resolve, marks, and the reasons refused keys give."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, modify
from textual.widgets import Button

from redline.review.queued import resolve_queued
from redline.review.store import PendingActionStore
from redline.tui.app import RedlineApp
from redline.tui.screens.confirm import ConfirmScreen
from redline.workspace.preview import Preview
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

SIZE = (140, 40)


def app_for(session: FakeSession) -> RedlineApp:
    return RedlineApp(session, watcher_factory=FakeWatcher)  # type: ignore[arg-type]


def notified(app: RedlineApp, text: str) -> bool:
    return any(text in str(note.message) for note in app._notifications)


async def test_tab_tab_enter_from_the_reason_field_never_applies() -> None:
    applied: list[str] = []
    session = FakeSession()
    for label in ("one", "two", "three", "four"):
        session.push(make_action(label, applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.preview.action is not None)
        for tabs in (1, 2, 3):
            await pilot.press("r")
            await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "reason")
            await pilot.press(*"not now", *["tab"] * tabs)
            assert app.focused is None or app.focused.id not in ("apply", "discard")
            await pilot.press("enter")
            await pilot.press("escape")
            app.stack.focus()
            await pilot.pause()
        # However many Tabs came before Enter, nothing was applied.
        assert applied == []
        assert all(verb != "apply" for verb, *_ in session.resolutions)


async def test_enter_in_the_reason_field_discards_with_that_reason() -> None:
    applied: list[str] = []
    session = FakeSession()
    session.push(make_action("edit app", applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", *"wrong file", "enter")
        await wait_until(pilot, lambda: session.store.count == 0)
        assert session.resolutions == [("discard", "wrong file", "pa-1", "human")]
        assert applied == []
        await wait_until(pilot, lambda: app.resolve_bar.reason == "")
        assert app.focused is app.stack


# -- the selection when another process resolves ----------------------------------------
def queued_session(root: Path) -> tuple[FakeSession, WorkspaceQueue]:
    queue = WorkspaceQueue(root)
    session = FakeSession(cwd=root)
    session.store = PendingActionStore(clock=lambda: 0.0, queue=queue)
    session.queue = queue  # type: ignore[attr-defined]
    return session, queue


def push_elsewhere(root: Path, label: str) -> str:
    other = WorkspaceQueue(root)
    try:
        record = other.push(
            ActionDraft(
                label,
                Source.current("exec", "exec", "other-session"),
                source_tool_name="edit",
                preview=Preview([modify("src/app.py", "a = 1\n", "a = 2\n")]),
            )
        )
    finally:
        other.close()
    return record.id


async def resolve_elsewhere(root: Path, action_id: str, verb: str, reason: str) -> None:
    other = WorkspaceQueue(root)
    try:
        result = await resolve_queued(other, action_id, verb, reason)
        assert not result.is_error, result.text
    finally:
        other.close()


async def test_selected_top_resolved_elsewhere_the_selection_follows_the_top(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    lower = push_elsewhere(tmp_path, "lower edit")
    upper = push_elsewhere(tmp_path, "upper edit")
    app = app_for(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.selected_id == upper)
            await resolve_elsewhere(tmp_path, upper, "discard", "not needed")
            await wait_until(pilot, lambda: notified(app, f"{upper} was discarded by a person"))
            assert notified(app, "(reason: not needed)") and notified(app, "The top is selected")
            # The person never moved: the selection stays on the top, now the lower one.
            await wait_until(pilot, lambda: app.stack.selected_id == lower)
            assert app.preview.action is not None and app.preview.action.id == lower
    finally:
        queue.close()


async def test_selected_action_resolved_elsewhere_after_moving_selects_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("a = 1\n")
    session, queue = queued_session(tmp_path)
    lower = push_elsewhere(tmp_path, "lower edit")
    upper = push_elsewhere(tmp_path, "upper edit")
    app = app_for(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.stack.selected_id == upper)
            # The person moves off the top: the selection no longer follows it.
            await pilot.press("j")
            await wait_until(pilot, lambda: app.stack.selected_id == lower)
            await resolve_elsewhere(tmp_path, lower, "discard", "not needed")
            await wait_until(pilot, lambda: notified(app, f"{lower} was discarded by a person"))
            assert notified(app, "(reason: not needed)")
            assert [row.action_id for row in app.stack.rows] == [upper]
            assert app.stack.selected_id is None and app.preview.action is None
            # y and n do nothing now, and say why.
            await pilot.press("y")
            await wait_until(pilot, lambda: notified(app, "Nothing is selected"))
            await pilot.press("n")
            assert queue.get(upper) is not None
            assert (tmp_path / "src" / "app.py").read_text() == "a = 1\n"
            # Moving selects again.
            await pilot.press("k")
            await wait_until(pilot, lambda: app.stack.selected_id == upper)
    finally:
        queue.close()


async def test_selection_stays_on_its_action_when_one_above_is_resolved(tmp_path: Path) -> None:
    session, queue = queued_session(tmp_path)
    lower = push_elsewhere(tmp_path, "lower edit")
    upper = push_elsewhere(tmp_path, "upper edit")
    app = app_for(session)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: len(app.stack.rows) == 2)
            await pilot.press("j")
            await wait_until(pilot, lambda: app.stack.selected_id == lower)
            await resolve_elsewhere(tmp_path, upper, "discard", "")
            await wait_until(pilot, lambda: [r.action_id for r in app.stack.rows] == [lower])
            assert app.stack.selected_id == lower
            newest = push_elsewhere(tmp_path, "newest edit")
            await wait_until(pilot, lambda: app.stack.top_id == newest)
            # A new action on top does not take the selection either.
            assert app.stack.selected_id == lower
            assert not notified(app, "Nothing is selected")
    finally:
        queue.close()


# -- refused keys say why ----------------------------------------------------------------
async def test_greyed_keys_say_why_they_do_nothing() -> None:
    session = FakeSession()
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("y")
        await wait_until(pilot, lambda: notified(app, "Nothing is pending."))
        session.push(make_action("fresh edit"))
        await wait_until(pilot, lambda: app.stack.selected_id == "pa-1")
        await pilot.press("p")
        await wait_until(pilot, lambda: notified(app, "pa-1 is not stale"))
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: notified(app, "pa-1 changes only one file"))


# -- marking several actions -------------------------------------------------------------
async def test_marked_actions_apply_together_with_per_action_results() -> None:
    applied: list[str] = []
    session = FakeSession()
    for label in ("one", "two", "three"):
        session.push(make_action(label, applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == "pa-3")
        await pilot.press("space", "j", "j", "space")
        assert app.stack.marked == ("pa-3", "pa-1")
        assert "●" in app.stack._line(app.stack.rows[0], 0, 0, 80).plain
        assert "●" not in app.stack._line(app.stack.rows[1], 1, 0, 80).plain
        assert str(app.query_one("#apply", Button).label) == "Apply 2 marked (y)"
        await pilot.press("y")
        await wait_until(pilot, lambda: session.store.count == 1 and not app.inbox.busy)
        assert sorted(applied) == ["one", "three"]
        assert [a[2] for a in session.resolutions] == ["pa-3", "pa-1"]
        assert session.store.peek().label == "two"  # type: ignore[union-attr]
        await wait_until(pilot, lambda: notified(app, "Applied 2 of 2 marked"))
        assert "✓ pa-3 applied" in app.activity.plain
        assert "✓ pa-1 applied" in app.activity.plain
        assert app.stack.marked == ()


async def test_marked_actions_discard_with_one_reason_from_the_reason_field() -> None:
    session = FakeSession()
    for label in ("one", "two", "three"):
        session.push(make_action(label))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "j", "space")
        await pilot.press("r", *"off track", "enter")
        await wait_until(pilot, lambda: session.store.count == 1 and not app.inbox.busy)
        assert [
            (verb, reason, action_id) for verb, reason, action_id, _ in session.resolutions
        ] == [
            ("discard", "off track", "pa-3"),
            ("discard", "off track", "pa-2"),
        ]


async def test_a_stale_marked_action_is_refused_and_the_others_still_apply() -> None:
    applied: list[str] = []
    session = FakeSession()
    session.push(make_action("old file", path="src/old.py", applied=applied))
    session.push(make_action("app", path="src/app.py", applied=applied))
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        session.check_staleness({"src/old.py"})
        await wait_until(pilot, lambda: any(row.stale for row in app.stack.rows))
        await pilot.press("space", "j", "space", "y")
        await wait_until(pilot, lambda: notified(app, "Applied 1 of 2 marked"))
        assert applied == ["app"]
        assert notified(app, "pa-1: Refused to apply old file: it is stale")
        assert "✗ pa-1 not resolved" in app.activity.plain
        # The refused one stays pending and marked, for a discard or a re-preview.
        assert app.stack.marked == ("pa-1",)


# -- hints: a blocked undo, the session-rule dialog --------------------------------------
async def test_a_blocked_undo_gives_a_hint() -> None:
    session = FakeSession()
    session.undo_refusal = (
        'Cannot undo "Edit a.txt": 1 file changed since it was applied: a.txt (modified). '
        "Nothing was changed."
    )
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("u")
        await wait_until(pilot, lambda: notified(app, "redline undo --list"))
        assert "Hint: put those files back" in app.activity.plain


class _Rules:
    """The part of the session's rule set the dashboard uses."""

    def __init__(self, rules: tuple[object, ...] = ()) -> None:
        self.added: list[object] = []
        self.rules = rules

    def snapshot(self) -> object:
        return type("Snapshot", (), {"notes": (), "rules": self.rules})()

    def add_session_rule(self, rule: object) -> object:
        self.added.append(rule)
        return rule


async def test_the_session_rule_dialog_says_what_it_matches_and_where_it_is_kept() -> None:
    session = FakeSession()
    session.push(make_action("other file", path="src/util.py"))
    session.push(make_action("docs", path="docs/readme.md"))
    session.push(make_action("edit app", path="src/app.py"))
    session.rules = _Rules()  # type: ignore[attr-defined]
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == "pa-3")
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = app.screen.question  # type: ignore[attr-defined]
        assert "every change the edit tool proposes to files under src/**" in question
        # The rules decide from the top and stop at pa-2 (docs: a person decides it), so
        # pa-1 is not applied now although the new rule matches it.
        assert "It applies pa-3 now." in question
        assert "pa-1" not in question and "pa-2" not in question
        assert "for this session only and saved nowhere" in question
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert session.rules.added == []  # type: ignore[attr-defined]


async def test_the_session_rule_dialog_claims_only_what_the_rules_reach() -> None:
    from redline.rules.parse import parse_rules

    session = FakeSession()
    session.push(make_action("docs", path="docs/readme.md"))
    session.push(make_action("other file", path="src/util.py"))
    session.push(make_action("secret", path="src/secret.py"))
    session.push(make_action("edit app", path="src/app.py"))
    # A session rule already in force discards src/secret.py first: the new rule (added
    # after it) does not apply it; the rules go on below it, and stop at docs (pa-1).
    first = parse_rules(
        b'[[rule]]\nname = "no secrets"\ndecision = "discard"\npaths = ["src/secret.py"]\n'
        b'reason = "never"\n',
        "session",
        "session",
    )
    session.rules = _Rules(tuple(first))  # type: ignore[attr-defined]
    app = app_for(session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.stack.selected_id == "pa-4")
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        question = app.screen.question  # type: ignore[attr-defined]
        assert "It applies pa-4, pa-2 now." in question
        assert "pa-3" not in question and "pa-1" not in question
        await pilot.press("n")
