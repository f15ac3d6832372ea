"""Who may talk to ``redline serve``: the token, Host and Origin checks (standard library only).

textual-serve hands every websocket a live dashboard and checks nothing itself, so any web
page the user visits could otherwise connect to it and press ``y``. ``ServeGuard`` decides
each request from three things:

- **Host** must name the server as it was bound (``127.0.0.1:PORT``, ``localhost:PORT`` and
  ``[::1]:PORT`` for a loopback bind; for a wildcard bind also this machine's host names and
  the addresses of its network interfaces), or a name the user allowed with
  ``--allow-host``, so a DNS name rebound to this machine is refused;
- **Origin**, when the browser sends one (it always does for a websocket), must be the page
  origin ``http://`` + that Host, so another site's page cannot open the websocket;
- the **token**, a random secret printed in the start URL as its first path segment
  (``http://127.0.0.1:PORT/TOKEN/``). The page, its scripts and styles and its websocket all
  live under that secret prefix, so every request carries the token in its own path.

There is no cookie: cookies are shared by every port of a host, so a cookie holding the
token would reach any other server on 127.0.0.1 the user visits. A path reaches only the
server it is part of. The web server (``commands/_serve_server.py``) turns a refusal into a
403 with the reason.
"""

from __future__ import annotations

import ctypes
import ipaddress
import re
import secrets
import socket
import sys
from dataclasses import dataclass, field

WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


def new_token() -> str:
    """A fresh secret for one server run (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def is_local_host(host: str) -> bool:
    """Whether binding to ``host`` keeps the server reachable from this machine only."""
    name = host.strip().strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_warning(host: str) -> str | None:
    """The warning to print for a bind that other machines can reach, else None."""
    if is_local_host(host):
        return None
    where = "every network interface" if host.strip() in WILDCARD_HOSTS else repr(host)
    return (
        f"serving on {where}: other machines on the network can reach this dashboard. "
        "Anyone with the URL (it holds the token) can apply changes, and the connection "
        "is not encrypted (plain http). Use the default --host 127.0.0.1 unless you need this."
    )


def host_port(host: str, port: int) -> str:
    """``host:port`` as it appears in a Host header (IPv6 addresses in brackets)."""
    name = host.strip().lower()
    if ":" in name and not name.startswith("["):
        name = f"[{name}]"
    return f"{name}:{port}"


def path_token(path: str) -> str | None:
    """The first segment of a request path (where the token goes), or None for ``/``."""
    segment = path.lstrip("/").split("/", 1)[0]
    return segment or None


def loggable_path(path: str) -> str:
    """``path`` with its first segment hidden when it could be (a near miss of) a token."""
    segment = path_token(path)
    if segment is None or len(segment) < 16:
        return path
    return "/***" + path.lstrip("/")[len(segment) :]


def _machine_names() -> set[str]:
    """This machine's host names and what they resolve to (resolved once, at start)."""
    names: set[str] = set()
    try:
        hostname = socket.gethostname()
        names.update({hostname, socket.getfqdn()})
        names.update(socket.gethostbyname_ex(hostname)[2])
    except OSError:
        pass
    return {name.lower() for name in names if name}


class _IfAddrs(ctypes.Structure):
    """``struct ifaddrs`` (the same on Linux, macOS and the BSDs)."""


_IfAddrs._fields_ = [
    ("ifa_next", ctypes.POINTER(_IfAddrs)),
    ("ifa_name", ctypes.c_char_p),
    ("ifa_flags", ctypes.c_uint),
    ("ifa_addr", ctypes.c_void_p),
    ("ifa_netmask", ctypes.c_void_p),
    ("ifa_ifu", ctypes.c_void_p),
    ("ifa_data", ctypes.c_void_p),
]


