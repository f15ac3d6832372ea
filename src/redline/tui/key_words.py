"""A screen's keys described anew: the footer's words for ``y``, ``n`` or ``t`` follow what
the key acts on now (``Apply 2/5 hunks``, ``Request changes``, ``Since revision``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from textual.screen import Screen


def describe_keys(screen: Screen[Any], words: Iterable[tuple[str, str]]) -> None:
    """Give each ``(key, description)`` of ``words`` to ``screen``'s bindings of that key;
    the footer is refreshed only when a description changed."""
    changed = False
    for key, description in words:
        bindings = screen._bindings.key_to_bindings.get(key, [])
        for index, binding in enumerate(bindings):
            if binding.description != description:
                bindings[index] = dataclasses.replace(binding, description=description)
                changed = True
    if changed:
        screen.refresh_bindings()
