"""Where the team queue is, who this workspace is, and who is deciding."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

QUEUE_URL_ENV = "REDLINE_QUEUE_URL"
REVIEWER_ENV = "REDLINE_REVIEWER"
_KEYS = ("url", "workspace_id", "reviewer")
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


class TeamQueueError(Exception):
    """Anything about the team queue a person must fix; the message is safe to print."""


@dataclass(frozen=True)
class QueueSettings:
    """The ``[queue]`` table as it applies to one workspace (or to none)."""

    url: str | None = None
    origin: str = "not set"
    workspace_id: str | None = None
    reviewer: str | None = None
    warnings: tuple[str, ...] = ()


def _table(data: Mapping[str, Any], shown: str) -> dict[str, str]:
    table = data.get("queue")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise TeamQueueError(f"{shown}: queue: expected a [queue] table")
    found: dict[str, str] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise TeamQueueError(
                f"{shown}: queue.{key}: unknown setting (expected one of {', '.join(_KEYS)})"
            )
        if not isinstance(value, str) or not value.strip():
            raise TeamQueueError(f"{shown}: queue.{key}: expected a non-empty string")
        found[key] = value.strip()
    if "url" in found:
        check_url(found["url"], f"{shown}: queue.url")
    if "workspace_id" in found:
        check_workspace_id(found["workspace_id"], f"{shown}: queue.workspace_id")
    return found


def check_url(url: str, where: str) -> str:
    """``url`` if it is a PostgreSQL URL; else a TeamQueueError naming ``where``."""
    from redline.redaction import redact_url

    if not url.startswith(("postgresql://", "postgres://")):
        raise TeamQueueError(
            f"{where}: {redact_url(url)!r} is not a PostgreSQL URL "
            "(expected postgresql://USER@HOST/DATABASE)"
        )
    return url


def check_workspace_id(value: str, where: str) -> str:
    if not (1 <= len(value) <= 40) or not set(value) <= _ID_CHARS:
        raise TeamQueueError(
            f"{where}: {value!r} is not a workspace id (1 to 40 of a-z, 0-9, - and _)"
        )
    return value


def queue_settings(root: Path | None, flag: str | None = None) -> QueueSettings:
    """``--queue`` > ``$REDLINE_QUEUE_URL`` > the workspace's ``[queue]`` (trusted only)
    > the user's ``[queue]``. A cloned repository must not choose where proposals go, so an
    untrusted workspace's ``[queue]`` is skipped with a warning naming the file."""
    from redline.config import ConfigError, read_user_config, read_workspace_config

    try:
        data, shown = read_user_config()
        merged = _table(data, shown)
        origins = dict.fromkeys(merged, shown)
        warnings: list[str] = []
        if root is not None:
            data, shown = read_workspace_config(root)
            found = _table(data, shown)
            if found:
                from redline.trust import is_trusted

                if is_trusted(root):
                    merged.update(found)
                    origins.update(dict.fromkeys(found, shown))
                else:
                    warnings.append(
                        f"{shown}: [queue] skipped: this workspace is not trusted, and a "
                        "repository may not choose where its proposals go (redline trust "
                        "allows it)"
                    )
    except ConfigError as exc:
        raise TeamQueueError(str(exc)) from None
    url, origin = merged.get("url"), origins.get("url", "not set")
    env = os.environ.get(QUEUE_URL_ENV, "").strip()
    if env:
        url, origin = check_url(env, f"${QUEUE_URL_ENV}"), f"${QUEUE_URL_ENV}"
    if flag is not None:
        url, origin = check_url(flag.strip(), "--queue"), "--queue"
    return QueueSettings(
        url=url,
        origin=origin,
        workspace_id=merged.get("workspace_id"),
        reviewer=merged.get("reviewer"),
        warnings=tuple(warnings),
    )


def workspace_id(root: Path, configured: str | None = None) -> str:
    """A stable id for the workspace at ``root`` (:func:`redline.workspace.identity.workspace_id`;
    the decisions log and the ``Redline-Workspace`` trailer use the same one)."""
    from redline.workspace.identity import WorkspaceIdError
    from redline.workspace.identity import workspace_id as found

    try:
        return found(root, configured)
    except WorkspaceIdError as exc:
        raise TeamQueueError(str(exc)) from None


def reviewer_name(configured: str | None) -> str | None:
    """The reviewer's configured name (``$REDLINE_REVIEWER`` or ``[queue] reviewer``).
    It no longer names who decides (the server records the role connected, with the name
    ``redline queue grant`` gave it): see :func:`reviewer_warning`."""
    env = os.environ.get(REVIEWER_ENV, "").strip()
    return env or configured or None


def reviewer_warning(configured: str | None) -> str | None:
    """The one line to print when a reviewer name is still configured, else None."""
    if os.environ.get(REVIEWER_ENV, "").strip():
        where = f"${REVIEWER_ENV}"
    elif configured:
        where = "[queue] reviewer"
    else:
        return None
    return (
        f"warning: {where} is ignored: the team queue records the database role you "
        "connect as, with the name `redline queue grant ROLE --reviewer --name … --email …` "
        "gave it"
    )


def team_id(workspace: str, local_id: str) -> str:
    """The id a reviewer uses across workspaces: ``pa-3@g1a2b3c4d5e6``."""
    return f"{local_id}@{workspace}"


def split_team_id(value: str) -> tuple[str, str]:
    """``(local_id, workspace)`` of a team id; TeamQueueError for anything else."""
    local, sep, workspace = value.partition("@")
    from redline.workspace.queue.records import id_number

    if not sep or id_number(local) is None or not workspace or not set(workspace) <= _ID_CHARS:
        raise TeamQueueError(
            f"{value!r} is not a team id (expected ID@WORKSPACE, e.g. pa-3@g1a2b3c4d5e6, "
            "as `redline pending list --queue URL` prints)"
        )
    return local, workspace