def interface_addresses() -> frozenset[str]:
    """The IPv4 and IPv6 addresses of every network interface of this machine (lower case,
    IPv6 without its zone), read with the C library's ``getifaddrs()``; empty where that
    cannot be called.

    Resolving the host name is not enough: stock Debian and Ubuntu map it to 127.0.1.1, so
    the address other machines use would be missing. ``getifaddrs()`` is what ``ip`` and
    ``ifconfig`` list from: every address of every interface (secondary ones and IPv6
    included), no subprocess, no file format to parse, the same call on Linux (glibc, musl)
    and macOS. Only ``struct sockaddr`` differs: BSDs start it with a length byte.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        getifaddrs, freeifaddrs = libc.getifaddrs, libc.freeifaddrs
    except (OSError, AttributeError):
        return frozenset()
    getifaddrs.argtypes = [ctypes.POINTER(ctypes.POINTER(_IfAddrs))]
    getifaddrs.restype = ctypes.c_int
    freeifaddrs.argtypes = [ctypes.POINTER(_IfAddrs)]
    freeifaddrs.restype = None
    head = ctypes.POINTER(_IfAddrs)()
    if getifaddrs(ctypes.byref(head)) != 0:
        return frozenset()
    found: set[str] = set()
    try:
        entry = head
        while entry:
            address = entry.contents.ifa_addr
            if address:
                text = _sockaddr_text(address)
                if text is not None:
                    found.add(text)
            entry = entry.contents.ifa_next
    finally:
        freeifaddrs(head)
    return frozenset(found)


def _sockaddr_text(address: int) -> str | None:
    """The address in a ``struct sockaddr_in``/``sockaddr_in6`` at ``address``, else None."""
    head = ctypes.string_at(address, 2)
    if sys.platform.startswith("linux"):
        family = int.from_bytes(head, sys.byteorder)
    else:  # BSD layout: sa_len, then a one-byte sa_family
        family = head[1]
    if family == socket.AF_INET:
        return socket.inet_ntop(socket.AF_INET, ctypes.string_at(address + 4, 4))
    if family == socket.AF_INET6:
        return socket.inet_ntop(socket.AF_INET6, ctypes.string_at(address + 8, 16)).lower()
    return None


_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")


def allowed_host(text: str) -> str:
    """One ``--allow-host`` value, checked and lower-cased: a host name or address,
    optionally with ``:PORT`` (IPv6 in brackets then). Raises ValueError saying why not."""
    value = text.strip().lower()
    problem = (
        f"{text!r} is not a host name or address as a browser's address bar shows it, "
        "optionally with :PORT (e.g. devbox.lan, 192.168.1.5 or devbox.lan:8000)"
    )
    if not value:
        raise ValueError(problem)
    name, port = value, ""
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(problem)
        port = rest[1:] if rest else ""
        if rest and not port:
            raise ValueError(problem)
        try:
            if ipaddress.ip_address(name).version != 6:
                raise ValueError(problem)
        except ValueError:
            raise ValueError(problem) from None
    elif value.count(":") > 1:  # a bare IPv6 address
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            raise ValueError(problem) from None
    else:
        name, _, port = value.partition(":")
        if ":" in value and not port:
            raise ValueError(problem)
        if not _NAME.fullmatch(name):
            raise ValueError(problem)
    if port and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(problem)
    return value


def _has_port(value: str) -> bool:
    """Whether an ``allowed_host`` value names its port."""
    if value.startswith("["):
        return "]:" in value
    return value.count(":") == 1


def _with_port(value: str, port: int) -> str:
    """An ``allowed_host`` value as a Host header names it (the server's port unless given)."""
    return value if _has_port(value) else host_port(value, port)


@dataclass(frozen=True)
class Verdict:
    """The guard's answer: ``ok``, else ``reason`` for the 403."""

    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class ServeGuard:
    """The checks for one server bound to ``host``:``port`` with ``token``; ``extra_hosts``
    are the ``--allow-host`` values (checked by ``allowed_host``)."""

    host: str
    port: int
    token: str
    extra_hosts: tuple[str, ...] = ()
    # The host names, resolved once; interface addresses are read again when a Host
    # header is missing from the list (an address may have come up since the start).
    _names: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    _hosts: list[frozenset[str]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        host = self.host.strip().lower()
        names = {host} if host not in WILDCARD_HOSTS else set()
        if is_local_host(host) or host in WILDCARD_HOSTS:
            names.update(LOCAL_NAMES)
        if host in WILDCARD_HOSTS:
            names.update(_machine_names())
        object.__setattr__(self, "_names", frozenset(names))
        self._hosts.append(self._compute_hosts())

    @property
    def wildcard(self) -> bool:
        return self.host.strip() in WILDCARD_HOSTS

    @property
    def prefix(self) -> str:
        """The secret path every URL of this server starts with."""
        return f"/{self.token}/"

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """Every Host header value accepted (lower case)."""
        return self._hosts[-1]

    def _compute_hosts(self) -> frozenset[str]:
        names = set(self._names)
        if self.wildcard:
            names.update(interface_addresses())
        forms = {host_port(name, self.port) for name in names}
        for extra in self.extra_hosts:
            forms.add(_with_port(extra, self.port))
            if not _has_port(extra):
                names.add(extra)
        if self.port == 80:  # browsers leave the default port out of Host and Origin
            forms.update(host_port(name, 80).rsplit(":", 1)[0] for name in names)
        return frozenset(forms)

    def _is_allowed(self, given_host: str) -> bool:
        if given_host in self._hosts[-1]:
            return True
        if not self.wildcard:
            return False
        # Not known: maybe an interface got its address after the start. getifaddrs() is
        # a local call (no name lookup), cheap enough to make again.
        self._hosts[-1:] = [self._compute_hosts()]
        return given_host in self._hosts[-1]

    def urls(self) -> list[str]:
        """The start URLs to print, with the token."""
        first = "127.0.0.1" if self.wildcard else self.host.strip()
        hosts = [host_port(first, self.port)]
        hosts += [_with_port(extra, self.port) for extra in self.extra_hosts]
        if self.wildcard:
            hosts.append(host_port(socket.gethostname(), self.port))
        return [f"http://{host}{self.prefix}" for host in dict.fromkeys(hosts)]

    def check(
        self,
        *,
        host: str | None,
        origin: str | None,
        path: str,
    ) -> Verdict:
        """Decide one request from its Host and Origin headers and its path, whose first
        segment must be the token."""
        given_host = (host or "").strip().lower()
        if not self._is_allowed(given_host):
            return Verdict(
                False,
                f"Host {host!r} is not this server; open the URL redline serve printed.",
            )
        if origin is not None and origin.strip().lower() != f"http://{given_host}":
            return Verdict(False, f"Origin {origin!r} may not use this server.")
        given_token = path_token(path)
        if given_token is not None and self._matches(given_token):
            return Verdict(True)
        if given_token is None:
            return Verdict(
                False,
                "No token; open the URL redline serve printed (the token is its path).",
            )
        return Verdict(False, "Wrong token; open the URL redline serve printed.")

    def _matches(self, given: str) -> bool:
        return secrets.compare_digest(given.encode("utf-8", "replace"), self.token.encode("utf-8"))
