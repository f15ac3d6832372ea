"""Review rules: what a rule says, the facts of an action, and how a rule decides.

Everything here is pure data and matching; reading files is :mod:`redline.rules.parse`
and :mod:`redline.rules.ruleset`, resolving is :mod:`redline.rules.hook`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pathspec

    from redline.review.store import PendingAction

RuleDecision = Literal["apply", "discard", "ask"]
ChangeKind = Literal["modify", "create", "delete", "rename", "permission"]
RuleOrigin = Literal["session", "workspace", "user"]

DECISIONS: tuple[str, ...] = ("apply", "discard", "ask")
KINDS: tuple[str, ...] = ("modify", "create", "delete", "rename", "permission")
# Sources whose tool names may be written with a prefix: "acp:*", "mcp:*".
PREFIXED_SOURCES: tuple[str, ...] = ("acp", "mcp", "hook")


@dataclass(frozen=True)
class Rule:
    """One ``[[rule]]`` entry. ``None`` for ``tools``/``paths``/``kinds``/``max_changed_lines``
    means the rule does not look at that fact."""

    name: str
    decision: RuleDecision
    tools: tuple[str, ...] | None = None
    paths: tuple[str, ...] | None = None
    max_changed_lines: int | None = None
    kinds: tuple[ChangeKind, ...] | None = None
    reason: str = ""
    origin: RuleOrigin = "user"
    #: Globs over the action's source, ``kind:name`` (``hook:*``, ``mcp:cursor``, ``exec``).
    sources: tuple[str, ...] | None = None
    file: str = ""
    line: int = 0
    #: ``"pass"``: apply only when every configured check passes with no new findings.
    checks: str | None = None

    @property
    def where(self) -> str:
        """Where the rule came from, for listings: ``path:line`` or ``this session``."""
        if self.origin == "session" or not self.file:
            return "this session"
        return f"{self.file}:{self.line}" if self.line else self.file

    @cached_property
    def _spec(self) -> pathspec.GitIgnoreSpec | None:
        if self.paths is None:
            return None
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(self.paths)

    def names_tool(self, tool_name: str) -> bool:
        """True when ``tools`` lists ``tool_name`` literally (not only through a glob)."""
        return self.tools is not None and tool_name in self.tools

    def summary(self) -> dict[str, object]:
        return {
            "name": self.name,
            "decision": self.decision,
            "tools": list(self.tools) if self.tools is not None else None,
            "paths": list(self.paths) if self.paths is not None else None,
            "max_changed_lines": self.max_changed_lines,
            "kinds": list(self.kinds) if self.kinds is not None else None,
            "sources": list(self.sources) if self.sources is not None else None,
            "reason": self.reason,
            "checks": self.checks,
            "origin": self.origin,
            "file": self.file or None,
            "line": self.line or None,
        }


@dataclass(frozen=True)
class FileFact:
    """One file an action touches; a rename has both paths in ``paths``."""

    paths: tuple[str, ...]
    kind: ChangeKind


@dataclass(frozen=True)
class ActionFacts:
    """What rules look at. Paths are workspace-relative with ``/`` separators."""

    source_tool_name: str
    source_kind: str = "agent"
    files: tuple[FileFact, ...] = ()
    added: int = 0
    removed: int = 0
    has_preview: bool = True
    stale: bool = False
    label: str = ""
    #: The source's canonical string (``hook:claude``, ``mcp:cursor``, ``exec``); "" unknown.
    source: str = ""
    #: (real path, the path it was asked as) for each file reached through a symlink.
    via: tuple[tuple[str, str], ...] = ()

    @property
    def changed_lines(self) -> int:
        return self.added + self.removed

    @property
    def kinds(self) -> tuple[ChangeKind, ...]:
        if not self.has_preview:
            return ("permission",)
        return tuple(dict.fromkeys(f.kind for f in self.files))

    @property
    def all_paths(self) -> tuple[str, ...]:
        return tuple(p for f in self.files for p in f.paths)

    @property
    def outside_workspace(self) -> bool:
        return any(_outside(p) for p in self.all_paths)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names a ``tools`` glob is tried against (``acp:edit`` as well as ``edit``)."""
        name = self.source_tool_name
        if self.source_kind in PREFIXED_SOURCES and not name.startswith(f"{self.source_kind}:"):
            return (name, f"{self.source_kind}:{name}")
        return (name,)

    @classmethod
    def of(cls, action: PendingAction, source_kind: str = "agent") -> ActionFacts:
        """The facts of a pending action (its Preview's files, kinds and +/- counts)."""
        preview = action.preview
        if preview is None:
            return cls(
                source_tool_name=action.source_tool_name,
                source_kind=source_kind,
                has_preview=False,
                stale=action.stale,
                label=action.label,
            )
        stats = preview.stats()
        files = tuple(FileFact(tuple(change.paths), change.kind) for change in preview)
        return cls(
            source_tool_name=action.source_tool_name,
            source_kind=source_kind,
            files=files,
            added=stats.added,
            removed=stats.removed,
            has_preview=True,
            stale=action.stale,
            label=action.label,
            via=tuple(sorted(preview.via.items())),
        )

    @classmethod
    def of_record(cls, record: Any, *, stale: bool | None = None) -> ActionFacts:
        """The facts of a workspace-queue record (``redline.workspace.queue.QueueRecord``):
        its Preview dict's changes, +/- counts and source. ``stale`` overrides the record's
        own flag (a listing checks hashes against the disk)."""
        preview = record.preview
        files: list[FileFact] = []
        if isinstance(preview, dict):
            for change in preview.get("changes") or ():
                if not isinstance(change, dict):
                    continue
                kind = change.get("kind")
                paths: tuple[str, ...]
                if kind == "rename":
                    paths = (str(change.get("old_path")), str(change.get("new_path")))
                else:
                    paths = (str(change.get("path")),)
                if kind in KINDS:
                    files.append(FileFact(paths, kind))
        source = getattr(record, "source", None)
        via = getattr(record, "via", None) or {}
        if isinstance(preview, dict) and isinstance(preview.get("via"), dict):
            via = {**preview["via"], **via}
        return cls(
            source_tool_name=str(record.source_tool_name),
            source_kind=str(getattr(source, "kind", "agent") or "agent"),
            files=tuple(files),
            added=int(record.added or 0),
            removed=int(record.removed or 0),
            has_preview=preview is not None,
            stale=bool(record.stale) if stale is None else stale,
            label=str(record.label),
            source=str(getattr(source, "canonical", "") or ""),
            via=tuple(sorted((str(real), str(asked)) for real, asked in via.items())),
        )


