"""Checks before accept (issues 31, 39): scratch-tree set-up and the overhead of a no-op check.

Run from the repository root:  uv run python bench/checks.py [--runs 20]
Targets: a reused scratch tree set up in at most 0.3 s at 5,000 files (cold recorded);
a no-op check adds at most 0.2 s; since issue 39 (every run starts from a tree walked and
put back), the reused figures within 1.5x of what they were before.

For 500 and 5,000 files, in a git working tree and a plain folder:

* **cold**: an empty cache → the tree copied (every run starts from a fresh cache folder);
* **reused**: the slot's manifest is there → a sync that finds nothing to copy (the
  workspace listed, an ``lstat`` per file, the copy walked with one ``stat`` per file);
* **restore**: putting a reused tree back between two runs of one check (the copy walked,
  nothing copied: what a check that wrote nothing costs);
* **no-op check**: ``check_preview`` of a one-file change with one ``exit-code`` check
  that runs ``true``, on a reused tree: the sync, the base texts, the cached base result,
  the proposal's texts and one process start — everything redline adds around a check.

Each figure is the median of ``--runs`` runs (the cold ones too).

The sandbox (issue 41; targets: at most 30 ms more per check run, at most 1.2 times the
``pending check`` of a one-file action):

* **per run**: one ``python -c pass`` started as a check is (``run_process``), without
  and with the sandbox (bubblewrap), and the difference;
* **pending check**: ``redline pending check ID --again`` of a one-file action with one
  ``python -c pass`` check (in-process, the base result cached), without and with it.

The load average is printed with them (the machine is shared).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def make_project(root: Path, files: int, git: bool) -> None:
    for index in range(files):
        folder = root / f"pkg{index // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{index}.py").write_text(f"def f{index}(x):\n    return x + {index}\n" * 5)
    if git:
        run = ["git", "-C", str(root)]
        subprocess.run([*run, "init", "-q"], check=True)
        subprocess.run([*run, "add", "-A"], check=True)
        subprocess.run(
            [*run, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"],
            check=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    from redline.checks.config import CheckSpec
    from redline.checks.run import check_preview
    from redline.checks.sandbox import Sandbox
    from redline.checks.scratch import acquire
    from redline.workspace.preview import FileModify, Preview, sha256_bytes

    true = shutil.which("true") or "/bin/true"
    # The issue-31 rows stay as they were measured: no sandbox (its own rows follow).
    off = Sandbox(enabled=False)
    spec = CheckSpec("noop", (true, "{files}"), "exit-code", 60.0, "propose", sandbox=off)
    print(
        f"{'files':>6} {'tree':>5} {'cold s':>8} {'reused s':>9} {'restore s':>10} "
        f"{'no-op check s':>14}"
    )
    with tempfile.TemporaryDirectory(prefix="redline-bench-checks-") as tmp:
        base = Path(tmp)
        for files in (500, 5000):
            for git in (True, False):
                root = base / f"ws-{files}-{'git' if git else 'plain'}"
                root.mkdir()
                make_project(root, files, git)
                cold: list[float] = []
                for run in range(args.runs):
                    os.environ["XDG_CACHE_HOME"] = str(base / f"cache-{files}-{git}-{run}")
                    start = time.perf_counter()
                    with acquire(root, 1) as tree:
                        tree.sync()
                    cold.append(time.perf_counter() - start)
                    assert tree.copied == files
                reused: list[float] = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    with acquire(root, 1) as tree:
                        tree.sync()
                    reused.append(time.perf_counter() - start)
                    assert tree.copied == 0
                restore: list[float] = []
                with acquire(root, 1) as tree:
                    tree.sync()
                    for _ in range(args.runs):
                        start = time.perf_counter()
                        tree.restore()
                        restore.append(time.perf_counter() - start)
                        assert tree.copied == 0 and tree.removed == 0
                old = (root / "pkg0" / "mod0.py").read_text()
                preview = Preview(
                    [FileModify("pkg0/mod0.py", sha256_bytes(old.encode()), old, old + "# x\n")]
                )
                check_preview(root, preview, [spec])  # fills the base-result cache
                noop: list[float] = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    [result] = check_preview(root, preview, [spec])
                    noop.append(time.perf_counter() - start)
                    assert result.status == "pass", result
                print(
                    f"{files:>6} {'git' if git else 'plain':>5} "
                    f"{statistics.median(cold):>8.3f} {statistics.median(reused):>9.3f} "
                    f"{statistics.median(restore):>10.3f} {statistics.median(noop):>14.3f}"
                )
    sandbox_rows(args.runs)
    return 0


def forget_probe() -> None:
    from redline.checks import sandbox

    sandbox._WORKS.clear()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def sandbox_rows(runs: int) -> None:
    """Per check run and per ``pending check``: without and with the sandbox."""
    from redline.checks.run import run_process
    from redline.checks.sandbox import Sandbox, describe, unavailable
    from redline.cli import main as redline
    from redline.workspace.preview import FileModify, Preview, sha256_bytes
    from redline.workspace.queue import ActionDraft, Source, WorkspaceQueue

    why = unavailable()
    if why:
        print(f"sandbox: none here ({why}); its rows are left out")
        return
    python = os.path.realpath(sys.executable)
    reads = tuple(sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}))
    print(f"\nsandbox: {describe()}; load average before: {_load()}")
    with tempfile.TemporaryDirectory(prefix="redline-bench-sandbox-") as tmp:
        base = Path(tmp)
        tree = base / "tree"
        tree.mkdir()
        per_run: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(runs):
            for sandboxed in (False, True):
                box = Sandbox(enabled=sandboxed, workspace=str(tree), read=reads)
                start = time.perf_counter()
                outcome = run_process([python, "-c", "pass"], tree, 60, None, box)
                per_run[sandboxed].append(time.perf_counter() - start)
                assert outcome.state == "done" and outcome.status == 0, outcome
        plain, boxed = (statistics.median(per_run[k]) for k in (False, True))
        print(
            f"per check run (python -c pass): {plain * 1000:.1f} ms without, "
            f"{boxed * 1000:.1f} ms with: +{(boxed - plain) * 1000:.1f} ms"
        )
        config_dir = base / "config"
        config_dir.mkdir()
        os.environ["REDLINE_CONFIG_DIR"] = str(config_dir)
        os.environ["XDG_STATE_HOME"] = str(base / "state")
        os.environ["XDG_CACHE_HOME"] = str(base / "cache")
        read_list = "[" + ", ".join(f'"{p}"' for p in reads) + "]"
        print(f"{'files':>6} {'without s':>10} {'with s':>8} {'ratio':>6}")
        for files in (500, 5000):
            root = base / f"ws-{files}"
            root.mkdir()
            make_project(root, files, True)
            old = (root / "pkg0" / "mod0.py").read_text()
            preview = Preview(
                [FileModify("pkg0/mod0.py", sha256_bytes(old.encode()), old, old + "# x\n")]
            )
            with WorkspaceQueue(root) as queue:
                action = queue.push(
                    ActionDraft(
                        "Edit pkg0/mod0.py",
                        Source.current("exec", "bench", "s1"),
                        source_tool_name="edit",
                        preview=preview,
                    )
                ).id
            times: dict[bool, list[float]] = {False: [], True: []}
            argv = ["pending", "-C", str(root), "check", action, "--again", "--json"]
            for _ in range(runs + 1):
                for sandboxed in (False, True):
                    (config_dir / "config.toml").write_text(
                        f'[[checks]]\nname = "pass"\ncommand = ["{python}", "-c", "pass"]\n'
                        f'format = "exit-code"\n[check_runner]\nread = {read_list}\n'
                        f'sandbox = "{"on" if sandboxed else "off"}"\n'
                    )
                    forget_probe()  # as in a fresh `redline pending check` process
                    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                        start = time.perf_counter()
                        code = redline(argv)
                        times[sandboxed].append(time.perf_counter() - start)
                    assert code == 0, code
            without, with_ = (statistics.median(times[k][1:]) for k in (False, True))
            print(f"{files:>6} {without:>10.3f} {with_:>8.3f} {with_ / without:>6.2f}")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    raise SystemExit(main())
