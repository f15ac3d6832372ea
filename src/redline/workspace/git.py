"""The few git calls redline makes: one subprocess each, no shell, NUL-separated output.

Generic on purpose (other features reuse it). :func:`git`, :func:`is_work_tree` and
:func:`list_files` only ask git questions and never write into a repository (no index
refresh, no objects): ``GIT_OPTIONAL_LOCKS=0`` keeps even ``git status``-style commands
from taking the index lock. The provenance half below (:func:`repo_of`,
:func:`update_index`, :func:`commit_changes`, …) writes objects, index entries and commits
for ``[git] on_apply``; it changes only the paths it is given (see docs/git.md).

Every call runs with the inherited ``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_WORK_TREE`` and the
other repository-locating variables removed, so a redline started from inside a git hook
still talks to the repository of its workspace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CommitOutcome",
    "GitError",
    "GitRepo",
    "IndexChange",
    "commit_changes",
    "git",
    "is_work_tree",
    "list_files",
    "repo_of",
    "run_git",
    "update_index",
]

#: Seconds a single git call may take before it counts as failed.
GIT_TIMEOUT = 30.0


class GitError(RuntimeError):
    """git is missing, or a git call failed; the message says which and why."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    for name in _LOCATING:
        env.pop(name, None)
    return env


#: Variables that would point git at another repository, index or object store.
_LOCATING = (
    "GIT_INDEX_FILE",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
)


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> bytes:
    """Run ``git -C root ARGS`` and return its standard output (GitError on failure)."""
    exe = shutil.which("git")
    if exe is None:
        raise GitError("git is not installed (not found on PATH)")
    merged = _env()
    if env:
        merged.update(env)
    try:
        done = subprocess.run(
            [exe, "-C", str(root), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=merged,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} in {root} took longer than {GIT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        cause = detail[-1] if detail else f"exit status {done.returncode}"
        raise GitError(f"git {args[0]} in {root} failed: {cause}")
    return done.stdout


def is_work_tree(root: Path) -> bool:
    """True when ``root`` is the top of a git working tree (False without git)."""
    try:
        top = git(root, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape")
    except GitError:
        return False
    try:
        return Path(top.strip()).resolve() == Path(root).resolve()
    except OSError:
        return False


def list_files(root: Path, *, untracked: bool = True) -> list[str]:
    """The working tree's files as git sees them, root-relative with ``/``: tracked files,
    and with ``untracked`` also untracked ones that ``.gitignore`` does not exclude.

    Names that are not UTF-8 come back with surrogate escapes (``os.fsdecode``)."""
    args = ["ls-files", "-z", "--cached"]
    if untracked:
        args += ["--others", "--exclude-standard"]
    out = git(root, *args)
    names = dict.fromkeys(os.fsdecode(part) for part in out.split(b"\0") if part)
    return list(names)


# -- provenance: index entries and commits (``[git] on_apply``) ------------------------
def run_git(
    root: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``git -C root ARGS`` with ``input`` on its standard input; the finished process,
    whatever its exit status (GitError only when git cannot run or takes too long)."""
    exe = shutil.which("git")
    if exe is None:
        raise GitError("git is not installed (not found on PATH)")
    merged = _env()
    if env:
        merged.update(env)
    try:
        return subprocess.run(
            [exe, "-C", str(root), *args],
            input=input if input is not None else b"",
            capture_output=True,
            env=merged,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} in {root} took longer than {GIT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None


def _checked(
    root: Path, *args: str, env: dict[str, str] | None = None, input: bytes = b""
) -> bytes:
    done = run_git(root, *args, env=env, input=input)
    if done.returncode != 0:
        raise GitError(f"git {args[0]} in {root} failed: {_last_line(done)}")
    return done.stdout


def _last_line(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = [
        line.strip()
        for line in done.stderr.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("hint:")
    ]
    return lines[-1] if lines else f"exit status {done.returncode}"


def stderr_text(done: subprocess.CompletedProcess[bytes], limit: int = 6) -> str:
    """The last ``limit`` lines git (or a hook) wrote to stderr/stdout, for a message."""
    text = (done.stderr + b"\n" + done.stdout).decode("utf-8", "replace")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-limit:])


@dataclass(frozen=True)
class GitRepo:
    """The git working tree a workspace lies in: its top and the workspace's place in it."""

    top: Path
    #: The workspace root relative to ``top``: "" or ``"sub/dir/"``.
    prefix: str

    def path(self, workspace_path: str) -> str:
        """A workspace-relative path as a path of the repository."""
        return self.prefix + workspace_path

    def workspace_path(self, repo_path: str) -> str | None:
        """A repository path as a workspace path (None: outside the workspace)."""
        if not repo_path.startswith(self.prefix):
            return None
        return repo_path[len(self.prefix) :]


def repo_of(root: Path) -> GitRepo | None:
    """The git working tree holding ``root``, or None (not in git, bare, git missing)."""
    try:
        done = run_git(
            root, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-prefix"
        )
    except GitError:
        return None
    if done.returncode != 0:
        return None
    lines = os.fsdecode(done.stdout).split("\n")
    if len(lines) < 3 or lines[0] != "true" or not lines[1]:
        return None
    return GitRepo(Path(lines[1]), lines[2])


def head(repo: GitRepo) -> str | None:
    """The commit HEAD names, or None on an unborn branch."""
    done = run_git(repo.top, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    if done.returncode != 0:
        return None
    return done.stdout.decode("ascii").strip() or None


def ident(repo: GitRepo) -> str:
    """git's user as ``Name <email>`` (GitError when none is configured)."""
    line = _checked(repo.top, "var", "GIT_COMMITTER_IDENT").decode("utf-8", "replace").strip()
    name, sep, _rest = line.rpartition(">")
    return name + sep if sep else line


@dataclass(frozen=True)
class IndexChange:
    """One file an applied action changed, as repository paths and exact bytes.

    ``modify``: ``before`` → ``after``; ``create``: ``after``; ``delete``: the entry goes;
    ``rename``: ``old_path``'s entry moves to ``path`` unchanged.
    """

    kind: str
    path: str
    before: bytes | None = None
    after: bytes | None = None
    old_path: str = ""
    executable: bool = False


@dataclass(frozen=True)
class _Entry:
    mode: str
    sha: str


def _literal(path: str) -> str:
    return f":(literal){path}"


def _entries(repo: GitRepo, paths: list[str], env: dict[str, str] | None) -> dict[str, _Entry]:
    """The index's stage-0 entries of ``paths`` (the index GIT_INDEX_FILE in ``env`` names)."""
    if not paths:
        return {}
    out = _checked(repo.top, "ls-files", "-s", "-z", "--", *map(_literal, paths), env=env)
    found: dict[str, _Entry] = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _tab, name = item.partition(b"\t")
        mode, sha, stage = meta.decode("ascii").split(" ")
        if stage == "0":
            found[os.fsdecode(name)] = _Entry(mode, sha)
    return found


def read_blobs(repo: GitRepo, shas: list[str]) -> dict[str, bytes]:
    """The contents of blobs ``shas`` (one ``git cat-file --batch`` call)."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = _checked(
        repo.top, "cat-file", "--batch", input="".join(f"{s}\n" for s in wanted).encode()
    )
    found: dict[str, bytes] = {}
    at = 0
    for sha in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].decode("ascii").split(" ")
        if len(header) != 3:
            raise GitError(f"git cat-file: no object {sha}")
        size = int(header[2])
        found[sha] = out[end + 1 : end + 1 + size]
        at = end + 1 + size + 1
    return found


def write_blob(repo: GitRepo, data: bytes) -> str:
    """Store ``data`` as a blob (exact bytes, no filters); its object id."""
    return _checked(repo.top, "hash-object", "-w", "--stdin", input=data).decode().strip()


def merge_bytes(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """``ours`` with the change ``base`` → ``theirs`` merged in; None when they conflict."""
    from merge3 import Merge3

    merged = Merge3(
        base.splitlines(keepends=True), ours.splitlines(keepends=True), theirs.splitlines(True)
    )
    out: list[bytes] = []
    for group in merged.merge_groups():
        if group[0] == "conflict":
            return None
        out.extend(group[1])
    return b"".join(out)


def update_index(
    repo: GitRepo, changes: list[IndexChange], *, index_file: Path | None = None
) -> list[str]:
    """Put exactly ``changes`` into the index (``index_file``, else the repository's own).

    Each change is made relative to what the index holds: an entry still at ``before`` is
    set to ``after``; one the person changed otherwise gets the change merged in (their
    other staged edits stay); an entry already at ``after`` is left alone. Returns the
    paths whose staged text conflicts with the change (left as they were).
    """
    env = {"GIT_INDEX_FILE": str(index_file)} if index_file is not None else None
    wanted = [p for c in changes for p in ((c.path, c.old_path) if c.old_path else (c.path,))]
    entries = _entries(repo, wanted, env)
    blobs = read_blobs(repo, [e.sha for e in entries.values()])
    lines: list[bytes] = []
    removed: list[str] = []
    conflicts: list[str] = []
    for change in changes:
        entry = entries.get(change.path)
        if change.kind == "delete":
            if entry is not None:
                removed.append(change.path)
                entries.pop(change.path)
            continue
        if change.kind == "rename":
            moved = entries.pop(change.old_path, None)
            if moved is not None:
                removed.append(change.old_path)
                entries[change.path] = moved
                lines.append(_info(moved.mode, moved.sha, change.path))
            elif change.after is not None:
                sha = write_blob(repo, change.after)
                lines.append(_info(_mode(None, change), sha, change.path))
            continue
        assert change.after is not None
        if entry is None:
            result: bytes | None = change.after
        else:
            current = blobs.get(entry.sha, b"")
            if current == change.after:
                continue
            if change.before is None or current == change.before:
                result = change.after
            else:
                result = merge_bytes(change.before, current, change.after)
        if result is None:
            conflicts.append(change.path)
            continue
        sha = write_blob(repo, result)
        blobs[sha] = result
        entries[change.path] = _Entry(_mode(entry, change), sha)
        lines.append(_info(_mode(entry, change), sha, change.path))
    if removed:
        _checked(
            repo.top,
            "update-index",
            "-z",
            "--force-remove",
            "--stdin",
            env=env,
            input=b"".join(os.fsencode(p) + b"\0" for p in removed),
        )
    if lines:
        _checked(repo.top, "update-index", "-z", "--index-info", env=env, input=b"".join(lines))
    return conflicts


def _mode(entry: _Entry | None, change: IndexChange) -> str:
    if entry is not None and entry.mode in ("100644", "100755"):
        return entry.mode
    return "100755" if change.executable else "100644"


def _info(mode: str, sha: str, path: str) -> bytes:
    return f"{mode} {sha}\t".encode() + os.fsencode(path) + b"\0"


@dataclass(frozen=True)
class CommitOutcome:
    """What :func:`commit_changes` did.

    ``commit``: the new commit (None when none was made). ``staged``: the changes are in
    the repository's index. ``hook_failed``: git's (or a hook's) last lines when the commit
    was refused. ``conflicts``: paths whose staged text the change could not be merged into.
    ``empty``: the changes were already committed (nothing to commit).
    """

    commit: str | None
    staged: bool
    hook_failed: str = ""
    conflicts: tuple[str, ...] = ()
    empty: bool = False


def commit_changes(repo: GitRepo, changes: list[IndexChange], message: str) -> CommitOutcome:
    """One commit of exactly ``changes`` on HEAD, with the repository's hooks.

    The commit is built in a temporary index that starts as HEAD's tree, so the person's
    other staged and unstaged changes are never part of it; afterwards the same changes
    are staged in the repository's own index (which then agrees with the new HEAD for
    these paths). When git refuses the commit (a failing ``pre-commit`` or ``commit-msg``
    hook) the changes stay applied and staged and ``hook_failed`` says why.
    """
    import tempfile

    parent = head(repo)
    with tempfile.TemporaryDirectory(prefix="redline-index-") as folder:
        index = Path(folder) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        if parent is None:
            _checked(repo.top, "read-tree", "--empty", env=env)
        else:
            _checked(repo.top, "read-tree", parent, env=env)
        conflicts = update_index(repo, changes, index_file=index)
        if conflicts:
            return CommitOutcome(None, False, conflicts=tuple(conflicts))
        if parent is not None:
            same = run_git(repo.top, "diff-index", "--cached", "--quiet", parent, env=env)
            if same.returncode == 0:
                staged = not update_index(repo, changes)
                return CommitOutcome(None, staged, empty=True)
        done = run_git(
            repo.top,
            "commit",
            "-q",
            "--cleanup=whitespace",
            "-F",
            "-",
            env=env,
            input=message.encode("utf-8"),
        )
    main_conflicts = update_index(repo, changes)
    if done.returncode != 0:
        return CommitOutcome(
            None,
            not main_conflicts,
            hook_failed=stderr_text(done) or f"git commit exited with {done.returncode}",
            conflicts=tuple(main_conflicts),
        )
    return CommitOutcome(head(repo), not main_conflicts, conflicts=tuple(main_conflicts))


# -- history: what a commit changed, and taking one back ------------------------------
@dataclass(frozen=True)
class TreeChange:
    """One path a commit changed: its entry before and after (None: absent)."""

    path: str
    before: tuple[str, str] | None  # (mode, blob id)
    after: tuple[str, str] | None


def commit_exists(repo: GitRepo, commit: str) -> bool:
    done = run_git(repo.top, "cat-file", "-e", f"{commit}^{{commit}}")
    return done.returncode == 0


def is_ancestor(repo: GitRepo, commit: str, of: str = "HEAD") -> bool:
    return run_git(repo.top, "merge-base", "--is-ancestor", commit, of).returncode == 0


def parent_of(repo: GitRepo, commit: str) -> str | None:
    done = run_git(repo.top, "rev-parse", "-q", "--verify", f"{commit}^1")
    return done.stdout.decode("ascii").strip() if done.returncode == 0 else None


def commit_changes_of(repo: GitRepo, commit: str) -> list[TreeChange]:
    """The paths ``commit`` changed against its first parent (renames as delete + add)."""
    out = _checked(
        repo.top, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--root", commit
    )
    parts = out.split(b"\0")
    changes: list[TreeChange] = []
    at = 0
    while at + 1 < len(parts) and parts[at]:
        meta = parts[at].decode("ascii").lstrip(":").split(" ")
        path = os.fsdecode(parts[at + 1])
        old_mode, new_mode, old_sha, new_sha = meta[0], meta[1], meta[2], meta[3]
        before = None if set(old_sha) == {"0"} else (old_mode, old_sha)
        after = None if set(new_sha) == {"0"} else (new_mode, new_sha)
        changes.append(TreeChange(path, before, after))
        at += 2
    return changes


def tree_entries(repo: GitRepo, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    """``commit``'s entries (mode, blob id) for ``paths`` that it has."""
    if not paths:
        return {}
    out = _checked(repo.top, "ls-tree", "-z", "--full-tree", commit, "--", *paths)
    found: dict[str, tuple[str, str]] = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _tab, name = item.partition(b"\t")
        mode, kind, sha = meta.decode("ascii").split(" ")
        if kind == "blob":
            found[os.fsdecode(name)] = (mode, sha)
    return found


def index_entries(repo: GitRepo, paths: list[str]) -> dict[str, tuple[str, str]]:
    """The repository index's stage-0 entries (mode, blob id) for ``paths``."""
    return {p: (e.mode, e.sha) for p, e in _entries(repo, paths, None).items()}


def set_index_entries(repo: GitRepo, wanted: dict[str, tuple[str, str] | None]) -> None:
    """Set the repository index's entries of these paths (None: remove the path)."""
    removed = [p for p, e in wanted.items() if e is None]
    lines = [_info(e[0], e[1], p) for p, e in wanted.items() if e is not None]
    if removed:
        _checked(
            repo.top,
            "update-index",
            "-z",
            "--force-remove",
            "--stdin",
            input=b"".join(os.fsencode(p) + b"\0" for p in removed),
        )
    if lines:
        _checked(repo.top, "update-index", "-z", "--index-info", input=b"".join(lines))


def on_remote_branch(repo: GitRepo, commit: str) -> bool:
    """Is ``commit`` contained in a remote-tracking branch (already shared)?"""
    out = _checked(
        repo.top, "for-each-ref", "--contains", commit, "--format=%(refname)", "refs/remotes/"
    )
    return bool(out.strip())


def commits_touching(repo: GitRepo, since: str, paths: list[str]) -> list[str]:
    """The commits after ``since`` up to HEAD that changed any of ``paths``."""
    out = _checked(repo.top, "rev-list", f"{since}..HEAD", "--", *map(_literal, paths))
    return out.decode("ascii").split()


def move_head(repo: GitRepo, new: str, old: str, reason: str) -> None:
    """Point HEAD's branch from ``old`` to ``new`` (refused if HEAD moved meanwhile)."""
    _checked(repo.top, "update-ref", "-m", reason, "HEAD", new, old)
