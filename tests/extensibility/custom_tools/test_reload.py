from __future__ import annotations

import threading
from pathlib import Path

import pytest

from redline.extensibility.custom_tools import (
    CustomToolAPI,
    PluginReloader,
    load_custom_tools,
    reload_plugin_file,
)
from redline.extensibility.custom_tools import loader as loader_module
from redline.review.store import PendingActionStore
from redline.tools.base import ToolContext

from .conftest import PluginWriter, echo_plugin


@pytest.fixture(autouse=True)
def _no_host_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_module, "iter_entry_points", lambda: [])


async def run_tool(tool: object, root: Path, text: str) -> str:
    ctx = ToolContext(cwd=root, store=None)
    result = await tool.execute({"text": text}, ctx)  # type: ignore[attr-defined]
    return str(result.text)


async def test_reloading_an_edited_file_changes_behaviour(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    path = write_plugin(tmp_path / "p", "greet.py", echo_plugin("greet", "v1:"))
    first = load_custom_tools(workspace, PendingActionStore(), tool_paths=[path])
    assert await run_tool(first.tools[0].tool, workspace, "x") == "v1:x"

    # Same size, same second: only a fresh compile can tell the versions apart.
    write_plugin(tmp_path / "p", "greet.py", echo_plugin("greet", "v2:"))
    api = CustomToolAPI(workspace, PendingActionStore())
    tools, errors = reload_plugin_file(path, api, reserved_names=["read"])
    assert errors == []
    assert [(t.name, t.source, t.origin) for t in tools] == [("greet", "path", str(path.resolve()))]
    assert await run_tool(tools[0].tool, workspace, "x") == "v2:x"
    # The tool object loaded before keeps working with its own code.
    assert await run_tool(first.tools[0].tool, workspace, "x") == "v1:x"


def test_reload_reports_a_broken_edit_and_respects_reserved_names(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    path = write_plugin(tmp_path / "p", "greet.py", echo_plugin("greet"))
    api = CustomToolAPI(workspace, None)
    path.write_text("def factory(api):\n    return [\n", encoding="utf-8")
    tools, errors = reload_plugin_file(path, api, reserved_names=[], source="user")
    assert tools == []
    assert len(errors) == 1 and errors[0].source == "user"
    assert str(errors[0]).startswith(f"{path.resolve()}: SyntaxError: ")

    write_plugin(tmp_path / "p", "greet.py", echo_plugin("other_plugins_name"))
    tools, errors = reload_plugin_file(path, api, reserved_names=["other_plugins_name"])
    assert tools == []
    assert "already used by a built-in tool" in errors[0].message


def test_reload_of_a_deleted_file_gives_nothing(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    path = write_plugin(tmp_path / "p", "gone.py", echo_plugin("gone"))
    load_custom_tools(workspace, None, tool_paths=[path])
    path.unlink()
    assert reload_plugin_file(path, CustomToolAPI(workspace, None), []) == ([], [])


def test_dispatch_picks_plugin_files_only(tmp_path: Path, write_plugin: PluginWriter) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    single = write_plugin(tmp_path / "elsewhere", "solo.py", "")
    reloaded: list[Path] = []
    reloader = PluginReloader([folder, single], reloaded.append)
    handed = reloader.dispatch(
        [
            folder / "a.py",
            str(folder / "a.py"),
            folder / "_helper.py",
            folder / "notes.txt",
            folder / "sub" / "deep.py",
            single,
            tmp_path / "elsewhere" / "neighbour.py",
        ]
    )
    expected = sorted([(folder / "a.py").resolve(), single.resolve()])
    assert handed == expected and reloaded == expected


def test_dispatch_survives_a_failing_callback(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    calls: list[Path] = []

    def reload(path: Path) -> None:
        calls.append(path)
        raise RuntimeError("session bug")

    reloader = PluginReloader([folder], reload)
    reloader.dispatch([folder / "a.py", folder / "b.py"])
    assert [p.name for p in calls] == ["a.py", "b.py"]


def test_without_existing_paths_the_reloader_is_idle(tmp_path: Path) -> None:
    reloader = PluginReloader([tmp_path / "missing"], lambda path: None)
    reloader.start()
    assert reloader.ready.is_set()
    reloader.stop()


def test_real_watcher_reports_an_edited_plugin(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    folder = tmp_path / "tools"
    path = write_plugin(folder, "live.py", echo_plugin("live", "old:"))
    changed = threading.Event()
    seen: list[Path] = []

    def reload(changed_path: Path) -> None:
        seen.append(changed_path)
        if changed_path.name == "live.py":
            changed.set()

    with PluginReloader([folder], reload) as reloader:
        assert reloader.ready.wait(10), "the watcher never started"
        write_plugin(folder, "live.py", echo_plugin("live", "new:"))
        write_plugin(folder, "ignored.txt", "not a plugin")
        assert changed.wait(10), "no reload for the edited plugin"
    assert all(p.suffix == ".py" for p in seen)
    tools, errors = reload_plugin_file(path, CustomToolAPI(workspace, None), [])
    assert errors == [] and tools[0].name == "live"
