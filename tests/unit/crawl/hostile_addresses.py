"""The hostile addresses every guarded outbound call is tested with: the crawler's guard
(``test_crawl_guard.py``) and each configured call (``test_outbound.py``)."""

from __future__ import annotations

import ipaddress


def teredo(server: str, client: str, port: int = 40000) -> str:
    """A Teredo address (2001::/32) with the client address and port obfuscated (inverted)."""
    value = (0x20010000 << 96) | (int(ipaddress.IPv4Address(server)) << 64)
    value |= (port ^ 0xFFFF) << 32
    value |= int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF
    return str(ipaddress.IPv6Address(value))


def six_to_four(v4: str) -> str:
    return str(ipaddress.IPv6Address((0x2002 << 112) | (int(ipaddress.IPv4Address(v4)) << 80) | 1))


# (label, address as written in a URL host) -- every one must be refused
BLOCKED = [
    ("loopback", "127.0.0.1"),
    ("loopback elsewhere in 127/8", "127.45.6.7"),
    ("loopback decimal", "2130706433"),
    ("loopback octal", "0177.0.0.1"),
    ("loopback octal whole", "017700000001"),
    ("loopback hex", "0x7f.0.0.1"),
    ("loopback hex whole", "0x7f000001"),
    ("loopback short", "127.1"),
    ("loopback mixed hex/octal", "0x7f.0.0.01"),
    ("loopback mixed short", "0x7f.1"),
    ("loopback trailing dot", "127.0.0.1."),
    ("private 10/8", "10.0.0.1"),
    ("private 10/8 short", "10.1"),
    ("private 10/8 decimal", "167772161"),
    ("private 172.16/12", "172.16.5.4"),
    ("private 172.31", "172.31.255.255"),
    ("private 192.168/16", "192.168.1.1"),
    ("private 192.168 hex", "0xc0.0xa8.0x01.0x01"),
    ("cgnat", "100.64.0.1"),
    ("cgnat upper", "100.127.255.254"),
    ("link-local", "169.254.1.1"),
    ("metadata aws/gcp/azure", "169.254.169.254"),
    ("metadata decimal", "2852039166"),
    ("metadata ecs", "169.254.170.2"),
    ("metadata alibaba", "100.100.100.200"),
    ("unspecified", "0.0.0.0"),
    ("this network", "0.1.2.3"),
    ("zero short", "0"),
    ("multicast", "224.0.0.1"),
    ("multicast upper", "239.255.255.250"),
    ("reserved", "240.0.0.1"),
    ("broadcast", "255.255.255.255"),
    ("documentation", "192.0.2.10"),
    ("benchmark", "198.18.0.1"),
    ("v6 loopback", "::1"),
    ("v6 unspecified", "::"),
    ("v6 ula", "fc00::1"),
    ("v6 ula fd", "fd12:3456::1"),
    ("v6 metadata aws", "fd00:ec2::254"),
    ("v6 link-local", "fe80::1"),
    ("v6 site-local", "fec0::1"),
    ("v6 multicast", "ff02::1"),
    ("v6 documentation", "2001:db8::1"),
    ("v4-mapped loopback", "::ffff:127.0.0.1"),
    ("v4-mapped loopback hex", "::ffff:7f00:1"),
    ("v4-mapped private", "::ffff:10.0.0.1"),
    ("v4-mapped metadata", "::ffff:169.254.169.254"),
    ("v4-compatible loopback", "::127.0.0.1"),
    ("v4-compatible private", "::10.0.0.1"),
    ("6to4 loopback", six_to_four("127.0.0.1")),
    ("6to4 private", six_to_four("192.168.0.1")),
    ("6to4 metadata", six_to_four("169.254.169.254")),
    ("teredo loopback client", teredo("65.54.227.120", "127.0.0.1")),
    ("teredo private client", teredo("65.54.227.120", "10.0.0.1")),
    ("teredo private server", teredo("10.0.0.1", "8.8.8.8")),
    ("nat64 loopback", "64:ff9b::127.0.0.1"),
    ("nat64 private", "64:ff9b::a00:1"),
    ("nat64 metadata", "64:ff9b::169.254.169.254"),
    ("nat64 local-use prefix", "64:ff9b:1::a00:1"),
    ("nat64 local-use prefix public v4", "64:ff9b:1::808:808"),
]
