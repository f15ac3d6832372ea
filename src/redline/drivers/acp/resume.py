"""Continue an external agent's session: ``redline exec --agent AGENT --resume``.

Two facts are needed. The ACP session id, to ask the agent for ``session/load``: it is kept
in ``.redline/drivers/acp/SESSION.json``, signed with the workspace's key (purpose
``acp-session``), because a repository can ship any ``.redline/`` folder and nothing
there is passed to an agent because it exists. And the resolutions the agent has not
heard of: from the session log, those recorded after the last resolution prompt (an
``AcpNotice`` with ``told``), plus those another process made while the session's
process was gone, read from the review queue's resolved log.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from redline.drivers.acp.client import Resolution
from redline.drivers.acp.events import AcpNotice
from redline.review.events import PendingPushed, PendingReplaced, PendingResolved, Undone
from redline.review.session_log import ResumeError, SessionLogError, read_log
from redline.workspace.queue import QueueError, WorkspaceQueue

if TYPE_CHECKING:
    from redline.jsontypes import JsonObject

STATE_FOLDER = "acp"
PURPOSE = "acp-session"
# An ACP session id passed back to an agent: printable, bounded.
_ACP_SESSION_ID = re.compile(r"[\x21-\x7e]{1,256}")


@dataclass
class AcpHistory:
    """What a session log says about an external agent's session, for continuing it."""

    session_id: str
    header: JsonObject
    #: The ACP session to ask the agent to load, when its signed record verifies.
    acp_session_id: str | None = None
    #: Resolutions (and undos) the agent has not been told about.
    unreported: list[Resolution] = field(default_factory=list)


def _payload(session_id: str, acp_session_id: str, agent: str) -> bytes:
    data = {"session_id": session_id, "acp_session_id": acp_session_id, "agent": agent}
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def record_acp_session(root: Path, session_id: str, acp_session_id: str, agent: str) -> None:
    """Remember (signed) which ACP session belongs to redline session ``session_id``."""
    from redline.workspace.auth import sign
    from redline.workspace.state import write_state_file

    payload = _payload(session_id, acp_session_id, agent)
    tag = sign(root, payload, purpose=PURPOSE)
    data = {"session_id": session_id, "acp_session_id": acp_session_id, "agent": agent}
    record = json.dumps({**data, "tag": tag}, sort_keys=True).encode()
    write_state_file(root, f"{session_id}.json", record, STATE_FOLDER)


def read_acp_session(root: Path, session_id: str) -> tuple[str, str] | None:
    """``(acp_session_id, agent)`` of ``session_id``; None when there is no record that
    verifies (missing, edited, from another user or workspace)."""
    from redline.workspace.auth import verify
    from redline.workspace.state import read_state_file

    raw = read_state_file(root, f"{session_id}.json", STATE_FOLDER, limit=64 * 1024)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    acp_id, agent, tag = data.get("acp_session_id"), data.get("agent"), data.get("tag")
    if not (isinstance(acp_id, str) and isinstance(agent, str) and isinstance(tag, str)):
        return None
    if data.get("session_id") != session_id or not _ACP_SESSION_ID.fullmatch(acp_id):
        return None
    if not verify(root, _payload(session_id, acp_id, agent), tag, purpose=PURPOSE):
        return None
    return acp_id, agent


def _done(action: str, by: str, rule: str | None) -> str:
    done = "applied" if action == "apply" else "discarded"
    return f"{done} by rule {rule}" if by == "rule" and rule else done


def load_acp_history(root: Path, path: Path, queue: WorkspaceQueue | None) -> AcpHistory:
    """The external agent's session logged at ``path``: its ACP session and what it missed."""
    try:
        header, events = read_log(path)
    except SessionLogError as exc:
        raise ResumeError(str(exc)) from None
    except OSError as exc:
        raise ResumeError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    sid = str(header.get("session_id") or path.stem)
    if header.get("kind") != "acp":
        raise ResumeError(
            f"session {sid} ran the built-in runtime, not an external agent: resume it "
            "without --agent"
        )
    history = AcpHistory(sid, header)
    heard: list[Resolution] = []
    labels: dict[str, str] = {}
    open_ids: list[str] = []
    for event in events:
        match event:
            case AcpNotice(told=told) if told is not None:
                heard = []  # every resolution so far was in that prompt
            case PendingPushed(action_id=action_id, label=label):
                labels[action_id] = label
                open_ids.append(action_id)
            case PendingReplaced(old_action_id=old, action_id=new, label=label):
                labels[new] = label
                if old in open_ids:
                    open_ids.remove(old)
                open_ids.append(new)
            case PendingResolved(action_id=action_id):
                if action_id in open_ids:
                    open_ids.remove(action_id)
                heard.append(
                    Resolution(
                        event.label,
                        _done(event.action, event.by, event.rule),
                        event.reason,
                        action_id,
                    )
                )
            case Undone(entry_id=entry_id, label=label, action_id=undone):
                heard.append(
                    Resolution(label or "the last apply", "undone", "", undone or entry_id)
                )
            case _:
                pass
    for action_id in open_ids:
        if queue is None:
            break
        try:
            found = queue.resolution(action_id)
        except QueueError:
            found = None
        if found is None or found.decision not in ("apply", "discard"):
            continue
        heard.append(
            Resolution(
                labels.get(action_id, action_id),
                _done(found.decision, found.resolved_by, found.rule),
                found.reason,
                action_id,
            )
        )
    history.unreported = heard
    recorded = read_acp_session(root, sid)
    if recorded is not None:
        history.acp_session_id = recorded[0]
    return history


def new_session_prompt(resolutions: list[Resolution], prompt: str | None) -> str:
    """The first prompt of a new session continuing one the agent cannot load."""
    lines = [
        "This continues an earlier session of yours in this workspace that cannot be "
        "loaded; the reviewer resolved your pending requests since you last heard:"
    ]
    for item in resolutions:
        reason = item.reason.strip() or "no reason given"
        lines.append(f"- {item.label}: {item.decision}. Reason: {reason}")
    if not resolutions:
        lines[0] = (
            "This continues an earlier session of yours in this workspace that cannot be "
            "loaded; nothing was resolved since you last heard."
        )
    if prompt:
        lines += ["", prompt]
    else:
        lines.append("Take these decisions into account and continue.")
    return "\n".join(lines)


__all__ = [
    "AcpHistory",
    "load_acp_history",
    "new_session_prompt",
    "read_acp_session",
    "record_acp_session",
]
