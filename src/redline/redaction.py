"""Keep credentials out of everything redline prints or logs.

A base URL may carry a user name and password (``http://user:pass@host``) or a key in its
query (``?api_key=...``). :func:`redact_url` is the one place that hides them; every
place that shows a base URL (provider labels, error messages, the session log header and
events, ``exec`` output) uses it, and :func:`redact_urls` applies it to free text (an
HTTP library's error message that quotes the URL).
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"

# Query parameters whose value is a secret.
_SECRET_PARAMS = re.compile(
    r"^(api[-_]?key|key|token|access[-_]?token|auth|secret|password|passwd|pwd|sig|signature)$",
    re.IGNORECASE,
)
# ``scheme://userinfo@`` anywhere in a text.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#@]+@")
# ``?key=value`` / ``&key=value`` with a secret-looking key anywhere in a text.
_SECRET_QUERY = re.compile(
    r"(?P<head>[?&](?:api[-_]?key|key|token|access[-_]?token|auth|secret|password|passwd|pwd"
    r"|sig|signature)=)[^&\s#\"']+",
    re.IGNORECASE,
)


def redact_url(url: str) -> str:
    """``url`` with its user name, password and secret query values replaced by ``***``.

    Args:
        url: any URL (or text that fails to parse as one; it is then redacted as text).

    Returns:
        The URL safe to print: ``http://user:pass@host:8080/v1?key=abc`` becomes
        ``http://***@host:8080/v1?key=***``. A URL without credentials is unchanged.
    """
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return redact_urls(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_PARAMS.match(key) for key, _value in pairs):
            query = urlencode(
                [(key, REDACTED if _SECRET_PARAMS.match(key) else value) for key, value in pairs],
                safe="*",
            )
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_urls(text: str) -> str:
    """Every URL credential in free ``text`` replaced by ``***`` (see :func:`redact_url`)."""
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    return _SECRET_QUERY.sub(lambda m: f"{m.group('head')}{REDACTED}", text)


__all__ = ["REDACTED", "redact_url", "redact_urls"]
