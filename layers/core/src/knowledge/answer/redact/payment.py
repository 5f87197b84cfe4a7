"""Card numbers (Luhn) and a card's expiry; the codes that open a card or an account after their
cue (a card's security code, a PIN, 2FA backup and one-time codes), which are secrets; IBANs
(checked by ``python-stdnum``) and crypto-currency wallets (Bitcoin checked by ``python-stdnum``,
SS58 by its BLAKE2b checksum)."""

from __future__ import annotations

import hashlib
import importlib.resources
import re
from collections.abc import Iterator
from functools import cache

from stdnum import bitcoin, iban, luhn
from stdnum.exceptions import ValidationError

from .spans import _DATE_SHAPE, _YEAR_RANGE, Span, _entropy

#: a code that opens an account: a 2FA backup code, a recovery or one-time code ("my backup code is
#: 8241-9930", "OTP: 552 019")
_ACCESS_CODE = re.compile(
    r"(?i:\b(?:backup|recovery|2fa|mfa|otp|one[- ]time|verification|login|auth(?:entication)?|sms)\s+"
    r"(?:codes?|pins?|keys?)\b|\botp\b)(?:[ \t]+(?:saya|aku|ku|mi|meu|minha|ko|mo)\b)?\s*(?:is|are|was|:|=)?\s*"
    r"((?=[A-Za-z0-9]{0,9}\d)[A-Za-z0-9]{3,10}(?:[ -](?=[A-Za-z0-9]{0,9}\d)[A-Za-z0-9]{3,10}){0,3})(?![\w-])")
#: the security code and expiry printed on a card ("CVV 381", "exp 09/27")
_CARD_CODE = re.compile(
    r"(?i:\b(?:cvv2?|cvc2?|csc|cid|security\s+code|card\s+code|prüfnummer|código\s+de\s+seguridad|cryptogramme)"
    r"\s*(?:is|:|=)?\s*)(\d{3,4})\b")
#: a PIN said with its number ("I set the PIN to 4821", "Geheimzahl: 0815")
_PIN = re.compile(r"(?i:\b(?:pin(?:[ -]?code)?|passcode|geheimzahl|code\s+pin|código\s+pin)\s*"
                  r"(?:is|was|to|:|=|ist|est|es|è|é)?\s*)(\d{4,8})(?![\d.,:/-])")
#: a code handed to someone ("i gave him code 448192"), or a number told after a PIN or a code is
#: asked for ("counter is asking for PIN, i told him 88412207")
_CODE_GIVEN = re.compile(
    r"(?i:\b(?:gave|give|given|told|tell|shared|share|sent|send|read|entered|typed)\s+"
    r"(?:(?:him|her|them|it|the\s+\w+)\s+)?(?:(?:the|my|our)\s+)?(?:code|otp|pin|passcode)\s*(?:is|was|:|=)?\s*"
    r"|\b(?:pin|otp|code|passcode)\b[^.\n]{0,40}?\b(?:told|gave|sent|said)\s+(?:him|her|them)\s*:?\s*"
    # (or the next sentence opens on "it's": "the phone-support PIN as well? It's 4471")
    r"|\b(?:pin|passcode)\b[^.\n]{0,40}?[?.!][ \t]*(?:it'?s|it\s+is)[ \t]+)"
    r"(?!(?:19|20)\d\d\b)(\d{4,8})(?![\d,:/-]|\.\d)")
_CARD_EXPIRY = re.compile(
    r"(?i:\b(?:exp(?:iry|iration|ires)?(?:\s+date)?|valid\s+(?:thru|through|until)|gültig\s+bis|vence|"
    r"date\s+d'expiration|scadenza)\.?\s*(?:is|:|=)?\s*)((?:0?[1-9]|1[0-2])\s?/\s?(?:\d{2}|20\d{2}))(?![\d/])")

