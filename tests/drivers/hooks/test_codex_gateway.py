"""``redline hook codex`` in-process: one action per file of a patch, the combined answer,
the rewritten patch, the post-tool note and undo."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from tests.drivers.hooks.test_codex_mapping import recorded
from tests.drivers.hooks.test_gateway import decide, pending

from redline.commands import hook as hook_command
from redline.drivers.hooks.answers import Rendered
from redline.drivers.hooks.codex_patch import apply_chunks, parse
from redline.review.follower import follow
from redline.review.queued import resolve_queued
from redline.workspace.queue import WorkspaceQueue


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "hello.txt").write_text("hello\n", encoding="utf-8")
    (ws / "gone.txt").write_text("bye\n", encoding="utf-8")
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
            done.set_result(hook_command.handle("codex", raw))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done


def answer_of(rendered: Rendered) -> dict[str, Any]:
    assert rendered.code == 0, rendered.stderr
    output = json.loads(rendered.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    return dict(output)


def apply_as_codex(root: Path, patch: str) -> None:
    """What Codex does with an allowed patch (the reader is tested against Codex's rules)."""
    for section in parse(patch):
        target = root / section.path
        if section.op == "add":
            target.write_text(section.contents, encoding="utf-8")
        elif section.op == "delete":
            target.unlink()
        else:
            text = apply_chunks(target.read_text(encoding="utf-8"), section.chunks, section.path)
            (root / (section.move_to or section.path)).write_text(text, encoding="utf-8")
            if section.move_to:
                target.unlink()


def post(root: Path, patch: str, pre: str = "PreToolUse.apply_patch.update.json") -> Rendered:
    """The PostToolUse call that follows ``pre`` (same session and tool-use id)."""
    data = json.loads(recorded("PostToolUse.apply_patch.update.json", root))
    call = json.loads(recorded(pre, root))
    data["session_id"], data["tool_use_id"] = call["session_id"], call["tool_use_id"]
    data["tool_input"]["command"] = patch
    return hook_command.handle("codex", json.dumps(data).encode())


def test_apply_allows_the_patch_as_proposed_and_undo_reverts(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("PreToolUse.apply_patch.update.json", root))
    [record] = pending(queue)
    assert record.source.canonical == "hook:codex"
    assert record.source_tool_name == "hook:apply_patch"
    assert record.label == "apply_patch hello.txt"
    assert not decide(queue, record.id, "apply").is_error
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "allow"
    assert "updatedInput" not in output
    patch = json.loads(recorded("PreToolUse.apply_patch.update.json", root))["tool_input"]
    apply_as_codex(root, patch["command"])
    assert post(root, patch["command"]) == Rendered("", "", 0)
    from redline.workspace.journal import undo_last

    undo_last(root)
    assert (root / "hello.txt").read_text(encoding="utf-8") == "hello\n"


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("say hello properly", "Discarded by the reviewer: say hello properly"),
        ("", "Discarded by the reviewer: no reason given"),
    ],
)
def test_discard_denies_with_a_reason_never_empty(
    root: Path, queue: WorkspaceQueue, reason: str, expected: str
) -> None:
    future = start_hook(recorded("PreToolUse.apply_patch.update.json", root))
    [record] = pending(queue)
    decide(queue, record.id, "discard", reason)
    output = answer_of(future.result(30))
    assert (output["permissionDecision"], output["permissionDecisionReason"]) == (
        "deny",
        expected,
    )


def test_a_multi_file_patch_waits_for_every_file_and_rewrites_to_what_was_applied(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("PreToolUse.apply_patch.multi_file.json", root))
    records = pending(queue, 3)
    labels = sorted(r.label for r in records)
    assert labels == [
        "apply_patch gone.txt (2/3)",
        "apply_patch hello.txt (3/3)",
        "apply_patch new.txt (1/3)",
    ]
    pre = json.loads(recorded("PreToolUse.apply_patch.multi_file.json", root))
    assert {r.details["group"] for r in records} == {pre["tool_use_id"]}
    by_label = {r.label.split()[1]: r for r in records}
    decide(queue, by_label["new.txt"].id, "apply")
    decide(queue, by_label["gone.txt"].id, "discard", "keep it")
    assert not future.done()  # one file is still undecided
    decide(queue, by_label["hello.txt"].id, "apply")
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "allow"
    patch = output["updatedInput"]["command"]
    assert [(s.op, s.path) for s in parse(patch)] == [("add", "new.txt"), ("update", "hello.txt")]
    apply_as_codex(root, patch)
    assert (root / "hello.txt").read_text(encoding="utf-8") == "hello world\n"
    assert (root / "gone.txt").read_text(encoding="utf-8") == "bye\n"
    note = post(root, patch, "PreToolUse.apply_patch.multi_file.json")
    told = json.loads(note.stdout)
    assert told["decision"] == "block"  # Codex then gives the model this text
    assert "gone.txt: not written. Discarded by the reviewer: keep it" in told["reason"]
    assert "hello.txt: applied as proposed" in told["reason"]
    assert post(root, patch, "PreToolUse.apply_patch.multi_file.json").stdout == ""  # told once


def test_every_file_discarded_denies_with_each_reason(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("PreToolUse.apply_patch.multi_file.json", root))
    for record in pending(queue, 3):
        decide(queue, record.id, "discard", f"no {record.label.split()[1]}")
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "deny"
    reason = output["permissionDecisionReason"]
    assert "gone.txt: Discarded by the reviewer: no gone.txt" in reason
    assert "new.txt: Discarded by the reviewer: no new.txt" in reason


