"""Redaction of personal and secret data in ticket text, before anything else sees it
(logs included): the text is redacted first and only the redacted text travels on.

Each kind has a detector; where a checksum or a numbering plan exists a well-kept library
decides (``phonenumbers`` for telephone numbers, ``python-stdnum`` for card numbers (Luhn),
IBANs and Bitcoin addresses, ``ipaddress`` for IP addresses); patterns only propose
candidates. Spans found by several detectors go to the best-ranked kind (``_PRIORITY``).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import phonenumbers
from stdnum import bitcoin, iban, luhn
from stdnum.exceptions import ValidationError

#: The kinds of data removed (overlapping spans go to the kind ranked first in ``_PRIORITY``).
KINDS: tuple[str, ...] = (
    "email", "secret", "crypto_wallet", "iban", "card", "account_number", "ip_address", "phone",
    "street_address", "amount",
)
#: High-entropy strings are secrets too, but a wallet, IBAN, card or account number that
#: happens to look random keeps its own kind: they rank after those, as this internal kind.
_GENERIC_SECRET = "secret?"
_PRIORITY = {k: i for i, k in enumerate(("email", "secret", "crypto_wallet", "iban", "card", "account_number",
                                          _GENERIC_SECRET, "ip_address", "phone", "street_address", "amount"))}
#: Regions whose national phone formats are recognised (international +NN numbers always are).
DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "IN", "AU", "BR")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Redaction:
    text: str
    counts: dict[str, int]
    spans: tuple[Span, ...] = field(default=())


# -- candidates -------------------------------------------------------------------------------

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_SECRET_PREFIXED = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|"
    r"xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|"
    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|"
    r"(?<=(?:api|ess|ret|ate)_key=)\S{8,}|(?<=(?:api|ess|ret|ate)-key=)\S{8,}|(?<=(?:api|ess|ret|ate)_key:)\S{8,}"
    r")",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?i)\b(?:bearer|token|password|passwd|pwd|secret)\b\s*[:=]?\s*([^\s,;]{8,})")
_LONG_TOKEN = re.compile(r"(?<![\w/.-])[A-Za-z0-9_+/-]{20,}={0,2}(?![\w/.=-])")
_BASE58 = "1-9A-HJ-NP-Za-km-z"
_WALLETS = [
    (re.compile(rf"(?<![\w])[13][{_BASE58}]{{25,34}}(?![\w])"), "btc"),
    (re.compile(r"(?<![\w])(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71}(?![\w])"), "btc"),
    (re.compile(r"(?<![\w])0x[0-9a-fA-F]{40}(?![\w])"), "any"),
    (re.compile(r"(?<![\w])(?:0x)?[0-9a-fA-F]{64}(?![\w])"), "any"),  # transaction hashes
    (re.compile(rf"(?<![\w])[48][{_BASE58}]{{94,105}}(?![\w])"), "any"),  # Monero
    (re.compile(rf"(?<![\w])[LM][{_BASE58}]{{26,33}}(?![\w])"), "base58"),  # Litecoin
    (re.compile(r"(?<![\w])ltc1[02-9ac-hj-np-z]{11,71}(?![\w])"), "any"),
    (re.compile(rf"(?<![\w])T[{_BASE58}]{{33}}(?![\w])"), "base58"),  # Tron
    (re.compile(rf"(?<![\w])[{_BASE58}]{{32,44}}(?![\w])"), "base58"),  # Solana and other base58 keys
]
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_ACCOUNT = re.compile(
    r"(?i)\b(?:account|acct|a/c|acc)\.?\s*(?:number|no\.?|num|#)?\s*(?:is|:|=|#)?\s*((?:\d[ -]?){5,17}\d)\b"
    r"|\b(?:routing|aba|bsb|transit|sort)\s*(?:code|number|no\.?|#)?\s*(?:is|:)?\s*(\d{2}[ -]?\d{2}[ -]?\d{2,5})\b"
)
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\d|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w:])")
_STREET_SUFFIX = (r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|Blvd|Drive|Dr|Court|Ct|Way|Place|Pl|"
                  r"Terrace|Close|Square|Sq|Parkway|Pkwy|Highway|Hwy|Crescent|Row|Gardens|Grove)")
_STREET = re.compile(
    r"\b\d{1,5}[A-Za-z]?,?\s+(?:[A-Z][A-Za-z'-]+\.?\s+){1,4}" + _STREET_SUFFIX + r"\b\.?"
    r"(?:,?\s*(?:Apt|Apartment|Suite|Unit|Flat|Fl|#)\.?\s*#?\s*[\w-]+)?"
    r"(?:,\s*[A-Z][A-Za-z'-]+(?![\w])(?:\s[A-Z][A-Za-z'-]+(?![\w])){0,2})?"
    r"(?:,?\s*(?:[A-Z]{2}\s+\d{5}(?:-\d{4})?|\d{4,5}|[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}))?"
    r"|\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|platz|allee|gasse|ring|damm|straat|laan|gracht|plein|"
    r"vej|gatan|gata|veien)\s+\d{1,4}[a-z]?(?:,\s*\d{4,5}\s+[A-ZÄÖÜ][a-zäöüß]+)?"
    r"|\b(?:Calle|Avenida|Av\.|Rue|Via|Viale|Piazza|Corso|Rua|Plaza|Paseo|Carrer|Chemin|Allée|Place)\s+"
    r"(?:[A-Za-zÀ-ÿ'-]+\s+){0,4}?\d{1,4}[a-z]?(?![\w])(?:,\s*\d{4,5}\s+[A-ZÀ-Ý][A-Za-zÀ-ÿ-]+)?"
)
_CURRENCY_WORDS = (r"USD|EUR|GBP|CAD|AUD|CHF|JPY|BTC|ETH|USDT|USDC|LTC|XMR|TRX|SOL|DOGE|XRP|dollars?|euros?|"
                   r"pounds?|bucks")
_AMOUNT = re.compile(
    rf"(?:-?[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|K|m|M)\b)?|\b\d[\d,]*(?:\.\d+)?\s?(?:{_CURRENCY_WORDS})\b)"
)
_PERSONAL = re.compile(
    r"(?i)\b(?:my|mine|your|yours|i|i'm|i've|i'd|me|balance|balances|wallet|deposited|withdrew|withdrawn|sent|"
    r"received|lost|refund|refunded|owe|owed|credited|debited|missing|stolen|transferred)\b"
)
#: "the withdrawal of €500": a particular transaction, so someone's
_THEIR_TRANSACTION = re.compile(
    r"(?i)\b(?:the|this|that|a|one)\s+(?:withdrawal|deposit|transfer|payment|charge|chargeback|payout|transaction|"
    r"purchase|wire)s?\s+(?:of|for)\s*$"
)
_POLICY = re.compile(r"(?i)\b(?:minimum|maximum|min|max|fee|fees|limit|limits|cost|costs|price|at least|up to|"
                     r"more than|less than)\b")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+|$)")


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _secrets(text: str) -> Iterator[Span]:
    for m in _SECRET_PREFIXED.finditer(text):
        yield Span(m.start(), m.end(), "secret")
    for m in _BEARER.finditer(text):
        yield Span(m.start(1), m.end(1), "secret")
    for m in _LONG_TOKEN.finditer(text):
        token = m.group()
        classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
        if classes >= 2 and re.search(r"\d", token) and _entropy(token) >= 3.5:
            yield Span(m.start(), m.end(), _GENERIC_SECRET)


def _wallets(text: str) -> Iterator[Span]:
    for pattern, check in _WALLETS:
        for m in pattern.finditer(text):
            value = m.group()
            if check == "btc" and not bitcoin.is_valid(value):
                continue
            if check == "base58" and not (re.search(r"\d", value) and re.search(r"[a-z]", value)
                                          and re.search(r"[A-Z]", value)):
                continue
            yield Span(m.start(), m.end(), "crypto_wallet")


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            yield Span(m.start(), m.end(), "card")


def _iban_valid(value: str) -> bool:
    """The IBAN check digits (ISO 7064 mod 97) and the country's length; a national check
    digit that fails (a mistyped account) still leaves personal data worth removing."""
    try:
        iban.validate(value, check_country=False)
    except ValidationError:
        return False
    return True


def _ibans(text: str) -> Iterator[Span]:
    for m in _IBAN.finditer(text):
        value = m.group()
        # the pattern may run into the next word: the longest valid prefix wins
        for end in range(len(value), 14, -1):
            if value[end - 1] != " " and _iban_valid(value[:end]):
                yield Span(m.start(), m.start() + end, "iban")
                break


def _accounts(text: str) -> Iterator[Span]:
    for m in _ACCOUNT.finditer(text):
        group = 1 if m.group(1) else 2
        yield Span(m.start(group), m.end(group), "account_number")


def _ips(text: str) -> Iterator[Span]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            value = m.group()
            if pattern is _IPV6 and value.count(":") < 2:
                continue
            try:
                ipaddress.ip_address(value)
            except ValueError:
                continue
            yield Span(m.start(), m.end(), "ip_address")


def _phones(text: str, regions: Sequence[str]) -> Iterator[Span]:
    for region in regions:
        for match in phonenumbers.PhoneNumberMatcher(text, region):
            yield Span(match.start, match.end, "phone")


def _streets(text: str) -> Iterator[Span]:
    for m in _STREET.finditer(text):
        yield Span(m.start(), m.end(), "street_address")


def _amounts(text: str) -> Iterator[Span]:
    """Amounts tied to a person (their balance, their deposit): an amount is redacted when a
    personal or account word is near it in its sentence, unless it reads as a policy figure
    ("the minimum is $10") said of no one in particular."""
    for sentence in _SENTENCE.finditer(text):
        body, offset = sentence.group(), sentence.start()
        for m in _AMOUNT.finditer(body):
            before = body[max(0, m.start() - 60) : m.start()]
            after = body[m.end() : m.end() + 40]
            near_before = " ".join(before.split()[-5:])
            if _POLICY.search(near_before) and not re.search(r"(?i)\b(?:my|your)\b", near_before):
                continue
            if _PERSONAL.search(before) or _PERSONAL.search(after) or _THEIR_TRANSACTION.search(before):
                yield Span(offset + m.start(), offset + m.end(), "amount")


def find_spans(text: str, *, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> list[Span]:
    """Non-overlapping spans of personal or secret data, in text order."""
    found = [
        *(Span(m.start(), m.end(), "email") for m in _EMAIL.finditer(text)),
        *_secrets(text), *_wallets(text), *_ibans(text), *_cards(text), *_accounts(text), *_ips(text),
        *_phones(text, phone_regions), *_streets(text), *_amounts(text),
    ]
    # the winning kind first, then the longest span
    found.sort(key=lambda s: (_PRIORITY[s.kind], -(s.end - s.start), s.start))
    taken: list[Span] = []
    for span in found:
        if all(span.end <= t.start or span.start >= t.end for t in taken):
            taken.append(span if span.kind != _GENERIC_SECRET else Span(span.start, span.end, "secret"))
    return sorted(taken, key=lambda s: s.start)


def redact(text: str, *, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS) -> Redaction:
    """``text`` with every span replaced by ``[kind]``, and how many of each kind."""
    spans = find_spans(text, phone_regions=phone_regions)
    out, last = [], 0
    for span in spans:
        out.append(text[last : span.start])
        out.append(f"[{span.kind}]")
        last = span.end
    out.append(text[last:])
    counts = Counter(s.kind for s in spans)
    return Redaction("".join(out), {k: counts[k] for k in KINDS if counts[k]}, tuple(spans))
