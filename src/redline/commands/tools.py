"""``redline tools``: every available tool and every plugin load error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from redline.commands._common import add_tool_options, add_workspace_option

if TYPE_CHECKING:
    from redline.tools.base import Tool


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_tool_options(parser)
    from redline.commands.exec_ import add_plugin_timeout_option

    add_plugin_timeout_option(parser)


def _builtin_tools() -> list[Tool]:
    from redline.tools.resolve import ResolveTool

    try:
        from redline.tools.registry import builtin_tools
    except ImportError:
        tools: list[Tool] = []
    else:
        tools = list(builtin_tools())
    if not any(tool.name == "resolve" for tool in tools):
        tools.append(ResolveTool())
    return tools


def _summary(description: str, limit: int = 72) -> str:
    """The first sentence, cut to fit one terminal line."""
    text = " ".join(description.split())
    first = text.split(". ", 1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def run(args: argparse.Namespace) -> int:
    root = Path(args.cwd).expanduser()
    if not root.is_dir():
        print(f"redline tools: -C {args.cwd}: not a folder", file=sys.stderr)
        return 2
    for raw in args.tool_paths:
        if not Path(raw).expanduser().exists():
            print(f"redline tools: --tools {raw}: no such file or folder", file=sys.stderr)
            return 2
    root = root.resolve()

    from redline.commands._common import command_settings
    from redline.config import ConfigError
    from redline.extensibility.custom_tools import load_custom_tools
    from redline.review.store import PendingActionStore

    try:
        settings = command_settings(args, root)
    except ConfigError as exc:
        print(f"redline tools: {exc}", file=sys.stderr)
        return 2
    for warning in settings.warnings:
        print(f"redline: warning: {warning}", file=sys.stderr)

    def plugin_output(origin: str, stream: str, text: str) -> None:
        # Never mixed into the listing: what a plugin prints while loading goes to stderr.
        for line in text.splitlines():
            print(f"redline: {origin} ({stream}): {line}", file=sys.stderr)

    builtins = _builtin_tools()
    result = load_custom_tools(
        root,
        PendingActionStore(),
        tool_paths=args.tool_paths,
        trust=args.trust,
        reserved_names=[tool.name for tool in builtins],
        timeout=settings.plugin_timeout,
        output=plugin_output,
    )
    width = max([len(tool.name) for tool in builtins] + [len(t.name) for t in result.tools] + [4])

    print(f"Built-in tools ({len(builtins)}):")
    for tool in builtins:
        mark = "[hidden] " if tool.hidden else ""
        print(f"  {tool.name:<{width}}  {mark}{_summary(tool.description)}")

    print()
    print(f"Custom tools ({len(result.tools)}):")
    if not result.tools:
        print("  (none)")
    for loaded in result.tools:
        print(f"  {loaded.name:<{width}}  [{loaded.source}] {loaded.origin}")
        if loaded.tool.description.strip():
            print(f"  {'':<{width}}  {_summary(loaded.tool.description)}")

    if result.untrusted_project_dir is not None:
        print()
        print(
            f"Not loaded: project plugins in {result.untrusted_project_dir} "
            "(this workspace is not trusted)."
        )
        print(f"  To allow them: redline trust -C {root}   (or pass --trust for one run)")

    if result.errors:
        print()
        print(f"Plugin errors ({len(result.errors)}):")
        for error in result.errors:
            print(f"  [{error.source}] {error}")
    return 0
