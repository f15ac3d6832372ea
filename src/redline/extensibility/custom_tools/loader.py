"""Find custom tools, build them with their factories and report every plugin that fails.

Sources, first one wins a name: tools passed in by SDK callers (``custom_tools=``),
explicit paths (``--tools`` / ``tool_paths=``), the project folder
``<workspace>/.redline/tools/`` (trusted workspaces only), the user folder
``<user config dir>/tools/`` and the ``redline.tools`` entry-point group. A plugin that
breaks in any way becomes a :class:`PluginError`; it never stops the others.
"""

from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.metadata
import importlib.util
import inspect
import itertools
import logging
import os
import re
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, Literal, TypeVar

from redline.config import PLUGIN_TIMEOUT_ENV
from redline.extensibility.custom_tools.types import (
    CustomToolAdapter,
    CustomToolAPI,
    GuardedTool,
    InvalidCustomTool,
    tool_attr,
)
from redline.extensibility.isolation import (
    Capture,
    OutputSink,
    PluginCrash,
    PluginTimeout,
    call_in_thread,
    safe_str,
)
from redline.paths import user_config_dir
from redline.review.store import PendingActionStore
from redline.tools.base import Tool
from redline.trust import is_trusted

ToolSource = Literal["path", "project", "user", "entry_point", "inline"]

ENTRY_POINT_GROUP = "redline.tools"
RESOLVE_TOOL_NAME = "resolve"
FACTORY_TIMEOUT = 30.0
#: Seconds one plugin (its import and its factories) may take to load before it is
#: reported and skipped; ``REDLINE_PLUGIN_TIMEOUT`` overrides it.
DEFAULT_PLUGIN_TIMEOUT = 10.0

_T = TypeVar("_T")


@dataclass(frozen=True)
class LoadedTool:
    """One tool ready for the session, and where it came from."""

    tool: Tool
    source: ToolSource
    origin: str

    @property
    def name(self) -> str:
        return self.tool.name


@dataclass(frozen=True)
class PluginError:
    """A plugin that did not load (or one tool of it): where, and why."""

    path: str
    message: str
    source: ToolSource

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "source": self.source}


@dataclass
class LoadResult:
    tools: list[LoadedTool] = field(default_factory=list)
    errors: list[PluginError] = field(default_factory=list)
    untrusted_project_dir: Path | None = None
    # Plugin files and folders a reloader should watch (only the ones that were loaded).
    watch_paths: list[Path] = field(default_factory=list)
    # Which source each watched file or folder belongs to, for reload_plugin_file.
    watch_sources: dict[Path, ToolSource] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [loaded.name for loaded in self.tools]

    def source_of(self, path: Path) -> ToolSource:
        """The source a changed plugin file belongs to (its own watch entry or its folder's)."""
        resolved = Path(path).resolve()
        return self.watch_sources.get(resolved) or self.watch_sources.get(resolved.parent, "path")


class PluginLoadError(Exception):
    """A plugin module that loaded but offers nothing usable."""


class PluginTimeoutError(ValueError):
    """A plugin timeout (argument or environment variable) that is not a positive number."""


def parse_plugin_timeout(raw: str, where: str) -> float:
    """``raw`` as a timeout in seconds; raises :class:`PluginTimeoutError` naming ``where``."""
    try:
        value = float(raw)
    except ValueError:
        raise PluginTimeoutError(f"{where}: {raw!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise PluginTimeoutError(f"{where}: {raw!r} must be a positive number of seconds")
    return value


def plugin_timeout() -> float:
    """The load timeout per plugin: ``$REDLINE_PLUGIN_TIMEOUT`` or 10 seconds.

    Raises:
        PluginTimeoutError: the variable is set but not a positive number.
    """
    raw = os.environ.get(PLUGIN_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_PLUGIN_TIMEOUT
    return parse_plugin_timeout(raw, PLUGIN_TIMEOUT_ENV)


# -- where plugins live ----------------------------------------------------------------


def project_tools_dir(cwd: Path) -> Path:
    return Path(cwd).resolve() / ".redline" / "tools"


def user_tools_dir() -> Path:
    return user_config_dir() / "tools"


def is_plugin_file(path: Path) -> bool:
    """``*.py`` files count; names starting with ``_`` or ``.`` are helpers, not plugins."""
    return path.suffix == ".py" and not path.name.startswith(("_", "."))


def plugin_files(folder: Path) -> list[Path]:
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [entry for entry in entries if entry.is_file() and is_plugin_file(entry)]


def iter_entry_points() -> list[importlib.metadata.EntryPoint]:
    # Looked up through the module attribute at call time so tests can monkeypatch it.
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


# -- importing a plugin file -------------------------------------------------------------


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compile from source every time: no ``__pycache__`` beside the plugin, and an edit
    made within the same second as the last load is never hidden by stale bytecode."""

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


_modules_lock = threading.Lock()
_module_counter = itertools.count(1)
_module_by_path: dict[str, str] = {}


def _import_file(path: Path) -> ModuleType:
    key = str(path)
    stem = re.sub(r"\W", "_", path.stem)
    with _modules_lock:
        name = f"_redline_plugin_{stem}_{next(_module_counter)}"
        previous = _module_by_path.pop(key, None)
    if previous is not None:
        sys.modules.pop(previous, None)
    loader = _FreshSourceLoader(name, key)
    spec = importlib.util.spec_from_file_location(name, key, loader=loader)
    if spec is None:
        raise PluginLoadError("cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered before running, as a normal import does: pydantic and dataclasses look
    # the module up by name while the plugin's classes are being built.
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    with _modules_lock:
        _module_by_path[key] = name
    return module


def _forget_file(path: Path) -> None:
    with _modules_lock:
        name = _module_by_path.pop(str(path), None)
    if name is not None:
        sys.modules.pop(name, None)


def describe_exception(exc: BaseException, path: Path | None = None) -> str:
    """``Type: message`` plus the plugin line that raised, never a whole traceback."""
    if isinstance(exc, PluginCrash):
        exc = exc.original
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{type(exc).__name__}: {exc.msg}{where}"
    detail = safe_str(exc)
    text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    if path is not None:
        lines = [
            frame.lineno
            for frame in traceback.extract_tb(exc.__traceback__)
            if frame.filename == str(path)
        ]
        if lines and lines[-1] is not None:
            text += f" (line {lines[-1]})"
    return text


# -- factories ------------------------------------------------------------------------


def _module_factories(module: ModuleType) -> list[Callable[..., Any]]:
    factory = getattr(module, "factory", None)
    if factory is not None:
        if not callable(factory):
            raise PluginLoadError(
                f"'factory' must be a function taking the API, not {type(factory).__name__}"
            )
        return [factory]
    exported = getattr(module, "__all__", None) or ()
    found = [
        getattr(module, name)
        for name in exported
        if isinstance(name, str) and inspect.isfunction(getattr(module, name, None))
    ]
    if not found:
        raise PluginLoadError(
            "no factory: define a module-level 'factory(api)' function, or list one in __all__"
        )
    return found


def run_awaitable(awaitable: Awaitable[_T], timeout: float = FACTORY_TIMEOUT) -> _T:
    """Finish an awaitable from synchronous code, on a private event loop.

    Plugins load in a thread of their own (see :mod:`redline.extensibility.isolation`),
    which never has a running loop, so a private one always fits.
    """

    async def main() -> _T:
        return await asyncio.wait_for(awaitable, timeout)

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(main())
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _call_factory(factory: Callable[..., Any], api: CustomToolAPI) -> list[object]:
    value = factory(api)
    if inspect.isawaitable(value):
        try:
            value = run_awaitable(value)
        except TimeoutError:
            raise PluginLoadError(
                f"the factory did not finish within {FACTORY_TIMEOUT:g} s"
            ) from None
    if value is None:
        raise PluginLoadError("the factory returned None: return a tool or a list of tools")
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def looks_like_tool(value: object) -> bool:
    if isinstance(value, Tool):
        return True
    if isinstance(value, type):
        # A tool class is a factory: called with the API, it makes the tool.
        return False
    return tool_attr(value, "name") is not None and tool_attr(value, "execute") is not None


def _adapt(candidate: object, origin: str, output: OutputSink | None) -> Tool:
    if isinstance(candidate, Tool):
        return GuardedTool(candidate, origin=origin, output=output)
    return CustomToolAdapter(candidate, origin=origin, output=output)


# -- building tools (runs in a plugin thread) ---------------------------------------------

# What a plugin produced: ready tools, and messages for the parts that failed.
Built = list[Tool | str]


def _build_candidates(candidates: Iterable[object], origin: str, api: CustomToolAPI) -> Built:
    built: Built = []
    for index, candidate in enumerate(candidates):
        try:
            built.append(_adapt(candidate, origin, api.output))
        except InvalidCustomTool as exc:
            built.append(str(exc))
        except BaseException as exc:  # plugin code (properties, schemas) may raise anything
            built.append(f"tool #{index + 1} is unusable: {describe_exception(exc)}")
    return built


def _build_factories(
    factories: Iterable[Callable[..., Any]], origin: str, api: CustomToolAPI, path: Path | None
) -> Built:
    built: Built = []
    for factory in factories:
        try:
            candidates = _call_factory(factory, api)
        except PluginLoadError as exc:
            built.append(str(exc))
            continue
        except BaseException as exc:  # SystemExit, KeyboardInterrupt... from the plugin
            name = getattr(factory, "__name__", None) or "factory"
            built.append(f"{name}() raised {describe_exception(exc, path)}")
            continue
        built.extend(_build_candidates(candidates, origin, api))
    return built


def _build_file(path: Path, origin: str, api: CustomToolAPI) -> Built:
    try:
        module = _import_file(path)
    except BaseException as exc:  # an import may raise anything, SystemExit included
        return [describe_exception(exc, path)]
    try:
        factories = _module_factories(module)
    except PluginLoadError as exc:
        return [str(exc)]
    return _build_factories(factories, origin, api, path)


def _build_entry_point(entry_point: importlib.metadata.EntryPoint, api: CustomToolAPI) -> Built:
    try:
        target = entry_point.load()
    except BaseException as exc:
        return [describe_exception(exc)]
    where = f"entry point {entry_point.name} ({entry_point.value})"
    if isinstance(target, ModuleType):
        try:
            factories = _module_factories(target)
        except PluginLoadError as exc:
            return [str(exc)]
        return _build_factories(factories, where, api, None)
    if looks_like_tool(target):
        return _build_candidates([target], where, api)
    if callable(target):
        return _build_factories([target], where, api, None)
    return [f"expected a module, a tool or a factory function, got {type(target).__name__}"]


# -- the collector ----------------------------------------------------------------------


class _Collector:
    """Builds a LoadResult, keeping names unique in source order.

    Plugin code runs in a daemon thread per plugin, bounded by ``timeout``; only the
    bookkeeping (names, errors) happens here.
    """

    def __init__(
        self,
        cwd: Path,
        store: PendingActionStore | None,
        reserved_names: Collection[str],
        logger: logging.Logger,
        *,
        timeout: float | None = None,
        output: OutputSink | None = None,
    ) -> None:
        self.cwd = cwd
        self.store = store
        self.logger = logger
        self.timeout = plugin_timeout() if timeout is None else timeout
        self.output = output
        self.result = LoadResult()
        self.taken: dict[str, str] = {name: "a built-in tool" for name in reserved_names}
        self.taken[RESOLVE_TOOL_NAME] = "redline's built-in resolve tool"
        self.seen_files: set[Path] = set()

    def api_for(self, label: str) -> CustomToolAPI:
        return CustomToolAPI(
            self.cwd,
            self.store,
            logger=self.logger.getChild(re.sub(r"\W", "_", label)),
            output=self.output,
        )

    def error(self, where: str, message: str, source: ToolSource) -> None:
        self.result.errors.append(PluginError(where, message, source))
        self.logger.info("plugin %s: %s", where, message)

    def build(
        self, build: Callable[[], Built], where: str, source: ToolSource, origin: str
    ) -> None:
        """Run ``build`` (plugin code) in its own thread, then add what it made."""
        try:
            built = call_in_thread(
                build,
                name=where,
                timeout=self.timeout,
                capture=Capture(origin, self.output),
            )
        except PluginTimeout:
            self.error(
                where,
                f"did not finish loading within {self.timeout:g} s (its import or factory "
                f"is still running; skipped). Set {PLUGIN_TIMEOUT_ENV} or --plugin-timeout "
                "to allow more time.",
                source,
            )
            return
        except Exception as exc:  # a bug of ours while building: still this plugin's error
            self.error(where, describe_exception(exc), source)
            return
        self.add(built, source, where, origin)

    def add(self, built: Iterable[Tool | str], source: ToolSource, where: str, origin: str) -> None:
        for item in built:
            if isinstance(item, str):
                self.error(where, item, source)
                continue
            tool = item
            owner = self.taken.get(tool.name)
            if owner is not None:
                self.error(
                    where,
                    f"tool {tool.name!r} not loaded: the name is already used by {owner}",
                    source,
                )
                continue
            self.taken[tool.name] = (
                f"entry point {origin}" if source == "entry_point" else f"{origin} ({source})"
            )
            self.result.tools.append(LoadedTool(tool, source, origin))

    def load_file(self, path: Path, source: ToolSource, api: CustomToolAPI | None = None) -> None:
        resolved = path.resolve()
        if resolved in self.seen_files:
            return
        self.seen_files.add(resolved)
        origin = str(resolved)
        file_api = api if api is not None else self.api_for(resolved.stem)
        self.build(partial(_build_file, resolved, origin, file_api), origin, source, origin)

    def load_folder(self, folder: Path, source: ToolSource) -> None:
        for path in plugin_files(folder):
            self.load_file(path, source)

    def watch(self, path: Path, source: ToolSource) -> None:
        resolved = path.resolve()
        if resolved not in self.result.watch_sources:
            self.result.watch_paths.append(resolved)
            self.result.watch_sources[resolved] = source

    def load_inline(self, items: Iterable[object]) -> None:
        for index, item in enumerate(items):
            origin = f"custom_tools[{index}]"
            api = self.api_for(origin)
            if looks_like_tool(item):
                build = partial(_build_candidates, [item], origin, api)
            elif callable(item):
                build = partial(_build_factories, [item], origin, api, None)
            else:
                self.error(
                    origin,
                    f"expected a tool or a factory function, got {type(item).__name__}",
                    "inline",
                )
                continue
            self.build(build, origin, "inline", origin)

    def load_entry_points(self) -> None:
        try:
            entry_points = iter_entry_points()
        except Exception as exc:
            self.error(f"entry points {ENTRY_POINT_GROUP}", describe_exception(exc), "entry_point")
            return
        for entry_point in entry_points:
            where = f"entry point {entry_point.name} ({entry_point.value})"
            api = self.api_for(entry_point.name)
            build = partial(_build_entry_point, entry_point, api)
            self.build(build, where, "entry_point", entry_point.name)


# -- public entry points -------------------------------------------------------------------


def _default_logger(logger: logging.Logger | None) -> logging.Logger:
    return logger if logger is not None else logging.getLogger("redline.plugins")


def load_custom_tools(
    cwd: Path,
    store: PendingActionStore | None,
    *,
    tool_paths: Iterable[str | Path] = (),
    custom_tools: Iterable[object] = (),
    trust: bool = False,
    reserved_names: Collection[str] = (),
    logger: logging.Logger | None = None,
    timeout: float | None = None,
    output: OutputSink | None = None,
) -> LoadResult:
    """Load every custom tool the workspace, the user and installed packages offer.

    Args:
        cwd: the workspace root.
        store: the pending stack the tools push to (``None``: pushing raises).
        tool_paths: plugin files and folders (``--tools``); relative to the process's
            current folder, like any CLI path.
        custom_tools: tools or factories passed in code.
        trust: allow the project folder for this call only (``redline trust`` remembers it).
        reserved_names: the built-in tool names (``resolve`` is always reserved).
        logger: the parent of each plugin's ``api.logger``.
        timeout: seconds each plugin may take to import and build its tools (default
            :func:`plugin_timeout`); a slower one is reported and skipped.
        output: receives what plugins print, ``(origin, stream, text)``; default: the log.

    Returns:
        The tools, one :class:`PluginError` per failure, and what to watch for reloads.
        Plugin failures never raise.

    Raises:
        PluginTimeoutError: no ``timeout`` given and ``$REDLINE_PLUGIN_TIMEOUT`` is bad.
    """
    root = Path(cwd).resolve()
    collector = _Collector(
        root, store, reserved_names, _default_logger(logger), timeout=timeout, output=output
    )
    collector.load_inline(custom_tools)

    for raw in tool_paths:
        path = Path(raw).expanduser().resolve()
        if path.is_dir():
            collector.watch(path, "path")
            collector.load_folder(path, "path")
        elif path.is_file():
            if path.suffix != ".py":
                collector.error(str(path), "not a Python file (*.py)", "path")
                continue
            collector.watch(path, "path")
            collector.load_file(path, "path")
        else:
            collector.error(str(path), "no such file or folder", "path")

    project = project_tools_dir(root)
    if project.is_dir():
        if trust or is_trusted(root):
            collector.watch(project, "project")
            collector.load_folder(project, "project")
        elif plugin_files(project):
            collector.result.untrusted_project_dir = project

    user = user_tools_dir()
    if user.is_dir():
        collector.watch(user, "user")
        collector.load_folder(user, "user")

    collector.load_entry_points()
    return collector.result


def reload_plugin_file(
    path: Path,
    api: CustomToolAPI,
    reserved_names: Collection[str],
    *,
    source: ToolSource = "path",
    timeout: float | None = None,
) -> tuple[list[LoadedTool], list[PluginError]]:
    """Load one plugin file afresh, for a session swapping that file's tools.

    ``reserved_names``: every name the file may not take (built-ins and the tools of all
    other plugins). A deleted file gives no tools and no errors: its tools simply go away.
    """
    resolved = Path(path).resolve()
    if not resolved.is_file():
        _forget_file(resolved)
        return [], []
    collector = _Collector(
        api.cwd, api.store, reserved_names, api.logger, timeout=timeout, output=api.output
    )
    collector.load_file(resolved, source, api=api)
    return collector.result.tools, collector.result.errors


def loaded_by_origin(tools: Iterable[LoadedTool]) -> Mapping[str, list[LoadedTool]]:
    """Group loaded tools by the file (or entry point) they came from."""
    grouped: dict[str, list[LoadedTool]] = {}
    for loaded in tools:
        grouped.setdefault(loaded.origin, []).append(loaded)
    return grouped
