"""Running checks on one proposal: the base tree, then the proposal, then new vs fixed.

:func:`check_preview` takes a scratch slot, syncs it with the workspace, puts the action's
base texts in place and runs each check (a cached result when the base tree's content and
the command are the same as before), then puts the proposal in place, runs each check again
and compares. The workspace itself is only read. No shell: ``{files}`` as one argument
becomes one argument per changed path, ``{report}`` the path of a report file the check
writes (e.g. ``--junitxml={report}``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redline.checks.compare import compare, line_map
from redline.checks.config import ChecksConfig, CheckSpec
from redline.checks.findings import (
    OK_STATUSES,
    PARSERS,
    Finding,
    FormatError,
    exit_code_finding,
)
from redline.checks.sandbox import Sandbox, launch, unavailable_why
from redline.checks.scratch import ScratchError, ScratchTree, acquire, workspace_cache_dir
from redline.workspace.preview import (
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    encode_text,
)

STATUSES: tuple[str, ...] = ("running", "pass", "findings", "timeout", "error", "skipped")
MAX_OUTPUT_BYTES = 32 * 1024 * 1024
_POLL = 0.05


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome for one proposal (``why`` for skipped, timeout and error)."""

    name: str
    status: str
    new: tuple[Finding, ...] = ()
    fixed: tuple[Finding, ...] = ()
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "new": [f.to_dict() for f in self.new],
            "fixed": [f.to_dict() for f in self.fixed],
        }
        if self.why:
            data["why"] = self.why
        return data

    @classmethod
    def from_dict(cls, data: Any) -> CheckResult:
        if not isinstance(data, dict):
            raise ValueError("a check result is not an object")
        status = data.get("status")
        if status not in STATUSES:
            raise ValueError(f"unknown check status {status!r}")
        new, fixed = data.get("new", []), data.get("fixed", [])
        if not isinstance(new, list) or not isinstance(fixed, list):
            raise ValueError("new and fixed must be lists")
        return cls(
            str(data.get("name", "")),
            str(status),
            tuple(Finding.from_dict(f) for f in new),
            tuple(Finding.from_dict(f) for f in fixed),
            str(data.get("why", "")),
        )


class Cancelled(Exception):
    """The action was resolved (or the run stopped) while its checks ran."""


@dataclass
class Outcome:
    """What one process run gave: ``state`` is done, timeout or error."""

    state: str
    status: int = 0
    output: str = ""
    report: str = ""
    why: str = ""


def expand(command: Sequence[str], files: Sequence[str], report: str) -> list[str]:
    argv: list[str] = []
    for part in command:
        if part == "{files}":
            argv.extend(files)
        else:
            argv.append(part.replace("{report}", report))
    return argv


def _read_capped(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_OUTPUT_BYTES + 1)
    except OSError:
        return ""
    return data[:MAX_OUTPUT_BYTES].decode("utf-8", "replace")


def run_process(
    argv: Sequence[str],
    cwd: Path,
    timeout: float,
    cancel: threading.Event | None = None,
    sandbox: Sandbox | None = None,
) -> Outcome:
    """Run ``argv`` (no shell) in ``cwd`` with its own process group, in ``sandbox``
    (checks/sandbox.py); stdout and stderr go to files (no pipe can fill up). The whole
    group is killed on timeout or cancel."""
    with tempfile.TemporaryDirectory(prefix="redline-check-") as scratch:
        report = os.path.join(scratch, "report")
        out_path = os.path.join(scratch, "output")
        argv = [part.replace("{report}", report) for part in argv]
        wrapped = launch(sandbox, argv, cwd, scratch)
        with open(out_path, "wb") as out:
            try:
                proc = subprocess.Popen(
                    wrapped.argv,
                    cwd=cwd,
                    env=wrapped.env,
                    pass_fds=wrapped.fds,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                return Outcome("error", why=f"cannot start {argv[0]}: {exc.strerror or exc}")
            import time

            deadline = time.monotonic() + timeout
            state = "done"
            while True:
                try:
                    proc.wait(timeout=_POLL)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if cancel is not None and cancel.is_set():
                    state = "cancelled"
                elif time.monotonic() >= deadline:
                    state = "timeout"
                else:
                    continue
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
        # Whatever the check started in its group is ended too.
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        if state == "cancelled":
            raise Cancelled()
        if state == "done" and (failed := wrapped.failure()):
            return Outcome("error", why=failed)
        output = _read_capped(out_path)
        if state == "timeout":
            return Outcome("timeout", output=output, why=f"did not finish within {timeout:g} s")
        return Outcome("done", proc.returncode, output, _read_capped(report))


def findings_of(spec: CheckSpec, outcome: Outcome, tree: Path) -> list[Finding]:
    """The findings of a finished run; FormatError when its output cannot be used."""
    if spec.format == "exit-code":
        return exit_code_finding(outcome.status, outcome.output)
    allowed = OK_STATUSES.get(spec.format)
    if allowed is not None and outcome.status not in allowed:
        tail = outcome.output.strip().splitlines()[-3:]
        detail = f": {' / '.join(tail)}" if tail else ""
        raise FormatError(f"exited with status {outcome.status}{detail}")
    uses_report = any("{report}" in part for part in spec.command)
    text = outcome.report if uses_report else outcome.output
    return PARSERS[spec.format](text, tree)


# -- the proposal in the tree ---------------------------------------------------------
@dataclass
class Layout:
    """The texts of the changed paths before (base) and after (proposal) the action."""

    base: dict[str, bytes | None] = field(default_factory=dict)
    proposal: dict[str, bytes | None] = field(default_factory=dict)
    maps: dict[str, dict[int, int]] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)

    def files(self, side: Mapping[str, bytes | None]) -> list[str]:
        return sorted(rel for rel, data in side.items() if data is not None)


