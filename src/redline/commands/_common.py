"""Options several subcommands share (standard library only: keeps --help fast)."""

from __future__ import annotations

import argparse


def add_workspace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-C",
        dest="cwd",
        metavar="PATH",
        default=".",
        help="workspace root (default: the current folder)",
    )


def add_tool_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tools",
        dest="tool_paths",
        metavar="PATH",
        action="append",
        default=[],
        help="load custom tools from this file or folder (repeatable)",
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="trust this workspace's project plugins (.redline/tools/)",
    )


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        metavar="M",
        default=None,
        help="scripted:PLAN.json, openai:MODEL or anthropic:MODEL "
        "(default: $REDLINE_MODEL, then .redline/config.toml)",
    )
    parser.add_argument("--prompt", metavar="TEXT", default=None, help="the task for the agent")
    parser.add_argument(
        "--base-url",
        dest="base_url",
        metavar="URL",
        default=None,
        help="OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)",
    )


def not_ready(name: str) -> int:
    import sys

    print(f"redline {name}: not available in this build yet", file=sys.stderr)
    return 2
