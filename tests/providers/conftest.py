"""Fixtures for provider tests; ``fake_openai`` is meant for reuse by session-level tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running scripted OpenAI-compatible server on 127.0.0.1 (see ``FakeOpenAI``).

    ``.base_url`` (ends in ``/v1``), ``.requests`` (parsed JSON bodies in arrival order),
    ``.request_headers``, ``.enqueue_text(text)``, ``.enqueue_tool_calls([(id, name,
    args), ...], text="")``, ``.enqueue_error(status, message)``, ``.enqueue_chunks(...)``,
    ``.enqueue_stall(text)``, ``.client_gone`` / ``.disconnects``. Stopped after the test.
    """
    with FakeOpenAI() as fake:
        yield fake
