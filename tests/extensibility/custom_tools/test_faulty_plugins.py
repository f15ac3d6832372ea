"""Faulty plugins cannot take the session down, hold it hostage or corrupt its output.

Each plugin here is written the way a broken (or hostile) plugin would be: it raises
SystemExit / KeyboardInterrupt / GeneratorExit in its import, factory, execute, apply or
reject; it never finishes loading or executing; it prints.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from redline.cli import main
from redline.drivers.model.session import AgentSession
from redline.extensibility.custom_tools import load_custom_tools
from redline.extensibility.custom_tools import loader as loader_module
from redline.review.events import Event
from redline.sdk import create_agent_session

from .conftest import PluginWriter, echo_plugin

HANG_GUARD = 60.0  # seconds: a hang guard only, never a duration being measured


@pytest.fixture(autouse=True)
def _no_host_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_module, "iter_entry_points", lambda: [])


@pytest.fixture(autouse=True)
def _no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDLINE_SCRIPTED_WAIT_SCALE", "0")


def plan(tmp_path: Path, steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"name": "faulty", "steps": steps}), encoding="utf-8")
    return f"scripted:{path}"


RAISERS = {
    "SystemExit": "raise SystemExit(3)",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
    "GeneratorExit": "raise GeneratorExit('closing')",
}

TOOL_TEMPLATE = """
import threading
import time

from pydantic import BaseModel


class Params(BaseModel):
    pass


def apply(reason):
    {apply}


def reject(reason):
    {reject}


class Faulty:
    name = "{name}"
    label = "Faulty"
    description = "A tool written by someone in a hurry"
    parameters = Params
    deferrable = True

    def __init__(self, api):
        self.api = api

    def execute(self, tool_call_id, params):
        {execute}


def factory(api):
    return Faulty(api)
"""


def faulty_tool(
    name: str = "faulty",
    *,
    execute: str = "return 'ok'",
    apply: str = "return 'applied'",
    reject: str = "return 'rejected'",
) -> str:
    return TOOL_TEMPLATE.format(name=name, execute=execute, apply=apply, reject=reject)


PUSH = (
    "return self.api.push_pending_action(label='Faulty change', apply=apply, reject=reject, "
    "source_tool_name='faulty')"
)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)

    def __call__(self, event: Event) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def of(self, kind: str) -> list[dict[str, Any]]:
        with self.lock:
            return [e.to_dict() for e in self.events if e.type == kind]

    def wait_for(self, kind: str, **match: Any) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for event in self.events:
                data = event.to_dict()
                if event.type == kind and all(data.get(k) == v for k, v in match.items()):
                    return data
            return None

        with self.changed:
            assert self.changed.wait_for(lambda: found() is not None, timeout=HANG_GUARD)
            result = found()
        assert result is not None
        return result


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return root


def session_for(
    workspace: Path, model: str, tool_paths: list[Path], **options: Any
) -> tuple[AgentSession, Recorder]:
    session = create_agent_session(workspace, model, tool_paths=tool_paths, **options)
    recorder = Recorder()
    session.subscribe(recorder, replay=True)
    return session, recorder


def run_in_thread(session: AgentSession, prompt: str) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def target() -> None:
        box["status"] = session.prompt(prompt)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


# -- defect 7: BaseException at load --------------------------------------------------------


@pytest.mark.parametrize("exc", sorted(RAISERS))
@pytest.mark.parametrize("where", ["import", "factory"])
def test_base_exceptions_at_load_are_that_plugins_error(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, exc: str, where: str
) -> None:
    folder = tmp_path / "plugins"
    if where == "import":
        bad = write_plugin(folder, "bad.py", RAISERS[exc] + "\n")
    else:
        bad = write_plugin(folder, "bad.py", f"def factory(api):\n    {RAISERS[exc]}\n")
    write_plugin(folder, "good.py", echo_plugin("good"))
    result = load_custom_tools(workspace, None, tool_paths=[folder])
    assert [t.name for t in result.tools] == ["good"]
    [error] = result.errors
    assert error.path == str(bad.resolve())
    assert exc in error.message
    if where == "factory":
        assert error.message.startswith("factory() raised ")


def test_tools_command_survives_keyboard_interrupt_in_a_plugin(
    workspace: Path,
    tmp_path: Path,
    write_plugin: PluginWriter,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = write_plugin(tmp_path / "p", "interrupting.py", "raise KeyboardInterrupt\n")
    write_plugin(tmp_path / "p", "good.py", echo_plugin("good"))
    code = main(["tools", "-C", str(workspace), "--tools", str(tmp_path / "p")])
    out = capsys.readouterr().out
    assert code == 0
    assert f"{bad.resolve()}: KeyboardInterrupt" in out
    assert "  good " in out


def test_unusable_tool_attributes_raising_base_exceptions(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    source = """
class Sneaky:
    @property
    def name(self):
        raise SystemExit("no name for you")

