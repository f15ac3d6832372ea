"""The README's key table names every dashboard key: the app's and the inbox screen's."""

from __future__ import annotations

from tests.test_readme import _table_rows

from redline.tui.app import RedlineApp
from redline.tui.screens.inbox import InboxScreen


def test_key_table_lists_every_inbox_key() -> None:
    text = " ".join(_table_rows("Keys"))
    for binding in [*RedlineApp.BINDINGS, *InboxScreen.BINDINGS]:
        shown = getattr(binding, "key_display", None) or binding.key.split(",")[0]
        assert f"`{shown}`" in text, f"README: the key table lacks `{shown}`"
