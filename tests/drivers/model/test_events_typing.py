"""mypy checks event producers against consumers: a wrong field name is a type error."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[2]

WRONG = """
from redline.review.events import Event, EventStream, PendingPushed, ToolEnd


def produce(stream: EventStream) -> None:
    stream.emit(PendingPushed(action_id="pa-1", lable="x", source_tool_name="e", preview=None))


def consume(event: Event) -> bool:
    match event:
        case ToolEnd():
            return bool(event.resutl)
    return False
"""


def test_a_misspelt_event_field_fails_mypy(tmp_path: Path) -> None:
    source = tmp_path / "wrong_keys.py"
    source.write_text(WRONG, encoding="utf-8")
    # The project's cache: CI has just type-checked src/redline, so this stays quick.
    out, _err, status = mypy_api.run(
        ["--strict", "--cache-dir", str(ROOT / ".mypy_cache"), str(source)]
    )
    assert status == 1, out
    assert 'Unexpected keyword argument "lable" for "PendingPushed"' in out
    assert '"ToolEnd" has no attribute "resutl"' in out
