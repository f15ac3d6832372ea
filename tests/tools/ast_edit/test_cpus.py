"""ast_edit uses the CPUs that are free now (issue 44): affinity, the cgroup quota, the load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from redline.tools.ast_edit import cpus, engine, forked, search


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max 100000\n", None),
        ("200000 100000\n", 2),
        ("150000 100000\n", 2),  # one and a half CPUs: rounded up
        ("50000 100000\n", 1),
        ("garbage\n", None),
        ("-1 100000\n", None),
        ("100000 0\n", None),
    ],
)
def test_the_cgroup_quota(tmp_path: Path, text: str, expected: int | None) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(text)
    assert cpus.quota_cpus(path) == expected


def test_no_cgroup_file_means_no_quota(tmp_path: Path) -> None:
    assert cpus.quota_cpus(tmp_path / "missing") is None


def test_the_quota_caps_the_affinity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False)
    path = tmp_path / "cpu.max"
    path.write_text("200000 100000\n")  # a container on a 16-core host, given 2 CPUs
    assert cpus.usable_cpus(path) == 2
    path.write_text("max 100000\n")
    assert cpus.usable_cpus(path) == 16


def test_without_sched_getaffinity_the_cpu_count_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # as on macOS
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert cpus.affinity_cpus() == 8


@pytest.mark.parametrize(
    ("usable", "load", "free"),
    [(2, 0.1, 2), (2, 0.7, 1), (2, 1.2, 1), (2, 9.0, 1), (8, 3.2, 5), (4, 0.0, 4)],
)
def test_idle_cpus_subtract_the_load(usable: int, load: float, free: int) -> None:
    assert cpus.idle_cpus(usable, load) == free


def _quiet(monkeypatch: pytest.MonkeyPatch, usable: int, load: float) -> None:
    monkeypatch.setattr(cpus, "usable_cpus", lambda path=cpus.CPU_MAX: usable)
    monkeypatch.setattr(cpus, "load_average", lambda: load)


def test_a_quiet_machine_gets_workers_for_a_mid_size_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _quiet(monkeypatch, 2, 0.2)
    monkeypatch.setattr(engine, "_cheap_start", lambda workers: True)
    count, idle = engine._plan(None)
    assert (count, idle) == (2, True)
    assert engine._use_pool(count, 192, 3_100_000, idle=idle)  # the 3.1 MB corpus
    assert not engine._use_pool(count, 192, engine.POOL_IDLE_MIN_BYTES - 1, idle=idle)
    # A rewrite costs about twice as much per byte: half the bytes are worth workers.
    half = engine.POOL_IDLE_MIN_BYTES // engine.REWRITE_WEIGHT
    assert engine._use_pool(count, 18, half, idle=idle, rewrite=True)
    assert not engine._use_pool(count, 18, half, idle=idle)
    assert not engine._use_pool(count, 18, half - 1, idle=idle, rewrite=True)


def test_a_busy_machine_keeps_mid_size_jobs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    _quiet(monkeypatch, 2, 8.0)
    monkeypatch.setattr(engine, "_cheap_start", lambda workers: True)
    count, idle = engine._plan(None)
    assert (count, idle) == (2, False)
    assert not engine._use_pool(count, 192, 3_100_000, idle=idle)
    assert not engine._use_pool(count, 192, 3_100_000, idle=idle, rewrite=True)
    assert engine._use_pool(count, 1790, 31_500_000, idle=idle)  # large jobs still do


def test_a_forkserver_start_is_never_cheap_enough_for_a_mid_size_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _quiet(monkeypatch, 2, 0.0)
    monkeypatch.setattr(engine, "_cheap_start", lambda workers: False)  # threads: forkserver
    assert engine._plan(None) == (2, False)
    assert engine._plan(2) == (2, False)


def test_a_quiet_mid_size_search_in_workers_gives_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(12):
        body = "".join(f"value_{n} = left_{n} + right_{n}\n" for n in range(400))
        (tmp_path / f"m{index}.py").write_text(body)
    ops = [("$A + $B", "$B + $A")]
    alone = search(tmp_path, ops, workers=1, cache=None)
    _quiet(monkeypatch, 2, 0.0)
    monkeypatch.setattr(engine, "POOL_IDLE_MIN_BYTES", 1_000)
    monkeypatch.setattr(engine, "_cheap_start", lambda workers: True)
    started: list[int] = []
    real = engine._get_executor

    def counted(workers: int, rewrite: bool = False) -> object:
        started.append(workers)
        return real(workers, rewrite)

    monkeypatch.setattr(engine, "_get_executor", counted)
    # A process with threads (the dashboard) uses the pool, not forked children.
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    try:
        pooled = search(tmp_path, ops, cache=None)
    finally:
        engine.shutdown_pool()
    assert started == [2]
    assert [(r.path, r.matches, r.new_text) for r in pooled.files] == [
        (r.path, r.matches, r.new_text) for r in alone.files
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.52 0.61 0.70 1/412 12345\n", 0),  # only this process runs
        ("3.10 2.00 1.50 3/412 12345\n", 2),
        ("0.00 0.00 0.00 0/10 1\n", 0),
        ("0.52 0.61 0.70\n", None),  # no fourth field
        ("0.52 0.61 0.70 x/412 1\n", None),
    ],
)
def test_the_tasks_runnable_now(tmp_path: Path, text: str, expected: int | None) -> None:
    path = tmp_path / "loadavg"
    path.write_text(text)
    assert cpus.runnable_now(path) == expected


def test_the_busy_figure_is_the_lesser_of_the_average_and_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "loadavg"
    # The average still counts the work that has just ended; nothing else runs now.
    monkeypatch.setattr(os, "getloadavg", lambda: (1.9, 1.2, 0.8))
    path.write_text("1.90 1.20 0.80 1/300 4242\n")
    assert cpus.load_average(path) == 0.0
    assert cpus.idle_cpus(2, cpus.load_average(path)) == 2
    # A moment's burst with a quiet average reads as the average.
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.2, 0.1))
    path.write_text("0.30 0.20 0.10 4/300 4242\n")
    assert cpus.load_average(path) == 0.3
    # Both busy: a second worker would only share a core.
    monkeypatch.setattr(os, "getloadavg", lambda: (2.4, 2.0, 1.5))
    path.write_text("2.40 2.00 1.50 3/300 4242\n")
    assert cpus.load_average(path) == 2.0
    assert cpus.idle_cpus(2, cpus.load_average(path)) == 1


def test_without_proc_loadavg_the_average_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (1.4, 1.0, 0.5))
    assert cpus.load_average(tmp_path / "missing") == 1.4  # as on macOS
    monkeypatch.delattr(os, "getloadavg")
    assert cpus.load_average(tmp_path / "missing") is None
    path = tmp_path / "loadavg"
    path.write_text("0.00 0.00 0.00 2/10 1\n")
    assert cpus.load_average(path) == 1.0
