"""Rules in the built-in agent session: decided at push, recorded, reported to the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from tests.drivers.model.helpers import ProgrammableProvider, call, reply

from redline import create_agent_session
from redline.drivers.model.providers.base import ModelRequest
from redline.review.events import Notice, PendingResolved, ResolutionFailed, ToolEnd
from redline.review.file_action import file_action
from redline.review.result import ToolResult
from redline.rules import user_rules_file
from redline.tools.base import PREVIEW_BANNER, Tool, ToolContext
from redline.workspace.preview import FileModify, Preview, sha256_bytes

THREE_RULES = """
[[rule]]
name = "tests"
decision = "apply"
tools = ["edit", "write", "ast_edit"]
paths = ["tests/**"]
max_changed_lines = 40

[[rule]]
name = "migrations"
decision = "discard"
paths = ["migrations/**"]
reason = "migrations are written by hand"

[[rule]]
name = "everything else"
decision = "ask"
"""


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")


def write_rules(text: str = THREE_RULES) -> None:
    path = user_rules_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def tool_messages(request: ModelRequest) -> list[str]:
    return [m.content for m in request.messages if m.role == "tool"]


def test_three_rules_decide_and_the_model_reads_what_happened(tmp_path: Path) -> None:
    write_rules()
    provider = ProgrammableProvider(
        [
            reply(
                call("write", "c1", path="tests/test_new.py", content="def test_x():\n    pass\n"),
                call("write", "c2", path="migrations/0002.py", content="DROP = True\n"),
                call("write", "c3", path="src/app.py", content="print('hi')\n"),
            ),
            reply(text="ok"),
        ]
    )
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("go") == "awaiting_review"
        pending = session.store.snapshot()
    # the person sees only what the rules left
    assert [a.label for a in pending] == ["Write: src/app.py"]
    assert (tmp_path / "tests" / "test_new.py").exists()
    assert not (tmp_path / "migrations" / "0002.py").exists()
    assert not (tmp_path / "src" / "app.py").exists()
    resolved = [e for e in events if isinstance(e, PendingResolved)]
    assert [(e.by, e.rule, e.action) for e in resolved] == [
        ("rule", "tests", "apply"),
        ("rule", "migrations", "discard"),
    ]
    assert resolved[1].reason == "migrations are written by hand"
    results = [e.result for e in events if isinstance(e, ToolEnd)]
    applied, discarded, asked = (r.text for r in results)
    assert applied.startswith("Applied by rule tests: Write: tests/test_new.py.\n")
    assert PREVIEW_BANNER not in applied
    assert discarded == (
        "Discarded by rule migrations: Write: migrations/0002.py. "
        "Reason: migrations are written by hand"
    )
    assert asked.startswith(PREVIEW_BANNER)
    assert results[0].details["rules"][0]["rule"] == "tests"


def test_a_discard_reason_reaches_the_model_under_the_agent_resolver(tmp_path: Path) -> None:
    write_rules()
    provider = ProgrammableProvider(
        [reply(call("write", path="migrations/0003.py", content="x = 1\n")), reply(text="fine")]
    )
    with create_agent_session(tmp_path, provider, resolver="agent") as session:
        assert session.prompt("go") == "done"
        assert not session.store.has_pending
    seen = tool_messages(provider.requests[1])
    assert seen == [
        "Discarded by rule migrations: Write: migrations/0003.py. "
        "Reason: migrations are written by hand"
    ]
    # not reported a second time as a person's resolution
    assert not any("Since your last turn" in m.content for m in provider.requests[1].messages)


def test_a_scripted_plan_sees_rules_decide(tmp_path: Path) -> None:
    write_rules()
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "name": "rules",
                "steps": [
                    {
                        "call": [
                            {"tool": "write", "args": {"path": "migrations/1.py", "content": "a\n"}}
                        ]
                    },
                    {"say": "done"},
                ],
            }
        ),
        encoding="utf-8",
    )
    with create_agent_session(tmp_path, f"scripted:{plan}", resolver="human") as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("go") == "done"
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.result.text.endswith("Reason: migrations are written by hand")


def test_a_rule_applied_change_can_be_undone(tmp_path: Path) -> None:
    write_rules()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("a = 1\n", encoding="utf-8")
    provider = ProgrammableProvider(
        [reply(call("edit", path="tests/t.py", old="a = 1", new="a = 2")), reply(text="k")]
    )
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        assert session.prompt("go") == "done"
        assert (tmp_path / "tests" / "t.py").read_text(encoding="utf-8") == "a = 2\n"
        assert not session.undo().is_error
    assert (tmp_path / "tests" / "t.py").read_text(encoding="utf-8") == "a = 1\n"


def test_a_rules_file_edited_while_the_session_runs_takes_effect(tmp_path: Path) -> None:
    provider = ProgrammableProvider(
        [
            reply(call("write", "c1", path="notes/a.md", content="one\n")),
            reply(call("write", "c2", path="notes/b.md", content="two\n")),
            reply(text="done"),
        ]
    )
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        assert session.prompt("first") == "awaiting_review"
        assert not session.resolve("discard", "not now").is_error
        write_rules('[[rule]]\nname = "notes"\ndecision = "apply"\npaths = ["notes/**"]\n')
        assert session.prompt("second") == "done"
    assert not (tmp_path / "notes" / "a.md").exists()
    assert (tmp_path / "notes" / "b.md").read_text(encoding="utf-8") == "two\n"


def test_untrusted_workspace_rules_are_ignored_and_the_session_says_so(tmp_path: Path) -> None:
    (tmp_path / ".redline").mkdir(mode=0o700)
    (tmp_path / ".redline" / "rules.toml").write_text(
        '[[rule]]\nname = "repo"\ndecision = "apply"\n', encoding="utf-8"
    )
    provider = ProgrammableProvider([reply(call("write", path="a.py", content="x\n"))])
    with create_agent_session(tmp_path, provider, resolver="human") as session:
        notices: list[Any] = []
        session.subscribe(notices.append, replay=True)
        assert session.prompt("go") == "awaiting_review"
        assert session.store.count == 1
    texts = [e.message for e in notices if isinstance(e, Notice)]
    assert any("rules.toml: ignored, this workspace is not trusted" in t for t in texts)
    # trusted for this run (--trust), the same file counts
    provider = ProgrammableProvider([reply(call("write", path="b.py", content="x\n"))])
    with create_agent_session(tmp_path, provider, resolver="human", trust=True) as session:
        assert session.prompt("go") == "done"
    assert (tmp_path / "b.py").exists()


def test_apply_all_and_discard_all_are_unchanged(tmp_path: Path) -> None:
    write_rules('[[rule]]\nname = "no"\ndecision = "discard"\nreason = "never"\n')
    provider = ProgrammableProvider([reply(call("write", path="a.py", content="x\n"))])
    with create_agent_session(tmp_path, provider, resolver="apply-all") as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("go") == "done"
    assert (tmp_path / "a.py").exists()
    assert [(e.by, e.rule) for e in events if isinstance(e, PendingResolved)] == [("auto", None)]


class StaleParams(BaseModel):
    how: str


class StaleEditTool(Tool):
    """Pushes an edit of tests/t.py, then makes it stale: by flag or by changing the file."""

    name = "stale_edit"
    description = "test"
    parameters = StaleParams
    deferrable = True

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        assert isinstance(params, StaleParams) and ctx.store is not None
        path = ctx.cwd / "tests" / "t.py"
        old = path.read_bytes()
        preview = Preview([FileModify("tests/t.py", sha256_bytes(old), old.decode(), "changed\n")])
        action = file_action(
            ctx.cwd,
            preview,
            label="Edit: tests/t.py",
            source_tool_name="edit",
            applied_text="Edited tests/t.py.",
            repreview=lambda: action,
        )
        action = ctx.store.push(action)
        if params.how == "flag":
            ctx.store.mark_stale(action.id, "tests/t.py changed on disk")
        else:
            path.write_text("someone else\n", encoding="utf-8")
        return ToolResult.text_result(f"{PREVIEW_BANNER}\n{action.id}")


@pytest.mark.parametrize("how", ["flag", "disk"])
def test_a_rule_never_applies_a_stale_action(tmp_path: Path, how: str) -> None:
    write_rules('[[rule]]\nname = "tests"\ndecision = "apply"\npaths = ["tests/**"]\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("original\n", encoding="utf-8")
    provider = ProgrammableProvider([reply(call("stale_edit", how=how)), reply(text="k")])
    with create_agent_session(
        tmp_path, provider, resolver="human", custom_tools=[StaleEditTool()]
    ) as session:
        events: list[Any] = []
        session.subscribe(events.append)
        assert session.prompt("go") == "awaiting_review"
        assert session.store.count == 1
    expected = "original\n" if how == "flag" else "someone else\n"
    assert (tmp_path / "tests" / "t.py").read_text(encoding="utf-8") == expected
    assert not any(isinstance(e, PendingResolved) for e in events)
    failed = [e for e in events if isinstance(e, ResolutionFailed)]
    if how == "disk":  # the rule's refused apply is logged as by that rule
        assert [(e.by, e.rule) for e in failed] == [("rule", "tests")]
    text = next(e for e in events if isinstance(e, ToolEnd)).result.text
    assert text.startswith(PREVIEW_BANNER)
    if how == "disk":  # the rule tried; safe apply refused the changed file
        assert "Rule tests would apply Edit: tests/t.py, but that failed" in text
        assert text.endswith("It waits for review.")


def test_a_queue_backed_session_logs_the_rule_in_the_resolved_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from redline.cli import main
    from redline.drivers.model.session import AgentSession
    from redline.review.events import EventStream
    from redline.review.store import PendingActionStore
    from redline.rules import RuleSet
    from redline.tools.registry import builtin_tools
    from redline.workspace.queue import WorkspaceQueue

    write_rules()
    provider = ProgrammableProvider(
        [reply(call("write", path="migrations/9.py", content="x\n")), reply(text="ok")]
    )
    with WorkspaceQueue(tmp_path) as queue:
        store = PendingActionStore(queue=queue)
        session = AgentSession(
            cwd=tmp_path,
            provider=provider,
            tools=builtin_tools(),
            resolver="human",
            store=store,
            stream=EventStream("s"),
            rules=RuleSet(tmp_path),
        )
        with session:
            assert session.prompt("go") == "done"
        assert queue.list() == []
        resolution = queue.resolution("pa-1")
        assert resolution is not None
        assert (resolution.decision, resolution.resolved_by, resolution.rule) == (
            "discard",
            "rule",
            "migrations",
        )
        assert store.resolved_by == "person" and store.resolved_rule is None
    assert main(["pending", "-C", str(tmp_path), "show", "pa-1"]) == 0
    assert "resolved: discard by rule migrations" in capsys.readouterr().out


async def test_who_resolved_is_credited_per_call_not_per_store(tmp_path: Path) -> None:
    """A rule's resolution waiting for the lock never credits a person's resolution that
    holds it (and the other way round)."""
    import asyncio

    from redline.review.resolve import resolve_pending
    from redline.review.store import PendingAction, PendingActionStore
    from redline.workspace.queue import WorkspaceQueue

    started, gate = asyncio.Event(), asyncio.Event()

    async def slow_apply(reason: str) -> str:
        started.set()
        await gate.wait()
        return "applied"

    with WorkspaceQueue(tmp_path) as queue:
        store = PendingActionStore(queue=queue)
        below = store.push(PendingAction("below", apply=lambda reason: "ok"))
        top = store.push(PendingAction("top", apply=slow_apply))
        by_person = asyncio.create_task(resolve_pending(store, "apply", "", top.id))
        await asyncio.wait_for(started.wait(), 10)
        by_rule = asyncio.create_task(
            resolve_pending(store, "discard", "no", below.id, resolved_by="rule", rule="r")
        )
        await asyncio.sleep(0)  # let the rule's call start waiting for the lock
        gate.set()
        person_outcome, rule_outcome = await asyncio.wait_for(
            asyncio.gather(by_person, by_rule), 10
        )
        assert (person_outcome.kind, rule_outcome.kind) == ("applied", "discarded")
        first, second = queue.resolution(top.id), queue.resolution(below.id)
        assert first is not None and second is not None
        assert (first.resolved_by, first.rule) == ("person", None)
        assert (second.resolved_by, second.rule) == ("rule", "r")
        assert store.resolved_by == "person" and store.resolved_rule is None
