"""E-mail addresses (written plainly or spelled out, "name at example dot com"), IP addresses
(checked by ``ipaddress``; documentation networks and examples are no one's) and street
addresses (``addresses``)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from .. import addresses
from .spans import Span
from .words import _NOT_NAMES, _ordinary

#: (a domain of letters beyond ASCII too, "stadtwerke-mödling.at"; and an address a URL's query
#: carries with its "@" encoded, "email=anna.k%40icloud.com")
#: (the full-width "＠" of a Japanese or Chinese keyboard; a local part and a domain in Latin
#: letters with accents or in Cyrillic or Greek, "josé@correo.es", "иван@почта.рф")
#: (a local part starts where its run of characters does: a run with no "@" after it is read once)
_EMAIL = re.compile(r"(?<![A-Za-z0-9À-ɏЀ-ӿͰ-Ͽ._%+-])[A-Za-z0-9À-ɏЀ-ӿͰ-Ͽ._%+-]+[@＠]{1,2}"
                    r"[A-Za-z0-9À-ɏЀ-ӿͰ-Ͽ-]+(?:[.．][A-Za-z0-9À-ɏЀ-ӿͰ-Ͽ-]+)*"
                    r"[.．](?:[A-Za-z]{2,}|[Ѐ-ӿ]{2,})(?![A-Za-zЀ-ӿ])"
                    r"|(?<![\w.%+-])[A-Za-z0-9._+-]+%40[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")

#: an email address written out so that a machine would not read it: "anna dot meyer at gmail
#: dot com", "r.okonkwo[at]gmail[dot]com", "kim (at) mail (dot) de"
#: the words for "@" and "." said aloud in English, Spanish and Portuguese, French, Italian and
#: German ("andres arroba hotmail punto com", "jean point dupont arobase orange point fr")
_AT_WORD = r"(?:at|AT|(?i:arroba|arobase|chiocciola|klammeraffe))"
_DOT_WORD = r"(?:dot|DOT|(?i:punto|ponto|point|punkt))"
#: (also between dashes or underscores, "john -at- gmail -dot- com", and a dot after a space only,
#: "john@gmail .com")
_OBF_AT = (r"(?:[ \t]*[\[({<][ \t]*(?:" + _AT_WORD + r"|@)[ \t]*[\])}>][ \t]*|[ \t]+" + _AT_WORD + r"[ \t]+|"
           r"[ \t]*-(?:" + _AT_WORD + r"|@)-[ \t]*|[ \t]*_(?:" + _AT_WORD + r"|@)_[ \t]*|[ \t]*@[ \t]*)")
_OBF_DOT = (r"(?:[ \t]*[\[({<][ \t]*(?:" + _DOT_WORD + r"|\.)[ \t]*[\])}>][ \t]*|[ \t]+" + _DOT_WORD + r"[ \t]+|"
            r"[ \t]*-" + _DOT_WORD + r"-[ \t]*|[ \t]*_" + _DOT_WORD + r"_[ \t]*|[ \t]+\.[ \t]*|\.)")
_OBF_EMAIL = re.compile(
    r"(?<![\w.@])([A-Za-z0-9][A-Za-z0-9_%+-]{0,63}(?:" + _OBF_DOT + r"[A-Za-z0-9_%+-]{1,63}){0,4})"
    r"(" + _OBF_AT + r")([A-Za-z0-9-]{1,63}(?:" + _OBF_DOT + r"[A-Za-z0-9-]{1,63}){0,4}" + _OBF_DOT + r"[A-Za-z]{2,6})"
    r"(?![\w])"
)
#: the top-level domains a spelled-out address with a word other than "dot" must end in
_SAID_TLDS = frozenset(("com", "net", "org", "edu", "gov", "info", "io", "biz", "de", "fr", "es", "it", "pt", "br",
                        "mx", "co", "ar", "cl", "pe", "uy", "ve", "ec", "bo", "py", "ca", "ch", "at", "be", "lu",
                        "nl", "uk", "eu", "pl", "ru", "in", "za", "ng", "ke", "au", "nz", "us", "cat", "gal"))
#: an address whose last dot was typed as a comma ("hyunwoo.choi@haneul-soft,kr"): the comma
#: is one only before a known top-level domain or a country's two letters closing the word
_COMMA_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]{2,}(?:\.[A-Za-z0-9-]+)*"
                          r",(?P<tld>[a-z]{2,4})(?![\w@.])")
_AT_SIGN = re.compile(r"@|(?i:[\[({<][ \t]*at[ \t]*[\])}>]|-at-|_at_)|[ \t]" + _AT_WORD + r"[ \t]")


_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\d|\.\d)")
#: an address "defanged" as security reports and pasted alerts write it ("185.220.101[.]47",
#: "10(.)0(.)0(.)14", "192[dot]168[dot]1[dot]20")
_DEFANGED_IPV4 = re.compile(r"(?<![\d.])\d{1,3}(?:(?:\.|\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\))\d{1,3}){3}(?!\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w:])")


def _emails(text: str) -> Iterator[Span]:
    for plain in _EMAIL.finditer(text):
        if re.search(r"://[^\s/@]*\Z", text[max(0, plain.start() - 200) : plain.start()]):
            continue  # "postgres://app:pa!ss@db01.internal": a URL's user-info and host, no address
        yield Span(plain.start(), plain.end(), "email")
    for typo in _COMMA_EMAIL.finditer(text):
        if typo.group("tld") in _SAID_TLDS or len(typo.group("tld")) == 2:
            yield Span(typo.start(), typo.end(), "email")
    pos = 0
    if not _AT_SIGN.search(text):
        return
    while found := _OBF_EMAIL.search(text, pos):
        m = found
        pos = m.start() + 1
        local, at, domain = m.group(1), m.group(2), m.group(3)
        if ("@" in at and not at.strip("@ \t") and "." in domain
                and not re.search(r"\s|\b" + _DOT_WORD + r"\b", m.group())):
            continue  # a plain address: found above
        words = re.split(r"[^A-Za-z]+", local.lower())
        # "email me at tomas dot kral at seznam dot cz": the address is not "me at tomas dot kral"
        if local.lower() in _NOT_NAMES or words[0] in _NOT_NAMES:
            continue
        written_out = bool(re.search(r"[\[({<@]|\b" + _DOT_WORD + r"\b", at + domain)
                           or re.search(r"(?i)\b(?:arroba|arobase|chiocciola|klammeraffe)\b", at))
        # "logged in at app.example.com": the word "at" with real dots needs a local part that is
        # no ordinary word
        if not written_out and not re.search(r"[._\d]", local) and _ordinary(local):
            continue
        said = re.search(r"(?i)\b(?:arroba|arobase|chiocciola|klammeraffe|punto|ponto|point|punkt)\b", at + domain)
        # "john -at- gmail -dot- com" says its dots too: "mylog_at_start.py" is a file
        if re.search(r"[-_]", at) and not re.search(r"[-_]" + _DOT_WORD + r"[-_]", domain):
            continue
        # "at home point of sale": a word said for "." other than "dot" closes on a real top-level domain
        if said and re.split(r"[^A-Za-z]+", domain)[-1].lower() not in _SAID_TLDS:
            continue
        yield Span(m.start(), m.end(), "email")
        pos = m.end()


_DOCUMENTATION_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))


#: (a host name's last label ".example", "support@keystonevault.example", is no such word: a
#: deployment's settings name its own hosts under that top-level domain, where "example.com" in
#: prose points at an illustration)
_EXAMPLE_WORD = re.compile(r"(?i)\b(?<!\.)(?:documentation|examples|placeholder|diagram|dummy|fictional|"
                           r"for\s+instance|such\s+as)\b|\bexample\b(?:(?<!\.example)|(?=\.\w))|\be\.g\.")


#: a version's words right before four numbers ("v2.10.1.0", "firmware version 4.2.0.1", "build
#: 1.0.0.12"): a release, not an address
_VERSION_BEFORE = re.compile(r"(?i:(?<![\w])v|\b(?:version|ver|build|release|firmware|fw|rev|revision|patch|sdk|"
                             r"kernel|versi[oó]n|vers[ãa]o|versione|wersj[ai])\.?[ \t:]*)\Z")


def _netmask(value: str) -> bool:
    """Whether ``value`` is an IPv4 subnet mask: ones then zeros ("255.255.240.0")."""
    if ":" in value or not value.startswith("255."):
        return False
    bits = "".join(f"{int(part):08b}" for part in value.split("."))
    return "01" not in bits


def _ips(text: str) -> Iterator[Span]:
    if re.search(r"[\[({]\.|\[dot\]|\(dot\)", text):
        for m in _DEFANGED_IPV4.finditer(text):
            plain = re.sub(r"[\[\](){}]|dot", lambda d: "." if d.group() == "dot" else "", m.group())
            if plain != m.group():
                try:
                    ipaddress.ip_address(plain)
                except ValueError:
                    continue
                yield Span(m.start(), m.end(), "ip_address")
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            value = m.group()
            if pattern is _IPV6 and value.count(":") < 2:
                continue
            try:
                address = ipaddress.ip_address(value)
            except ValueError:
                continue
            # a machine's own loopback, "any address", a multicast group or a subnet mask name no
            # one ("redis://127.0.0.1:6379", "listen 0.0.0.0", "netmask 255.255.255.0")
            if address.is_loopback or address.is_unspecified or address.is_multicast or _netmask(value):
                continue
            if pattern is _IPV4 and _VERSION_BEFORE.search(text, max(0, m.start() - 20), m.start()):
                continue
            # RFC 5737 and 3849 keep ranges for examples: one the text calls an example is nobody's
            # (customers do write them as their own, so the range alone says nothing)
            if any(address in net for net in _DOCUMENTATION_NETWORKS if net.version == address.version) and (
                    _EXAMPLE_WORD.search(text, max(0, m.start() - 80), min(len(text), m.end() + 80))):
                continue
            yield Span(m.start(), m.end(), "ip_address")


def _streets(text: str) -> Iterator[Span]:
    for start, end in addresses.find(text):
        yield Span(start, end, "street_address")
