"""ServeGuard decides requests from Host, Origin and the token (no server needed)."""

from __future__ import annotations

import ipaddress
import json
import shutil
import socket
import subprocess

import pytest

from redline.serve_guard import (
    ServeGuard,
    allowed_host,
    host_port,
    host_warning,
    interface_addresses,
    is_local_host,
    loggable_path,
    new_token,
    path_token,
)

TOKEN = new_token()


def check(
    guard: ServeGuard, host: str | None, *, origin: str | None = None, path: str = f"/{TOKEN}/"
) -> tuple[bool, str]:
    verdict = guard.check(host=host, origin=origin, path=path)
    return verdict.ok, verdict.reason


def test_tokens_are_long_and_fresh() -> None:
    tokens = {new_token() for _ in range(20)}
    assert len(tokens) == 20 and all(len(t) >= 40 for t in tokens)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
        ("localhost.example.org", False),
    ],
)
def test_local_hosts(host: str, local: bool) -> None:
    assert is_local_host(host) is local
    assert (host_warning(host) is None) is local


def test_the_warning_names_the_risk() -> None:
    text = host_warning("0.0.0.0") or ""
    assert "every network interface" in text and "not encrypted" in text
    assert "'192.168.1.5'" in (host_warning("192.168.1.5") or "")


def test_loopback_accepts_its_local_names_on_its_port_only() -> None:
    guard = ServeGuard("127.0.0.1", 8123, TOKEN)
    for host in ("127.0.0.1:8123", "localhost:8123", "[::1]:8123", "LOCALHOST:8123"):
        assert check(guard, host)[0], host
    for host in (None, "", "127.0.0.1", "127.0.0.1:8124", "evil.example:8123", "localhost.:8123"):
        ok, reason = check(guard, host)
        assert not ok and "is not this server" in reason, host


def test_origin_must_be_the_page_itself() -> None:
    guard = ServeGuard("127.0.0.1", 8123, TOKEN)
    assert check(guard, "127.0.0.1:8123", origin="http://127.0.0.1:8123")[0]
    for origin in (
        "http://localhost:8123",  # another origin than the Host asked for
        "https://127.0.0.1:8123",
        "http://127.0.0.1:8124",
        "http://evil.example",
        "null",
        "",
    ):
        ok, reason = check(guard, "127.0.0.1:8123", origin=origin)
        assert not ok and "may not use this server" in reason, origin


def test_the_token_is_the_first_path_segment() -> None:
    guard = ServeGuard("127.0.0.1", 8123, TOKEN)
    assert guard.prefix == f"/{TOKEN}/"
    for path in (f"/{TOKEN}", f"/{TOKEN}/", f"/{TOKEN}/ws", f"/{TOKEN}/static/js/textual.js"):
        assert check(guard, "127.0.0.1:8123", path=path) == (True, ""), path
    assert path_token("/") is None and path_token("") is None
    assert path_token(f"/{TOKEN}/ws") == TOKEN


@pytest.mark.parametrize(
    "bad",
    ["x", TOKEN[:-1], TOKEN + "x", "\udcff" * 43, "é" * 43, "ws"],
    # Fixed ids: the token is random, and pytest-xdist's workers must collect the same names.
    ids=["one-char", "one-short", "one-long", "surrogates", "accents", "ws"],
)
def test_wrong_tokens(bad: str) -> None:
    guard = ServeGuard("127.0.0.1", 8123, TOKEN)
    for path in (f"/{bad}", f"/{bad}/", f"/{bad}/ws", f"/{bad}/{TOKEN}/"):
        ok, reason = check(guard, "127.0.0.1:8123", path=path)
        assert not ok and "Wrong token" in reason, path
    for path in ("/", "", "//"):
        ok, reason = check(guard, "127.0.0.1:8123", path=path)
        assert not ok and "No token" in reason, path


def test_logged_paths_hide_anything_like_a_token() -> None:
    assert loggable_path(f"/{TOKEN}/ws") == "/***/ws"
    assert loggable_path(f"/{TOKEN[:-1]}") == "/***"
    assert loggable_path("/favicon.ico") == "/favicon.ico"
    assert loggable_path("/") == "/"


def test_port_80_may_be_left_out() -> None:
    guard = ServeGuard("127.0.0.1", 80, TOKEN)
    assert check(guard, "localhost", origin="http://localhost")[0]
    assert check(guard, "localhost:80")[0]


def test_a_specific_address_accepts_only_itself() -> None:
    guard = ServeGuard("192.168.1.5", 9000, TOKEN)
    assert guard.allowed_hosts == {"192.168.1.5:9000"}
    assert guard.urls() == [f"http://192.168.1.5:9000/{TOKEN}/"]


def test_ipv6_hosts_are_bracketed() -> None:
    assert host_port("::1", 8000) == "[::1]:8000"
    guard = ServeGuard("::1", 8000, TOKEN)
    assert "[::1]:8000" in guard.allowed_hosts and "localhost:8000" in guard.allowed_hosts
    assert guard.urls() == [f"http://[::1]:8000/{TOKEN}/"]


def test_a_wildcard_bind_accepts_local_names_and_this_machine() -> None:
    guard = ServeGuard("0.0.0.0", 8000, TOKEN)
    assert "127.0.0.1:8000" in guard.allowed_hosts
    assert "0.0.0.0:8000" not in guard.allowed_hosts
    assert guard.urls()[0] == f"http://127.0.0.1:8000/{TOKEN}/"


