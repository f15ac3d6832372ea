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


def test_key_file_is_private_and_lives_in_the_state_folder(tmp_path: Path) -> None:
    auth.sign(tmp_path, b"x", purpose="journal")
    key = Path(os.environ["XDG_STATE_HOME"]) / "redline" / auth.KEY_FILE_NAME
    assert auth.key_path() == key
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.stat().st_size == 32
    # Never in the config folder: REDLINE_CONFIG_DIR does not choose the key.
    assert not (Path(os.environ["REDLINE_CONFIG_DIR"]) / auth.KEY_FILE_NAME).exists()


def test_world_readable_key_is_refused(tmp_path: Path) -> None:
    key = auth.key_path()
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(b"k" * 32)
    key.chmod(0o644)
    auth._cache.clear()
    with pytest.raises(auth.AuthError, match="readable by other users"):
        auth.sign(tmp_path / "elsewhere", b"x", purpose="journal")


def test_symlinked_key_is_refused(tmp_path: Path) -> None:
    key = auth.key_path()
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


# -- where the key lives: the user's state folder, whatever REDLINE_CONFIG_DIR says ----


def _user_key(key: bytes, root: Path) -> bytes:
    """What auth derives for ``root`` from the user key ``key`` (to sign as another key)."""
    import hashlib
    import hmac

    return hmac.new(
        key, b"redline-workspace\0" + os.fsencode(root.resolve()), hashlib.sha256
    ).digest()


def _tag(key: bytes, root: Path, payload: bytes, purpose: str) -> str:
    from redline.workspace.queue.storage import tag_for

    return tag_for(_user_key(key, root), payload, purpose)


def _write_key(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(0o600)


def test_state_folder_follows_xdg_then_home_then_passwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pwd
    from types import SimpleNamespace

    from redline.paths import user_state_dir

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert user_state_dir() == tmp_path / "xdg" / "redline"
    # A relative XDG_STATE_HOME is ignored (the XDG spec), HOME is used.
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_state_dir() == tmp_path / "home" / ".local" / "state" / "redline"
    # A bare environment (no HOME at all): the passwd database names the home.
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("HOME")
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: SimpleNamespace(pw_dir=str(tmp_path / "pw")))
    assert user_state_dir() == tmp_path / "pw" / ".local" / "state" / "redline"
    # And the config folder never matters.
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert user_state_dir() == tmp_path / "pw" / ".local" / "state" / "redline"


def test_no_home_anywhere_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import pwd

    def missing(uid: int) -> object:
        raise KeyError(uid)

    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", missing)
    auth._cache.clear()
    with pytest.raises(auth.AuthError, match="cannot find your home folder: HOME is not set"):
        auth.workspace_key(Path("/tmp"))


def test_changing_the_config_folder_keeps_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = auth.sign(tmp_path, b"payload", purpose="journal")
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(tmp_path / "another-config"))
    auth._cache.clear()
    assert auth.sign(tmp_path, b"payload", purpose="journal") == tag
    assert auth.verify(tmp_path, b"payload", tag, purpose="journal")


def test_an_older_redlines_key_moves_to_the_state_folder(tmp_path: Path) -> None:
    legacy = Path(os.environ["REDLINE_CONFIG_DIR"]) / auth.KEY_FILE_NAME
    _write_key(legacy, b"L" * 32)
    auth._cache.clear()
    tag = auth.sign(tmp_path, b"payload", purpose="journal")
    assert tag == _tag(b"L" * 32, tmp_path, b"payload", "journal")
    assert auth.key_path().read_bytes() == b"L" * 32
    assert stat.S_IMODE(auth.key_path().stat().st_mode) == 0o600
    # Copied, never moved away: an older redline (or a downgrade) still finds it.
    assert legacy.read_bytes() == b"L" * 32
    assert not (auth.key_path().parent / auth.OLD_KEYS_DIR).exists()


def test_a_differing_config_folder_key_stays_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_key(auth.key_path(), b"S" * 32)
    config = tmp_path / "other-config"
    _write_key(config / auth.KEY_FILE_NAME, b"C" * 32)
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(config))
    auth._cache.clear()
    old_tag = _tag(b"C" * 32, tmp_path, b"old", "queue")
    # What the other config folder's key signed still verifies ...
    assert auth.verify(tmp_path, b"old", old_tag, purpose="queue")
    # ... but everything new is signed with the state key.
    assert auth.sign(tmp_path, b"new", purpose="queue") == _tag(
        b"S" * 32, tmp_path, b"new", "queue"
    )
    kept = list((auth.key_path().parent / auth.OLD_KEYS_DIR).iterdir())
    assert [k.read_bytes() for k in kept] == [b"C" * 32]
    assert stat.S_IMODE(kept[0].stat().st_mode) == 0o600
    # Kept for good: with the config folder gone (or switched), it still verifies.
    (config / auth.KEY_FILE_NAME).unlink()
    monkeypatch.setenv("REDLINE_CONFIG_DIR", str(tmp_path / "third"))
    auth._cache.clear()
    assert auth.verify(tmp_path, b"old", old_tag, purpose="queue")
    assert not auth.verify(tmp_path / "x", b"old", old_tag, purpose="queue")


def test_an_unusable_old_key_is_never_replaced_by_a_new_one(tmp_path: Path) -> None:
    legacy = Path(os.environ["REDLINE_CONFIG_DIR"]) / auth.KEY_FILE_NAME
    _write_key(legacy, b"L" * 32)
    legacy.chmod(0o644)
    auth._cache.clear()
    with pytest.raises(auth.AuthError, match=r"readable by other users.*fix it"):
        auth.sign(tmp_path, b"x", purpose="journal")
    assert not auth.key_path().exists()
    legacy.chmod(0o600)
    auth._cache.clear()
    auth.sign(tmp_path, b"x", purpose="journal")
    assert auth.key_path().read_bytes() == b"L" * 32


def test_installing_a_key_never_replaces_one(tmp_path: Path) -> None:
    path = tmp_path / "state" / auth.KEY_FILE_NAME
    assert auth._install(path, b"1" * 32, "create") == b"1" * 32
    assert auth._install(path, b"2" * 32, "create") == b"1" * 32
    assert [p.name for p in path.parent.iterdir()] == [auth.KEY_FILE_NAME]
