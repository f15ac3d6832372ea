"""``redline ast-edit``: structural search and rewrite from the command line."""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option

EXIT_MATCHES = 0
EXIT_NO_MATCHES = 1
EXIT_BAD_INPUT = 2
EXIT_APPLY_FAILED = 3


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    parser.add_argument(
        "--pattern", action="append", default=[], metavar="P", help="pattern (repeatable)"
    )
    parser.add_argument(
        "--rewrite",
        action="append",
        default=[],
        metavar="R",
        help="rewrite for the pattern at the same position",
    )
    parser.add_argument("targets", nargs="*", metavar="TARGET", help="files, folders or globs")
    parser.add_argument("--glob", default=None, metavar="G", help="extra filter under targets")
    parser.add_argument("--limit", type=int, default=None, metavar="N")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--apply", action="store_true", help="write the rewrite")


def _fail(message: str, status: int = EXIT_BAD_INPUT) -> int:
    import sys

    print(f"redline ast-edit: {message}", file=sys.stderr)
    return status


def run(args: argparse.Namespace) -> int:
    """Search, or rewrite (and with --apply write); exit 0/1/2/3 as documented."""
    import os
    import sys
    from pathlib import Path

    from redline.workspace.state import STATE_DIR_NAME

    patterns: list[str] = list(args.pattern)
    rewrites: list[str] = list(args.rewrite)
    if not patterns:
        return _fail("give at least one --pattern")
    if rewrites and len(rewrites) != len(patterns):
        return _fail(
            f"{len(patterns)} --pattern but {len(rewrites)} --rewrite: give one --rewrite "
            "per --pattern (in the same order), or none to search"
        )
    if args.apply and not rewrites:
        return _fail("--apply needs a --rewrite for every --pattern")
    if args.limit is not None and args.limit < 1:
        return _fail(f"--limit must be at least 1, got {args.limit}")
    root = Path(args.cwd)
    if not root.is_dir():
        return _fail(f"-C {args.cwd}: not a folder")
    root = root.resolve()

    from redline.tools.ast_edit import FileResult, PatternError, TargetError, compile_ops, search
    from redline.tools.ast_edit.report import applied_text, cli_file_text, cli_summary, json_text

    pairs = [(p, rewrites[i] if rewrites else None) for i, p in enumerate(patterns)]

    def where(index: int) -> str:
        # The user typed --pattern options: name them, not the tool's "operation N".
        return "" if len(pairs) == 1 else f"--pattern #{index + 1}: "

    try:
        compile_ops(pairs, where=where)
    except PatternError as exc:
        return _fail(str(exc))
    # Searching reads files too: first make sure no interrupted apply left them torn.
    # Without a state folder there is no journal, and nothing to import for one.
    if os.path.lexists(root / STATE_DIR_NAME):
        from redline.workspace import journal
        from redline.workspace.safe_apply import ApplyError

        try:
            for message in journal.recover(root):
                print(f"redline ast-edit: {message}", file=sys.stderr)
        except (ApplyError, OSError) as exc:
            if args.apply:
                print(f"redline ast-edit: {exc}", file=sys.stderr)
                return 3
            print(f"redline ast-edit: crash recovery skipped: {exc}", file=sys.stderr)
    rewrite = bool(rewrites)

    def show(result: FileResult) -> None:
        # Streamed: each file is printed as soon as its result is known.
        if result.error is not None:
            print(f"redline ast-edit: {result.path}: {result.error}", file=sys.stderr)
        elif not args.json:
            print(cli_file_text(result, rewrite), flush=True)
        for note in result.skipped:
            print(f"redline ast-edit: {result.path}: {note}", file=sys.stderr)

    try:
        report = search(root, pairs, args.targets or ["."], args.glob, args.limit, on_file=show)
    except (PatternError, TargetError) as exc:
        return _fail(str(exc))
    if args.json:
        print(json_text(report))
    else:
        print(cli_summary(report))
    if not report.files:
        if report.files_searched == 0:
            shown = " ".join(args.targets) or "the workspace"
            glob = f" with --glob {args.glob!r}" if args.glob else ""
            print(
                f"redline ast-edit: no Python file (.py, .pyi) in {shown}{glob} to search",
                file=sys.stderr,
            )
        return EXIT_NO_MATCHES
    if not args.apply:
        return EXIT_MATCHES
    from redline.workspace.safe_apply import ApplyError, apply_preview

    try:
        apply_preview(
            root, report.preview(), label=report.summary_label(), source_tool_name="ast_edit"
        )
    except ApplyError as exc:
        return _fail(f"nothing written: {exc}", EXIT_APPLY_FAILED)
    except OSError as exc:
        return _fail(f"nothing written: {exc}", EXIT_APPLY_FAILED)
    print(applied_text(report), file=sys.stderr if args.json else sys.stdout)
    return EXIT_MATCHES
