"""`redline exec --agent ... --resume`: session/load where the agent offers it, else a new
session told what was resolved since the agent last heard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.drivers.acp_client.running import Exec, prompts
from tests.drivers.acp_client.test_exec_agent import of
from tests.drivers.acp_client.test_queue import pending

LOAD = {"SCRIPTED_AGENT_LOAD_SESSION": "1"}
RESUMED = {"SCRIPTED_AGENT_RESUMED": "1"}
WRITE = [{"do": "fs_write", "path": "app.py", "content": "changed\n"}]


def first_run(started: Any, env: dict[str, str] | None = None) -> tuple[str, str]:
    """A run that ends awaiting review; returns (session id, action id)."""
    run = started(WRITE, "--prompt", "do the task", env=env)
    code, stderr = run.finish()
    assert code == 3, stderr
    session_id = of(run.events, "agent_start")[0]["session_id"]
    return session_id, of(run.events, "pending_pushed")[0]["action_id"]


def resumed(started: Any, *extra: str, env: dict[str, str] | None = None) -> Exec:
    run = started(None, "--resume", *extra, env={**RESUMED, **(env or {})})
    return run


def test_without_load_session_a_new_session_hears_the_resolutions(
    started: Any, workspace: Path
) -> None:
    session_id, action_id = first_run(started)
    assert pending(workspace, "discard", action_id, "--reason", "use a helper").returncode == 0
    run = resumed(started)
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    assert [h["event"] for h in heard].count("new_session") == 2
    assert not any(h["event"] == "load_session" for h in heard)
    last = prompts(heard)[-1]
    assert "cannot be loaded" in last
    assert "Write: app.py: discarded. Reason: use a helper" in last
    # The same redline session goes on (its log and queue records keep one id).
    assert of(run.events, "agent_start")[0]["session_id"] == session_id
    assert of(run.events, "agent_end")[-1]["status"] == "done"


def test_with_load_session_the_agent_loads_it_and_hears_the_resolutions(
    started: Any, workspace: Path
) -> None:
    session_id, action_id = first_run(started, env=LOAD)
    assert pending(workspace, "apply", action_id, "--reason", "good").returncode == 0
    run = resumed(started, "--session", session_id, env=LOAD)
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    loads = [h for h in heard if h["event"] == "load_session"]
    assert [(h["session_id"], h["cwd"]) for h in loads] == [("scripted-1", str(workspace))]
    assert [h["event"] for h in heard].count("new_session") == 1  # the first run's only
    last = prompts(heard)[-1]
    assert last.startswith("The reviewer resolved your pending requests:")
    assert "Write: app.py: applied. Reason: good" in last
    # The agent's replay of the conversation is not shown again.
    assert "(replayed history)" not in "".join(e["text"] for e in of(run.events, "acp_message"))


def test_a_new_prompt_follows_the_resolutions(started: Any, workspace: Path) -> None:
    _session_id, action_id = first_run(started, env=LOAD)
    assert pending(workspace, "apply", action_id).returncode == 0
    run = resumed(started, "--prompt", "now add tests", env=LOAD)
    code, stderr = run.finish()
    assert code == 0, stderr
    last = prompts(run.heard())[-1]
    assert "Write: app.py: applied" in last
    assert last.endswith("now add tests")


def test_resolutions_already_told_are_not_told_again(started: Any, workspace: Path) -> None:
    run = started(WRITE, "--prompt", "do the task", "--resolver", "apply-all", env=LOAD)
    code, stderr = run.finish()
    assert code == 0, stderr
    assert "Write: app.py: applied" in prompts(run.heard())[-1]
    again = resumed(started, env=LOAD)
    code, stderr = again.finish()
    assert code == 0, stderr
    # Nothing new since the agent last heard: no prompt at all.
    assert len(prompts(again.heard())) == 2
    assert any("Nothing to tell the agent" in e.get("message", "") for e in again.events)


def test_resume_while_actions_are_pending_exits_3_at_once(started: Any, workspace: Path) -> None:
    session_id, action_id = first_run(started)
    run = resumed(started)
    code, stderr = run.finish()
    assert code == 3
    assert f"session {session_id} still has pending actions ({action_id})" in stderr
    assert len(prompts(run.heard())) == 1  # the agent was never started again


def test_an_edited_session_record_is_not_passed_to_the_agent(started: Any, workspace: Path) -> None:
    session_id, action_id = first_run(started, env=LOAD)
    record = workspace / ".redline" / "acp" / f"{session_id}.json"
    data = json.loads(record.read_text())
    assert data["acp_session_id"] == "scripted-1"
    data["acp_session_id"] = "someone-elses"
    record.write_text(json.dumps(data))
    assert pending(workspace, "apply", action_id).returncode == 0
    run = resumed(started, env=LOAD)
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    assert not any(h["event"] == "load_session" for h in heard)
    assert "cannot be loaded" in prompts(heard)[-1]


def test_resuming_a_built_in_session_with_an_agent_is_bad_input(
    started: Any, workspace: Path
) -> None:
    sessions = workspace / ".redline" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "20261201-000000-abcdef.jsonl").write_text(
        json.dumps({"schema": 1, "session_id": "20261201-000000-abcdef", "model": "x"}) + "\n"
    )
    run = started([], "--resume")
    code, stderr = run.finish()
    assert code == 2
    assert "ran the built-in runtime, not an external agent" in stderr


def test_no_session_to_resume_is_bad_input(started: Any) -> None:
    run = started([], "--resume")
    code, stderr = run.finish()
    assert code == 2
    assert "no session to resume" in stderr


def test_a_session_the_agent_cannot_load_is_continued_in_a_new_one(
    started: Any, workspace: Path
) -> None:
    from redline.drivers.acp.resume import read_acp_session, record_acp_session

    session_id, action_id = first_run(started, env=LOAD)
    # A properly signed record of a session the agent does not know (any more).
    record_acp_session(workspace, session_id, "forgotten-7", "python")
    assert read_acp_session(workspace, session_id) == ("forgotten-7", "python")
    assert pending(workspace, "discard", action_id, "--reason", "no").returncode == 0
    run = resumed(started, env=LOAD)
    code, stderr = run.finish()
    assert code == 0, stderr
    heard = run.heard()
    assert [h["session_id"] for h in heard if h["event"] == "load_session"] == ["forgotten-7"]
    assert [h["event"] for h in heard].count("new_session") == 2
    assert "Write: app.py: discarded. Reason: no" in prompts(heard)[-1]
    assert any("could not load session forgotten-7" in e.get("message", "") for e in run.events)


def test_a_record_from_another_session_does_not_verify(workspace: Path) -> None:
    from redline.drivers.acp.resume import read_acp_session, record_acp_session

    record_acp_session(workspace, "s-1", "acp-1", "gemini")
    folder = workspace / ".redline" / "acp"
    (folder / "s-2.json").write_bytes((folder / "s-1.json").read_bytes())
    assert read_acp_session(workspace, "s-1") == ("acp-1", "gemini")
    assert read_acp_session(workspace, "s-2") is None
    (folder / "s-3.json").write_text("not json")
    assert read_acp_session(workspace, "s-3") is None
    assert read_acp_session(workspace, "s-4") is None
