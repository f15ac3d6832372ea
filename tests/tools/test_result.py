from __future__ import annotations

import pytest

from redline.review.result import ToolResult, coerce_result


def test_tool_result_serialises_to_the_note_shape() -> None:
    result = ToolResult.text_result("hello", details={"a": 1})
    assert result.to_dict() == {
        "content": [{"type": "text", "text": "hello"}],
        "details": {"a": 1},
        "is_error": False,
    }
    assert ToolResult.from_dict(result.to_dict()) == result


def test_coerce_accepts_three_shapes_and_none() -> None:
    assert coerce_result(None) is None
    assert coerce_result("x") == ToolResult.text_result("x")
    assert coerce_result({"content": [{"type": "text", "text": "y"}], "is_error": True}).is_error  # type: ignore[union-attr]
    with pytest.raises(TypeError):
        coerce_result(42)
