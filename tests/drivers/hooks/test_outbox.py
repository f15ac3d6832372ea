"""Issue 46: a decision made after the hook handed its action over reaches the agent at its
next hook call of the session, exactly once — with the payloads recorded from the real
agents (tests/fixtures/hooks/<agent>/, prompt-time ones from tests/e2e/test_prompt_hooks.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from redline.review.queued import resolve_queued
from redline.workspace import outbox
from redline.workspace.queue import WorkspaceQueue

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hooks"
#: Where each agent's payloads were recorded (their paths are moved into the test's folder).
RECORDED_ROOTS = {
    "claude": (
        "/tmp/rec/proj",
        "/tmp/pytest-of-root/pytest-446/test_claude_code_hears_additio0/ws",
    ),
    "codex": (
        "/tmp/redline-e2e/ws",
        "/tmp/pytest-of-root/pytest-446/test_codex_hears_additional_co0/ws",
    ),
    "gemini": (
        "/tmp/redline-e2e/ws",
        "/tmp/pytest-of-root/pytest-446/test_gemini_cli_hears_addition0/ws",
    ),
}
#: The prompt-time payload of each agent, and where else Claude Code hears it.
PROMPT = {
    "claude": "user-prompt-submit.json",
    "codex": "UserPromptSubmit.json",
    "gemini": "BeforeAgent.json",
}
SESSION = "session-46"


def payload(agent: str, name: str, root: Path, **tool_input: Any) -> bytes:
    text = (FIXTURES / agent / name).read_text(encoding="utf-8")
    for recorded in RECORDED_ROOTS[agent]:
        text = text.replace(recorded, str(root))
    data = json.loads(text)
    data["cwd"] = str(root)
    data["session_id"] = SESSION
    if tool_input:
        data["tool_input"].update(tool_input)
    return json.dumps(data).encode()


def hook(agent: str, raw: bytes, root: Path) -> subprocess.CompletedProcess[bytes]:
    """One real ``redline hook AGENT`` process, as the agent runs it."""
    return subprocess.run(
        [sys.executable, "-m", "redline", "hook", agent],
        input=raw,
        cwd=root,
        capture_output=True,
        timeout=120,
        check=False,
    )


def context_of(done: subprocess.CompletedProcess[bytes]) -> str | None:
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return None
    output = json.loads(done.stdout).get("hookSpecificOutput", {})
    return output.get("additionalContext")


@pytest.fixture
def root(tmp_path: Path, isolated_user_config: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "hello.txt").write_text("hello\n", encoding="utf-8")
    (ws / "a.txt").write_text("hello\nworld\n", encoding="utf-8")
    # No decision in time: every hook call below hands its action over at once.
    (isolated_user_config / "config.toml").write_text(
        '[hooks]\nwait_seconds = 0.05\n[notify]\ndesktop = "off"\n', encoding="utf-8"
    )
    return ws


def handed_over(agent: str, name: str, root: Path, **tool_input: Any) -> str:
    """Run the pre-tool hook of ``name``: it hands its action over; the action's id."""
    done = hook(agent, payload(agent, name, root, **tool_input), root)
    assert done.returncode == 0, done.stderr
    assert b"still pending review" in done.stdout, done.stdout
    with WorkspaceQueue(root) as queue:
        [record] = queue.list()
        assert record.applied_by == "preview"  # handed over
        return record.id


def decide(root: Path, action_id: str, verb: str, reason: str = "", **kw: Any) -> None:
    with WorkspaceQueue(root) as queue:
        result = asyncio.run(resolve_queued(queue, action_id, verb, reason, **kw))
    assert not result.is_error, result.text


def test_claude_code_hears_an_apply_at_its_next_prompt_exactly_once(root: Path) -> None:
    action = handed_over(
        "claude", "pre-write.json", root, file_path=str(root / "a.py"), content="x = 1\n"
    )
    decide(root, action, "apply")
    assert (root / "a.py").read_text() == "x = 1\n"
    prompt = payload("claude", PROMPT["claude"], root)
    assert context_of(hook("claude", prompt, root)) == (
        f"{action} (Write a.py), which you proposed earlier, was applied — re-read a.py "
        "before editing it"
    )
    assert context_of(hook("claude", prompt, root)) is None  # told once


