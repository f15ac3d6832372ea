"""Low-level, descriptor-relative file steps of the queue: signed records and blobs.

Everything happens relative to descriptors from :func:`redline.workspace.state.open_state_dir`
and every file is opened with ``O_NOFOLLOW``, so a symlink planted under ``.redline/queue/``
can neither redirect a write nor feed a read. A record is written to a temporary name,
fsynced, renamed over its final name and the folder fsynced: a reader sees the old record
or the new one, never a torn one.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

from redline.workspace.preview import sha256_bytes
from redline.workspace.queue.records import (
    FORMAT_VERSION,
    QueueRecordError,
    QueueUnavailable,
    canonical,
)

FILE_MODE = 0o600
# A record holds no file contents (those are blobs), so anything this big is not ours.
MAX_RECORD_BYTES = 8 * 1024 * 1024
MAX_BLOB_BYTES = 128 * 1024 * 1024
# O_NONBLOCK: a FIFO planted under the queue opens at once (and reads empty) instead of
# blocking the reader forever; regular files ignore it.
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def error_text(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{text} ({name})" if name else text


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise


def write_atomic(
    dir_fd: int, name: str, data: bytes, *, sync_dir: bool = True, durable: bool = True
) -> None:
    """Write ``name`` below ``dir_fd`` atomically and durably (raises OSError).

    ``durable=False`` (a cache) skips both fsyncs: still atomic, but a power loss may leave
    the old file or an empty one.
    """
    # A random part from os.urandom, as secrets.token_hex takes it (``secrets`` imports
    # ``random`` and ``base64``: not worth their import on the hook's queueing path).
    tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, _CREATE, FILE_MODE, dir_fd=dir_fd)
    try:
        _write_all(fd, data)
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    os.close(fd)
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    if sync_dir and durable:
        fsync_dir(dir_fd)


def read_file(dir_fd: int, name: str, limit: int) -> bytes:
    """Read a regular file below ``dir_fd`` without following a symlink (raises OSError)."""
    return read_file_stat(dir_fd, name, limit)[0]


def read_file_stat(dir_fd: int, name: str, limit: int) -> tuple[bytes, os.stat_result]:
    """:func:`read_file`, and the ``fstat`` of the descriptor it read through."""
    fd = os.open(name, _READ, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise OSError(errno.EFBIG, f"larger than {limit} bytes")
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks), st


def exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def unlink(dir_fd: int, name: str) -> bool:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def tag_for(key: bytes, payload: bytes, purpose: str) -> str:
    """:func:`redline.workspace.auth.sign` with the workspace key already derived.

    Listing 1,000 records would otherwise derive the key 1,000 times; a test checks that
    this stays identical to ``auth.sign``.
    """
    mac = hmac.new(key, purpose.encode("utf-8") + b"\0", hashlib.sha256)
    mac.update(payload)
    return mac.hexdigest()


class Signed:
    """Signed JSON documents of one kind (``purpose``) in one folder."""

    def __init__(
        self,
        root: Path,
        dir_fd: int,
        purpose: str,
        what: str,
        folder: str,
        keys: tuple[bytes, ...],
    ) -> None:
        self.root = root
        self.fd = dir_fd
        self.purpose = purpose
        self.what = what
        self.folder = folder
        self.key = keys[0]  # signs
        self.keys = keys  # verify (the user's older keys too; see redline.workspace.auth)

    def verifies(self, payload: bytes, tag: str) -> bool:
        return len(tag) == 64 and any(
            hmac.compare_digest(tag_for(key, payload, self.purpose), tag) for key in self.keys
        )

    def encode(self, record: dict[str, Any]) -> bytes:
        """A header line ``{"version": V, "tag": HMAC}``, then the record's canonical JSON.

        The tag covers exactly the bytes after the first newline, so a reader verifies
        before it parses and never re-encodes.
        """
        payload = canonical(record)
        tag = tag_for(self.key, payload, self.purpose)
        # The header repeats the record's own version: a whole owner request stays version
        # 1, which an older owner reads (records.WHOLE_REQUEST_VERSION).
        version = record.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            version = FORMAT_VERSION
        header = json.dumps({"version": version, "tag": tag})
        return header.encode("ascii") + b"\n" + payload + b"\n"

    def write(
        self,
        name: str,
        record: dict[str, Any],
        shown: str,
        *,
        sync_dir: bool = True,
        durable: bool = True,
    ) -> None:
        data = self.encode(record)
        try:
            write_atomic(self.fd, name, data, sync_dir=sync_dir, durable=durable)
        except OSError as exc:
            raise QueueUnavailable(
                f"Cannot write {self.what} {shown} in .redline/queue/{self.folder}: "
                f"{error_text(exc)}. Nothing was queued or changed for it."
            ) from None

    def read(self, name: str, shown: str) -> dict[str, Any] | None:
        """The verified record, None if there is no such file; QueueRecordError if unusable."""
        return self.read_stat(name, shown)[0]

    def read_stat(
        self, name: str, shown: str
    ) -> tuple[dict[str, Any] | None, os.stat_result | None]:
        """:meth:`read`, and the ``fstat`` of the file it verified (None with no file)."""
        where = f".redline/queue/{self.folder}/{name}"
        try:
            raw, st = read_file_stat(self.fd, name, MAX_RECORD_BYTES)
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            raise QueueRecordError(
                shown, f"{self.what} {shown} ({where}) cannot be read: {error_text(exc)}"
            ) from None
        header_raw, newline, payload = raw.partition(b"\n")
        try:
            header = json.loads(header_raw) if newline else None
        except (ValueError, UnicodeDecodeError):
            header = None
        if not isinstance(header, dict) or not isinstance(header.get("tag"), str):
            cause = "empty file" if not raw.strip() else "no valid header line"
            raise QueueRecordError(
                shown,
                f"{self.what} {shown} ({where}) is damaged or truncated: {cause}. It is left "
                "out; the rest of the queue is unaffected.",
            )
        version = header.get("version")
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise QueueRecordError(
                shown,
                f"{self.what} {shown} ({where}) was written by a newer redline (format version "
                f"{version}; this redline reads up to {FORMAT_VERSION}). Upgrade redline to "
                "use it; it is left untouched.",
            )
        payload = payload.rstrip(b"\n")
        try:
            record = json.loads(payload)
        except ValueError as exc:
            cause = "nothing after its header" if not payload else f"not valid JSON ({exc})"
            raise QueueRecordError(
                shown,
                f"{self.what} {shown} ({where}) is damaged or truncated: {cause}. It is left "
                "out; the rest of the queue is unaffected.",
            ) from None
        tag = header["tag"]
        if not self.verifies(payload, tag):
            raise QueueRecordError(
                shown,
                f"{self.what} {shown} ({where}) does not carry this user's signature for this "
                "workspace (edited by hand, copied from elsewhere, or written by someone "
                "else). It is never acted on; discard it with `redline pending discard "
                f"{shown}` or delete the file.",
            )
        if not isinstance(record, dict):
            raise QueueRecordError(
                shown, f"{self.what} {shown} ({where}) is damaged: it holds no record object."
            )
        return record, st


class Blobs:
    """The content store: each text once, named by the sha256 of its UTF-8 bytes."""

    def __init__(self, dir_fd: int) -> None:
        self.fd = dir_fd

    def put(self, text: str) -> tuple[str, bool]:
        """Store ``text``; return (sha256, whether a new file was written)."""
        data = text.encode("utf-8", "surrogatepass")
        digest = sha256_bytes(data)
        if exists(self.fd, digest):
            # Touched so the collector's grace period starts again for this reuse.
            with contextlib.suppress(OSError):
                os.utime(digest, dir_fd=self.fd, follow_symlinks=False)
            return digest, False
        write_atomic(self.fd, digest, data, sync_dir=False)
        return digest, True

    def get(self, digest: str, shown: str) -> str:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise QueueRecordError(shown, f"queue record {shown} names a bad content hash")
        try:
            data = read_file(self.fd, digest, MAX_BLOB_BYTES)
        except FileNotFoundError:
            raise QueueRecordError(
                shown,
                f"queue record {shown}: its stored contents {digest[:12]}… are missing from "
                ".redline/queue/contents (deleted by hand?). Its diff cannot be shown or "
                f"applied; discard it with `redline pending discard {shown}`.",
            ) from None
        except OSError as exc:
            raise QueueRecordError(
                shown,
                f"queue record {shown}: its stored contents cannot be read: {error_text(exc)}",
            ) from None
        if sha256_bytes(data) != digest:
            raise QueueRecordError(
                shown,
                f"queue record {shown}: its stored contents {digest[:12]}… are damaged (hash "
                f"mismatch). Discard it with `redline pending discard {shown}`.",
            )
        return data.decode("utf-8", "surrogatepass")

    def sync(self) -> None:
        fsync_dir(self.fd)


def canonical_check(data: Any) -> None:
    """Raise TypeError/ValueError if ``data`` cannot be stored in a record."""
    canonical(data)
