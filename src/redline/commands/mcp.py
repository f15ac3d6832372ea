"""``redline mcp``: serve the propose-only MCP tools on stdio (default) or local HTTP."""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is out of range (0-65535)")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    parser.add_argument(
        "--http",
        dest="http_port",
        type=_port,
        default=None,
        metavar="PORT",
        help="serve streamable HTTP on 127.0.0.1:PORT (0 picks one) instead of stdio; "
        "requests need the token printed at start",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio
    import sys
    from pathlib import Path

    root = Path(args.cwd)
    if not root.is_dir():
        print(f"redline mcp: workspace {root} is not a folder", file=sys.stderr)
        return EXIT_BAD_INPUT
    root = root.resolve()
    if args.http_port is None:
        from redline.mcp_server.server import serve_stdio

        asyncio.run(serve_stdio(root))
        return EXIT_OK
    from redline.mcp_server.http import bind, new_token, serve_http

    try:
        sock = bind(args.http_port)
    except OSError as exc:
        print(
            f"redline mcp: cannot listen on 127.0.0.1:{args.http_port}: {exc.strerror or exc}",
            file=sys.stderr,
        )
        return EXIT_FAILED

    def announce(url: str) -> None:
        print(f"redline mcp: serving {root} at {url}", flush=True)
        print("redline mcp: only requests carrying this token are served.", flush=True)

    asyncio.run(serve_http(root, sock, new_token(), announce))
    return EXIT_OK
