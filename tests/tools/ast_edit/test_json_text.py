"""The CLI's ``--json`` output written directly is the standard encoder's, character for
character (issue 44: the indenting encoder walked every match in Python)."""

from __future__ import annotations

import contextlib
import json
import shutil
import sysconfig
from pathlib import Path

import pytest

from redline.tools.ast_edit import search
from redline.tools.ast_edit.report import json_text, to_json
from redline.workspace.names import json_dumps

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Real files with many matches of every shape below (subscripts, prints, `== None`).
FILES = ("json/encoder.py", "email/_header_value_parser.py", "pydoc.py", "argparse.py")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stdlib")
    for rel in FILES:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(STDLIB / rel, target)
    # A file that cannot be parsed (an error entry), a rewrite left unchanged (a star
    # import has no names to parenthesise), non-ASCII text and an undecodable file name.
    (root / "broken.py").write_text("def f(:\n    x[1]\n", encoding="utf-8")
    (root / "star.py").write_text("from e import *\nfrom d import e\n", encoding="utf-8")
    (root / "naïve.py").write_text('x = {"é": 1}["é"]\nprint("ü", None == x)\n', encoding="utf-8")
    with contextlib.suppress(UnicodeEncodeError, OSError):  # a file system refusing it
        (root / "bad\udcffname.py").write_bytes(b"y = z[0]\n")
    return root


@pytest.mark.parametrize(
    ("pattern", "rewrite"),
    [
        ("$A[$B]", None),
        ("[$E for $X in $Y]", None),
        ("print($$$A)", "logger.info($$$A)"),
        ("$A == None", "$A is None"),
        ("from $M import $$$N", "from $M import ($$$N)"),
        ("nothing_is_called_this($X)", None),
    ],
)
def test_json_text_is_the_standard_encoders_output(
    corpus: Path, pattern: str, rewrite: str | None
) -> None:
    report = search(corpus, [(pattern, rewrite)], workers=1, cache=None)
    expected = json_dumps(to_json(report), indent=2)
    assert json_text(report) == expected
    assert json.loads(expected)["files_searched"] == report.files_searched


def test_the_corpus_has_every_kind_of_entry(corpus: Path) -> None:
    found = json_text(search(corpus, [("$A[$B]", None)], workers=1, cache=None))
    assert '"errors": [\n    {\n      "path": "broken.py"' in found
    assert '"naïve.py"' in found and '"{\\"é\\": 1}[\\"é\\"]"' in found
    if (corpus / "bad\udcffname.py").exists():
        assert '"bad\\udcffname.py"' in found
    kept = search(corpus, [("from $M import $$$N", "from $M import ($$$N)")], workers=1, cache=None)
    assert '"left_unchanged": [\n        "line 1: left unchanged' in json_text(kept)


def test_the_cli_prints_it(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from redline.cli import main

    status = main(["ast-edit", "-C", str(corpus), "--pattern", "$A[$B]", "--json"])
    out = capsys.readouterr().out
    report = search(corpus, [("$A[$B]", None)], workers=1, cache=None)
    assert status == 0
    assert out == json_dumps(to_json(report), indent=2) + "\n"