_BASE58 = "1-9A-HJ-NP-Za-km-z"
_WALLETS = [
    (re.compile(rf"(?<![\w])[13][{_BASE58}]{{25,34}}(?![\w])"), "btc"),
    (re.compile(r"(?<![\w])(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71}(?![\w])"), "btc"),
    (re.compile(r"(?<![\w])0x[0-9a-fA-F]{40}(?![\w])"), "any"),
    (re.compile(r"(?<![\w])(?:0x)?[0-9a-fA-F]{64}(?![\w])"), "any"),  # transaction hashes
    (re.compile(rf"(?<![\w])[48][{_BASE58}]{{94,105}}(?![\w])"), "any"),  # Monero
    (re.compile(rf"(?<![\w])[LM][{_BASE58}]{{26,33}}(?![\w])"), "base58"),  # Litecoin
    (re.compile(r"(?<![\w])ltc1[02-9ac-hj-np-z]{11,71}(?![\w])"), "any"),
    # the bech32 addresses of any chain ("cosmos1…", "osmo1…", "addr1…", "terra1…", "inj1…"): a
    # prefix of letters, a "1" and 38 or more characters of the bech32 alphabet (no "b", "i", "o"
    # or "1"), which no word or file name has
    (re.compile(r"(?<![\w])[a-z]{2,20}1[02-9ac-hj-np-z]{38,110}(?![\w])"), "bech32"),
    (re.compile(rf"(?<![\w])T[{_BASE58}]{{33}}(?![\w])"), "tron"),
    (re.compile(rf"(?<![\w])[{_BASE58}]{{32,44}}(?![\w])"), "base58"),  # Solana and other base58 keys
    # the SS58 addresses of Polkadot, Kusama and every Substrate chain: 46 to 48 characters whose
    # last two bytes are a BLAKE2b checksum (``_ss58_valid``)
    (re.compile(rf"(?<![\w])[{_BASE58}]{{45,50}}(?![\w])"), "ss58"),
]


def _ss58_valid(value: str) -> bool:
    """An SS58 address: a prefix of one or two bytes, a 32-byte key and two bytes of
    BLAKE2b-512 over "SS58PRE", the prefix and the key."""
    try:
        raw = bitcoin.b58decode(value)
    except (KeyError, ValueError):
        return False
    if len(raw) not in (35, 36):
        return False
    return hashlib.blake2b(b"SS58PRE" + raw[:-2], digest_size=64).digest()[:2] == raw[-2:]


_CARD = re.compile(r"(?<![\d+-])\d(?:[ -]?\d){12,18}(?![\d-])|(?<![\d.])\d{4}(?:\.\d{4}){2}\.\d{1,7}(?![\d.])")
#: (its groups may run onto the next line, as a narrow form or an OCR leaves them: the check
#: digits decide)
_IBAN = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z]{2}\d{2}(?:(?:[ -]|[ \t]*\n)?[A-Z0-9]){11,30}|"
                   r"[a-z]{2}\d{2}(?:[ -]?[a-z0-9]){11,30})(?![A-Za-z0-9])")