def layout(preview: Preview, tree: ScratchTree) -> Layout:
    out = Layout()
    for change in preview:
        if isinstance(change, FileModify):
            out.base[change.path] = encode_text(change.old_text, change.encoding)
            out.proposal[change.path] = encode_text(change.new_text, change.encoding)
            out.maps[change.path] = line_map(change.old_text, change.new_text)
        elif isinstance(change, FileCreate):
            out.base[change.path] = None
            out.proposal[change.path] = encode_text(change.new_text, change.encoding)
        elif isinstance(change, FileDelete):
            old = (
                change.old_text.encode("utf-8")
                if change.old_text is not None
                else tree.read(change.path)
            )
            out.base[change.path] = old
            out.proposal[change.path] = None
        elif isinstance(change, FileRename):
            data = tree.read(change.old_path)
            out.base[change.old_path] = data
            out.base.setdefault(change.new_path, None)
            out.proposal[change.old_path] = None
            out.proposal[change.new_path] = data
            out.renames[change.old_path] = change.new_path
    return out


# -- the base-result cache ------------------------------------------------------------
def _cache_path(root: Path, tree_hash: str, spec: CheckSpec, argv: Sequence[str]) -> Path:
    boxed = "sandboxed" if spec.sandbox.enabled else "unsandboxed"
    key = hashlib.sha256("\0".join((tree_hash, spec.format, boxed, *argv)).encode()).hexdigest()
    return workspace_cache_dir(root) / "base" / f"{key}.json"


def _cached(path: Path) -> list[Finding] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
        return [Finding.from_dict(f) for f in data["findings"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(path: Path, findings: Sequence[Finding]) -> None:
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"findings": [f.to_dict() for f in findings]}), "utf-8")
        os.replace(tmp, path)


# -- one state of the tree, every check ---------------------------------------------
Side = dict[str, list[Finding] | CheckResult]


def _run_side(
    specs: Sequence[CheckSpec],
    tree: ScratchTree,
    files: list[str],
    cancel: threading.Event | None,
    jobs: int,
    cache: Callable[[CheckSpec, list[str]], Path] | None,
) -> Side:
    """Each check's findings in the tree's current state, or a CheckResult saying why not."""

    def one(spec: CheckSpec) -> list[Finding] | CheckResult:
        uses_files = "{files}" in spec.command
        if uses_files and not files:
            return []  # nothing of the change exists on this side: nothing to find
        argv = expand(spec.command, files, "{report}")
        path = cache(spec, argv) if cache is not None else None
        if path is not None:
            hit = _cached(path)
            if hit is not None:
                return hit
        outcome = run_process(argv, tree.tree, spec.timeout, cancel, spec.sandbox)
        if outcome.state == "timeout":
            return CheckResult(spec.name, "timeout", why=outcome.why)
        if outcome.state == "error":
            return CheckResult(spec.name, "error", why=outcome.why)
        try:
            found = findings_of(spec, outcome, tree.tree)
        except FormatError as exc:
            return CheckResult(spec.name, "error", why=str(exc))
        if path is not None:
            _store(path, found)
        return found

    if not specs:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(specs)))) as pool:
        futures = {spec.name: pool.submit(one, spec) for spec in specs}
        return {name: future.result() for name, future in futures.items()}


def check_preview(
    root: Path,
    preview: Preview,
    specs: Sequence[CheckSpec],
    *,
    jobs: int = 1,
    cancel: threading.Event | None = None,
    slots: int | None = None,
) -> list[CheckResult]:
    """Run ``specs`` on ``preview`` against the workspace ``root``; one result per spec.

    Raises :class:`Cancelled` when ``cancel`` is set meanwhile. A scratch tree that cannot
    be set up makes every check an ``error`` naming the cause.
    """
    if not specs:
        return []
    if why := unavailable_why(s.sandbox for s in specs):
        return [CheckResult(s.name, "error", why=why) for s in specs]
    try:
        with acquire(root, slots if slots is not None else jobs) as tree:
            return _check_in(tree, root, preview, specs, jobs, cancel)
    except ScratchError as exc:
        return [CheckResult(s.name, "error", why=str(exc)) for s in specs]


def _check_in(
    tree: ScratchTree,
    root: Path,
    preview: Preview,
    specs: Sequence[CheckSpec],
    jobs: int,
    cancel: threading.Event | None,
) -> list[CheckResult]:
    tree.sync()
    plan = layout(preview, tree)
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    tree.overlay(plan.base)
    base_hash = tree.tree_hash(plan.base)
    base = _run_side(
        specs,
        tree,
        plan.files(plan.base),
        cancel,
        jobs,
        lambda spec, argv: _cache_path(root, base_hash, spec, argv),
    )
    tree.overlay(plan.proposal)
    proposal = _run_side(specs, tree, plan.files(plan.proposal), cancel, jobs, None)
    results = []
    for spec in specs:
        before, after = base[spec.name], proposal[spec.name]
        if isinstance(after, CheckResult):
            results.append(after)
            continue
        if isinstance(before, CheckResult):
            why = f"on the workspace without the change: {before.status}: {before.why}"
            results.append(CheckResult(spec.name, before.status, why=why))
            continue
        new, fixed = compare(before, after, spec.format, plan.maps, plan.renames)
        results.append(
            CheckResult(spec.name, "findings" if new else "pass", tuple(new), tuple(fixed))
        )
    return results


def skipped_results(config: ChecksConfig) -> list[CheckResult]:
    """The checks the configuration names but may not run, as ``skipped`` results."""
    return [CheckResult(s.name, "skipped", why=s.why) for s in config.skipped]
