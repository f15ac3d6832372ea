"""``redline undo``: undo applied changes through the journal.

``redline undo`` undoes the newest applied change; ``redline undo ID`` undoes any applied
change whose files are unchanged since it (an apply that ``[git] on_apply = "commit"``
committed is taken back in git too, see docs/git.md); ``redline undo --list`` shows the applied
changes newest first (and entries never acted on, marked foreign); ``redline undo
--set-aside ID`` moves such an entry to ``.redline/journal-aside/`` and ``redline undo
--remove ID`` deletes it.
"""

from __future__ import annotations

import argparse

from redline.commands._common import add_workspace_option


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_option(parser)
    parser.add_argument(
        "entry_id",
        nargs="?",
        metavar="ID",
        help="the applied change to undo (see --list); default: the newest",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--list",
        action="store_true",
        help="list applied changes, newest first, and whether each can be undone",
    )
    group.add_argument(
        "--remove",
        metavar="ID",
        help="delete a foreign or damaged journal entry (one redline never acts on)",
    )
    group.add_argument(
        "--set-aside",
        metavar="ID",
        help="move a journal entry signed with another key to .redline/journal-aside/ "
        "(kept on disk; redline never does this by itself)",
    )


def _shown(text: str) -> str:
    from redline.workspace.names import shown

    # Names that are not UTF-8 are shown with the same \udcXX escape JSON output uses.
    return shown(text)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from redline.workspace import journal
    from redline.workspace.errors import ApplyError

    root = Path(args.cwd)
    if not root.is_dir():
        print(f"redline undo: workspace {root} is not a folder", file=sys.stderr)
        return 2
    if getattr(args, "list", False) and args.entry_id:
        print("redline undo: give either an ID or --list, not both", file=sys.stderr)
        return 2
    for message in journal.recover(root):
        print(_shown(f"redline: {message}"))
    try:
        if getattr(args, "list", False):
            return _list(root)
        if getattr(args, "remove", None):
            removed = journal.remove_foreign(root, args.remove)
            print(_shown(f"Removed the journal entry {removed}."))
            return 0
        if getattr(args, "set_aside", None):
            moved = journal.set_aside(root, args.set_aside)
            print(_shown(f"Moved the journal entry {args.set_aside} to {moved}."))
            return 0
        from redline.review.git_undo import undo

        done = undo(root, args.entry_id or None)
    except ApplyError as exc:
        print(_shown(f"redline undo: {exc}"), file=sys.stderr)
        return 1
    except OSError as exc:
        print(_shown(f"redline undo: {exc}"), file=sys.stderr)
        return 1
    print(_shown(done.message))
    return 0


def _list(root: object) -> int:
    from pathlib import Path

    from redline.termtext import one_line
    from redline.workspace import journal
    from redline.workspace.preview import shown_path

    items = journal.undo_list(Path(str(root)))
    if not items:
        print("No applied changes in the journal.")
        return 0
    for item in items:
        when = item.time.strftime("%Y-%m-%d %H:%M") if item.time else "-"
        # The pending action the change came from (pa-7), so the two ids can be matched up.
        origin = f"{item.action_id}  " if item.action_id else ""
        line = f"{item.entry_id}  {item.status:<8}  {when}  {origin}{one_line(item.label)}"
        if item.files:
            line += f"  ({one_line(', '.join(shown_path(f, item.via) for f in item.files))})"
        if item.why_not:
            line += f"\n        {item.why_not}"
        print(_shown(line))
    return 0
