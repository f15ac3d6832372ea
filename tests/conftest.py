"""Shared fixtures: every test gets its own user config directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.providers.fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def isolated_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    config_dir = tmp_path_factory.mktemp("redline-config")
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(config_dir))
    monkeypatch.delenv("REDLINE_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield config_dir


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 (see tests/providers/fake_openai.py)."""
    with FakeOpenAI() as fake:
        yield fake
