"""The used-id set: every ``pa-N`` of a workspace that has left the queue, kept for good.

The resolved log is bounded (1,000 entries, 30 days) and the journal keeps 50 applies, so
neither can prove forever that an id was used; a signed record put back into
``.redline/queue/actions/`` after both were pruned would verify and run again. This set is
that proof. It is never pruned and it does not live in the workspace (whoever can write the
workspace could delete it there): it lives in the user's state folder, beside the state key,
as ``used-ids/<sha256 of the workspace's resolved root>`` — lines ``N`` or ``LOW-HIGH``,
sorted and merged, so a queue whose actions are resolved roughly in order stays a few lines
long however many it has seen.

Between processes a ``flock`` on ``<file>.lock`` serialises changes; the set is replaced
atomically (temporary file, fsync, rename, folder fsync), so readers take no lock. A set that
cannot be read is an error (fail closed), never an empty set.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import fcntl
import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from redline.paths import UserDirError, user_state_dir

USED_DIR = "used-ids"
MAX_BYTES = 64 * 1024 * 1024


class UsedIdsError(OSError):
    """The used-id set cannot be read or written; the message names the file and the cause."""


class Ranges:
    """A set of positive integers as sorted, disjoint, non-adjacent ``[low, high]`` ranges."""

    def __init__(self, ranges: Iterable[tuple[int, int]] = ()) -> None:
        self.lows: list[int] = []
        self.highs: list[int] = []
        for low, high in ranges:
            self.add_range(low, high)

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int):
            return False
        index = bisect.bisect_right(self.lows, number) - 1
        return index >= 0 and self.highs[index] >= number

    def __len__(self) -> int:
        return sum(h - lo + 1 for lo, h in zip(self.lows, self.highs, strict=True))

    def meets(self, numbers: Sequence[int]) -> bool:
        """Whether any of ``numbers`` (sorted ascending) is in the set: one search per
        range, not one per number (a listing of 10,000 actions, issue 44)."""
        end = len(numbers)
        for low, high in zip(self.lows, self.highs, strict=True):
            at = bisect.bisect_left(numbers, low)
            if at < end and numbers[at] <= high:
                return True
        return False

    def highest(self) -> int:
        return self.highs[-1] if self.highs else 0

    def add_range(self, low: int, high: int) -> None:
        # Every range that overlaps or touches [low, high] merges into one.
        start = bisect.bisect_left(self.highs, low - 1)
        end = bisect.bisect_right(self.lows, high + 1)
        if start < end:
            low = min(low, self.lows[start])
            high = max(high, self.highs[end - 1])
        self.lows[start:end] = [low]
        self.highs[start:end] = [high]

    def encode(self) -> bytes:
        lines = (
            str(lo) if lo == h else f"{lo}-{h}" for lo, h in zip(self.lows, self.highs, strict=True)
        )
        return "".join(f"{line}\n" for line in lines).encode("ascii")

    @classmethod
    def decode(cls, data: bytes, where: Path) -> Ranges:
        ranges = cls()
        for number, raw in enumerate(data.split(b"\n"), 1):
            line = raw.strip()
            if not line:
                continue
            low_raw, dash, high_raw = line.partition(b"-")
            if not low_raw.isdigit() or (dash and not high_raw.isdigit()):
                raise UsedIdsError(
                    f"{where}: redline's used-id set is damaged (line {number} is not N or "
                    "LOW-HIGH). Nothing was applied or discarded; restore the file or remove it "
                    "(then ids used before can be replayed)."
                )
            low = int(low_raw)
            high = int(high_raw) if dash else low
            if low < 1 or high < low:
                raise UsedIdsError(f"{where}: redline's used-id set is damaged (line {number}).")
            ranges.add_range(low, high)
        return ranges


def used_ids_path(root: Path) -> Path:
    """Where the used-id set of the workspace at ``root`` is kept."""
    digest = hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()[:32]
    try:
        return user_state_dir() / USED_DIR / digest
    except UserDirError as exc:
        raise UsedIdsError(f"redline's used-id set cannot be found: {exc}") from None


def _text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{text} ({name})" if name else text


class UsedIds:
    """The used-id set of one workspace (see the module doc)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = used_ids_path(self.root)
        return self._path

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def read(self) -> Ranges:
        """The set as it is now (empty if it was never written)."""
        path = self.path
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return Ranges()
        except OSError as exc:
            raise UsedIdsError(f"{path}: cannot read redline's used-id set: {_text(exc)}") from None
        try:
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(fd, 1 << 20):
                total += len(chunk)
                if total > MAX_BYTES:
                    raise UsedIdsError(f"{path}: redline's used-id set is damaged (too large)")
                chunks.append(chunk)
        except UsedIdsError:
            raise
        except OSError as exc:
            raise UsedIdsError(f"{path}: cannot read redline's used-id set: {_text(exc)}") from None
        finally:
            os.close(fd)
        return Ranges.decode(b"".join(chunks), path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        path = self.path
        lock = path.with_name(path.name + ".lock")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise UsedIdsError(f"{lock}: cannot lock redline's used-id set: {_text(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write(self, ranges: Ranges) -> None:
        path = self.path
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            try:
                view = memoryview(ranges.encode())
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
            dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise UsedIdsError(
                f"{path}: cannot write redline's used-id set: {_text(exc)}"
            ) from None

    def add(self, numbers: Iterable[int], *, seed: Iterable[int] = ()) -> Ranges:
        """Mark ``numbers`` used (durable when this returns); ``seed`` only when the set is new.

        ``seed`` (the ids an older redline's resolved log still names) is read lazily, so it
        costs nothing once the set exists.
        """
        with self._locked():
            fresh = not self.exists()
            ranges = self.read()
            before = (list(ranges.lows), list(ranges.highs))
            for number in [*numbers, *(seed if fresh else ())]:
                if number > 0:
                    ranges.add_range(number, number)
            if fresh or (ranges.lows, ranges.highs) != before:
                self._write(ranges)
            return ranges
