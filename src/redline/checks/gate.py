"""The gate a rule with ``checks = "pass"`` asks before it applies an action.

Stored results of a queued action are reused when they are current (a check that already
ran for this very proposal, with this configuration, on the same files, is not run again);
the rest run now, and are stored with the action when it is in the workspace queue.
Anything short of every configured check passing with no new findings — findings, a
timeout, an error, a check an untrusted workspace declares, no checks at all — says no,
and why. ``run=False`` (``redline rules check``) runs nothing: a check without a current
result says no.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from redline.checks.config import load_checks
from redline.checks.results import (
    AGE_UNKNOWN,
    load_results,
    passed,
    run_for_action,
    stale_results,
    summary,
)
from redline.checks.run import Cancelled, CheckResult, check_preview, skipped_results
from redline.config import ConfigError
from redline.workspace.preview import Preview


@dataclass(frozen=True)
class GateAnswer:
    passed: bool
    why: str
    results: tuple[CheckResult, ...] = ()

    @property
    def summary(self) -> str:
        return summary(self.results)


def checks_gate(
    root: Path,
    action_id: str,
    preview: Preview | None,
    *,
    trusted: bool | None = None,
    run: bool = True,
) -> GateAnswer:
    """Run (or reuse) the configured checks on ``preview`` and say whether they all pass
    (with ``run=False``, from current stored results only)."""
    try:
        config = load_checks(root, trusted=trusted)
    except ConfigError as exc:
        return GateAnswer(False, f"the checks cannot be read: {exc}")
    if preview is None:
        return GateAnswer(False, "the action changes no files to check")
    if not config.checks:
        ok, why = passed(config, [])
        return GateAnswer(ok, why, tuple(skipped_results(config)))
    from redline.workspace.queue import QueueError, WorkspaceQueue, check_id

    queue = None
    try:
        check_id(action_id)
        queue = WorkspaceQueue(root, reconcile=False)
        if queue.get(action_id) is None:
            queue.close()
            queue = None
    except QueueError:
        if queue is not None:
            queue.close()
        queue = None
    try:
        if queue is not None:
            every = load_results(queue, action_id).results
            stored = [r for r in every if r.status != "running"]
            stale = stale_results(queue, config, stored, preview)
            have = {r.name: r for r in stored if r.name not in stale}
            todo = [spec for spec in config.checks if spec.name not in have]
            if todo and not run:
                return GateAnswer(False, _not_run(todo[0].name, action_id, every, stale))
            if todo:
                results = run_for_action(queue, action_id, preview, config, specs=todo)
            else:
                results = [have[spec.name] for spec in config.checks]
                results += skipped_results(config)
        elif not run:
            return GateAnswer(False, f"{action_id} is not in the workspace queue")
        else:
            results = check_preview(root, preview, config.checks, jobs=config.jobs)
            results += skipped_results(config)
    except Cancelled:
        return GateAnswer(False, "the action was resolved while its checks ran")
    except QueueError as exc:
        return GateAnswer(False, f"the check results cannot be stored: {exc}")
    finally:
        if queue is not None:
            queue.close()
    ok, why = passed(config, results)
    return GateAnswer(ok, why, tuple(results))


def _not_run(
    name: str, action_id: str, stored: tuple[CheckResult, ...], stale: dict[str, str]
) -> str:
    """Why check ``name`` has no current result (for ``run=False``)."""
    if any(r.name == name and r.status == "running" for r in stored):
        return f"check {name} is still running"
    command = f"`redline pending check {action_id}"
    if name in stale:
        why = stale[name]
        state = "of unknown age" if why == AGE_UNKNOWN else f"out of date ({why})"
        return f"check {name}'s stored result is {state} ({command} --again` reruns it)"
    return f"check {name} has not run on it ({command}` runs it)"
