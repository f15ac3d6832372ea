"""Regenerate the dashboard pictures in ``screenshots/`` from the scripted demo.

Run from the repository root:

    uv run python scripts/screenshots.py [--out screenshots]

Every picture comes from a fresh copy of the sample project and a fresh demo session, so
one scene cannot leak into the next. The demo's pauses are skipped, the session clock and
id are fixed and the workspace is shown as ``~/inventory``: re-running gives the same SVGs.
PNGs are written too when ``rsvg-convert`` or ``cairosvg`` is available.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# Read by the scripted provider; set before anything from redline is imported.
os.environ["REDLINE_SCRIPTED_WAIT_SCALE"] = "0"

SIZE = (150, 45)
WORKSPACE_LABEL = "~/inventory"
FIXED_TIME = 1_767_225_600.0  # 2026-01-01 00:00 UTC: no wall-clock time reaches a picture
SESSION_ID = "screenshots"
DEMO_ACTIONS = 5
WAIT_SECONDS = 20.0
# Frames to let deferred work (diff highlighting, footer recompose) land before a capture.
SETTLE_FRAMES = 5

# textual.pilot.Pilot[int], loosely: its .app is typed App[int], and the scenes need RedlineApp.
Pilot = Any
Scene = Callable[[Pilot], Awaitable[None]]


class SceneError(RuntimeError):
    """A scene did not reach the state its picture needs."""


class NullWatcher:
    """No file watcher: nothing edits the copy behind the demo's back, and no thread races."""

    def __init__(self, root: Path, on_change: Callable[[set[str]], None]) -> None:
        self.root = root

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


