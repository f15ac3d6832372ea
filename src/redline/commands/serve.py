"""``redline serve``: the dashboard in a web browser, behind a token and Host/Origin checks.

Every browser tab that opens the printed URL gets its own dashboard process, started with
the same options as ``redline`` (or ``redline demo`` with ``--demo``). See docs/serve.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from redline.commands import dashboard

if TYPE_CHECKING:
    from pathlib import Path

    from redline.config import Settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {value}")
    return value


def _allowed_host(text: str) -> str:
    from redline.serve_guard import allowed_host

    try:
        return allowed_host(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            str(exc).removeprefix(f"--allow-host {text!r}: ")
        ) from None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Prints a URL holding a secret token; only requests with it (and with this server's "
        "Host and Origin) get through. Every browser tab runs its own dashboard. "
        "See docs/serve.md."
    )
    dashboard.configure(parser)
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to listen on (default: {DEFAULT_HOST}, this machine only; any other "
        "address prints a warning)",
    )
    parser.add_argument(
        "--allow-host",
        dest="allow_hosts",
        metavar="NAME",
        type=_allowed_host,
        action="append",
        default=[],
        help="also accept requests whose Host is NAME (or NAME:PORT): a name of this machine "
        "the browser uses that redline does not know (repeatable; see docs/serve.md)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port to listen on (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="serve the scripted demo instead (each tab gets a fresh copy of the sample project)",
    )
    parser.add_argument(
        "--no-wait",
        dest="no_wait",
        action="store_true",
        help="with --demo: skip the demo plan's pauses",
    )


def _dashboard_argv(args: argparse.Namespace, root: str) -> list[str]:
    """The dashboard options given to ``redline serve``, for the command each tab runs."""
    import os

    reference = argparse.ArgumentParser(add_help=False)
    dashboard.configure(reference)
    argv = ["-C", root]
    for action in reference._actions:
        if action.dest == "cwd":
            continue
        value = getattr(args, action.dest, None)
        if value is None or value is False or value == []:
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        option = (longs or action.option_strings)[0]
        if isinstance(action, argparse._StoreTrueAction):
            argv.append(option)
        elif isinstance(action, argparse._AppendAction):
            for item in value:
                item = os.path.abspath(item) if action.dest == "tool_paths" else item
                argv.append(f"{option}={item}")
        else:
            # --option=value, so a value starting with "-" is not read as an option.
            argv.append(f"{option}={value}")
    return argv


def _given_dashboard_options(args: argparse.Namespace) -> list[str]:
    argv = _dashboard_argv(args, "")
    return [item.split("=", 1)[0] for item in argv[2:]]


def child_command(args: argparse.Namespace, root: str) -> list[str]:
    """The command line textual-serve runs for every browser connection."""
    base = [sys.executable, "-m", "redline"]
    if args.demo:
        return [*base, "demo", *(["--no-wait"] if args.no_wait else [])]
    return [*base, *_dashboard_argv(args, root)]


def run(args: argparse.Namespace) -> int:
    import shlex

    from redline.commands._common import command_settings, workspace_root
    from redline.serve_guard import host_warning

    if args.demo:
        extra = _given_dashboard_options(args)
        if extra:
            print(
                f"redline serve: --demo runs the scripted demo on its own sample copy; "
                f"it takes no dashboard options (got {', '.join(extra)})",
                file=sys.stderr,
            )
            return 2
        where = "the demo (a fresh sample copy per browser tab)"
        root_text = ""
    else:
        if args.no_wait:
            print("redline serve: --no-wait is for --demo", file=sys.stderr)
            return 2
        root = workspace_root(args)
        if not root.is_dir():
            print(f"redline serve: workspace {str(root)!r} is not a folder", file=sys.stderr)
            return 2
        root = root.resolve()
        from redline.config import ConfigError

        try:
            settings = command_settings(args, root, {"resolver": "human"})
        except ConfigError as exc:
            print(f"redline serve: {exc}", file=sys.stderr)
            return 2
        for warning in settings.warnings:
            print(f"redline serve: warning: {warning}", file=sys.stderr)
        if (failed := _check_agent(args, root, settings)) is not None:
            return failed
        where = f"the dashboard on {root}"
        root_text = str(root)
    if (host_note := host_warning(args.host)) is not None:
        print(f"redline serve: warning: {host_note}", file=sys.stderr, flush=True)
    command = shlex.join(child_command(args, root_text))
    return _serve(command, args.host, args.port, where, tuple(args.allow_hosts))


def _check_agent(args: argparse.Namespace, root: Path, settings: Settings) -> int | None:
    """Build what every tab's dashboard would start with (the model's provider, or the
    ``--agent`` spec) once, before serving: a bad ``--model`` is an error here, in the
    terminal, instead of a page that never shows a dashboard. None when it builds."""
    import asyncio

    if args.agent is not None:
        from redline.drivers.acp.spec import AgentSpecError, resolve_agent

        try:
            resolve_agent(args.agent, root, trusted=True if args.trust else None)
        except (AgentSpecError, OSError) as exc:
            print(f"redline serve: {exc}", file=sys.stderr)
            return 2
        return None
    if not settings.model:
        return None  # the dashboard opens and says how to configure one
    from redline.drivers.model.providers import ModelSpecError, ProviderError, create_provider

    try:
        provider = create_provider(
            settings.model,
            cwd=root,
            base_url=settings.base_url,
            timeout=settings.timeout,
            api_key_env=settings.api_key_env,
        )
    except ModelSpecError as exc:
        print(f"redline serve: {exc}", file=sys.stderr)
        return 2
    except (ProviderError, ValueError, OSError) as exc:
        print(
            f"redline serve: cannot start the agent with {settings.model!r}: {exc}",
            file=sys.stderr,
        )
        return 1
    asyncio.run(provider.aclose())
    return None


def _serve(
    command: str, host: str, port: int, where: str, allow_hosts: tuple[str, ...] = ()
) -> int:
    import asyncio

    from redline.commands._serve_server import GuardedServer, configure_logging, serve
    from redline.serve_guard import ServeGuard, new_token

    def ready(guard: ServeGuard) -> None:
        print(f"redline serve: {where}, open in a browser:", flush=True)
        for url in guard.urls():
            print(f"  {url}", flush=True)
        print(
            "Only this URL's token opens it; each tab runs its own dashboard. Ctrl+C stops.",
            flush=True,
        )

    configure_logging()
    server = GuardedServer(command, host=host, port=port, title="redline")
    try:
        asyncio.run(serve(server, token=new_token(), on_ready=ready, allow_hosts=allow_hosts))
    except OSError as exc:
        print(
            f"redline serve: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr
        )
        return 1
    return 0
