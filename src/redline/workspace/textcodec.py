"""File bytes to text and back, and their hash: what reading a user's file needs.

:mod:`redline.workspace.preview` re-exports these; a module that only reads files (the
ast_edit search) imports them from here and so does not load the preview model.
"""

from __future__ import annotations

import hashlib


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DecodeError(ValueError):
    """The bytes of a file are not text redline can edit."""


def decode_text(data: bytes, path: str) -> tuple[str, str]:
    """Decode file bytes into ``(text, encoding)``, refusing binary and non-UTF-8 data."""
    if b"\x00" in data[:8192]:
        raise DecodeError(
            f"{path}: binary file (contains NUL bytes); redline edits text files only"
        )
    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DecodeError(
            f"{path}: not valid UTF-8 (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
            "redline edits UTF-8 text files only"
        ) from None
    return text, encoding


def encode_text(text: str, encoding: str) -> bytes:
    return text.encode(encoding)
