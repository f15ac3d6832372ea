"""Arrival notices: the dashboard tells the person an action waits when it is not in front.

"Not in front" is the terminal window without focus (Textual's ``AppBlur``; terminals that
do not report focus count as always focused) or another screen over the inbox (a dialog,
the editor). Then the app writes :func:`redline.notify.terminal_alert`'s bell and desktop
escape through its driver and hands each arrival to the ``[notify] command``
(:class:`redline.notify.CommandNotifier`, on its own thread).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from redline.config import ConfigError, NotifyConfig, notify_settings
from redline.notify import Arrival, CommandNotifier, terminal_alert
from redline.review.store import PendingAction
from redline.tui.widgets.pending_stack import action_source


class ArrivalNotices:
    """Which listed actions are new, and the notices for them."""

    def __init__(self, config: NotifyConfig, on_error: Callable[[str], object]) -> None:
        self.config = config
        self._seen: set[str] | None = None
        self._notifier = (
            CommandNotifier(config.command, config.timeout, on_error) if config.command else None
        )

    @classmethod
    def load(
        cls, root: Path, on_error: Callable[[str], object]
    ) -> tuple[ArrivalNotices, list[str]]:
        """``[notify]`` for ``root``, and the lines to show about it (skipped tables, errors).

        A config that cannot be used leaves the bell and desktop notices on and runs no
        command; the line says why.
        """
        try:
            config = notify_settings(root)
        except ConfigError as exc:
            return cls(NotifyConfig(), on_error), [f"{exc} (notify command off)"]
        return cls(config, on_error), list(config.warnings)

    def arrived(self, actions: Iterable[PendingAction]) -> list[Arrival]:
        """The actions not listed before (none on the first call: they were there already)."""
        listed = list(actions)
        ids = {action.id for action in listed}
        seen, self._seen = self._seen, ids
        if seen is None:
            return []
        # Oldest first: the stack lists the newest on top.
        return [
            Arrival(action.id, action.label, action_source(action))
            for action in reversed(listed)
            if action.id not in seen
        ]

    def left(self, action_ids: Iterable[str]) -> bool:
        """The listing last given to :meth:`arrived` lost ``action_ids`` and gained none
        (a long queue after a decision: no pass over it); False when there is no listing
        to compare with yet (then call :meth:`arrived`)."""
        seen = self._seen
        if seen is None:
            return False
        seen.difference_update(action_ids)
        return True

    def send(self, arrivals: list[Arrival], write: Callable[[str], object]) -> None:
        """Ring, show and run the command for ``arrivals`` (the caller checked "not in front")."""
        if not arrivals:
            return
        text = terminal_alert(self.config, arrivals)
        if text:
            write(text)
        if self._notifier is not None:
            for arrival in arrivals:
                self._notifier.notify(arrival)

    def close(self) -> None:
        if self._notifier is not None:
            self._notifier.close()