#: a code of the shape backup codes are printed in ("4827-1937", "a7f3-9k2m"), read up to 200
#: characters after the words for such codes ("I still have the printed backup codes … the
#: first one is 4827-1937")
_CODE_CUE = re.compile(r"(?i)\b(?:(?:backup|recovery|2fa|mfa|one[- ]time|emergency|scratch)\s+codes?|"
                       r"zugangscodes?|sicherungscodes?|backup-codes?|wiederherstellungscodes?|"
                       r"codes?\s+de\s+(?:secours|récupération|sauvegarde)|c[óo]digos?\s+de\s+(?:respaldo|recuperaci[óo]n|"
                       r"seguran[çc]a|backup)|codic[ei]\s+di\s+(?:backup|recupero)|herstelcodes?|back-?upcodes?|"
                       # the same words in more of the languages tickets come in: Romanian, Turkish,
                       # Indonesian, Polish, Czech, Vietnamese, Russian, Ukrainian, Hungarian, Hebrew,
                       # Arabic, Thai
                       r"coduri(?:le)?\s+de\s+(?:rezerv[ăa]|recuperare|backup)|(?:yedek|kurtarma)\s+kod\w*|"
                       r"kode\s+(?:cadangan|pemulihan)|kod\w*\s+(?:zapasow\w*|odzyskiwania)|záložní\s+kód\w*|"
                       r"mã\s+(?:dự\s+phòng|khôi\s+phục)|резервн\w+\s+код\w*|код\w*\s+(?:восстановления|відновлення)|"
                       r"tartalék\s?kód\w*|קודי\s+(?:גיבוי|שחזור)|(?:رموز|أكواد)\s+(?:الاحتياط|الاسترداد|الاحتياطية)|"
                       r"รหัสสำรอง)\b"
                       # and in Japanese, Korean and Chinese, where no space ends a word
                       r"|バックアップ[・ ]?コード|リカバリー[・ ]?コード|復旧コード|백업[ \t]*코드|복구[ \t]*코드|"
                       r"备用码|恢复码|備用碼|恢復碼")
_PRINTED_CODE = re.compile(r"(?<![\w.,/:-])(?=[a-zA-Z0-9]{0,4}\d)[a-zA-Z0-9]{4,5}[- ](?=[a-zA-Z0-9]{0,4}\d)"
                           r"[a-zA-Z0-9]{4,5}(?![\w/:-]|[.,]\d)")


#: a telephone's start before two groups of digits ("phone +49 (0)30 8849 2017"): no printed code
_PHONE_BEFORE = re.compile(r"(?i)(?:\+\d|\(0\)|\bphone\b|\btel\b|\bmobile\b|whats\s?app)[^\n]{0,14}\Z")


def _card_codes(text: str) -> Iterator[Span]:
    for pattern in (_CARD_CODE, _PIN, _CODE_GIVEN):
        for m in pattern.finditer(text):
            yield Span(m.start(1), m.end(1), "secret")
    reach = -1
    for cue in _CODE_CUE.finditer(text):
        if cue.end() <= reach:
            continue
        reach = cue.end() + 200
        for m in _PRINTED_CODE.finditer(text, cue.end(), min(len(text), reach)):
            if " " in m.group() and re.match(r" \d", text[m.end() : m.end() + 2]):
                continue  # two groups of a longer number spaced alike ("マイナンバー 4830 1927 5648")
            value = m.group()
            # (four digits, or a digit in each half of a code in capitals: "H4TP-8WZR")
            digits = sum(c.isdigit() for c in value) >= 4 or (
                value.upper() == value and all(re.search(r"\d", half) for half in re.split(r"[- ]", value)))
            if digits and not _DATE_SHAPE.fullmatch(m.group()) \
                    and not _YEAR_RANGE.fullmatch(m.group()) and not _PHONE_BEFORE.search(
                        text, max(0, m.start() - 24), m.start()):
                yield Span(m.start(), m.end(), "secret")
    for m in _ACCESS_CODE.finditer(text):
        if sum(c.isdigit() for c in m.group(1)) >= 4:
            yield Span(m.start(1), m.end(1), "secret")
    for m in _CARD_EXPIRY.finditer(text):
        yield Span(m.start(1), m.end(1), "card")


