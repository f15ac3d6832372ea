from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from redline import trust


def test_trust_round_trip_with_resolved_paths(
    tmp_path: Path, isolated_user_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    assert not trust.is_trusted(root)
    monkeypatch.chdir(tmp_path)
    assert trust.trust(Path("project")) is True
    assert trust.trust(root) is False, "already trusted"
    assert trust.is_trusted(root) and trust.is_trusted(tmp_path / "project" / ".." / "project")
    stored = json.loads((isolated_user_config / "trusted.json").read_text())
    assert stored["trusted"] == [str(root.resolve())]
    assert trust.revoke(root) is True
    assert trust.revoke(root) is False
    assert not trust.is_trusted(root)
    assert [p.name for p in isolated_user_config.iterdir()] == ["trusted.json"], "no temp files"


def test_several_workspaces_are_kept(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    trust.trust(first)
    trust.trust(second)
    trust.revoke(first)
    assert trust.trusted_roots() == [second.resolve()]


@pytest.mark.parametrize("content", ["{not json", '{"trusted": "oops"}', "[1, 2]", "null"])
def test_corrupt_file_means_nothing_trusted_with_a_warning(
    tmp_path: Path,
    isolated_user_config: Path,
    caplog: pytest.LogCaptureFixture,
    content: str,
) -> None:
    (isolated_user_config / "trusted.json").write_text(content)
    with caplog.at_level(logging.WARNING, logger="redline.trust"):
        assert not trust.is_trusted(tmp_path)
    assert "corrupt trust file" in caplog.text
    assert trust.trust(tmp_path) is True, "a corrupt file is replaced by a good one"
    assert trust.is_trusted(tmp_path)
