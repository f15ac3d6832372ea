"""``[[checks]]`` and ``[check_runner]``: user always, a workspace's only once trusted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.checks import config as checks_config
from redline.checks.config import CheckSpec, default_jobs, load_checks
from redline.config import ConfigError, load_settings

ENTRY = '[[checks]]\nname = "{name}"\ncommand = ["ruff", "{{files}}"]\nformat = "ruff-json"\n'


def test_user_checks_and_defaults(tmp_path: Path, isolated_user_config: Path) -> None:
    (isolated_user_config / "config.toml").write_text(
        ENTRY.format(name="ruff") + 'timeout = 5\nwhen = "demand"\n[check_runner]\njobs = 3\n'
    )
    config = load_checks(tmp_path)
    assert config.checks == (
        CheckSpec("ruff", ("ruff", "{files}"), "ruff-json", 5.0, "demand", config.checks[0].origin),
    )
    assert config.jobs == 3
    # The general settings loader knows the keys (no "unknown key" warning).
    assert not [w for w in load_settings(tmp_path).warnings if "check" in w]


def test_workspace_checks_need_trust(tmp_path: Path, isolated_user_config: Path) -> None:
    (isolated_user_config / "config.toml").write_text(ENTRY.format(name="mine"))
    (tmp_path / ".redline").mkdir()
    (tmp_path / ".redline" / "config.toml").write_text(
        ENTRY.format(name="theirs") + "[check_runner]\njobs = 64\n"
    )
    untrusted = load_checks(tmp_path, trusted=False)
    assert [c.name for c in untrusted.checks] == ["mine"]
    assert [s.name for s in untrusted.skipped] == ["theirs"]
    assert "not trusted" in untrusted.skipped[0].why
    # The default (tests/conftest.py gives each xdist worker its share of the CPUs) ...
    assert untrusted.jobs == checks_config.default_jobs()
    # ... where the product's own default is every core this process may use.
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert default_jobs() == usable
    trusted = load_checks(tmp_path, trusted=True)
    assert [c.name for c in trusted.checks] == ["mine", "theirs"]
    assert trusted.skipped == () and trusted.jobs == 64


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[checks]]\ncommand = ["x"]\n', "checks[0].name: required"),
        ('[[checks]]\nname = "a"\ncommand = []\n', "checks 'a': command: expected"),
        ('[[checks]]\nname = "a"\ncommand = ["x"]\nformat = "eslint"\n', "format: expected one"),
        (ENTRY.format(name="a") + "timeout = 0\n", "timeout: expected seconds above 0"),
        (ENTRY.format(name="a") + 'when = "always"\n', "when: expected propose or demand"),
        (ENTRY.format(name="a") + "shell = true\n", "checks[0].shell: unknown key"),
        (ENTRY.format(name="a") * 2, "checks 'a': the name is used twice"),
        ("[check_runner]\njobs = 0\n", "check_runner.jobs: expected a whole number"),
        ("checks = 3\n", "checks: expected [[checks]] tables"),
    ],
)
def test_bad_entries_name_the_file_and_key(
    tmp_path: Path, isolated_user_config: Path, text: str, message: str
) -> None:
    (isolated_user_config / "config.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"config\.toml: ") as info:
        load_checks(tmp_path)
    assert message in str(info.value)
