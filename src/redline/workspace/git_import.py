"""Review a branch, a worktree or a patch as pending actions (``redline pending import``).

Each changed file becomes one queued action (``files: [path]``, source ``import:NAME``)
whose Preview is based on the local working tree, so applying it goes through safe apply
like any proposal:

* **branch** (a git ref): its changes since the merge base with HEAD
  (``git diff-tree -M``, renames kept); the file's text at the merge base is the base
  of a three-way merge into the local file, so local work on other lines is kept;
* **worktree** (a folder in git): its uncommitted changes against its own HEAD;
* **patch** (a file or ``-``: a unified diff or ``git format-patch`` output): each file's
  part is applied to the local file with ``git apply`` in a scratch folder.

A symbolic link (added, changed, or a file turned into one), a binary file, a change that conflicts with the local file and a path redline may not
touch are refused one by one with a message naming the file; the rest is imported.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from redline.workspace.git import GitError, GitRepo, merge_bytes, read_blobs, repo_of, run_git
from redline.workspace.preview import (
    DecodeError,
    FileCreate,
    FileDelete,
    FileModify,
    FileRename,
    Preview,
    decode_text,
    sha256_bytes,
)

KINDS = ("patch", "worktree", "branch")
#: git's file mode of a symbolic link.
LINK_MODE = "120000"
MAX_PATCH_BYTES = 64 * 1024 * 1024


class ImportError_(ValueError):
    """The source cannot be imported at all; the message names it and the cause."""


@dataclass(frozen=True)
class Imported:
    """One file of the source: its change as repository-neutral paths and bytes."""

    path: str
    old_path: str = ""
    base: bytes | None = None  # the source's text before (None: created)
    theirs: bytes | None = None  # the source's text after (None: deleted)
    binary: bool = False
    #: A symbolic link on either side (added, changed, turned into or from a link): its
    #: "text" is the link's target, so it is refused, never queued as a regular file.
    link: bool = False
    #: Why the source's change cannot be made to the local file ("" when it can).
    failed: str = ""


@dataclass
class ImportPlan:
    """What an import will queue: one Preview per file, and the files refused."""

    name: str
    kind: str
    previews: list[tuple[str, Preview]] = field(default_factory=list)  # (label, preview)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    author: str = ""
    #: The imported commits' own ``Assisted-by`` values (who helped, with which model).
    assisted_by: tuple[str, ...] = ()
    #: The source's path of each preview (in the order of ``previews``).
    keys: list[str] = field(default_factory=list)
    #: Each file of the source that became no preview: path -> why ("" when the local file
    #: already holds the change).
    left: dict[str, str] = field(default_factory=dict)
    #: Each file of the source: path -> a digest of its change there (base, text, rename).
    digests: dict[str, str] = field(default_factory=dict)


def detect(source: str, forced: str | None, root: Path) -> str:
    """patch, worktree or branch: ``-`` or a file is a patch, a folder a worktree, else a ref."""
    if forced is not None:
        return forced
    if source == "-":
        return "patch"
    path = Path(source).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    if path.is_file():
        return "patch"
    if path.is_dir():
        return "worktree"
    return "branch"


def source_name(source: str, kind: str) -> str:
    """The ``NAME`` of ``import:NAME``: the ref, the folder's or the patch file's name."""
    if kind == "patch":
        return "stdin" if source == "-" else Path(source).name or "patch"
    if kind == "worktree":
        return Path(source).resolve().name or "worktree"
    return source


# -- reading each kind of source ------------------------------------------------------
def _need_repo(root: Path) -> GitRepo:
    repo = repo_of(root)
    if repo is None:
        raise ImportError_(f"{root} is not in a git working tree; a branch is read from git")
    return repo


def branch_files(root: Path, ref: str) -> tuple[list[Imported], str]:
    """A ref's changes since its merge base with HEAD; and its newest commit's author."""
    repo = _need_repo(root)
    if ref.startswith("-"):
        raise ImportError_(f"{ref!r} is not a branch or ref")
    tip = run_git(repo.top, "rev-parse", "-q", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    if tip.returncode != 0:
        raise ImportError_(f"{ref!r} is not a file, a folder or a git ref known in {repo.top}")
    tip_id = tip.stdout.decode().strip()
    base = run_git(repo.top, "merge-base", tip_id, "HEAD")
    if base.returncode != 0:
        raise ImportError_(f"{ref} has no history in common with HEAD")
    base_id = base.stdout.decode().strip()
    files = _tree_diff(repo, base_id, tip_id)
    author = run_git(repo.top, "log", "-1", "--format=%an <%ae>", tip_id).stdout
    return files, author.decode("utf-8", "replace").strip()


def branch_assisted(root: Path, ref: str) -> tuple[str, ...]:
    """The ``Assisted-by`` trailers of the commits ``ref`` has since it left ``HEAD``."""
    repo = repo_of(root)
    if repo is None or ref.startswith("-"):
        return ()
    done = run_git(
        repo.top,
        "log",
        "--format=%(trailers:key=Assisted-by,valueonly,separator=%x00)%x00",
        "--end-of-options",
        f"HEAD..{ref}",
    )
    if done.returncode != 0:
        return ()
    values = (v.strip() for v in done.stdout.decode("utf-8", "replace").split("\0"))
    return tuple(dict.fromkeys(v for v in values if v))


def patch_assisted(text: bytes) -> tuple[str, ...]:
    """The ``Assisted-by`` lines of a patch's messages (before each diff)."""
    found: list[str] = []
    in_message = True
    for line in text.splitlines():
        if line.startswith(b"diff --git "):
            in_message = False
        elif line.startswith(b"From ") and b"Mon Sep 17 00:00:00 2001" in line:
            in_message = True
        elif in_message and line.startswith(b"Assisted-by:"):
            value = line[len(b"Assisted-by:") :].decode("utf-8", "replace").strip()
            if value:
                found.append(value)
    return tuple(dict.fromkeys(found))


def _tree_diff(repo: GitRepo, old: str, new: str) -> list[Imported]:
    out = run_git(repo.top, "diff-tree", "-r", "-z", "-M", "--no-commit-id", old, new)
    if out.returncode != 0:
        raise GitError(f"git diff-tree failed: {out.stderr.decode('utf-8', 'replace').strip()}")
    parts = out.stdout.split(b"\0")
    rows: list[tuple[str, str, str, str, str]] = []  # status, old sha, new sha, path, old
    linked: set[str] = set()
    at = 0
    while at < len(parts) and parts[at]:
        meta = parts[at].decode("ascii").lstrip(":").split(" ")
        status = meta[4][0]
        if LINK_MODE in (meta[0], meta[1]):
            linked.add(os.fsdecode(parts[at + 2 if status in "RC" else at + 1]))
        if status in "RC":
            rows.append(
                (status, meta[2], meta[3], os.fsdecode(parts[at + 2]), os.fsdecode(parts[at + 1]))
            )
            at += 3
        else:
            rows.append((status, meta[2], meta[3], os.fsdecode(parts[at + 1]), ""))
            at += 2
    zero = {"0"}
    blobs = read_blobs(repo, [s for r in rows for s in (r[1], r[2]) if set(s) != zero])
    files: list[Imported] = []
    for status, old_sha, new_sha, path, old_path in rows:
        before = None if set(old_sha) == zero else blobs[old_sha]
        after = None if set(new_sha) == zero else blobs[new_sha]
        files.append(
            Imported(
                path=path,
                old_path=old_path if status == "R" else "",
                base=before,
                theirs=after,
                binary=_binary(before) or _binary(after),
                link=path in linked,
            )
        )
    return files


def worktree_files(folder: Path) -> list[Imported]:
    """A git worktree's uncommitted changes (staged, unstaged, untracked) against its HEAD."""
    repo = repo_of(folder)
    if repo is None:
        raise ImportError_(f"{folder} is not a git worktree (no uncommitted changes to read)")
    out = run_git(repo.top, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    if out.returncode != 0:
        raise ImportError_(f"git status in {folder} failed")
    parts = out.stdout.split(b"\0")
    has_head = run_git(repo.top, "rev-parse", "-q", "--verify", "HEAD").returncode == 0
    entries: list[tuple[str, str, str]] = []  # status code, path, old path
    at = 0
    while at < len(parts) and parts[at]:
        entry = os.fsdecode(parts[at])
        code, path = entry[:2], entry[3:]
        old_path = ""
        if "R" in code:
            old_path = os.fsdecode(parts[at + 1])
            at += 1
        at += 1
        entries.append((code, path, old_path))
    head_links = _head_links(repo, [old or path for _c, path, old in entries]) if has_head else ()
    files: list[Imported] = []
    for code, path, old_path in entries:
        if (repo.top / path).is_symlink() or (old_path or path) in head_links:
            files.append(Imported(path, old_path, link=True))
            continue
        base = _head_blob(repo, old_path or path) if has_head and code != "??" else None
        try:
            theirs: bytes | None = (repo.top / path).read_bytes()
        except FileNotFoundError:
            theirs = None
        except IsADirectoryError:
            continue  # a nested repository, not a file
        files.append(
            Imported(path, old_path, base, theirs, binary=_binary(base) or _binary(theirs))
        )
    return files


def _head_links(repo: GitRepo, paths: list[str]) -> set[str]:
    """Which of ``paths`` are symbolic links in HEAD (one ``git ls-tree`` for all)."""
    if not paths:
        return set()
    out = run_git(repo.top, "ls-tree", "-z", "--full-tree", "HEAD", "--", *paths)
    found: set[str] = set()
    for item in out.stdout.split(b"\0"):
        meta, _tab, name = item.partition(b"\t")
        if meta.startswith(LINK_MODE.encode()):
            found.add(os.fsdecode(name))
    return found


def _head_blob(repo: GitRepo, path: str) -> bytes | None:
    done = run_git(repo.top, "cat-file", "blob", f"HEAD:{path}")
    return done.stdout if done.returncode == 0 else None


def _binary(data: bytes | None) -> bool:
    return data is not None and b"\0" in data[:8192]


def patch_files(root: Path, text: bytes) -> tuple[list[Imported], str]:
    """Each file of a patch applied to the local file; and the patch's ``From:`` author."""
    if len(text) > MAX_PATCH_BYTES:
        raise ImportError_(f"the patch is larger than {MAX_PATCH_BYTES} bytes")
    with tempfile.TemporaryDirectory(prefix="redline-patch-") as scratch:
        work = Path(scratch)
        patch = work.parent / (work.name + ".patch")
        patch.write_bytes(text)
        try:
            stat = run_git(work, "apply", "--numstat", "-z", str(patch), env=_scratch_env(work))
            if stat.returncode != 0:
                raise ImportError_(f"not a patch git can read: {_git_why(stat.stderr)}")
            renames = _renames(text)
            entries = [
                (path, old or renames.get(path, ""), binary)
                for path, old, binary in dict.fromkeys(_numstat(stat.stdout))
            ]
            if not entries:
                raise ImportError_("the patch changes no file")
            linked = _patch_links(text)
            files = [
                Imported(entry[0], entry[1], link=True)
                if linked.intersection(entry[:2])
                else _apply_one(root, work, patch, *entry)
                for entry in entries
            ]
        finally:
            patch.unlink(missing_ok=True)
    return files, _patch_author(text)


def _unquote(name: bytes) -> str:
    """A path as git writes it in a patch header (C-quoted when it has odd bytes)."""
    if name.startswith(b'"') and name.endswith(b'"') and len(name) >= 2:
        import codecs

        name = codecs.escape_decode(name[1:-1])[0]
    return os.fsdecode(name)


def _renames(text: bytes) -> dict[str, str]:
    """new path -> old path for each ``rename from``/``rename to`` pair of a git patch."""
    found: dict[str, str] = {}
    source = ""
    for line in text.splitlines():
        if line.startswith(b"rename from "):
            source = _unquote(line[len(b"rename from ") :])
        elif line.startswith(b"rename to ") and source:
            found[_unquote(line[len(b"rename to ") :])] = source
            source = ""
    return found


def _patch_links(text: bytes) -> set[str]:
    """The paths of a git patch's parts that make, change or remove a symbolic link (mode
    120000 on an ``index``, ``old mode``, ``new mode``, ``new file mode`` or ``deleted file
    mode`` line of their header)."""
    found: set[str] = set()
    names: set[str] = set()
    link = False

    def close() -> None:
        if link:
            found.update(names)

    for line in text.splitlines():
        if line.startswith(b"diff --git "):
            close()
            names, link = set(), False
            rest = line[len(b"diff --git ") :]
            half = (len(rest) - 1) // 2
            if rest[:2] == b"a/" and rest[half + 1 : half + 3] == b"b/":
                names.update({_unquote(rest[2:half]), _unquote(rest[half + 3 :])})
        elif line.startswith((b"--- a/", b"+++ b/")):
            names.add(_unquote(line[6:].rstrip(b"\t")))
        elif line.startswith((b"rename from ", b"rename to ")):
            names.add(_unquote(line.split(b" ", 2)[2]))
        elif line.startswith(
            (b"index ", b"old mode ", b"new mode ", b"new file mode ", b"deleted file mode ")
        ) and line.rstrip().endswith(LINK_MODE.encode()):
            link = True
    close()
    return found


def _git_why(stderr: bytes) -> str:
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1].removeprefix("error: ") if lines else "unknown error"


def _numstat(out: bytes) -> list[tuple[str, str, bool]]:
    """(path, old path for a rename, binary) per file of ``git apply --numstat -z``."""
    parts = out.split(b"\0")
    found: list[tuple[str, str, bool]] = []
    at = 0
    while at < len(parts):
        item = parts[at]
        if not item or b"\t" not in item:
            at += 1
            continue
        added, deleted, name = item.split(b"\t", 2)
        binary = added == b"-" and deleted == b"-"
        if name:
            found.append((os.fsdecode(name), "", binary))
            at += 1
        else:  # a rename: the old and the new name follow
            found.append((os.fsdecode(parts[at + 2]), os.fsdecode(parts[at + 1]), binary))
            at += 3
    return found


def _apply_one(
    root: Path, work: Path, patch: Path, path: str, old_path: str, binary: bool
) -> Imported:
    """``path``'s part of the patch applied to the local file in the scratch folder."""
    if binary:
        return Imported(path, old_path, binary=True)
    source = old_path or path
    local = _local(root, source)
    for name in dict.fromkeys((source, path)):
        (work / name).unlink(missing_ok=True)
    if local is not None:
        (work / source).parent.mkdir(parents=True, exist_ok=True)
        (work / source).write_bytes(local)
    done = run_git(
        work, "apply", "--include", source, "--include", path, str(patch), env=_scratch_env(work)
    )
    if done.returncode != 0:
        why = "the local file is missing" if local is None else _git_why(done.stderr)
        return Imported(path, old_path, local, None, failed=f"the patch does not apply: {why}")
    after = work / path
    return Imported(path, old_path, local, after.read_bytes() if after.exists() else None)


def _scratch_env(work: Path) -> dict[str, str]:
    # The scratch folder is never taken for part of a repository above it.
    return {"GIT_CEILING_DIRECTORIES": str(work.parent)}


def _local(root: Path, rel: str) -> bytes | None:
    try:
        return (Path(root) / rel).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError:
        return None


def _patch_author(text: bytes) -> str:
    for line in text.splitlines()[:40]:
        if line.startswith(b"From: "):
            return line[6:].decode("utf-8", "replace").strip()
    return ""


# -- turning files into previews ------------------------------------------------------
def plan_import(root: Path, name: str, kind: str, files: list[Imported], author: str) -> ImportPlan:
    """One Preview per file against the local working tree; the refusals, each named."""
    from redline.workspace.safe_apply import ApplyError, validate_preview

    plan = ImportPlan(name, kind, author=author)
    for item in files:
        plan.digests[item.path] = change_digest(item)
        shown = f"{item.old_path} → {item.path}" if item.old_path else item.path
        why = ""
        preview: Preview | None = None
        if item.link:
            why = "symbolic link; redline imports regular files only, never a link"
        elif item.binary:
            why = "binary file; redline reviews text files only"
        else:
            try:
                preview, why = _preview(root, kind, item)
                if preview is not None:
                    validate_preview(root, preview)
            except DecodeError as exc:
                preview, why = None, str(exc).removeprefix(f"{item.path}: ")
            except ApplyError as exc:
                preview, why = None, str(exc)
        if preview is None or why:
            if why:
                plan.refused.append((shown, why))
            plan.left[item.path] = why
            continue
        plan.previews.append((_label(item, name), preview))
        plan.keys.append(item.path)
    return plan


def change_digest(item: Imported) -> str:
    """A digest of what the source does to ``item``'s file (equal digests: same change)."""
    import hashlib

    digest = hashlib.sha256()
    for part in (item.old_path.encode(), item.base, item.theirs, item.failed.encode()):
        digest.update(b"-" if part is None else b"+%d:" % len(part) + part)
    if item.link:
        digest.update(b"link")
    return digest.hexdigest()


def _label(item: Imported, name: str) -> str:
    if item.old_path:
        return f"Rename {item.old_path} to {item.path} (from {name})"
    if item.theirs is None:
        return f"Delete {item.path} (from {name})"
    return f"{item.path} (from {name})"


def _preview(root: Path, kind: str, item: Imported) -> tuple[Preview | None, str]:
    """The local change for ``item`` (None, why: refused; None, "": nothing to do)."""
    if item.failed:
        return None, item.failed
    source = item.old_path or item.path
    local = _local(root, source)
    if kind == "patch":
        wanted = item.theirs  # already applied to the local file
    else:
        wanted = _merged(local, item)
        if wanted is _CONFLICT:
            return None, "conflicts with the local file (both changed the same lines)"
    if item.old_path:
        if local is None:
            return None, f"{item.old_path} does not exist locally"
        if _local(root, item.path) is not None:
            return None, f"{item.path} already exists locally"
        if wanted is None or wanted == local:
            return Preview([FileRename(item.old_path, item.path, sha256_bytes(local))]), ""
        # Renamed and changed: the old file goes, the new one comes (git sees the rename).
        old_text, _ = decode_text(local, item.old_path)
        new_text, enc = decode_text(wanted, item.path)
        return Preview(
            [
                FileDelete(item.old_path, sha256_bytes(local), old_text),
                FileCreate(item.path, new_text, enc),
            ]
        ), ""
    if wanted is None:
        if local is None:
            return None, ""
        old_text, _ = decode_text(local, item.path)
        return Preview([FileDelete(item.path, sha256_bytes(local), old_text)]), ""
    if local is None:
        new_text, enc = decode_text(wanted, item.path)
        return Preview([FileCreate(item.path, new_text, enc)]), ""
    if local == wanted:
        return None, ""
    old_text, _ = decode_text(local, item.path)
    new_text, enc = decode_text(wanted, item.path)
    return Preview([FileModify(item.path, sha256_bytes(local), old_text, new_text, enc)]), ""


_CONFLICT = b"\0conflict\0"


def _merged(local: bytes | None, item: Imported) -> bytes | None:
    """The local file with the source's change merged in (_CONFLICT when they clash)."""
    if local == item.base:
        return item.theirs
    if local == item.theirs:
        return local
    if local is None or item.base is None or item.theirs is None:
        return _CONFLICT
    merged = merge_bytes(item.base, local, item.theirs)
    return _CONFLICT if merged is None else merged
