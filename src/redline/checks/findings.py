"""Findings and the parsers of each check format (ruff JSON, mypy, pytest junit XML, SARIF).

A tool's output is untrusted text: every parser checks shapes and raises
:class:`FormatError` (naming the format and what was wrong) rather than guessing.
Paths come back relative to the tree the check ran in (``/`` separators).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

MAX_MESSAGE = 2000
MAX_EXIT_OUTPUT = 4000


class FormatError(ValueError):
    """A check's output is not what its format promises."""


@dataclass(frozen=True)
class Finding:
    """One finding: ``line`` is 1-based, or None when the tool names no line."""

    path: str
    line: int | None
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "code": self.code, "message": self.message}

    @classmethod
    def from_dict(cls, data: Any) -> Finding:
        if not isinstance(data, dict):
            raise ValueError("a finding is not an object")
        line = data.get("line")
        if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
            raise ValueError("a finding's line is not a number")
        return cls(
            str(data.get("path", "")),
            line,
            str(data.get("code", "")),
            str(data.get("message", "")),
        )


def relative(name: str, tree: Path) -> str:
    """``name`` (absolute in ``tree``, or relative to it) as a tree-relative POSIX path."""
    path = name.replace("\\", "/")
    base = str(tree).rstrip("/") + "/"
    if path.startswith(base):
        path = path[len(base) :]
    elif os.path.isabs(path):
        try:
            path = os.path.relpath(os.path.realpath(path), os.path.realpath(tree))
        except ValueError:
            return path
    while path.startswith("./"):
        path = path[2:]
    return path


def _message(text: object) -> str:
    shown = str(text or "").strip()
    return shown if len(shown) <= MAX_MESSAGE else shown[:MAX_MESSAGE] + "…"


def _line(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    return None


def parse_ruff(output: str, tree: Path) -> list[Finding]:
    try:
        data = json.loads(output or "[]")
    except ValueError as exc:
        raise FormatError(f"ruff-json: the output is not JSON ({exc})") from None
    if not isinstance(data, list):
        raise FormatError("ruff-json: expected a JSON list of findings")
    found = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("filename"), str):
            raise FormatError("ruff-json: a finding has no filename")
        location = item.get("location")
        row = location.get("row") if isinstance(location, dict) else None
        found.append(
            Finding(
                relative(item["filename"], tree),
                _line(row),
                str(item.get("code") or "syntax-error"),
                _message(item.get("message")),
            )
        )
    return found


_MYPY = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+)(?::\d+)?(?::\d+:\d+)?: error: (?P<message>.*?)"
    r"(?:\s+\[(?P<code>[\w-]+)\])?$"
)


def parse_mypy(output: str, tree: Path) -> list[Finding]:
    found = []
    for line in output.splitlines():
        match = _MYPY.match(line.rstrip())
        if match is None:
            continue
        found.append(
            Finding(
                relative(match["path"], tree),
                _line(match["line"]),
                match["code"] or "error",
                _message(match["message"]),
            )
        )
    return found


def _module_path(classname: str, tree: Path) -> str:
    """``tests.test_x.TestY`` → ``tests/test_x.py`` when that file exists in ``tree``."""
    parts = [p for p in classname.split(".") if p]
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (tree / candidate).is_file():
            return candidate
    return "/".join(parts)


def parse_pytest(output: str, tree: Path) -> list[Finding]:
    """Failed and errored test cases of a junit XML report (pytest ``--junitxml``)."""
    import xml.etree.ElementTree as ET

    if not output.strip():
        raise FormatError("pytest: no junit XML report was written")
    try:
        # Expat (2.4.1+) limits entity expansion; ElementTree never loads external entities.
        root = ET.fromstring(output)
    except ET.ParseError as exc:
        raise FormatError(f"pytest: the junit XML report is not valid XML ({exc})") from None
    found = []
    for case in root.iter("testcase"):
        problem = None
        for tag in ("failure", "error"):
            problem = case.find(tag)
            if problem is not None:
                break
        if problem is None:
            continue
        classname = case.get("classname", "")
        name = case.get("name", "")
        file = case.get("file")
        path = relative(file, tree) if file else _module_path(classname, tree)
        line = _line(case.get("line"))
        if line is not None and file:
            line += 1  # xunit1's line is 0-based
        test = "::".join(p for p in (path, *_classes(classname), name) if p)
        message = problem.get("message") or ""
        if not message:
            lines = (problem.text or "").strip().splitlines()
            message = lines[-1] if lines else problem.tag
        found.append(Finding(path, line, test, _message(message)))
    return found


def _classes(classname: str) -> list[str]:
    return [p for p in classname.split(".") if p[:1].isupper()]


def parse_sarif(output: str, tree: Path) -> list[Finding]:
    try:
        data = json.loads(output)
    except ValueError as exc:
        raise FormatError(f"sarif: the output is not JSON ({exc})") from None
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list):
        raise FormatError("sarif: no runs list")
    found = []
    for run in runs:
        results = run.get("results", []) if isinstance(run, dict) else None
        if not isinstance(results, list):
            raise FormatError("sarif: a run's results is not a list")
        for result in results:
            if not isinstance(result, dict):
                raise FormatError("sarif: a result is not an object")
            message = result.get("message")
            text = message.get("text", "") if isinstance(message, dict) else ""
            path, line = "", None
            locations = result.get("locations")
            if isinstance(locations, list) and locations and isinstance(locations[0], dict):
                physical = locations[0].get("physicalLocation")
                if isinstance(physical, dict):
                    artifact = physical.get("artifactLocation")
                    uri = artifact.get("uri") if isinstance(artifact, dict) else None
                    if isinstance(uri, str):
                        parsed = urlparse(uri)
                        name = unquote(parsed.path) if parsed.scheme == "file" else unquote(uri)
                        path = relative(name, tree)
                    region = physical.get("region")
                    if isinstance(region, dict):
                        line = _line(region.get("startLine"))
            found.append(Finding(path, line, str(result.get("ruleId") or "sarif"), _message(text)))
    return found


PARSERS: dict[str, Callable[[str, Path], list[Finding]]] = {
    "ruff-json": parse_ruff,
    "mypy": parse_mypy,
    "pytest": parse_pytest,
    "sarif": parse_sarif,
}

#: The exit statuses after which a parsed format's output counts (anything else: error).
OK_STATUSES: dict[str, tuple[int, ...] | None] = {
    "ruff-json": (0, 1),
    "mypy": (0, 1),
    "pytest": (0, 1, 5),  # 5: no tests were collected
    "sarif": None,  # any, as long as the output is SARIF
}


def exit_code_finding(status: int, stdout: str, stderr: str = "") -> list[Finding]:
    """``exit-code``: a non-zero status is one finding whose message is the output as is
    (standard output, then standard error; the end of it when it is long)."""
    if status == 0:
        return []
    text = "\n".join(part for part in (stdout.strip(), stderr.strip()) if part)
    if len(text) > MAX_EXIT_OUTPUT:
        text = "…" + text[-MAX_EXIT_OUTPUT:]
    return [Finding("", None, f"exit {status}", text)]
