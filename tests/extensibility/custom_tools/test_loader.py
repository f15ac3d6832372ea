from __future__ import annotations

import asyncio
import sys
import types
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from redline import trust
from redline.extensibility.custom_tools import load_custom_tools
from redline.extensibility.custom_tools import loader as loader_module
from redline.extensibility.custom_tools.loader import LoadResult, PluginError
from redline.review.store import PendingActionStore
from redline.tools.base import ToolContext

from .conftest import PluginWriter, echo_plugin

REAL_ITER_ENTRY_POINTS = loader_module.iter_entry_points


def no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader_module, "iter_entry_points", lambda: [])


@pytest.fixture(autouse=True)
def _no_host_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests must never pick up plugins installed on the host.
    no_entry_points(monkeypatch)


def by_name(result: LoadResult) -> dict[str, tuple[str, str]]:
    return {t.name: (t.source, t.origin) for t in result.tools}


async def call(result: LoadResult, name: str, args: dict[str, Any], root: Path) -> str:
    tool = next(t.tool for t in result.tools if t.name == name)
    outcome = await tool.execute(args, ToolContext(cwd=root, store=None))  # type: ignore[arg-type]
    return outcome.text


def user_tools(config_dir: Path) -> Path:
    return config_dir / "tools"


# -- sources ---------------------------------------------------------------------------


async def test_explicit_file_and_folder(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    single = write_plugin(tmp_path / "one", "alpha.py", echo_plugin("alpha", "A:"))
    write_plugin(tmp_path / "many", "beta.py", echo_plugin("beta", "B:"))
    write_plugin(tmp_path / "many", "gamma.py", echo_plugin("gamma", "G:"))
    write_plugin(tmp_path / "many", "_helper.py", "raise RuntimeError('never imported')")
    write_plugin(tmp_path / "many", "notes.txt", "not python")

    result = load_custom_tools(workspace, None, tool_paths=[single, tmp_path / "many"])
    assert result.errors == []
    assert by_name(result) == {
        "alpha": ("path", str(single.resolve())),
        "beta": ("path", str((tmp_path / "many" / "beta.py").resolve())),
        "gamma": ("path", str((tmp_path / "many" / "gamma.py").resolve())),
    }
    assert await call(result, "beta", {"text": "hi"}, workspace) == "B:hi"
    assert result.watch_paths == [single.resolve(), (tmp_path / "many").resolve()]
    assert result.source_of(tmp_path / "many" / "new.py") == "path"


def test_missing_or_wrong_explicit_paths_are_reported(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x")
    result = load_custom_tools(workspace, None, tool_paths=[tmp_path / "nope", tmp_path / "x.txt"])
    assert [str(e) for e in result.errors] == [
        f"{(tmp_path / 'nope').resolve()}: no such file or folder",
        f"{(tmp_path / 'x.txt').resolve()}: not a Python file (*.py)",
    ]
    assert result.tools == []


def test_untrusted_project_folder_is_reported_not_loaded(
    workspace: Path, write_plugin: PluginWriter
) -> None:
    project = workspace / ".redline" / "tools"
    write_plugin(project, "proj.py", "raise SystemExit('must not run')")
    result = load_custom_tools(workspace, None)
    assert result.tools == [] and result.errors == []
    assert result.untrusted_project_dir == project.resolve()
    assert result.watch_paths == []


def test_trusted_project_folder_loads(workspace: Path, write_plugin: PluginWriter) -> None:
    project = workspace / ".redline" / "tools"
    write_plugin(project, "proj.py", echo_plugin("proj"))

    once = load_custom_tools(workspace, None, trust=True)
    assert by_name(once) == {"proj": ("project", str((project / "proj.py").resolve()))}
    assert once.untrusted_project_dir is None
    assert not trust.is_trusted(workspace), "--trust must not be remembered"

    trust.trust(workspace)
    remembered = load_custom_tools(workspace, None)
    assert remembered.names == ["proj"]
    assert remembered.source_of(project / "later.py") == "project"
    trust.revoke(workspace)
    assert load_custom_tools(workspace, None).untrusted_project_dir is not None


def test_empty_untrusted_project_folder_is_not_mentioned(workspace: Path) -> None:
    (workspace / ".redline" / "tools").mkdir(parents=True)
    assert load_custom_tools(workspace, None).untrusted_project_dir is None


def test_user_folder_loads(
    workspace: Path, isolated_user_config: Path, write_plugin: PluginWriter
) -> None:
    write_plugin(user_tools(isolated_user_config), "mine.py", echo_plugin("mine"))
    result = load_custom_tools(workspace, None)
    assert by_name(result) == {
        "mine": ("user", str((user_tools(isolated_user_config) / "mine.py").resolve()))
    }


class EpParams(BaseModel):
    value: int = 0


def ep_factory(api: Any) -> dict[str, Any]:
    return {
        "name": "from_ep",
        "description": "entry point tool",
        "parameters": EpParams,
        "execute": lambda call_id, params: f"ep {params.value}",
    }


def ep_broken_factory(api: Any) -> Any:
    raise RuntimeError("ep factory exploded")


def install_entry_points(monkeypatch: pytest.MonkeyPatch, entries: dict[str, str]) -> None:
    points = [EntryPoint(name, value, "redline.tools") for name, value in entries.items()]

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        return points if group == "redline.tools" else []

    # Through importlib.metadata itself, as a real installed package would be found.
    monkeypatch.setattr(loader_module, "iter_entry_points", REAL_ITER_ENTRY_POINTS)
    monkeypatch.setattr("importlib.metadata.entry_points", fake_entry_points)


async def test_entry_points_load_and_broken_ones_are_reported(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("redline_test_ep_module")
    module.factory = lambda api: {  # type: ignore[attr-defined]
        "name": "from_module",
        "parameters": EpParams,
        "execute": lambda c, p: "module",
    }
    monkeypatch.setitem(sys.modules, "redline_test_ep_module", module)
    install_entry_points(
        monkeypatch,
        {
            "good": f"{__name__}:ep_factory",
            "mod": "redline_test_ep_module",
            "broken": f"{__name__}:ep_broken_factory",
            "missing": "redline_no_such_module_xyz:factory",
        },
    )
    result = load_custom_tools(workspace, None)
    assert by_name(result) == {
        "from_ep": ("entry_point", "good"),
        "from_module": ("entry_point", "mod"),
    }
    assert await call(result, "from_ep", {"value": 7}, workspace) == "ep 7"
    messages = {e.path: e.message for e in result.errors}
    assert messages == {
        f"entry point broken ({__name__}:ep_broken_factory)": (
            "ep_broken_factory() raised RuntimeError: ep factory exploded"
        ),
        "entry point missing (redline_no_such_module_xyz:factory)": (
            "ModuleNotFoundError: No module named 'redline_no_such_module_xyz'"
        ),
    }
    assert all(e.source == "entry_point" for e in result.errors)


async def test_inline_tools_and_factories(workspace: Path) -> None:
    store = PendingActionStore()
    seen_api: list[Any] = []

    def inline_factory(api: Any) -> list[dict[str, Any]]:
        seen_api.append(api)
        return [
            {"name": "one", "parameters": EpParams, "execute": lambda c, p: "1"},
            {"name": "two", "parameters": EpParams, "execute": lambda c, p: "2"},
        ]

    class ToolClass:
        name = "from_class"
        parameters = EpParams

        def __init__(self, api: Any) -> None:
            self.api = api

        def execute(self, call_id: str, params: EpParams) -> str:
            return f"class sees {self.api.cwd.name}"

    direct = {"name": "direct", "parameters": EpParams, "execute": lambda c, p: "d"}
    result = load_custom_tools(
        workspace, store, custom_tools=[inline_factory, direct, 5, ToolClass]
    )
    assert by_name(result) == {
        "one": ("inline", "custom_tools[0]"),
        "two": ("inline", "custom_tools[0]"),
        "direct": ("inline", "custom_tools[1]"),
        "from_class": ("inline", "custom_tools[3]"),
    }
    assert [str(e) for e in result.errors] == [
        "custom_tools[2]: expected a tool or a factory function, got int"
    ]
    assert await call(result, "from_class", {}, workspace) == "class sees ws"
    assert seen_api[0].store is store and seen_api[0].cwd == workspace.resolve()


# -- precedence -------------------------------------------------------------------------


def test_precedence_first_source_wins_and_clashes_are_reported(
    workspace: Path,
    tmp_path: Path,
    isolated_user_config: Path,
    monkeypatch: pytest.MonkeyPatch,
    write_plugin: PluginWriter,
) -> None:
    explicit = write_plugin(tmp_path / "explicit", "shared.py", echo_plugin("shared", "path:"))
    project = write_plugin(
        workspace / ".redline" / "tools", "shared.py", echo_plugin("shared", "project:")
    )
    write_plugin(workspace / ".redline" / "tools", "proj_only.py", echo_plugin("proj_only"))
    user = write_plugin(user_tools(isolated_user_config), "shared.py", echo_plugin("shared"))
    write_plugin(user_tools(isolated_user_config), "proj_clash.py", echo_plugin("proj_only"))
    install_entry_points(monkeypatch, {"clash": f"{__name__}:shared_ep"})

    inline = {"name": "inline_first", "parameters": EpParams, "execute": lambda c, p: "i"}
    result = load_custom_tools(
        workspace, None, tool_paths=[explicit], custom_tools=[inline], trust=True
    )
    assert by_name(result) == {
        "inline_first": ("inline", "custom_tools[0]"),
        "shared": ("path", str(explicit.resolve())),
        "proj_only": ("project", str((project.parent / "proj_only.py").resolve())),
    }
    taken_by_path = f"the name is already used by {explicit.resolve()} (path)"
    assert [(e.source, e.message) for e in result.errors] == [
        ("project", f"tool 'shared' not loaded: {taken_by_path}"),
        (
            "user",
            "tool 'proj_only' not loaded: the name is already used by "
            f"{(project.parent / 'proj_only.py').resolve()} (project)",
        ),
        ("user", f"tool 'shared' not loaded: {taken_by_path}"),
        ("entry_point", f"tool 'shared' not loaded: {taken_by_path}"),
    ]
    assert result.errors[2].path == str(user.resolve())


def shared_ep(api: Any) -> dict[str, Any]:
    return {"name": "shared", "parameters": EpParams, "execute": lambda c, p: "ep"}


def test_builtin_and_resolve_names_are_reserved(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    folder = tmp_path / "plugins"
    write_plugin(folder, "a_read.py", echo_plugin("read"))
    write_plugin(folder, "b_resolve.py", echo_plugin("resolve"))
    write_plugin(folder, "c_fine.py", echo_plugin("fine"))
    result = load_custom_tools(workspace, None, tool_paths=[folder], reserved_names=["read"])
    assert result.names == ["fine"]
    assert [e.message for e in result.errors] == [
        "tool 'read' not loaded: the name is already used by a built-in tool",
        "tool 'resolve' not loaded: the name is already used by redline's built-in resolve tool",
    ]


# -- broken plugins ----------------------------------------------------------------------

BROKEN: dict[str, tuple[str, str]] = {
    "syntax.py": ("def factory(api):\n    return (\n", "SyntaxError: "),
    "importer.py": ("import redline_surely_missing_module\n", "ModuleNotFoundError: No module"),
    "raiser.py": (
        "def factory(api):\n    raise ValueError('factory broke')\n",
        "factory() raised ValueError: factory broke (line 2)",
    ),
    "badparams.py": (
        "class T:\n    name = 'badparams'\n    parameters = dict\n"
        "    def execute(self, c, p):\n        return ''\n\n"
        "def factory(api):\n    return T()\n",
        "tool 'badparams': parameters must be a pydantic BaseModel subclass, got dict",
    ),
    "noname.py": (
        "from pydantic import BaseModel\n\nclass P(BaseModel):\n    pass\n\n"
        "class T:\n    parameters = P\n    def execute(self, c, p):\n        return ''\n\n"
        "def factory(api):\n    return T()\n",
        "a tool (T) has no name: set name to a non-empty string",
    ),
    "nofactory.py": ("X = 1\n", "no factory: define a module-level 'factory(api)' function"),
    "returnsnone.py": (
        "def factory(api):\n    return None\n",
        "the factory returned None: return a tool or a list of tools",
    ),
    "exits.py": ("import sys\nsys.exit(4)\n", "SystemExit: 4 (line 2)"),
}


def test_each_broken_plugin_is_isolated_and_reported(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    folder = tmp_path / "plugins"
    for filename, (source, _expected) in BROKEN.items():
        write_plugin(folder, filename, source)
    write_plugin(folder, "working.py", echo_plugin("working"))
    write_plugin(folder, "zclash.py", echo_plugin("working"))

    result = load_custom_tools(workspace, None, tool_paths=[folder])
    assert result.names == ["working"]
    errors = {Path(e.path).name: e for e in result.errors}
    assert set(errors) == {*BROKEN, "zclash.py"}
    for filename, (_source, expected) in BROKEN.items():
        error = errors[filename]
        assert expected in error.message, (filename, error.message)
        assert str(error) == f"{(folder / filename).resolve()}: {error.message}"
        assert "Traceback" not in error.message
    assert errors["syntax.py"].message.endswith("(line 2)")
    assert "already used by" in errors["zclash.py"].message


def test_one_bad_tool_does_not_sink_its_siblings(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    source = """
    from pydantic import BaseModel

    class P(BaseModel):
        pass

    def make(name, params=P):
        return {"name": name, "parameters": params, "execute": lambda c, p: name}

    def factory(api):
        return [make("first"), make("bad", params=int), make("third")]
    """
    path = write_plugin(tmp_path / "p", "multi.py", source)
    result = load_custom_tools(workspace, None, tool_paths=[path])
    assert result.names == ["first", "third"]
    assert [e.message for e in result.errors] == [
        "tool 'bad': parameters must be a pydantic BaseModel subclass, got int"
    ]


def test_plugin_error_reads_path_then_cause() -> None:
    error = PluginError("/x/y.py", "SyntaxError: invalid syntax (line 3)", "path")
    assert str(error) == "/x/y.py: SyntaxError: invalid syntax (line 3)"
    assert error.to_dict() == {
        "path": "/x/y.py",
        "message": "SyntaxError: invalid syntax (line 3)",
        "source": "path",
    }


# -- factory shapes ------------------------------------------------------------------------

ASYNC_PLUGIN = """
import asyncio
from pydantic import BaseModel

class P(BaseModel):
    pass

async def make_tools(api):
    await asyncio.sleep(0)
    return [{"name": "async_made", "parameters": P, "execute": lambda c, p: "async"}]

__all__ = ["make_tools"]
"""


def test_async_factory_named_in_all(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    path = write_plugin(tmp_path / "p", "asyncplug.py", ASYNC_PLUGIN)
    result = load_custom_tools(workspace, None, tool_paths=[path])
    assert result.errors == [] and result.names == ["async_made"]


async def test_async_factory_while_a_loop_is_running(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    asyncio.get_running_loop()  # this test runs inside pytest-asyncio's loop
    path = write_plugin(tmp_path / "p", "asyncplug.py", ASYNC_PLUGIN)
    result = load_custom_tools(workspace, None, tool_paths=[path])
    assert result.errors == [] and result.names == ["async_made"]


def test_plugin_with_future_annotations_and_dataclass(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    source = """
    from __future__ import annotations

    from dataclasses import dataclass
    from typing import Literal

    from pydantic import BaseModel


    @dataclass
    class Config:
        mode: Literal["a", "b"] = "a"


    class Params(BaseModel):
        mode: Literal["a", "b"]
        count: int | None = None


    class Tool:
        name = "annotated"
        label = "Annotated"
        description = "uses postponed annotations"
        parameters = Params

        def execute(self, tool_call_id: str, params: Params) -> str:
            return f"{params.mode}{Config().mode}"


    def factory(api):
        return Tool()
    """
    path = write_plugin(tmp_path / "p", "annotated.py", source)
    result = load_custom_tools(workspace, None, tool_paths=[path])
    assert result.errors == []
    assert result.tools[0].tool.parameters_schema()["properties"]["mode"]["enum"] == ["a", "b"]


def test_loading_leaves_no_bytecode_beside_plugins(
    workspace: Path, tmp_path: Path, write_plugin: PluginWriter
) -> None:
    folder = tmp_path / "p"
    write_plugin(folder, "clean.py", echo_plugin("clean"))
    load_custom_tools(workspace, None, tool_paths=[folder])
    assert not (folder / "__pycache__").exists()
