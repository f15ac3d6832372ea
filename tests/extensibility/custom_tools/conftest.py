"""Helpers for writing throwaway plugin files."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from redline.extensibility import isolation

PluginWriter = Callable[..., Path]

ECHO_PLUGIN = """
from pydantic import BaseModel


class Params(BaseModel):
    text: str


class Echo:
    name = "{name}"
    label = "Echo"
    description = "{description}"
    parameters = Params

    def execute(self, tool_call_id, params):
        return "{prefix}" + params.text


def factory(api):
    return Echo()
"""


def echo_plugin(name: str, prefix: str = "echo:", description: str = "Echo the text") -> str:
    return ECHO_PLUGIN.format(name=name, prefix=prefix, description=description)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def write_plugin() -> PluginWriter:
    def write(folder: Path, filename: str, source: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / filename
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return write


@pytest.fixture(autouse=True, scope="session")
def _no_exit_watchdog_in_the_test_runner() -> None:
    # These tests abandon plugin threads on purpose; they must not arm the watchdog that
    # would end pytest itself shortly after it starts to exit.
    isolation.disable_exit_watchdog()
