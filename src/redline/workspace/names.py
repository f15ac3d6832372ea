"""File names are bytes on Linux: how redline shows and serialises the ones that are not UTF-8.

Python hands such names around as ``str`` with each undecodable byte ``0xXX`` turned into
the lone surrogate ``U+DCXX`` (PEP 383, "surrogateescape"); ``os.fsencode`` turns them back
into the exact bytes. Lone surrogates cannot be written as UTF-8, so wherever redline
writes text out it uses one escape, the JSON escape ``\\udcXX``:

* JSON output (``exec --json``, ``ast-edit --json``, session logs, journal entries)
  contains ``"caf\\udce9.py"``; ``json.loads`` gives back ``"caf\\udce9.py"`` as a ``str``
  and ``os.fsencode`` of that is ``b"caf\\xe9.py"``.
* Text for people shows the same ``\\udcXX`` sequence.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["json_dumps", "shown"]

_SURROGATE = re.compile("[\udc80-\udcff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(..., ensure_ascii=False)`` whose result is always valid UTF-8.

    Lone surrogates (undecodable file-name bytes) become ``\\udcXX`` escapes, which only
    ever occur inside JSON strings, so the output stays valid JSON that round-trips.
    """
    kwargs.setdefault("ensure_ascii", False)
    return _SURROGATE.sub(_escape, json.dumps(value, **kwargs))


def shown(text: str) -> str:
    """``text`` safe to print anywhere: undecodable name bytes as ``\\udcXX``."""
    return _SURROGATE.sub(_escape, text)
