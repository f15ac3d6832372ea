"""A module's logger that imports ``logging`` on first use.

``logging`` brings ``traceback``, ``textwrap`` and ``string`` along (1-3 ms); the modules a
``redline hook`` call loads before its action is queued log only when something goes
wrong, so they hold a :class:`LazyLogger` instead (docs/performance.md, issue 49).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging


class LazyLogger:
    """``logging.getLogger(name)``, looked up at the first call of one of its methods."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: logging.Logger | None = None

    @property
    def logger(self) -> logging.Logger:
        if self._logger is None:
            import logging

            self._logger = logging.getLogger(self.name)
        return self._logger

    def debug(self, msg: object, *args: object, **kwargs: object) -> None:
        self.logger.debug(msg, *args, stacklevel=2, **kwargs)  # type: ignore[arg-type]

    def info(self, msg: object, *args: object, **kwargs: object) -> None:
        self.logger.info(msg, *args, stacklevel=2, **kwargs)  # type: ignore[arg-type]

    def warning(self, msg: object, *args: object, **kwargs: object) -> None:
        self.logger.warning(msg, *args, stacklevel=2, **kwargs)  # type: ignore[arg-type]

    def error(self, msg: object, *args: object, **kwargs: object) -> None:
        self.logger.error(msg, *args, stacklevel=2, **kwargs)  # type: ignore[arg-type]

    def exception(self, msg: object, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("exc_info", True)
        self.logger.error(msg, *args, stacklevel=2, **kwargs)  # type: ignore[arg-type]
