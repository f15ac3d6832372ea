"""The per-user, per-workspace HMAC that authenticates redline's state."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from redline.workspace import auth


def test_sign_verify_roundtrip_and_separation(tmp_path: Path) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    tag = auth.sign(a, b"payload", purpose="journal")
    assert auth.verify(a, b"payload", tag, purpose="journal")
    assert not auth.verify(a, b"payload!", tag, purpose="journal")
    assert not auth.verify(a, b"payload", tag, purpose="queue")
    assert not auth.verify(b, b"payload", tag, purpose="journal")
    assert not auth.verify(a, b"payload", "0" * 64, purpose="journal")
    assert not auth.verify(a, b"payload", "short", purpose="journal")


def test_key_file_is_private(tmp_path: Path) -> None:
    auth.sign(tmp_path, b"x", purpose="journal")
    key = Path(os.environ["REDLINE_CONFIG_DIR"]) / auth.KEY_FILE_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.stat().st_size == 32


def test_world_readable_key_is_refused(tmp_path: Path) -> None:
    key = Path(os.environ["REDLINE_CONFIG_DIR"]) / auth.KEY_FILE_NAME
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(b"k" * 32)
    key.chmod(0o644)
    auth._cache.clear()
    with pytest.raises(auth.AuthError, match="readable by other users"):
        auth.sign(tmp_path / "elsewhere", b"x", purpose="journal")


def test_symlinked_key_is_refused(tmp_path: Path) -> None:
    key = Path(os.environ["REDLINE_CONFIG_DIR"]) / auth.KEY_FILE_NAME
    key.parent.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "target"
    target.write_bytes(b"k" * 32)
    target.chmod(0o600)
    key.symlink_to(target)
    auth._cache.clear()
    with pytest.raises(auth.AuthError):
        auth.sign(tmp_path / "ws", b"x", purpose="journal")
