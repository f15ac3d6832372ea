"""Checks in the background: start when an action shows up, stop when it is resolved.

:class:`BackgroundChecks` is what a long-running client (the dashboard) keeps. Each
:meth:`~BackgroundChecks.sync` gets the actions listed now: an action seen for the first
time, with a Preview and no stored results, gets its ``when = "propose"`` checks started
on a daemon thread (at most ``[check_runner] jobs`` at once); a running action that is no
longer listed is cancelled (its processes are killed, its partial results removed).
With a workspace queue the results are stored with the action (every process sees them);
without one they are kept here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from redline.checks.config import ChecksConfig, load_checks
from redline.checks.results import load_results, run_for_action
from redline.checks.run import Cancelled, CheckResult, check_preview, skipped_results
from redline.config import ConfigError
from redline.workspace.preview import Preview
from redline.workspace.queue import QueueError, WorkspaceQueue

log = logging.getLogger(__name__)


class BackgroundChecks:
    """One workspace's background check runs (thread-safe; ``on_change`` is called from a
    run's thread with the action's id whenever its results change)."""

    def __init__(
        self,
        root: Path,
        queue: WorkspaceQueue | None,
        on_change: Callable[[str], None],
        *,
        trusted: bool | None = None,
    ) -> None:
        self.root = Path(root)
        self.queue = queue
        self.on_change = on_change
        self.trusted = trusted
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._running: dict[str, threading.Event] = {}
        self._memory: dict[str, list[CheckResult]] = {}
        self._slots: threading.Semaphore | None = None
        self.config: ChecksConfig | None = None
        self.config_error = ""
        self._closed = False

    def _config(self) -> ChecksConfig | None:
        try:
            config = load_checks(self.root, trusted=self.trusted)
        except ConfigError as exc:
            self.config_error = str(exc)
            return None
        self.config_error = ""
        self.config = config
        if self._slots is None:
            self._slots = threading.Semaphore(config.jobs)
        return config

    @property
    def configured(self) -> bool:
        config = self.config
        return config is not None and bool(config.checks or config.skipped)

    def sync(
        self, actions: Iterable[tuple[str, Preview | Callable[[], Preview | None] | None]]
    ) -> None:
        """Start checks for actions new to this runner; cancel those no longer listed.

        An action's Preview may be given as a function that reads it: it is called only for
        an action new to this runner when checks are configured (a long queue is listed
        without reading every Preview)."""
        listed = dict(actions)
        with self._lock:
            if self._closed:
                return
            fresh = [a for a in listed if a not in self._seen]
            self._seen.update(fresh)
            gone = [a for a in self._running if a not in listed]
            for action_id in gone:
                # Cancelled, but still running until its thread has killed the run and put
                # its stored results back (the thread removes itself from ``_running``).
                self._running[action_id].set()
            for action_id in list(self._memory):
                if action_id not in listed:
                    del self._memory[action_id]
        if not fresh:
            return
        config = self._config()
        if config is None:
            return
        propose = [c for c in config.checks if c.when == "propose"]
        for action_id in fresh:
            if not propose and not (config.skipped and self.queue is None):
                continue  # nothing to run or note: its Preview is not read
            given = listed[action_id]
            preview = given() if callable(given) else given
            if preview is None:
                continue
            if not propose:
                if config.skipped and self.queue is None:
                    self._memory[action_id] = skipped_results(config)
                continue
            if self.queue is not None and load_results(self.queue, action_id).results:
                continue  # another process has run (or runs) them
            self.start(action_id, preview, config, propose_only=True)

    def start(
        self,
        action_id: str,
        preview: Preview,
        config: ChecksConfig | None = None,
        *,
        propose_only: bool = False,
    ) -> bool:
        """Run the checks of ``action_id`` now (False if they already run here)."""
        config = config or self._config()
        if config is None:
            return False
        specs = [c for c in config.checks if c.when == "propose" or not propose_only]
        cancel = threading.Event()
        with self._lock:
            if self._closed or action_id in self._running:
                return False
            self._running[action_id] = cancel
            self._seen.add(action_id)
            if self.queue is None:
                self._memory[action_id] = [CheckResult(s.name, "running") for s in specs]
        thread = threading.Thread(
            target=self._run,
            args=(action_id, preview, config, specs, cancel),
            name=f"redline-checks-{action_id}",
            daemon=True,
        )
        thread.start()
        self.on_change(action_id)
        return True

    def _run(self, action_id, preview, config, specs, cancel) -> None:  # type: ignore[no-untyped-def]
        slots = self._slots
        assert slots is not None
        try:
            with slots:
                if cancel.is_set():
                    return
                if self.queue is not None:
                    run_for_action(
                        self.queue, action_id, preview, config, specs=specs, cancel=cancel
                    )
                else:
                    results = check_preview(
                        self.root, preview, specs, jobs=config.jobs, cancel=cancel
                    )
                    with self._lock:
                        if not cancel.is_set():
                            self._memory[action_id] = [*results, *skipped_results(config)]
        except Cancelled:
            return
        except (QueueError, OSError) as exc:
            log.warning("checks of %s could not run: %s", action_id, exc)
            with self._lock:
                self._memory[action_id] = [
                    CheckResult(s.name, "error", why=str(exc)) for s in specs
                ]
        except Exception:
            log.exception("checks of %s failed", action_id)
        finally:
            with self._lock:
                if self._running.get(action_id) is cancel:
                    del self._running[action_id]
        if not cancel.is_set():
            self.on_change(action_id)

    def running(self, action_id: str) -> bool:
        with self._lock:
            return action_id in self._running

    def results(self, action_id: str) -> list[CheckResult]:
        """What is known of ``action_id``'s checks (stored, or kept here)."""
        with self._lock:
            kept = list(self._memory.get(action_id, ()))
        if kept:
            return kept
        if self.queue is not None:
            stored = load_results(self.queue, action_id)
            if stored.problem:
                return [CheckResult("checks", "error", why=stored.problem)]
            if stored.results:
                return list(stored.results)
        config = self.config
        return skipped_results(config) if config is not None else []

    def cancel(self, action_id: str) -> None:
        """Cancel ``action_id``'s run (its processes are killed, its partial results
        removed) and forget it was seen: a later :meth:`sync` listing it starts it again."""
        with self._lock:
            self._seen.discard(action_id)
            self._memory.pop(action_id, None)
            running = self._running.get(action_id)
            if running is not None:
                running.set()

    def close(self) -> None:
        """Cancel every run (their processes are killed)."""
        with self._lock:
            self._closed = True
            for cancel in self._running.values():
                cancel.set()
            self._running.clear()