def test_claude_code_hears_it_at_its_next_tool_call_too(root: Path) -> None:
    action = handed_over(
        "claude", "pre-write.json", root, file_path=str(root / "a.py"), content="x = 1\n"
    )
    decide(root, action, "discard", "use b.py instead")
    # A Read passes through redline; the answer still carries the news.
    done = hook("claude", payload("claude", "pre-read-context.json", root), root)
    assert context_of(done) == (
        f"{action} (Write a.py), which you proposed earlier, was discarded: use b.py instead"
    )
    # A reviewed call's answer (here handed over again) carries it next to its decision.
    second = handed_over("claude", "pre-edit.json", root)
    decide(root, second, "apply")
    done = hook(
        "claude",
        payload("claude", "pre-write.json", root, file_path=str(root / "c.py"), content="c\n"),
        root,
    )
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"  # its own action, handed over
    assert output["additionalContext"] == (
        f"{second} (Edit a.txt), which you proposed earlier, was applied — re-read a.txt "
        "before editing it"
    )


def test_codex_hears_a_discard_with_its_reason_at_its_next_prompt(root: Path) -> None:
    action = handed_over("codex", "PreToolUse.apply_patch.update.json", root)
    decide(root, action, "discard", "keep the greeting short")
    prompt = payload("codex", PROMPT["codex"], root)
    text = context_of(hook("codex", prompt, root))
    assert text == (
        f"{action} (apply_patch hello.txt), which you proposed earlier, was discarded: "
        "keep the greeting short"
    )
    assert context_of(hook("codex", prompt, root)) is None


def test_a_late_discard_carries_the_reviewers_comments(root: Path) -> None:
    """Issue 47 through issue 46's outbox: comments on a handed-over action reach the agent
    with the late discard, one per line as PATH:LINE: TEXT after the reason."""
    from redline.review.comments import add_comment, parse_target

    action = handed_over(
        "claude", "pre-write.json", root, file_path=str(root / "a.py"), content="x = 1\n"
    )
    with WorkspaceQueue(root) as queue:
        add_comment(queue, action, parse_target("a.py:1", ["a.py"]), "name it count", author="p")
    decide(root, action, "discard", "not yet")
    prompt = payload("claude", PROMPT["claude"], root)
    assert context_of(hook("claude", prompt, root)) == (
        f"{action} (Write a.py), which you proposed earlier, was discarded: not yet\n"
        "a.py:1: name it count"
    )


def test_gemini_cli_hears_an_apply_and_its_undo_before_the_agent(root: Path) -> None:
    action = handed_over("gemini", "BeforeTool.write_file.json", root)
    decide(root, action, "apply")
    from redline.review.git_undo import undo

    undo(root, None)
    assert (root / "hello.txt").read_text() == "hello\n"
    prompt = payload("gemini", PROMPT["gemini"], root)
    text = context_of(hook("gemini", prompt, root))
    assert text == (
        f"{action} (write_file hello.txt), which you proposed earlier, was applied — re-read "
        f"hello.txt before editing it\n{action} (write_file hello.txt), which you proposed "
        "earlier, was applied, then undone — re-read hello.txt before editing it"
    )
    assert context_of(hook("gemini", prompt, root)) is None


def test_an_apply_in_part_names_the_rest(root: Path) -> None:
    lines = "".join(f"line {n}\n" for n in range(1, 21))
    (root / "a.txt").write_text(lines, encoding="utf-8")
    changed = lines.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n")
    action = handed_over(
        "claude", "pre-write.json", root, file_path=str(root / "a.txt"), content=changed
    )
    decide(root, action, "apply", only=["a.txt#1"])
    with WorkspaceQueue(root) as queue:
        [rest] = queue.list()
    text = context_of(hook("claude", payload("claude", PROMPT["claude"], root), root))
    assert text == (
        f"{action} (Write a.txt), which you proposed earlier, was applied in part (1 of 2 "
        f"hunks) — re-read a.txt before editing it; {rest.id} holds the rest, still pending "
        "review"
    )


