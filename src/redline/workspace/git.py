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
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BlobCache",
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
    return _checked(root, *args, env=env)


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


def write_blobs(repo: GitRepo, datas: list[bytes]) -> list[str]:
    """Store each of ``datas`` as a blob (exact bytes, no filters) with one git call."""
    if len(datas) <= 1:
        return [write_blob(repo, data) for data in datas]
    import tempfile

    with tempfile.TemporaryDirectory(prefix="redline-blobs-") as folder:
        names = []
        for number, data in enumerate(datas):
            path = Path(folder) / str(number)
            path.write_bytes(data)
            names.append(str(path))
        out = _checked(
            repo.top,
            "hash-object",
            "-w",
            "--no-filters",
            "--stdin-paths",
            input="".join(f"{name}\n" for name in names).encode(),
        )
    ids = out.decode("ascii").split()
    if len(ids) != len(datas):
        raise GitError(f"git hash-object stored {len(ids)} of {len(datas)} blobs")
    return ids


@dataclass
class BlobCache:
    """Blobs already read or written during one git step (each saves a git call)."""

    #: blob id -> contents
    contents: dict[str, bytes] = field(default_factory=dict)
    #: sha256 of contents -> blob id
    ids: dict[str, str] = field(default_factory=dict)

    def known_id(self, data: bytes) -> str | None:
        import hashlib

        return self.ids.get(hashlib.sha256(data).hexdigest())

    def add(self, sha: str, data: bytes) -> None:
        import hashlib

        self.contents[sha] = data
        self.ids[hashlib.sha256(data).hexdigest()] = sha


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
    repo: GitRepo,
    changes: list[IndexChange],
    *,
    index_file: Path | None = None,
    cache: BlobCache | None = None,
) -> list[str]:
    """Put exactly ``changes`` into the index (``index_file``, else the repository's own).

    Each change is made relative to what the index holds: an entry still at ``before`` is
    set to ``after``; one the person changed otherwise gets the change merged in (their
    other staged edits stay); an entry already at ``after`` is left alone. Returns the
    paths whose staged text conflicts with the change (left as they were).
    """
    return _update_index(repo, changes, index_file, cache or BlobCache())[0]


#: One index entry while changes are worked out: (mode, blob id or None, contents).
_Slot = tuple[str, str | None, bytes]


def _update_index(
    repo: GitRepo, changes: list[IndexChange], index_file: Path | None, cache: BlobCache
) -> tuple[list[str], bool]:
    """:func:`update_index`; and whether any entry of the index changed.

    Git calls: one ``ls-files``, a ``cat-file`` only for entries ``cache`` does not know,
    one ``hash-object`` for all new contents ``cache`` does not know, and one
    ``update-index`` for each of removals and entries.
    """
    env = {"GIT_INDEX_FILE": str(index_file)} if index_file is not None else None
    wanted = [p for c in changes for p in ((c.path, c.old_path) if c.old_path else (c.path,))]
    entries = _entries(repo, wanted, env)
    unknown = [e.sha for e in entries.values() if e.sha not in cache.contents]
    for sha, data in read_blobs(repo, unknown).items():
        cache.add(sha, data)
    state: dict[str, _Slot | None] = {
        path: (e.mode, e.sha, cache.contents[e.sha]) for path, e in entries.items()
    }
    touched: dict[str, None] = {}
    conflicts: list[str] = []
    for change in changes:
        slot = state.get(change.path)
        if change.kind == "delete":
            if slot is not None:
                state[change.path] = None
                touched[change.path] = None
            continue
        if change.kind == "rename":
            moved = state.get(change.old_path)
            if moved is not None:
                state[change.old_path] = None
                state[change.path] = moved
                touched.update({change.old_path: None, change.path: None})
            elif change.after is not None:
                state[change.path] = (_mode(None, change), None, change.after)
                touched[change.path] = None
            continue
        assert change.after is not None
        if slot is None:
            result: bytes | None = change.after
        else:
            current = slot[2]
            if current == change.after:
                continue
            if change.before is None or current == change.before:
                result = change.after
            else:
                result = merge_bytes(change.before, current, change.after)
        if result is None:
            conflicts.append(change.path)
            continue
        state[change.path] = (_mode(slot[0] if slot else None, change), None, result)
        touched[change.path] = None
    # The new contents, stored at once; then only the entries that really differ.
    fresh = list(
        dict.fromkeys(
            slot[2]
            for path in touched
            if (slot := state[path]) is not None
            and slot[1] is None
            and cache.known_id(slot[2]) is None
        )
    )
    for data, sha in zip(fresh, write_blobs(repo, fresh), strict=True):
        cache.add(sha, data)
    lines: list[bytes] = []
    removed: list[str] = []
    for path in touched:
        slot = state[path]
        before = entries.get(path)
        if slot is None:
            if before is not None:
                removed.append(path)
            continue
        blob = slot[1] or cache.known_id(slot[2])
        assert blob is not None
        if before is None or (before.mode, before.sha) != (slot[0], blob):
            lines.append(_info(slot[0], blob, path))
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
    return conflicts, bool(removed or lines)


