"""The trailers of redline's commits, and who assisted (``Assisted-by: AGENT:MODEL``).

``[git] trailers`` chooses the set: ``redline`` (the ``Redline-*`` trailers and an imported
change's ``Co-authored-by``), ``kernel`` (the Linux kernel's convention for AI-assisted
work: ``Redline-Action`` and ``Redline-Workspace`` stay, the other ``Redline-*`` go, an
agent never co-authors) or ``both`` (the default). ``Assisted-by`` is written only when
both the agent and its model are known, never ``AGENT:unknown``; redline never writes a
``Signed-off-by`` for an agent, only the local git user's with ``[git] signoff = true``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: The agent name ``Assisted-by`` uses for each hook agent.
HOOK_AGENTS = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}
#: An imported commit's author that is an agent, not a person (name or e-mail part).
_AGENT_AUTHORS = (
    (re.compile(r"anthropic\.com|^claude\b", re.I), "claude-code"),
    (re.compile(r"openai\.com|^codex\b", re.I), "codex"),
    (re.compile(r"^gemini\b", re.I), "gemini-cli"),
    (re.compile(r"copilot", re.I), "copilot"),
    (re.compile(r"^cursor\b|cursor\.com", re.I), "cursor"),
)
_VALUE = re.compile(r"[^\x00-\x1f\x7f]{1,200}")


def agent_of(source: str) -> str | None:
    """The agent behind a queue source (``hook:claude`` → ``claude-code``), if one."""
    kind, _, name = source.partition(":")
    if kind == "hook":
        return HOOK_AGENTS.get(name, name or None)
    if kind in ("acp", "mcp") and name:
        return name
    if kind in ("exec", "sdk"):
        return "redline"
    return None


def assisted(source: str, model: str | None, why: str = "") -> tuple[str | None, str]:
    """``(AGENT:MODEL, "")`` when both are known, else ``(None, why not)``."""
    agent = agent_of(source)
    if agent is None:
        return None, why or f"{source or 'this source'} is not an agent"
    clean = " ".join((model or "").split())
    if not clean or clean.lower() == "unknown" or not _VALUE.fullmatch(clean):
        return None, why or f"{agent} did not report its model"
    return f"{agent}:{clean}", ""


def agent_author(author: str) -> str | None:
    """The agent an imported commit's author is (``Claude <noreply@anthropic.com>``)."""
    name, _, email = author.partition("<")
    for pattern, agent in _AGENT_AUTHORS:
        if pattern.search(name.strip()) or pattern.search(email.rstrip("> ")):
            return agent
    return None


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line without control characters (a subject or trailer value)."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def trailer_lines(
    items: Sequence[Any],
    reviewer: str,
    *,
    workspace: str = "",
    mode: str = "both",
    signoff: str = "",
) -> list[str]:
    """The trailers of a commit of ``items`` (:class:`redline.review.provenance.Decided`;
    ``signoff``: the git user to sign off as)."""
    redline = mode in ("redline", "both")
    kernel = mode in ("kernel", "both")
    lines = [f"Redline-Action: {item.action_id}" for item in items]
    if workspace:
        lines.append(f"Redline-Workspace: {one_line(workspace)}")
    if redline:
        for source in dict.fromkeys(one_line(i.source) for i in items if i.source):
            lines.append(f"Redline-Source: {source}")
        # A rule is not a person: its commit names the rule, never a reviewer.
        rules = [i.rule or "unnamed" for i in items if i.resolved_by == "rule"]
        for rule in dict.fromkeys(one_line(r) for r in rules):
            lines.append(f"Redline-Rule: {rule}")
        if reviewer and any(i.resolved_by != "rule" for i in items):
            lines.append(f"Redline-Reviewer: {one_line(reviewer)}")
        if any(i.edited for i in items):
            lines.append("Redline-Edited: yes")
        for item in items:
            reason = one_line(item.reason, 500)
            if reason:
                prefix = f"{item.action_id}: " if len(items) > 1 else ""
                lines.append(f"Redline-Reason: {prefix}{reason}")
    helpers = [a for i in items for a in (i.assisted_by, *i.imported_assisted) if a]
    for value in dict.fromkeys(one_line(a) for a in helpers):
        lines.append(f"Assisted-by: {value}")
    for author in dict.fromkeys(a for i in items for a in i.co_authors):
        if kernel and agent_author(author) is not None:
            continue  # an agent assists (Assisted-by), it does not author: the kernel's rule
        lines.append(f"Co-authored-by: {one_line(author)}")
    if signoff:
        lines.append(f"Signed-off-by: {one_line(signoff)}")
    return lines


__all__ = ["HOOK_AGENTS", "agent_author", "agent_of", "assisted", "one_line", "trailer_lines"]
