"""URL credentials never reach what redline prints or logs (one helper, used everywhere)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.drivers.model.providers.openai_provider import OpenAIProvider
from redline.redaction import redact_url, redact_urls
from redline.review.events import ErrorEvent, EventStream
from redline.review.session_log import SessionLog


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pass@host:8080/v1", "http://***@host:8080/v1"),
        ("http://token@host/v1", "http://***@host/v1"),
        ("http://us%40er:p%3Ass@host", "http://***@host"),
        ("https://host/v1?api_key=abc&x=1", "https://host/v1?api_key=***&x=1"),
        ("http://localhost:11434/v1", "http://localhost:11434/v1"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_urls_in_free_text() -> None:
    text = "cannot reach http://a:b@127.0.0.1:9/v1?token=zz&q=1 (refused); see https://docs"
    assert redact_urls(text) == (
        "cannot reach http://***@127.0.0.1:9/v1?token=***&q=1 (refused); see https://docs"
    )


def test_provider_label_hides_credentials_but_requests_keep_them() -> None:
    provider = OpenAIProvider("m", base_url="http://someone:hunter2@127.0.0.1:9/v1")
    assert provider.label == "openai:m @ http://***@127.0.0.1:9/v1"
    assert "hunter2" not in repr(provider)
    assert provider.base_url == "http://someone:hunter2@127.0.0.1:9/v1"  # used for the calls


def test_session_log_redacts_urls_in_header_and_events(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = SessionLog(path, {"model": "openai:m @ http://someone:hunter2@host/v1"})
    stream = EventStream("s")
    stream.subscribe(log.write_event)
    stream.emit(ErrorEvent(message="cannot reach http://someone:hunter2@host/v1"))
    log.close()
    text = path.read_text(encoding="utf-8")
    assert "hunter2" not in text and "someone" not in text
    header, event = (json.loads(line) for line in text.splitlines())
    assert header["model"] == "openai:m @ http://***@host/v1"
    assert event["message"] == "cannot reach http://***@host/v1"