def _wallets(text: str) -> Iterator[Span]:
    for pattern, check in _WALLETS:
        for m in pattern.finditer(text):
            value = m.group()
            # a bech32 address mistyped or made up keeps its shape: one case, 42 or 62 characters
            bech32 = value[:3].lower() == "bc1" and len(value) in (42, 62) and value in (value.lower(), value.upper())
            if check == "btc" and not bitcoin.is_valid(value) and not bech32:
                continue
            if check == "base58" and not (re.search(r"\d", value) and re.search(r"[a-z]", value)
                                          and re.search(r"[A-Z]", value)):
                continue
            # a Tron address may have no digit at all: its case changes as no identifier's do
            if check == "tron" and not (re.search(r"[a-z]", value) and (
                    re.search(r"\d", value) or len(re.findall(r"[a-z][A-Z]|[A-Z][a-z]", value)) >= 10)):
                continue
            if check == "bech32" and (sum(c.isdigit() for c in value) < 4 or _entropy(value) < 3.8):
                continue
            if check == "ss58" and not _ss58_valid(value):
                continue
            yield Span(m.start(), m.end(), "crypto_wallet")


def _cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        # (fifteen digits from 784 and a year: an Emirates ID, Luhn-checked too, ``documents``)
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits) and not re.fullmatch(r"784(?:19|20)\d{10}", digits):
            yield Span(m.start(), m.end(), "card")
    yield from _masked_cards(text)


def _iban_valid(value: str) -> bool:
    """The IBAN check digits (ISO 7064 mod 97) and the country's length; a national check
    digit that fails (a mistyped account) still leaves personal data worth removing."""
    try:
        iban.validate(value.upper().replace("-", ""), check_country=False)
    except ValidationError:
        return False
    return True


@cache
def _iban_lengths() -> dict[str, int]:
    """Each country's IBAN length, from the registry ``python-stdnum`` ships ("CH": 21)."""
    lengths = {}
    registry = importlib.resources.files("stdnum").joinpath("iban.dat").read_text(encoding="utf-8")
    for m in re.finditer(r'(?m)^([A-Z]{2}) .*?bban="([^"]+)"', registry):
        lengths[m.group(1)] = 4 + sum(int(n) for n in re.findall(r"(\d+)!?[nac]", m.group(2)))
    return lengths


#: the words for an IBAN or a bank account before one, in the languages tickets come in: an
#: IBAN after them keeps the customer's account even when a digit was dropped or mistyped
_IBAN_CUE = re.compile(r"(?i:\b(?:iban|bic|kont[oa]\w*|\w+-konto|account|acct|compte|cuenta|conta|conto|rekening|"
                       r"rachun\w*|[úu][čc]et\w*|bank\w*|banque|banco|payout|auszahl\w*|virement|"
                       r"überweisung|transferencia|bonifico|rib|sepa|"
                       # a withdrawal's or a payout's words: the account it goes to follows
                       r"withdraw\w*|opname|uitbetaling|retrait|retiro|prelievo|levantamento|wypłat\w*|výběr\w*)\b)"
                       r"[^\n]{0,30}\Z")


def _ibans(text: str) -> Iterator[Span]:
    for m in _IBAN.finditer(text):
        value = m.group()
        # the pattern may run into the next word: the longest valid prefix wins
        for end in range(len(value), 14, -1):
            if value[end - 1] not in " -\t\n" and _iban_valid(re.sub(r"\s", "", value[:end])):
                yield Span(m.start(), m.start() + end, "iban")
                break
        else:
            # an IBAN whose check fails (a digit dropped, two swapped) after a word for one: a
            # registered country's code, within two characters of that country's length
            value = value.split("\n")[0].rstrip(" \t-")
            # (a word of capitals after it is no part of it: "CH93 0076 2011 6238 5295 AHV-Nummer")
            value = re.sub(r"(?:[ -][A-Z]+)+\Z", "", value)
            compact = re.sub(r"[ -]", "", value).upper()
            expected = _iban_lengths().get(compact[:2])
            # (check digits "00", "01" and "99" are never issued: an IBAN made up to show one)
            # (right after the word "IBAN" itself, any length an IBAN may have)
            named = re.search(r"(?i)\biban\b[ \t]*[:#=-]?[ \t]*\Z", text[max(0, m.start() - 12) : m.start()])
            if (expected is not None and (abs(len(compact) - expected) <= 2 or (named and 15 <= len(compact) <= 34))
                    and value[:2].isupper() and 2 <= int(compact[2:4]) <= 98
                    and (_IBAN_CUE.search(text, max(0, m.start() - 40), m.start())
                         # (or beside its own correction: a valid IBAN of the same bank in the text)
                         or any(other.start() != m.start() and re.sub(r"\s", "", other.group())[:8].upper()
                                == compact[:8] and _iban_valid(re.sub(r"\s", "", other.group()))
                                for other in _IBAN.finditer(text)))):
                yield Span(m.start(), m.start() + len(value), "iban")


