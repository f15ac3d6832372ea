"""Where bundled files live, from an editable install and from a built wheel alike.

A wheel carries ``styles/`` and ``examples/tools/`` under ``redline/_bundled/`` (see
pyproject's force-include); an editable install finds them at the repository's top.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_BUNDLED = _PACKAGE / "_bundled"
_REPO = _PACKAGE.parent.parent


def _locate(relative: str) -> Path:
    for base in (_BUNDLED, _REPO):
        candidate = base / relative
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"redline's bundled {relative!r} is missing from this installation")


def styles_dir() -> Path:
    return _locate("styles")


def example_tools_dir() -> Path:
    return _locate("examples/tools")


def demo_dir() -> Path:
    """The demo's sample project and plan ship inside the package itself."""
    return _PACKAGE / "demo"


def demo_project_dir() -> Path:
    return demo_dir() / "project"


def demo_plan_path() -> Path:
    return demo_dir() / "plan.json"
