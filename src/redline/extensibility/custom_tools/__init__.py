"""Custom tools: the factory API, the loader and hot reload.

Importing this package is cheap; the loader pulls in nothing heavy until it runs.
"""

from __future__ import annotations

from redline.extensibility.custom_tools.loader import (
    ENTRY_POINT_GROUP,
    LoadedTool,
    LoadResult,
    PluginError,
    ToolSource,
    load_custom_tools,
    project_tools_dir,
    reload_plugin_file,
    user_tools_dir,
)
from redline.extensibility.custom_tools.reloader import PluginReloader
from redline.extensibility.custom_tools.types import (
    STORE_UNAVAILABLE_MESSAGE,
    CompletedRun,
    CustomTool,
    CustomToolAdapter,
    CustomToolAPI,
    CustomToolError,
    CustomToolFactory,
    PendingActionStoreUnavailable,
    RunTimeout,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "STORE_UNAVAILABLE_MESSAGE",
    "CompletedRun",
    "CustomTool",
    "CustomToolAPI",
    "CustomToolAdapter",
    "CustomToolError",
    "CustomToolFactory",
    "LoadResult",
    "LoadedTool",
    "PendingActionStoreUnavailable",
    "PluginError",
    "PluginReloader",
    "RunTimeout",
    "ToolSource",
    "load_custom_tools",
    "project_tools_dir",
    "reload_plugin_file",
    "user_tools_dir",
]
