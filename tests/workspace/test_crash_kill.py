"""Crash safety for real: SIGKILL a process in the middle of a large multi-file apply.

A child process applies a preview of 30 files through safe_apply and prints a line at
each numbered step; the parent kills it with SIGKILL after the Nth line (every N from
"before the first step" to "after the last"), plus runs with small random delays (fixed
seed) so kills also land between steps. After each kill, recovery runs as the next
redline start would, and the workspace must be wholly old or wholly new, with a clean
journal and no temporary files.

A stress test: ``uv run pytest`` kills at a seeded handful of points spread over the whole
apply; ``uv run pytest -m stress`` kills at every step plus the random runs.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.conftest import cpu_share

from redline.workspace import journal
from redline.workspace.preview import Preview

from .helpers import create, delete, journal_is_clean, modify, rename, snapshot, write

FILES = 30
FILE_BYTES = 64 * 1024
RANDOM_RUNS = 8
# Kill points in a default run: spread evenly over the apply, plus seeded random ones.
HANDFUL_POINTS = 10
HANDFUL_RANDOM = 2

CHILD = """
import json, sys
from pathlib import Path
from redline.workspace import safe_apply, transaction
from redline.workspace.preview import Preview

root = Path(sys.argv[1])
preview = Preview.from_dict(json.loads(Path(sys.argv[2]).read_text()))

def report(number, text):
    sys.stdout.write(f"{number} {text}\\n")
    sys.stdout.flush()

transaction._step_hook = report
print("ready", flush=True)
safe_apply.apply_preview(root, preview, label="big apply")
print("done", flush=True)
"""


def _text(rng: random.Random, size: int, tag: str) -> str:
    line = f"{tag} " + "".join(rng.choice("abcdefghij ") for _ in range(70)) + "\n"
    return line * (size // len(line))


def _template(base: Path) -> tuple[Path, Path, dict[str, bytes], dict[str, bytes]]:
    rng = random.Random(1234)
    template = base / "template"
    template.mkdir()
    for i in range(FILES):
        write(template, f"pkg{i % 3}/mod{i:02d}.py", _text(rng, FILE_BYTES, f"old{i}"))
    changes = []
    for i in range(FILES - 6):
        rel = f"pkg{i % 3}/mod{i:02d}.py"
        changes.append(modify(template, rel, _text(rng, FILE_BYTES, f"new{i}")))
    for i in (FILES - 6, FILES - 5):
        changes.append(delete(template, f"pkg{i % 3}/mod{i:02d}.py"))
    for i in (FILES - 4, FILES - 3):
        changes.append(rename(template, f"pkg{i % 3}/mod{i:02d}.py", f"moved/mod{i:02d}.py"))
    for i in (FILES - 2, FILES - 1):
        changes.append(modify(template, f"pkg{i % 3}/mod{i:02d}.py", "small\r\n"))
    changes.append(create("fresh/new.py", _text(rng, FILE_BYTES, "created")))
    preview = Preview(changes)
    preview_file = base / "preview.json"
    preview_file.write_text(json.dumps(preview.to_dict()))
    old = snapshot(template)
    # The expected result, computed by applying once in a scratch copy.
    scratch = base / "scratch"
    shutil.copytree(template, scratch)
    from redline.workspace.safe_apply import apply_preview

    apply_preview(scratch, preview)
    new = snapshot(scratch)
    return template, preview_file, old, new


def _kill_run(
    template: Path, preview_file: Path, root: Path, after_lines: int, delay: float
) -> tuple[int, bool]:
    """Apply in a child, SIGKILL it after ``after_lines`` step lines (+ ``delay``)."""
    shutil.copytree(template, root)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(preview_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "ready\n", child.stderr.read() if child.stderr else ""
    seen = 0
    finished = False
    while seen < after_lines:
        line = child.stdout.readline()
        if not line:
            break
        if line == "done\n":
            finished = True
            break
        seen += 1
    if delay:
        time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    child.stdout.close()
    if child.stderr:
        child.stderr.close()
    return seen, finished


@pytest.mark.stress
def test_sigkill_at_many_points_never_tears_a_file(tmp_path: Path, stress: bool) -> None:
    template, preview_file, old, new = _template(tmp_path)
    # How many steps one apply has: count them on a scratch copy.
    counting = tmp_path / "counting"
    seen, _ = _kill_run(template, preview_file, counting, 10_000, 0)
    steps = seen
    assert snapshot(counting) == new and steps > 60
    rng = random.Random(42)
    if stress:
        plan = [(n, 0.0) for n in range(steps + 1)]
        plan += [(rng.randrange(steps), rng.uniform(0, 0.004)) for _ in range(RANDOM_RUNS)]
        assert len(plan) >= 100
    else:
        points = {round(i * steps / (HANDFUL_POINTS - 1)) for i in range(HANDFUL_POINTS)}
        plan = [(n, 0.0) for n in sorted(points)]
        plan += [(rng.randrange(steps), rng.uniform(0, 0.004)) for _ in range(HANDFUL_RANDOM)]

    def one(index: int) -> tuple[str, bool]:
        after, delay = plan[index]
        root = tmp_path / f"run{index:03d}"
        _kill_run(template, preview_file, root, after, delay)
        messages = journal.recover(root)
        state = snapshot(root)
        assert state in (old, new), f"run {index} (kill after {after} lines): a file is torn"
        assert journal_is_clean(root), f"run {index}: journal not clean after recovery"
        assert journal.recover(root) == []
        outcome = "new" if state == new else "old"
        if outcome == "old" and after > 6:
            assert messages, f"run {index}: recovery should say what it rolled back"
        shutil.rmtree(root)
        return outcome, any("restored" in m for m in messages)

    # One kill run per CPU this test may use (the xdist workers share the cores).
    with ThreadPoolExecutor(max_workers=min(4, cpu_share())) as pool:
        results = list(pool.map(one, range(len(plan))))
    outcomes = [outcome for outcome, _ in results]
    restored = sum(restored for _, restored in results)
    # Kills landed before the first change, half-way through the switch (recovery had
    # files to restore) and after the commit point.
    assert outcomes.count("new") >= 1
    if stress:
        assert outcomes.count("old") > 50 and restored >= 20
    else:
        assert outcomes.count("old") >= 1 and restored >= 1, outcomes
