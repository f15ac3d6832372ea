"""``redline hook gemini`` in-process: write_file / replace → one action, the answers Gemini
CLI obeys (deny with a reason, the whole tool_input replaced), AfterTool and undo."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_gateway import decide, pending

from redline.commands import hook as hook_command
from redline.drivers.hooks.answers import Rendered
from redline.drivers.hooks.mapping import MappingError, map_call
from redline.drivers.hooks.payload import parse_payload
from redline.review.follower import follow
from redline.workspace.queue import WorkspaceQueue

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks" / "gemini"
RECORDED_ROOT = "/tmp/redline-e2e/ws"


def recorded(name: str, root: Path, **tool_input: Any) -> bytes:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    for key, value in list(data["tool_input"].items()):
        if isinstance(value, str) and value.startswith(RECORDED_ROOT):
            data["tool_input"][key] = str(root) + value[len(RECORDED_ROOT) :]
    data["tool_input"].update(tool_input)
    return json.dumps(data).encode()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "hello.txt").write_text("hello\n", encoding="utf-8")
    return ws


@pytest.fixture
def queue(root: Path) -> Iterator[WorkspaceQueue]:
    q = WorkspaceQueue(root)
    follow(q, lambda: None)()
    yield q
    q.close()


def start_hook(raw: bytes) -> Future[Rendered]:
    done: Future[Rendered] = Future()

    def run() -> None:
        try:
            done.set_result(hook_command.handle("gemini", raw))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done


def output_of(rendered: Rendered) -> dict[str, Any]:
    assert rendered.code == 0, rendered.stderr
    return dict(json.loads(rendered.stdout))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("BeforeTool.write_file.json", ("hello.txt", "hello\n", "hello world\n")),
        ("BeforeTool.write_file.new_file.json", None),
        ("BeforeTool.replace.json", ("hello.txt", "hello\n", "hello world\n")),
    ],
)
def test_recorded_calls_map_to_the_whole_file(
    root: Path, name: str, expected: tuple[str, str, str] | None
) -> None:
    payload = parse_payload("gemini", recorded(name, root))
    assert payload.is_pre and payload.tool_use_id == ""
    change = map_call(root, payload)
    assert change is not None
    if expected is not None:
        assert (change.rel, change.old_text, change.new_text) == expected
    else:
        assert change.old_text is None


def test_replace_that_cannot_work_is_refused_in_geminis_words(root: Path) -> None:
    payload = parse_payload("gemini", recorded("BeforeTool.replace.not_found.json", root))
    with pytest.raises(MappingError, match="Could not find an exact match for 'old_string'"):
        map_call(root, payload)
    (root / "hello.txt").write_text("hello hello\n", encoding="utf-8")
    payload = parse_payload("gemini", recorded("BeforeTool.replace.json", root))
    with pytest.raises(MappingError, match="expected 1 occurrence but found 2"):
        map_call(root, payload)


def test_discard_denies_with_the_reason(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("BeforeTool.write_file.json", root))
    [record] = pending(queue)
    assert record.source.canonical == "hook:gemini"
    assert record.source_tool_name == "hook:write_file"
    decide(queue, record.id, "discard", "wrong greeting")
    assert output_of(future.result(30)) == {
        "decision": "deny",
        "reason": "Discarded by the reviewer: wrong greeting",
    }


def test_apply_allows_and_after_tool_records_the_write_for_undo(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("BeforeTool.replace.json", root))
    [record] = pending(queue)
    assert not decide(queue, record.id, "apply").is_error
    output = output_of(future.result(30))
    # the reviewer's text for the whole file: old_string = the file, new_string = approved
    assert output["hookSpecificOutput"]["tool_input"]["old_string"] == "hello\n"
    assert output["hookSpecificOutput"]["tool_input"]["new_string"] == "hello world\n"
    assert output["hookSpecificOutput"]["tool_input"]["instruction"] == "greet the world"
    (root / "hello.txt").write_text("hello world\n", encoding="utf-8")  # Gemini writes it
    after = hook_command.handle("gemini", recorded("AfterTool.replace.rewritten.json", root))
    assert after == Rendered("", "", 0)
    from redline.workspace.journal import undo_last

    undo_last(root)
    assert (root / "hello.txt").read_text(encoding="utf-8") == "hello\n"


def test_a_persons_edit_replaces_the_whole_write_file_input(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("BeforeTool.write_file.json", root))
    [record] = pending(queue)
    from redline.workspace.preview import FileModify, Preview
    from redline.workspace.queue import ActionDraft

    preview = queue.preview(record)
    assert preview is not None
    [change] = preview.changes
    assert isinstance(change, FileModify)
    with queue.claim(record.id) as claim:
        new = claim.replace(
            ActionDraft(
                label=record.label,
                source=record.source,
                source_tool_name=record.source_tool_name,
                preview=Preview(
                    [FileModify("hello.txt", change.old_sha256, "hello\n", "hello, reviewed\n")]
                ),
                details=record.details,
                applied_by="owner",
            ),
            resolved_by="person",
        )
    assert not decide(queue, new.id, "apply").is_error
    tool_input = output_of(future.result(30))["hookSpecificOutput"]["tool_input"]
    assert tool_input == {"file_path": str(root / "hello.txt"), "content": "hello, reviewed\n"}


def test_a_malformed_gemini_payload_blocks_with_nothing_on_stdout() -> None:
    rendered = hook_command.handle("gemini", b'{"hook_event_name": "BeforeTool", "tool_name": 3}')
    assert (rendered.code, rendered.stdout) == (2, "")
    assert "`tool_name` is a int, not a string" in rendered.stderr


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_an_unusable_queue_blocks_with_the_cause_and_nothing_on_stdout(
    root: Path,
    agent: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Fail closed for the other agents too: exit 2, the cause on stderr (Codex and Gemini
    CLI allow a silent exit 2), and no JSON on stdout (Gemini CLI would obey it first)."""
    import argparse
    import io
    import sys

    from tests.drivers.hooks import test_codex_mapping

    (root / ".redline").write_text("not a folder", encoding="utf-8")
    raw = (
        test_codex_mapping.recorded("PreToolUse.apply_patch.update.json", root)
        if agent == "codex"
        else recorded("BeforeTool.write_file.json", root)
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    code = hook_command.run(argparse.Namespace(agent=agent))
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("redline: blocked: ") and len(err.strip()) > len("redline: blocked:")
    assert (root / "hello.txt").read_text(encoding="utf-8") == "hello\n"