#: a card's number masked but its last four digits ("•••• 8834", "**** **** **** 4471",
#: "XXXX-XXXX-XXXX-1234"): they and the mask go
_MASKED_CARD = re.compile(r"(?<![\w•●*·])(?:(?:[•●*·]{3,4}|[xX]{4})[ -]?){1,3}\d{4}(?![\d.,]\d|\d)"
                          # (two after the card's brand: "Visa ••4471")
                          r"|(?:(?<=(?i:visa)[ \t])|(?<=(?i:amex)[ \t])|(?<=(?i:card)[ \t])|(?<=(?i:mastercard)[ \t]))"
                          r"[•●*·]{2}[ ]?\d{4}(?![\d.,]\d|\d)")
#: the last four digits of a card after the words for them, masked as a statement or a receipt
#: prints them or not ("last 4 of card on file ...2290", "card ending in ****0417", "the card on
#: file ending 5338": they tell whose card it is beside the rest of a ticket)
_CARD_LAST_FOUR = re.compile(
    r"(?i:\b(?:last[ -]?(?:4|four)(?:\s+(?:digits?|of|the|my|card|on|file)){0,5}|"
    r"(?:card|visa|mastercard|amex|debit|credit)(?:\s+card)?(?:\s+on\s+file)?\s+(?:ending|ends)(?:\s+(?:in|with))?)"
    r"[ \t]*(?:is|are|was|:|=|-)?[ \t]*)((?:[•●*·.xX]{2,4}[ -]?)?\d{4})(?![\d.,]\d|\d)")


def _masked_cards(text: str) -> Iterator[Span]:
    for pattern in (_MASKED_CARD, _CARD_LAST_FOUR):
        for m in pattern.finditer(text):
            group = 1 if pattern.groups else 0
            yield Span(m.start(group), m.end(group), "card")


#: the last digits of a card, an account or a telephone after the words for "ending in" in the
#: languages tickets come in ("Carte qui finit par 4417", "la carta che termina in 1746", "la
#: cuenta terminada en 8841", "l'IBAN se terminant par 2694", "your number ending 1957")
_LAST_DIGITS = re.compile(
    r"(?i:\b(?:ending|ends|end)(?:\s+(?:in|with|on))?|\bfinit\s+par|\b(?:se\s+)?terminant\s+par|"
    r"\bterminad[ao]\s+en|\b(?:que\s+)?termina\s+en|\b(?:che\s+)?(?:termina(?:nte)?|finisce)\s+(?:in|con|per)|"
    r"\bterminad[ao]\s+em|\bendet\s+(?:auf|mit)|\bendend\s+auf|\beindigend\s+op|\beindigt\s+op|"
    r"\bko[ńn]cz\w*\s+si[ęe]\s+na|\bsonu|\bson\s+(?:4|dört)\s+hane(?:si)?|\bfinal(?:izado\s+em)?|\bslutar\s+på|\bslutter\s+på|\bender\s+(?:på|med)|"
    # Arabic "ending in", Japanese "last digits", Korean "last digits", Chinese "tail number"
    r"(?:المنتهي[ةه]?|تنتهي)\s+(?:ب|بـ|بالرقم|بالأرقام)|末尾(?:は|が|：|:)?|끝자리(?:는|가)?|끝\s*번호(?:는)?|尾号(?:是|为)?)"
    r"[ \t]*:?[ \t]*[•*.xX]{0,4}(\d{3,4})(?![\d.,]\d|\d|[ \t]*(?:%|€|\$))")