def ip_command_addresses() -> set[str] | None:
    """This machine's addresses as iproute2 lists them, or None without ``ip``."""
    ip = shutil.which("ip")
    if ip is None:
        return None
    done = subprocess.run([ip, "-j", "addr"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return None
    return {
        str(ipaddress.ip_address(info["local"]))
        for link in json.loads(done.stdout)
        for info in link.get("addr_info", [])
        if "local" in info
    }


def test_interface_addresses_lists_every_address_of_this_machine() -> None:
    found = interface_addresses()
    assert "127.0.0.1" in found
    listed = ip_command_addresses()
    if listed is not None:  # the same list as `ip addr`, IPv6 and secondary addresses included
        assert found == listed


@pytest.fixture
def stock_debian(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """/etc/hosts maps the host name to 127.0.1.1; the interfaces have other addresses."""
    monkeypatch.setattr(socket, "gethostname", lambda: "devbox")
    monkeypatch.setattr(socket, "getfqdn", lambda name="": "devbox")
    monkeypatch.setattr(socket, "gethostbyname_ex", lambda name: (name, [], ["127.0.1.1"]))
    addresses = {"127.0.0.1", "::1", "192.168.1.5", "fe80::1"}
    monkeypatch.setattr("redline.serve_guard.interface_addresses", lambda: frozenset(addresses))
    return addresses


def test_a_wildcard_bind_accepts_the_interfaces_addresses(stock_debian: set[str]) -> None:
    for bind in ("0.0.0.0", "::", ""):
        guard = ServeGuard(bind, 8000, TOKEN)
        for host in ("192.168.1.5:8000", "[fe80::1]:8000", "devbox:8000", "127.0.1.1:8000"):
            assert check(guard, host, origin=f"http://{host}") == (True, ""), (bind, host)
        for host in ("10.0.0.9:8000", "192.168.1.5:8001", "evil.example:8000", "192.168.1.5"):
            ok, reason = check(guard, host)
            assert not ok and "is not this server" in reason, (bind, host)


def test_an_address_that_comes_up_later_is_accepted(stock_debian: set[str]) -> None:
    guard = ServeGuard("0.0.0.0", 8000, TOKEN)
    assert not check(guard, "10.1.2.3:8000")[0]
    stock_debian.add("10.1.2.3")  # say, the Wi-Fi joined a network after the start
    assert check(guard, "10.1.2.3:8000")[0]


def test_a_specific_bind_never_accepts_the_other_interfaces(stock_debian: set[str]) -> None:
    guard = ServeGuard("192.168.1.5", 8000, TOKEN)
    assert check(guard, "192.168.1.5:8000")[0]
    assert not check(guard, "[fe80::1]:8000")[0] and not check(guard, "devbox:8000")[0]


def test_allow_host_adds_exactly_the_names_given() -> None:
    extra = ("devbox.lan", "proxy.lan:8443", "[fe80::1]:9000", "::2", "10.0.0.7")
    guard = ServeGuard("127.0.0.1", 8000, TOKEN, extra_hosts=extra)
    for host in (
        "devbox.lan:8000",
        "proxy.lan:8443",
        "[fe80::1]:9000",
        "[::2]:8000",
        "10.0.0.7:8000",
    ):
        assert check(guard, host, origin=f"http://{host}") == (True, ""), host
    for host in ("devbox.lan:8001", "proxy.lan:8000", "[fe80::1]:8000", "other.lan:8000"):
        assert not check(guard, host)[0], host
    assert guard.urls() == [
        f"http://127.0.0.1:8000/{TOKEN}/",
        f"http://devbox.lan:8000/{TOKEN}/",
        f"http://proxy.lan:8443/{TOKEN}/",
        f"http://[fe80::1]:9000/{TOKEN}/",
        f"http://[::2]:8000/{TOKEN}/",
        f"http://10.0.0.7:8000/{TOKEN}/",
    ]
    on_80 = ServeGuard("127.0.0.1", 80, TOKEN, extra_hosts=("devbox.lan",))
    assert check(on_80, "devbox.lan")[0] and check(on_80, "devbox.lan:80")[0]


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("DevBox.LAN", "devbox.lan"),
        (" devbox ", "devbox"),
        ("devbox.lan.", "devbox.lan."),
        ("devbox.lan:8000", "devbox.lan:8000"),
        ("192.168.1.5", "192.168.1.5"),
        ("fe80::1", "fe80::1"),
        ("[fe80::1]", "[fe80::1]"),
        ("[fe80::1]:8000", "[fe80::1]:8000"),
        ("my_host", "my_host"),
    ],
)
def test_allowed_host_values(given: str, kept: str) -> None:
    assert allowed_host(given) == kept


@pytest.mark.parametrize(
    "bad",
    [
        "",
        " ",
        "http://devbox",
        "devbox/x",
        "a b",
        "user@devbox",
        "devbox:",
        "devbox:0",
        "devbox:65536",
        "devbox:80a",
        "-devbox",
        ".devbox",
        "dev..box",
        "[1.2.3.4]",
        "[::1",
        "[::1]:",
        "[::1]x",
        "::g",
        "ß.de",
        "*",
        "dev\nbox",
    ],
)
def test_allowed_host_refuses_anything_else(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a host name or address"):
        allowed_host(bad)
