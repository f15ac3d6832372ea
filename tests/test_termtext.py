"""redline.termtext: the one filter of terminal text, and the streams cli.main installs."""

from __future__ import annotations

import io
import json
import sys
import unicodedata

import pytest

from redline.termtext import (
    JsonWriter,
    TerminalWriter,
    crlf,
    diff_line,
    hides,
    one_line,
    terminal_streams,
    visible,
)

HOSTILE = {
    "erase line": ("ok\x1b[2K\x1b[1Gevil", "ok\\x1b[2K\\x1b[1Gevil"),
    "osc 52": ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),
    "bell": ("ding\x07", "ding\\x07"),
    "carriage return": ("good\rbad", "good\\x0dbad"),
    "c1 csi": ("a\x9b31mb", "a\\x9b31mb"),
    "del": ("a\x7fb", "a\\x7fb"),
    "bidi override": ('s = "\u202eevil"', 's = "<U+202E>evil"'),
    "isolate": ("\u2066x\u2069", "<U+2066>x<U+2069>"),
    "zero width": ("a\u200bb\ufeff", "a<U+200B>b<U+FEFF>"),
    "arabic mark": ("\u061c", "<U+061C>"),
    "line separator": ("a\u2028b\u2029", "a<U+2028>b<U+2029>"),
    "tag": ("\U000e0041", "<U+E0041>"),
}


@pytest.mark.parametrize(("raw", "shown"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_each_hidden_character_is_shown(raw: str, shown: str) -> None:
    assert visible(raw) == shown
    assert one_line(raw) == shown
    assert hides(raw)


def test_every_control_and_format_character_is_shown() -> None:
    missed = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf")
        and chr(code) not in "\n\t"
        and visible(chr(code)) == chr(code)
    ]
    assert missed == []


def test_text_keeps_newlines_and_tabs_one_line_shows_them() -> None:
    assert visible("a\n\tb") == "a\n\tb"
    assert one_line("label\nsecond row") == "label\\x0asecond row"
    assert one_line("a\tb") == "a\\x09b"
    assert one_line("a\tb", tab=True) == "a\tb"
    assert not hides("plain text, ünïcode, 日本, emoji 🎉\n")
    assert visible("[bold]x[/bold]") == "[bold]x[/bold]"  # markup is the dashboard's to escape


def test_crlf_is_said_once_and_other_carriage_returns_are_shown() -> None:
    assert crlf("a\r\nb\r\n") and crlf("a\r\nb")
    assert not crlf("a\r\nb\n") and not crlf("one line\r") and not crlf("")
    assert diff_line("x = 1\r\n", crlf_file=True) == "x = 1"
    assert diff_line("x = 1\r\n") == "x = 1\\x0d"
    assert diff_line("a\rb\r\n", crlf_file=True) == "a\\x0db"
    assert diff_line("\tindent\x1b[8m\n") == "\tindent\\x1b[8m"


def test_terminal_writer_shows_what_it_writes() -> None:
    target = io.StringIO()
    writer = TerminalWriter(target)
    print("pa-1: ok.py\x1b[2K\r\x1b[1Afake row", file=writer)
    writer.writelines(["\u202e", "\n"])
    assert target.getvalue() == "pa-1: ok.py\\x1b[2K\\x0d\\x1b[1Afake row\n<U+202E>\n"


def test_json_writer_keeps_the_json_and_its_meaning() -> None:
    value = {"label": "a\x1b[2K\u202e\x85\x7f\U000e0041\tb\n", "n": 1}
    target = io.StringIO()
    writer = JsonWriter(target)
    print(json.dumps(value, ensure_ascii=False), file=writer)
    out = target.getvalue()
    assert json.loads(out) == value
    assert not hides(out)
    assert "\\u202e" in out and "\\udb40\\udc41" in out


def test_terminal_streams_are_put_back(capsys: pytest.CaptureFixture[str]) -> None:
    before = sys.stdout, sys.stderr
    with terminal_streams():
        assert isinstance(sys.stdout, TerminalWriter)
        print("\x1b[31mred")
        print("\x07", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    out, err = capsys.readouterr()
    assert (out, err) == ("\\x1b[31mred\n", "\\x07\n")


def test_display_diff_says_crlf_once_and_counts_hidden_lines() -> None:
    from redline.workspace.preview import FileModify, Preview, display_diff, sha256_bytes

    def modify(old: str, new: str) -> Preview:
        return Preview([FileModify("w.txt", sha256_bytes(old.encode()), old, new)])

    shown, hidden = display_diff(modify("x\r\ny\r\n", "x\r\nz\x1b[8m\r\n"))
    assert shown.split("\n")[:2] == ["--- a/w.txt", "+++ b/w.txt\t(CRLF line endings)"]
    assert "\r" not in shown and "+z\x1b[8m" in shown and hidden == 1
    # Only some lines end with \r\n: no header note, every \r left to be shown.
    shown, hidden = display_diff(modify("x\ny\n", "x\ny\r\n"))
    assert "CRLF" not in shown and "+y\r" in shown and hidden == 1
