"""Options that may be written at more than one level of the command line.

``redline -C P pending discard ID``, ``redline pending -C P discard ID`` and ``redline
pending discard ID -C P`` mean the same thing. argparse alone gets this wrong: a
subcommand's parser starts from a fresh namespace and its defaults overwrite what the
levels above it parsed, so ``redline -C P trust`` trusted the current folder.

So every option that exists at several levels (``-C``, ``--json``, the dashboard's own
options such as ``--model`` that ``exec`` and ``serve`` take too) is stored per level —
``cwd@0``, ``cwd@1``, … — and :func:`merge` folds the levels into the one ``args.cwd`` the
command reads, after checking that:

- the same option given twice with different values is an error (exit 2);
- an option written before a subcommand that does not take it is an error (exit 2),
  never silently ignored.

Standard library only: ``redline --help`` must stay fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Options shared by more than one level even when the top level does not have them.
GROUP_SHARED = ("cwd", "json")
LEAF = "_leaf"


class _Collect(argparse._StoreAction):
    """A store that keeps every value given at its level (to catch ``-C a -C b``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        given = list(getattr(namespace, self.dest, None) or [])
        given.append(values)
        setattr(namespace, self.dest, given)


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose subcommands report their own unknown options.

    argparse hands a subcommand's unknown arguments up to the top-level parser, which then
    prints the top-level usage; here the subcommand that got them says so, with its usage.
    """

    is_subcommand = False
    levels: Levels | None = None  # set on the top level by share()

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed = super().parse_args(args, namespace)
        if self.levels is not None:
            merge(self.levels, parsed)
        return parsed

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self.is_subcommand:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


@dataclass
class _Leaf:
    """One command a user can run (``redline``, ``redline pending discard``, …)."""

    name: str
    parser: argparse.ArgumentParser
    actions: dict[str, argparse.Action] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, Any] = field(default_factory=dict)


@dataclass
class Levels:
    """What :func:`share` recorded about the parser tree, for :func:`merge`."""

    shared: set[str]
    depth: int
    leaves: dict[str, _Leaf]
    flags: dict[str, str]


def _children(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _walk(
    parser: argparse.ArgumentParser, name: str, depth: int
) -> list[tuple[argparse.ArgumentParser, str, int]]:
    found = [(parser, name, depth)]
    for child_name, child in _children(parser):
        if isinstance(child, CommandParser):
            child.is_subcommand = True
        found.extend(_walk(child, f"{name} {child_name}", depth + 1))
    return found


def _own(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        action.dest: action
        for action in parser._actions
        if action.option_strings and action.dest not in ("help", "version")
    }


def share(root: argparse.ArgumentParser) -> Levels:
    """Make the options shared between levels parse per level; returns what :func:`merge` needs.

    Every option of the top level, and ``-C``/``--json`` on groups (``pending``,
    ``rules``) whose subcommands take them, is accepted at each level that has it.
    """
    tree = _walk(root, "redline", 0)
    for parser, _name, _depth in tree:
        if parser is root or not _children(parser):
            continue
        # A group's -C is taken by each of its subcommands (`pending discard ID -C P`) and
        # a subcommand's --json by the group (`pending --json list`).
        children = [child for _n, child in _children(parser)]
        if "cwd" in _own(parser):
            for child in children:
                _copy_option(_own(parser)["cwd"], child)
        for child in children:
            if "json" in _own(child):
                _copy_option(_own(child)["json"], parser)
    shared = set(_own(root)) | set(GROUP_SHARED)
    leaves: dict[str, _Leaf] = {}
    flags: dict[str, str] = {}
    for parser, name, _depth in tree:
        if _children(parser) and parser is not root:
            continue  # a group, not a command: nothing runs it alone
        leaf = _Leaf(name, parser)
        for dest, action in _own(parser).items():
            if dest in shared:
                leaf.actions[dest] = action
                leaf.defaults[dest] = action.default
                leaf.choices[dest] = action.choices
                flags.setdefault(dest, action.option_strings[0])
        parser.set_defaults(**{LEAF: name})
        leaves[name] = leaf
    union: dict[str, set[Any]] = {}
    for leaf in leaves.values():
        for dest, choices in leaf.choices.items():
            if choices is not None:
                union.setdefault(dest, set()).update(choices)
    max_depth = 0
    for parser, _name, depth in tree:
        max_depth = max(max_depth, depth)
        for dest, action in _own(parser).items():
            if dest not in shared:
                continue
            if action.metavar is None and action.nargs != 0 and action.choices is None:
                action.metavar = dest.upper()
            if dest in union and action.choices is not None:
                if action.metavar is None:  # the help keeps showing the command's own choices
                    action.metavar = "{" + ",".join(str(c) for c in action.choices) + "}"
                # Checked against the command's own choices in merge(), once it is known.
                action.choices = sorted(union[dest])
            action.dest = f"{dest}@{depth}"
            action.default = argparse.SUPPRESS
            if type(action) is argparse._StoreAction:
                action.__class__ = _Collect
    levels = Levels(shared=shared, depth=max_depth, leaves=leaves, flags=flags)
    if isinstance(root, CommandParser):
        root.levels = levels
    return levels


def _copy_option(template: argparse.Action, parser: argparse.ArgumentParser) -> None:
    if template.dest in _own(parser):
        return
    if template.nargs == 0:
        parser.add_argument(
            *template.option_strings, dest=template.dest, action="store_true", help=template.help
        )
        return
    parser.add_argument(
        *template.option_strings,
        dest=template.dest,
        metavar=template.metavar,
        default=template.default,
        help=template.help,
    )


def _same(dest: str, value: Any) -> Any:
    if dest == "cwd" and isinstance(value, str):
        return os.path.realpath(os.path.expanduser(value))
    return value


def merge(levels: Levels, args: argparse.Namespace) -> None:
    """Fold the per-level values into ``args.DEST``; exits 2 (with the command's usage) on
    a conflict or an option the command does not take."""
    leaf = levels.leaves[getattr(args, LEAF)]
    for dest in sorted(levels.shared):
        given: list[Any] = []
        for depth in range(levels.depth + 1):
            key = f"{dest}@{depth}"
            if hasattr(args, key):
                given.append(getattr(args, key))
                delattr(args, key)
        action = leaf.actions.get(dest)
        flag = levels.flags.get(dest, f"--{dest}")
        if action is None:
            if given:
                _fail(leaf, f"{flag} does not apply to `{leaf.name}`")
            continue
        if not given:
            value = leaf.defaults[dest]
        elif isinstance(action, argparse._AppendAction):
            value = [item for items in given for item in items]
        elif action.nargs == 0:
            value = given[-1]
        else:
            values = [item for items in given for item in items]
            distinct = {_same(dest, item) for item in values}
            if len(distinct) > 1:
                from redline.redaction import redact_urls  # a --queue URL's password

                shown = redact_urls(", ".join(repr(item) for item in dict.fromkeys(values)))
                _fail(leaf, f"{flag} given more than once with different values: {shown}")
            value = values[-1]
            choices = leaf.choices.get(dest)
            if choices is not None and value not in choices:
                allowed = ", ".join(repr(choice) for choice in choices)
                _fail(leaf, f"argument {flag}: invalid choice: {value!r} (choose from {allowed})")
        if dest == "cwd" and isinstance(value, str):
            value = os.path.expanduser(value)
        setattr(args, dest, value)


def _fail(leaf: _Leaf, message: str) -> None:
    leaf.parser.print_usage(sys.stderr)
    print(f"{leaf.name}: error: {message}", file=sys.stderr)
    raise SystemExit(2)
