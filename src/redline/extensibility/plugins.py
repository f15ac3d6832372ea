"""The plugin host a session owns: first load, hot reload, errors, trusting a workspace.

The loader knows how to find and import plugins; the host knows the session through a
few narrow callables (add or remove a tool, emit an event), so the session never has
attributes poked into it from outside.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from redline.extensibility.custom_tools import (
    CustomToolAPI,
    LoadedTool,
    PluginError,
    PluginReloader,
    ToolSource,
    load_custom_tools,
    project_tools_dir,
    reload_plugin_file,
)
from redline.extensibility.custom_tools.loader import plugin_files
from redline.review.store import PendingActionStore
from redline.tools.base import Tool

log = logging.getLogger("redline.plugins")

#: ``emit(type, **data)``: how the host reports (``plugin_error``, ``plugin_loaded``,
#: ``plugin_output``); the session passes its event stream's ``emit``.
Emit = Callable[..., object]


class PluginHost:
    """Loads, reloads and reports the custom tools of one session.

    Args:
        cwd: the workspace root.
        store: the session's pending stack, handed to every plugin's API.
        emit: reports events (``plugin_error``, ``plugin_loaded``, ``plugin_output``).
        add_tool: puts a loaded tool into the session.
        remove_tool: takes a tool (by name) out of the session.
    """

    def __init__(
        self,
        *,
        cwd: Path,
        store: PendingActionStore,
        emit: Emit,
        add_tool: Callable[[Tool], None],
        remove_tool: Callable[[str], None],
    ) -> None:
        self.cwd = cwd
        self.store = store
        self._emit = emit
        self._add_tool = add_tool
        self._remove_tool = remove_tool
        self._reserved: tuple[str, ...] = ()
        self._loaded: dict[str, list[LoadedTool]] = {}
        self._sources: dict[Path, ToolSource] = {}
        self._watch_paths: list[Path] = []
        self._errors: list[PluginError] = []
        self._untrusted_dir: Path | None = None
        self._timeout: float | None = None
        self._reloader: PluginReloader | None = None
        self._lock = threading.RLock()

    # -- what the session exposes ---------------------------------------------------------
    @property
    def errors(self) -> list[PluginError]:
        """Every plugin that failed to load (or reload), one error per problem."""
        with self._lock:
            return list(self._errors)

    @property
    def untrusted_dir(self) -> Path | None:
        """The project's ``.redline/tools/`` when it holds plugins that were not loaded
        because the workspace is not trusted; otherwise ``None``."""
        return self._untrusted_dir

    @property
    def watching(self) -> bool:
        """Whether plugin files are being watched for hot reload."""
        return self._reloader is not None

    def tool_sources(self) -> dict[str, tuple[ToolSource, str]]:
        """Custom tool name -> (source, origin), for listings."""
        with self._lock:
            return {
                loaded.name: (loaded.source, loaded.origin)
                for group in self._loaded.values()
                for loaded in group
            }

    # -- loading ---------------------------------------------------------------------------
    def load(
        self,
        *,
        custom_tools: Sequence[Any] = (),
        tool_paths: Sequence[str | Path] = (),
        trust: bool = False,
        reserved_names: Sequence[str] = (),
        timeout: float | None = None,
    ) -> None:
        """Load every plugin the workspace, the user and installed packages offer.

        Each failure becomes a ``plugin_error`` event and an entry of :attr:`errors`;
        none raises. A plugin that takes longer than ``timeout`` seconds to import and
        build its tools is reported and skipped (default: ``$REDLINE_PLUGIN_TIMEOUT``,
        else 10 s).

        Raises:
            PluginTimeoutError: ``timeout`` is None and ``$REDLINE_PLUGIN_TIMEOUT`` is bad.
        """
        self._reserved = tuple(reserved_names)
        self._timeout = timeout
        result = load_custom_tools(
            self.cwd,
            self.store,
            tool_paths=tool_paths,
            custom_tools=custom_tools,
            trust=trust,
            reserved_names=self._reserved,
            logger=log,
            timeout=timeout,
            output=self.output,
        )
        with self._lock:
            for loaded in result.tools:
                self._add(loaded)
            self._errors = list(result.errors)
            self._untrusted_dir = result.untrusted_project_dir
            self._sources = dict(result.watch_sources)
            self._watch_paths = list(result.watch_paths)
        for error in result.errors:
            self._report(error)

    def _add(self, loaded: LoadedTool) -> None:
        self._loaded.setdefault(loaded.origin, []).append(loaded)
        self._add_tool(loaded.tool)

    def _report(self, error: PluginError) -> None:
        self._emit("plugin_error", path=error.path, message=str(error), source=error.source)

    def output(self, origin: str, stream: str, text: str) -> None:
        """Report what plugin ``origin`` printed to ``stream`` as a ``plugin_output`` event."""
        self._emit("plugin_output", path=origin, stream=stream, text=text)

    # -- hot reload --------------------------------------------------------------------------
    def start_watching(self) -> None:
        """Reload a plugin file whenever it changes (until :meth:`stop_watching`)."""
        with self._lock:
            if self._reloader is None and self._watch_paths:
                self._reloader = PluginReloader(list(self._watch_paths), self.reload)
                self._reloader.start()

    def stop_watching(self) -> None:
        """Stop watching plugin files; a no-op when not watching."""
        with self._lock:
            reloader, self._reloader = self._reloader, None
        if reloader is not None:
            reloader.stop()

    def _source_of(self, path: Path) -> ToolSource:
        return self._sources.get(path) or self._sources.get(path.parent) or "path"

    def reload(self, path: Path, source: ToolSource | None = None) -> None:
        """Load ``path`` afresh and swap in its tools.

        Emits ``plugin_loaded``, or one ``plugin_error`` per problem (the file's tools
        are then gone until it is fixed). A deleted file just removes its tools.
        """
        path = path.resolve()
        origin = str(path)
        with self._lock:
            others = [
                loaded.name
                for key, group in self._loaded.items()
                if key != origin
                for loaded in group
            ]
            api = CustomToolAPI(self.cwd, self.store, logger=log, output=self.output)
            tools, errors = reload_plugin_file(
                path,
                api,
                [*self._reserved, *others],
                source=source or self._source_of(path),
                timeout=self._timeout,
            )
            for old in self._loaded.pop(origin, []):
                self._remove_tool(old.name)
            for loaded in tools:
                self._add(loaded)
            self._errors = [e for e in self._errors if e.path != origin] + list(errors)
        for error in errors:
            self._report(error)
        if tools or not errors:
            names = [loaded.name for loaded in tools]
            what = ", ".join(names) if names else "no tools (file removed or empty)"
            self._emit(
                "plugin_loaded",
                path=origin,
                tools=names,
                message=f"reloaded {path.name}: {what}",
            )

    # -- trust -------------------------------------------------------------------------------
    def trust_workspace(self) -> list[str]:
        """Trust the workspace, remember it, and load its project plugins now.

        Returns:
            One line per step (``trusted <root>``, ``loaded <file>``) for the caller to show.
        """
        from redline.trust import trust

        root = self.cwd
        trust(root)
        folder = project_tools_dir(root)
        messages = [f"trusted {root}"]
        with self._lock:
            self._sources[folder] = "project"
        for path in plugin_files(folder):
            self.reload(path, source="project")
            messages.append(f"loaded {path.name}")
        with self._lock:
            self._untrusted_dir = None
            self._watch_paths.append(folder)
            restart = self._reloader is not None
        if restart:
            # Restart so the newly trusted folder is watched too.
            self.stop_watching()
            self.start_watching()
        return messages


__all__ = ["PluginError", "PluginHost"]
