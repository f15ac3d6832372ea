"""``redline demo``: the scripted demo on a fresh copy of the bundled sample project."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEMO_PROMPT = (
    "Tidy up the inventory package: log through the module loggers, simplify the emptiness "
    "checks, fix the price bug, add a changelog and give the stock files the right suffix."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--headless",
        action="store_true",
        help="print the events instead of opening the dashboard",
    )
    parser.add_argument(
        "--resolver",
        choices=("human", "agent", "apply-all", "discard-all"),
        default=None,
        help="who resolves (dashboard default: human; headless default: agent)",
    )
    parser.add_argument("--no-wait", action="store_true", help="skip the plan's pauses")
    parser.add_argument(
        "--keep",
        metavar="PATH",
        nargs="?",
        const=True,
        default=None,
        help="keep the copy of the sample project when the demo ends and print where it is "
        "(by default the temporary copy is removed); with PATH, make the copy in that new "
        "folder instead",
    )


def prepare_workspace(keep: str | bool | None) -> Path:
    """A fresh copy of the sample project: at ``keep`` when it is a path, else in a new
    temporary folder (``redline-demo-*/inventory``)."""
    import shutil
    import tempfile

    from redline.resources import demo_project_dir

    if isinstance(keep, str):
        target = Path(keep).expanduser()
        if target.exists() and any(target.iterdir()):
            raise ValueError(f"--keep {target}: the folder exists and is not empty")
    else:
        target = Path(tempfile.mkdtemp(prefix="redline-demo-")) / "inventory"
    shutil.copytree(
        demo_project_dir(),
        target,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", ".redline"),
    )
    return target


def remove_copy(workspace: Path) -> None:
    """Remove the temporary folder ``prepare_workspace`` made around ``workspace``."""
    import shutil

    folder = workspace.parent
    if not folder.name.startswith("redline-demo-"):
        return  # not ours: never remove a folder the user named
    try:
        shutil.rmtree(folder)
    except OSError as exc:
        print(f"redline demo: could not remove the temporary copy {folder}: {exc}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    try:
        workspace = prepare_workspace(args.keep)
    except (OSError, ValueError) as exc:
        print(f"redline demo: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, workspace)
    finally:
        if args.keep is None:
            remove_copy(workspace)
        else:
            print(f"redline demo: the sample project is kept in {workspace}", file=sys.stderr)


def _fate(args: argparse.Namespace) -> str:
    if args.keep is None:
        return (
            " (removed when the demo ends, and not remembered in `redline workspaces`; "
            "redline demo --keep keeps it)"
        )
    return ""


def _run(args: argparse.Namespace, workspace: Path) -> int:
    from redline.demo.agent import DemoProvider
    from redline.resources import demo_plan_path, example_tools_dir
    from redline.sdk import create_agent_session

    if args.keep is None:
        from redline.workspace.known import do_not_remember

        do_not_remember(workspace)  # a throwaway copy: never listed by `redline workspaces`
    provider = DemoProvider(demo_plan_path(), wait_scale=0.0 if args.no_wait else None)
    headless = args.headless
    resolver = args.resolver or ("agent" if headless else "human")
    session = create_agent_session(
        workspace,
        provider,
        resolver=resolver,
        tool_paths=[example_tools_dir() / "batch_rename_preview.py"],
        watch_plugins=not headless,
        source_kind="exec" if headless else "agent",
    )
    if headless:
        from redline.commands.exec_ import EXIT_STATUS
        from redline.commands.render import EventPrinter

        print(f"redline demo: sample project copied to {workspace}{_fate(args)}", file=sys.stderr)
        with session:
            session.subscribe(EventPrinter(sys.stdout))
            try:
                status = session.prompt(DEMO_PROMPT)
            except KeyboardInterrupt:
                session.abort()
                session.wait(2.0)
                status = "aborted"
        return EXIT_STATUS.get(status, 1)
    from redline.commands.dashboard import launch

    notices = [f"Sample project copied to {workspace}; the demo works on that copy{_fate(args)}."]
    return launch(session, prompt=DEMO_PROMPT, notices=notices)
