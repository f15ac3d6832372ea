"""What a decision says, and what a session offers (:mod:`redline.review.session`'s values).

Kept apart from the session so that a process which only proposes and waits — an agent's
hook, whose agent waits for the action to be queued — builds none of these dataclasses
before its push (each costs Python about half a millisecond to make: docs/performance.md,
issue 49); :mod:`redline.review.session` names them all, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from redline.review.events import ResolvedBy
    from redline.review.provenance import GitBatch
    from redline.workspace.preview import Preview

#: An action's decision (:data:`redline.review.session.Verb` is the same).
Verb = Literal["apply", "discard"]


@dataclass(frozen=True)
class PartsServed:
    """An owner action of this session resolved in parts at another process's request:
    ``written`` is what safe apply wrote (None for a discard), ``remaining_id`` the action
    that holds the rest (applied by redline now), ``text`` the resolver's text."""

    action_id: str
    verb: str
    reason: str
    text: str
    written: Preview | None
    remaining_id: str


@dataclass(frozen=True)
class Decision:
    """What a reviewer (a person, a rule, the model, an auto resolver) decided.

    ``only`` names ``PATH#N`` / ``PATH`` parts of the action's Preview (the rest stays
    pending under a new id); ``by`` and ``rule`` say who decided. With ``batch`` an apply's
    ``[git] on_apply`` step waits for :func:`~redline.review.provenance.finish_batch` (one
    commit for several actions, the dashboard's apply-marked).
    """

    verb: Verb
    reason: str = ""
    only: tuple[str, ...] | None = None
    by: ResolvedBy = "human"
    rule: str | None = None
    batch: GitBatch | None = None
    #: The redline surface deciding (``dashboard``, ``browser``, …); None: the session's.
    via: str | None = None


@dataclass(frozen=True)
class Capabilities:
    """What a session offers a client for its *own* actions (every other action of the
    workspace is decided through the queue, where the record says what it allows).

    ``parts``: some hunks applied or discarded; ``edit``: a person's edit before it lands;
    ``repreview``: a stale action proposed again against the current files; ``undo``:
    undo the workspace's newest apply; ``rules``: session rules (``a``); ``checks``: the
    configured checks run on its actions.
    """

    parts: bool = True
    edit: bool = True
    repreview: bool = True
    undo: bool = True
    rules: bool = False
    checks: bool = True


__all__ = ["Capabilities", "Decision", "PartsServed"]
