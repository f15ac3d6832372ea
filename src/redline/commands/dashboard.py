"""``redline``: open the review dashboard on a workspace."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from redline.commands._common import (
    add_model_options,
    add_tool_options,
    add_workspace_option,
)

NO_MODEL = (
    "No model is configured, so the agent cannot run. Pass --model (scripted:PLAN.json, "
    'openai:MODEL or anthropic:MODEL), set REDLINE_MODEL, or put model = "..." in '
    ".redline/config.toml. To see redline work with no key and no network: redline demo"
)


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_model_options(parser)
    parser.add_argument(
        "--resolver",
        choices=("human", "agent"),
        default="human",
        help="who resolves pending actions (default: human)",
    )
    add_tool_options(parser)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    root = Path(args.cwd).expanduser().resolve()
    if not root.is_dir():
        print(f"redline: workspace {args.cwd!r} is not a folder", file=sys.stderr)
        return 2
    from redline.agent.providers import default_model
    from redline.config import ConfigError

    try:
        model = args.model or default_model(root)
    except ConfigError as exc:
        print(f"redline: {exc}", file=sys.stderr)
        return 2
    notices: list[str] = []
    session: object
    if not model:
        from redline.tui.offline import OfflineSession

        session = OfflineSession(root, NO_MODEL)
        notices.append(NO_MODEL)
    else:
        from redline.agent.providers import ModelSpecError
        from redline.agent.providers.base import ProviderError
        from redline.sdk import create_agent_session

        try:
            session = create_agent_session(
                root,
                model,
                resolver=args.resolver,
                tool_paths=tuple(args.tool_paths),
                trust=bool(args.trust),
                base_url=args.base_url,
            )
        except ModelSpecError as exc:
            print(f"redline: {exc}", file=sys.stderr)
            return 2
        except (ProviderError, ValueError, OSError) as exc:
            print(f"redline: cannot start the agent with {model!r}: {exc}", file=sys.stderr)
            return 1
    return launch(
        session,
        prompt=args.prompt if model else None,
        notices=notices,
    )


def launch(session: object, *, prompt: str | None = None, notices: Sequence[str] = ()) -> int:
    """Open the dashboard on an already-created session; closes the session afterwards."""
    from redline.tui.app import RedlineApp

    try:
        app = RedlineApp(
            session,  # type: ignore[arg-type]
            initial_prompt=prompt,
            # What crash recovery rolled back when the session opened the workspace.
            startup_notices=[*getattr(session, "recovery_messages", ()), *notices],
        )
        code = app.run()
    finally:
        close = getattr(session, "close", None)
        if callable(close):
            close()
    return int(code or 0)
