"""LazyLogger: a module's logger whose ``logging`` import waits for the first message."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from redline.lazylog import LazyLogger


def test_messages_reach_the_named_logger_with_the_callers_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = LazyLogger("redline.test.lazy")
    with caplog.at_level(logging.DEBUG, logger="redline.test.lazy"):
        log.debug("one %s", "debug")
        log.warning("a warning")
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("it failed: %s", "pa-1")
    records = [r for r in caplog.records if r.name == "redline.test.lazy"]
    assert [(r.levelname, r.getMessage()) for r in records] == [
        ("DEBUG", "one debug"),
        ("WARNING", "a warning"),
        ("ERROR", "it failed: pa-1"),
    ]
    assert all(
        r.funcName == "test_messages_reach_the_named_logger_with_the_callers_line" for r in records
    )
    assert records[-1].exc_info is not None and "boom" in caplog.text


def test_making_one_imports_no_logging() -> None:
    code = (
        "import sys; from redline.lazylog import LazyLogger; LazyLogger('x'); "
        "print('logging' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
