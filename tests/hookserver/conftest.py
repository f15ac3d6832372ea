"""The hook server's tests: a private runtime folder and the environment of their calls."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from redline.hookserver import client


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short private XDG_RUNTIME_DIR (a socket's path must fit 108 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="rlhs-", dir="/tmp"))
    folder.chmod(0o700)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def env(runtime: Path) -> dict[str, str]:
    """The environment of this test's servers and hook calls: the server on."""
    values = {
        k: v for k, v in os.environ.items() if k not in (client.SWITCH_ENV, "REDLINE_QUEUE_URL")
    }
    values["XDG_RUNTIME_DIR"] = str(runtime)
    return values
