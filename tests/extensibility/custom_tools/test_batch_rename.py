"""The example tool end to end: load it, preview, resolve, undo (needs safe apply)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from redline.extensibility.custom_tools import CustomToolAPI, load_custom_tools
from redline.extensibility.custom_tools import loader as loader_module
from redline.resources import example_tools_dir
from redline.review.resolve import resolve_pending
from redline.review.store import PendingActionStore
from redline.tools.base import PREVIEW_BANNER, Tool, ToolContext
from redline.workspace.preview import FileCreate, FileRename, Preview, sha256_bytes

safe_apply = pytest.importorskip("redline.workspace.safe_apply")
journal = pytest.importorskip("redline.workspace.journal")


@pytest.fixture(autouse=True)
def _no_host_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_module, "iter_entry_points", lambda: [])


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "docs").mkdir()
    (workspace / "docs" / "draft_intro.md").write_text("intro\n")
    (workspace / "docs" / "draft_usage.md").write_text("usage\n")
    (workspace / "docs" / "final.md").write_text("final\n")
    (workspace / "notes_draft.txt").write_text("notes\n")
    return workspace


def load_tool(root: Path, store: PendingActionStore) -> Tool:
    result = load_custom_tools(root, store, tool_paths=[example_tools_dir()])
    assert result.errors == []
    (loaded,) = [t for t in result.tools if t.name == "batch_rename_preview"]
    assert loaded.tool.deferrable
    return loaded.tool


async def run(tool: Tool, root: Path, store: PendingActionStore, **args: Any) -> Any:
    return await tool.execute(args, ToolContext(cwd=root, store=store))  # type: ignore[arg-type]


def files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".redline" not in p.parts
    )


async def test_preview_apply_and_undo(project: Path) -> None:
    store = PendingActionStore()
    tool = load_tool(project, store)
    before = files(project)
    result = await run(tool, project, store, pattern="docs/*.md", find="draft_", replace="")
    assert not result.is_error
    assert result.text.splitlines()[0] == PREVIEW_BANNER
    assert "docs/draft_intro.md -> docs/intro.md" in result.text
    assert files(project) == before, "a preview writes nothing"

    action = store.peek()
    assert action is not None
    assert action.label == "Batch rename: 2 files"
    assert action.source_tool_name == "batch_rename_preview"
    assert action.preview is not None
    assert list(action.preview) == [
        FileRename("docs/draft_intro.md", "docs/intro.md", sha256_bytes(b"intro\n")),
        FileRename("docs/draft_usage.md", "docs/usage.md", sha256_bytes(b"usage\n")),
    ]

    applied = await resolve_pending(store, "apply", "clean names")
    assert not applied.is_error, applied.text
    assert applied.text.startswith("Renamed 2 files. Reason: clean names")
    assert files(project) == ["docs/final.md", "docs/intro.md", "docs/usage.md", "notes_draft.txt"]
    assert (project / "docs" / "intro.md").read_text() == "intro\n"
    assert not store.has_pending

    undone = journal.undo_last(project)
    assert undone.label == "Batch rename: 2 files"
    assert files(project) == before


async def test_existing_target_refuses_the_whole_action(project: Path) -> None:
    store = PendingActionStore()
    tool = load_tool(project, store)
    await run(tool, project, store, pattern="*.md", find="draft_", replace="")
    (project / "docs" / "usage.md").write_text("someone else's file\n")
    before = files(project)

    refused = await resolve_pending(store, "apply", "go")
    assert refused.is_error
    assert "docs/usage.md" in refused.text
    assert refused.text.startswith("Apply failed for Batch rename: 2 files:")
    assert files(project) == before, "nothing renamed, not even the free target"
    assert store.count == 1, "the action stays pending"


async def test_discard_reports_what_was_dropped(project: Path) -> None:
    store = PendingActionStore()
    tool = load_tool(project, store)
    await run(tool, project, store, pattern="*draft*", find="draft", replace="final", regex=False)
    discarded = await resolve_pending(store, "discard", "wrong idea")
    assert not discarded.is_error
    assert discarded.text.startswith(
        "Discarded batch rename of 3 files; nothing was renamed. Reason: wrong idea"
    )
    assert "notes_draft.txt -> notes_final.txt" in discarded.text
    assert not store.has_pending
    assert (project / "notes_draft.txt").exists()


async def test_regex_and_refusals_up_front(project: Path) -> None:
    store = PendingActionStore()
    tool = load_tool(project, store)
    regex = await run(
        tool, project, store, pattern="*.md", find=r"^draft_(\w+)", replace=r"\1_v2", regex=True
    )
    assert "docs/draft_intro.md -> docs/intro_v2.md" in regex.text
    await resolve_pending(store, "discard", "just looking")

    clash = await run(tool, project, store, pattern="*.md", find="draft_intro", replace="final")
    assert clash.is_error and "docs/final.md already exists" in clash.text
    nothing = await run(tool, project, store, pattern="*.py", find="x", replace="y")
    assert not nothing.is_error and nothing.text.startswith("No file matching")
    bad_regex = await run(tool, project, store, pattern="*", find="(", replace="", regex=True)
    assert bad_regex.is_error and "not a valid regular expression" in bad_regex.text
    assert not store.has_pending


async def test_api_apply_preview_journals_under_the_action(workspace: Path) -> None:
    store = PendingActionStore()
    api = CustomToolAPI(workspace, store)
    preview = Preview([FileCreate("made.txt", "made\n")])
    action_id = api.push_pending_action(
        label="Create made.txt",
        apply=lambda reason: f"wrote {api.apply_preview(preview).files}",
        preview=preview,
        source_tool_name="maker",
    )
    assert action_id == "pa-1"
    result = await resolve_pending(store, "apply", "yes")
    assert result.text == "wrote ['made.txt']"
    assert journal.undo_last(workspace).label == "Create made.txt"
    assert not (workspace / "made.txt").exists()


def test_push_refuses_a_preview_outside_the_workspace(workspace: Path) -> None:
    store = PendingActionStore()
    api = CustomToolAPI(workspace, store)
    with pytest.raises(safe_apply.ConfinementError, match="outside"):
        api.push_pending_action(
            label="Escape",
            apply=lambda reason: None,
            preview=Preview([FileCreate("../escape.txt", "x")]),
        )
    assert not store.has_pending


def test_a_preview_given_as_details_becomes_the_preview(workspace: Path) -> None:
    store = PendingActionStore()
    preview = Preview([FileCreate("a.txt", "a\n")])
    CustomToolAPI(workspace, store).push_pending_action(
        label="A", apply=lambda reason: None, details=preview
    )
    top = store.peek()
    assert top is not None and top.preview is preview
