"""The end-to-end gate: a skipped ``e2e`` test is a failure under CI=true, a skip elsewhere."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

GATED_TEST = """
import pytest

pytestmark = pytest.mark.e2e

@pytest.mark.skipif(True, reason="the browser is missing")
def test_needs_a_browser():
    pass

def test_needs_an_agent():
    pytest.skip("the agent is not installed")

def test_runs():
    assert True
"""

# The snapshot plugin keeps one temporary folder per process: an inner run must not use it.
PLAIN_TEST = """
import pytest

def test_plainly_skipped():
    pytest.skip("not here")
"""

CONFTEST = "from tests.conftest import pytest_runtest_makereport  # noqa: F401\n"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n    e2e: end to end\n"
    )
    pytester.makepyfile(test_gated=GATED_TEST, test_plain=PLAIN_TEST)
    return pytester


def test_a_skipped_e2e_test_fails_under_ci(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:textual-snapshot")
    # A skip from a skipif mark happens in setup, so that one is reported as an error.
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*skipped under CI=true*the browser is missing*"])
    result.stdout.fnmatch_lines(["*skipped under CI=true*the agent is not installed*"])


def test_a_skipped_e2e_test_is_a_skip_with_its_reason_locally(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-rs"
    )
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["*the browser is missing*", "*the agent is not installed*"])
