"""What every dashboard app shares around the inbox screen: the style sheets, the readable
colours and the size classes (styles/layout.tcss reshapes the panels by them)."""

from __future__ import annotations

from pathlib import PurePath

from textual.app import App

STYLE_FILES = (
    "app.tcss",
    "stack.tcss",
    "preview.tcss",
    "activity.tcss",
    "modals.tcss",
    "layout.tcss",
)
NARROW_BELOW = 100
TINY_BELOW = 22
SHORT_BELOW = 32


def css_paths() -> list[str | PurePath]:
    from redline.resources import styles_dir

    base = styles_dir()
    return [base / name for name in STYLE_FILES]


def size_classes(app: App[object] | App[int], width: int, height: int) -> None:
    """One class per axis on the app."""
    tall = "-tiny" if height < TINY_BELOW else "-short" if height < SHORT_BELOW else "-tall"
    app.update_classes(
        {
            "-narrow": width < NARROW_BELOW,
            "-wide": width >= NARROW_BELOW,
            "-tiny": tall == "-tiny",
            "-short": tall == "-short",
            "-tall": tall == "-tall",
        }
    )