def _mode(mode: str | None, change: IndexChange) -> str:
    if mode in ("100644", "100755"):
        return mode
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
    # Blobs read or written for the temporary index are known again for the person's.
    cache = BlobCache()
    with tempfile.TemporaryDirectory(prefix="redline-index-") as folder:
        index = Path(folder) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        if parent is None:
            _checked(repo.top, "read-tree", "--empty", env=env)
        else:
            _checked(repo.top, "read-tree", parent, env=env)
        conflicts, changed = _update_index(repo, changes, index, cache)
        if conflicts:
            return CommitOutcome(None, False, conflicts=tuple(conflicts))
        if parent is not None and not changed:  # the tree is HEAD's: nothing to commit
            staged = not update_index(repo, changes, cache=cache)
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
    main_conflicts = update_index(repo, changes, cache=cache)
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


def set_index_entries(
    repo: GitRepo, wanted: dict[str, tuple[str, str] | None], *, index_file: Path | None = None
) -> None:
    """Set the index's entries of these paths (None: remove the path); ``index_file``:
    another index than the repository's own."""
    env = {"GIT_INDEX_FILE": str(index_file)} if index_file is not None else None
    removed = [p for p, e in wanted.items() if e is None]
    lines = [_info(e[0], e[1], p) for p, e in wanted.items() if e is not None]
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


def rewrite_commit(
    repo: GitRepo, commit: str, wanted: dict[str, tuple[str, str] | None], message: str
) -> str:
    """A new commit with ``commit``'s parent, author and tree except ``wanted``'s entries,
    and ``message``; no ref moves and no hook runs (the commit's content only shrinks)."""
    import tempfile

    out = _checked(repo.top, "log", "-1", "--format=%an%x00%ae%x00%ad", "--date=raw", commit)
    fields = out.decode("utf-8", "surrogateescape").rstrip("\n").split("\0")
    name, email, date = [*fields, "", ""][:3]
    with tempfile.TemporaryDirectory(prefix="redline-index-") as folder:
        index = Path(folder) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        _checked(repo.top, "read-tree", commit, env=env)
        set_index_entries(repo, wanted, index_file=index)
        tree = _checked(repo.top, "write-tree", env=env).decode("ascii").strip()
    parents = ["-p", p] if (p := parent_of(repo, commit)) else []
    author = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date}
    made = _checked(
        repo.top, "commit-tree", tree, *parents, "-F", "-", env=author, input=message.encode()
    )
    return made.decode("ascii").strip()


def message_of(repo: GitRepo, commit: str) -> str:
    """``commit``'s whole message."""
    return _checked(repo.top, "log", "-1", "--format=%B", commit).decode("utf-8", "replace")


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
