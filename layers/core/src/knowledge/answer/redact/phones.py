"""Telephone numbers: international and national numbers checked by ``phonenumbers`` (the
regions of ``DEFAULT_PHONE_REGIONS`` always, more after a word for a telephone), and numbers
read aloud as words."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import phonenumbers

from .spans import _DATE_SHAPE, _YEAR_RANGE, Span

#: regions whose national formats are read only after a word for a telephone ("mobile", "手机")
_CUED_PHONE_REGIONS: tuple[str, ...] = (
    "CA", "MX", "AR", "CL", "CO", "PE", "IE", "PT", "BE", "CH", "AT", "PL", "CZ", "SK", "HU", "RO", "BG", "GR",
    "SE", "NO", "DK", "FI", "TR", "RU", "UA", "IL", "AE", "SA", "EG", "MA", "NG", "KE", "ZA", "GH", "PK", "BD",
    "CN", "HK", "TW", "JP", "KR", "SG", "MY", "TH", "VN", "PH", "ID", "NZ")
_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\d])")
_DOUBLE_ZERO = re.compile(r"(?<![\w+.,/-])00[1-9]\d{0,3}(?:[ .-]?\d{2,5}){2,5}(?![\w.,/-]|[.,]\d)")

#: the digits said as words in English, Spanish, Portuguese, French, German and Italian: a
#: telephone or an account number read aloud (a call's transcript, a voice message) is a run of them
_DIGIT_WORD = (r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|"
               r"cero|uno|una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|"
               r"um|dois|duas|três|quatro|sete|oito|nove|"
               r"zéro|un|deux|trois|quatre|cinq|sept|huit|neuf|"
               r"null|eins|zwei|zwo|drei|vier|fünf|sechs|sieben|acht|neun|"
               r"due|tre|quattro|cinque|sei|sette|otto)")
_SPOKEN_NUMBER = re.compile(
    rf"(?i)\b(?:(?:double|triple|doble|doppio|doppel)[ -]+)?{_DIGIT_WORD}"
    rf"(?:[ ,-]+(?:(?:double|triple|doble|doppio|doppel)[ -]+)?{_DIGIT_WORD}){{5,}}\b")
_PHONE_CUE = re.compile(
    r"(?i)(?:\b(?:phone|mobile|cell|cellphone|tel|telephone|whats\s?app|call|ring|text|sms|reach|handy|telefon|"
    r"festnetz|tel[ée]fono|telefone|cellulare|t[ée]l[ée]phone|portable|m[óo]vil|celular|kom[óo]rk|mobil|gsm|"
    r"puhelin|telefonnummer|telefoonnummer|tlf|mob|cel)\w*|手机|電話|携帯|电话|전화|휴대폰|телефон|мобильн)")


def _phones(text: str, regions: Sequence[str]) -> Iterator[Span]:
    for region in regions:
        for match in phonenumbers.PhoneNumberMatcher(text, region):
            if _DATE_SHAPE.fullmatch(match.raw_string):  # "birthday 07-03-1985" is a date
                continue
            if re.fullmatch(r"\d{5}-\d{4}", match.raw_string) and re.search(r"\b[A-Z]{2}\s+$", text[: match.start]):
                continue  # "CA 95131-2021" is a ZIP+4 code
            if re.fullmatch(r"(?:19|20)\d{2}/\d{3,8}|\d{1,2}/\d{1,2}[ \t]*[-–][ \t]*\d{1,2}/\d{1,2}|"
                            r"\d{1,3}(?:\.\d{1,3}){3}", match.raw_string):
                continue  # "FT 2024/118822" an invoice's year and number, "04/01 - 04/30" a period,
                # "255.255.255.0" a subnet mask (an IP address is ``contact``'s)
            yield Span(match.start, match.end, "phone")
    # after a word that says a telephone number follows, every other region's national format
    # is read too ("我的手机号是138 0013 8000", "mobile 0412 345 678")
    for cue in _PHONE_CUE.finditer(text):
        window = text[cue.end() : cue.end() + 40]
        if not re.search(r"\d{2}", window):
            continue
        for region in _CUED_PHONE_REGIONS:
            if region in regions:
                continue
            for match in phonenumbers.PhoneNumberMatcher(window, region):
                if not _YEAR_RANGE.fullmatch(match.raw_string):  # "open 2024-2025"
                    yield Span(cue.end() + match.start, cue.end() + match.end, "phone")
        # a local number without its area code ("call me at 555-0134")
        for m in re.finditer(r"(?<![\d.,/-])\d{3}[-. ]\d{4}(?![\d.,/-])", window[:25]):
            yield Span(cue.end() + m.start(), cue.end() + m.end(), "phone")
    # a country code after the international prefix "00" ("0044 7911 653 208"): read as "+44 …"
    for m in _DOUBLE_ZERO.finditer(text):
        if re.search(r"\d[\w]*[ .-]\Z", text[max(0, m.start() - 12) : m.start()]):
            continue  # the middle of a longer run of groups ("DE00 3704 0044 0532 …")
        digits = re.sub(r"\D", "", m.group())[2:]
        try:
            number = phonenumbers.parse("+" + digits, None)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_possible_number(number) and not _DATE_SHAPE.fullmatch(m.group()):
            yield Span(m.start(), m.end(), "phone")
    if "+" in text:
        # a number written with its country code is a telephone number even in a range the
        # numbering plan keeps for fiction or has not allocated yet: possible is enough
        for match in phonenumbers.PhoneNumberMatcher(text, "ZZ", leniency=phonenumbers.Leniency.POSSIBLE):
            if match.raw_string.startswith("+") and len(re.sub(r"\D", "", match.raw_string)) >= 8:
                yield Span(match.start, match.end, "phone")
        # and one the library does not split (a Mexican mobile's old "1"): a plus, a country
        # code and eight to fifteen digits in groups
        for m in _INTERNATIONAL.finditer(text):
            if 8 <= len(re.sub(r"\D", "", m.group())) <= 15:
                yield Span(m.start(), m.end(), "phone")


def _spoken_phones(text: str) -> Iterator[Span]:
    """A number said in words ("zero seven seven zero … double zero one"): seven or more digits."""
    for m in _SPOKEN_NUMBER.finditer(text):
        words = re.findall(r"[^\W\d_]+", m.group().lower())
        doubles = sum(w in ("double", "doble", "doppio", "doppel") for w in words)
        digits = len(words) - doubles - words.count("triple") + doubles + 2 * words.count("triple")
        if digits >= 7:
            yield Span(m.start(), m.end(), "phone")
