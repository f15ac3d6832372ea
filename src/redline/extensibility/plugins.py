"""Wires custom tools into a session: first load, hot reload, and trusting a workspace.

The loader knows how to find and import plugins; this module knows the session: which
names are taken, which tools came from which file, and which events to emit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from redline.agent.session import AgentSession

log = logging.getLogger("redline.plugins")


class PluginManager:
    def __init__(self, session: AgentSession, builtin_names: Sequence[str]) -> None:
        self.session = session
        self.builtin_names = tuple(builtin_names)
        self.loaded: dict[str, list[LoadedTool]] = {}
        self.sources: dict[Path, ToolSource] = {}
        self.reloader: PluginReloader | None = None
        self._lock = threading.Lock()

    # -- loading ------------------------------------------------------------------------
    def load(
        self, custom_tools: Sequence[Any], tool_paths: Sequence[str | Path], trust: bool
    ) -> None:
        result = load_custom_tools(
            self.session.cwd,
            self.session.store,
            tool_paths=tool_paths,
            custom_tools=custom_tools,
            trust=trust,
            reserved_names=self.builtin_names,
            logger=log,
        )
        for loaded in result.tools:
            self._add(loaded)
        self.session.plugin_errors = list(result.errors)
        # Recorded in the session log; clients that subscribe later read plugin_errors.
        for error in result.errors:
            self.session.report_plugin_error(error.path, str(error), error.source)
        self.session.untrusted_plugin_dir = result.untrusted_project_dir
        self.sources = dict(result.watch_sources)
        self.watch_paths = list(result.watch_paths)

    def _add(self, loaded: LoadedTool) -> None:
        self.loaded.setdefault(loaded.origin, []).append(loaded)
        self.session.add_tool(loaded.tool)

    def tool_sources(self) -> dict[str, tuple[ToolSource, str]]:
        """Custom tool name -> (source, origin), for listings."""
        return {
            loaded.name: (loaded.source, loaded.origin)
            for group in self.loaded.values()
            for loaded in group
        }

    # -- hot reload -------------------------------------------------------------------------
    def start_watching(self) -> None:
        if self.reloader is None and self.watch_paths:
            self.reloader = PluginReloader(self.watch_paths, self.reload)
            self.reloader.start()
            self.session.on_close(self.stop_watching)

    def stop_watching(self) -> None:
        if self.reloader is not None:
            self.reloader.stop()
            self.reloader = None

    def _source_of(self, path: Path) -> ToolSource:
        return self.sources.get(path) or self.sources.get(path.parent) or "path"

    def reload(self, path: Path, source: ToolSource | None = None) -> None:
        """Load ``path`` afresh and swap in its tools; emit plugin_loaded or plugin_error."""
        path = path.resolve()
        origin = str(path)
        with self._lock:
            others = [
                loaded.name
                for key, group in self.loaded.items()
                if key != origin
                for loaded in group
            ]
            api = CustomToolAPI(self.session.cwd, self.session.store, logger=log)
            tools, errors = reload_plugin_file(
                path,
                api,
                [*self.builtin_names, *others],
                source=source or self._source_of(path),
            )
            for old in self.loaded.pop(origin, []):
                self.session.remove_tool(old.name)
            for loaded in tools:
                self._add(loaded)
            self.session.plugin_errors = [
                e for e in self.session.plugin_errors if e.path != origin
            ] + list(errors)
        for error in errors:
            self.session.report_plugin_error(error.path, str(error), error.source)
        if tools or not errors:
            names = [loaded.name for loaded in tools]
            what = ", ".join(names) if names else "no tools (file removed or empty)"
            self.session.report_plugin_loaded(origin, names, f"reloaded {path.name}: {what}")

    # -- trust ------------------------------------------------------------------------------
    def trust_workspace(self) -> list[str]:
        from redline.extensibility.trust import trust

        root = self.session.cwd
        trust(root)
        folder = project_tools_dir(root)
        messages = [f"trusted {root}"]
        self.sources[folder] = "project"
        for path in plugin_files(folder):
            self.reload(path, source="project")
            messages.append(f"loaded {path.name}")
        self.session.untrusted_plugin_dir = None
        if self.reloader is not None:
            # Restart so the newly trusted folder is watched too.
            self.stop_watching()
            self.watch_paths.append(folder)
            self.start_watching()
        else:
            self.watch_paths.append(folder)
        return messages


def attach_plugins(
    session: AgentSession,
    *,
    custom_tools: Sequence[Any] = (),
    tool_paths: Sequence[str | Path] = (),
    trust: bool = False,
    watch: bool = False,
) -> PluginManager:
    builtin = [tool.name for tool in session.tools]
    manager = PluginManager(session, builtin)
    manager.load(custom_tools, tool_paths, trust)
    session.plugins = manager
    if watch:
        manager.start_watching()
    return manager


__all__ = ["PluginError", "PluginManager", "attach_plugins"]
