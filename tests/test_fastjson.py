"""``redline.fastjson``: the same values, text and errors as ``json.loads``/``json.dumps``,
without importing ``json``, ``re`` or ``typing`` (a hook call's pass-through, issue 49)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from redline import fastjson

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
TEXTS = [
    "{}",
    "[]",
    ' \t\n{"a": [1, 2.5, -0.0, 1e400, -1e400, 12345678901234567890]}\r\n',
    '{"u": "\\u00e9\\ud83d\\ude00 caf\u00e9 \U0001f600", "n": null, "t": true, "f": false}',
    '{"lone": "\\ud800", "nested": {"x": [[[[]]]]}, "dup": 1, "dup": 2}',
    "[NaN, Infinity, -Infinity]",
    '"just a string"',
    "42",
    '{"tab\\tnewline\\n": "quote \\" backslash \\\\ slash \\/"}',
]
BAD = ["", "   ", "{", "[1,]", "1 2", "\ufeff{}", "nul", '"\x01"', '{"a" 1}', "[1] x", "01"]


def _same(a: object, b: object) -> bool:
    """Equal, NaN included (compared through json's own text)."""
    return json.dumps(a) == json.dumps(b) and type(a) is type(b)


@pytest.mark.parametrize("text", TEXTS)
def test_loads_gives_what_json_gives(text: str) -> None:
    assert _same(fastjson.loads(text), json.loads(text))


def test_every_recorded_hook_payload_reads_the_same() -> None:
    files = sorted(FIXTURES.rglob("*.json"))
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert fastjson.loads(text) == json.loads(text), path


@pytest.mark.parametrize("text", BAD)
def test_bad_json_raises_jsons_own_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        fastjson.loads(text)
    assert str(got.value) == str(expected.value)


VALUES: list[object] = [
    {"hookSpecificOutput": {"permissionDecision": "deny", "reason": "caf\u00e9 \x1b[31m"}},
    [1, 2.5, -0.0, float("inf"), float("-inf"), float("nan"), 10**30, 1e-7, True, None],
    {7: "int key", 2.5: "float key", None: "none", False: "bool", "s": ("tuple", "as list")},
    "a string \u2028 \U0001f600 \ud800",
    {"deep": [[[{"x": []}]]]},
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_writes_what_json_writes(value: object) -> None:
    assert fastjson.dumps(value) == json.dumps(value)


def test_what_json_refuses_is_refused_the_same_way() -> None:
    circular: list[object] = []
    circular.append(circular)
    for value in (circular, {"set": {1}}, {(1, 2): "tuple key"}, object()):
        with pytest.raises((TypeError, ValueError)) as expected:
            json.dumps(value)
        with pytest.raises(type(expected.value)) as got:
            fastjson.dumps(value)
        assert str(got.value) == str(expected.value)
    # A refused value leaves nothing behind: the next call encodes as before.
    assert fastjson.dumps({"a": [1]}) == '{"a": [1]}'


def _fresh(script: str) -> str:
    """What ``script`` prints in a fresh interpreter (nothing of this test's loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_reading_and_writing_loads_no_json_re_nor_typing() -> None:
    script = (
        "import sys\n"
        "from redline import fastjson\n"
        'v = fastjson.loads(\' {"a": [1, "\\\\u00e9", NaN]} \')\n'
        'assert fastjson.dumps(v) == \'{"a": [1, "\\\\u00e9", NaN]}\', fastjson.dumps(v)\n'
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = set(_fresh(script).split())
    assert "redline.fastjson" in loaded
    assert not {"json", "re", "enum", "typing"} & loaded


def test_bad_json_in_a_fresh_interpreter_raises_jsons_own_error() -> None:
    """Without ``json`` loaded the C scanner cannot build its error (SystemError): the
    slow path gives json's own message all the same."""
    script = (
        "from redline import fastjson\n"
        "try:\n"
        "    fastjson.loads('{\"a\" 1}')\n"
        "except ValueError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    said = _fresh(script).strip()
    assert said == "JSONDecodeError Expecting ':' delimiter: line 1 column 6 (char 5)"
