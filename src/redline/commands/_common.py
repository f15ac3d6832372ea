"""Options several subcommands share (standard library only: keeps --help fast)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from redline.config import Settings


def add_workspace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-C",
        dest="cwd",
        metavar="PATH",
        default=None,
        help="workspace root (default: the nearest folder up from here holding .redline/ "
        "or .git/, else the current folder)",
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
        help="trust this workspace for this run: its plugins (.redline/tools/) and "
        "its whole .redline/config.toml",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text}")
    return value


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        metavar="M",
        default=None,
        help="scripted:PLAN.json, openai:MODEL or anthropic:MODEL "
        "(default: $REDLINE_MODEL, then model in the config files)",
    )
    parser.add_argument("--prompt", metavar="TEXT", default=None, help="the task for the agent")
    parser.add_argument(
        "--base-url",
        dest="base_url",
        metavar="URL",
        default=None,
        help="OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio)",
    )
    parser.add_argument(
        "--api-key-env",
        dest="api_key_env",
        metavar="NAME",
        default=None,
        help="environment variable holding the API key (default: OPENAI_API_KEY or "
        "ANTHROPIC_API_KEY)",
    )
    parser.add_argument(
        "--max-turns",
        dest="max_turns",
        type=_positive_int,
        metavar="N",
        default=None,
        help="most model turns in one run (default: 50)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        default=None,
        help="model request timeout (default: 60)",
    )


def workspace_root(args: argparse.Namespace) -> Path:
    """The workspace the command works on: ``-C``, else found upwards (see cli.main)."""
    from pathlib import Path

    from redline.config import find_workspace_root

    if getattr(args, "cwd", None) is None:
        return find_workspace_root(Path.cwd())
    return Path(args.cwd).expanduser()


def command_settings(
    args: argparse.Namespace, root: Path, defaults: dict[str, Any] | None = None
) -> Settings:
    """The merged settings for a command: its options over the config files.

    Raises ``redline.config.ConfigError`` for an unusable config file.
    """
    from redline.config import DEFAULTS, load_settings

    given = {key: getattr(args, key) for key in DEFAULTS if hasattr(args, key)}
    return load_settings(
        root,
        command_line=given,
        defaults=defaults,
        trusted=True if getattr(args, "trust", False) else None,
    )


def resume_line(session_id: str, named: str | None, decisions: int) -> str:
    """The first line of a resumed run: which session, and how it was chosen."""
    how = "named with --session" if named else "the newest `redline exec` session here"
    told = f"{decisions} decision{'' if decisions == 1 else 's'} made meanwhile"
    return f"Resuming session {session_id} ({how}); telling the agent about {told}."


def not_ready(name: str) -> int:
    import sys

    print(f"redline {name}: not available in this build yet", file=sys.stderr)
    return 2


def split_only(values: list[str] | None) -> list[str] | None:
    """``--only`` values, comma-separated lists split (a value is never empty)."""
    if values is None:
        return None
    out: list[str] = []
    for value in values:
        parts = [part.strip() for part in value.split(",")]
        if not all(parts):
            raise ValueError(f"--only {value!r}: an empty PATH or PATH#N in the list")
        out.extend(parts)
    return out
