"""Authenticating redline's own state under ``.redline/``.

A repository can ship any ``.redline/`` folder it likes, so nothing found there is acted on
because it exists. Every record redline writes that it later acts on (journal entries, queue
records, resolutions) carries an HMAC-SHA256 tag made with a key that is

* per user: 32 random bytes in ``REDLINE_CONFIG_DIR/state.key``, created ``0600`` and owned
  by this user (every redline process the user starts, such as an MCP server handed to an
  agent, gets the same ``REDLINE_CONFIG_DIR``), and
* per workspace: the user key is stretched with the workspace's resolved root, so a record
  copied from another workspace does not verify here.

A record written by someone else, edited by hand, or written by a redline from before
authentication, carries no valid tag and is never executed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
from pathlib import Path

from redline.paths import user_config_dir

__all__ = ["KEY_FILE_NAME", "AuthError", "sign", "verify", "workspace_key"]

KEY_FILE_NAME = "state.key"
_KEY_BYTES = 32
_lock = threading.Lock()
_cache: dict[tuple[str, str], bytes] = {}


class AuthError(OSError):
    """The user's state key cannot be read or created safely."""


def _key_path() -> Path:
    return user_config_dir() / KEY_FILE_NAME


def _read_key(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AuthError(f"{path}: redline's state key is not a regular file")
        if info.st_uid != os.geteuid():
            raise AuthError(f"{path}: redline's state key belongs to another user")
        if info.st_mode & 0o077:
            raise AuthError(
                f"{path}: redline's state key is readable by other users "
                "(its mode must be 0600; fix it with chmod 600)"
            )
        data = os.read(fd, _KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != _KEY_BYTES:
        raise AuthError(f"{path}: redline's state key is damaged (wrong length)")
    return data


def _user_key() -> bytes:
    path = _key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if isinstance(exc, AuthError):
            raise
        raise AuthError(f"{path}: cannot read redline's state key: {exc.strerror or exc}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{KEY_FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            os.write(fd, secrets.token_bytes(_KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            # link() never replaces: if another process won the race, its key stands.
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        return _read_key(path)
    except AuthError:
        raise
    except OSError as exc:
        raise AuthError(
            f"{path}: cannot create redline's state key: {exc.strerror or exc}"
        ) from None


def workspace_key(root: Path) -> bytes:
    """The key that signs state for the workspace at ``root`` (resolved)."""
    resolved = os.fsencode(Path(root).resolve())
    cache_key = (str(_key_path()), os.fsdecode(resolved))
    with _lock:
        cached = _cache.get(cache_key)
        if cached is not None:
            return cached
        key = hmac.new(_user_key(), b"redline-workspace\0" + resolved, hashlib.sha256).digest()
        _cache[cache_key] = key
        return key


def sign(root: Path, payload: bytes, *, purpose: str) -> str:
    """A hex HMAC tag for ``payload``; ``purpose`` (e.g. ``"journal"``) separates record kinds."""
    mac = hmac.new(workspace_key(root), purpose.encode("utf-8") + b"\0", hashlib.sha256)
    mac.update(payload)
    return mac.hexdigest()


def verify(root: Path, payload: bytes, tag: str, *, purpose: str) -> bool:
    """Whether ``tag`` is this user's tag for ``payload`` in this workspace."""
    if not isinstance(tag, str) or len(tag) != 64:
        return False
    return hmac.compare_digest(sign(root, payload, purpose=purpose), tag)
