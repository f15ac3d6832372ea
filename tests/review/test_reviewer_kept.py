"""A waiting hook finds its reviewer before the decision comes, not after (two git calls)."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.review import provenance


def test_a_remembered_reviewer_is_used_without_asking_git_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(provenance, "_reviewers", {})
    provenance.remember_reviewer(tmp_path)
    found = provenance.reviewer_of(tmp_path)

    def no_git(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("git was asked again")

    import redline.workspace.git as git

    monkeypatch.setattr(git, "run_git", no_git)
    assert provenance.reviewer_of(tmp_path) == found
    # Kept a while only: a later decision asks again.
    monkeypatch.setattr(provenance, "REVIEWER_KEPT_SECONDS", 0.0)
    with pytest.raises(AssertionError, match="asked again"):
        provenance.reviewer_of(tmp_path)
