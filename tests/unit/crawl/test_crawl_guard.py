"""The address guard: every encoding and range, both ways."""

from __future__ import annotations

import pytest

from knowledge.crawl.guard import blocked_ip, check_url, parse_host_ip
from knowledge.errors import Code, SourceFailure
from tests.unit.crawl.hostile_addresses import BLOCKED, six_to_four, teredo

# public addresses, including the same embedded forms around a public IPv4 address
ALLOWED = [
    ("public v4", "8.8.8.8"),
    ("public v4 decimal", "134744072"),
    ("public v4 short", "1.1"),  # 1.0.0.1
    ("public v4 hex", "0x08.0x08.0x08.0x08"),
    ("public v4 near 172.16/12", "172.32.0.1"),
    ("public v4 near cgnat", "100.128.0.1"),
    ("public v6", "2606:4700:4700::1111"),
    ("v4-mapped public", "::ffff:8.8.8.8"),
    ("6to4 public", six_to_four("8.8.8.8")),
    ("teredo public client", teredo("65.54.227.120", "8.8.8.8")),
    ("nat64 public", "64:ff9b::8.8.8.8"),
]

UNPARSEABLE = ["", "example.com", "1.2.3.4.5", "256.0.0.1", "08.0.0.1", "0x1g.0.0.1", "::g", "1.2.3.-4", " "]


@pytest.mark.parametrize(("label", "address"), BLOCKED, ids=[b[0] for b in BLOCKED])
def test_blocked_addresses_are_refused(label: str, address: str) -> None:
    assert blocked_ip(address) is True
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(SourceFailure) as caught:
        check_url(f"https://{host}/page", resolve=_no_lookup)
    assert caught.value.code == Code.BLOCKED_ADDRESS


@pytest.mark.parametrize(("label", "address"), ALLOWED, ids=[a[0] for a in ALLOWED])
def test_public_addresses_pass(label: str, address: str) -> None:
    assert blocked_ip(address) is False
    host = f"[{address}]" if ":" in address else address
    checked = check_url(f"https://{host}/page", resolve=_no_lookup)
    assert checked == [parse_host_ip(address)]


@pytest.mark.parametrize("text", UNPARSEABLE)
def test_unparseable_addresses_are_blocked(text: str) -> None:
    assert blocked_ip(text) is True


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0X7F.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("10.1.2", "10.1.0.2"),
        ("192.168.257", "192.168.1.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0300.0250.0.1", "192.168.0.1"),
        ("8.8.8.8", "8.8.8.8"),
        ("[::FFFF:127.0.0.1]", "::ffff:7f00:1"),
        ("[2606:4700:4700:0:0:0:0:1111]", "2606:4700:4700::1111"),
        ("example.com", None),
        ("1.2.3.4.example", None),
        ("256.1.1.1", None),
        ("1.16777216", None),
    ],
)
def test_parse_host_ip(host: str, canonical: str | None) -> None:
    assert parse_host_ip(host) == canonical


def _no_lookup(host: str, port: int) -> list[str]:
    raise AssertionError("a literal address must not be resolved")


class Lookups:
    def __init__(self, answers: list[str]):
        self.answers = answers
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        return list(self.answers)


def code_of(url: str, resolve: Lookups | None = None, **kwargs: int) -> str:
    with pytest.raises(SourceFailure) as caught:
        check_url(url, resolve or Lookups(["8.8.8.8"]), **kwargs)
    return caught.value.code


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://example.com/",
        "javascript:alert(1)",
        "//example.com/",
        "https:///path",
        "https://user@example.com/",
        "https://user:secret@example.com/",
        "https://example.com@127.0.0.1/",
        "https://:@example.com/",
        "https://example.com:0/",
        "https://example.com:99999/",
        "https://exa mple.com/",
        "https://example.com\\@127.0.0.1/",
        "https://example.com/\r\nX-Injected: 1",
        "https://[::1/",
        "https://ex%61mple.com/",
    ],
)
def test_check_url_refuses_bad_shapes(url: str) -> None:
    lookups = Lookups(["8.8.8.8"])
    assert code_of(url, lookups) == Code.BLOCKED_ADDRESS
    assert lookups.calls == []


def test_check_url_resolves_names_with_the_port_and_returns_every_address() -> None:
    lookups = Lookups(["8.8.8.8", "2606:4700:4700::1111", "8.8.8.8"])
    assert check_url("https://Example.COM:8443/a?b=c", lookups) == ["8.8.8.8", "2606:4700:4700::1111"]
    assert lookups.calls == [("example.com", 8443)]
    check_url("https://example.com/", lookups)
    assert lookups.calls[-1] == ("example.com", 443)