def test_a_persons_edit_becomes_a_new_patch(root: Path, queue: WorkspaceQueue) -> None:
    future = start_hook(recorded("PreToolUse.apply_patch.update.json", root))
    [record] = pending(queue)
    from redline.workspace.preview import FileModify, Preview
    from redline.workspace.queue import ActionDraft

    [change] = record_preview(queue, record).changes
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
    output = answer_of(future.result(30))
    patch = output["updatedInput"]["command"]
    apply_as_codex(root, patch)
    assert (root / "hello.txt").read_text(encoding="utf-8") == "hello, reviewed\n"
    told = json.loads(post(root, patch).stdout)["reason"]
    assert "hello.txt: applied with the reviewer's edits" in told


def record_preview(queue: WorkspaceQueue, record: Any) -> Any:
    preview = queue.preview(record)
    assert preview is not None
    return preview


def test_a_patch_that_does_not_fit_is_denied_without_queueing(
    root: Path, queue: WorkspaceQueue
) -> None:
    output = answer_of(
        hook_command.handle(
            "codex", recorded("PreToolUse.apply_patch.verification_fails.json", root)
        )
    )
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"].startswith("apply_patch verification failed")
    assert queue.list() == []


def test_a_malformed_codex_payload_blocks_with_the_cause() -> None:
    rendered = hook_command.handle("codex", b'{"hook_event_name": "PreToolUse"}')
    assert rendered.code == 2 and rendered.stdout == ""
    assert "redline: blocked: hook payload: `tool_name` is missing" in rendered.stderr


def test_an_edit_codex_cannot_write_exactly_is_refused_and_stays_pending(
    root: Path, queue: WorkspaceQueue
) -> None:
    future = start_hook(recorded("PreToolUse.apply_patch.update.json", root))
    [record] = pending(queue)
    from redline.workspace.preview import FileModify, Preview
    from redline.workspace.queue import ActionDraft

    [change] = record_preview(queue, record).changes
    with queue.claim(record.id) as claim:
        new = claim.replace(
            ActionDraft(
                label=record.label,
                source=record.source,
                source_tool_name=record.source_tool_name,
                preview=Preview(
                    [FileModify("hello.txt", change.old_sha256, "hello\n", "no final newline")]
                ),
                details=record.details,
                applied_by="owner",
            ),
            resolved_by="person",
        )
    # The hook refuses the apply and says why: the person's ask ends with the hook's own
    # words at once (the owner timeout is far beyond the test's hang guard).
    refused = asyncio.run(resolve_queued(queue, new.id, "apply", "", owner_timeout=3600.0))
    assert refused.is_error
    assert "Codex cannot write this version of hello.txt exactly" in refused.text
    assert refused.text.endswith("The action is still pending.")
    assert queue.resolution(new.id) is None and queue.owner_requests() == []
    assert not future.done() and queue.get(new.id) is not None  # still pending
    decide(queue, new.id, "discard", "never mind")
    output = answer_of(future.result(30))
    assert output["permissionDecisionReason"] == "Discarded by the reviewer: never mind"
    assert (root / "hello.txt").read_text(encoding="utf-8") == "hello\n"


def test_a_planted_notes_folder_is_not_followed(root: Path, tmp_path: Path) -> None:
    """`.redline/` is untrusted: a link planted as the notes folder is neither written
    through nor read (the hook then fails closed instead)."""
    from redline.drivers.hooks.notes import leave_note, take_note
    from redline.drivers.hooks.payload import parse_payload
    from redline.workspace.state import StateFolderError

    payload = parse_payload("codex", recorded("PreToolUse.apply_patch.update.json", root))
    leave_note(root, payload, "told once")
    assert take_note(root, payload) == "told once"
    assert take_note(root, payload) == ""
    outside = tmp_path / "outside"
    outside.mkdir()
    notes = root / ".redline" / "hooks" / "notes"
    notes.rmdir()
    notes.symlink_to(outside)
    with pytest.raises(StateFolderError):
        leave_note(root, payload, "secret")
    assert list(outside.iterdir()) == []
    (outside / "x").write_text("planted", encoding="utf-8")
    assert take_note(root, payload) == ""


def test_a_picked_hunk_of_a_patch_is_written_by_redline_and_the_call_denied(
    root: Path, queue: WorkspaceQueue
) -> None:
    """Some hunks of a Codex file: redline writes them (safe apply), the patch is denied
    saying what landed, and the rest waits as an action redline applies."""
    import asyncio

    from redline.review.queued import resolve_queued

    lines = [f"line {n}\n" for n in range(1, 15)]
    (root / "long.txt").write_text("".join(lines), encoding="utf-8")
    patch = (
        "*** Begin Patch\n*** Update File: long.txt\n@@\n line 1\n-line 2\n+LINE 2\n line 3\n"
        "@@\n line 12\n-line 13\n+LINE 13\n line 14\n*** End Patch\n"
    )
    future = start_hook(recorded("PreToolUse.apply_patch.update.json", root, command=patch))
    [record] = pending(queue)
    assert record.owner_serves == ["parts"]
    result = asyncio.run(
        resolve_queued(queue, record.id, "apply", "first only", only=["long.txt#1"])
    )
    assert not result.is_error, result.text
    output = answer_of(future.result(30))
    assert output["permissionDecision"] == "deny"
    [rest] = queue.list()
    said = output["permissionDecisionReason"]
    assert f"Applied in part as reviewed ({record.id})" in said
    assert f"{rest.id} holds the rest" in said
    text = (root / "long.txt").read_text(encoding="utf-8")
    assert text == "".join(lines).replace("line 2\n", "LINE 2\n")
    assert rest.applied_by == "preview"
