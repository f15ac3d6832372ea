"""The e2e tests drive real agent CLIs; they carry the ``e2e`` marker."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: drives a real agent CLI (skipped when absent; a failure under CI=true)"
    )
