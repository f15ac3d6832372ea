"""Typed details per kind: one function pair to and from the queue record's JSON, lossless
and never raising on untrusted records."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redline.jsontypes import JsonValue
from redline.workspace.details import (
    ACTION_KINDS,
    AgentCall,
    AstEditDetails,
    AstEditError,
    CallGroup,
    DiffShown,
    FileChangeDetails,
    PermissionDetails,
    agent_ended,
    details_from_json,
    details_to_json,
    infer_kind,
)

CALL = AgentCall("claude", "Write", "toolu_1", "s-1", "/w", "default")

# What redline wrote before details were typed (the same dicts, key for key).
SHAPES: list[tuple[str, Any, dict[str, Any]]] = [
    ("file_change", FileChangeDetails(path="a.py"), {"path": "a.py"}),
    (
        "file_change",
        FileChangeDetails(path="a.py", change="create"),
        {"path": "a.py", "kind": "create"},
    ),
    (
        "file_change",
        FileChangeDetails(call=CALL, group=CallGroup("toolu_1", 1, 2)),
        {
            "agent": "claude",
            "tool_name": "Write",
            "tool_use_id": "toolu_1",
            "session_id": "s-1",
            "cwd": "/w",
            "permission_mode": "default",
            "group": "toolu_1",
            "group_index": 1,
            "group_size": 2,
        },
    ),
    (
        "file_change",
        FileChangeDetails(path="b", change="modify", acp=True, acp_source=None),
        {"source": None, "path": "b", "kind": "modify"},
    ),
    (
        "ast_edit",
        AstEditDetails(2, ("a.py",), (AstEditError("b.py", None),), False),
        {
            "replacements": 2,
            "files": ["a.py"],
            "errors": [{"path": "b.py", "message": None}],
            "limit_reached": False,
        },
    ),
    (
        "permission",
        PermissionDetails(
            call=AgentCall("codex", "Bash", "", "s", "/w", "", model="gpt-5"),
            tool_input={"command": ["ls"]},
        ),
        {
            "agent": "codex",
            "tool_name": "Bash",
            "tool_use_id": "",
            "session_id": "s",
            "cwd": "/w",
            "permission_mode": "",
            "model": "gpt-5",
            "tool_input": {"command": ["ls"]},
        },
    ),
    (
        "permission",
        PermissionDetails(
            acp=True,
            acp_source={"agent": "gemini"},
            tool_call_id="c1",
            tool_kind="edit",
            raw_input=None,
            not_verifiable="why",
            diffs=(DiffShown("x", None, "y\n"),),
        ),
        {
            "source": {"agent": "gemini"},
            "tool_call_id": "c1",
            "kind": "edit",
            "raw_input": None,
            "not_verifiable": "why",
            "diffs": [{"path": "x", "old_text": None, "new_text": "y\n"}],
        },
    ),
]


@pytest.mark.parametrize("index", range(len(SHAPES)), ids=[str(i) for i in range(len(SHAPES))])
def test_typed_details_keep_the_json_shape(index: int) -> None:
    kind, typed, shape = SHAPES[index]
    assert details_to_json(typed) == shape
    assert details_from_json(kind, shape) == typed


def test_custom_details_are_any_json_value() -> None:
    for value in ({"note": [1, 2]}, "text", 3, None, [{"a": None}]):
        assert details_from_json("custom", value) == value
        assert details_to_json(value) == value


def test_a_bad_known_field_stays_as_it_was() -> None:
    hostile: dict[str, JsonValue] = {"path": 5, "kind": "explode", "agent_ended": ["x"], "z": 1}
    typed = details_from_json("file_change", hostile)
    assert isinstance(typed, FileChangeDetails)
    assert (typed.path, typed.change, typed.agent_ended) == (None, None, None)
    assert typed.extra == hostile and details_to_json(typed) == hostile
    assert details_from_json("ast_edit", {"replacements": "many"}) == {"replacements": "many"}
    assert agent_ended(details_from_json("permission", {"agent_ended": "exited"})) == "exited"
    assert agent_ended({"agent_ended": True}) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        "path",
        "kind",
        "source",
        "agent",
        "tool_name",
        "tool_use_id",
        "session_id",
        "cwd",
        "permission_mode",
        "model",
        "group",
        "group_index",
        "group_size",
        "import",
        "author",
        "assisted_by",
        "agent_ended",
        "replacements",
        "files",
        "errors",
        "limit_reached",
        "tool_input",
        "tool_call_id",
        "raw_input",
        "not_verifiable",
        "diffs",
        "other",
    ]
)


@settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.sampled_from(ACTION_KINDS), st.dictionaries(KEYS, JSON, max_size=8) | JSON)
def test_reading_any_record_is_lossless(kind: str, value: JsonValue) -> None:
    assert details_to_json(details_from_json(kind, value)) == value


def test_old_records_kind_is_inferred_from_their_tool() -> None:
    assert infer_kind("edit", True, "exec") == "file_change"
    assert infer_kind("mcp:ast_edit", True, "mcp") == "ast_edit"
    assert infer_kind("hook:Bash", False, "hook") == "permission"
    assert infer_kind("hook:Write", True, "hook", "owner") == "file_change"
    assert infer_kind("acp:edit", True, "acp", "owner") == "permission"
    assert infer_kind("acp:edit", True, "acp", "preview") == "file_change"
    assert infer_kind("renamer", True, "sdk") == "custom"
    assert infer_kind("custom_tool", False, "hook", "owner") == "permission"


def test_a_record_of_an_unknown_kind_is_a_clear_error() -> None:
    from redline.workspace.queue import QueueRecord, QueueRecordError

    data = {
        "version": 2,
        "id": "pa-3",
        "position": 3,
        "label": "x",
        "created_at": 1.0,
        "kind": "teleport",
        "details": {"path": 1},
    }
    with pytest.raises(QueueRecordError, match=r"queue record pa-3 is damaged: unknown kind"):
        QueueRecord.from_dict(data, "pa-3")
    record = QueueRecord.from_dict({**data, "kind": "file_change"}, "pa-3")
    typed = details_from_json(record.kind, record.details)
    assert isinstance(typed, FileChangeDetails) and typed.extra == {"path": 1}
