"""Running checks on one proposal: the base tree, then the proposal, then new vs fixed.

:func:`check_preview` gives each check a scratch slot of its own and syncs it with the
workspace (the tree is then exactly the workspace: see :mod:`redline.checks.scratch`),
puts the action's base texts in place and runs the check (a cached result when the whole
base tree's content and the command are the same as before), puts the tree back, puts the
proposal in place, runs the check again and compares. The workspace itself is only read.

No shell: ``{files}`` as one argument becomes one ``./PATH`` argument per changed path the
check's ``files`` globs select, ``{report}`` the path of a report file the check writes
(e.g. ``--junitxml={report}``). Standard output and standard error are kept apart: a
parser reads standard output (or the report), standard error is shown when a run fails.
:func:`launch` is the one place a check's process starts.
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
from redline.checks.sandbox import Sandbox, unavailable_why
from redline.checks.sandbox import launch as sandbox_launch
from redline.checks.scratch import (
    ScratchCancelled,
    ScratchError,
    ScratchTree,
    acquire,
    workspace_cache_dir,
)
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
    """One check's outcome for one proposal (``why`` for skipped, timeout and error).

    ``config`` (the check's :meth:`~redline.checks.config.CheckSpec.key`) and ``base``
    (the hash of the tree it ran against, without the change) are stored with the result
    so a later reader can tell it is out of date; neither is part of the JSON shown.
    """

    name: str
    status: str
    new: tuple[Finding, ...] = ()
    fixed: tuple[Finding, ...] = ()
    why: str = ""
    config: str = ""
    base: str = ""

    def to_dict(self, *, stored: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "new": [f.to_dict() for f in self.new],
            "fixed": [f.to_dict() for f in self.fixed],
        }
        if self.why:
            data["why"] = self.why
        if stored and self.config:
            data["config"] = self.config
        if stored and self.base:
            data["base"] = self.base
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
            str(data.get("config", "")),
            str(data.get("base", "")),
        )


class Cancelled(Exception):
    """The action was resolved (or the run stopped) while its checks ran."""


@dataclass(frozen=True)
class Completed:
    """What one process run gave: ``state`` is done, timeout or error (``why``)."""

    state: str
    status: int = 0
    stdout: str = ""
    stderr: str = ""
    why: str = ""


@dataclass(frozen=True)
class Outcome:
    """A finished run and the report file it wrote (``{report}``), if any."""

    state: str
    status: int = 0
    stdout: str = ""
    stderr: str = ""
    report: str = ""
    why: str = ""


def expand(command: Sequence[str], files: Sequence[str], report: str) -> list[str]:
    """``command`` with ``{files}`` as one ``./PATH`` argument per path (never read as an
    option, whatever the name) and ``{report}`` replaced."""
    argv: list[str] = []
    for part in command:
        if part == "{files}":
            argv.extend(f"./{path}" for path in files)
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


def _own_bytecode(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """``env`` (None: redline's own) without ``PYTHONPYCACHEPREFIX``: Python's bytecode of a
    run stays in its own tree, which goes with the run. Kept in a shared prefix folder, it
    would outlive the run, and a later run of another action, in a tree at the same path
    with a file of the same size and time (``a * b`` → ``a - b``), would execute this
    action's bytecode instead of its own source."""
    if env is None:
        if "PYTHONPYCACHEPREFIX" not in os.environ:
            return None
        env = os.environ
    return {name: value for name, value in env.items() if name != "PYTHONPYCACHEPREFIX"}


def launch(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    *,
    timeout: float,
    cancel: threading.Event | None = None,
    writable: Sequence[Path] = (),
    sandbox: Sandbox | None = None,
) -> Completed:
    """The one place a check's process starts.

    ``argv`` (no shell) runs in ``cwd`` — the run's scratch tree, the only folder it
    should write besides ``writable`` (the folder of its ``{report}``, the sandbox's
    private ``/tmp``) — in ``sandbox`` (checks/sandbox.py; None: as it is) with ``env``
    (None: redline's own; a sandbox sets its own), its own process group and no standard
    input. Standard output and error go to separate files (no pipe can fill up) and come
    back apart. The whole group is killed on timeout or cancel; :class:`Cancelled` is
    raised for a cancel. A sandbox that could not be made, or could not start the
    program, is an ``error`` naming the cause.
    """
    import time

    with tempfile.TemporaryDirectory(prefix="redline-output-") as folder:
        private_tmp = str(writable[0]) if writable else folder
        wrapped = sandbox_launch(sandbox, argv, cwd, private_tmp)
        out_path = os.path.join(folder, "stdout")
        err_path = os.path.join(folder, "stderr")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    wrapped.argv,
                    cwd=cwd,
                    env=_own_bytecode(wrapped.env if wrapped.env is not None else env),
                    pass_fds=wrapped.fds,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                return Completed("error", why=f"cannot start {argv[0]}: {exc.strerror or exc}")
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
            return Completed("error", why=failed)
        stdout, stderr = _read_capped(out_path), _read_capped(err_path)
    if state == "timeout":
        return Completed(
            "timeout", stdout=stdout, stderr=stderr, why=f"did not finish within {timeout:g} s"
        )
    return Completed("done", proc.returncode, stdout, stderr)


def run_process(
    command: Sequence[str],
    files: Sequence[str],
    cwd: Path,
    timeout: float,
    cancel: threading.Event | None = None,
    sandbox: Sandbox | None = None,
) -> Outcome:
    """Run ``command`` with ``files`` (see :func:`expand`) in ``cwd`` (:func:`launch`),
    in ``sandbox``; ``{report}`` becomes a file in a private folder, read back afterwards."""
    with tempfile.TemporaryDirectory(prefix="redline-check-") as folder:
        report = os.path.join(folder, "report")
        argv = expand(command, files, report)
        done = launch(
            argv, cwd, timeout=timeout, cancel=cancel, writable=(Path(folder),), sandbox=sandbox
        )
        text = _read_capped(report) if done.state == "done" else ""
    return Outcome(done.state, done.status, done.stdout, done.stderr, text, done.why)


def _tail(text: str, lines: int = 3) -> str:
    shown = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " / ".join(shown)


def findings_of(spec: CheckSpec, outcome: Outcome, tree: Path) -> list[Finding]:
    """The findings of a finished run; FormatError when its output cannot be used.

    Parsers read standard output (or the ``{report}`` file); standard error is what a
    tool says besides (ruff's "No Python files found"), shown only when the run fails."""
    if spec.format == "exit-code":
        return exit_code_finding(outcome.status, outcome.stdout, outcome.stderr)
    allowed = OK_STATUSES.get(spec.format)
    if allowed is not None and outcome.status not in allowed:
        tail = _tail(outcome.stderr) or _tail(outcome.stdout)
        detail = f": {tail}" if tail else ""
        raise FormatError(f"exited with status {outcome.status}{detail}")
    uses_report = any("{report}" in part for part in spec.command)
    text = outcome.report if uses_report else outcome.stdout
    try:
        return PARSERS[spec.format](text, tree)
    except FormatError as exc:
        tail = _tail(outcome.stderr)
        if not tail:
            raise
        raise FormatError(f"{exc}; standard error: {tail}") from None


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


def changed_paths(preview: Preview) -> list[str]:
    """Every path the action touches (both names of a rename)."""
    return list(dict.fromkeys(p for change in preview for p in change.paths))


def layout(preview: Preview, read: Callable[[str], bytes | None]) -> Layout:
    """The action's layout; ``read`` gives a workspace file's bytes (for a delete
    without its old text, and a rename)."""
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
                else read(change.path)
            )
            out.base[change.path] = old
            out.proposal[change.path] = None
        elif isinstance(change, FileRename):
            data = read(change.old_path)
            out.base[change.old_path] = data
            out.base.setdefault(change.new_path, None)
            out.proposal[change.old_path] = None
            out.proposal[change.new_path] = data
            out.renames[change.old_path] = change.new_path
    return out


def base_tree_hash(root: Path, preview: Preview) -> str:
    """The hash of the workspace without the change as a check run now would see it
    (what a stored result's ``base`` is compared with), computed without a slot."""
    from redline.checks.scratch import current_tree_hash

    resolved = Path(root).resolve()

    def read(rel: str) -> bytes | None:
        try:
            return (resolved / rel).read_bytes()
        except OSError:
            return None

    return current_tree_hash(resolved, layout(preview, read).base)


# -- the base-result cache ------------------------------------------------------------
def _cache_path(root: Path, tree_hash: str, spec: CheckSpec, argv: Sequence[str]) -> Path:
    boxed = "sandboxed" if spec.sandbox.enabled else "unsandboxed"
    key = hashlib.sha256(
        "\0".join(("2", tree_hash, spec.format, boxed, *argv)).encode()
    ).hexdigest()
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


# -- one check, both sides ------------------------------------------------------------
def _run(
    spec: CheckSpec, tree: ScratchTree, files: list[str], cancel: threading.Event | None
) -> list[Finding] | CheckResult:
    """The check's findings in the tree as it is now, or a CheckResult saying why not."""
    outcome = run_process(spec.command, files, tree.tree, spec.timeout, cancel, spec.sandbox)
    if outcome.state in ("timeout", "error"):
        tail = _tail(outcome.stderr)
        why = f"{outcome.why}; standard error: {tail}" if tail else outcome.why
        return CheckResult(spec.name, outcome.state, why=why)
    try:
        return findings_of(spec, outcome, tree.tree)
    except FormatError as exc:
        return CheckResult(spec.name, "error", why=str(exc))


def _check_one(
    root: Path,
    preview: Preview,
    spec: CheckSpec,
    slots: int,
    cancel: threading.Event | None,
) -> CheckResult:
    """Run one check on the base, then on the proposal, each from a fresh tree.

    The check has a slot of its own (checks running at once never share a tree). The
    slot is synced (the tree is then exactly the workspace), the base texts go in, the
    check runs (unless its result for this tree and command is cached), the tree is put
    back (:meth:`ScratchTree.restore`) and the proposal goes in for the second run.
    """
    key = spec.key()
    with acquire(root, slots, cancel) as tree:
        tree.sync()
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        plan = layout(preview, tree.read)
        base_hash = tree.tree_hash(plan.base)
        base_files = spec.select(plan.files(plan.base))
        before: list[Finding] | CheckResult
        if "{files}" in spec.command and not base_files:
            before = []  # nothing of the change exists on this side: nothing to find
        else:
            path = _cache_path(root, base_hash, spec, expand(spec.command, base_files, "{report}"))
            hit = _cached(path)
            if hit is not None:
                before = hit
            else:
                tree.overlay(plan.base)
                before = _run(spec, tree, base_files, cancel)
                if not isinstance(before, CheckResult):
                    _store(path, before)
                tree.restore()
        if isinstance(before, CheckResult):
            why = f"on the workspace without the change: {before.status}: {before.why}"
            return CheckResult(spec.name, before.status, why=why, config=key, base=base_hash)
        # The proposal's texts replace every path the base texts were written to.
        tree.overlay(plan.proposal)
        files = spec.select(plan.files(plan.proposal))
        nothing = "{files}" in spec.command and not files  # a delete: nothing to look at
        after = [] if nothing else _run(spec, tree, files, cancel)
    if isinstance(after, CheckResult):
        return CheckResult(spec.name, after.status, why=after.why, config=key, base=base_hash)
    new, fixed = compare(before, after, spec.format, plan.maps, plan.renames)
    status = "findings" if new else "pass"
    return CheckResult(spec.name, status, tuple(new), tuple(fixed), config=key, base=base_hash)


NO_FILES = "no files for this check"


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

    Up to ``jobs`` checks run at once, each in a slot of its own (at most ``slots``,
    default ``jobs``, shared with other actions and processes). A check whose ``files``
    match none of the action's paths is ``skipped`` (:data:`NO_FILES`). Raises
    :class:`Cancelled` when ``cancel`` is set meanwhile. A scratch tree that cannot be
    set up makes the check an ``error`` naming the cause.
    """
    if why := unavailable_why(s.sandbox for s in specs):
        return [CheckResult(s.name, "error", why=why, config=s.key()) for s in specs]
    paths = changed_paths(preview)
    results: dict[str, CheckResult] = {}
    todo = []
    for spec in specs:
        if spec.files is not None and not spec.select(paths):
            results[spec.name] = CheckResult(spec.name, "skipped", why=NO_FILES, config=spec.key())
        else:
            todo.append(spec)

    def one(spec: CheckSpec) -> CheckResult:
        try:
            return _check_one(root, preview, spec, slots if slots is not None else jobs, cancel)
        except ScratchCancelled:
            raise Cancelled() from None
        except ScratchError as exc:
            return CheckResult(spec.name, "error", why=str(exc), config=spec.key())

    if len(todo) == 1:
        results[todo[0].name] = one(todo[0])
    elif todo:
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo)))) as pool:
            futures = {spec.name: pool.submit(one, spec) for spec in todo}
            for name, future in futures.items():
                results[name] = future.result()
    return [results[spec.name] for spec in specs]


def skipped_results(config: ChecksConfig) -> list[CheckResult]:
    """The checks the configuration names but may not run, as ``skipped`` results."""
    return [CheckResult(s.name, "skipped", why=s.why) for s in config.skipped]
