"""Which workspaces may run their own plugins (``.redline/tools/``).

A project folder holds code from the repository, so it only loads once the person said
so. The answer is remembered in ``<user config dir>/trusted.json`` as a list of resolved
absolute paths. The file is small and rewritten whole (temp file + ``os.replace``), so a
crash mid-write never leaves half a list behind.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from redline.paths import user_config_dir

log = logging.getLogger(__name__)

TRUST_FILE_NAME = "trusted.json"
_FORMAT_VERSION = 1


def trust_file() -> Path:
    return user_config_dir() / TRUST_FILE_NAME


def _key(root: Path) -> str:
    return str(Path(root).expanduser().resolve())


def trusted_roots() -> list[Path]:
    """Every trusted workspace; a missing or unreadable file means none."""
    path = trust_file()
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        log.warning("%s: cannot read the trusted workspaces (%s); trusting none", path, exc)
        return []
    try:
        data = json.loads(raw)
        entries = data["trusted"] if isinstance(data, dict) else data
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ValueError("expected a list of paths under 'trusted'")
    except (ValueError, KeyError, TypeError) as exc:
        log.warning(
            "%s: corrupt trust file (%s); trusting no workspace until it is rewritten",
            path,
            exc,
        )
        return []
    return [Path(entry) for entry in entries]


def is_trusted(root: Path) -> bool:
    key = _key(root)
    return any(str(entry) == key for entry in trusted_roots())


def trust(root: Path) -> bool:
    """Remember ``root`` as trusted; False when it already was."""
    key = _key(root)
    entries = [str(entry) for entry in trusted_roots()]
    if key in entries:
        return False
    entries.append(key)
    _write(entries)
    return True


def revoke(root: Path) -> bool:
    """Forget ``root``; False when it was not trusted."""
    key = _key(root)
    entries = [str(entry) for entry in trusted_roots()]
    if key not in entries:
        return False
    _write([entry for entry in entries if entry != key])
    return True


def _write(entries: list[str]) -> None:
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"version": _FORMAT_VERSION, "trusted": sorted(entries)}, indent=2)
    fd, tmp = tempfile.mkstemp(prefix=".trusted-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
