"""The postgres group is gated like e2e: without PostgreSQL its tests skip with a reason,
and under CI=true that skip is a failure (tests/conftest.py's GATED_MARKERS)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

GATED = """
import pytest

pytestmark = pytest.mark.postgres

@pytest.fixture(scope="session")
def server():
    pytest.skip("PostgreSQL is not installed (apt-get install postgresql); see .ci/run")

def test_needs_postgres(server):
    pass
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest("from tests.conftest import pytest_runtest_makereport  # noqa: F401\n")
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    postgres: a real PostgreSQL\n"
    )
    pytester.makepyfile(test_gated=GATED)
    return pytester


def test_a_missing_postgresql_fails_under_ci(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:textual-snapshot")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*skipped under CI=true*PostgreSQL is not installed*"])


def test_a_missing_postgresql_is_a_skip_locally(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-rs"
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*PostgreSQL is not installed*"])