@dataclass(frozen=True)
class Decision:
    """The outcome of evaluating the rules for one action.

    ``rule`` is the deciding rule's name (None when no rule matched: ``ask``); ``why`` says
    in words which rule decided and on what grounds (or why a rule could not apply).
    """

    decision: RuleDecision
    rule: str | None = None
    reason: str = ""
    why: str = ""
    origin: RuleOrigin | None = None
    where: str = ""
    #: The deciding rule's ``checks`` (``"pass"``: its apply waits on the checks).
    checks: str | None = None

    @property
    def resolves(self) -> bool:
        return self.decision in ("apply", "discard") and self.rule is not None

    def to_dict(self) -> dict[str, object]:
        return {
            "decision": self.decision,
            "rule": self.rule,
            "reason": self.reason,
            "why": self.why,
            "origin": self.origin,
            "where": self.where or None,
        }


NO_MATCH = "no rule matched; a person reviews it"


def _outside(path: str) -> bool:
    if path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        return True
    return any(part == ".." for part in path.split("/"))


def old_spellings(rule: Rule) -> list[tuple[str, str]]:
    """``(old, new)`` for each of the rule's sources written as redline before 0.x spelled
    an MCP client (``mcp:cursor via MCP``, ``mcp:MCP client``): accepted, as ``mcp:cursor``
    and ``mcp``, for one release; ``redline rules list`` warns."""
    from redline.workspace.queue.records import legacy_mcp_name

    found: list[tuple[str, str]] = []
    for pattern in rule.sources or ():
        kind, colon, name = pattern.partition(":")
        if kind == "mcp" and colon and legacy_mcp_name(name) != name:
            new = legacy_mcp_name(name)
            found.append((pattern, f"mcp:{new}" if new else "mcp"))
    return found