def factory(api):
    return Sneaky()
"""
    path = write_plugin(tmp_path, "sneaky.py", source)
    result = load_custom_tools(workspace, None, tool_paths=[path])
    [error] = result.errors
    assert "SystemExit: no name for you" in error.message


# -- defect 6: plugins that never finish loading ----------------------------------------------

LOOP_FOREVER = "import time\nwhile True:\n    time.sleep(0.05)\n"


@pytest.mark.parametrize("where", ["import", "factory"])
def test_a_plugin_that_never_loads_is_skipped_and_the_others_load(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, where: str
) -> None:
    folder = tmp_path / "plugins"
    if where == "import":
        stuck = write_plugin(folder, "a_stuck.py", LOOP_FOREVER)
    else:
        body = LOOP_FOREVER.replace("\n", "\n    ").replace("import time\n    ", "")
        stuck = write_plugin(folder, "a_stuck.py", f"import time\ndef factory(api):\n    {body}\n")
    write_plugin(folder, "b_good.py", echo_plugin("good"))
    result = load_custom_tools(workspace, None, tool_paths=[folder], timeout=0.3)
    assert [t.name for t in result.tools] == ["good"]
    [error] = result.errors
    assert error.path == str(stuck.resolve())
    assert "did not finish loading within 0.3 s" in error.message


def test_the_plugin_timeout_comes_from_the_environment(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDLINE_PLUGIN_TIMEOUT", "0.25")
    stuck = write_plugin(tmp_path, "stuck.py", LOOP_FOREVER)
    [error] = load_custom_tools(workspace, None, tool_paths=[stuck]).errors
    assert "within 0.25 s" in error.message
    monkeypatch.setenv("REDLINE_PLUGIN_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="REDLINE_PLUGIN_TIMEOUT: 'soon' is not a number"):
        load_custom_tools(workspace, None, tool_paths=[stuck])


def test_bad_plugin_timeout_argument_is_exit_2(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["tools", "-C", str(workspace), "--plugin-timeout", "-1"]) == 2
    assert "--plugin-timeout: '-1' must be a positive number" in capsys.readouterr().err
    monkeypatch.setenv("REDLINE_PLUGIN_TIMEOUT", "soon")
    assert main(["tools", "-C", str(workspace)]) == 2
    assert "$REDLINE_PLUGIN_TIMEOUT: expected a number of seconds" in capsys.readouterr().err


def test_the_plugin_timeout_comes_from_the_config_files(
    workspace: Path,
    tmp_path: Path,
    write_plugin: PluginWriter,
    isolated_user_config: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stuck = write_plugin(tmp_path, "stuck.py", LOOP_FOREVER)
    (isolated_user_config / "config.toml").write_text("plugin_timeout = 0.4\n", "utf-8")
    # An untrusted workspace may lower it (stricter), never raise it.
    (workspace / ".redline").mkdir()
    (workspace / ".redline" / "config.toml").write_text("plugin_timeout = 30\n", "utf-8")
    assert main(["tools", "-C", str(workspace), "--tools", str(stuck)]) == 0
    captured = capsys.readouterr()
    assert "did not finish loading within 0.4 s" in captured.out
    assert "plugin_timeout skipped: this workspace is not trusted" in captured.err
    (workspace / ".redline" / "config.toml").write_text("plugin_timeout = 0.3\n", "utf-8")
    assert main(["tools", "-C", str(workspace), "--tools", str(stuck)]) == 0
    assert "did not finish loading within 0.3 s" in capsys.readouterr().out


# -- defect 5: BaseException from execute, apply and reject -----------------------------------


@pytest.mark.parametrize("exc", sorted(RAISERS))
def test_base_exception_in_execute_is_the_tools_error(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, exc: str
) -> None:
    path = write_plugin(tmp_path, "faulty.py", faulty_tool(execute=RAISERS[exc]))
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}, {"say": "carried on"}])
    session, recorder = session_for(workspace, model, [path])
    with session:
        status = session.prompt("go")
        assert status == "done"
    [end] = [e for e in recorder.of("tool_end") if e["name"] == "faulty"]
    assert end["is_error"]
    assert end["result"]["content"][0]["text"].startswith(f"faulty failed: {exc}")
    assert recorder.of("message_end")[-1]["text"] == "carried on"


@pytest.mark.parametrize("exc", sorted(RAISERS))
def test_async_execute_raising_base_exception(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, exc: str
) -> None:
    source = faulty_tool(execute=RAISERS[exc]).replace("def execute(self", "async def execute(self")
    path = write_plugin(tmp_path, "faulty.py", source)
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}, {"say": "carried on"}])
    session, recorder = session_for(workspace, model, [path])
    with session:
        assert session.prompt("go") == "done"
    [end] = [e for e in recorder.of("tool_end") if e["name"] == "faulty"]
    assert end["is_error"] and f"faulty failed: {exc}" in end["result"]["content"][0]["text"]


@pytest.mark.parametrize("exc", sorted(RAISERS))
def test_base_exception_in_apply_keeps_the_action_pending(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, exc: str
) -> None:
    path = write_plugin(tmp_path, "faulty.py", faulty_tool(execute=PUSH, apply=RAISERS[exc]))
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}])
    session, recorder = session_for(workspace, model, [path], resolver="apply-all")
    with session:
        assert session.prompt("go") == "error"
        assert session.store.count == 1
        [failure] = [e for e in recorder.of("error") if "Apply failed" in e["message"]]
        assert f"Apply failed for Faulty change: {exc}" in failure["message"]
        # The session is still usable: the person can discard it.
        result = session.resolve("discard", "broken plugin")
        assert not result.is_error and session.store.count == 0


@pytest.mark.parametrize("exc", sorted(RAISERS))
def test_base_exception_in_reject_keeps_the_action_pending(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, exc: str
) -> None:
    path = write_plugin(tmp_path, "faulty.py", faulty_tool(execute=PUSH, reject=RAISERS[exc]))
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}])
    session, _recorder = session_for(workspace, model, [path], resolver="human")
    with session:
        assert session.prompt("go") == "awaiting_review"
        result = session.resolve("discard", "no thanks")
        assert result.is_error
        assert f"Discard failed for Faulty change: {exc}" in result.text
        assert session.store.count == 1


# -- defect 6: a stuck execute or apply is abandoned on stop ---------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["plain", "async"])
def test_a_stuck_execute_is_abandoned_on_stop(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, is_async: bool
) -> None:
    execute = (
        "import asyncio\n        while True:\n            await asyncio.sleep(0.05)"
        if is_async
        else "while True:\n            time.sleep(0.05)"
    )
    source = faulty_tool(execute=execute)
    if is_async:
        source = source.replace("def execute(self", "async def execute(self")
    path = write_plugin(tmp_path, "faulty.py", source)
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}, {"say": "never"}])
    session, recorder = session_for(workspace, model, [path])
    with session:
        thread, box = run_in_thread(session, "go")
        recorder.wait_for("tool_start", name="faulty")
        session.abort()
        thread.join(HANG_GUARD)
        assert not thread.is_alive()
        assert box["status"] == "aborted"
    assert recorder.of("agent_end")[-1]["status"] == "aborted"


def test_a_stuck_apply_is_abandoned_on_stop_and_close_returns(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    apply = "while True:\n        time.sleep(0.05)"
    path = write_plugin(tmp_path, "faulty.py", faulty_tool(execute=PUSH, apply=apply))
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}])
    session, recorder = session_for(workspace, model, [path], resolver="apply-all")
    thread, box = run_in_thread(session, "go")
    recorder.wait_for("pending_pushed", label="Faulty change")
    closer = threading.Thread(target=session.close, daemon=True)
    closer.start()
    closer.join(HANG_GUARD)
    thread.join(HANG_GUARD)
    assert not closer.is_alive() and not thread.is_alive()
    assert box["status"] == "aborted"


# -- defect 11: what plugins print ------------------------------------------------------------

PRINTING = """
import sys

