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


def test_state_dir_refuses_symlinked_components(tmp_path: Path) -> None:
    from redline.workspace.state import StateFolderError, open_state_dir

    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".redline").symlink_to(outside)
    with pytest.raises(StateFolderError, match=r"\.redline is a symlink"):
        open_state_dir(ws)
    assert list(outside.iterdir()) == []

    ws2 = tmp_path / "ws2"
    (ws2 / ".redline").mkdir(parents=True)
    (ws2 / ".redline" / "journal").symlink_to(outside)
    with pytest.raises(StateFolderError, match=r"\.redline/journal is a symlink"):
        open_state_dir(ws2, "journal")


def test_state_dir_is_private(tmp_path: Path) -> None:
    from redline.workspace.state import open_state_dir

    (tmp_path / ".redline").mkdir(mode=0o755)
    os.chmod(tmp_path / ".redline", 0o755)
    os.close(open_state_dir(tmp_path, "queue"))
    assert stat.S_IMODE((tmp_path / ".redline").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / ".redline" / "queue").stat().st_mode) == 0o700
    assert (tmp_path / ".redline" / ".gitignore").read_text() == "*\n"
