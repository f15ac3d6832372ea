"""The footer shows only whole keys: none runs past the screen or under the palette key."""

from __future__ import annotations

import pytest
from tests.tui.conftest import wait_until
from tests.tui.fakes import FakeSession, FakeWatcher, make_action, multi_file_preview
from textual.widgets._footer import FooterKey

from redline.tui.app import RedlineApp
from redline.tui.widgets.fitting_footer import PALETTE_CLASS, FittingFooter


def _app() -> RedlineApp:
    session = FakeSession()
    session.push(make_action("three files", preview=multi_file_preview()))
    return RedlineApp(session, watcher_factory=FakeWatcher)


def _keys(app: RedlineApp) -> list[FooterKey]:
    return list(app.screen.query_one(FittingFooter).query(FooterKey))


def _assert_whole(app: RedlineApp, width: int) -> None:
    keys = _keys(app)
    assert keys, "the footer shows no key"
    palette = [k for k in keys if k.has_class(PALETTE_CLASS)]
    limit = palette[0].region.x if palette else width
    for key in keys:
        region = key.region
        text = f"{key.key_display} {key.description}".strip()
        assert region.width >= len(text), f"{text!r} is squeezed into {region.width} cells"
        assert region.right <= width, f"{text!r} ends at {region.right}, past width {width}"
        if key not in palette:
            assert region.right <= limit, f"{text!r} runs under the palette key at {limit}"


def _shown(app: RedlineApp) -> list[str]:
    return [k.action for k in _keys(app)]


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (160, 48)])
async def test_footer_keys_fit_whole(size: tuple[int, int]) -> None:
    app = _app()
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: "apply_top" in _shown(app))
        await pilot.pause()
        _assert_whole(app, size[0])
        shown = _shown(app)
        for action in ("apply_top", "discard_top", "focus_reason", "focus_prompt", "help"):
            assert action in shown, f"{action} is missing at {size}"


async def test_footer_refits_after_resize_and_longer_labels() -> None:
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: "apply_top" in _shown(app))
        wide = len(_keys(app))
        await pilot.resize_terminal(60, 20)
        await wait_until(pilot, lambda: len(_keys(app)) < wide)
        await pilot.pause()
        _assert_whole(app, 60)
        # Picking a hunk lengthens y/n ("Apply 1/3 hunks"); still nothing is cut.
        await pilot.press("d", "space")  # space in the stack marks; in the diff it picks
        await wait_until(
            pilot, lambda: any(k.description.startswith("Apply 1/") for k in _keys(app))
        )
        await pilot.pause()
        _assert_whole(app, 60)
        narrow = len(_keys(app))
        await pilot.resize_terminal(160, 48)
        await wait_until(pilot, lambda: len(_keys(app)) > narrow)
        await pilot.pause()
        _assert_whole(app, 160)


async def test_keys_turning_on_and_off_keep_the_footer_keys() -> None:
    """A decision greys y/n and turns them back on: the same key widgets are updated in place
    (Textual's footer would mount all of them again, several times per decision)."""
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        # Settled: the diff's keys come with its files, a step after the selection.
        await wait_until(pilot, lambda: "step_file(-1)" in _shown(app))
        await pilot.pause()
        before = {key.action: key for key in _keys(app)}
        assert not before["apply_top"].disabled
        inbox = app.inbox
        inbox.busy = True
        inbox._update_controls()
        await wait_until(pilot, lambda: before["apply_top"].disabled)
        assert {key.action: key for key in _keys(app)} == before
        inbox.busy = False
        inbox._update_controls()
        await wait_until(pilot, lambda: not before["apply_top"].disabled)
        await pilot.pause()
        after = {key.action: key for key in _keys(app)}
        assert after == before
        assert all(after[name] is key for name, key in before.items())


async def test_a_new_key_still_rebuilds_the_footer() -> None:
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: "apply_top" in _shown(app))
        apply_key = next(k for k in _keys(app) if k.action == "apply_top")
        help_key = next(k for k in _keys(app) if k.action == "help")
        # Picking a hunk changes y's description: the keys are built again with it.
        await pilot.press("d", "space")
        await wait_until(
            pilot, lambda: any(k.description.startswith("Apply 1/") for k in _keys(app))
        )
        assert apply_key not in _keys(app)
        # The keys that did not change are the same widgets, and the keys keep the bindings'
        # order (the new ones are mounted where they belong, not at the end).
        assert help_key in _keys(app)
        footer = app.screen.query_one(FittingFooter)
        order = [entry[1] for entry in footer._composed_keys or ()]
        shown = [k.action for k in _keys(app) if not k.has_class(PALETTE_CLASS)]
        assert shown == sorted(shown, key=order.index)


async def test_changes_before_the_rebuild_compose_the_keys_once() -> None:
    """Bindings that change again before the footer's rebuild has run are read by that one
    rebuild: the keys are composed once, not once per change, and the keys that come out
    the same are kept rather than mounted again (issue 44)."""
    app = _app()
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: "step_file(-1)" in _shown(app))
        await pilot.pause()
        footer = app.screen.query_one(FittingFooter)
        composed: list[int] = []
        compose = footer.compose

        def counting_compose() -> object:
            composed.append(1)
            return compose()

        footer.compose = counting_compose  # type: ignore[method-assign]
        # Keys turned on or off in place since they were built differ from fresh ones: one
        # rebuild first, so every key is as a compose makes it.
        footer._composed_keys = ()
        footer.bindings_changed(app.screen)
        await wait_until(pilot, lambda: bool(composed))
        await pilot.pause()
        composed.clear()
        old = _keys(app)
        for _ in range(3):
            footer._composed_keys = ()  # as if the shown keys differed each time
            footer.bindings_changed(app.screen)
        await wait_until(pilot, lambda: bool(composed))
        await pilot.pause()
        assert len(composed) == 1
        assert _keys(app) == old
        assert all(key.has_class("-compact") for key in _keys(app))
