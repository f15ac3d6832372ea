"""Who may talk to ``redline serve``: the token, Host and Origin checks (standard library only).

textual-serve hands every websocket a live dashboard and checks nothing itself, so any web
page the user visits could otherwise connect to it and press ``y``. ``ServeGuard`` decides
each request from three things:

- **Host** must name the server as it was bound (``127.0.0.1:PORT``, ``localhost:PORT`` and
  ``[::1]:PORT`` for a loopback bind), so a DNS name rebound to 127.0.0.1 is refused;
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

import ipaddress
import secrets
import socket
from dataclasses import dataclass

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
    """This machine's names and addresses, for a server bound to every interface."""
    names: set[str] = set()
    try:
        hostname = socket.gethostname()
        names.update({hostname, socket.getfqdn()})
        names.update(socket.gethostbyname_ex(hostname)[2])
    except OSError:
        pass
    return {name.lower() for name in names if name}


@dataclass(frozen=True)
class Verdict:
    """The guard's answer: ``ok``, else ``reason`` for the 403."""

    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class ServeGuard:
    """The checks for one server bound to ``host``:``port`` with ``token``."""

    host: str
    port: int
    token: str

    @property
    def prefix(self) -> str:
        """The secret path every URL of this server starts with."""
        return f"/{self.token}/"

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """Every Host header value accepted (lower case)."""
        host = self.host.strip().lower()
        names = {host} if host not in WILDCARD_HOSTS else set()
        if is_local_host(host) or host in WILDCARD_HOSTS:
            names.update(LOCAL_NAMES)
        if host in WILDCARD_HOSTS:
            names.update(_machine_names())
        forms = {host_port(name, self.port) for name in names}
        if self.port == 80:  # browsers leave the default port out of Host and Origin
            forms.update(host_port(name, 80).rsplit(":", 1)[0] for name in names)
        return frozenset(forms)

    def urls(self) -> list[str]:
        """The start URLs to print, with the token."""
        host = self.host.strip()
        names = ["127.0.0.1", socket.gethostname()] if host in WILDCARD_HOSTS else [host]
        return [f"http://{host_port(name, self.port)}{self.prefix}" for name in names]

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
        if given_host not in self.allowed_hosts:
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
