"""Revisions (issue 47): which proposals link to a discarded action without naming it,
each discarded action revised once, `show --json` `revision`, `redline log` grouping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.cli import main
from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue
from redline.workspace.queue.revisions import RevisionError

from .helpers import create_draft, edit_draft


def run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


def discard(queue: WorkspaceQueue, action_id: str, reason: str = "redo") -> None:
    import asyncio

    from redline.review.queued import resolve_queued

    assert not asyncio.run(resolve_queued(queue, action_id, "discard", reason)).is_error


def test_the_same_session_and_file_links_implicitly(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    first = queue.push(edit_draft(ws))
    discard(queue, first.id)
    second = queue.push(edit_draft(ws, new="hello\nthere\n"))
    assert (second.revision_of, second.revision) == (first.id, 2)
    discard(queue, second.id, "still not")
    third = queue.push(edit_draft(ws, new="hello\nyou\n"))
    assert (third.revision_of, third.revision) == (second.id, 3)
    # A replacement of a revision stays that revision.
    again = queue.get(third.id)
    assert again is not None and again.revision == 3


@pytest.mark.parametrize(
    "case", ["other-session", "other-file", "no-reason", "import", "not-implicit"]
)
def test_what_does_not_link(ws: Path, case: str) -> None:
    queue = WorkspaceQueue(ws)
    first = queue.push(edit_draft(ws))
    discard(queue, first.id, "" if case == "no-reason" else "redo")
    if case == "other-session":
        draft = edit_draft(ws, session_id="s2")
    elif case == "other-file":
        draft = create_draft("b.txt", "b\n")
    elif case == "import":
        draft = edit_draft(ws)
        draft = ActionDraft(
            label=draft.label, source=Source.current("import", "test", "s1"), preview=draft.preview
        )
    elif case == "not-implicit":
        draft = edit_draft(ws, implicit_revision=False)
    else:
        draft = edit_draft(ws)
    assert queue.push(draft).revision_of is None


def test_a_discarded_action_is_revised_once(ws: Path) -> None:
    queue = WorkspaceQueue(ws)
    first = queue.push(edit_draft(ws))
    discard(queue, first.id)
    assert queue.push(edit_draft(ws)).revision_of == first.id
    assert queue.push(edit_draft(ws)).revision_of is None  # already revised: a new action
    with pytest.raises(RevisionError, match=f"{first.id} was already revised by pa-2"):
        queue.push(edit_draft(ws, revises=first.id, session_id="s9"))


def test_show_and_log_group_the_revisions(ws: Path, capfd: pytest.CaptureFixture[str]) -> None:
    queue = WorkspaceQueue(ws)
    first = queue.push(edit_draft(ws))
    other = queue.push(create_draft("b.txt", "b\n", label="Other"))
    discard(queue, first.id, "no")
    (ws / "a.txt").write_text("hello\nworld!\n")  # the file changed under it meanwhile
    second = queue.push(edit_draft(ws, new="hello\nworld!\nmore please\n"))
    code, out, err = run(capfd, "pending", "-C", str(ws), "show", second.id, "--json")
    assert code == 0, err
    revision = json.loads(out)["revision"]
    assert (revision["number"], revision["of"], revision["base_changed"]) == (2, "pa-1", True)
    assert "-world\n-more\n+world!\n+more please\n" in revision["interdiff"]
    assert run(capfd, "pending", "-C", str(ws), "discard", other.id)[0] == 0
    assert run(capfd, "pending", "-C", str(ws), "apply", second.id)[0] == 0
    code, out, _ = run(capfd, "log", "-C", str(ws))
    firsts = [line.split("pa-", 1)[1].split()[0] for line in out.splitlines() if "pa-" in line]
    assert firsts == ["1", "3", "2"]
    assert "└ pa-3" in out and "revision 2 of pa-1" in out
    code, out, _ = run(capfd, "log", "-C", str(ws), "--json")
    decisions = json.loads(out)["decisions"]
    assert [d.get("revision") for d in decisions] == [None, None, {"number": 2, "of": "pa-1"}]
    code, out, _ = run(capfd, "log", "-C", str(ws), "--markdown")
    assert "  - **applied** `pa-3`" in out
