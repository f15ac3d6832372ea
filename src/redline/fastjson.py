"""``json.loads`` and ``json.dumps`` for a hook call's path, without importing ``json``.

Importing :mod:`json` imports :mod:`re` and :mod:`enum` (its decoder's patterns): about
6 ms of CPU on a 2-core machine whose bare interpreter starts in 9 ms, paid by every
``redline hook`` process before it can read its payload -- most of a pass-through call's
cost above the bare start (issue 49). The C accelerator those functions use, ``_json``,
imports nothing, so the same scanner and encoder are driven here directly, with the
defaults of ``json.loads`` and ``json.dumps``: the results are the same objects and the
same text. Anything the fast path does not take as it is -- invalid JSON, a value it
cannot encode, an interpreter without ``_json`` -- goes to :mod:`json` itself, so errors
(types and messages) are json's own.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself imports ``re``
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # another interpreter: json's own functions, always
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"  # JSON's whitespace (json.decoder's WHITESPACE)
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoding:
    """What the C scanner reads of a ``json.JSONDecoder`` with the default options."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


def _fail(value: object) -> object:
    raise TypeError("not JSON serializable")  # caught below: json says it its own way


def _encoder() -> Any:
    """``json.dumps``'s C encoder with its default options; a fresh ``markers`` dict each
    time, so a circular value is refused, never looped over."""
    return _json.make_encoder(
        {}, _fail, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )


_scan: Any = None
_can_encode = False
if _json is not None:
    try:
        _scan = _json.make_scanner(_Decoding())  # type: ignore[arg-type]  # (stub: a JSONDecoder)
        _encoder()
        _can_encode = True
    except (AttributeError, TypeError):  # a C accelerator of another shape: json's own
        _scan, _can_encode = None, False


def loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str``."""
    if _scan is not None:
        body = text.strip(_WHITESPACE)
        try:
            value, end = _scan(body, 0)
        except Exception:  # json says what is wrong, below
            # (Its error path needs ``json.decoder`` loaded already: without it the
            # scanner raises SystemError, not JSONDecodeError.)
            pass
        else:
            if end == len(body):
                return value
    import json  # the slow path: json's own result, or its own error

    return json.loads(text)


def dumps(value: object) -> str:
    """``json.dumps(value)``: ASCII only, ``", "`` and ``": "`` separators."""
    if _can_encode:
        try:
            chunks = _encoder()(value, 0)
        except Exception:  # json refuses it in its own words, below
            pass
        else:
            return "".join(chunks)
    import json

    return json.dumps(value)
