"""The dashboards' half of ``redline.termtext``: untrusted text in a notification is
shown, never sent to the terminal, and never read as Textual markup.

Every Line-API widget draws through ``tui.render.content_strip`` (which shows control and
invisible characters); ``Static`` headers and lists take ``termtext.one_line`` text as
``Content`` (never markup); notifications go through :class:`ShownApp.notify`.
"""

from __future__ import annotations

from typing import TypeVar

from textual.app import App
from textual.notifications import SeverityLevel

from redline.termtext import one_line, visible

ReturnType = TypeVar("ReturnType")


class ShownApp(App[ReturnType]):
    """An app whose notifications carry agents' text (labels, reasons, paths) safely."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        # Plain text always: a label holding "[link=…]" or "[bold]" stays those characters.
        super().notify(
            visible(message),
            title=one_line(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )
