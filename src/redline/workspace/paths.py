"""Confinement and the workspace's file listing.

Every tool reads and writes only inside the workspace root, and never inside `.git/`,
`.redline/` or a virtual environment. Listings also leave out git-ignored files.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

# Folders no tool ever looks into or writes to.
PROTECTED_DIRS = frozenset({".git", ".redline"})
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".redline",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "node_modules",
        ".hg",
        ".svn",
    }
)


# What a protected folder's name may look like after folding (see ``folded_name``): the
# names themselves and their 8.3 short names on Windows file systems.
_PROTECTED_FOLDED = {
    ".git": ".git",
    "git~1": ".git",
    ".redline": ".redline",
    "redlin~1": ".redline",
}


class ConfinementError(ValueError):
    """A path leads outside the workspace or into a folder redline never touches."""


def folded_name(name: str) -> str:
    """``name`` as the most forgiving file system compares it.

    Case-insensitive file systems (macOS and Windows by default, Linux folders with the
    casefold attribute) see ``.GIT`` as ``.git``; macOS also normalizes Unicode and ignores
    zero-width characters, and Windows drops trailing dots and spaces. So: NFKC, case
    folded, NFKC again (folding may undo it), format characters (``Cf``) removed, trailing
    dots and spaces stripped.
    """
    if name.isascii():
        # The same result, faster (a listing checks 10,000 names): ASCII is unchanged by
        # NFKC, its case folding is lower(), and it holds no format character.
        text = name.lower()
    else:
        text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
        text = "".join(char for char in text if unicodedata.category(char) != "Cf")
    stripped = text.rstrip(". ")
    return stripped if stripped else text


def protected_name(name: str) -> str | None:
    """The protected folder (``.git`` or ``.redline``) ``name`` may stand for on some file
    system, whatever its case or spelling; None for any other name."""
    if name in PROTECTED_DIRS:
        return name
    return _PROTECTED_FOLDED.get(folded_name(name))


StatFn = Callable[[str], os.stat_result]


def protected_by_identity(
    root: Path, rel_parts: tuple[str, ...], stat_fn: StatFn = os.stat
) -> str | None:
    """The protected folder that one of the existing folders on ``rel_parts`` *is*.

    Names lie on a case-insensitive file system (``.GIT`` opens ``.git``), so the folders
    the path passes through are compared with ``root/.git`` and ``root/.redline`` by
    identity (device and inode), as the file system itself resolves them. ``stat_fn`` is
    how a path is looked up (tests pass one that behaves case-insensitively).
    """
    identities: dict[tuple[int, int], str] = {}
    for name in sorted(PROTECTED_DIRS):
        try:
            st = stat_fn(str(root / name))
        except (OSError, ValueError):
            continue
        if stat.S_ISDIR(st.st_mode):
            identities[(st.st_dev, st.st_ino)] = name
    if not identities:
        return None
    folder = root
    for part in rel_parts:
        folder = folder / part
        try:
            st = stat_fn(str(folder))
        except (OSError, ValueError):
            return None  # not there (yet): nothing further down exists either
        found = identities.get((st.st_dev, st.st_ino))
        if found is not None:
            return found
    return None


def is_ignored_dir_name(name: str) -> bool:
    return name in SKIPPED_DIRS or protected_name(name) is not None


def _is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def normalize_relative(rel: str | Path) -> str:
    """A POSIX relative path with ``.`` parts folded; ``..`` that escapes is refused."""
    text = str(rel).replace("\\", "/")
    if not text or text == ".":
        return "."
    normalized = posixpath.normpath(text)
    if normalized == ".." or normalized.startswith("../"):
        raise ConfinementError(f"{rel}: path leads outside the workspace")
    return normalized


def _nul_shown(rel: str | Path) -> str:
    """``rel`` as a message shows it: a NUL byte (never valid in a file name) as ``\\0``."""
    return str(rel).replace("\x00", "\\0")


def resolve_inside(root: Path, rel: str | Path) -> Path:
    """The absolute path of ``rel`` under ``root``, refusing anything outside or protected."""
    if "\x00" in str(rel):
        raise ConfinementError(
            f"{_nul_shown(rel)}: invalid path (contains a NUL byte, which no file name may hold)"
        )
    root = root.resolve()
    candidate = Path(rel)
    if candidate.is_absolute():
        try:
            # Lexically under the root: kept as asked (a symlinked folder on the way is
            # resolved and checked below, and shown as ``via``); otherwise resolved.
            candidate = Path(os.path.normpath(candidate)).relative_to(root)
        except ValueError:
            candidate = _resolved_absolute(root, rel, candidate)
    normalized = normalize_relative(candidate)
    parts = PurePosixPath(normalized).parts
    for index, part in enumerate(parts):
        protected = protected_name(part)
        if protected is not None:
            raise ConfinementError(_protected_message(rel, part, protected))
        if part in SKIPPED_DIRS or _is_venv(root.joinpath(*parts[: index + 1])):
            raise ConfinementError(f"{rel}: redline never touches files inside {part}/")
    lexical = root / normalized if normalized != "." else root
    try:
        real = lexical.resolve(strict=False)
    except RuntimeError:
        raise ConfinementError(f"{rel}: symlink loop") from None
    except OSError as exc:
        raise ConfinementError(f"{rel}: cannot resolve path: {exc.strerror or exc}") from None
    if not real.is_relative_to(root):
        raise ConfinementError(f"{rel}: symlink leads outside the workspace (to {real})")
    # A symlinked folder (``gitlink -> .git``) must not open a way into protected folders,
    # nor may another spelling of one (``.GIT`` on a case-insensitive file system).
    real_parts = real.relative_to(root).parts
    for part in real_parts:
        protected = protected_name(part)
        if protected is not None:
            raise ConfinementError(_protected_message(rel, part, protected))
    protected = protected_by_identity(root, real_parts)
    if protected is not None:
        raise ConfinementError(f"{rel}: redline never touches files inside {protected}/")
    return lexical


def _resolved_absolute(root: Path, rel: str | Path, candidate: Path) -> Path:
    try:
        return candidate.resolve().relative_to(root)
    except ValueError:
        raise ConfinementError(f"{rel}: absolute path outside the workspace {root}") from None
    except RuntimeError:
        raise ConfinementError(f"{rel}: symlink loop") from None


def _protected_message(rel: str | Path, part: str, protected: str) -> str:
    if part == protected:
        return f"{rel}: redline never touches files inside {part}/"
    return (
        f"{rel}: redline never touches files inside {protected}/ ({part}/ is the same "
        "folder on a case-insensitive file system)"
    )


def relative_to_root(root: Path, path: Path) -> str:
    """``path`` as a POSIX path relative to ``root`` (``path`` must lie inside it)."""
    root = root.resolve()
    absolute = path if path.is_absolute() else root / path
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.resolve().relative_to(root).as_posix()


def _git_listing(root: Path, under: str) -> list[str] | None:
    """Tracked and untracked, not ignored files under ``under`` per git, or None outside git."""
    import subprocess  # here: most users of this module never list files (a hook call)

    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z", "--", under],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return [item for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if item]


def gitignore_patterns(root: Path) -> list[str]:
    """The root ``.gitignore``'s patterns: the fallback when the workspace is not in git."""
    try:
        text = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "!"))
    ]


def matches_gitignore(rel: str, is_dir: bool, patterns: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        dir_only = pattern.endswith("/")
        core = pattern.rstrip("/")
        if dir_only and not is_dir:
            continue
        if "/" in core.lstrip("/"):
            if fnmatch.fnmatchcase(rel, core.lstrip("/")):
                return True
        elif fnmatch.fnmatchcase(name, core):
            return True
    return False


def _listable(root: Path, rel: str) -> bool:
    """A regular file (FIFOs and sockets would block a reader) that stays inside the root."""
    path = root / rel
    try:
        if not path.is_file():
            return False
        if path.is_symlink():
            real = path.resolve(strict=True)
            return real.is_relative_to(root) and not any(
                protected_name(part) for part in real.relative_to(root).parts
            )
    except (OSError, RuntimeError):
        return False
    return True


def _walk(root: Path, start: Path) -> Iterator[str]:
    patterns = gitignore_patterns(root)
    for dirpath, dirnames, filenames in os.walk(start):
        base = Path(dirpath)
        rel_base = base.relative_to(root).as_posix()
        kept = []
        for name in sorted(dirnames):
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            if is_ignored_dir_name(name) or _is_venv(base / name):
                continue
            if matches_gitignore(rel, True, patterns):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            if not matches_gitignore(rel, False, patterns) and _listable(root, rel):
                yield rel


def _skipped(rel: str, root: Path) -> bool:
    parts = rel.split("/")[:-1]
    for index, part in enumerate(parts):
        if is_ignored_dir_name(part) or _is_venv(root.joinpath(*parts[: index + 1])):
            return True
    return False


def iter_workspace_files(root: Path, under: Path | None = None) -> Iterator[str]:
    """Sorted POSIX paths (relative to ``root``) of the files a tool may look at."""
    root = root.resolve()
    start = root if under is None else (under if under.is_absolute() else root / under)
    if start.is_file():
        rel = relative_to_root(root, start)
        if not _skipped(rel, root) and _listable(root, rel):
            yield rel
        return
    if not start.is_dir():
        return
    under_rel = relative_to_root(root, start)
    listed = _git_listing(root, under_rel)
    if listed is None:
        yield from sorted(_walk(root, start))
        return
    for rel in sorted(listed):
        if not _skipped(rel, root) and _listable(root, rel):
            yield rel
