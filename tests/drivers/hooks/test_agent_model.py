"""The model behind a hook call (issue 48), from recorded payloads and a recorded Claude Code
transcript (``tests/fixtures/hooks/claude/transcript.jsonl``: the real Claude Code 2.1.332
against the scripted Anthropic server; its Edit is call ``toolu_scripted_2_0``)."""

from __future__ import annotations

import json
from pathlib import Path

from redline.drivers.hooks.agent_model import model_of
from redline.drivers.hooks.payload import parse_payload

FIXTURES = Path(__file__).parents[2] / "fixtures" / "hooks"
TRANSCRIPT = FIXTURES / "claude" / "transcript.jsonl"


def payload(agent: str, name: str, root: Path, **fields: object) -> bytes:
    data = json.loads((FIXTURES / agent / name).read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    data.update(fields)
    return json.dumps(data).encode()


def test_claude_code_model_comes_from_the_transcript_entry_of_the_call(tmp_path: Path) -> None:
    raw = payload(
        "claude",
        "post-edit.json",
        tmp_path,
        transcript_path=str(TRANSCRIPT),
        tool_use_id="toolu_scripted_2_0",
    )
    assert model_of(parse_payload("claude", raw)) == ("claude-opus-5-5", "")


def test_claude_code_call_not_in_the_transcript_says_why(tmp_path: Path) -> None:
    raw = payload("claude", "post-edit.json", tmp_path, transcript_path=str(TRANSCRIPT))
    model, why = model_of(parse_payload("claude", raw))
    assert model is None
    assert why == "claude-code's transcript does not name the model of call toolu_scripted_3_0"
    gone = payload("claude", "post-edit.json", tmp_path, transcript_path=str(tmp_path / "no"))
    assert model_of(parse_payload("claude", gone))[0] is None


def test_codex_reports_its_model_in_every_payload(tmp_path: Path) -> None:
    raw = payload("codex", "PostToolUse.apply_patch.update.json", tmp_path)
    assert model_of(parse_payload("codex", raw)) == ("gpt-5.5", "")


def test_gemini_cli_model_comes_from_its_chat_recording(tmp_path: Path) -> None:
    """``gemini/transcript.jsonl`` and ``AfterTool.write_file.transcript.json``: the real
    Gemini CLI's chat recording and AfterTool payload of one run, recorded by
    ``REDLINE_RECORD_TRANSCRIPT=PATH pytest -m e2e tests/e2e/test_gemini_hooks.py -k
    chat_recording``; the call is matched by its tool and arguments (Gemini sends no id)."""
    recording = str(FIXTURES / "gemini" / "transcript.jsonl")
    name = "AfterTool.write_file.transcript.json"
    raw = payload("gemini", name, tmp_path, transcript_path=recording)
    assert model_of(parse_payload("gemini", raw)) == ("gemini-2.5-flash", "")
    other = json.loads(raw)
    other["tool_input"] = {**other["tool_input"], "content": "something else\n"}
    model, why = model_of(parse_payload("gemini", json.dumps(other).encode()))
    assert model is None
    assert why == "gemini-cli's transcript does not name the model of this write_file"


def test_gemini_cli_without_a_transcript_names_no_model(tmp_path: Path) -> None:
    raw = payload("gemini", "AfterTool.write_file.json", tmp_path, transcript_path=None)
    assert model_of(parse_payload("gemini", raw)) == (None, "gemini-cli did not report its model")
