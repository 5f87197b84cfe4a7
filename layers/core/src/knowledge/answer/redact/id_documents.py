"""Identity documents recognised whole, by checks ``python-stdnum`` has no module for: a
passport's or an identity card's machine-readable zone (ICAO 9303: its check digits decide, and
the document number, the date of birth, the personal number and the holder's name in it are
removed), a Hong Kong, Taiwanese, Singaporean and Emirati identity number (their check digits),
and the driving licences whose number holds the holder's date of birth (Great
Britain's DVLA, Québec)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from stdnum import luhn

from .spans import Span


def _mrz_value(char: str) -> int:
    if char.isdigit():
        return int(char)
    if char == "<":
        return 0
    return ord(char) - 55  # "A" is 10


def _mrz_check(field: str, digit: str) -> bool:
    """The ICAO 9303 check digit of ``field``: weights 7, 3, 1 over its characters, modulo 10
    (a field left empty, all fillers, may carry "<" as its check)."""
    if digit == "<":
        return not field.strip("<")
    total = sum(_mrz_value(c) * (7, 3, 1)[i % 3] for i, c in enumerate(field))
    return digit.isdigit() and total % 10 == int(digit)


#: the second line of a passport's zone (TD3, 44 characters) or of a TD2 card's (36): document
#: number, its check, nationality, date of birth, its check, sex, expiry, its check, then the
#: optional or personal number
_MRZ_TD3_2 = re.compile(r"(?m)^([A-Z0-9<]{9})(\d)([A-Z<]{3})(\d{6})(\d)([MFX<])(\d{6})(\d)([A-Z0-9<]{0,18})[ \t]*$")
#: the first line of a TD1 identity card's zone (30 characters): kind, issuing state, document
#: number, its check, optional data (a national identity number on many cards)
_MRZ_TD1_1 = re.compile(r"(?m)^([ACI][A-Z<])([A-Z<]{3})([A-Z0-9<]{9})(\d)([A-Z0-9<]{0,15})[ \t]*$")
#: its second line: date of birth, its check, sex, expiry, its check, nationality, optional data
_MRZ_TD1_2 = re.compile(r"(?m)^(\d{6})(\d)([MFX<])(\d{6})(\d)([A-Z<]{3})([A-Z0-9<]{0,11})(\d)?[ \t]*$")
#: the line that holds the holder's name: surname, "<<", given names, "<" between words
_MRZ_NAME_LINE = re.compile(r"(?m)^(?:[PV][A-Z<][A-Z<]{3}|[ACI][A-Z<][A-Z<]{3})?([A-Z]+(?:<{1,2}[A-Z]+)+)<*[ \t]*$")
_MRZ_NAME_ONLY = re.compile(r"(?m)^([A-Z]+(?:<{1,2}[A-Z]+)+)<*[ \t]*$")


def _field(text: str, start: int, value: str, kind: str) -> Iterator[Span]:
    """A field of the zone without its fillers, when it holds anything."""
    stripped = value.rstrip("<")
    if stripped.strip("<"):
        lead = len(value) - len(value.lstrip("<"))
        yield Span(start + lead, start + len(stripped), kind)


def _line_before(text: str, start: int) -> tuple[int, str] | None:
    if start < 2:
        return None
    begin = text.rfind("\n", 0, start - 1) + 1
    return begin, text[begin : start - 1]


#: a line of a zone as an OCR reads it: fillers, capitals and digits with spaces between, and
#: "«" for two fillers
_MRZ_OCR_LINE = re.compile(r"(?m)^[ \t]*(?=[A-Z0-9<« \t]*[<«])[A-Z0-9<«][A-Z0-9<« \t]{19,60}$")


def _mrz(text: str) -> Iterator[Span]:
    """The zone's fields, read from the text as written and, where an OCR put spaces in its lines
    or "«" for two fillers, from the lines put right (the spans land on the text as written)."""
    if "<" not in text and "«" not in text:
        return
    yield from _mrz_fields(text)
    chars: list[str] = []
    origin: list[int] = []
    last = 0
    for m in _MRZ_OCR_LINE.finditer(text):
        if not re.search(r"[ \t«]", m.group().strip()):
            continue
        for i in range(last, m.start()):
            chars.append(text[i])
            origin.append(i)
        for i in range(m.start(), m.end()):
            if text[i] in " \t":
                continue
            for c in ("<<" if text[i] == "«" else text[i]):
                chars.append(c)
                origin.append(i)
        last = m.end()
    if not origin:
        return
    for i in range(last, len(text)):
        chars.append(text[i])
        origin.append(i)
    fixed = "".join(chars)
    for span in _mrz_fields(fixed):
        yield Span(origin[span.start], origin[span.end - 1] + 1, span.kind)


def _mrz_fields(text: str) -> Iterator[Span]:
    for m in _MRZ_TD3_2.finditer(text):
        if not (_mrz_check(m.group(1), m.group(2)) and _mrz_check(m.group(4), m.group(5))):
            continue
        yield from _field(text, m.start(1), m.group(1), "national_id")
        yield Span(m.start(4), m.end(4), "date_of_birth")
        personal = m.group(9)
        # the personal number and its check, then the line's own check digit
        if len(personal) >= 3 and _mrz_check(personal[:-2], personal[-2]) and personal[:-2].strip("<"):
            yield from _field(text, m.start(9), personal[:-2], "national_id")
        previous = _line_before(text, m.start())
        if previous is not None and (name := _MRZ_NAME_LINE.fullmatch(previous[1])) is not None:
            yield Span(previous[0] + name.start(1), previous[0] + name.end(1), "person_name")
    for m in _MRZ_TD1_1.finditer(text):
        if not _mrz_check(m.group(3), m.group(4)):
            continue
        yield from _field(text, m.start(3), m.group(3), "national_id")
        yield from _field(text, m.start(5), m.group(5), "national_id")
        nxt = _MRZ_TD1_2.match(text, m.end() + 1) if m.end() < len(text) else None
        if nxt is None or not _mrz_check(nxt.group(1), nxt.group(2)):
            continue
        yield Span(nxt.start(1), nxt.end(1), "date_of_birth")
        yield from _field(text, nxt.start(7), nxt.group(7), "national_id")
        if nxt.end() < len(text) and (name := _MRZ_NAME_ONLY.match(text, nxt.end() + 1)) is not None:
            yield Span(name.start(1), name.end(1), "person_name")


#: a Hong Kong identity card number: one or two letters, six digits and a check digit or "A",
#: the check commonly in brackets ("K547302(0)")
_HKID = re.compile(r"(?<![\w-])([A-Z]{1,2})(\d{6})(?:\(([0-9A])\)|([0-9A]))(?![\w-])")
#: a Taiwanese national identification number: a letter for the place of registration, "1" or
#: "2" for the sex ("8" or "9" for a resident's certificate), seven digits and a check digit
_TAIWAN_ID = re.compile(r"(?<![\w-])[A-Z][1289]\d{8}(?![\w-])")
#: the numbers the letters of a Taiwanese identification number stand for
_TAIWAN_LETTERS = {c: v for c, v in zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True)}


def hkid_valid(letters: str, digits: str, check: str) -> bool:
    """Weights 9 down to 2 over the letters (a single letter led by a space worth 36) and the
    six digits; the check makes the sum a multiple of 11, "A" standing for 10."""
    values = ([36] if len(letters) == 1 else []) + [ord(c) - 55 for c in letters]
    total = sum(v * w for v, w in zip([*values, *map(int, digits)], range(9, 1, -1), strict=True))
    expected = (11 - total % 11) % 11
    return check == ("A" if expected == 10 else str(expected))


def taiwan_id_valid(value: str) -> bool:
    """The letter's two digits and the nine digits, weighted 1, 9, 8 … 1, 1, sum to a multiple of 10."""
    code = _TAIWAN_LETTERS[value[0]]
    digits = [code // 10, code % 10, *map(int, value[1:])]
    return sum(d * w for d, w in zip(digits, (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1), strict=True)) % 10 == 0


#: a Singaporean identity card (NRIC) or foreigner's (FIN) number: S, T, F or G, seven digits
#: and a check letter ("S1234567D")
_SINGAPORE_ID = re.compile(r"(?<![\w-])([STFG])(\d{7})([A-Z])(?![\w-])")


def singapore_id_valid(prefix: str, digits: str, check: str) -> bool:
    """Weights 2, 7, 6, 5, 4, 3, 2 over the digits, 4 more for the numbers of this century (T, G),
    modulo 11, read from the citizens' (S, T) or the foreigners' (F, G) table of letters."""
    total = sum(int(d) * w for d, w in zip(digits, (2, 7, 6, 5, 4, 3, 2), strict=True)) + (4 if prefix in "TG" else 0)
    return check == ("JZIHGFEDCBA" if prefix in "ST" else "XWUTRQPNMLK")[total % 11]


#: an Emirates ID number: 784 (the country), the year of birth, seven digits and a Luhn check
#: digit ("784-1985-1234567-1"; no card's number has that shape)
_EMIRATES_ID = re.compile(r"(?<![\w-])784(-?)(?:19|20)\d{2}\1\d{7}\1\d(?![\w-])")


#: a British (DVLA) driving licence number: the surname's first five letters (padded with 9),
#: the date of birth as decade, month (plus 50 for a woman), day and year, two initials, a digit
#: and two check letters ("MORGA753116SM9IJ")
_DVLA = re.compile(r"(?<![\w-])[A-Z][A-Z9]{4}\d(?:[05][1-9]|[16][0-2])(?:0[1-9]|[12]\d|3[01])\d[A-Z9]{2}\d[A-Z]{2}"
                   r"(?:\d{2})?(?![\w-])")
#: a Québec driving licence number: the surname's initial and four digits, the date of birth
#: (day, month, year) and two digits ("T4216-140387-08")
_QUEBEC_LICENCE = re.compile(r"(?<![\w-])[A-Z]\d{4}[ -](?:0[1-9]|[12]\d|3[01])(?:[05][1-9]|[16][0-2])\d{2}[ -]\d{2}"
                             r"(?![\w-])")


def documents(text: str, cued: Callable[[int], bool]) -> Iterator[Span]:
    """Every identity document of this module in ``text``; ``cued``: whether a word for an
    identity document stands shortly before a position (a Hong Kong number without its check
    in brackets and a Taiwanese number need one: one code in ten or eleven passes their checks)."""
    yield from (span for span in _mrz(text) if span.kind != "person_name")
    for m in _HKID.finditer(text):
        if hkid_valid(m.group(1), m.group(2), m.group(3) or m.group(4)) and (m.group(3) or cued(m.start())):
            yield Span(m.start(), m.end(), "national_id")
    for m in _TAIWAN_ID.finditer(text):
        if taiwan_id_valid(m.group()) and cued(m.start()):
            yield Span(m.start(), m.end(), "national_id")
    for m in _SINGAPORE_ID.finditer(text):
        if singapore_id_valid(m.group(1), m.group(2), m.group(3)) and cued(m.start()):
            yield Span(m.start(), m.end(), "national_id")
    for m in _EMIRATES_ID.finditer(text):
        if luhn.is_valid(m.group().replace("-", "")):
            yield Span(m.start(), m.end(), "national_id")
    for pattern in (_DVLA, _QUEBEC_LICENCE):
        for m in pattern.finditer(text):
            yield Span(m.start(), m.end(), "national_id")


def mrz_names(text: str) -> Iterator[Span]:
    """The holder's name in a machine-readable zone whose check digits pass ("GARCIA<VAZQUEZ<<JUAN"):
    the zone says it is a name, so no rule on how a name is written applies."""
    yield from (span for span in _mrz(text) if span.kind == "person_name")
