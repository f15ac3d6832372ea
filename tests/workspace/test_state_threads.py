"""Threads of one process opening a new workspace's state folder at once (a team-queue
follower and the agent it follows did: one of them failed with "cannot be opened")."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from redline.workspace.state import open_state_dir

THREADS = 8
WORKSPACES = 40


def test_threads_opening_a_new_state_folder_at_once_all_succeed(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    for number in range(WORKSPACES):
        root = tmp_path / f"ws{number}"
        root.mkdir()
        start = threading.Barrier(THREADS)

        def open_it(root: Path = root, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                os.close(open_state_dir(root, "queue"))
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert (root / ".redline" / ".gitignore").read_text() == "*\n"
        assert not [p.name for p in (root / ".redline").iterdir() if p.name.endswith(".tmp")]
    assert failures == []