def test_a_decision_the_hook_waited_for_is_not_told_again(root: Path) -> None:
    """Only what the agent did not hear from its own hook goes to the outbox."""
    from redline.review.late import decided
    from redline.review.resolve import ResolveOutcome
    from redline.workspace.queue import ActionDraft, Source

    with WorkspaceQueue(root) as queue:
        record = queue.push(
            ActionDraft(
                label="Write a.py",
                source=Source.current("hook", "claude", SESSION),
                source_tool_name="hook:Write",
                applied_by="owner",  # its hook (this process) still waits
            )
        )
        decided(queue, record, "apply", ResolveOutcome("applied", "", verb="apply"))
    assert not outbox.take("claude", SESSION)


# Two hook processes of one session racing for one outcome: run together, one tells.
_RACE = """
import io, os, sys, threading
from redline.commands.hook import run_agent
raw = sys.stdin.buffer.read()
sys.stdin = io.TextIOWrapper(io.BytesIO(raw))
while not os.path.exists(sys.argv[2]):  # the start line: all go at once
    threading.Event().wait(0.001)
sys.exit(run_agent(sys.argv[1], exiting=True))
"""


def test_two_hook_processes_of_one_session_never_both_tell_it(root: Path, tmp_path: Path) -> None:
    outbox.post("claude", SESSION, outbox.Late("pa-5", "Write a.py", "applied", files=("a.py",)))
    prompt = payload("claude", PROMPT["claude"], root)
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", _RACE, "claude", str(go)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
        )
        for _ in range(4)
    ]
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write(prompt)
        racer.stdin.close()
    go.touch()
    outputs = [
        (racer.stdout.read(), racer.stderr.read())
        for racer in racers
        if racer.stdout and racer.stderr
    ]
    for racer in racers:
        racer.wait(timeout=120)
    told = [out for out, _err in outputs if b"pa-5 (Write a.py)" in out]
    assert len(told) == 1, outputs
    assert all(racer.returncode == 0 for racer in racers)
    assert not outbox.take("claude", SESSION)


def test_a_claim_whose_process_died_is_taken_over(root: Path) -> None:
    path = outbox.post("claude", SESSION, outbox.Late("pa-2", "Write a.py", "discarded"))
    assert path is not None
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(gone.stdout)
    os.rename(path, path.with_name(f".claimed.{dead}.1.{path.name}"))
    taken = outbox.take("claude", SESSION)
    assert [late.action_id for _n, late in taken.entries] == ["pa-2"]
    taken.give_back()  # printing failed: it waits for the next call
    again = outbox.take("claude", SESSION)
    assert (
        again.text
        == "pa-2 (Write a.py), which you proposed earlier, was discarded: no reason given"
    )
    again.done()
    assert not outbox.take("claude", SESSION)


def test_entries_older_than_seven_days_are_dropped(root: Path) -> None:
    old = outbox.Late("pa-1", "Write a.py", "applied", time=time.time() - outbox.KEEP_SECONDS - 1)
    outbox.post("claude", SESSION, old)
    outbox.post("claude", SESSION, outbox.Late("pa-3", "Write b.py", "applied", files=("b.py",)))
    taken = outbox.take("claude", SESSION)
    assert [late.action_id for _n, late in taken.entries] == ["pa-3"]
    taken.done()
    assert os.listdir(outbox.session_folder("claude", SESSION)) == []


def test_a_refused_prompt_time_payload_never_blocks_the_prompt(root: Path) -> None:
    raw = json.loads(payload("claude", PROMPT["claude"], root))
    del raw["session_id"]
    done = hook("claude", json.dumps(raw).encode(), root)
    assert (done.returncode, done.stdout) == (1, b"")  # a non-blocking error
    assert b"session_id" in done.stderr