print("hello from the import")

from pydantic import BaseModel


class Params(BaseModel):
    pass


class Chatty:
    name = "chatty"
    label = "Chatty"
    description = "Talks too much"
    parameters = Params

    def execute(self, tool_call_id, params):
        print("working on", tool_call_id)
        print("careful!", file=sys.stderr)
        sys.stdout.write("no newline at the end")
        return "done"


def factory(api):
    print("factory says hi")
    return Chatty()
"""


def test_plugin_prints_never_reach_exec_json_and_are_recorded(
    workspace: Path,
    tmp_path: Path,
    write_plugin: PluginWriter,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_plugin(tmp_path, "chatty.py", PRINTING)
    model = plan(tmp_path, [{"call": [{"tool": "chatty", "args": {}}]}, {"say": "ok"}])
    code = main(
        [
            "exec",
            "-C",
            str(workspace),
            "--model",
            model,
            "--prompt",
            "x",
            "--json",
            "--tools",
            str(path),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    events = [json.loads(line) for line in captured.out.splitlines()]  # every line is JSON
    outputs = [(e["stream"], e["text"]) for e in events if e["type"] == "plugin_output"]
    assert ("stdout", "hello from the import") in outputs
    assert ("stdout", "factory says hi") in outputs
    assert any(stream == "stdout" and text.startswith("working on ") for stream, text in outputs)
    assert ("stderr", "careful!") in outputs
    assert ("stdout", "no newline at the end") in outputs
    assert all(
        e["path"] == str(path.resolve()) or e["path"] == "chatty"
        for e in events
        if e["type"] == "plugin_output"
    )
    assert "careful!" not in captured.err
    # ... and the session log has them too.
    [log] = (workspace / ".redline" / "sessions").glob("*.jsonl")
    logged = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()[1:]]
    assert ("stderr", "careful!") in [
        (e["stream"], e["text"]) for e in logged if e["type"] == "plugin_output"
    ]


def test_plugin_prints_while_loading_do_not_mix_into_the_tools_listing(
    workspace: Path,
    tmp_path: Path,
    write_plugin: PluginWriter,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_plugin(tmp_path, "chatty.py", PRINTING)
    assert main(["tools", "-C", str(workspace), "--tools", str(path)]) == 0
    captured = capsys.readouterr()
    assert "hello from the import" not in captured.out
    assert "hello from the import" in captured.err
    assert "  chatty " in captured.out


# -- issue 11: each fact once ---------------------------------------------------------------


def test_a_plugin_error_is_reported_once_by_exec(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_plugin(tmp_path, "bad.py", "raise SystemExit(2)\n")
    model = plan(tmp_path, [{"say": "hi"}])
    code = main(
        ["exec", "-C", str(workspace), "--model", model, "--prompt", "x", "--tools", str(bad)]
    )
    captured = capsys.readouterr()
    assert code == 0
    both = captured.out + captured.err
    assert both.count("bad.py: SystemExit: 2") == 1


def test_the_session_declares_its_plugin_state(workspace: Path, tmp_path: Path) -> None:
    from redline.extensibility.plugins import PluginHost

    session = create_agent_session(workspace, plan(tmp_path, [{"say": "hi"}]), log_session=False)
    with session:
        assert isinstance(session.plugins, PluginHost)
        assert session.plugin_errors == [] and session.untrusted_plugin_dir is None
        with pytest.raises(AttributeError):
            session.plugin_errors = []  # type: ignore[misc]


def test_a_plugin_printing_in_a_loop_cannot_flood_the_events(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    from redline.extensibility.isolation import MAX_LINES

    path = write_plugin(
        tmp_path, "flood.py", faulty_tool(execute="for i in range(1000):\n            print(i)")
    )
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}, {"say": "ok"}])
    session, recorder = session_for(workspace, model, [path])
    with session:
        assert session.prompt("go") == "done"
    lines = [line for event in recorder.of("plugin_output") for line in event["text"].splitlines()]
    assert lines[:MAX_LINES] == [str(i) for i in range(MAX_LINES)]
    assert lines[MAX_LINES:] == [f"({1000 - MAX_LINES} more lines of output not kept)"]


def test_closing_ends_a_persons_resolve_stuck_in_apply(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    apply = "while True:\n        time.sleep(0.05)"
    path = write_plugin(tmp_path, "faulty.py", faulty_tool(execute=PUSH, apply=apply))
    model = plan(tmp_path, [{"call": [{"tool": "faulty", "args": {}}]}])
    session, _recorder = session_for(workspace, model, [path], resolver="human")
    assert session.prompt("go") == "awaiting_review"
    box: dict[str, Any] = {}
    resolver = threading.Thread(
        target=lambda: box.update(result=session.resolve("apply", "looks good")), daemon=True
    )
    resolver.start()
    # The apply has started once the resolution lock is held.
    for _ in range(int(HANG_GUARD / 0.01)):
        if session.store.resolution_lock.locked():
            break
        threading.Event().wait(0.01)
    session.close()
    resolver.join(HANG_GUARD)
    assert not resolver.is_alive()
    assert box["result"].is_error and "closed" in box["result"].text


@pytest.mark.parametrize("exc", sorted(RAISERS))
def test_a_reload_raising_base_exceptions_is_reported(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter, exc: str
) -> None:
    path = write_plugin(tmp_path, "echoer.py", echo_plugin("echoer"))
    session, recorder = session_for(workspace, plan(tmp_path, [{"say": "hi"}]), [path])
    with session:
        assert "echoer" in [tool.name for tool in session.tools]
        write_plugin(tmp_path, "echoer.py", RAISERS[exc] + "\n")
        session.plugins.reload(path)
        assert "echoer" not in [tool.name for tool in session.tools]
        [error] = session.plugin_errors
        assert error.path == str(path.resolve()) and exc in error.message
        assert [e["path"] for e in recorder.of("plugin_error")] == [str(path.resolve())]


def test_ctrl_c_reaches_the_main_thread_when_another_thread_receives_it() -> None:
    # The kernel may hand SIGINT to any thread, e.g. one spinning in plugin code; the main
    # thread waiting for the run must still raise KeyboardInterrupt.
    import concurrent.futures
    import signal

    from redline.extensibility.isolation import wait_interruptibly

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is handled by someone else in this test process")
    future: concurrent.futures.Future[str] = concurrent.futures.Future()
    release = threading.Event()
    bystander = threading.Thread(target=release.wait, daemon=True)
    bystander.start()
    # Hang guard: should the wait not notice the signal, the guard ends it (an untimed
    # wait then raises only once woken by the guard, which the assert below catches).
    guard_fired = threading.Event()

    def guard_ends_the_wait() -> None:
        guard_fired.set()
        future.set_result("never interrupted")

    guard = threading.Timer(HANG_GUARD, guard_ends_the_wait)
    guard.start()
    ident = bystander.ident
    assert ident is not None
    # Sent from yet another thread, to the bystander, while this one waits.
    sender = threading.Timer(0.3, signal.pthread_kill, (ident, signal.SIGINT))
    try:
        with pytest.raises(KeyboardInterrupt):
            sender.start()
            wait_interruptibly(future)
    finally:
        sender.cancel()
        guard.cancel()
        release.set()
    assert not guard_fired.is_set()


TOOL_SUBCLASS = """
from pydantic import BaseModel

from redline.tools.base import Tool


class Params(BaseModel):
    pass


class Native(Tool):
    name = "native"
    label = "Native"
    description = "A plugin's own Tool subclass"
    parameters = Params

    async def execute(self, params, ctx):
        print("native speaking")
        raise SystemExit(5)


def factory(api):
    return Native()
"""


def test_a_plugins_own_tool_subclass_is_isolated_too(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    path = write_plugin(tmp_path, "native.py", TOOL_SUBCLASS)
    model = plan(tmp_path, [{"call": [{"tool": "native", "args": {}}]}, {"say": "fine"}])
    session, recorder = session_for(workspace, model, [path])
    with session:
        assert session.prompt("go") == "done"
    [end] = [e for e in recorder.of("tool_end") if e["name"] == "native"]
    assert end["is_error"] and "native failed: SystemExit: 5" in end["result"]["content"][0]["text"]
    assert [(e["stream"], e["text"]) for e in recorder.of("plugin_output")] == [
        ("stdout", "native speaking")
    ]
