"""Reading one ``rules.toml``: strict, and every problem names the file, line and key.

A typo must never widen a rule (``path = ...`` instead of ``paths`` would otherwise match
every file), so an unknown key is an error, and a file with any error contributes no rule.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from redline.rules.model import DECISIONS, KINDS, Rule, RuleOrigin

RULE_KEYS: tuple[str, ...] = (
    "name",
    "decision",
    "tools",
    "paths",
    "max_changed_lines",
    "kinds",
    "sources",
    "reason",
    "checks",
)
_HEADER = re.compile(r"^\s*\[\[\s*rule\s*\]\]")


class RulesFileError(ValueError):
    """A rules file that cannot be used; ``str()`` is ``file:line: key: problem``."""

    def __init__(self, file: str, line: int, key: str, problem: str) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.problem = problem
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")


def _rule_lines(text: str) -> list[tuple[int, list[str]]]:
    """For each ``[[rule]]`` header: its line number and the lines of its table."""
    lines = text.splitlines()
    blocks: list[tuple[int, list[str]]] = []
    for number, line in enumerate(lines, start=1):
        if _HEADER.match(line):
            blocks.append((number, []))
        elif line.lstrip().startswith("["):
            blocks.append((0, []))  # another table ends the rule's block
        elif blocks:
            blocks[-1][1].append(line)
    return [b for b in blocks if b[0]]


def _key_line(block: tuple[int, list[str]] | None, key: str) -> int:
    if block is None:
        return 0
    start, body = block
    pattern = re.compile(rf"^\s*(\"{re.escape(key)}\"|{re.escape(key)})\s*=")
    for offset, line in enumerate(body, start=1):
        if pattern.match(line):
            return start + offset
    return start


def _strings(value: object, shown: str, line: int, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise RulesFileError(shown, line, key, "expected a list of non-empty strings")
    if not value:
        raise RulesFileError(shown, line, key, "an empty list would match nothing; leave it out")
    return tuple(value)


def parse_rules(data: bytes, shown: str, origin: RuleOrigin) -> tuple[Rule, ...]:
    """The rules of one file, in file order; :class:`RulesFileError` on the first problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RulesFileError(shown, 0, "", f"not UTF-8 text (byte {exc.start})") from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", 0) or 0
        message = str(exc)
        if not line:
            found = re.search(r"line (\d+)", message)
            line = int(found.group(1)) if found else 0
        raise RulesFileError(shown, line, "", f"not valid TOML: {message}") from None
    for key in table:
        if key != "rule":
            raise RulesFileError(
                shown,
                _top_key_line(text, key),
                key,
                "unknown key; a rules file holds only [[rule]] tables",
            )
    entries = table.get("rule", [])
    if not isinstance(entries, list):
        raise RulesFileError(shown, _top_key_line(text, "rule"), "rule", "expected [[rule]] tables")
    blocks = _rule_lines(text)
    rules: list[Rule] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        block = blocks[index] if index < len(blocks) else None
        rule = _parse_rule(entry, shown, origin, block, index)
        if rule.name in names:
            raise RulesFileError(
                shown, _key_line(block, "name"), "name", f"{rule.name!r} is used twice in this file"
            )
        names.add(rule.name)
        rules.append(rule)
    return tuple(rules)


def _top_key_line(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*(\"{re.escape(key)}\"|{re.escape(key)})\s*=")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 0


def _parse_rule(
    entry: Any,
    shown: str,
    origin: RuleOrigin,
    block: tuple[int, list[str]] | None,
    index: int,
) -> Rule:
    start = block[0] if block is not None else 0
    if not isinstance(entry, dict):
        raise RulesFileError(shown, start, "rule", f"rule {index + 1} is not a table")

    def line(key: str) -> int:
        return _key_line(block, key)

    for key in entry:
        if key not in RULE_KEYS:
            import difflib

            close = difflib.get_close_matches(key, RULE_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RulesFileError(shown, line(key), key, f"unknown key{hint}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RulesFileError(
            shown, line("name") if "name" in entry else start, "name", "required: a non-empty name"
        )
    decision = entry.get("decision")
    if decision not in DECISIONS:
        raise RulesFileError(
            shown,
            line("decision") if "decision" in entry else start,
            "decision",
            f"rule {name!r}: expected one of {', '.join(DECISIONS)}, got {decision!r}",
        )
    tools = _strings(entry["tools"], shown, line("tools"), "tools") if "tools" in entry else None
    paths = _strings(entry["paths"], shown, line("paths"), "paths") if "paths" in entry else None
    if paths is not None:
        try:
            import pathspec

            pathspec.GitIgnoreSpec.from_lines(paths)
        except (ValueError, TypeError) as exc:
            raise RulesFileError(
                shown, line("paths"), "paths", f"not a valid glob: {exc}"
            ) from None
    max_lines = entry.get("max_changed_lines")
    if max_lines is not None and (
        not isinstance(max_lines, int) or isinstance(max_lines, bool) or max_lines < 0
    ):
        raise RulesFileError(
            shown,
            line("max_changed_lines"),
            "max_changed_lines",
            f"expected a whole number of at least 0, got {max_lines!r}",
        )
    kinds = _strings(entry["kinds"], shown, line("kinds"), "kinds") if "kinds" in entry else None
    if kinds is not None:
        for kind in kinds:
            if kind not in KINDS:
                raise RulesFileError(
                    shown,
                    line("kinds"),
                    "kinds",
                    f"unknown kind {kind!r}: expected some of {', '.join(KINDS)}",
                )
    sources = (
        _strings(entry["sources"], shown, line("sources"), "sources")
        if "sources" in entry
        else None
    )
    reason = entry.get("reason", "")
    if not isinstance(reason, str):
        raise RulesFileError(shown, line("reason"), "reason", "expected a string")
    if decision == "discard" and not reason.strip():
        raise RulesFileError(
            shown,
            line("reason") if "reason" in entry else start,
            "reason",
            f"rule {name!r}: required for a discard rule (it is sent to the model)",
        )
    checks = entry.get("checks")
    if checks is not None and checks != "pass":
        raise RulesFileError(
            shown, line("checks"), "checks", f'rule {name!r}: expected "pass", got {checks!r}'
        )
    if checks is not None and decision != "apply":
        raise RulesFileError(
            shown, line("checks"), "checks", f"rule {name!r}: only an apply rule waits for checks"
        )
    return Rule(
        checks=checks,
        name=name.strip(),
        decision=decision,
        tools=tools,
        paths=paths,
        max_changed_lines=max_lines,
        kinds=kinds,  # type: ignore[arg-type]
        sources=sources,
        reason=reason.strip(),
        origin=origin,
        file=shown,
        line=start,
    )
