"""redline: a coding-agent runtime where every change waits for review."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public names, imported on first use so `import redline` (and `redline --help`) stay fast.
_EXPORTS = {
    "create_agent_session": "redline.sdk",
    "AgentSession": "redline.drivers.model.session",
    "SessionError": "redline.drivers.model.session",
    "Event": "redline.review.events",
    "PendingAction": "redline.review.store",
    "PendingActionStore": "redline.review.store",
    "ToolResult": "redline.review.result",
    "resolve_pending": "redline.review.resolve",
    "Preview": "redline.workspace.preview",
    "FileModify": "redline.workspace.preview",
    "FileCreate": "redline.workspace.preview",
    "FileDelete": "redline.workspace.preview",
    "FileRename": "redline.workspace.preview",
    "Tool": "redline.tools.base",
    "ToolContext": "redline.tools.base",
    "Provider": "redline.drivers.model.providers.base",
    "CustomToolAPI": "redline.extensibility.custom_tools.types",
    "CustomToolFactory": "redline.extensibility.custom_tools.types",
}

if TYPE_CHECKING:
    from redline.drivers.model.providers.base import Provider
    from redline.drivers.model.session import AgentSession, SessionError
    from redline.extensibility.custom_tools.types import CustomToolAPI, CustomToolFactory
    from redline.review.events import Event
    from redline.review.resolve import resolve_pending
    from redline.review.result import ToolResult
    from redline.review.store import PendingAction, PendingActionStore
    from redline.sdk import create_agent_session
    from redline.tools.base import Tool, ToolContext
    from redline.workspace.preview import FileCreate, FileDelete, FileModify, FileRename, Preview


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'redline' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentSession",
    "CustomToolAPI",
    "CustomToolFactory",
    "Event",
    "FileCreate",
    "FileDelete",
    "FileModify",
    "FileRename",
    "PendingAction",
    "PendingActionStore",
    "Preview",
    "Provider",
    "SessionError",
    "Tool",
    "ToolContext",
    "ToolResult",
    "__version__",
    "create_agent_session",
    "resolve_pending",
]
