"""``redline pending list --all``: every known workspace's pending actions (docs/inbox.md)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redline.commands.workspaces import Row
    from redline.workspace.queue import QueueRecord, WorkspaceQueue

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _err(text: str) -> None:
    print(f"redline pending: {text}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from redline.commands._action_json import action_json
    from redline.commands.workspaces import rows
    from redline.paths import UserDirError

    if getattr(args, "queue", None) is not None:
        _err(
            "--all lists the workspaces known on this machine; the team queue (--queue) "
            "already lists every workspace: leave out --all"
        )
        return EXIT_BAD_INPUT
    if getattr(args, "workspace", None) is not None:
        _err("--workspace needs --queue URL (the team queue), not --all")
        return EXIT_BAD_INPUT
    found: list[tuple[float, int, dict[str, Any]]] = []

    def visit(row: Row, queue: WorkspaceQueue, records: list[QueueRecord]) -> None:
        from redline.workspace.queue.records import id_number

        if row.id is None:
            return
        for record in records:
            item = action_json(queue, record, pending=False)
            item["stale"] = record.id in row.stale_ids
            item["orphaned"] = record.orphaned()
            item["local_id"] = record.id
            item["id"] = f"{record.id}@{row.id}"
            item["workspace"] = {"id": row.id, "path": row.known.path}
            found.append((record.created_at, id_number(record.id) or 0, item))

    try:
        listed = rows(visit)
    except UserDirError as exc:
        _err(str(exc))
        return EXIT_FAILED
    found.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
    actions = [item for _, _, item in found]
    status = EXIT_OK
    for row in listed:
        if row.conflict:
            status = EXIT_FAILED
            _err(
                f"{row.known.path} shares the id {row.id} with another known workspace: "
                "its pa-N@ids are ambiguous (see `redline workspaces list`)"
            )
        elif row.problem:
            status = EXIT_FAILED
            _err(f"{row.known.path}: {row.problem}")
    if args.json:
        from redline.workspace.names import json_dumps

        print(json_dumps({"actions": actions}))
        return status
    return _text(actions, len([r for r in listed if not r.missing]), status)


def _text(actions: list[dict[str, Any]], workspaces: int, status: int) -> int:
    from redline.termtext import one_line

    if not actions:
        print(f"No pending actions in the {workspaces} known workspace(s).")
        return status
    table = [("ID", "+/-", "LABEL", "WORKSPACE")]
    for item in actions:
        table.append(
            (
                one_line(item["id"]),
                f"+{item['added']} -{item['removed']}",
                one_line(item["label"]) + (" (stale)" if item["stale"] else ""),
                one_line(item["workspace"]["path"]),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    lines = ["  ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]) for row in table]
    lines.append(f"{len(actions)} pending in {workspaces} known workspace(s), newest first.")
    print("\n".join(lines))
    return status
