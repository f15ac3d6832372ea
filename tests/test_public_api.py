"""The SDK's public names: importable from ``redline`` itself, lazily."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

import redline
from redline.review import events


@pytest.mark.parametrize("name", redline.__all__)
def test_every_public_name_resolves(name: str) -> None:
    value = getattr(redline, name)
    if name == "__version__":
        assert isinstance(value, str)
        return
    module = importlib.import_module(redline._EXPORTS[name])
    assert value is getattr(module, name)


def test_all_and_the_export_table_agree() -> None:
    assert len(set(redline.__all__)) == len(redline.__all__)
    assert set(redline.__all__) == {*redline._EXPORTS, "__version__"}
    assert set(redline._EXPORTS) <= set(dir(redline))


def test_every_event_class_is_exported() -> None:
    classes = {
        name
        for name in events.__all__
        if inspect.isclass(getattr(events, name))
        and issubclass(getattr(events, name), events.Event)
    }
    assert {"Event", "PendingPushed", "PendingResolved", "AgentEnd", "UnknownEvent"} <= classes
    assert classes <= set(redline.__all__)
    assert {"EventStream", "ResolveOutcome", "EditOutcome"} <= set(redline.__all__)


def test_from_redline_import_works() -> None:
    from redline import AgentEnd, PendingResolved, ResolveOutcome, create_agent_session

    assert PendingResolved.TYPE == "pending_resolved"
    assert AgentEnd.TYPE == "agent_end"
    assert ResolveOutcome.__module__ == "redline.review.resolve"
    assert callable(create_agent_session)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'agent'"):
        redline.agent  # noqa: B018


def test_import_redline_imports_nothing_else() -> None:
    code = "import sys, redline; print(sorted(m for m in sys.modules if m.startswith('redline.')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out == "[]\n"
