"""A change asked through a symlinked folder names the real path it writes (issue 29, 1).

``tests -> src`` inside the workspace: an edit of ``tests/app.py`` writes ``src/app.py``.
Every action names the real path in ``files`` and keeps the asked one in ``via``; rules
match the real path; every display says "via tests/ → src/".
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from redline.cli import main
from redline.mcp_server.proposals import Proposals
from redline.review.store import PendingActionStore
from redline.rules import ActionFacts
from redline.rules.model import Rule, decide
from redline.tools.base import ToolContext
from redline.tools.files import EditParams, EditTool
from redline.workspace.hunks import hunk_units, split_for_apply
from redline.workspace.preview import (
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    sha256_bytes,
    shown_path,
    via_text,
)
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
from redline.workspace.realpath import canonical_preview
from redline.workspace.safe_apply import apply_preview

OLD = "x = 1\n"


@pytest.fixture
def linked(ws: Path) -> Path:
    """A workspace whose ``tests`` folder is a symlink to ``src``."""
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text(OLD)
    (ws / "tests").symlink_to("src")
    return ws


def _modify(path: str, new: str = "x = 2\n") -> FileModify:
    return FileModify(path, sha256_bytes(OLD.encode()), OLD, new)


def _draft(preview: Preview) -> ActionDraft:
    return ActionDraft(
        label="Edit tests/app.py",
        source=Source.current("mcp", "agent", "s1"),
        source_tool_name="mcp:propose_edit",
        preview=preview,
    )


# -- the real path and via ------------------------------------------------------------------


def test_every_kind_of_change_names_its_real_path(linked: Path) -> None:
    (linked / "src" / "old.py").write_text("o\n")
    preview = canonical_preview(
        linked,
        Preview(
            [
                _modify("tests/app.py"),
                FileCreate("tests/new.py", "n\n"),
                FileDelete("tests/old.py", sha256_bytes(b"o\n")),
                FileRename("src/keep.py", "tests/moved.py", "0" * 64),
            ]
        ),
    )
    assert preview.paths == (
        "src/app.py",
        "src/new.py",
        "src/old.py",
        "src/keep.py",
        "src/moved.py",
    )
    assert preview.via == {
        "src/app.py": "tests/app.py",
        "src/new.py": "tests/new.py",
        "src/old.py": "tests/old.py",
        "src/moved.py": "tests/moved.py",
    }
    assert canonical_preview(linked, preview) == preview  # idempotent
    assert canonical_preview(linked, preview).via == preview.via
    plain = Preview([_modify("src/app.py")])
    assert canonical_preview(linked, plain) is plain


def test_a_symlinked_file_is_followed_for_a_modify(linked: Path) -> None:
    (linked / "alias.py").symlink_to("src/app.py")
    preview = canonical_preview(linked, Preview([_modify("alias.py")]))
    assert preview.paths == ("src/app.py",)
    assert via_text("src/app.py", "alias.py") == "via alias.py → src/app.py"


def test_via_survives_the_store_round_trip_and_derived_previews(linked: Path) -> None:
    queue = WorkspaceQueue(linked)
    record = queue.push(_draft(Preview([_modify("tests/app.py", "x = 2\ny = 3\n")])))
    assert record.files == ["src/app.py"]
    assert record.via == {"src/app.py": "tests/app.py"}
    again = queue.get(record.id)
    assert again is not None and again.via == record.via
    preview = queue.preview(record)
    assert preview is not None and preview.via == {"src/app.py": "tests/app.py"}
    part = split_for_apply(preview, hunk_units(preview)[:1])
    assert part.selected.via == preview.via
    assert Preview.from_dict(preview.to_dict()).via == preview.via


def test_texts_say_via(linked: Path) -> None:
    assert via_text("src/app.py", "tests/app.py") == "via tests/ → src/"
    assert via_text("a/b/c.py", "x/y/c.py") == "via x/y/ → a/b/"
    assert shown_path("src/app.py", {"src/app.py": "tests/app.py"}) == (
        "src/app.py (via tests/ → src/)"
    )
    assert shown_path("src/app.py", {}) == "src/app.py"


def test_the_reviewed_file_is_written_even_if_the_link_moves(linked: Path) -> None:
    """The real path is fixed when the change is proposed: swapping the link before the
    apply cannot redirect the write to another folder."""
    queue = WorkspaceQueue(linked)
    record = queue.push(_draft(Preview([_modify("tests/app.py")])))
    (linked / "other").mkdir()
    (linked / "other" / "app.py").write_text(OLD)
    (linked / "tests").unlink()
    (linked / "tests").symlink_to("other")
    preview = queue.preview(record)
    assert preview is not None
    apply_preview(linked, preview)
    assert (linked / "src" / "app.py").read_text() == "x = 2\n"
    assert (linked / "other" / "app.py").read_text() == OLD


# -- rules ------------------------------------------------------------------------------------


def _facts(root: Path) -> ActionFacts:
    record = WorkspaceQueue(root).push(_draft(Preview([_modify("tests/app.py")])))
    return ActionFacts.of_record(record)


def test_a_rule_for_the_link_does_not_reach_the_real_folder(linked: Path) -> None:
    facts = _facts(linked)
    assert facts.all_paths == ("src/app.py",)
    tests_rule = Rule("tests", "apply", paths=("tests/**",))
    assert decide([tests_rule], facts).decision == "ask"


def test_a_rule_naming_the_real_path_applies(linked: Path) -> None:
    src_rule = Rule("src", "apply", paths=("src/**",))
    decision = decide([src_rule], _facts(linked))
    assert decision.decision == "apply" and decision.rule == "src"


def test_a_rule_without_paths_never_applies_through_a_link(linked: Path) -> None:
    facts = _facts(linked)
    for rule in (Rule("all", "apply"), Rule("mcp", "apply", tools=("mcp:*",))):
        decision = decide([rule], facts)
        assert decision.decision == "ask"
        assert "asked as tests/app.py through a symbolic link" in decision.why
    # Discarding needs no such care.
    assert decide([Rule("no", "discard")], facts).decision == "discard"


def test_the_rules_documentation_example_over_mcp(
    linked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adversary's reproduction: `paths = ["tests/**"]`, decision apply, and an MCP
    propose_edit of tests/app.py. Before: applied, src/app.py changed."""
    config = Path(os.environ["REDLINE_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "rules.toml").write_text(
        '[[rule]]\nname = "tests"\ndecision = "apply"\npaths = ["tests/**"]\n'
    )

    async def propose() -> str:
        work = Proposals(linked)
        try:
            outcome = await work.propose_edit(
                "agent", work.session_for("stdio"), "tests/app.py", "x = 1", "x = 2"
            )
            return outcome.text
        finally:
            work.close()

    text = asyncio.run(propose())
    assert text.startswith(
        "Queued pa-1 for review: Edit: tests/app.py. Writes src/app.py (via tests/ → src/)."
    )
    assert "--- a/src/app.py" in text and "tests/app.py\n" not in text.split("\n\n", 1)[1]
    assert (linked / "src" / "app.py").read_text() == OLD


# -- the model's tools ---------------------------------------------------------------------


async def test_the_edit_tool_shows_the_real_path(linked: Path) -> None:
    store = PendingActionStore()
    result = await EditTool().execute(
        EditParams(path="tests/app.py", old="x = 1", new="x = 2"),
        ToolContext(cwd=linked, store=store),
    )
    assert not result.is_error, result.text
    (action,) = store.snapshot()
    assert action.preview is not None
    assert action.preview.paths == ("src/app.py",)
    assert action.preview.via == {"src/app.py": "tests/app.py"}
    assert "--- a/src/app.py" in result.text
    assert decide([Rule("t", "apply", paths=("tests/**",))], ActionFacts.of(action)).decision == (
        "ask"
    )


# -- the command line ------------------------------------------------------------------------


def test_pending_and_undo_show_the_real_path_and_via(
    linked: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    WorkspaceQueue(linked).push(_draft(Preview([_modify("tests/app.py")])))
    assert main(["pending", "-C", str(linked), "list"]) == 0
    out, _ = capfd.readouterr()
    assert "writes src/app.py (via tests/ → src/)" in out
    assert main(["pending", "-C", str(linked), "list", "--json"]) == 0
    (item,) = json.loads(capfd.readouterr()[0])["actions"]
    assert item["files"] == ["src/app.py"]
    assert item["via"] == {"src/app.py": "tests/app.py"}
    assert main(["pending", "-C", str(linked), "show", "pa-1"]) == 0
    out, _ = capfd.readouterr()
    assert "files:   src/app.py (via tests/ → src/) (+1 -1)" in out
    assert "--- a/src/app.py" in out
    assert main(["pending", "-C", str(linked), "apply", "pa-1", "--reason", "ok"]) == 0
    capfd.readouterr()
    assert (linked / "src" / "app.py").read_text() == "x = 2\n"
    assert main(["undo", "-C", str(linked), "--list"]) == 0
    out, _ = capfd.readouterr()
    assert "(src/app.py (via tests/ → src/))" in out


def test_records_without_via_still_read(ws: Path) -> None:
    """A record written before `via` existed (no such field) reads back with via {}."""
    (ws / "a.txt").write_text(OLD)
    queue = WorkspaceQueue(ws)
    record = queue.push(_draft(Preview([_modify("a.txt")])))
    assert "via" not in record.to_dict()
    assert queue.get(record.id) is not None and queue.get(record.id).via == {}  # type: ignore[union-attr]


def test_safe_apply_journals_the_real_path_even_for_a_path_as_asked(linked: Path) -> None:
    """A caller that hands safe apply the path as asked (not canonicalised) still gets the
    real path in its receipt and journal, with the asked one beside it."""
    from redline.workspace.journal import undo_history

    receipt = apply_preview(linked, Preview([_modify("tests/app.py")]))
    assert receipt.files == ["src/app.py"]
    (item,) = undo_history(linked)
    assert item.files == ["src/app.py"] and item.via == {"src/app.py": "tests/app.py"}


def test_exec_output_says_via() -> None:
    import io

    from redline.commands.render import EventPrinter
    from redline.review.events import event_from_dict

    preview = Preview([_modify("src/app.py")], via={"src/app.py": "tests/app.py"})
    summary = preview.summary()
    assert summary["files"][0]["via"] == "tests/app.py"
    assert "via" not in Preview([_modify("src/app.py")]).summary()["files"][0]
    out = io.StringIO()
    EventPrinter(out)(
        event_from_dict(
            {
                "type": "pending_pushed",
                "seq": 1,
                "time": 0,
                "session_id": "",
                "action_id": "pa-1",
                "label": "Edit: tests/app.py",
                "source_tool_name": "edit",
                "preview": summary,
            }
        )
    )
    assert out.getvalue().splitlines() == [
        "[pending] pa-1 Edit: tests/app.py [edit] +1 -1",
        "    writes src/app.py (via tests/ → src/)",
    ]
