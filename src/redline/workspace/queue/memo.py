"""A signed memo file of the queue: a JSON header line, then one :mod:`marshal` payload.

The file-hash memo (:mod:`.hashes`) and the listing memo (:mod:`.listing`) are stored this
way. The header names the memo's format, the marshal version and the Python that wrote it
(:data:`~.index.CODEC`) and an HMAC tag of the payload under the user's state key; only a
payload whose tag verifies is given to :func:`marshal.loads`, so a forged, damaged or
foreign memo is ignored (and rewritten by the next save), never trusted.
"""

from __future__ import annotations

import hmac
import json
import marshal
from typing import Any

from redline.workspace.queue import storage
from redline.workspace.queue.index import CODEC


def read(
    root_fd: int, name: str, version: int, purpose: str, keys: tuple[bytes, ...], limit: int
) -> dict[Any, Any] | None:
    """The memo ``name`` as written by :func:`write` with ``version`` and ``purpose``, or
    None when it is missing, of another format or Python, too large, or not signed by one
    of ``keys``. Never raises."""
    try:
        raw = storage.read_file(root_fd, name, limit)
        header_raw, _, payload = raw.partition(b"\n")
        header = json.loads(header_raw)
        if (
            not isinstance(header, dict)
            or header.get("version") != version
            or header.get("codec") != CODEC
        ):
            return None
        tag = header.get("tag")
        if not isinstance(tag, str) or not any(
            hmac.compare_digest(storage.tag_for(key, payload, purpose), tag) for key in keys
        ):
            return None
        data = marshal.loads(payload)
    except (OSError, ValueError, UnicodeDecodeError, EOFError, TypeError):
        return None
    return data if type(data) is dict else None


def write(
    root_fd: int,
    name: str,
    version: int,
    purpose: str,
    key: bytes,
    limit: int,
    value: dict[Any, Any],
) -> bool:
    """Sign and write ``value`` (plain values marshal can store) as memo ``name``, not
    durably (a memo lost in a crash is rebuilt). False when it cannot be written or would
    be larger than ``limit``; never raises."""
    try:
        payload = marshal.dumps(value, marshal.version)
    except ValueError:
        return False
    header = {"version": version, "codec": CODEC, "tag": storage.tag_for(key, payload, purpose)}
    data = json.dumps(header).encode("ascii") + b"\n" + payload
    if len(data) > limit:
        return False
    try:
        storage.write_atomic(root_fd, name, data, durable=False)
    except OSError:
        return False
    return True
