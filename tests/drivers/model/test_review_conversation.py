"""Issue 47 through the model runtime: comments on a queued action reach the model with
the discard, and the model's next proposal in the same session is revision 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.model.providers.fake_openai import FakeOpenAI

from redline.cli import main


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")


def plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"name": "test", "steps": steps}), encoding="utf-8")
    return f"scripted:{path}"


def pending(capsys: pytest.CaptureFixture[str], ws: Path, *args: str) -> tuple[int, str]:
    code = main(["pending", "-C", str(ws), *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


FIRST = "def area(w, h):\n    return w * h\n"
SECOND = "def area(width, height):\n    return width * height\n"


def test_comment_discard_then_the_next_proposal_is_revision_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_openai: FakeOpenAI
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write = {"call": [{"tool": "write", "args": {"path": "geo.py", "content": FIRST}}]}
    model = plan(tmp_path, [write, {"say": "waiting"}])
    code = main(["exec", "-C", str(ws), "--model", model, "--resolver", "human", "--prompt", "x"])
    assert code == 3
    capsys.readouterr()
    assert pending(capsys, ws, "comment", "pa-1", "geo.py:1", "name them width, height")[0] == 0
    assert pending(capsys, ws, "comment", "pa-1", "geo.py:2", "keep\nthis line")[0] == 0
    code, out = pending(capsys, ws, "discard", "pa-1", "--reason", "clearer names")
    assert code == 0, out
    assert "geo.py:1: name them width, height" in out  # the resolver's own text says it too

    fake_openai.enqueue_tool_calls(
        [("call_1", "write", {"path": "geo.py", "content": SECOND})], text=""
    )
    fake_openai.enqueue_text("revised")
    code = main(
        [
            "exec",
            "-C",
            str(ws),
            "--resume",
            "--resolver",
            "human",
            "--model",
            "openai:fake-model",
            "--base-url",
            fake_openai.base_url,
        ]
    )
    assert code == 3
    capsys.readouterr()
    told = str(fake_openai.requests[0]["messages"])
    assert "discarded pa-1" in told and "Reason: clearer names" in told
    assert "geo.py:1: name them width, height" in told
    assert "geo.py:2: keep\\n    this line" in told

    code, out = pending(capsys, ws, "show", "pa-2", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["revision"]["number"] == 2 and data["revision"]["of"] == "pa-1"
    assert data["revision"]["base_changed"] is False
    interdiff = data["revision"]["interdiff"]
    assert interdiff.startswith("--- pa-1/geo.py\n+++ pa-2/geo.py\n")
    assert "-def area(w, h):" in interdiff and "+def area(width, height):" in interdiff
    carried = [(c["id"], c["line"], c["outdated"]) for c in data["comments"]]
    assert carried == [("c-1", 1, True), ("c-2", 2, True)]
