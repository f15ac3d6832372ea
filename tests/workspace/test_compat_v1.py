"""Queue records and an owner request written by redline before owner requests could name
hunks (v1, commit 8053934) are still refused or applied correctly (issue 42).

The fixture (tests/fixtures/compat/v1/, made by tests/fixtures/compat/make_fixture_v1.py
with that code) is re-signed for the folder the test runs in, as for v0
(tests/workspace/test_compat_v0.py): the signing scheme did not change.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.workspace.test_compat_v0 import _v0_tag, relocate

from redline.review.queued import parts_refusal, resolve_queued
from redline.workspace.queue import WorkspaceQueue
from redline.workspace.queue.records import OwnerRequest

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "compat" / "v1"
ORIGIN: dict[str, Any] = json.loads((FIXTURE / "ORIGIN.json").read_text(encoding="utf-8"))
OLD, NEW = ORIGIN["old"], ORIGIN["new"]
FIRST_ONLY = OLD.replace("line 2\n", "LINE 2\n")


@pytest.fixture
def v1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(FIXTURE / "workspace", tmp_path / "workspace")
    root = tmp_path / "workspace"
    (root / "dot-redline").rename(root / ".redline")
    shutil.copytree(FIXTURE / "config", tmp_path / "config")
    os.chmod(tmp_path / "config" / "state.key", 0o600)
    for folder in [root / ".redline", *(p for p in (root / ".redline").rglob("*") if p.is_dir())]:
        os.chmod(folder, 0o700)
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(tmp_path / "config"))
    key = (tmp_path / "config" / "state.key").read_bytes()
    # 2 records and 1 owner request.
    assert relocate(root / ".redline", key, ORIGIN["root"], str(root.resolve())) == 3
    return root


def _owner_alive(root: Path) -> None:
    """The hook that queued pa-1 is this test process now (as if it were still waiting)."""
    from redline.workspace.queue.procs import process_start_time

    path = root / ".redline" / "queue" / "actions" / f"{ORIGIN['owner']}.json"
    header, _, rest = path.read_bytes().partition(b"\n")
    record = json.loads(rest)
    record["source"]["pid"] = os.getpid()
    record["source"]["pid_start"] = process_start_time(os.getpid())
    payload = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    tag = json.loads(header)["tag"]
    key = Path(os.environ["REDLINE_CONFIG_DIR"], "state.key").read_bytes()
    new_tag = _v0_tag(key, str(root.resolve()), "queue", payload.encode())
    path.write_bytes(header.replace(tag.encode(), new_tag.encode()) + b"\n" + payload.encode())


def test_an_older_hooks_record_is_refused_parts_and_nothing_lands(v1: Path) -> None:
    _owner_alive(v1)
    with WorkspaceQueue(v1) as queue:
        record = queue.get(ORIGIN["owner"])
        assert record is not None and not record.orphaned() and record.owner_serves == []
        assert "only as a whole" in parts_refusal(record)
        result = asyncio.run(
            resolve_queued(queue, record.id, "apply", "first", only=["a.txt#1"], owner_timeout=1)
        )
        assert result.is_error and "only as a whole" in result.text
        assert [r.id for r in queue.list()] == [ORIGIN["queued"], ORIGIN["owner"]]
    assert (v1 / "a.txt").read_text(encoding="utf-8") == OLD


def test_an_older_owner_request_is_a_whole_decision(v1: Path) -> None:
    with WorkspaceQueue(v1) as queue:
        [(request, record)] = queue.owner_requests(pid=4242)
    assert (request.id, request.decision, request.reason, request.only) == (
        ORIGIN["owner"],
        "discard",
        "not now",
        None,
    )
    assert record.id == ORIGIN["owner"]


def test_an_older_queued_record_applies_in_parts(v1: Path) -> None:
    with WorkspaceQueue(v1) as queue:
        result = asyncio.run(
            resolve_queued(queue, ORIGIN["queued"], "apply", "first", only=["a.txt#1"])
        )
        assert not result.is_error, result.text
        remaining = [r for r in queue.list() if r.id != ORIGIN["owner"]]
    assert (v1 / "a.txt").read_text(encoding="utf-8") == FIRST_ONLY
    [rest] = remaining
    assert rest.id != ORIGIN["queued"] and rest.applied_by == "preview"


def test_a_request_for_parts_is_one_an_older_owner_refuses() -> None:
    """v1 owners refuse a request of a newer format version (``check_version``: above 1 is
    "written by a newer redline"); a whole decision stays version 1, which they serve."""
    whole = OwnerRequest("pa-1", "apply", "", requested_by_pid=1).to_dict()
    parts = OwnerRequest("pa-1", "apply", "", requested_by_pid=1, only=("a.txt#1",)).to_dict()
    assert whole["version"] == 1 and "only" not in whole
    assert parts["version"] > 1 and parts["only"] == ["a.txt#1"]
    assert OwnerRequest.from_dict(parts, "pa-1").only == ("a.txt#1",)
