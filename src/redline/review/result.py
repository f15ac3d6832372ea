"""ToolResult: what every tool, apply and reject callback hands back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True)
class TextPart:
    text: str
    type: str = field(default="text", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ImagePart:
    data: str
    mime_type: str
    type: str = field(default="image", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "image", "data": self.data, "mime_type": self.mime_type}


ContentPart: TypeAlias = TextPart | ImagePart


@dataclass(frozen=True)
class ToolResult:
    """Content parts (at least text), optional details, and an error flag.

    Serialises to the design note's shape:
    ``{"content": [{"type": "text", "text": ...}], "details": ..., "is_error": ...}``.
    """

    content: tuple[ContentPart, ...] = ()
    details: Any = None
    is_error: bool = False

    @classmethod
    def text_result(cls, text: str, *, details: Any = None, is_error: bool = False) -> ToolResult:
        return cls(content=(TextPart(text),), details=details, is_error=is_error)

    @classmethod
    def error(cls, text: str, *, details: Any = None) -> ToolResult:
        return cls.text_result(text, details=details, is_error=True)

    @property
    def text(self) -> str:
        return "\n".join(part.text for part in self.content if isinstance(part, TextPart))

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": [part.to_dict() for part in self.content],
            "details": self.details,
            "is_error": self.is_error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResult:
        raw_content = data.get("content", [])
        if isinstance(raw_content, str):
            raw_content = [{"type": "text", "text": raw_content}]
        if not isinstance(raw_content, list):
            raise TypeError("ToolResult 'content' must be a list of parts or a string")
        parts: list[ContentPart] = []
        for raw in raw_content:
            if not isinstance(raw, Mapping):
                raise TypeError(f"ToolResult content part must be a dict, got {type(raw).__name__}")
            kind = raw.get("type", "text")
            if kind == "text":
                parts.append(TextPart(str(raw.get("text", ""))))
            elif kind == "image":
                parts.append(ImagePart(str(raw.get("data", "")), str(raw.get("mime_type", ""))))
            else:
                raise TypeError(f"unknown ToolResult content part type {kind!r}")
        return cls(
            content=tuple(parts),
            details=data.get("details"),
            is_error=bool(data.get("is_error", False)),
        )


ResultLike: TypeAlias = "ToolResult | Mapping[str, Any] | str"


def coerce_result(value: object) -> ToolResult | None:
    """Accept the callback shapes (ToolResult, note-shaped dict, plain string, and the
    receipt ``api.apply_preview`` returns).

    ``None`` stays ``None`` so callers can fall back to their default text.
    """
    if value is None:
        return None
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.text_result(value)
    if isinstance(value, Mapping):
        return ToolResult.from_dict(value)
    from redline.workspace.safe_apply import ApplyReceipt

    if isinstance(value, ApplyReceipt):
        # What ``api.apply_preview`` returns: the write happened and was journaled.
        files = ", ".join(value.files)
        return ToolResult.text_result(
            f"Applied: {value.label} ({files})." if files else f"Applied: {value.label}.",
            details={"entry_id": value.entry_id, "files": list(value.files)},
        )
    raise TypeError(
        f"a tool result must be a ToolResult, a dict or a string, not {type(value).__name__}"
    )