def mismatch(rule: Rule, facts: ActionFacts) -> str | None:
    """Why ``rule`` does not match ``facts`` (None when it matches)."""
    if rule.tools is not None and not any(
        fnmatch.fnmatchcase(name, pattern) for name in facts.tool_names for pattern in rule.tools
    ):
        return f"tool {facts.source_tool_name} is not in tools"
    if rule.sources is not None:
        shown = facts.source or facts.source_kind
        names = (facts.source, facts.source_kind) if facts.source else (facts.source_kind,)
        patterns = [*rule.sources, *(new for _old, new in old_spellings(rule))]
        if not any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns):
            return f"source {shown} is not in sources"
    if rule.kinds is not None:
        extra = [k for k in facts.kinds if k not in rule.kinds]
        if extra:
            return f"kind {extra[0]} is not in kinds"
    if rule.paths is not None:
        paths = facts.all_paths
        if not paths:
            return "the action touches no files and the rule has paths"
        spec = rule._spec
        assert spec is not None
        for path in paths:
            if _outside(path) or not spec.match_file(path):
                return f"{path} does not match paths"
    if rule.max_changed_lines is not None and facts.changed_lines > rule.max_changed_lines:
        return f"{facts.changed_lines} changed lines > max_changed_lines {rule.max_changed_lines}"
    return None


def _describe_match(rule: Rule, facts: ActionFacts) -> str:
    parts = []
    if rule.tools is not None:
        parts.append(f"tool {facts.source_tool_name}")
    if rule.paths is not None:
        parts.append(f"{len(facts.all_paths)} file(s) under paths")
    if rule.sources is not None:
        parts.append(f"source {facts.source or facts.source_kind}")
    if rule.kinds is not None:
        parts.append("kinds " + ", ".join(facts.kinds))
    if rule.max_changed_lines is not None:
        parts.append(f"{facts.changed_lines} ≤ {rule.max_changed_lines} changed lines")
    return "; ".join(parts) if parts else "it matches every action"


def safety_block(rule: Rule, facts: ActionFacts) -> str | None:
    """Why an ``apply`` rule may not apply this action (None when it may)."""
    if facts.stale:
        return "the action is stale"
    if facts.outside_workspace:
        return "it touches a file outside the workspace"
    if facts.via and rule.paths is None:
        real, asked = facts.via[0]
        return (
            f"it writes {real}, asked as {asked} through a symbolic link, and the rule names "
            "no paths; only a rule whose paths match the real path may apply it"
        )
    if (
        not facts.has_preview
        and not (rule.kinds is not None and "permission" in rule.kinds)
        and not rule.names_tool(facts.source_tool_name)
    ):
        return (
            'the action has no preview; only a rule with kinds = ["permission"] or one that '
            "names the tool may apply it"
        )
    return None


def decide(rules: Iterable[Rule], facts: ActionFacts) -> Decision:
    """First match wins; no match → ``ask``. An ``apply`` rule that matches an action it may
    not apply (stale, no preview, outside the workspace) decides ``ask`` and says why."""
    for rule in rules:
        if mismatch(rule, facts) is not None:
            continue
        if rule.decision == "apply":
            blocked = safety_block(rule, facts)
            if blocked is not None:
                return Decision(
                    "ask",
                    rule=rule.name,
                    why=f"rule {rule.name} ({rule.where}) would apply it, but {blocked}; "
                    "a person reviews it",
                    origin=rule.origin,
                    where=rule.where,
                )
        return Decision(
            rule.decision,
            rule=rule.name,
            reason=rule.reason,
            why=f"rule {rule.name} ({rule.where}) matches: {_describe_match(rule, facts)}",
            origin=rule.origin,
            where=rule.where,
            checks=rule.checks,
        )
    return Decision("ask", why=NO_MATCH)


def session_rule_for(facts: ActionFacts) -> Rule | None:
    """The rule the dashboard offers for an action: "always apply ``<tool>`` changes under
    ``<folder>/**`` for this session" (the folder holding every file it touches).

    None for an action without files (a bare permission is never generalised).
    """
    import posixpath

    paths = facts.all_paths
    if not facts.has_preview or not paths or facts.outside_workspace:
        return None
    folder = posixpath.commonpath([posixpath.dirname(p) for p in paths])
    pattern = f"{folder}/**" if folder else "**"
    tool = facts.source_tool_name
    return Rule(
        name=f"always apply {tool} changes under {pattern}",
        decision="apply",
        tools=(tool,),
        paths=(pattern,),
        origin="session",
    )
