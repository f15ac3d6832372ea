"""``redline``: open the review dashboard on a workspace."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from redline.commands._common import (
    add_model_options,
    add_tool_options,
    add_workspace_option,
    command_settings,
    workspace_root,
)

if TYPE_CHECKING:
    from redline.drivers.model.session import AgentSession

NO_MODEL = (
    "No model is configured, so the agent cannot run. Pass --model (scripted:PLAN.json, "
    'openai:MODEL or anthropic:MODEL), set REDLINE_MODEL, or put model = "..." in '
    ".redline/config.toml or your user config.toml (see docs/configuration.md). "
    "To see redline work with no key and no network: redline demo"
)


DASHBOARD_RESOLVERS = ("human", "agent")


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    add_model_options(parser)
    parser.add_argument(
        "--resolver",
        choices=DASHBOARD_RESOLVERS,
        default=None,
        help="who resolves pending actions (default: resolver in the config files, else human)",
    )
    add_tool_options(parser)
    parser.add_argument(
        "--agent",
        metavar="AGENT",
        default=None,
        help="review an external ACP agent instead of --model (see docs/agents.md)",
    )
    parser.add_argument(
        "--all",
        dest="all_workspaces",
        action="store_true",
        help="open the inbox over every workspace redline knows on this machine: each "
        "one's pending actions in one list, decided in their own workspace (docs/inbox.md)",
    )
    parser.add_argument(
        "--offer-tools",
        action="store_true",
        help="offer redline's MCP tools (ast_edit, propose_edit, propose_write, "
        "review_status, await_review) to the --agent in session/new (see docs/mcp.md)",
    )


def _run_agent(args: argparse.Namespace, root: Path) -> int:
    import sys
    from typing import Any, cast

    from redline.drivers.acp.session import AcpSession
    from redline.drivers.acp.spec import AgentSpecError, resolve_agent

    if args.model:
        print("redline: --agent and --model exclude each other: pick one", file=sys.stderr)
        return 2
    if args.resolver == "agent":
        print("redline: --resolver agent does not apply to --agent", file=sys.stderr)
        return 2
    try:
        spec = resolve_agent(args.agent, root, trusted=True if args.trust else None)
        session = AcpSession(root, spec, trust=bool(args.trust), offer_tools=args.offer_tools)
    except (AgentSpecError, OSError) as exc:
        print(f"redline: {exc}", file=sys.stderr)
        return 2
    return launch(cast(Any, session), prompt=args.prompt)


def run_team(args: argparse.Namespace) -> int:
    """``redline --queue URL``: the team dashboard (no workspace needed)."""
    import sys

    from redline.teamqueue.settings import (
        TeamQueueError,
        check_url,
        queue_settings,
        reviewer_warning,
    )

    extra = [
        flag
        for flag, value in (
            ("--model", args.model),
            ("--agent", args.agent),
            ("--prompt", args.prompt),
        )
        if value
    ]
    if extra:
        print(
            f"redline: {', '.join(extra)} do not apply to the team dashboard (--queue URL): "
            "it reviews the team queue and runs no agent",
            file=sys.stderr,
        )
        return 2
    try:
        url = check_url(args.queue.strip(), "--queue")
        warning = reviewer_warning(queue_settings(None).reviewer)
        if warning:
            print(f"redline: {warning}", file=sys.stderr)
        # Only an explicit ``-C PATH`` opens it showing that workspace's actions (f shows
        # the others); started anywhere else it shows every workspace.
        only = None
        if getattr(args, "cwd_given", False) and getattr(args, "cwd", None) is not None:
            from redline.teamqueue.settings import workspace_id

            root = workspace_root(args)
            if not root.is_dir():
                print(f"redline: workspace {str(root)!r} is not a folder", file=sys.stderr)
                return 2
            only = workspace_id(root.resolve(), queue_settings(root.resolve()).workspace_id)
    except TeamQueueError as exc:
        print(f"redline: {exc}", file=sys.stderr)
        return 2
    from redline.teamqueue.client import TeamClient

    client = TeamClient(url)
    try:
        client.check()  # before the screen opens: a wrong URL is one clear line
        shown = client.whoami()  # who the server records as deciding
    except TeamQueueError as exc:
        client.close()
        print(f"redline: {exc}", file=sys.stderr)
        return 1
    from redline.tui.team.app import TeamApp

    try:
        with _team_presence(args):
            code = TeamApp(client, reviewer=shown, workspace=only).run()
    finally:
        client.close()
    return int(code or 0)


def _team_presence(args: argparse.Namespace) -> AbstractContextManager[object]:
    """A team dashboard watches the workspace it was started in, when that one has a
    queue (``redline workspaces list`` shows it; no notification is sent there)."""
    from contextlib import nullcontext

    from redline.workspace.presence import present

    try:
        root = workspace_root(args).resolve()
    except (OSError, RuntimeError):
        return nullcontext()
    if not (root / ".redline" / "queue").is_dir():
        return nullcontext()
    return present(root, "team")


def run_all(args: argparse.Namespace) -> int:
    """``redline --all``: the inbox over every known workspace (no workspace needed)."""
    import sys

    if getattr(args, "queue", None) is not None:
        print(
            "redline: --all is every workspace known on this machine and --queue URL the "
            "team queue: pick one",
            file=sys.stderr,
        )
        return 2
    extra = [
        flag
        for flag, value in (
            ("--model", args.model),
            ("--agent", args.agent),
            ("--prompt", args.prompt),
            ("--resolver", args.resolver),
            ("--offer-tools", args.offer_tools),
            ("-C", getattr(args, "cwd_given", False)),
        )
        if value
    ]
    if extra:
        print(
            f"redline: {', '.join(extra)} do not apply to redline --all: it reviews every "
            "known workspace's queue and runs no agent",
            file=sys.stderr,
        )
        return 2
    from redline.paths import UserDirError
    from redline.review.all_source import AllWorkspacesSource
    from redline.workspace.known import known_dir

    try:
        known_dir()
    except UserDirError as exc:
        print(f"redline: {exc}", file=sys.stderr)
        return 1
    from redline.tui.all_app import AllWorkspacesApp
    from redline.workspace.presence import present

    source = AllWorkspacesSource()
    try:
        # Watching every workspace: no notification is sent while it runs (issue 46).
        with present(None, "all"):
            code = AllWorkspacesApp(source).run()
    finally:
        source.close()
    return int(code or 0)


def run(args: argparse.Namespace) -> int:
    import sys

    if getattr(args, "all_workspaces", False):
        return run_all(args)
    if getattr(args, "queue", None) is not None:
        return run_team(args)
    root = workspace_root(args)
    if not root.is_dir():
        print(f"redline: workspace {str(root)!r} is not a folder", file=sys.stderr)
        return 2
    root = root.resolve()
    from redline.teamqueue.background import following
    from redline.workspace.presence import present

    # With a team queue configured, the dashboard follows its workspace while it runs; what
    # the follower reports is printed once the dashboard has closed the screen. Its
    # presence file says a person watches this workspace (no notification is needed).
    lines: list[str] = []
    try:
        with following(root, log=lines.append), present(root, "dashboard"):
            return _run(args, root)
    finally:
        for line in lines:
            print(f"redline: team queue: {line}", file=sys.stderr)


def _run(args: argparse.Namespace, root: Path) -> int:
    import sys

    if args.agent is not None:
        return _run_agent(args, root)
    if args.offer_tools:
        print("redline: --offer-tools needs --agent AGENT", file=sys.stderr)
        return 2
    from redline.config import ConfigError

    try:
        settings = command_settings(args, root, {"resolver": "human"})
    except ConfigError as exc:
        print(f"redline: {exc}", file=sys.stderr)
        return 2
    notices: list[str] = []
    for warning in settings.warnings:
        print(f"redline: warning: {warning}", file=sys.stderr)
        notices.append(f"Config: {warning}")
    resolver = settings.resolver
    if resolver not in DASHBOARD_RESOLVERS:
        warning = (
            f"{settings.origins.get('resolver', 'config')}: resolver {resolver!r} is for "
            "redline exec; the dashboard uses human"
        )
        print(f"redline: warning: {warning}", file=sys.stderr)
        notices.append(f"Config: {warning}")
        resolver = "human"
    model = settings.model
    from redline.drivers.model.providers import ModelSpecError
    from redline.drivers.model.providers.base import Provider, ProviderError
    from redline.sdk import create_agent_session

    target: str | Provider = model or ""
    if not model:
        from redline.drivers.model.providers.unconfigured import UnconfiguredProvider

        target = UnconfiguredProvider(NO_MODEL)
        notices.append(NO_MODEL)
    try:
        session = create_agent_session(
            root,
            target,
            resolver=resolver,
            tool_paths=tuple(args.tool_paths),
            trust=bool(args.trust),
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            timeout=settings.timeout,
            max_turns=settings.max_turns,
            watch_plugins=True,
            plugin_timeout=settings.plugin_timeout,
            source_kind="agent",
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


def launch(session: AgentSession, *, prompt: str | None = None, notices: Sequence[str] = ()) -> int:
    """Open the dashboard on an already-created session; closes the session afterwards."""
    from redline.tui.app import RedlineApp

    try:
        app = RedlineApp(
            session,
            initial_prompt=prompt,
            # What crash recovery rolled back when the session opened the workspace.
            startup_notices=[*session.recovery_messages, *notices],
        )
        code = app.run()
    finally:
        session.close()
    return int(code or 0)
