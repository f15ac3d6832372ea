"""redline: a coding-agent runtime where every change waits for review.

The SDK's public names are importable from here (``from redline import
create_agent_session, PendingResolved``); the modules behind them may move between
releases, these names do not.
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing ``typing``: `import redline` is the first thing
#: every ``redline hook`` call (each agent tool call) does (type checkers read it as true).
TYPE_CHECKING = False

__version__ = "0.1.0"

_EVENTS = "redline.review.events"
_RESOLVE = "redline.review.resolve"
_PREVIEW = "redline.workspace.preview"

# Public names, imported on first use so `import redline` (and `redline --help`) stay fast.
_EXPORTS = {
    # sessions
    "create_agent_session": "redline.sdk",
    "AgentSession": "redline.drivers.model.session",
    "SessionError": "redline.drivers.model.session",
    "Provider": "redline.drivers.model.providers.base",
    # events: what session.subscribe() listeners receive
    "Event": _EVENTS,
    "EventListener": _EVENTS,
    "EventStream": _EVENTS,
    "EventFormatError": _EVENTS,
    "event_from_dict": _EVENTS,
    "AgentState": _EVENTS,
    "RunStatus": _EVENTS,
    "AgentStart": _EVENTS,
    "AgentEnd": _EVENTS,
    "TurnStart": _EVENTS,
    "TurnEnd": _EVENTS,
    "MessageStart": _EVENTS,
    "MessageDelta": _EVENTS,
    "MessageEnd": _EVENTS,
    "TokenUsage": _EVENTS,
    "ToolStart": _EVENTS,
    "ToolUpdate": _EVENTS,
    "ToolEnd": _EVENTS,
    "PendingPushed": _EVENTS,
    "PendingResolved": _EVENTS,
    "PendingStale": _EVENTS,
    "PendingReplaced": _EVENTS,
    "PendingRebased": _EVENTS,
    "ResolutionFailed": _EVENTS,
    "Undone": _EVENTS,
    "PluginLoaded": _EVENTS,
    "PluginFailed": _EVENTS,
    "PluginOutput": _EVENTS,
    "Notice": _EVENTS,
    "ErrorEvent": _EVENTS,
    "UnknownEvent": _EVENTS,
    # the review stack and its resolutions
    "PendingAction": "redline.review.store",
    "PendingActionStore": "redline.review.store",
    "ToolResult": "redline.review.result",
    "resolve_pending": _RESOLVE,
    "edit_pending": _RESOLVE,
    "ResolveOutcome": _RESOLVE,
    "ResolvedAction": _RESOLVE,
    "EditOutcome": _RESOLVE,
    # the review core
    "ReviewSession": "redline.review.session",
    "Decision": "redline.review.session",
    # previews
    "Preview": _PREVIEW,
    "FileModify": _PREVIEW,
    "FileCreate": _PREVIEW,
    "FileDelete": _PREVIEW,
    "FileRename": _PREVIEW,
    "sha256_bytes": _PREVIEW,
    # custom tools
    "Tool": "redline.tools.base",
    "ToolContext": "redline.tools.base",
    "PREVIEW_BANNER": "redline.tools.base",
    "CustomToolAPI": "redline.extensibility.custom_tools.types",
    "CustomToolFactory": "redline.extensibility.custom_tools.types",
}

if TYPE_CHECKING:
    from typing import Any

    from redline.drivers.model.providers.base import Provider
    from redline.drivers.model.session import AgentSession, SessionError
    from redline.extensibility.custom_tools.types import CustomToolAPI, CustomToolFactory
    from redline.review.events import (
        AgentEnd,
        AgentStart,
        AgentState,
        ErrorEvent,
        Event,
        EventFormatError,
        EventListener,
        EventStream,
        MessageDelta,
        MessageEnd,
        MessageStart,
        Notice,
        PendingPushed,
        PendingRebased,
        PendingReplaced,
        PendingResolved,
        PendingStale,
        PluginFailed,
        PluginLoaded,
        PluginOutput,
        ResolutionFailed,
        RunStatus,
        TokenUsage,
        ToolEnd,
        ToolStart,
        ToolUpdate,
        TurnEnd,
        TurnStart,
        Undone,
        UnknownEvent,
        event_from_dict,
    )
    from redline.review.resolve import (
        EditOutcome,
        ResolvedAction,
        ResolveOutcome,
        edit_pending,
        resolve_pending,
    )
    from redline.review.result import ToolResult
    from redline.review.session import Decision, ReviewSession
    from redline.review.store import PendingAction, PendingActionStore
    from redline.sdk import create_agent_session
    from redline.tools.base import PREVIEW_BANNER, Tool, ToolContext
    from redline.workspace.preview import (
        FileCreate,
        FileDelete,
        FileModify,
        FileRename,
        Preview,
        sha256_bytes,
    )


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'redline' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "PREVIEW_BANNER",
    "AgentEnd",
    "AgentSession",
    "AgentStart",
    "AgentState",
    "CustomToolAPI",
    "CustomToolFactory",
    "Decision",
    "EditOutcome",
    "ErrorEvent",
    "Event",
    "EventFormatError",
    "EventListener",
    "EventStream",
    "FileCreate",
    "FileDelete",
    "FileModify",
    "FileRename",
    "MessageDelta",
    "MessageEnd",
    "MessageStart",
    "Notice",
    "PendingAction",
    "PendingActionStore",
    "PendingPushed",
    "PendingRebased",
    "PendingReplaced",
    "PendingResolved",
    "PendingStale",
    "PluginFailed",
    "PluginLoaded",
    "PluginOutput",
    "Preview",
    "Provider",
    "ResolutionFailed",
    "ResolveOutcome",
    "ResolvedAction",
    "ReviewSession",
    "RunStatus",
    "SessionError",
    "TokenUsage",
    "Tool",
    "ToolContext",
    "ToolEnd",
    "ToolResult",
    "ToolStart",
    "ToolUpdate",
    "TurnEnd",
    "TurnStart",
    "Undone",
    "UnknownEvent",
    "__version__",
    "create_agent_session",
    "edit_pending",
    "event_from_dict",
    "resolve_pending",
    "sha256_bytes",
]
