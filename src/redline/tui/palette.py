"""Warning and accent text colours that stay readable on the dashboard in every theme.

Textual's ``$text-warning``, ``$text-accent`` and ``$text-success`` reach only about 3:1
on a light ``$surface`` or ``$panel``. The app adds ``$redline-text-*`` variables for
them (and for errors): the same colours, moved toward the foreground just far enough
to reach 4.5:1 (WCAG AA) on both. Dark themes, which already pass, keep them unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

from textual.color import Color, ColorParseError

MIN_CONTRAST = 4.5
READABLE = {
    "redline-text-warning": "text-warning",
    "redline-text-accent": "text-accent",
    "redline-text-success": "text-success",
    "redline-text-error": "text-error",
}
BACKGROUNDS = ("surface", "panel")
STEPS = 20


def _luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast_ratio(first: Color, second: Color) -> float:
    """The WCAG contrast ratio of two opaque colours (1 to 21)."""
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _solid(value: str) -> Color | None:
    try:
        color = Color.parse(value)
    except ColorParseError:
        return None
    # ANSI and translucent colours depend on the terminal: nothing to measure.
    return color if color.ansi is None and color.a == 1 else None


def _readable(variables: Mapping[str, str], source: str) -> str:
    value = variables.get(source, "")
    color = _solid(value)
    foreground = _solid(variables.get("foreground", ""))
    backgrounds = [_solid(variables.get(name, "")) for name in BACKGROUNDS]
    if color is None or foreground is None or None in backgrounds:
        return value
    solid = [background for background in backgrounds if background is not None]
    for step in range(STEPS + 1):
        candidate = color.blend(foreground, step / STEPS)
        if min(contrast_ratio(candidate, background) for background in solid) >= MIN_CONTRAST:
            return candidate.hex
    return foreground.hex


def readable_variables(variables: Mapping[str, str]) -> dict[str, str]:
    """The ``redline-text-*`` CSS variables for a theme's generated ``variables``."""
    return {name: _readable(variables, source) for name, source in READABLE.items()}