#: the noun a last-digits phrase is of, in the 40 characters before it
_LAST_DIGITS_OF = (
    (re.compile(r"(?i)(?:card|carte|tarjeta|carta|karte|cart[ãa]o|kart[ay]?|kort|visa|mastercard|amex|بطاق|カード|카드|"
                r"卡)\w*[^.!?\n。]{0,40}\Z"), "card"),
    (re.compile(r"(?i)(?:iban|account|compte|cuenta|conta|conto|konto|rekening|rachun\w*)[^.!?\n]{0,40}\Z"), "iban"),
    (re.compile(r"(?i)(?:phone|number|num[ée]ro|n[úu]mero|telefon\w*|tel[ée]fono|mobile|handy|cell)[^.!?\n]{0,40}\Z"),
     "phone"),
)


#: a card's last four digits after its masked groups ("kort **** **** **** 0875"), under a JSON key
#: for them ('"last4": "9833"') or glued to the card's brand in an export ("visa_8820")
_MASKED_LAST_FOUR = re.compile(r"(?:[*•xX]{4}[ -]?){2,3}(\d{4})(?!\d)"
                               r"|(?i:\"(?:last_?4|last_?four|card_?last_?4)\"[ \t]*:[ \t]*\"?)(\d{4})(?!\d)"
                               r"|(?<![\w])(?i:visa|mastercard|mc|amex|card)_(\d{4})(?![\w])")


_CARD_AFTER = re.compile(r"(?i)[ \t]+(?:olan[ \t]+|ile[ \t]+biten[ \t]+)?(?:kart|card|carte|tarjeta|carta)")


def _last_digits(text: str) -> Iterator[Span]:
    for m in _MASKED_LAST_FOUR.finditer(text):
        g = next(i for i in (1, 2, 3) if m.group(i))
        yield Span(m.start(g), m.end(g), "card")
    for m in _LAST_DIGITS.finditer(text):
        # (only after the word for a card, an account or a telephone: "the year ending 2024" is none)
        before = text[max(0, m.start() - 40) : m.start() + len(m.group()) - len(m.group(1))]
        kind = next((k for pattern, k in _LAST_DIGITS_OF if pattern.search(before)), None)
        # (or the word for a card right after, as Turkish places it: "Sonu 0534 olan kartla")
        if kind is None and _CARD_AFTER.match(text, m.end()):
            kind = "card"
        if kind is not None:
            yield Span(m.start(1), m.end(1), kind)


#: a question of a card's last digits ("the last 4 digits of the card you deposited with?")
_ASKS_LAST_DIGITS = re.compile(r"(?i)\blast\s+(?:4|four)\b|\b[úu]ltimos\s+(?:4|cuatro|quatro)\b|"
                               r"\bderniers\s+(?:4|quatre)\b|\bletzten\s+(?:4|vier)\b|\bultime\s+(?:4|quattro)\b|"
                               r"\blaatste\s+(?:4|vier)\b")


def asks_last_digits(text: str) -> bool:
    """Whether ``text`` asks for a card's last four digits."""
    return _ASKS_LAST_DIGITS.search(text) is not None


def answered_last_digits(text: str) -> Iterator[Span]:
    """Four digits alone in a short reply to :func:`asks_last_digits` ("3 Sept 1988 and 8317"),
    no year; a longer reply holds other numbers of four digits (a postcode, a PIN's length)."""
    if len(text.strip()) > 80:
        return
    for m in re.finditer(r"(?<![\d.,:/-])\d{4}(?![\d.,:/-]|[ \t]*(?:%|€|\$|[A-Z]{3}\b))", text):
        if not re.fullmatch(r"(?:19|20)\d{2}", m.group()):
            yield Span(m.start(), m.end(), "card")
