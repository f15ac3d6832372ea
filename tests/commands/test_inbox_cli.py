"""Issue 45: ``redline --all``'s command line: what does not go with it is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from redline.cli import main


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--queue", "postgresql://127.0.0.1/x"], "pick one"),
        (["--model", "scripted:x.json"], "--model"),
        (["--agent", "gemini"], "--agent"),
        (["--prompt", "go"], "--prompt"),
        (["--resolver", "agent"], "--resolver"),
    ],
    ids=["queue", "model", "agent", "prompt", "resolver"],
)
def test_all_refuses_what_does_not_apply(
    extra: list[str], said: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert main(["--all", *extra]) == 2
    err = capfd.readouterr().err
    assert said in err and "redline" in err


def test_all_refuses_a_workspace_folder(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["--all", "-C", str(tmp_path)]) == 2
    assert "-C" in capfd.readouterr().err


def test_all_before_a_subcommand_is_refused(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["--all", "pending", "list"]) == 2
    assert "--all" in capfd.readouterr().err
