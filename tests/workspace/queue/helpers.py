"""Shared helpers: drafts of edits to a workspace file, and a child-process prelude."""

from __future__ import annotations

from pathlib import Path

from redline.workspace.preview import FileCreate, FileModify, Preview, sha256_bytes
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue


def edit_draft(
    root: Path, name: str = "a.txt", new: str | None = None, **kw: object
) -> ActionDraft:
    old = (root / name).read_text()
    new = new if new is not None else old + "more\n"
    preview = Preview([FileModify(name, sha256_bytes(old.encode()), old, new)])
    return ActionDraft(
        label=str(kw.pop("label", f"Edit {name}")),
        source=Source.current("exec", "test", str(kw.pop("session_id", "s1"))),
        source_tool_name="edit",
        preview=preview,
        **kw,  # type: ignore[arg-type]
    )


def create_draft(name: str, text: str, label: str = "") -> ActionDraft:
    return ActionDraft(
        label=label or f"Create {name}",
        source=Source.current("exec", "test", "s1"),
        source_tool_name="write",
        preview=Preview([FileCreate(name, text)]),
    )


def ids(queue: WorkspaceQueue) -> list[str]:
    return [r.id for r in queue.list()]
