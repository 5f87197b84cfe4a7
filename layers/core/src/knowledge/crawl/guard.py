"""Address guard: decides which URLs and IP addresses may be connected to.

Every outbound call whose URL an operator, a tenant or a fetched page can choose (the
crawler, and through :mod:`knowledge.crawl.outbound` upstream federation and the
OpenAI-compatible embedder) treats the host as hostile until checked:

* only ``https`` URLs without credentials (``user:pass@``) are accepted;
* a host written as an IP literal is decoded the way ``inet_aton`` and browsers decode
  it (``2130706433``, ``0177.0.0.1``, ``0x7f.1`` and ``127.1`` are all 127.0.0.1) and
  then checked;
* a host name is resolved once and *every* address it resolves to must be public. The
  checked addresses are returned so the caller connects to one of exactly those, which
  closes the DNS-rebinding gap between a check and a second lookup.

IPv6 forms that carry an IPv4 address (IPv4-mapped, 6to4, Teredo, NAT64) are decoded
and the embedded IPv4 address is judged too.

The one exception is the development switch (``kb serve --dev-allow-loopback PORT``):
given ``loopback_port``, URLs on exactly that port may reach 127.0.0.0/8 and ``::1``, and
only there plain ``http`` is accepted, provided every address is loopback. Production
wiring never passes it.

Failures raise :class:`~knowledge.errors.SourceFailure` with ``blocked_address`` (a name
that does not resolve raises ``fetch_timeout``: the site cannot be reached). Messages
are fixed strings: they never echo the URL, which may come from fetched text.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlsplit

from knowledge.errors import Code, SourceFailure

Resolver = Callable[[str, int], list[str]]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Explicit tables, so the decision does not drift with the Python version's idea of
# ``is_global``. The ``ipaddress`` flags are consulted as well (they can only add).
_BLOCKED_V4 = tuple(
    ipaddress.IPv4Network(net)
    for net in (
        "0.0.0.0/8",  # "this network"; 0.0.0.0 reaches the local host on Linux
        "10.0.0.0/8",  # RFC 1918
        "100.64.0.0/10",  # carrier-grade NAT (RFC 6598); also Alibaba metadata 100.100.100.200
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, cloud metadata 169.254.169.254 and 169.254.170.2
        "172.16.0.0/12",  # RFC 1918
        "192.0.0.0/24",  # IETF protocol assignments (Oracle metadata 192.0.0.192)
        "192.0.2.0/24",  # TEST-NET-1
        "192.88.99.0/24",  # deprecated 6to4 relay anycast
        "192.168.0.0/16",  # RFC 1918
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # TEST-NET-2
        "203.0.113.0/24",  # TEST-NET-3
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, includes 255.255.255.255 broadcast
    )
)

_BLOCKED_V6 = tuple(
    ipaddress.IPv6Network(net)
    for net in (
        "::/96",  # unspecified, loopback and the deprecated IPv4-compatible form
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b:1::/48",  # local-use NAT64 prefix (RFC 8215): never a public destination
        "100::/64",  # discard-only
        "2001:2::/48",  # benchmarking
        "2001:10::/28",  # ORCHID (deprecated)
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation (RFC 9637)
        "5f00::/16",  # SRv6 SIDs
        "fc00::/7",  # unique local; includes AWS metadata fd00:ec2::254
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")

# Named for the reader; every one of them is also inside a blocked range above.
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
        ipaddress.ip_address("192.0.0.192"),
    }
)

_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")

_V4_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")
_NUMERIC_LABEL = re.compile(r"^(?:0[xX][0-9a-fA-F]*|[0-9]+)$")
_NAME = re.compile(r"^(?=.{1,253}\.?$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\.?$")


def blocked(message: str = "address not allowed") -> SourceFailure:
    """The ``blocked_address`` failure (a helper so every module raises it alike)."""
    return SourceFailure(Code.BLOCKED_ADDRESS, message)


# ---------------------------------------------------------------------------------------
# IP literals


def _parse_v4(host: str) -> ipaddress.IPv4Address | None:
    """Decode an IPv4 literal the way ``inet_aton`` does: 1 to 4 parts, each decimal,
    octal (leading 0) or hex (0x); the last part fills the remaining bytes."""
    if host.endswith("."):
        host = host[:-1]  # browsers accept one trailing dot on an IPv4 host
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if not _V4_PART.match(part):
            return None
        if part[:2].lower() == "0x":
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 0xFF for v in head):
        return None
    if last >= 1 << (8 * (4 - len(head))):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _parse_ip(host: str) -> IPAddress | None:
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if not text or any(c.isspace() for c in text):
        return None
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text)
        except ValueError:
            return None
    return _parse_v4(text)


def parse_host_ip(host: str) -> str | None:
    """Return the canonical text of ``host`` when it is an IP literal in any encoding
    (``0x7f.1`` -> ``127.0.0.1``, ``[::FFFF:7f00:1]`` -> ``::ffff:7f00:1``), else None."""
    address = _parse_ip(host)
    return None if address is None else str(address)


def _blocked_v4(address: ipaddress.IPv4Address) -> bool:
    if any(address in net for net in _BLOCKED_V4):
        return True
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)


def _blocked_v6(address: ipaddress.IPv6Address) -> bool:
    if address.scope_id:
        address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
    mapped = address.ipv4_mapped
    if mapped is not None:
        return _blocked_v4(mapped)
    if address in _TRANSLATED:
        return True
    if address in _NAT64:
        return _blocked_v4(_embedded_v4(address))
    if address in _SIX_TO_FOUR:
        embedded = address.sixtofour
        return embedded is None or _blocked_v4(embedded)
    if address in _TEREDO:
        teredo = address.teredo
        if teredo is None:
            return True
        server, client = teredo  # ``teredo`` already undoes the client obfuscation
        return _blocked_v4(server) or _blocked_v4(client)
    if any(address in net for net in _BLOCKED_V6):
        return True
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_site_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def _is_loopback(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in _LOOPBACK_V4
    return address == _LOOPBACK_V6


def _blocked(address: IPAddress, allow_loopback: bool) -> bool:
    if allow_loopback and _is_loopback(address):
        return False
    if address in METADATA_ADDRESSES:
        return True
    if isinstance(address, ipaddress.IPv4Address):
        return _blocked_v4(address)
    return _blocked_v6(address)


def blocked_ip(ip: str) -> bool:
    """True when nothing may connect to ``ip`` (any encoding; unparseable -> True)."""
    address = _parse_ip(ip)
    if address is None:
        return True
    return _blocked(address, allow_loopback=False)


# ---------------------------------------------------------------------------------------
# URLs


def system_resolve(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the system resolver; addresses in resolver order, no duplicates."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


def _ascii_host(host: str) -> str | None:
    host = host.lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
    return host if _NAME.match(host) else None


class Target(NamedTuple):
    """What a URL connects to: ``scheme`` (``https``, or ``http`` under the development
    switch), the lower-case ASCII (IDNA) host or canonical IP literal, and the port."""

    scheme: str
    host: str
    port: int


def split_url(url: str, *, loopback_port: int | None = None) -> Target:
    """Validate the shape of ``url`` and return its :class:`Target`. ``http`` is accepted
    only on ``loopback_port`` (the development switch; :func:`check_url` then demands
    loopback addresses). Raises ``blocked_address``."""
    if not isinstance(url, str) or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise blocked("malformed url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise blocked("malformed url") from None
    scheme = parts.scheme.lower()
    if scheme == "http" and loopback_port is not None and (port or 80) == loopback_port:
        default_port = 80
    elif scheme == "https":
        default_port = 443
    else:
        raise blocked("only https urls are allowed")
    netloc = parts.netloc
    if "@" in netloc or parts.username is not None or parts.password is not None:
        raise blocked("credentials in urls are not allowed")
    if "\\" in netloc or "%" in netloc:
        raise blocked("malformed host")
    host = parts.hostname or ""
    if not host:
        raise blocked("url has no host")
    if port == 0:
        raise blocked("malformed url")
    literal = parse_host_ip(host)
    if literal is not None:
        if ":" in literal and not netloc.startswith("["):
            raise blocked("malformed host")
        return Target(scheme, literal, port or default_port)
    labels = host.rstrip(".").split(".")
    if _NUMERIC_LABEL.match(labels[-1]) or "[" in netloc:
        # Looks like an IP literal but is not a valid one: never hand it to a resolver
        # (some resolvers are more lenient than this parser).
        raise blocked("malformed ip literal")
    name = _ascii_host(host)
    if name is None:
        raise blocked("malformed host")
    return Target(scheme, name, port or default_port)


def split_target(url: str, *, loopback_port: int | None = None) -> tuple[str, int]:
    """``(host, port)`` of ``url`` (see :func:`split_url`). Raises ``blocked_address``."""
    target = split_url(url, loopback_port=loopback_port)
    return target.host, target.port


def literal_blocked(host: str, port: int, *, loopback_port: int | None = None) -> bool:
    """True when ``host`` is an IP literal nothing may connect to on ``port`` (names are
    judged only once resolved, by :func:`check_url`)."""
    address = _parse_ip(host)
    if address is None:
        return False
    return _blocked(address, loopback_port is not None and port == loopback_port)


def check_url(url: str, resolve: Resolver | None = None, *, loopback_port: int | None = None) -> list[str]:
    """Check ``url`` and return the addresses the caller may connect to.

    Literal IPs are judged directly; names are resolved once with ``resolve`` (default:
    the system resolver) and every returned address must pass. ``loopback_port`` (the
    development switch, never set in production) lets 127.0.0.0/8 and ::1 through for URLs
    on that port only, and nothing else; a plain ``http`` URL on it must resolve to
    loopback addresses only.
    """
    scheme, host, port = split_url(url, loopback_port=loopback_port)
    allow_loopback = loopback_port is not None and port == loopback_port
    only_loopback = scheme != "https"
    literal = _parse_ip(host)
    if literal is not None:
        answers = [str(literal)]
    else:
        resolver = resolve or system_resolve
        try:
            answers = resolver(host, port)
        except (OSError, UnicodeError):
            raise SourceFailure(Code.FETCH_TIMEOUT, "host name did not resolve") from None
        if not answers:
            raise SourceFailure(Code.FETCH_TIMEOUT, "host name did not resolve")
    checked: list[str] = []
    for answer in answers:
        address = _parse_ip(str(answer))
        if address is None or _blocked(address, allow_loopback):
            raise blocked("address not allowed" if literal is not None else
                          "host resolves to an address that is not allowed")
        if only_loopback and not _is_loopback(address):
            raise blocked("plain http is only allowed to a loopback address")
        text = str(address)
        if text not in checked:
            checked.append(text)
    return checked
