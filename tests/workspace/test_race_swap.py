"""Defect 3: a folder swapped for a symlink while redline writes never redirects a write.

A second process swaps ``sub/`` for a symlink to a folder outside the workspace and back,
as fast as it can, while this process applies previews that create files (and folders)
inside ``sub/``. Before the fix about 7% of the applies wrote outside; now none may.
The default run does a short seeded round; ``-m stress`` runs it for 60 s.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from redline.workspace.errors import ApplyError
from redline.workspace.preview import FileCreate, Preview
from redline.workspace.safe_apply import apply_preview

SWAPPER = r"""
import os, sys
sub, real, outside, stop = sys.argv[1:5]
swaps = 0
def settle():
    # Back to a real sub/ (an apply may have created a new one meanwhile).
    if os.path.islink(sub):
        os.unlink(sub)
    if os.path.isdir(real) and not os.path.lexists(sub):
        os.rename(real, sub)
    elif os.path.isdir(real):
        for name in os.listdir(real):
            os.rename(os.path.join(real, name), os.path.join(sub, name))
        os.rmdir(real)

while not os.path.exists(stop):
    try:
        os.rename(sub, real)
        os.symlink(outside, sub)
        os.unlink(sub)
        os.rename(real, sub)
        swaps += 1
    except OSError:
        try:
            settle()
        except OSError:
            pass
settle()
print(swaps)
"""


def _race(
    tmp_path: Path, seed: int, *, applies: int | None, seconds: float | None
) -> dict[str, int]:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    stop = tmp_path / "stop"
    swapper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SWAPPER,
            str(ws / "sub"),
            str(ws / "sub.real"),
            str(outside),
            str(stop),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    rng = random.Random(seed)
    counts = {"applies": 0, "written": 0, "refused": 0, "swaps": 0, "outside": 0}
    deadline = time.monotonic() + seconds if seconds is not None else None
    try:
        n = 0
        while (applies is None or n < applies) and (
            deadline is None or time.monotonic() < deadline
        ):
            n += 1
            rel = f"sub/f{n}.txt" if rng.random() < 0.5 else f"sub/d{n}/e{rng.randrange(9)}/f.txt"
            try:
                apply_preview(ws, Preview([FileCreate(rel, f"{n}\n")]))
                counts["written"] += 1
            except ApplyError:
                counts["refused"] += 1
            counts["applies"] += 1
    finally:
        stop.write_text("stop")
        out, _ = swapper.communicate(timeout=60)
    counts["swaps"] = int(out.strip() or 0)
    # Nothing, ever, outside the workspace: not a file, not a folder, not a temp.
    counts["outside"] = sum(1 for _ in outside.rglob("*"))
    # Every apply that reported success left exactly its file inside the workspace, and
    # a refused one left nothing (no temp, no half-made folder with a file in it).
    files = [
        name
        for folder, dirs, names in os.walk(ws)
        if ".redline" not in Path(folder).relative_to(ws).parts
        for name in names
    ]
    assert len(files) == counts["written"], (files, counts)
    return counts


def test_racing_folder_swap_short(tmp_path: Path) -> None:
    counts = _race(tmp_path, seed=10, applies=120, seconds=None)
    assert counts["outside"] == 0, counts
    assert counts["applies"] == 120


@pytest.mark.stress
def test_racing_folder_swap_60s(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if "stress" not in (request.config.getoption("-m") or ""):
        pytest.skip("the full racing-swap run: uv run pytest -m stress")
    counts = _race(
        tmp_path, seed=int(os.environ.get("REDLINE_STRESS_SEED", "10")), applies=None, seconds=60.0
    )
    print(f"racing swap: {counts}")
    assert counts["outside"] == 0, counts
