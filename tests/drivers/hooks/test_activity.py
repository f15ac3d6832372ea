"""The hook activity log: each hook call's life, written by the hook, read by the dashboard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.drivers.hooks.test_claude_mapping import recorded
from tests.drivers.hooks.test_gateway import answer_of, decide, pending, start_hook

from redline.commands import hook as hook_command
from redline.drivers.hooks import activity
from redline.drivers.hooks.activity import record
from redline.drivers.hooks.activity_reader import ActivityReader, parse_line
from redline.drivers.hooks.payload import HookPayload, parse_payload
from redline.review.follower import follow
from redline.workspace.queue import WorkspaceQueue


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "a.txt").write_text("hello\nworld\n", encoding="utf-8")
    return ws


@pytest.fixture
def queue(root: Path) -> Iterator[WorkspaceQueue]:
    q = WorkspaceQueue(root)
    follow(q, lambda: None)()  # the queue's folders exist before any hook runs
    yield q
    q.close()


def payload(session: str = "sess-1", tool: str = "Write", call: str = "toolu_1") -> HookPayload:
    return HookPayload(
        agent="claude",
        event="PreToolUse",
        tool_name=tool,
        tool_input={"file_path": "/ws/src/x.py", "content": "x\n"},
        session_id=session,
        cwd="/ws",
        tool_use_id=call,
    )


def log_path(root: Path) -> Path:
    return root / ".redline" / "hooks" / "activity.jsonl"


def test_entries_written_by_the_hook_read_back(tmp_path: Path) -> None:
    reader = ActivityReader(tmp_path)
    assert reader.read().entries == []  # no log yet: nothing, no error
    record(tmp_path, payload(), "asked", target=activity.target_of(payload()))
    record(tmp_path, payload(), "waiting", target="src/x.py", action="pa-3")
    record(tmp_path, payload(), "answered", answer="deny", reason="Discarded: no", action="pa-3")
    result = reader.read()
    assert result.skipped == 0
    assert [(e.event, e.target, e.action, e.answer) for e in result.entries] == [
        ("asked", "src/x.py", "", ""),
        ("waiting", "src/x.py", "pa-3", ""),
        ("answered", "", "pa-3", "deny"),
    ]
    first = result.entries[0]
    assert (first.source, first.session, first.call, first.tool) == (
        "hook:claude",
        "sess-1",
        "toolu_1",
        "Write",
    )
    assert first.pid == os.getpid()
    assert reader.read().entries == []  # read once
    assert oct(log_path(tmp_path).stat().st_mode & 0o777) == "0o600"


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    record(tmp_path, payload(), "asked")
    good = log_path(tmp_path).read_bytes()
    garbage = [
        b"not json",
        b"[1, 2]",
        b'{"v": 2, "event": "asked", "time": 1, "pid": 1, "agent": "claude"}',
        b'{"v": 1, "event": "exploded", "time": 1, "pid": 1, "agent": "claude"}',
        b'{"v": 1, "event": "asked", "time": "noon", "pid": 1, "agent": "claude"}',
        b'{"v": 1, "event": "asked", "time": 1, "pid": true, "agent": "claude"}',
        b'{"v": 1, "event": "asked", "time": 1, "pid": 1, "agent": ""}',
        b'{"v": 1, "event": "asked", "time": 1, "pid": 1, "agent": 7}',
        b'{"v": 1, "event": "answered", "time": 1, "pid": 1, "agent": "c", "answer": "maybe"}',
        b'{"v": 1, "event": "written", "time": 1, "pid": 1, "agent": "c", "as_approved": 1}',
        b"\xff\xfe not utf-8",
        b'{"v": 1, "event": "asked", "time": 1, "pid": 1, "agent": "' + b"a" * 40_000 + b'"}',
    ]
    escape = json.dumps(
        {
            "v": 1,
            "event": "asked",
            "time": 1,
            "pid": 1,
            "agent": "claude",
            "target": "x\x1b[2Jy\nz",
            "reason": "a\nb\x07",
        }
    ).encode()
    log_path(tmp_path).write_bytes(good + b"\n".join([*garbage, escape]) + b"\n" + good)
    result = ActivityReader(tmp_path).read()
    assert result.skipped == len(garbage)
    assert [e.event for e in result.entries] == ["asked", "asked", "asked"]
    odd = result.entries[1]
    assert odd.target == "x?[2Jy z"  # no terminal escapes, one line
    assert odd.reason == "a\nb?"  # lines kept in the detail text


def test_a_partial_line_waits_for_its_end(tmp_path: Path) -> None:
    record(tmp_path, payload(), "asked")
    line = log_path(tmp_path).read_bytes()
    reader = ActivityReader(tmp_path)
    reader.read()
    with open(log_path(tmp_path), "ab") as handle:
        handle.write(line[:10])
        handle.flush()
        assert reader.read().entries == []
        handle.write(line[10:])
    result = reader.read()
    assert (len(result.entries), result.skipped) == (1, 0)


def test_skip_to_end_follows_from_now(tmp_path: Path) -> None:
    record(tmp_path, payload(), "asked")
    reader = ActivityReader(tmp_path)
    reader.skip_to_end()
    record(tmp_path, payload(), "waiting", action="pa-1")
    assert [e.event for e in reader.read().entries] == ["waiting"]


WRITER = """
import sys
from pathlib import Path
from redline.drivers.hooks.activity import record
from redline.drivers.hooks.payload import HookPayload

root, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
p = HookPayload("claude", "PreToolUse", "Write", {}, name, "/ws", name)
sys.stdin.readline()  # start together
for n in range(count):
    record(root, p, "waiting", action=f"pa-{n}", reason="r" * 300)
"""


def test_concurrent_appends_from_two_processes_never_interleave(tmp_path: Path) -> None:
    count = 400
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), name, str(count)],
            stdin=subprocess.PIPE,
        )
        for name in ("one", "two")
    ]
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write(b"go\n")
        writer.stdin.close()
    for writer in writers:
        assert writer.wait(60) == 0
    result = ActivityReader(tmp_path).read()
    assert result.skipped == 0
    for name in ("one", "two"):
        mine = [e.action for e in result.entries if e.session == name]
        assert mine == [f"pa-{n}" for n in range(count)]


def test_the_log_rotates_and_the_reader_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(activity, "MAX_BYTES", 4096)
    record(tmp_path, payload(), "asked")
    reader = ActivityReader(tmp_path)
    seen = []
    for n in range(200):
        record(tmp_path, payload(), "waiting", action=f"pa-{n}")
        if n % 7 == 0:
            seen.extend(reader.read().entries)
    seen.extend(reader.read().entries)
    assert [e.action for e in seen] == ["", *(f"pa-{n}" for n in range(200))]
    assert log_path(tmp_path).stat().st_size < 4096 + 1024
    rotated = log_path(tmp_path).with_name("activity.jsonl.1")
    assert 4096 <= rotated.stat().st_size < 4096 + 1024  # one generation kept, bounded


def test_a_symlinked_log_is_never_written_through(tmp_path: Path) -> None:
    (tmp_path / ".redline" / "hooks").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("mine\n")
    log_path(tmp_path).symlink_to(outside)
    record(tmp_path, payload(), "asked")  # never raises: the log is a view
    assert outside.read_text() == "mine\n"
    with pytest.raises(OSError):
        ActivityReader(tmp_path).read()


def test_a_hook_call_leaves_its_lifecycle_in_the_log(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("pre-write-2.json", root))
    [record_] = pending(queue)
    decide(queue, record_.id, "apply")
    assert answer_of(future.result(30))["permissionDecision"] == "allow"
    (root / "a.txt").write_text("something else\n", encoding="utf-8")
    hook_command.handle("claude", recorded("post-write-2.json", root))
    entries = ActivityReader(root).read().entries
    steps = [(e.event, e.answer, e.action, e.as_approved) for e in entries]
    assert steps == [
        ("asked", "", "", None),
        ("waiting", "", record_.id, None),
        ("answered", "allow-rewritten", record_.id, None),
        ("written", "", record_.id, False),
    ]
    assert {e.target for e in entries} == {"a.txt"}
    assert "+something else" in entries[-1].diff
    session = parse_payload("claude", recorded("pre-write-2.json", root)).session_id
    assert {e.session for e in entries} == {session}


def test_a_discard_and_a_hand_over_are_in_the_log(
    root: Path, queue: WorkspaceQueue, isolated_user_config: Path
) -> None:
    future = start_hook(recorded("pre-write.json", root))
    [first] = pending(queue)
    decide(queue, first.id, "discard", "not now")
    answer_of(future.result(30))
    (isolated_user_config / "config.toml").write_text(
        "[hooks]\nwait_seconds = 0.05\n", encoding="utf-8"
    )
    hook_command.handle("claude", recorded("pre-write.json", root))
    entries = ActivityReader(root).read().entries
    answered = [(e.answer, e.reason) for e in entries if e.event == "answered"]
    assert answered[0] == ("deny", "Discarded by the reviewer: not now")
    assert answered[1][0] == "deny" and "still pending review" in answered[1][1]
    assert [e.action for e in entries if e.event == "handed_over"] == ["pa-2"]


def test_the_log_line_parser_takes_what_the_writer_writes(tmp_path: Path) -> None:
    record(tmp_path, payload(), "written", target="a.txt", as_approved=True, diff="-a\n+b")
    entry = parse_line(log_path(tmp_path).read_bytes().rstrip(b"\n"))
    assert entry is not None and entry.as_approved is True and entry.diff == "-a\n+b"
