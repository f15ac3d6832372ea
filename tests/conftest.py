"""Shared fixtures: every test gets its own user config and state directories; the stress
switch; the end-to-end gate (a skipped ``e2e`` test is a failure under ``CI=true``)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.drivers.model.providers.fake_openai import FakeOpenAI


def pytest_configure(config: pytest.Config) -> None:
    """Let the Ctrl-C tests' children receive SIGINT even when the suite runs in the background.

    A shell starts background jobs (``cmd &``, ``nohup``) with SIGINT ignored, and an ignored
    signal stays ignored across ``exec``: every ``redline`` the tests start would then ignore
    the SIGINT they send. A handler (unlike SIG_IGN) is reset to the default on ``exec``.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Nothing a test starts may write the real user's state (the state key, the known
    # workspaces): module- and session-scoped fixtures run before the per-test
    # ``isolated_user_config``, so the whole run gets a state folder of its own first.
    import tempfile

    os.environ["XDG_STATE_HOME"] = _RUN_STATE[0] = tempfile.mkdtemp(prefix="redline-test-state-")
    # No `redline hook` a test starts uses or starts a resident hook server (a daemon left
    # behind); tests/hookserver/ turn it on for their own servers, and stop them.
    os.environ["REDLINE_HOOK_SERVER"] = "off"
    _bytecode_once()
    _pilot_idle_sampling()


def _pilot_idle_sampling() -> None:
    """Textual's Pilot waits after every key press (twice) and every ``pause()`` until the
    process looks idle, sampling in 20 ms sleeps: at least 40 ms of an idle core per key,
    about a third of the dashboard tests' time (issue 44's suite row). Sampling in 5 ms
    sleeps keeps the same test (the process used under 1 ms of CPU in the last sample) at a
    quarter of the wait. The tests themselves await conditions (``wait_until``), never this
    heuristic; textual is pinned to a minor release, and an unknown one is left as it is."""
    try:
        from textual import _wait
    except ImportError:
        return
    if getattr(_wait, "SLEEP_GRANULARITY", None) == 1 / 50:
        _wait.SLEEP_GRANULARITY = 0.005
        _wait.SLEEP_IDLE = 0.001


_RUN_STATE = [""]


def _bytecode_once() -> None:
    """With ``PYTHONDONTWRITEBYTECODE`` set (some shells and CI images set it), every Python
    process the suite starts (hundreds: ``redline`` commands, hook, MCP and ACP processes,
    the xdist workers) compiled the modules it imports again: about 0.4 s of CPU for each
    one importing Textual or libcst (issue 44). The run instead keeps bytecode in a cache
    folder of its own (``PYTHONPYCACHEPREFIX``: ``$XDG_CACHE_HOME/redline-tests/pycache``),
    never beside the sources, so the setting's purpose (no ``__pycache__`` in the trees)
    holds; the next run finds it compiled (Python checks each file's source stamp)."""
    import sys

    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    prefix = os.path.join(cache, "redline-tests", "pycache")
    try:
        os.makedirs(prefix, exist_ok=True)
    except OSError:
        return  # no writable cache: compile as before
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    _end_hook_servers(config)
    if _RUN_STATE[0]:
        shutil.rmtree(_RUN_STATE[0], ignore_errors=True)


def _end_hook_servers(config: pytest.Config) -> None:
    """A safety net under ``REDLINE_HOOK_SERVER=off``: a test that builds its hook's
    environment without the switch lets that hook start a ``redline hook-server``; end
    (SIGTERM) every one whose state or runtime folder is this run's, so none outlives it."""
    factory = getattr(config, "_tmp_path_factory", None)
    roots = [_RUN_STATE[0]] if _RUN_STATE[0] else []
    if factory is not None:
        with contextlib.suppress(OSError, ValueError):
            if factory._basetemp is not None:  # made by this run (never make one here)
                roots.append(str(factory._basetemp))
    if not roots or not os.path.isdir("/proc"):
        return
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as reading:
                if b"hook-server" not in reading.read():
                    continue
            with open(f"/proc/{entry}/environ", "rb") as reading:
                environ = reading.read().split(b"\0")
        except OSError:
            continue
        for item in environ:
            name, _, value = item.decode(errors="replace").partition("=")
            if name in ("XDG_STATE_HOME", "XDG_RUNTIME_DIR") and value.startswith(tuple(roots)):
                with contextlib.suppress(OSError):
                    os.kill(int(entry), signal.SIGTERM)
                break


#: Markers of the groups that need a tool from outside the project (a browser, a real agent
#: from npm, a PostgreSQL server, a working bubblewrap sandbox). The default run leaves them
#: out (``addopts`` in pyproject.toml); ``uv run pytest -m e2e`` runs them. Locally a missing tool skips such a
#: test with a reason; under CI (``CI=true``) that skip is a failure, so CI can never pass
#: while silently testing nothing.
GATED_MARKERS = ("e2e", "postgres", "sandbox")


def ci_requires_everything() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not report.skipped or not ci_requires_everything():
        return
    if not any(item.get_closest_marker(name) for name in GATED_MARKERS):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"a gated test was skipped under CI=true, which is a failure: {reason}"


@pytest.fixture(autouse=True)
def isolated_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    config_dir = tmp_path_factory.mktemp("redline-config")
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(config_dir))
    # The state key lives in $XDG_STATE_HOME/redline (never in the real home during tests).
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("redline-state")))
    monkeypatch.delenv("REDLINE_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield config_dir


@pytest.fixture(autouse=True)
def checks_share_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks' default ``[check_runner] jobs`` in tests: this worker's share of the CPUs.

    The product's default is every usable core (``redline.checks.config.default_jobs``), so a
    test running a configured check set in each of the ``-n auto`` xdist workers ran that many
    checks at once per worker: twice as many CPU-bound processes as cores here (issue 44). A
    test that sets ``jobs`` in its config, or passes ``jobs=`` itself, still gets what it asks.
    """
    from redline.checks import config

    monkeypatch.setattr(config, "default_jobs", cpu_share)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on 127.0.0.1 (see tests/drivers/model/providers/fake_openai.py)."""
    with FakeOpenAI() as fake:
        yield fake


STRESS_ENV = "REDLINE_STRESS"


def stress_requested(config: pytest.Config) -> bool:
    """Full fault-injection counts under ``-m stress`` (or ``REDLINE_STRESS=1``)."""
    if os.environ.get(STRESS_ENV, "") not in ("", "0"):
        return True
    expression = str(config.getoption("markexpr", "") or "")
    return "stress" in expression.replace("not stress", "")


@pytest.fixture
def stress(request: pytest.FixtureRequest) -> bool:
    """For ``@pytest.mark.stress`` tests: True means run the full count.

    A plain ``uv run pytest`` runs every stress test with a seeded handful of cases;
    ``uv run pytest -m stress`` runs only the stress tests, each in full.
    """
    return stress_requested(request.config)


def cpu_share() -> int:
    """The CPUs one test may keep busy at once: the usable ones divided among the
    pytest-xdist workers (``-n auto`` already starts one per core, so a test that runs its
    own processes in parallel would otherwise over-subscribe the machine; issue 44)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on macOS
        usable = os.cpu_count() or 1
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, usable // max(1, workers))
