"""What redaction returns (``Span``, ``Redaction``), the kinds it removes and their ranking
(``KINDS``, ``_PRIORITY``), and the small helpers several detectors share (the shapes of a date
and of a range of years, which are no number to redact; the entropy of a token)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

#: The kinds of data removed (overlapping spans go to the kind ranked first in ``_PRIORITY``).
KINDS: tuple[str, ...] = (
    "email", "secret", "crypto_wallet", "iban", "card", "account_number", "national_id", "ip_address", "phone",
    "street_address", "amount", "person_name", "date_of_birth", "username", "reference",
)
#: High-entropy strings are secrets too, but a wallet, IBAN, card or account number that
#: happens to look random keeps its own kind: they rank after those, as this internal kind.
_GENERIC_SECRET = "secret?"
_PRIORITY = {k: i for i, k in enumerate(("email", "secret", "crypto_wallet", "iban", "card", "account_number",
                                          "national_id",
                                          _GENERIC_SECRET, "ip_address", "phone", "date_of_birth", "street_address",
                                          "username", "person_name", "amount", "reference"))}
#: Regions whose national phone formats are recognised (international +NN numbers always are).
DEFAULT_PHONE_REGIONS: tuple[str, ...] = ("US", "GB", "DE", "FR", "ES", "IT", "NL", "IN", "AU", "BR")

#: a date and a range of years written in figures: no telephone number, card code or account
#: number (``phones``, ``payment``, ``users``)
_DATE_SHAPE = re.compile(r"\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d{2}|(?:19|20)\d{2}[./-]\d{1,2}[./-]\d{1,2}")
_YEAR_RANGE = re.compile(r"(?:19|20)\d{2}\s*[-–/]\s*(?:(?:19|20)\d{2}|\d{2})")


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


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())