async def wait_for(pilot: Pilot, what: str, condition: Callable[[], bool]) -> None:
    """Let the app run until ``condition`` holds; fail naming ``what`` after a bound."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        failure = getattr(pilot.app, "_exception", None)
        if failure is not None:
            raise SceneError(f"the dashboard failed while waiting for {what}: {failure!r}")
        if time.monotonic() > deadline:
            raise SceneError(f"gave up after {WAIT_SECONDS:.0f} s waiting for {what}")
        await pilot.pause(0.01)


async def settle(pilot: Pilot, frames: int = SETTLE_FRAMES) -> None:
    for _ in range(frames):
        await pilot.pause(0.02)
    await pilot.wait_for_scheduled_animations()


async def review_ready(pilot: Pilot) -> None:
    """The demo has queued its five actions and waits for the human; top one selected."""
    app = pilot.app
    store = app.session.store
    await wait_for(
        pilot,
        f"{DEMO_ACTIONS} pending actions and the agent waiting for review",
        lambda: store.count == DEMO_ACTIONS and app.agent_state == "waiting for review",
    )
    top = store.peek()
    if top is None or app.stack.selected_id != top.id:
        raise SceneError("the top action is not the selected one after the demo queued its work")
    await settle(pilot)


async def select_ast_edit_on_store(pilot: Pilot) -> None:
    """Move the cursor down to the bottom action: the ast_edit on inventory/store.py."""
    app = pilot.app
    await review_ready(pilot)
    bottom = app.session.store.snapshot()[-1]
    if bottom.source_tool_name != "ast_edit":
        raise SceneError(
            f"expected the bottom action to be ast_edit, got {bottom.source_tool_name}"
        )
    await pilot.press(*["j"] * (DEMO_ACTIONS - 1))
    await wait_for(pilot, "the bottom action selected", lambda: app.stack.selected_id == bottom.id)
    await settle(pilot, SETTLE_FRAMES * 2)


async def scene_dashboard(pilot: Pilot) -> None:
    await review_ready(pilot)


async def scene_ast_edit(pilot: Pilot) -> None:
    await select_ast_edit_on_store(pilot)


async def scene_split(pilot: Pilot) -> None:
    await select_ast_edit_on_store(pilot)
    await pilot.press("s")
    await settle(pilot, SETTLE_FRAMES * 2)


async def scene_resolved(pilot: Pilot) -> None:
    app = pilot.app
    store = app.session.store
    await review_ready(pilot)
    await pilot.press("r", *"the stock files keep .txt for the importer", "escape")
    await wait_for(pilot, "focus back on the stack", lambda: app.focused is app.stack)
    await pilot.press("n")
    await wait_for(
        pilot,
        "the discard to finish",
        lambda: store.count == DEMO_ACTIONS - 1 and not app.inbox.busy,
    )
    await pilot.press("y")
    await wait_for(
        pilot,
        "the apply to finish",
        lambda: store.count == DEMO_ACTIONS - 2 and not app.inbox.busy,
    )
    text = app.activity.plain
    for word in ("DISCARDED", "APPLIED"):
        if word not in text:
            raise SceneError(f"the activity log shows no {word} block after resolving")
    await settle(pilot)


async def scene_help(pilot: Pilot) -> None:
    await review_ready(pilot)
    await pilot.press("question_mark")
    await wait_for(pilot, "the help screen", lambda: pilot.app.screen.is_modal)
    await settle(pilot)


async def scene_light(pilot: Pilot) -> None:
    # Switched before the demo queues anything: the pending stack keeps rows it already
    # drew in the old theme's colours, so a switch after the fact would mix both themes.
    pilot.app.theme = "textual-light"
    await review_ready(pilot)


SCENES: list[tuple[str, Scene]] = [
    ("dashboard", scene_dashboard),
    ("ast-edit-diff", scene_ast_edit),
    ("split-view", scene_split),
    ("resolved", scene_resolved),
    ("help", scene_help),
    ("light-theme", scene_light),
    ("compact-80x24", scene_dashboard),
    ("small-60x20", scene_dashboard),
]
# Scenes taken at another terminal size than SIZE.
SCENE_SIZES: dict[str, tuple[int, int]] = {"compact-80x24": (80, 24), "small-60x20": (60, 20)}


async def capture(name: str, scene: Scene, out_dir: Path, scratch: Path) -> Path:
    """Run the demo in a fresh workspace, play ``scene``, save ``<name>.svg``."""
    from redline.commands.demo import DEMO_PROMPT, prepare_workspace
    from redline.drivers.model.providers.scripted import ScriptedProvider
    from redline.resources import demo_plan_path, example_tools_dir
    from redline.sdk import create_agent_session
    from redline.tui.app import RedlineApp

    workspace = prepare_workspace(str(scratch / name / "inventory"))
    session = create_agent_session(
        workspace,
        ScriptedProvider(demo_plan_path(), wait_scale=0.0),
        resolver="human",
        tool_paths=[example_tools_dir() / "batch_rename_preview.py"],
        clock=lambda: FIXED_TIME,
        session_id=SESSION_ID,
        log_session=False,
    )
    try:
        app = RedlineApp(
            session,
            initial_prompt=DEMO_PROMPT,
            watcher_factory=NullWatcher,
            workspace_label=WORKSPACE_LABEL,
        )
        async with app.run_test(size=SCENE_SIZES.get(name, SIZE)) as pilot:
            await scene(pilot)
            filename = f"{name}.svg"
            app.save_screenshot(filename=filename, path=str(out_dir))
            # Leave without the "actions still pending" prompt; the copy is thrown away.
            await app.quit_now()
    finally:
        session.close()
    return out_dir / filename


def png_converter() -> tuple[Callable[[Path, Path], None] | None, str]:
    """A way to turn an SVG into a PNG, or None and why there is none."""
    rsvg = shutil.which("rsvg-convert")
    if rsvg:

        def with_rsvg(svg: Path, png: Path) -> None:
            subprocess.run([rsvg, "--output", str(png), str(svg)], check=True)

        return with_rsvg, "rsvg-convert"
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        return None, "neither rsvg-convert (librsvg) is on PATH nor cairosvg importable"

    def with_cairo(svg: Path, png: Path) -> None:
        cairosvg.svg2png(url=str(svg), write_to=str(png))

    return with_cairo, "cairosvg"


async def main_async(out_dir: Path, only: set[str]) -> list[Path]:
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="redline-shots-") as scratch:
        for name, scene in SCENES:
            if only and name not in only:
                continue
            svg = await capture(name, scene, out_dir, Path(scratch))
            print(svg)
            written.append(svg)
    return written


def main(argv: list[str] | None = None) -> int:
    import asyncio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", default="screenshots", help="folder for the pictures")
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"only these pictures (of: {', '.join(name for name, _ in SCENES)})",
    )
    args = parser.parse_args(argv)
    known = {name for name, _ in SCENES}
    unknown = sorted(set(args.names) - known)
    if unknown:
        print(f"screenshots: unknown picture {', '.join(unknown)}", file=sys.stderr)
        return 2
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        written = asyncio.run(main_async(out_dir, set(args.names)))
    except SceneError as exc:
        print(f"screenshots: {exc}", file=sys.stderr)
        return 1
    convert, how = png_converter()
    if convert is None:
        print(f"screenshots: PNGs skipped: {how}")
        return 0
    for svg in written:
        png = svg.with_suffix(".png")
        try:
            convert(svg, png)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(
                f"screenshots: {svg.name} could not be converted with {how}: {exc}", file=sys.stderr
            )
            return 1
        print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
