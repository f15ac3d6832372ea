"""Git provenance at scale: importing a 200-file branch, and committing 100 actions.

Run from the repository root:  uv run python bench/git_provenance.py [--files 200] [--commits 100]

Both run in a temporary repository with git's configuration isolated (no global or
system config, a private HOME) and the state folder in a temporary place:

* **import**: ``redline pending import agent`` of a branch that changes ``--files``
  files (one action each), run in-process through the CLI entry point;
* **commit**: ``redline pending apply ID`` of ``--commits`` actions one by one with
  ``[git] on_apply = "commit"`` (one commit each; git's hooks folder is empty), and the
  same count applied with ``--batch`` (one commit). Besides the times it counts the git
  processes redline starts (each call of ``redline.workspace.git.run_git``): per action
  one by one, and for the whole batch. Unlike the times, the counts do not depend on
  the machine's load.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


def setup(base: Path) -> None:
    os.environ["HOME"] = str(base / "home")
    os.environ["GIT_CONFIG_GLOBAL"] = "/dev/null"
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    os.environ["XDG_STATE_HOME"] = str(base / "state")
    os.environ["REDLINE_CONFIG_DIR"] = str(base / "config")
    (base / "home").mkdir()
    (base / "config").mkdir()


def repo(root: Path, files: int) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Bench")
    git(root, "config", "user.email", "bench@example.invalid")
    for i in range(files):
        (root / f"f{i:04}.txt").write_text("".join(f"line {n}\n" for n in range(40)))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")


def cli(*args: str) -> None:
    from redline.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    if code != 0:
        raise SystemExit(f"redline {' '.join(args)} exited {code}")


def bench_import(base: Path, files: int) -> float:
    root = base / "import"
    repo(root, files)
    git(root, "checkout", "-q", "-b", "agent")
    for i in range(files):
        path = root / f"f{i:04}.txt"
        path.write_text(path.read_text().replace("line 20\n", "changed 20\n"))
    git(root, "commit", "-q", "-am", "agent")
    git(root, "checkout", "-q", "main")
    start = time.perf_counter()
    cli("pending", "-C", str(root), "import", "agent")
    return time.perf_counter() - start


class GitCounter:
    """Counts the git processes redline starts (patches ``run_git`` in place)."""

    def __init__(self) -> None:
        import redline.workspace.git as gitmod

        self.count = 0
        real = gitmod.run_git

        def counting(*args: object, **kwargs: object) -> object:
            self.count += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        gitmod.run_git = counting  # type: ignore[assignment]


def bench_commits(
    base: Path, count: int, batch: bool, counter: GitCounter
) -> tuple[float, list[float], list[int]]:
    root = base / ("batch" if batch else "commits")
    repo(root, count)
    (base / "config" / "config.toml").write_text('[git]\non_apply = "commit"\n')
    git(root, "checkout", "-q", "-b", "agent")
    for i in range(count):
        path = root / f"f{i:04}.txt"
        path.write_text(path.read_text().replace("line 5\n", "changed 5\n"))
    git(root, "commit", "-q", "-am", "agent")
    git(root, "checkout", "-q", "main")
    cli("pending", "-C", str(root), "import", "agent")
    ids = [f"pa-{n}" for n in range(1, count + 1)]
    each: list[float] = []
    processes: list[int] = []
    start = time.perf_counter()
    if batch:
        before = counter.count
        cli("pending", "-C", str(root), "apply", *ids, "--batch")
        processes.append(counter.count - before)
    else:
        for action in ids:
            one = time.perf_counter()
            before = counter.count
            cli("pending", "-C", str(root), "apply", action)
            each.append(time.perf_counter() - one)
            processes.append(counter.count - before)
    total = time.perf_counter() - start
    expected = 2 if batch else count + 1
    made = int(git(root, "rev-list", "--count", "HEAD"))
    assert made == expected, f"{made} commits, expected {expected}"
    return total, each, processes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--commits", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        setup(base)
        seconds = bench_import(base, args.files)
        print(
            f"import a {args.files}-file branch: {seconds:.2f} s ({1000 * seconds / args.files:.1f} ms per file)"
        )
        counter = GitCounter()
        total, each, processes = bench_commits(base, args.commits, False, counter)
        print(
            f"apply + commit {args.commits} actions one by one: {total:.2f} s "
            f"(median {1000 * statistics.median(each):.0f} ms, max {1000 * max(each):.0f} ms per action; "
            f"{statistics.median(processes):.0f} git processes per action)"
        )
        total, _, processes = bench_commits(base, args.commits, True, counter)
        print(
            f"apply {args.commits} actions with --batch (one commit): {total:.2f} s "
            f"({processes[0]} git processes)"
        )


if __name__ == "__main__":
    main()
