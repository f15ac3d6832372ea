"""Shared fixtures: every test gets its own user config and state directories; the stress
switch."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.drivers.model.providers.fake_openai import FakeOpenAI


def pytest_configure(config: pytest.Config) -> None:
    """Let the Ctrl-C tests' children receive SIGINT even when the suite runs in the background.

    A shell starts background jobs (``cmd &``, ``nohup``) with SIGINT ignored, and an ignored
    signal stays ignored across ``exec``: every ``redline`` the tests start would then ignore
    the SIGINT they send. A handler (unlike SIG_IGN) is reset to the default on ``exec``.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    config_dir = tmp_path_factory.mktemp("redline-config")
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(config_dir))
    # The state key lives in $XDG_STATE_HOME/redline (never in the real home during tests).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("redline-state")))
    monkeypatch.delenv("REDLINE_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield config_dir


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 (see tests/drivers/model/providers/fake_openai.py)."""
    with FakeOpenAI() as fake:
        yield fake


STRESS_ENV = "REDLINE_STRESS"


def stress_requested(config: pytest.Config) -> bool:
    """Full fault-injection counts under ``-m stress`` (or ``REDLINE_STRESS=1``)."""
    if os.environ.get(STRESS_ENV, "") not in ("", "0"):
        return True
    expression = str(config.getoption("markexpr", "") or "")
    return "stress" in expression.replace("not stress", "")


@pytest.fixture
def stress(request: pytest.FixtureRequest) -> bool:
    """For ``@pytest.mark.stress`` tests: True means run the full count.

    A plain ``uv run pytest`` runs every stress test with a seeded handful of cases;
    ``uv run pytest -m stress`` runs only the stress tests, each in full.
    """
    return stress_requested(request.config)
