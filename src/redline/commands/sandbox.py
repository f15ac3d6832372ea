"""``redline sandbox [--json]``: which sandbox checks would use here, and the proof.

Probes run inside it (checks/sandbox_probes.py) try to write the workspace, ``$HOME``, the
host's ``/tmp`` and redline's state key, to reach ``$SSH_AUTH_SOCK``, the Docker socket,
the session bus and a TCP port on 127.0.0.1, and to leave a process behind; each row is
``blocked`` or ``REACHABLE``. Exit status: 0 when every probe was blocked, 1 when anything
was reachable, the sandbox is off or cannot be made, 2 for bad input.
"""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option

EXIT_OK = 0
EXIT_REACHABLE = 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Checks run the proposal's code, so they run sandboxed (docs/checks.md): on Linux in "
        "bubblewrap, on macOS under sandbox-exec. Only your own config.toml can turn it off "
        '([check_runner] sandbox = "off").'
    )
    add_workspace_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from redline.checks import sandbox as sandboxes
    from redline.checks.config import load_checks
    from redline.checks.sandbox_probes import (
        REACHABLE,
        Probe,
        ProbeError,
        run_probes,
    )
    from redline.config import ConfigError
    from redline.workspace.names import json_dumps

    root = Path(args.cwd).expanduser().resolve()
    try:
        config = load_checks(root)
    except ConfigError as exc:
        print(f"redline sandbox: {exc}", file=sys.stderr)
        return EXIT_REACHABLE
    for note in config.notes:
        print(f"redline sandbox: {note}", file=sys.stderr)
    sandbox = config.sandbox
    name = sandboxes.describe()
    problem = ""
    probes: list[Probe] = []
    if not sandbox.enabled:
        name = "off"
        problem = (
            'your config.toml says [check_runner] sandbox = "off": checks run unsandboxed, '
            "with your rights"
        )
    elif why := sandboxes.unavailable():
        problem = f"sandbox unavailable: {why}"
    else:
        try:
            probes = run_probes(sandbox, root, macos=sandboxes.kind() == "sandbox-exec")
        except ProbeError as exc:
            problem = str(exc)
    reachable = bool(problem) or any(p.result == REACHABLE for p in probes)
    if args.json:
        data: dict[str, object] = {"sandbox": name, "probes": [p.to_dict() for p in probes]}
        if problem:
            data["error"] = problem
        print(json_dumps(data))
    else:
        print(f"sandbox: {name}")
        if problem:
            print(f"  {problem}")
        width = max((len(p.name) for p in probes), default=0)
        for probe in probes:
            detail = f"  ({probe.detail})" if probe.detail else ""
            print(f"  {probe.name.ljust(width)}  {probe.result}{detail}")
        if probes and not reachable:
            print("Every probe was blocked.")
    return EXIT_REACHABLE if reachable else EXIT_OK
