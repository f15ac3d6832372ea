"""Which agent tools redline reviews: the one question a pass-through call asks.

A module without imports, so that a hook call for a tool that writes nothing (a ``Read``)
answers without loading the mapping of tool calls to changes (docs/performance.md).
"""

from __future__ import annotations

from redline.drivers.hooks.values import TYPE_CHECKING

if TYPE_CHECKING:
    from redline.drivers.hooks.payload import HookPayload

#: Claude Code tools that write files (``MultiEdit`` is gone in 2.1.332: it answers "No such
#: tool available" before any hook runs, but older versions send it).
CLAUDE_FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
#: Tools that run commands or reach the network: permission actions with review_shell.
SHELL_TOOLS = {
    "claude": ("Bash", "WebFetch", "WebSearch"),
    # Codex 0.171.0 sends its shell tool (exec_command) as Bash (fixtures/hooks/codex/).
    "codex": ("shell", "Bash", "exec_command", "local_shell"),
    "gemini": ("run_shell_command", "web_fetch", "google_web_search"),
}
#: Tools whose calls become pending actions, per agent.
FILE_TOOLS = {
    "claude": CLAUDE_FILE_TOOLS,
    "codex": ("apply_patch",),
    "gemini": ("write_file", "replace"),
}


def reviewed_tool(payload: HookPayload) -> str | None:
    """``"file"`` for a tool that writes files, ``"shell"`` for one reviewed only with
    ``[hooks] review_shell``, None for the rest (they pass through untouched)."""
    if payload.tool_name in FILE_TOOLS.get(payload.agent, ()):
        return "file"
    if payload.tool_name in SHELL_TOOLS.get(payload.agent, ()):
        return "shell"
    return None
