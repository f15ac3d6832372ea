"""The README's command table names every flag, and its key table every dashboard key."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from redline.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"


def _table_rows(heading: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `")]


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    flags = set()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        # The long spelling when there is one, else the short one.
        longs = [o for o in action.option_strings if o.startswith("--")]
        flags.update(longs[:1] or action.option_strings[:1])
    return flags


def test_command_table_lists_every_flag() -> None:
    rows = _table_rows("Using it on your own code")
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands: dict[str, argparse.ArgumentParser] = {"": parser, **subparsers.choices}
    for name, sub in commands.items():
        prefix = f"| `redline {name}".rstrip() + (" " if name else "")
        mine = [row for row in rows if row.startswith(prefix) or row.startswith(f"{prefix}`")]
        if not name:
            mine = [row for row in rows if re.match(r"\| `redline (\[|--)", row)]
        assert mine, f"README: no row for `redline {name}`"
        text = " ".join(mine)
        missing = sorted(flag for flag in _flags(sub) if flag not in text)
        assert not missing, f"README: `redline {name}` row lacks {missing}"


def test_key_table_lists_every_key() -> None:
    from redline.tui.app import RedlineApp

    text = " ".join(_table_rows("Keys"))
    for binding in RedlineApp.BINDINGS:
        shown = getattr(binding, "key_display", None) or binding.key.split(",")[0]
        assert f"`{shown}`" in text, f"README: the key table lacks `{shown}`"
    for key in ("tab", "j", "k"):
        assert f"`{key}`" in text


def test_help_screen_and_key_table_list_the_same_keys() -> None:
    from redline.tui.screens.help import KEY_MAP

    readme = {
        key for row in _table_rows("Keys") for key in re.findall(r"`([^`]+)`", row.split(" | ")[0])
    }
    helped = {key.strip() for _, keys in KEY_MAP for shown, _ in keys for key in shown.split(" / ")}
    assert readme == helped, (
        f"only in the README: {sorted(readme - helped)}; only in help: {sorted(helped - readme)}"
    )


def test_the_first_screen_tells_a_newcomer_what_redline_is() -> None:
    # What a newcomer sees before scrolling: the pitch, the sources, a picture, two commands.
    first = "\n".join(README.read_text(encoding="utf-8").splitlines()[:30])
    assert "review inbox" in first and "any coding agent" in first
    for source in ("own agent runtime", "Claude Code", "Gemini CLI", "Codex", "ACP", "MCP"):
        assert source in first, f"README's first screen does not name {source}"
    picture = re.search(r"!\[[^\]]+\]\((screenshots/dashboard\.svg)\)", first)
    assert picture is not None and (README.parent / picture.group(1)).is_file()
    assert "uv run redline demo" in first and "uv run pytest" in first