@pytest.mark.parametrize("bad", ["10.0.0.1", "127.0.0.1", "169.254.169.254", "::1", "fd00:ec2::254", "nonsense"])
def test_any_blocked_resolved_address_blocks_the_url(bad: str) -> None:
    assert code_of("https://example.com/", Lookups(["8.8.8.8", bad])) == Code.BLOCKED_ADDRESS
    assert code_of("https://example.com/", Lookups([bad, "8.8.8.8"])) == Code.BLOCKED_ADDRESS


def test_idn_host_is_resolved_in_ascii() -> None:
    lookups = Lookups(["8.8.8.8"])
    check_url("https://bücher.example/", lookups)
    assert lookups.calls == [("xn--bcher-kva.example", 443)]


def test_numeric_looking_hosts_that_are_not_addresses_never_reach_the_resolver() -> None:
    for url in ("https://08.0.0.1/", "https://1.2.3.4.5/", "https://256.0.0.1/", "https://example.0x10/"):
        lookups = Lookups(["8.8.8.8"])
        assert code_of(url, lookups) == Code.BLOCKED_ADDRESS
        assert lookups.calls == []


def test_unresolvable_names_fail_as_unreachable() -> None:
    def failing(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    with pytest.raises(SourceFailure) as caught:
        check_url("https://example.com/", failing)
    assert caught.value.code == Code.FETCH_TIMEOUT
    assert code_of("https://example.com/", Lookups([])) == Code.FETCH_TIMEOUT


def test_the_development_port_lets_only_loopback_through_on_that_port() -> None:
    assert check_url("https://127.0.0.1:8443/", loopback_port=8443) == ["127.0.0.1"]
    assert check_url("https://127.9.9.9:8443/", loopback_port=8443) == ["127.9.9.9"]
    assert check_url("https://[::1]:8443/", loopback_port=8443) == ["::1"]
    assert check_url("https://t.test:8443/", Lookups(["127.0.0.1"]), loopback_port=8443) == ["127.0.0.1"]
    assert check_url("https://127.0.0.1/", loopback_port=443) == ["127.0.0.1"]
    for other in ("10.0.0.1", "169.254.169.254", "0.0.0.0", "::ffff:127.0.0.1", "fe80::1", "192.168.0.1"):
        assert code_of("https://t.test:8443/", Lookups([other]), loopback_port=8443) == Code.BLOCKED_ADDRESS
    # any other port stays closed, and it is off unless asked for
    assert code_of("https://127.0.0.1:8444/", loopback_port=8443) == Code.BLOCKED_ADDRESS
    assert code_of("https://127.0.0.1/", loopback_port=8443) == Code.BLOCKED_ADDRESS
    assert code_of("https://t.test:8444/", Lookups(["127.0.0.1"]), loopback_port=8443) == Code.BLOCKED_ADDRESS
    assert code_of("https://127.0.0.1/") == Code.BLOCKED_ADDRESS
    assert code_of("https://t.test/", Lookups(["127.0.0.1"])) == Code.BLOCKED_ADDRESS


def test_plain_http_only_to_loopback_on_the_development_port() -> None:
    assert check_url("http://127.0.0.1:8000/", loopback_port=8000) == ["127.0.0.1"]
    assert check_url("http://localhost:8000/", Lookups(["127.0.0.1", "::1"]), loopback_port=8000) == [
        "127.0.0.1", "::1"]
    assert check_url("http://127.0.0.1/", loopback_port=80) == ["127.0.0.1"]
    # not on another port, never to a public address, never without the switch
    assert code_of("http://127.0.0.1:8001/", loopback_port=8000) == Code.BLOCKED_ADDRESS
    assert code_of("http://127.0.0.1/", loopback_port=8000) == Code.BLOCKED_ADDRESS
    assert code_of("http://example.com:8000/", Lookups(["8.8.8.8"]), loopback_port=8000) == Code.BLOCKED_ADDRESS
    assert code_of("http://localhost:8000/", Lookups(["127.0.0.1", "8.8.8.8"]), loopback_port=8000) == (
        Code.BLOCKED_ADDRESS)
    assert code_of("http://8.8.8.8:8000/", loopback_port=8000) == Code.BLOCKED_ADDRESS
    assert code_of("http://127.0.0.1:8000/") == Code.BLOCKED_ADDRESS
    assert code_of("ftp://127.0.0.1:8000/", loopback_port=8000) == Code.BLOCKED_ADDRESS


def test_error_messages_do_not_echo_the_url() -> None:
    marker = "secret-marker-in-url"
    for url in (f"http://{marker}.example/", f"https://{marker}.example/{marker}"):
        lookups = Lookups(["10.0.0.1"])
        with pytest.raises(SourceFailure) as caught:
            check_url(url, lookups)
        assert marker not in str(caught.value)
