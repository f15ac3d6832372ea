"""Authenticating redline's own state under ``.redline/``.

A repository can ship any ``.redline/`` folder it likes, so nothing found there is acted on
because it exists. Every record redline writes that it later acts on (journal entries, queue
records, resolutions) carries an HMAC-SHA256 tag made with a key that is

* per user: 32 random bytes in the user's state folder, ``$XDG_STATE_HOME/redline/state.key``
  (default ``~/.local/state/redline/state.key``; the home folder comes from ``HOME`` or,
  when a client starts redline with a bare environment, from the passwd database), created
  ``0600`` and owned by this user. It never depends on ``REDLINE_CONFIG_DIR`` or on the
  workspace, so every redline process of the user (an MCP server an agent starts, a run
  with another config folder) signs with the same key; and
* per workspace: the user key is stretched with the workspace's resolved root, so a record
  copied from another workspace does not verify here.

Older redlines kept the key in the config folder (``REDLINE_CONFIG_DIR/state.key``). The
first key found there becomes the state key (copied atomically; the old file stays). A
config folder whose key differs from the state key (the user ran with two config folders)
is kept as well, in ``old-keys/``: it still *verifies* what it signed, but nothing new is
signed with it.

A record written by someone else, edited by hand, or written by a redline from before
authentication, carries no valid tag and is never executed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from redline.paths import UserDirError, user_config_dir, user_state_dir

__all__ = [
    "KEY_FILE_NAME",
    "OLD_KEYS_DIR",
    "AuthError",
    "key_path",
    "sign",
    "verify",
    "workspace_key",
    "workspace_keys",
]

KEY_FILE_NAME = "state.key"
OLD_KEYS_DIR = "old-keys"
_KEY_BYTES = 32
_lock = threading.Lock()
_cache: dict[tuple[str, ...], tuple[bytes, ...]] = {}


class AuthError(OSError):
    """The user's state key cannot be read or created safely."""


@dataclass(frozen=True)
class _UserKeys:
    signing: bytes
    others: tuple[bytes, ...]  # keys of old config folders: they only verify


def key_path() -> Path:
    """Where this user's state key lives (``$XDG_STATE_HOME/redline/state.key``)."""
    try:
        return user_state_dir() / KEY_FILE_NAME
    except UserDirError as exc:
        raise AuthError(f"redline's state key cannot be found: {exc}") from None


def _legacy_path() -> Path | None:
    """Where an older redline kept the key (the config folder), if it can be named."""
    try:
        return user_config_dir() / KEY_FILE_NAME
    except (RuntimeError, KeyError, OSError):
        return None


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


def _read_or_error(path: Path) -> bytes | None:
    """The key at ``path``; None if there is no file; AuthError if it cannot be used."""
    try:
        return _read_key(path)
    except FileNotFoundError:
        return None
    except AuthError:
        raise
    except OSError as exc:
        raise AuthError(f"{path}: cannot read redline's state key: {exc.strerror or exc}") from None


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _install(path: Path, data: bytes, what: str) -> bytes:
    """Put ``data`` at ``path`` unless a key is there already; return the key that stands.

    Written to a temporary file (``0600``, fsynced) and hard-linked into place: ``link()``
    never replaces, so when two processes race, the first key stands and neither is torn.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        _fsync_dir(path.parent)
        return _read_key(path)
    except AuthError:
        raise
    except OSError as exc:
        raise AuthError(f"{path}: cannot {what}: {exc.strerror or exc}") from None


def _old_key_name(key: bytes) -> str:
    return hashlib.sha256(b"redline-old-key\0" + key).hexdigest()[:16] + ".key"


def _keep_old(state: Path, key: bytes) -> None:
    """Keep an old config folder's key (idempotent: named by a hash of the key)."""
    path = state / OLD_KEYS_DIR / _old_key_name(key)
    if not os.path.lexists(path):
        _install(path, key, "keep the key of an older config folder")


def _old_keys(state: Path, signing: bytes) -> tuple[bytes, ...]:
    folder = state / OLD_KEYS_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    found: list[bytes] = []
    for name in names:
        if not name.endswith(".key") or name.startswith("."):
            continue
        try:
            key = _read_key(folder / name)
        except OSError:
            continue  # a damaged or unsafe old key only stops verifying what it signed
        if key != signing and key not in found:
            found.append(key)
    return tuple(found)


def _load_keys(path: Path, legacy: Path | None) -> _UserKeys:
    legacy_key: bytes | None = None
    legacy_error: AuthError | None = None
    if legacy is not None and legacy != path:
        try:
            legacy_key = _read_or_error(legacy)
        except AuthError as exc:
            legacy_error = exc
    signing = _read_or_error(path)
    if signing is None:
        if legacy_error is not None:
            # Starting a new key now would leave everything the old one signed unusable.
            raise AuthError(
                f"{legacy_error}. redline moves this key to {path}; fix it (or remove it) "
                "and try again"
            )
        what = "copy redline's state key there" if legacy_key else "create redline's state key"
        import secrets  # a new key only: not on every call's path

        signing = _install(path, legacy_key or secrets.token_bytes(_KEY_BYTES), what)
    if legacy_key is not None and legacy_key != signing:
        _keep_old(path.parent, legacy_key)
    return _UserKeys(signing, _old_keys(path.parent, signing))


def workspace_keys(root: Path) -> tuple[bytes, ...]:
    """Every key that verifies state for the workspace at ``root``; the first one signs."""
    resolved = os.fsencode(Path(root).resolve())
    path = key_path()
    legacy = _legacy_path()
    cache_key = (str(path), str(legacy), os.fsdecode(resolved))
    with _lock:
        cached = _cache.get(cache_key)
        if cached is not None:
            return cached
        user = _load_keys(path, legacy)
        keys = tuple(
            hmac.new(k, b"redline-workspace\0" + resolved, hashlib.sha256).digest()
            for k in (user.signing, *user.others)
        )
        _cache[cache_key] = keys
        return keys


def workspace_key(root: Path) -> bytes:
    """The key that signs state for the workspace at ``root`` (resolved)."""
    return workspace_keys(root)[0]


def _tag(key: bytes, payload: bytes, purpose: str) -> str:
    mac = hmac.new(key, purpose.encode("utf-8") + b"\0", hashlib.sha256)
    mac.update(payload)
    return mac.hexdigest()


def sign(root: Path, payload: bytes, *, purpose: str) -> str:
    """A hex HMAC tag for ``payload``; ``purpose`` (e.g. ``"journal"``) separates record kinds."""
    return _tag(workspace_key(root), payload, purpose)


def verify(root: Path, payload: bytes, tag: str, *, purpose: str) -> bool:
    """Whether ``tag`` is this user's tag for ``payload`` in this workspace (any of its keys)."""
    if not isinstance(tag, str) or len(tag) != 64:
        return False
    return any(
        hmac.compare_digest(_tag(key, payload, purpose), tag) for key in workspace_keys(root)
    )
