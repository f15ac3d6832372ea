"""Parsers of each format, and new vs fixed across a diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from redline.checks.compare import compare, line_map
from redline.checks.findings import (
    Finding,
    FormatError,
    parse_mypy,
    parse_pytest,
    parse_ruff,
    parse_sarif,
)

TREE = Path("/cache/tree")


def test_ruff_json_paths_become_relative() -> None:
    out = json.dumps(
        [
            {
                "code": "F401",
                "message": "`os` imported but unused",
                "filename": "/cache/tree/pkg/a.py",
                "location": {"row": 3, "column": 8},
            },
            {"code": None, "message": "SyntaxError", "filename": "b.py", "location": None},
        ]
    )
    assert parse_ruff(out, TREE) == [
        Finding("pkg/a.py", 3, "F401", "`os` imported but unused"),
        Finding("b.py", None, "syntax-error", "SyntaxError"),
    ]
    with pytest.raises(FormatError, match="not JSON"):
        parse_ruff("Traceback", TREE)
    with pytest.raises(FormatError, match="no filename"):
        parse_ruff('[{"code": "X"}]', TREE)


def test_mypy_lines() -> None:
    out = (
        "pkg/a.py:4: error: Incompatible return value type  [return-value]\n"
        "pkg/a.py:5:7: error: Name 'x' is not defined  [name-defined]\n"
        "pkg/a.py:6: note: See docs\n"
        "Found 2 errors in 1 file\n"
    )
    assert parse_mypy(out, TREE) == [
        Finding("pkg/a.py", 4, "return-value", "Incompatible return value type"),
        Finding("pkg/a.py", 5, "name-defined", "Name 'x' is not defined"),
    ]


def test_junit_failures_and_errors(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    xml = """<?xml version="1.0"?><testsuites><testsuite>
    <testcase classname="tests.test_a" name="test_ok"/>
    <testcase classname="tests.test_a.TestB" name="test_bad"><failure message="assert 1 == 2">x</failure></testcase>
    <testcase classname="tests.test_a" name="test_err"><error message="">boom
KeyError: 'k'</error></testcase>
    </testsuite></testsuites>"""
    assert parse_pytest(xml, tmp_path) == [
        Finding("tests/test_a.py", None, "tests/test_a.py::TestB::test_bad", "assert 1 == 2"),
        Finding("tests/test_a.py", None, "tests/test_a.py::test_err", "KeyError: 'k'"),
    ]
    with pytest.raises(FormatError, match="no junit XML"):
        parse_pytest("", tmp_path)
    with pytest.raises(FormatError, match="not valid XML"):
        parse_pytest("<testsuite", tmp_path)


def test_sarif_results() -> None:
    out = json.dumps(
        {
            "runs": [
                {
                    "results": [
                        {
                            "ruleId": "R1",
                            "message": {"text": "bad"},
                            "locations": [
                                {
                                    "physicalLocation": {
                                        "artifactLocation": {"uri": "file:///cache/tree/x%20y.py"},
                                        "region": {"startLine": 9},
                                    }
                                }
                            ],
                        }
                    ]
                }
            ]
        }
    )
    assert parse_sarif(out, TREE) == [Finding("x y.py", 9, "R1", "bad")]
    with pytest.raises(FormatError, match="no runs"):
        parse_sarif("{}", TREE)


def test_line_map_and_compare_across_the_diff() -> None:
    old = "a\nb\nc\nd\n"
    new = "new\na\nb\nc\nd\n"
    assert line_map(old, new) == {1: 2, 2: 3, 3: 4, 4: 5}
    base = [Finding("m.py", 3, "E1", "old problem"), Finding("m.py", 4, "E2", "gone")]
    proposal = [Finding("m.py", 4, "E1", "old problem"), Finding("m.py", 1, "E3", "fresh")]
    new_f, fixed = compare(base, proposal, "ruff-json", {"m.py": line_map(old, new)})
    assert new_f == [Finding("m.py", 1, "E3", "fresh")]
    assert fixed == [Finding("m.py", 4, "E2", "gone")]


def test_a_second_equal_finding_is_new() -> None:
    base = [Finding("m.py", 1, "F401", "`os` imported but unused")]
    proposal = [
        Finding("m.py", 1, "F401", "`os` imported but unused"),
        Finding("m.py", 2, "F401", "`os` imported but unused"),
    ]
    new_f, fixed = compare(base, proposal, "ruff-json", {})
    assert new_f == [Finding("m.py", 2, "F401", "`os` imported but unused")]
    assert fixed == []


def test_a_failing_test_with_a_new_message_is_not_new() -> None:
    base = [Finding("t.py", None, "t.py::test_x", "assert 1 == 2")]
    proposal = [Finding("t.py", None, "t.py::test_x", "assert 1 == 3")]
    assert compare(base, proposal, "pytest", {}) == ([], [])
