"""Redaction of personal and secret data in ticket text, before anything else sees it
(logs included): the text is redacted first and only the redacted text travels on.

Each kind has a detector; where a checksum or a numbering plan exists a well-kept library
decides (``phonenumbers`` for telephone numbers, ``python-stdnum`` for card numbers (Luhn),
IBANs and Bitcoin addresses, the personal identity numbers of many countries, ``ipaddress``
for IP addresses; a BLAKE2b checksum for SS58 addresses); patterns only propose candidates.
Spans found by several detectors go to the best-ranked kind (``_PRIORITY``).

Who wrote a text matters: in a customer's own message (``speaker="customer"``) every amount is
the customer's unless it reads as a policy figure, a code after a word for an account is theirs,
and a number a strong identity-number check accepts is one with no word before it.

People's names, dates of birth and user names have no checksum: they are found by the words
around them ("my name is", "account holder", a greeting or title, a signature closing a turn;
"born", "DOB"; "username", an ``@handle``, ``name#1234``). Names nothing introduces are found
by word lists (``name_lexicon``): a capitalised listed given name or surname that is no
ordinary English word. No language model is loaded here.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import importlib
import ipaddress
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType

import phonenumbers
from stdnum import bitcoin, iban, luhn
from stdnum.br import cpf
from stdnum.es import dni, nie
from stdnum.exceptions import ValidationError
from stdnum.it import codicefiscale
from stdnum.us import ssn

from . import addresses, name_lexicon

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
#: regions whose national formats are read only after a word for a telephone ("mobile", "手机")
_CUED_PHONE_REGIONS: tuple[str, ...] = (
    "CA", "MX", "AR", "CL", "CO", "PE", "IE", "PT", "BE", "CH", "AT", "PL", "CZ", "SK", "HU", "RO", "BG", "GR",
    "SE", "NO", "DK", "FI", "TR", "RU", "UA", "IL", "AE", "SA", "EG", "MA", "NG", "KE", "ZA", "GH", "PK", "BD",
    "CN", "HK", "TW", "JP", "KR", "SG", "MY", "TH", "VN", "PH", "ID", "NZ")
_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\d])")
_DOUBLE_ZERO = re.compile(r"(?<![\w+.,/-])00[1-9]\d{0,3}(?:[ .-]?\d{2,5}){2,5}(?![\w.,/-]|[.,]\d)")
_DATE_SHAPE = re.compile(r"\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d{2}|(?:19|20)\d{2}[./-]\d{1,2}[./-]\d{1,2}")
_YEAR_RANGE = re.compile(r"(?:19|20)\d{2}\s*[-–/]\s*(?:(?:19|20)\d{2}|\d{2})")
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
    r"puhelin|telefonnummer|telefoonnummer)\w*|手机|電話|携帯|电话|전화|휴대폰|телефон|мобильн)")


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
    r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|"
    # the personal access and API tokens of common services, which name themselves by a
    # prefix: Docker Hub, npm, PyPI, GitLab's other tokens, Hugging Face, Shopify, Stripe's
    # webhooks, SendGrid, DigitalOcean, Atlassian, Postman, Grafana, Sentry, Vault, Linear,
    # Notion, Figma, Supabase, Doppler, Pulumi, New Relic, Databricks, Buildkite, Terraform
    r"(?:dckr_pat_|dckr_oat_|npm_|pypi-|glrt-|gldt-|glptt-|glsoat-|glcbt-|glffct-|hf_|shpat_|shpss_|shpca_|shppa_|"
    r"whsec_|dop_v1_|doo_v1_|ATATT|PMAK-|glsa_|glc_|sntrys_|sntryu_|hvs\.|hvb\.|lin_api_|ntn_|figd_|"
    r"sbp_|dp\.pt\.|dp\.st\.|pul-|NRAK-|bkua_|atlasv1\.)(?P<body>[A-Za-z0-9_.=-]{16,256}(?<![.-]))|"
    r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|"
    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|"
    r"(?<=(?:api|ess|ret|ate)_key=)\S{8,}|(?<=(?:api|ess|ret|ate)-key=)\S{8,}|(?<=(?:api|ess|ret|ate)_key:)\S{8,}"
    r")",
    re.IGNORECASE,
)
_BEARER = re.compile(
    r"(?i)(?<![a-z])(?:bearer|token|password|passwd|pwd|pw|pass|secret|passcode|pin|passwort|kennwort|contraseña|"
    r"mot\s+de\s+passe|senha|hasło|wachtwoord|parola|lösenord|adgangskode)\b(?![-‐])"
    # a space, "is" or a colon between the word and the value (as a JSON or YAML key too:
    # '"password":"…"'), never a word glued on ("pg-secret@db"); the value stops at a quote or
    # a bracket (a JSON document after "secret:" is no token)
    r"(?:[\"']?[ \t]*[:=]\s*[\"']?|\s+(?:(?:is|ist|es|est|é|to)\s+|[:=]\s*)?)"
    r"[\"'`“‘]?([^\s,;\"'`“”‘’{}()\[\]<>]{8,})")
#: a code that opens an account: a 2FA backup code, a recovery or one-time code ("my backup code is
#: 8241-9930", "OTP: 552 019")
_ACCESS_CODE = re.compile(
    r"(?i:\b(?:backup|recovery|2fa|mfa|otp|one[- ]time|verification|login|auth(?:entication)?|sms)\s+"
    r"(?:codes?|pins?|keys?)\b|\botp\b)\s*(?:is|are|was|:|=)?\s*"
    r"((?=[A-Za-z0-9]{0,9}\d)[A-Za-z0-9]{3,10}(?:[ -](?=[A-Za-z0-9]{0,9}\d)[A-Za-z0-9]{3,10}){0,3})(?![\w-])")
#: the security code and expiry printed on a card ("CVV 381", "exp 09/27")
_CARD_CODE = re.compile(
    r"(?i:\b(?:cvv2?|cvc2?|csc|cid|security\s+code|card\s+code|prüfnummer|código\s+de\s+seguridad|cryptogramme)"
    r"\s*(?:is|:|=)?\s*)(\d{3,4})\b")
#: a PIN said with its number ("I set the PIN to 4821", "Geheimzahl: 0815")
_PIN = re.compile(r"(?i:\b(?:pin(?:[ -]?code)?|passcode|geheimzahl|code\s+pin|código\s+pin)\s*"
                  r"(?:is|was|to|:|=|ist|est|es|è|é)?\s*)(\d{4,8})(?![\d.,:/-])")
_CARD_EXPIRY = re.compile(
    r"(?i:\b(?:exp(?:iry|iration|ires)?(?:\s+date)?|valid\s+(?:thru|through|until)|gültig\s+bis|vence|"
    r"date\s+d'expiration|scadenza)\.?\s*(?:is|:|=)?\s*)((?:0?[1-9]|1[0-2])\s?/\s?(?:\d{2}|20\d{2}))(?![\d/])")
_SERVICE_TOKEN = re.compile(r"(?<![\w.-])[a-z]{2,10}_(?:[a-z]{2,6}_){0,2}(?P<body>[A-Za-z0-9]{16,128})(?![\w-])")
_BACKUP_CODE_CUE = re.compile(
    r"(?i:\b(?:backup|recovery|rescue|emergency|scratch|one[- ]time|2fa|mfa)[ \t-]+codes?\b|"
    r"\bc[óo]digos?\s+de\s+(?:respaldo|recupera[cç][ãa]o|recuperaci[óo]n|seguran[cç]a)|"
    r"\b(?:wiederherstellungs|backup|notfall)-?codes?\b|\bcodes?\s+de\s+(?:secours|r[ée]cup[ée]ration)|"
    r"\bcodici\s+di\s+(?:backup|recupero)|\bherstelcodes?\b|\bkody\s+zapasowe)")
_BACKUP_CODE = re.compile(r"(?<![\w-])[A-Za-z0-9]{3,6}(?:-[A-Za-z0-9]{3,6}){1,2}(?![\w-])")
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
    # the bech32 addresses of any chain ("cosmos1…", "osmo1…", "addr1…", "terra1…", "inj1…"): a
    # prefix of letters, a "1" and 38 or more characters of the bech32 alphabet (no "b", "i", "o"
    # or "1"), which no word or file name has
    (re.compile(r"(?<![\w])[a-z]{2,20}1[02-9ac-hj-np-z]{38,110}(?![\w])"), "bech32"),
    (re.compile(rf"(?<![\w])T[{_BASE58}]{{33}}(?![\w])"), "base58"),  # Tron
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
_IBAN = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,30}|[a-z]{2}\d{2}(?:[ -]?[a-z0-9]){11,30})"
                   r"(?![A-Za-z0-9])")
_ACCOUNT = re.compile(
    r"(?i)\b(?:account|acct|a/c|acc|konto|compte|cuenta|conta|conto|rekening|konta)\.?\s*(?:number|no\.?|num|#)?\s*"
    r"(?:is|ist|:|=|#)?\s*((?:\d[ -]?){5,29}\d)\b"
    # a number with a letter prefix and dashes too ("depuis mon compte CV-7730-2291-04")
    r"|\b(?:account|acct|konto|compte(?:\s+client)?|cuenta|conta|conto|rekening)"
    # the account's kind after it, as the Romance languages place it ("Conta principal SH-88412203")
    r"(?:\s+(?:principal|principale|pessoal|personnel|personal|personale|corrente|courant|corriente|"
    r"empresarial|professionnel|aziendale))?\s*(?:number|no\.?|#)?\s*"
    r"(?:is|ist|est|es|è|é|:|=|#)?\s*((?-i:[A-Z]{1,5})-(?:\d{2,12}(?:-\d{2,12}){1,4}|\d{6,16}))\b"
    r"|\b(?:routing|aba|bsb|transit|sort)\s*(?:code|number|no\.?|#)?\s*(?:is|:)?\s*(\d{2}[ -]?\d{2}[ -]?\d{2,5})\b"
    r"|\b(?:destination\s+tag|dest(?:ination)?\.?\s+tag|tag|memo)\s*(?:id|number|no\.?|#)?\s*(?:is|:|=)?\s*(\d{4,12})\b"
)
#: numbers that name a customer or their account (an order or invoice number names a purchase,
#: and stays): "customer ID AC-2284913", "Kundennummer ist KD-7781203", "numéro de client : 5521"
_ID_OWNER = (r"(?:account|acct|customer|client|member|membership|player|wallet|profile|loyalty|subscriber|contract|"
             r"policy|patient|kunden|konto|mitglieds|vertrags|klanten|klant|rekening|cliente|socio|abonné|abonado)")
_ID_VALUE = (r"((?-i:[A-Z]{0,5})[ /-]?\d[\d -]{3,34}\d(?-i:-?[A-Z]{1,2})?|(?-i:[A-Z]{1,5})[/-]?\d{4,12}"
             r"(?-i:-?[A-Z]{1,2})?)\b")
_CUSTOMER_NUMBER = re.compile(
    rf"(?i)\b{_ID_OWNER}[ -]?(?:number|no\.?|nr\.?|num|id|nummer|número|numero|code|#)\s*"
    # (a few words before the verb: "customer number on the statements is SH-4471-0928-33")
    r"(?:(?:[a-z]{1,12}[ \t]+){1,4}?(?:is|was|ist|lautet|es|est)[ \t]+|(?:is|ist|lautet|es|est|è|é|:|=|#)?\s*)"
    + _ID_VALUE +
    r"|(?i:\b(?:numéro|número|numero|numer|n[°º]|codice|código|code)\s+(?:(?:de|di|da|do)\s+)?(?:client|cliente|compte|cuenta|conta|"
    r"conto|konta|klienta|socio|membre|adhérent)\s*(?:est|es|è|é|to)?\s*:?\s*)" + _ID_VALUE
)
#: the references of one customer's order, invoice, booking or transfer ("order ORD-558213",
#: "invoice INV-2024-00931", "reference WT-99812"): nothing an article needs, and each leads back
#: to the customer; ``_references`` keeps the support desk's own ticket and case numbers and a
#: code nothing introduces unless its prefix names a purchase
_REFERENCE = re.compile(
    r"(?i:\b(?:order|invoice|inv|transaction|txn|booking|reservation|reference|ref|tracking|ticket|case|claim|"
    r"receipt|shipment|parcel|bestellung|bestellnummer|rechnung|rechnungsnummer|commande|facture|pedido|factura|"
    r"ordine|fattura|bestelling|factuur|zamówienie|faktura|注文番号|订单号?)(?=[\s:#=：]|(?<=[\u3000-\u9fff]))"
    r"(?:[ \t]*(?:id|number|no\.?|nr\.?|num|#|code|nummer|número|numéro|numero))?(?:[ \t]*(?:is|:|=|#))*[ \t]*)"
    r"((?-i:[A-Z]{0,5})[-/]?\d[\dA-Z-]{3,24}(?<=[\dA-Z]))(?![\w-])"
    # the shape alone, unless the letters name a product's bug, standard or release
    r"|(?<![\w-])(?!(?:BUG|CVE|RFC|ISO|SHA|UTF|PR|ERR|KB|DOC|FAQ|SKU|API|HTTP|TLS|SSL|JIRA|REL|VER|V)-)"
    r"((?-i:[A-Z]{2,5})-\d{4,}(?:-[\dA-Z]+)*)(?![\w-])"
)
#: identity documents and tax numbers, after the words that name them ("passport number X1234567",
#: "SSN 123-45-6789", "NIE X-1234567-L", "CPF 123.456.789-09"); a US social security number and a
#: Brazilian CPF are also recognised by their shape where their checks pass (``python-stdnum``)
_ID_DOCUMENT = re.compile(
    r"(?i:\b(?:passport|passeport|pasaporte|passaporto|passaporte|reisepass|paszport|personalausweis|ausweis|"
    r"national\s+(?:id|identity|insurance)|id\s+card|identity\s+card|id|ssn|social\s+security|tax\s+(?:id|code)|"
    r"tin|nino?|ni(?=[ \t]+(?:number|no\b))|"
    r"driver'?s\s+licen[cs]e|driving\s+licen[cs]e|licen[cs]e|steuer-?id|steuernummer|dni|nie|nif|cpf|"
    r"rg|aadhaar|aadhar|pan|pesel|bsn|codice\s+fiscale|personnummer|cpr|nric|sin|carte\s+d'identit[ée]|"
    r"documento|c[ée]dula|curp|rfc|s[ée]curit[ée]\s+sociale|num[ée]ro\s+insee|nir|sozialversicherungs(?:nummer)?|"
    r"seguridad\s+social|segurança\s+social|burgerservicenummer|codice\s+identificativo))"
    r"(?:[ \t]+(?i:number|no\.?|nr\.?|num|#|card|nummer|número|numero|numéro))?"
    r"(?:[ \t]*(?i:is|ist|es|est|è|é|är|er|on|jest|je|to|:|=|#|-))*[ \t]*"
    r"((?-i:[A-Z]{0,5}[ -]?\d[\dA-Z]*(?:[ .-][\dA-Z]*\d[\dA-Z]*)*(?:[ .-]?[A-Z](?![\w]))?))(?![\w-])"
)
_SSN_SHAPE = re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])")
#: a Spanish DNI or NIE and an Italian codice fiscale: their check letter decides (``python-stdnum``)
_DNI_SHAPE = re.compile(r"(?<![\w-])\d{8}-?[A-Z](?![\w-])")
_NIE_SHAPE = re.compile(r"(?<![\w-])[XYZ]-?\d{7}-?[A-Z](?![\w-])")
_CODICE_FISCALE_SHAPE = re.compile(r"(?<![\w-])[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z](?![\w-])")
#: a UK National Insurance number, spaced or not ("JT 48 29 17 B", "QQ123456C")
_NINO_SHAPE = re.compile(r"(?<![\w-])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                         r"(?:[ \t]?\d{2}){3}[ \t]?[A-D](?![\w-])")
#: the words that name a codice fiscale: after them its shape is enough (a check letter mistyped
#: or made up leaves the person's data in it)
_CODICE_CUE = re.compile(r"(?i:\b(?:codice\s+fiscale|cod\.?\s+fisc\.?|c\.\s?f\.|cf|tax\s+code|fiscal\s+code)\b)"
                         r"[^\n]{0,24}\Z")
#: the personal identity numbers of many countries that hold a date of birth and a check digit
#: (or two checks; ``python-stdnum``): a number one of them accepts is a national identity number
#: in a customer's own message even with no word for one (about one random number of ten to
#: thirteen digits in thirty passes one of them)
_STRONG_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "ro.cnp", "cn.ric", "id.nik", "se.personnummer", "pl.pesel", "tr.tckimlik", "mx.curp", "gr.amka", "fr.nir",
    "be.nn", "bg.egn", "fi.hetu", "no.fodselsnummer", "ee.ik", "lt.asmens", "si.emso", "ch.ssn", "za.idnr",
    "br.cpf", "de.idnr", "is_.kennitala", "es.dni"))
#: numbers with one check digit or a date only, which one random number in five to ten passes:
#: read after a word for an identity document in the 40 characters before
_CHECKED_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "hr.oib", "in_.aadhaar", "jp.in_", "th.pin", "my.nric", "cz.rc", "at.vnr", "pt.cc", "dk.cpr"))
#: numbers of nine digits or fewer whose single check digit one number in ten passes: read only
#: right after a word for an identity document
_WEAK_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "nl.bsn", "ca.sin", "il.idnr", "us.ssn", "au.tfn", "cl.rut", "ec.ci", "ie.pps", "dk.cpr", "pt.nif", "es.nie",
    "ar.dni"))
#: a run of digits (and the capitals some numbers hold: a Chinese number's final "X", a CURP) in
#: up to five groups joined by a space, a dot, a dash or a slash; each group is bounded, so a
#: long run of digits stays linear
#: (bounded by letters of the Latin, Greek and Cyrillic alphabets only: in Japanese, Chinese or
#: Hindi a number sits right against the words around it, "マイナンバーは3118 4873 3313です")
_ID_CANDIDATE = re.compile(r"(?<![0-9A-Za-zÀ-ɏͰ-ӿ_.,/+:#$€£-])(?=[0-9A-Z]{0,24}\d)[0-9A-Z]{1,24}"
                           r"(?:[ ./-][0-9A-Z]{1,24}){0,4}(?![0-9A-Za-zÀ-ɏͰ-ӿ_@]|[-./,:]\w)")
#: personal numbers commonly written in groups (an Argentine CUIT "20-31456789-8", a British NHS
#: number "943 476 5919", a Pakistani CNIC, a New Zealand IRD number): read after a word for an
#: identity document when written in their own grouping, like the weaker checks below
_GROUPED_ID_MODULES = tuple(importlib.import_module(f"stdnum.{name}") for name in (
    "ar.cuit", "gb.nhs", "pk.cnic", "nz.ird"))
#: the words for an identity document or a personal number in the languages tickets come in
_ID_WORDS = (
    r"(?i:\b(?:id|identity|identification|national|citizen(?:ship)?|personal|passport|ssn|sin|tin|nin|nino|pesel|"
    r"bsn|nik|ktp|cnp|rrn|egn|oib|emšo|emso|amka|afm|nir|insee|cpr|hetu|henkilötunnus|personnummer|personnr|"
    r"fødselsnummer|fodselsnummer|isikukood|asmens|kimlik|tc|aadhaar|aadhar|curp|rut|dni|nie|nif|cpf|c[ée]dula|"
    r"documento|ahv|avs|svnr|steuer-?id|nric|mykad|mykid|mykas|kad\s+pengenalan|pps|kennitala|zehut|hawiy+a|huwiy+a|iqama|buletin|identitate|"
    r"identité|identidad|identidade|identità|identiteit|tożsamości|dowodu|dowód|paspor|pasaport|passeport|"
    r"pasaporte|passaporto|passaporte|reisepass|paspoort|sozialversicherung\w*|social\s+security|"
    r"s[ée]curit[ée]\s+sociale|seguridad\s+social|nomor\s+induk|cmnd|cccd|căn\s+cước|chứng\s+minh|"
    r"cuit|cuil|nhs|cnic|ird|assurance\s+sociale|(?-i:NAS)|(?:code|kod)-?e?\s+mel+i|shenasname)\b|"
    r"आधार|पहचान|পরিচয়|জাতীয়|এনআইডি|کد\s*ملی|شناسنامه|"
    r"주민|외국인\s*등록|身份证|身份證|身分證|证件|證件|居民身份|マイナンバー|個人番号|هوي[ةه]|الهوي[ةه]|إقامة|اقامة|رقم\s+وطني|"
    r"ταυτότητ\w*|ΑΜΚΑ|ΑΦΜ|ΑΔΤ|паспорт\w*|ИНН|СНИЛС|ЕГН|посвідчен\w*|เลขประจำตัว|บัตรประชาชน)")
#: such a word in the 40 characters before a number
_ID_CUE = re.compile(_ID_WORDS + r"[^\n]{0,30}\Z")
#: such a word right before a number, only "number", "is" or a colon between ("CNP 2910305407267",
#: "raqam al-hawiya 1087423356", "身份证号 …")
_ID_CUE_NEAR = re.compile(
    _ID_WORDS + r"(?:-[^\W\d_]{1,3})?(?:[ \t]*(?:नंबर|संख्या|নম্বর|(?i:no\.?|nr\.?|number|num[ée]ro|número|numero|nummer|"
    r"number|is|ist|est|es|är|er|jest|là|adalah|号|號|번호|番号|：|[:#=.-])))*[ \t]*\Z")
#: a South Korean resident registration number: a date of birth, a dash and seven digits the
#: first of which gives the century and sex (numbers issued since October 2020 carry no check digit)
_KOREAN_RRN = re.compile(r"(?<![\w-])\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])-[1-8]\d{6}(?![\w-])")
#: a passport's or an identity card's number after the words that name one, in many languages:
#: letters and digits ("RX 482913", "X1234567", "C01X00T47")
_PASSPORT = re.compile(
    r"(?i:\b(?:passport|passeport|pasaporte|passaporto|passaporte|reisepass|paspoort|paszport\w*|pasaport\w*|"
    r"paspor|passi|pass|seria|série|serie|id\s+card|identity\s+card|carte\s+d'identit[ée]|cartea\s+de\s+identitate|"
    r"buletin\w*|personalausweis|ausweis|dowód\s+osobisty|documento\s+de\s+identidad)\b|паспорт\w*|護照|护照|여권|"
    r"パスポート|جواز(?:\s+السفر)?|διαβατήριο\w*)"
    r"(?:[ \t]*(?i:no\.?|nr\.?|number|num[ée]ro|número|numero|nummer|#|n[°º]|номер|:|=|is|ist|est|es))*[ \t]*"
    r"((?-i:[A-Z]{1,3})[ -]?\d{5,9}(?-i:[A-Z])?|\d{2}(?-i:[A-Z]{2})\d{5}|(?-i:[A-Z])\d{1,2}(?-i:[A-Z])\d{4,7}|\d{6,9})"
    r"(?![\w-])")


def _groups(value: str) -> list[int]:
    return [len(g) for g in re.split(r"[ ./-]", value) if g]


def _accepts(module: ModuleType, compact: str) -> bool:
    try:
        return bool(module.is_valid(compact))
    except (ValidationError, ValueError, TypeError, IndexError, KeyError):
        return False  # a module's own table lacks an entry ("cn.ric" for some counties)


def _written_as_its_own(compact: str, value: str) -> bool:
    """Whether a country's personal number accepts ``compact`` and ``value`` is written in that
    number's own grouping ("145 333 142" a Canadian SIN, "4407 2386 2555" an Aadhaar number,
    "20-31456789-8" a CUIT): the grouping is a second piece of evidence beside the check digit."""
    shape = _groups(value)
    if len(shape) < 2:
        return False
    for module in (*_CHECKED_ID_MODULES, *_WEAK_ID_MODULES, *_GROUPED_ID_MODULES):
        if _accepts(module, compact):
            try:
                formatted = module.format(compact)
            except (ValidationError, ValueError, TypeError, IndexError, KeyError, AttributeError):
                continue
            # (a number with no check of its own, an Argentine DNI "1.250.000", is grouped as a figure)
            if _groups(formatted) == shape and not re.fullmatch(r"\d{1,3}(?:[., ]\d{3})+", formatted):
                return True
    return False


def _personal_id(compact: str, cued: bool, near: bool, value: str = "") -> bool:
    """Whether a personal identity number of some country accepts ``compact`` (its check digit
    or the date of birth it holds); the weaker checks only when ``cued`` (a word for an identity
    document in the 40 characters before) or ``near`` (right before), or when cued and ``value``
    is written in the number's own grouping."""
    modules = (*_STRONG_ID_MODULES, *(_CHECKED_ID_MODULES if cued else ()), *(_WEAK_ID_MODULES if near else ()))
    if any(_accepts(module, compact) for module in modules):
        return True
    return cued and _written_as_its_own(compact, value)


def _checked_ids(text: str, customer: bool) -> Iterator[Span]:
    """National identity numbers of any country recognised by their check digits: after a word
    for an identity document (``_ID_CUE``), or anywhere in a customer's own message (nine digits
    or more, a strongly checked number only); never a figure written with thousands separators,
    an address of four numbers, a number after a telephone's country code."""
    phones = [(m.start(), m.end()) for m in _INTERNATIONAL.finditer(text)] if "+" in text else []

    def in_phone(a: int, b: int) -> bool:  # "+966 55 218 7740": a telephone number's national part
        return any(a < e and b > s for s, e in phones)

    for m in _ID_CANDIDATE.finditer(text):
        value = m.group()
        if in_phone(m.start(), m.end()):
            continue
        compact = re.sub(r"[ ./-]", "", value)
        digits = sum(c.isdigit() for c in compact)
        if digits < 6 or len(compact) > 20:
            continue
        cued = _ID_CUE.search(text, max(0, m.start() - 40), m.start()) is not None
        if re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}", value) or (
                re.fullmatch(r"\d{1,3}(?:[., ]\d{3})+", value) and not (cued and _written_as_its_own(compact, value))):
            continue  # "15.000.000", "10.0.0.14" (but "NAS 145 333 142", a SIN in its own grouping)
        if not (cued or (customer and digits >= 9)):
            continue
        near = _ID_CUE_NEAR.search(text, max(0, m.start() - 40), m.start()) is not None
        if _personal_id(compact, cued, near, value):
            yield Span(m.start(), m.end(), "national_id")
    for m in _KOREAN_RRN.finditer(text):
        yield Span(m.start(), m.end(), "national_id")
    for m in _PASSPORT.finditer(text):
        if m.group(1).isdigit() and re.match(r"(?i)s[ée]ri[ae]\b", m.group()):
            continue  # "numéro de série 12345678": a device's serial number; an ID card's series has letters
        yield Span(m.start(1), m.end(1), "national_id")
    if customer:
        # after a word for an identity document, a customer's long number is theirs even when
        # no country's check accepts it (a check digit mistyped, a country without a module)
        for m in re.finditer(r"(?<![\w.,/+-])\d(?:[ -]?\d){5,17}(?![\w-]|[.,]\d)", text):
            if in_phone(m.start(), m.end()):
                continue
            # further from the word (other words between: "TIN ko kung kailangan: 304-582-716-000"),
            # a number of nine digits or more in three dashed groups or more, an identity number's shape
            grouped = (m.group().count("-") >= 2 and sum(c.isdigit() for c in m.group()) >= 9
                       and not re.match(r"(?:19|20)\d{2}-[01]\d-", m.group()))  # "2024-11-0042" is a reference
            if _ID_CUE_NEAR.search(text, max(0, m.start() - 40), m.start()) or (
                    grouped and _ID_CUE.search(text, max(0, m.start() - 40), m.start())):
                yield Span(m.start(), m.end(), "national_id")


_CPF_SHAPE = re.compile(r"(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-])")
#: an email address written out so that a machine would not read it: "anna dot meyer at gmail
#: dot com", "r.okonkwo[at]gmail[dot]com", "kim (at) mail (dot) de"
#: the words for "@" and "." said aloud in English, Spanish and Portuguese, French, Italian and
#: German ("andres arroba hotmail punto com", "jean point dupont arobase orange point fr")
_AT_WORD = r"(?:at|AT|(?i:arroba|arobase|chiocciola|klammeraffe))"
_DOT_WORD = r"(?:dot|DOT|(?i:punto|ponto|point|punkt))"
_OBF_AT = (r"(?:[ \t]*[\[({<][ \t]*(?:" + _AT_WORD + r"|@)[ \t]*[\])}>][ \t]*|[ \t]+" + _AT_WORD + r"[ \t]+|"
           r"[ \t]*@[ \t]*)")
_OBF_DOT = (r"(?:[ \t]*[\[({<][ \t]*(?:" + _DOT_WORD + r"|\.)[ \t]*[\])}>][ \t]*|[ \t]+" + _DOT_WORD + r"[ \t]+|"
            r"[ \t]+\.[ \t]+|\.)")
_OBF_EMAIL = re.compile(
    r"(?<![\w.@])([A-Za-z0-9][A-Za-z0-9_%+-]{0,63}(?:" + _OBF_DOT + r"[A-Za-z0-9_%+-]{1,63}){0,4})"
    r"(" + _OBF_AT + r")([A-Za-z0-9-]{1,63}(?:" + _OBF_DOT + r"[A-Za-z0-9-]{1,63}){0,4}" + _OBF_DOT + r"[A-Za-z]{2,6})"
    r"(?![\w])"
)
#: the top-level domains a spelled-out address with a word other than "dot" must end in
_SAID_TLDS = frozenset(("com", "net", "org", "edu", "gov", "info", "io", "biz", "de", "fr", "es", "it", "pt", "br",
                        "mx", "co", "ar", "cl", "pe", "uy", "ve", "ec", "bo", "py", "ca", "ch", "at", "be", "lu",
                        "nl", "uk", "eu", "pl", "ru", "in", "za", "ng", "ke", "au", "nz", "us", "cat", "gal"))
_AT_SIGN = re.compile(r"@|(?i:[\[({<][ \t]*at[ \t]*[\])}>])|[ \t]" + _AT_WORD + r"[ \t]")


_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\d|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{0,4}(?![\w:])")
# -- people: names, dates of birth, handles (found by the words around them) ---------------------
# A name is found where the text says it is one ("my name is", "account holder", a greeting,
# "Mr", a sign-off): capitalised words after such a cue, never a word of the stop list.
_UPPER = "A-ZÀ-ÖØ-ÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮİĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽА-ЯЁІЇЄΑ-Ω"
_NAME_WORD = rf"[{_UPPER}](?:['’][{_UPPER}])?[^\W\d_]+(?:[-'’][{_UPPER}]?[^\W\d_]+)?"
_PARTICLE = r"(?:de|da|del|della|der|den|di|du|van|von|al|el|bin|ibn|la|le|dos|das|y|ter|ten|zu|af|dei|dal)"
_NAME_SEQ = (rf"{_NAME_WORD}(?:[ \t]+(?:(?:{_PARTICLE}[ \t]+){{1,2}}|[{_UPPER}]\.?[ \t]+)?{_NAME_WORD}){{0,3}}"
             r"(?![\w@])")
_NAME_CUES = re.compile(
    r"(?:(?i:\b(?:my\s+name\s+is|name\s+is|full\s+name|name|names|i\s+am|i'm|this\s+is|here\s+is|it's|"
    r"(?:sur|last\s+|family\s+|first\s+|given\s+|maiden\s+|middle\s+|legal\s+)name|"
    r"account\s+holder|card\s*holder|holder|beneficiary|recipient|payee|signed|attn|attention|"
    r"calls?\s+me|called\s+me|known\s+as|go(?:es)?\s+by|nickname\s+is|prefers?\s+to\s+be\s+called|"
    r"name\s+on\s+(?:the\s+|my\s+)?(?:card|account|passport|id|licen[cs]e)(?:\s+is)?|"
    r"hier\s+ist|ich\s+bin|ich\s+heiße|ich\s+heisse|mein\s+name\s+ist|kontoinhaber(?:in)?|je\s+suis|je\s+m'appelle|"
    r"mon\s+nom\s+est|titulaire|me\s+llamo|mi\s+nombre\s+es|soy|el\s+titular\s+es|titular\s+es|titular|sono|"
    r"mi\s+chiamo|il\s+mio\s+nome\s+è|intestatario|meu\s+nome\s+é|me\s+chamo|mijn\s+naam\s+is|ik\s+ben|ik\s+heet|"
    r"nazywam\s+si[eę]|mam\s+na\s+imi[eę]|jmenuji\s+se|jag\s+heter|mitt\s+namn\s+är|jeg\s+heter|mit\s+navn\s+er|"
    r"nama\s+saya|benim\s+adım|ben|ad[ıi]m|меня\s+зовут|мене\s+звати|я|είμαι(?:\s+[οη])?|με\s+λένε|"
    r"tôi\s+là|tên\s+tôi\s+là|tôi\s+tên\s+là|mình\s+là|em\s+là|saya|ako\s+si|ang\s+pangalan\s+ko\s+ay|"
    r"jeg\s+hedder|jeg\s+er|mitt\s+navn\s+er|nimeni\s+on|olen|"
    r"ονομάζομαι|λέγομαι|ismi|esmi|ismee)"
    r"(?:\s+(?:is|was|used\s+to\s+be))?(?:\s+(?:spelled|spelt|written|actually))?)\s*[:,-]?\s+"
    # "ana" (Arabic in Latin letters: "I am") in lower case only: "Ana" is a name
    r"|\bana[ \t]+"
    r"|(?:^|(?<=[.!?]\s)|(?<=[.!?]))(?i:best\s+regards|kind\s+regards|warm\s+regards|best\s+wishes|many\s+thanks|"
    r"thanks\s+again|yours\s+sincerely|sincerely|mit\s+freundlichen\s+grüßen|viele\s+grüße|liebe\s+grüße|grüße|"
    r"cordialement|bien\s+à\s+vous|saludos\s+cordiales|un\s+saludo|saludos|atentamente|cordiali\s+saluti|"
    r"distinti\s+saluti|atenciosamente|abraços|cumprimentos|pozdrawiam|met\s+vriendelijke\s+groet|groetjes|groeten|"
    r"med\s+vänlig\s+hälsning|hälsningar|med\s+venlig\s+hilsen|mvh|s\s+pozdravem|saygılarımla|с\s+уважением)"
    r"\s*,?\s+"
    # greetings and thanks: the name follows on the same line ("Hello,\nChrome crashes" is no name)
    r"|(?:^|(?<=[.!?]\s)|(?<=[.!?]))(?i:good\s+morning|good\s+afternoon|good\s+evening|greetings|"
    r"hi|hello|hey|dear|thanks|thank\s+you|cheers|regards|best|hiya|howdy|heya|yo|xin\s+chào|chào|selam|salam|"
    r"cześć|tere|hoi|bună|marhaba|ahlan|assalamu\s+alaikum|salaam|halo|"
    r"bonjour|bonsoir|salut|hola|buenos\s+días|buenas\s+tardes|buenas|hallo|guten\s+(?:tag|morgen|abend)|"
    r"sehr\s+geehrte[rs]?|liebe[rs]?|grüezi|servus|moin|ciao|buongiorno|buonasera|gentile|caro|cara|olá|ola|"
    r"oi|querid[oa]|estimad[oa]|prezad[oa]|beste|geachte|hej|hei|moi|szia|ahoj|dzień\s+dobry|witam|"
    r"merhaba|привет|здравствуйте|добрый\s+день|уважаем(?:ый|ая)|"
    r"danke|merci|gracias|grazie|obrigad[oa]|bedankt|tack|takk|dzięki|dziękuję|spasibo|спасибо|"
    r"thx|thnx|thanx|tks|ty|tnx)[ \t]*,?[ \t]+"
    r"|\b(?:Mr|Mrs|Ms|Miss|Mx|Mister|Dr|Dra|Doctor|Prof|Professor|Sir|Herr|Hr|Frau|Fr|Monsieur|Madame|Mme|Mlle|M\.|"
    r"Señor|Señora|Señorita|Srta|Sr|Sra|Signor|Signora|Sig|Sig\.ra|Dott|Pan|Pani|Panie|Panu|Pana|Meneer|Mevrouw|"
    r"Dhr|Mevr|chị|anh|ông|bà|chú|Chị|Anh|Ông|Bà|Chú|"
    r"Senhor|Senhora|Г-н|Г-жа|господин|госпожа|Κύριε|Κύριος|Κυρία|κύριε|κύριος|κυρία|κ)"
    r"\.?\s+)"
    rf"({_NAME_SEQ})"
    # a title and a surname that opens on its particle ("mevrouw de Jong", "Herr von Trapp")
    r"|\b(?i:herr|frau|monsieur|madame|señor|señora|signor|signora|senhor|senhora|meneer|mevrouw|mr|mrs|ms|dr)\.?"
    rf"[ \t]+((?:{_PARTICLE}[ \t]+){{1,2}}{_NAME_WORD})"
)
#: a turn that ends on two to four capitalised words after a full stop: a signature
_SIGNATURE = re.compile(
    rf"(?:(?<=[.!?])|(?<=[.!?]\s))\s*({_NAME_WORD}(?:[ \t]+(?:{_PARTICLE}[ \t]+)?{_NAME_WORD}){{1,3}})\s*$")
_NOT_NAMES = frozenset((
    "a", "about", "account", "afraid", "after", "afternoon", "again", "all", "also", "an", "and", "any", "anyone",
    "are", "as", "at", "back", "bank", "because", "before", "but", "by", "can", "card", "could", "customer", "did",
    "do", "does", "done", "dr", "evening", "everybody", "everyone", "folks", "for", "frau", "from", "getting",
    "good", "great", "guys", "had", "has", "have", "having", "he", "help", "her", "here", "herr", "hi", "his", "how",
    "i", "if", "in", "is", "it", "its", "just", "kind", "last", "let", "locked", "madam", "madame", "me", "miss",
    "mme", "monsieur", "morning", "mr", "mrs", "ms", "mx", "my", "new", "no", "not", "now", "of", "ok", "okay", "on",
    "one", "or", "our", "out", "pan", "pani", "please", "prof", "regards", "señor", "señora", "she", "signor",
    "signora", "sir", "so", "sorry", "sr", "sra", "still", "stuck", "support", "sure", "team", "thank", "thanks",
    "that", "the", "their", "them", "then", "there", "they", "this", "to", "today", "too", "trying", "unable",
    "urgent", "us", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "wondering",
    "writing", "yes", "you", "your",
    # greetings and thanks in the languages tickets most often come in, and nationalities the
    # name lists also hold as given names
    "hola", "hallo", "bonjour", "salut", "ciao", "grüezi", "servus", "moin", "hej", "hei", "tack", "ola", "olá",
    "danke", "merci", "gracias", "grazie", "obrigado", "obrigada", "dzięki", "dziękuję", "namaste", "merhaba",
    "thx", "ty", "tia", "br", "rgds", "brgds", "kr", "asap", "pls", "plz", "bey", "hanım", "hanim", "efendi",
    # greetings, thanks and chat of more languages, and the words that introduce a name there
    "hiya", "howdy", "heya", "yo", "chào", "xin", "cảm", "ơn", "tamam", "evet", "hayır", "teşekkürler", "selam",
    "salam", "salaam", "marhaba", "ahlan", "shukran", "yalla", "habibi", "inshallah", "mashallah", "shalom",
    "sawubona", "mvh", "mvg", "mfg", "hilsen", "halo", "kami", "kita", "anda", "saya", "mereka",
    "terima", "kasih", "mohon", "silakan", "tolong",
    "habari", "jambo", "cześć", "zdravo", "sveiki", "labas", "adım", "adim",
    "benim", "vale", "genau", "klar", "okey", "dacă", "bună", "salve", "tere", "hoi", "doei", "groetjes",
    # Turkish courtesy ("Rica ederim", "Kolay gelsin") and the small words of romanised Hindi and
    # Urdu that open a sentence ("Kya chal raha hai?"), which the name lists hold as names
    "rica", "ederim", "ederiz", "kolay", "gelsin", "lütfen", "lutfen",
    "kya", "kyu", "kyun", "kaise", "kab", "kahan", "kaun", "nahi", "nahin", "mera", "meri", "mere",
    "aap", "aapka", "aapki", "bhai", "yaar", "acha", "accha", "theek", "thik", "abhi", "kuch", "bahut",
    "lekin", "aur", "bhi", "toh", "jaldi", "kripya", "shukriya", "dhanyavad", "namaskar",
    # relatives and colleagues, which German capitalises before a name ("Mein Kollege Stefan")
    "kollege", "kollegin", "bruder", "schwester", "sohn", "tochter", "mutter", "vater", "freund", "freundin",
    "chefin", "ehemann", "ehefrau", "partnerin", "kunde", "kundin", "nachbar", "nachbarin", "collega", "collègue",
    "irish", "german", "bonsoir", "buenas", "buongiorno", "buonasera", "gentile", "caro", "cara", "oi", "beste",
    "geachte", "hei", "moi", "szia", "ahoj", "witam", "bedankt", "takk", "spasibo", "liebe", "lieber", "liebes",
    "sehr", "geehrte", "geehrter", "grüße", "saludos", "atentamente", "cordialement", "greetings", "mister",
    "doctor", "professor", "mlle", "dott", "meneer", "mevrouw", "senhor", "senhora", "querido", "querida",
    "estimado", "estimada", "prezado", "prezada", "привет", "здравствуйте", "спасибо",
    # the pronouns, articles and possessives of other languages, which open sentences after a thanks
    "ihr", "ihre", "ihren", "ihrem", "sie", "wir", "ich", "du", "es", "das", "der", "die", "den", "dem", "ein",
    "eine", "mein", "meine", "dein", "unser", "unsere", "vielen", "nous", "vous", "votre", "vos", "notre",
    "le", "la", "les", "un", "une", "una", "uno", "unos", "unas", "um", "uma", "el", "los", "las", "su", "sus",
    "usted", "ustedes", "le", "il", "lo", "gli",
    "je", "tu", "ons", "uw", "jij", "wij", "het", "een", "o", "os", "seu", "sua", "você", "vocês", "nosso",
    "twoje", "twój", "nasz", "wasz", "pan", "pani", "panie", "panu", "pana", "ваш", "ваша", "мы", "вы", "я",
    # nationalities and languages, which the name lists hold as surnames ("French", "English")
    "english", "french", "spanish", "italian", "dutch", "polish", "swedish", "danish", "norwegian", "finnish",
    "greek", "russian", "chinese", "japanese", "korean", "indian", "brazilian", "mexican", "american", "british",
    "canadian", "australian", "swiss", "austrian", "belgian", "portuguese", "turkish", "arabic", "hindi",
    "kenyan", "nigerian", "scottish", "welsh", "european", "african", "asian", "latin", "hungarian", "czech",
    "romanian", "ukrainian", "thai", "vietnamese", "filipino", "indonesian", "persian", "hebrew", "israeli",
    # months and days, which the name lists also hold as given names ("It's June already")
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    # the labels before an account holder's or a recipient's name ("Kontoinhaber Stefan Maier")
    "kontoinhaber", "kontoinhaberin", "inhaber", "inhaberin", "intestatario", "intestataria", "titular",
    "titulaire", "rekeninghouder", "begünstigter", "empfänger", "beneficiario", "beneficiaria", "bénéficiaire",
    "destinatario", "destinataria", "destinataire", "ontvanger", "odbiorca", "właściciel",
))
#: titles that may come between a greeting and a name ("Danke Herr Meier")
_TITLES = frozenset(("mr", "mrs", "ms", "miss", "mx", "dr", "prof", "herr", "frau", "monsieur", "madame", "mme",
                     "señor", "señora", "sr", "sra", "signor", "signora", "pan", "pani", "mister", "doctor",
                     "professor", "sir", "hr", "fr", "mlle", "dra", "señorita", "srta", "sig", "sig.ra", "dott",
                     "meneer", "mevrouw", "dhr", "mevr", "senhor", "senhora", "г-н", "г-жа", "господин",
                     "госпожа", "κύριε", "κύριος", "κυρία", "κ", "panie", "panu", "pana", "chị", "anh", "ông", "bà",
                     "chú", "bapak", "pak", "ibu", "bu", "kak", "mas", "mbak"))

#: titles written after the name ("Emre Bey", "Ayşe Hanım", "Tanaka San")
_AFTER_TITLES = frozenset(("bey", "hanım", "hanim", "efendi", "san", "sama", "kun", "chan", "ji", "sahib", "saheb"))


def _is_name_word(word: str) -> bool:
    return word.lower().strip("'’") not in _NOT_NAMES


def _cue_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Every match, the next one searched from where this one's name starts: a cue may sit
    inside the words another cue took ("Gentile Sig.ra Bellini")."""
    pos = 0
    while m := pattern.search(text, pos):
        yield m
        pos = max(m.start(_group(m)), m.start() + 1)


def _group(m: re.Match[str]) -> int:
    """The number of the group that matched (a pattern of alternatives has one per cue)."""
    return next(g for g in range(1, (m.re.groups or 1) + 1) if m.group(g) is not None)


def _names(text: str) -> Iterator[Span]:
    for pattern in (_NAME_CUES, _SIGNATURE):
        for m in _cue_matches(pattern, text):
            g = _group(m)
            words = list(re.finditer(r"\S+", m.group(g)))
            # keep the leading run of words that are not stop words
            kept = []
            while words and words[0].group().lower().rstrip(".") in _TITLES:
                words.pop(0)
            titled = text[m.start() : m.start(g)].strip().rstrip(".").lower() in _TITLES
            for i, w in enumerate(words):
                word = w.group()
                # inside a name, particles ("van der") and short given names ("Nguyễn Văn An") stay;
                # so does a capitalised surname that is another language's small word, after a
                # name or a title ("Name Ingrid Vos", "Ms Vos")
                inside = i > 0 and (re.fullmatch(_PARTICLE, word) is not None or (len(word) <= 2 and word[0].isupper()))
                inside = inside or ((i > 0 or titled) and word[:1].isupper() and len(word.rstrip(".,")) >= 3
                                    and _surname(word.rstrip(".,")) and word.lower() not in _ENGLISH_GLUE
                                    and word.rstrip(".,").lower() not in (*_TITLES, *_AFTER_TITLES))
                if (not _is_name_word(word) and not inside) or (i == 0 and word.isupper() and len(word) <= 3):
                    break  # a stop word, or an acronym ("building name UK")
                kept.append(w)
            while kept and re.fullmatch(_PARTICLE, kept[-1].group()) and len(kept) > 1:
                kept.pop()
            if not kept:
                continue
            start = m.start(g) + kept[0].start()
            end = m.start(g) + kept[-1].end()
            team = [w.group().rstrip(".,").lower() for w in kept]
            if re.fullmatch(_PARTICLE, kept[-1].group()) or any(w in _COMPANY_WORDS and len(w) >= 4 for w in team):
                continue  # "Brightwave Ltd", "Equipo de Soporte CoinVault": a company or its team
            yield Span(start, end, "person_name")



# -- names by lexicon: capitalised words that the name lists know as names ------------------
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_TITLE_WORD = re.compile(r"[^\W\d_](?:['’][^\W\d_])?[^\W\d_A-Z]*(?:-[^\W\d_][^\W\d_A-Z]*)?")
#: place words: "in Paris", "near Sofia" (a given name after them is a place more often)
_LOCATIVE = frozenset(("in", "at", "near", "across", "within", "throughout", "around", "visiting"))
_POSSESSIVE = frozenset(("my", "our", "your", "his", "her", "their", "its"))
#: places the name lists also hold as given names: after "from", "to" or "of" they are places
_PLACE_NAMES = frozenset(("georgia", "virginia", "carolina", "florence", "chelsea", "sydney", "austin", "dallas",
                          "paris", "jordan", "india", "victoria", "savannah", "adelaide", "madison", "phoenix",
                          "houston", "kent", "lincoln", "orlando", "charlotte", "regina", "alexandria", "sofia",
                          "lourdes", "valencia", "aurora", "brooklyn", "vienna", "siena", "verona", "israel",
                          "texas", "montana", "dakota", "florida", "nevada", "arizona", "indiana", "kansas"))


def _ordinary(word: str) -> bool:
    """A word the dictionary spells in lower case ("will", "grant"), a stop word, or a
    contraction ("I'm", "It's")."""
    if re.search(r"['’](?:m|s|re|ve|d|ll|t)$", word, re.IGNORECASE):
        return True
    if re.match(r"(?i:[cdjlmnst]|qu)['’][a-zà-ÿ]", word):
        return True  # an elided word of French or Italian ("J'ai", "C'est", "L'account"), not "D'Angelo"
    key = name_lexicon.key(word)
    return key in name_lexicon.ordinary_words() or word.lower().strip("'’") in _NOT_NAMES


def _ordinary_form(word: str) -> bool:
    """An ordinary word, or an inflected form of one ("types", "queued", "settings")."""
    if _ordinary(word):
        return True
    w = name_lexicon.key(word)
    forms = [w[:-1] if w.endswith("s") else "", w[:-2] if w.endswith("es") else "",
             w[:-3] + "y" if w.endswith("ies") else "", w[:-2] if w.endswith("ed") else "",
             w[:-1] if w.endswith("ed") else "", w[:-3] if w.endswith("ing") else "",
             w[:-3] + "e" if w.endswith("ing") else "",
             # a doubled consonant ("travelling", "cancelled") and British spellings ("colour",
             # "organise", "organisation")
             w[:-4] if w.endswith("ing") and len(w) > 5 and w[-4] == w[-5] else "",
             w[:-3] if w.endswith("ed") and len(w) > 4 and w[-3] == w[-4] else "",
             w.replace("our", "or") if "our" in w else "", w.replace("is", "iz") if "is" in w else ""]
    return any(f and f in name_lexicon.ordinary_words() for f in forms)


def _given(word: str) -> bool:
    """A listed given name, or the vocative a Slavic language addresses one with ("pani
    Katarzyno" of "Katarzyna", "Olgo" of "Olga")."""
    k = name_lexicon.key(word)
    given = name_lexicon.given_names()
    return k in given or (len(k) >= 6 and k.endswith("o") and k[:-1] + "a" in given
                          and k not in name_lexicon.ordinary_words())


#: the article or kinship word that opens an Arabic family name ("Al-Qahtani", "El-Sayed", "Abu-Bakr")
_ARABIC_FAMILY = re.compile(r"(?:Al|El|Abu|Abd|Bin|Ben|Ibn|Ould)[-‐][A-Z][a-z]{2,}")


def _surname(word: str) -> bool:
    """A listed family name, a double-barrelled one with a listed part ("Adeyemi-Clarke"), or an
    Arabic family name after its article ("Al-Qahtani")."""
    surnames = name_lexicon.surnames()
    if name_lexicon.key(word) in surnames:
        return True
    if "-" not in word and "‐" not in word:
        return False
    if _ARABIC_FAMILY.fullmatch(word):
        return True
    parts = re.split(r"[-‐]", word)
    return (len(parts) == 2 and all(p[:1].isupper() and len(p) >= 3 for p in parts)
            and any(name_lexicon.key(p) in surnames for p in parts))


def _capitalised_runs(text: str) -> Iterator[tuple[list[re.Match[str]], str]]:
    """Runs of title-case words on one line (a particle may sit inside), each with the word
    before the run (lower case, "" at a line's start)."""
    words = list(_WORD.finditer(text))
    i = 0
    while i < len(words):
        w = words[i]
        if not (w.group()[0].isupper() and _TITLE_WORD.fullmatch(w.group())):
            i += 1
            continue
        run = [w]
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1].end() : words[j].start()]
            nxt = words[j].group()
            if gap not in (" ", "\t"):
                break
            title = bool(nxt[0].isupper() and _TITLE_WORD.fullmatch(nxt))
            inner_particle = bool(re.fullmatch(_PARTICLE, nxt) and j + 1 < len(words)
                                  and words[j + 1].group()[0].isupper()
                                  and re.fullmatch(r"[ \t]+", text[words[j].end() : words[j + 1].start()]))
            if not (title or inner_particle):
                break
            run.append(words[j])
            j += 1
        before = ""
        if i > 0 and "\n" not in text[words[i - 1].end() : w.start()]:
            before = words[i - 1].group().lower()
        yield run, before
        i = j


def _lexicon_names(text: str) -> Iterator[Span]:
    """A capitalised given name (``name_lexicon``) that is no ordinary word ("Kevin", "Svetlana"), with the
    capitalised non-ordinary words after it ("Darnell Washington"); an ambiguous given name
    ("Grace", "May") only before a surname ("Grace O'Malley"); two non-ordinary capitalised
    words one of which is a surname ("Rahul Mehta"). Never after a place word ("in Paris")."""
    place_until = -1  # where the last run read as a place ended
    for run, before in _capitalised_runs(text):
        # "in Toronto and Austin": a place word covers the places listed after it
        listed = place_until >= 0 and re.fullmatch(r",?[ \t]+(?:and|or|&)[ \t]+|,[ \t]*",
                                                    text[place_until : run[0].start()]) is not None
        if before in _POSSESSIVE:
            continue  # "our Wells Fargo account", "my Revolut card": a thing someone owns
        if before in _LOCATIVE or listed or (before in ("from", "to", "of") and len(run) == 1
                                             and run[0].group().lower() in _PLACE_NAMES):
            place_until = run[-1].end()
            continue
        place_until = -1
        words = [m.group() for m in run]
        # particles only join names: they never start or end one
        plain = [not re.fullmatch(_PARTICLE, w) and not _ordinary(w) for w in words]
        i = 0
        while i < len(run):
            w = words[i]
            nxt = words[i + 1] if i + 1 < len(run) else ""
            next_plain = bool(nxt) and plain[i + 1]
            # a given name of two syllables written as two words ("Mei Ling", "Chia Hao", "Xiu Ying"),
            # as the romanised Chinese lists hold them in one ("meiling", "chiahao")
            joined = (bool(nxt) and not re.fullmatch(_PARTICLE, w) and w.lower() not in _NOT_NAMES
                      and nxt.lower() not in _NOT_NAMES and _given(w + nxt) and not _ordinary(w + nxt))
            starts = not re.fullmatch(_PARTICLE, w) and (
                joined
                or (plain[i] and _given(w))  # "Kevin", "Svetlana"
                or (_given(w) and next_plain and _surname(nxt) and w.lower() not in _NOT_NAMES)  # "Grace O'Malley"
                or (plain[i] and next_plain and (_surname(w) or _surname(nxt) or _given(nxt))))  # "Rahul Mehta"
            start = i if starts else None
            if start is None:
                i += 1
                continue
            end = i + 2 if joined else i + 1
            # after a name, a capitalised listed surname belongs to it even when it is a word too ("Ahmed Khan")
            while end < len(run) and (plain[end] or (re.fullmatch(_PARTICLE, words[end]) and end + 1 < len(run)
                                                      and plain[end + 1])
                                      or (_surname(words[end]) and words[end].lower() not in _NOT_NAMES)):
                end += 1
            # a name of one or two letters ("Le", "Li") is a word of some language more often; a
            # country's name alone ("Ireland", "India") is the country
            alone_country = end - start == 1 and name_lexicon.key(words[start]) in name_lexicon.country_names()
            if (end - start > 1 or len(words[start]) > 2) and not alone_country:
                yield Span(run[start].start(), run[end - 1].end(), "person_name")
            i = end


#: given names that are also verbs, which follow a subject as often ("my son will pay")
_NAME_VERBS = frozenset(("will", "may", "can", "mark", "bill", "sue", "rob", "grant", "pat", "drew", "jack", "don",
                         "chase", "wade", "buck", "hunt", "gene", "art", "guy", "ray", "max", "bob", "nick"))
#: someone named by their relation to the writer, or as the one to talk to
_RELATION = re.compile(
    r"(?i:\bmy\s+(?:husband|wife|partner|brother|sister|mother|mom|mum|father|dad|son|daughter|friend|colleague|"
    r"boss|manager|accountant|assistant|cousin|uncle|aunt|grandmother|grandfather|fianc[ée]e?|boyfriend|girlfriend|"
    r"neighbou?r|employee|client|stepson|stepdaughter|nephew|niece|grandson|granddaughter)s?(?:-in-law)?|\b(?:talk|speak|spoke|talked|spoken|chat|chatted|speaking)\s+(?:to|with)|"
    r"\bask(?:ed)?\s+for|\bcc|\bcontact|\bforward(?:ed)?\s+(?:it\s+)?to|"
    r"\b(?:someone|somebody|a\s+(?:guy|man|woman|lady|person|girl|boy|user|customer|agent)|person)\s+"
    r"(?:called|named))\s*,?[ \t]+"
    r"([^\W\d_][^\W\d_'’-]*(?:[ \t]+[^\W\d_][^\W\d_'’-]*){0,2})"
)
#: a name written in lower case after the words that introduce one ("this is jake thompson")
_LOWER_CUE = re.compile(
    r"(?i:\b(?:(my\s+name\s+is|name\s+is|me\s+llamo|je\s+m'appelle|ich\s+heiße|kontoinhaber(?:in)?|"
    r"mi\s+nombre\s+es|me\s+chamo|meu\s+nome\s+é|mon\s+nom\s+est|mi\s+chiamo|il\s+mio\s+nome\s+è|"
    r"mein\s+name\s+ist|"
    r"account\s+holder|card\s*holder|titulaire|titular|intestatario|rekeninghouder|beneficiary)|this\s+is|i\s+am|"
    r"i'?m|it'?s|"
    r"signed|soy|ich\s+bin|je\s+suis)"
    r"\s*[:,-]?[ \t]+)([a-zà-ÿ][a-zà-ÿ'’-]+(?:[ \t]+[a-zà-ÿ][a-zà-ÿ'’-]+)?)((?:[ \t]+[a-zà-ÿ][a-zà-ÿ'’-]+)?)"
)
_POSSESSIVE_NAME = re.compile(rf"(?<![\w'’-])([{_UPPER}][^\W\d_]+)['’]s\b()")
#: verbs that follow a name as often as a family name does ("tanya said"), some of which the
#: name lists hold as family names
_COMMON_VERBS = frozenset(("said", "says", "told", "asked", "called", "wrote", "sent", "paid", "gave", "took",
                           "left", "came", "went", "got", "made", "saw", "knew", "thought", "wants", "wanted",
                           "needs", "needed", "did", "does", "was", "were", "will", "would", "could", "should",
                           "might", "must", "may", "can", "has", "had", "also", "just", "still", "again", "here",
                           "there", "then", "now", "too", "replied", "confirmed", "checked", "mentioned"))
_LOWER_PAIR = re.compile(r"(?<![\w'’-])([a-zà-ÿ][a-zà-ÿ'’-]{2,})[ \t]+([a-zà-ÿ][a-zà-ÿ'’-]{2,})(?![\w'’-])")
#: a listed given name in lower case before "here" ("hey, dmitri here")
_LOWER_HERE = re.compile(r"(?:^|[,.!]\s*|\b(?i:hi|hey|hello|yo)[,!]?\s+)([a-zà-ÿ][a-zà-ÿ'’-]+)[ \t]+here\b")
#: a sign-off and a listed given name in lower case closing the message ("thanks, liam")
_LOWER_SIGN_OFF = re.compile(
    r"(?i:\b(?:thanks|thank\s+you|thx|ty|cheers|regards|best|br|gracias|merci|danke|grazie|obrigad[oa]))"
    r"[,!.]?[ \t]+([a-zà-ÿ][a-zà-ÿ'’-]+)[ \t]*[.!]*[ \t]*\Z")
#: a line that is only a sign-off ("regards", "Best regards,"): the next line is a name
_SIGN_OFF_LINE = re.compile(
    r"(?im)^[ \t]*(?:best\s+regards|kind\s+regards|warm\s+regards|best\s+wishes|many\s+thanks|thanks\s+again|"
    r"yours\s+sincerely|yours\s+truly|sincerely|regards|thanks|thank\s+you|cheers|best|br|mit\s+freundlichen\s+grüßen|"
    r"viele\s+grüße|cordialement|saludos|atentamente|cordiali\s+saluti|pozdrawiam|met\s+vriendelijke\s+groet|"
    r"groetjes|hälsningar|med\s+vänlig\s+hälsning|liebe\s+grüße|grüße|lg|mfg|bien\s+à\s+vous|"
    r"bien\s+cordialement|saludos\s+cordiales|un\s+saludo|distinti\s+saluti|atenciosamente|abraços|cumprimentos|"
    r"groeten|med\s+venlig\s+hilsen|mvh|s\s+pozdravem|saygılarımla|с\s+уважением|thx|rgds|all\s+the\s+best|"
    r"take\s+care|talk\s+soon|best\s+regards\s+from)[ \t]*[,.!]?[ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~][ \t]*)?"
    r"((?:[^\W\d_]\.[ \t]*)?[^\W\d_][^\W\d_'’.-]*(?:[ \t]+(?:[^\W\d_]\.|[^\W\d_][^\W\d_'’.-]*)){0,3})"
    r"[ \t]*(?:,[^\n]*)?$"
)
#: a line of its own that is a given name and one or two more capitalised words (a signature block
#: with an address or a title under it)
_NAME_LINE = re.compile(
    rf"(?m)^[ \t]*({_NAME_WORD}(?:[ \t]+(?:[{_UPPER}]\.?[ \t]+)?{_NAME_WORD}){{1,2}})[ \t]*$")
#: someone named before the team they work in ("Jasmine from accounting said …")
_FROM_TEAM = re.compile(
    rf"({_NAME_WORD}(?:[ \t]+{_NAME_WORD})?)[ \t]+(?:from|in|at)[ \t]+(?:the[ \t]+|your[ \t]+|our[ \t]+)?"
    r"(?i:support|accounting|accounts|billing|finance|sales|compliance|legal|hr|it|customer\s+service|"
    r"customer\s+success|onboarding|security|payments|the\s+bank|your\s+team|the\s+branch)\b")
#: a handle after the words for getting into an account ("locked out of trader_jo3")
_HANDLE_AFTER = re.compile(
    r"(?i:\b(?:locked\s+out\s+of|log(?:ged)?\s+(?:in)?to|sign(?:ed)?\s+(?:in)?to|access\s+to|log\s+in\s+to)\s+)"
    r"[\"'“‘]?([A-Za-z][\w.]{1,40})(?<![.])")
#: a handle said to be someone's on a platform ("pixelpusher_22 on the forum")
_HANDLE_ON = re.compile(
    r"(?<![\w.@])([A-Za-z][\w.]{1,40}(?<![.]))[ \t]+on[ \t]+(?:the[ \t]+)?(?i:forum|discord|reddit|telegram|"
    r"twitter|instagram|steam|github|community|server|xbox|psn|twitch|tiktok)\b")
#: a message's last line that is one to three capitalised words under a line of text: who wrote it
_LAST_LINE_NAME = re.compile(
    rf"[^\s][ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~]+[ \t]*)?({_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,2}})[ \t]*\Z")
_LOWER_LAST_LINE = re.compile(r"[^\s][ \t]*\n(?:[ \t]*\n)?[ \t]*(?:[-–—~]+[ \t]*)?([a-zà-ÿ][a-zà-ÿ'’-]{1,30})[ \t]+"
                              r"([a-zà-ÿ][a-zà-ÿ'’-]{0,30}(?:[ \t]+[a-zà-ÿ][a-zà-ÿ'’-]{1,30})?)\.?[ \t]*\Z")
_COMPANY_WORDS = frozenset(("ltd", "inc", "gmbh", "llc", "corp", "co", "sa", "ag", "bv", "plc", "srl", "sas", "oy",
                            "ab", "team", "support", "group", "bank",
                            # a support team's name in the languages its replies are signed in
                            # ("Equipo de Soporte CoinVault", "L'équipe Support", "Ihr Kundenservice")
                            "equipo", "soporte", "équipe", "equipe", "suporte", "supporto", "assistenza",
                            "kundenservice", "kundendienst", "kundensupport", "servicio", "atención",
                            "atendimento", "servizio", "helpdesk", "klantenservice", "ondersteuning",
                            "department", "departamento", "abteilung", "dipartimento", "afdeling", "service"))
#: names in scripts without capitals: after "I am" (我是, 我叫), before "です"/"입니다" after a greeting,
#: between "मेरा नाम" and "है"
_CJK_NAMES = re.compile(
    r"(?:我是|我叫|我的名字是|名字叫|私は|저는|제\s*이름은)\s*([\u4e00-\u9fff\u3400-\u4dbf]{2,4}|[가-힣]{2,4})"
    r"|[、,，]\s*([\u4e00-\u9fff\u3400-\u4dbf]{1,4}(?:[ \u3000][\u4e00-\u9fff\u3400-\u4dbf]{1,3})?)"
    r"(?=です|と申します|といいます)"
    r"|[,，]\s*([가-힣]{2,4})(?=입니다|이에요|예요|라고\s*합니다)"
    r"|(?:^|(?<=[。！\n]))\s*([\u4e00-\u9fff]{1,4}(?:[ \u3000][\u4e00-\u9fff]{1,3})?)(?=です|と申します|といいます)"
    r"|(?:मेरा|मेरी)\s+नाम\s+([\u0900-\u097f]+(?:\s+[\u0900-\u097f]+)?)\s+(?=है)"
    # Thai: "ผมชื่อ" / "ฉันชื่อ" / "ชื่อ" and a given name with its family name
    r"|ชื่อ\s*([\u0e00-\u0e7f]+(?:\s[\u0e00-\u0e7f]+)?)"
    # a listed family name before an honorific ("佐藤様", "田中さん", "김 님")
    r"|(?<![\u4e00-\u9fff])([\u4e00-\u9fff]{1,3})(?=様|さん|さま|殿|先生|女士|小姐|老师|老師|经理|經理)|(?<![가-힣])([가-힣]{2,4})(?=\s?(?:님|씨))"
)
#: Arabic, Persian and Hebrew: the word after "my name is" (اسمي, اسم من, שמי), and the next one
#: when it is a family name (العلي, بن …) or a listed name; after "I am" (أنا) only a listed name
_RTL_NAMES = re.compile(
    r"(?:(اسمي|اسمى|إسمي|اسم\s+من|نام\s+من|שמי|קוראים\s+לי)|(?:أنا|انا|معك|من|אני))\s+"
    r"([\u0600-\u06ff\u0590-\u05ff]+)(?:\s+([\u0600-\u06ff\u0590-\u05ff]+))?"
)


def _lower_name_part(word: str) -> bool:
    return (word.lower() not in _NOT_NAMES and word.lower() not in _ENGLISH_GLUE and len(word) >= 2
            and (not _ordinary(word) or _surname(word) or _given(word)))


#: a letter of the scripts of South Asia (Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil,
#: Telugu, Kannada, Malayalam, Sinhala) with its vowel signs, not its digits or danda
_INDIC = r"[\u0900-\u0963\u0971-\u09e5\u09f0-\u0a65\u0a70-\u0ae5\u0af0-\u0b65\u0b70-\u0be5\u0bf0-\u0c65" \
         r"\u0c70-\u0ce5\u0cf0-\u0d65\u0d70-\u0dff]"
#: the words after a name in those languages that are no part of it ("है" is, "और" and)
_INDIC_STOP = frozenset(("है", "हूँ", "हूं", "हैं", "और", "था", "थी", "से", "का", "की", "के", "আমি", "এবং", "আর",
                         "বলছি", "ও", "এর", "ਹੈ", "છે", "ஆகும்", "நான்"))
#: (a word of a script with capitals, Cyrillic or Greek, is a name's only when capitalised; Arabic
#: and Hebrew names after a cue are read by ``_RTL_NAMES``, alone on a signature line here)
_SCRIPT_NAME_WORD = (rf"(?:{_INDIC}+|[А-ЯЁІЇЄ][\u0400-\u04ff]+|[Α-ΩΆ-Ώ][\u0370-\u03ff\u1f00-\u1fff]+|"
                     rf"[\u0600-\u06ff]+|[\u0590-\u05ff]+)")
#: a name in a script without capitals (or a writer's own) after the words for "my name is" in
#: the languages of those scripts and in English: "मेरा नाम …", "আমার নাম …", "меня зовут …",
#: "με λένε …", "نام من …", "my name is …"
_SCRIPT_NAME_CUE = re.compile(
    r"(?:(?:मेरा|हमारा)\s+नाम|আমার\s+নাম|ਮੇਰਾ\s+ਨਾਮ|મારું\s+નામ|என்\s+பெயர்|నా\s+పేరు|ನನ್ನ\s+ಹೆಸರು|എന്റെ\s+പേര്|"
    r"(?:नाम|নাম|ਨਾਮ|નામ|பெயர்|పేరు|ಹೆಸರು|പേര്|имя|ім'я|όνομα)[ \t]*:|"
    r"(?i:меня\s+зовут|мене\s+звати|моё\s+имя|мое\s+имя|мо[её]\s+им'я|με\s+λένε|ονομάζομαι|"
    r"το\s+όνομά\s+μου\s+είναι)|"
    r"(?i:my\s+name\s+is|name\s*:|signed))"
    rf"\s*[:,-]?[ \t]+({_SCRIPT_NAME_WORD}(?:[ \t]+{_SCRIPT_NAME_WORD}){{0,3}})")
_SIGNED_WORD = rf"(?:{_INDIC}+|[А-ЯЁІЇЄ][\u0400-\u04ff]+|[Α-ΩΆ-Ώ][\u0370-\u03ff\u1f00-\u1fff]+)"
#: a line of one to three words of such a script alone after a closing ("धन्यवाद,\nराजेश कुमार")
_SCRIPT_SIGNATURE = re.compile(
    r"(?m:(?:^|(?<=[.!?।]))[ \t]*(?i:धन्यवाद|शुक्रिया|ধন্যবাদ|শুভেচ্ছান্তে|спасибо|с\s+уважением|дякую|"
    r"з\s+повагою|ευχαριστώ|με\s+εκτίμηση|thanks|thank\s+you|regards|best|cheers)"
    rf"[ \t,.!।]*\n[ \t]*({_SIGNED_WORD}(?:[ \t]+{_SIGNED_WORD}){{0,2}})[ \t]*$)")


def _script_names(text: str) -> Iterator[Span]:
    """Names in the scripts of South Asia, Cyrillic, Greek, Arabic and Hebrew after a name cue
    or alone on the line after a closing: words up to the first that is no part of a name."""
    for pattern in (_SCRIPT_NAME_CUE, _SCRIPT_SIGNATURE):
        for m in pattern.finditer(text):
            words = list(re.finditer(r"\S+", m.group(1)))
            kept = []
            for w in words:
                if w.group() in _INDIC_STOP:
                    break
                kept.append(w)
            if kept:
                yield Span(m.start(1) + kept[0].start(), m.start(1) + kept[-1].end(), "person_name")


def _context_names(text: str) -> Iterator[Span]:
    for m in _RELATION.finditer(text):
        words = list(re.finditer(r"\S+", m.group(1)))
        kept: list[re.Match[str]] = []
        for i, w in enumerate(words):
            word = w.group()
            capital = word[0].isupper()
            lower_name = _given(word) and (not _ordinary(word) or (i == 0 and word.lower() not in _NAME_VERBS))
            if word.lower() in _NOT_NAMES or (not capital and not lower_name):
                break
            # after a first name no dictionary has, the next capitalised word is its family
            # name even when it is a word too ("my wife Mei Ling")
            joined = i == 1 and bool(kept) and kept[0].group()[0].isupper() and not _ordinary(kept[0].group())
            if capital and _ordinary(word) and not _given(word) and not (joined and word.lower() not in _NAME_VERBS):
                break
            kept.append(w)
            if not capital:
                break
        if kept:
            yield Span(m.start(1) + kept[0].start(), m.start(1) + kept[-1].end(), "person_name")
    for m in _LOWER_CUE.finditer(text):
        first, _, second = m.group(2).partition(" ")
        second = second.strip()
        surname = bool(second) and (_surname(second) or _given(second)) and not _ordinary(second)
        # "this is mark": a given name that is also a word needs a surname after it, unless
        # the cue says outright that a name follows ("my name is mark")
        # (or the writer writes in lower case: "hi, it's marco again. i talked to ...")
        if len(first) < 3 or not (_given(first) and (m.group(1) or surname or not _ordinary(first)
                                   or (_lower_case_writer(text) and first.lower() not in _NAME_VERBS
                                       and first.lower() not in _NOT_NAMES and len(first) >= 3))):
            continue
        # after words that say outright a name follows ("my name is george papadopoulos",
        # "mi nombre es andrés felipe gómez"), a lower-case writer's second and third words are
        # the name's too unless they are ordinary words ("my name is george and i …")
        end = m.end(2) if surname else m.start(2) + len(first)
        if m.group(1) and second and (surname or _lower_name_part(second)):
            end = m.end(2)
            third = m.group(3).strip()
            if third and _lower_name_part(third):
                end = m.end(3)
        yield Span(m.start(2), end, "person_name")
    for m in _SIGN_OFF_LINE.finditer(text):
        words = list(re.finditer(r"\S+", m.group(1)))
        # the name is the line's opening words, up to a word like "from" ("Marta from Support")
        kept = [words[0]]
        for w in words[1:]:
            if w.group().lower() in _NOT_NAMES or (w.group()[0].islower() and _ordinary(w.group())):
                break
            kept.append(w)
        if all(w.group().lower() in _NOT_NAMES or (_ordinary(w.group()) and not _given(w.group())) for w in kept) \
                or any(w.group().strip(",.").lower() in _COMPANY_WORDS and len(w.group()) >= 4 for w in words):
            continue  # "Support Team", "The billing team", "The Ops Team", "Departamento de Soporte"
        yield Span(m.start(1) + kept[0].start(), m.start(1) + kept[-1].end(), "person_name")
    for m in _FROM_TEAM.finditer(text):
        # a given name that is also a word needs a surname ("Bill from accounting" may be a bill)
        named = m.group(1).split()
        if (named[0].lower() not in _NOT_NAMES and not named[0].isupper()
                and ((_given(named[0]) and len(named) > 1) or not _ordinary(named[0]))):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _NAME_LINE.finditer(text):
        signed = m.group(1).split()
        rest = [w for w in signed[1:] if len(w.rstrip(".")) > 1]
        # under a sentence, a given name then words no dictionary has in any form ("Graham
        # Whitlock"), never a heading of ordinary words ("Job Types") or an acronym ("Server IP")
        above = text[: m.start()].rstrip(" \t\n")
        if (above and above[-1] in ".!?," and _given(signed[0]) and signed[0].lower() not in _NOT_NAMES and rest
                and not any(w.isupper() or _ordinary_form(w) or w.lower() in _NOT_NAMES or w.lower() in _COMPANY_WORDS
                            for w in rest)):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _LOWER_PAIR.finditer(text):
        # a given name and a family name in lower case ("my account says jon smyth"): the first no
        # word of the dictionary, the second a listed family name
        first, second = m.group(1), m.group(2)
        if (_given(first) and not _ordinary(first) and first not in _NOT_NAMES and _surname(second)
                and second not in _NOT_NAMES and second not in _ENGLISH_GLUE and second not in _CHAT_WORDS
                and second not in _COMMON_VERBS):
            yield Span(m.start(), m.end(), "person_name")
    for m in _LOWER_HERE.finditer(text):
        if _given(m.group(1)) and not _ordinary(m.group(1)):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _LOWER_SIGN_OFF.finditer(text):
        if _given(m.group(1)) and not _ordinary(m.group(1)):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _LOWER_LAST_LINE.finditer(text):
        # a given name and a family name no dictionary has, in lower case, on a message's last
        # line under a line of text ("… all my savings\nolena kovalenko")
        first, rest = m.group(1), m.group(2).split()
        if (_given(first) and first not in _NOT_NAMES and first not in _CHAT_WORDS and first not in _ENGLISH_GLUE
                and all((len(w) == 1 and not _ordinary(first)) or (
                    len(w) > 1 and not _ordinary_form(w) and w not in _NOT_NAMES and w not in _CHAT_WORDS)
                    for w in rest)):
            yield Span(m.start(1), m.end(2), "person_name")
    for m in _LAST_LINE_NAME.finditer(text):
        signed = m.group(1).split()
        if (any(w.lower() in _NOT_NAMES or (w.isupper() and len(w) > 1) for w in signed)
                or signed[-1].rstrip(".").lower() in _COMPANY_WORDS
                or (_ordinary(signed[0]) and not _given(signed[0])) or (len(signed) == 1 and len(signed[0]) < 3)
                or (_ordinary(signed[0]) and all(_ordinary_form(w) for w in signed[1:]) and len(signed) > 1)):
            continue  # "Thanks", "The Support Team", "Brightwave Ltd"
        yield Span(m.start(1), m.end(1), "person_name")
    for m in _RTL_NAMES.finditer(text):
        first, second = m.group(2), m.group(3)
        if not m.group(1) and not _given(first):
            continue
        family = bool(second) and (second.startswith(("ال", "بن", "ابن", "أبو", "بنت")) or _given(second)
                                   or _surname(second))
        yield Span(m.start(2), m.end(3) if family else m.end(2), "person_name")
    for m in _CJK_NAMES.finditer(text):
        group = next(g for g in range(1, 9) if m.group(g))
        if group in (4, 7, 8) and not (_surname(m.group(group)[:2]) or _surname(m.group(group)[:1])):
            continue  # "大丈夫です", "お客様" open a message too: a listed surname must open the name
        # a family name of one character alone before an honorific ("王先生")
        alone = group == 7 and len(m.group(group)) == 1 and _surname(m.group(group))
        if (len(m.group(group).replace(" ", "").replace("\u3000", "")) < 2 and not alone) \
                or m.group(group) in _CJK_NOT_NAMES:
            continue
        yield Span(m.start(group), m.end(group), "person_name")
    yield from _cjk_names_alone(text)
    yield from _script_names(text)


_HANGUL_WORD = re.compile(r"(?<![가-힣])[가-힣]{3,}")
_HAN_SPACED = re.compile(r"(?<![\u4e00-\u9fff\u3040-\u30ff])([\u4e00-\u9fff]{1,3})[ \u3000]([\u4e00-\u9fff]{1,3})"
                         r"(?![\u4e00-\u9fff])")
_HAN_RELATION = re.compile(
    r"(?:朋友|同事|老公|老婆|丈夫|妻子|太太|儿子|女儿|兒子|女兒|父亲|母亲|爸爸|妈妈|媽媽|哥哥|姐姐|弟弟|妹妹|经理|經理|老板|"
    r"老闆|同学|同學|客户|客戶|会计|會計)(?:叫|是)?\s*([\u4e00-\u9fff]{2,4})")
_HAN_ALONE = re.compile(r"(?<![\u4e00-\u9fff\u3040-\u30ff])[\u4e00-\u9fff]{2,3}(?![\u4e00-\u9fff\u3040-\u30ff])")


def _cjk_names_alone(text: str) -> Iterator[Span]:
    """Names in scripts without capitals that nothing introduces: a Korean word that opens on a
    listed family name and goes on with a listed given name ("김민준입니다"); a listed Japanese or
    Chinese family name, a space and a given name ("佐藤 健太"); two or three Chinese characters
    standing alone (two only on a line of their own), a listed family name and characters of
    listed given names ("王小明", a signature "王芳")."""
    given = name_lexicon.given_names()
    for m in _HANGUL_WORD.finditer(text):
        word = m.group()
        if _surname(word[0]) and word[1:3] in given and word[:3] not in _CJK_NOT_NAMES:
            yield Span(m.start(), m.start() + 3, "person_name")
    for m in _HAN_SPACED.finditer(text):
        if _surname(m.group(1)):
            yield Span(m.start(), m.end(), "person_name")
    chars = name_lexicon.han_given_characters()
    for m in _HAN_RELATION.finditer(text):
        # "我的朋友王小明说": after a relation, a listed family name and given-name characters
        run = m.group(1)
        for cut in (2, 1):
            if _surname(run[:cut]):
                rest = run[cut:]
                n = 0
                while n < min(2, len(rest)) and rest[n] in chars:
                    n += 1
                if n:
                    yield Span(m.start(1), m.start(1) + cut + n, "person_name")
                break
    for m in _HAN_ALONE.finditer(text):
        word = m.group()
        # two characters make many words ("黄金", "海洋"): alone they must be a line of their own
        line = text[text.rfind("\n", 0, m.start()) + 1 : (text.find("\n", m.end()) + 1 or len(text) + 1) - 1]
        if len(word) == 2 and line.strip(" \t-–—~") != word:
            continue
        for cut in (1, 2):
            if len(word) > cut and _surname(word[:cut]) and all(c in chars for c in word[cut:]):
                yield Span(m.start(), m.end(), "person_name")
                break

_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
           r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|janvier|février|mars|avril|mai|juin|juillet|août|septembre|"
           r"octobre|novembre|décembre|Januar|Februar|März|Juni|Juli|Oktober|Dezember|enero|febrero|marzo|abril|"
           r"mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|"
           r"giugno|luglio|settembre|ottobre|dicembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|"
           r"dezembro|januari|februari|maart|mei|augustus|stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|"
           r"sierpnia|września|października|listopada|grudnia)\.?")
_DATE = (rf"(?:\d{{4}}\.[ \t]\d{{1,2}}\.[ \t]\d{{1,2}}\.?|"  # Hungarian: "1991. 03. 07."
         rf"\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{1,2}}[./-]\d{{1,2}}[./-](?:\d{{4}}|\d{{2}})|"
         rf"(?i:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|"
         rf"\d{{1,2}}(?:st|nd|rd|th|\.|º|°)?[\s-]+(?:(?:of|de|di|do|da)\s+)?(?i:{_MONTHS})[\s-]+(?:(?:de|del|of)\s+)?\d{{4}}|"
         rf"\d{{4}}\s*年\s*\d{{1,2}}\s*月\s*\d{{1,2}}\s*日|\d{{4}}년\s*\d{{1,2}}월\s*\d{{1,2}}일|"
         rf"(?i:{_MONTHS})[\s,]+(?:(?:de|of)\s+)?\d{{4}}|\d{{4}}[-/ ](?i:{_MONTHS})[-/ ]\d{{1,2}}|"
         rf"\d{{1,2}}(?:st|nd|rd|th)?[\s-]+(?i:{_MONTHS})[\s-]+'?\d{{2}}(?![\d:])|"
         rf"(?i:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+'?\d{{2}}(?![\d:]))")
#: a date said in words ("march third nineteen seventy one", "the 3rd of March, nineteen
#: eighty-five", "July ninth two thousand two"): read only after a word for a birth
_ORDINAL_WORD = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
                 r"thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth|"
                 r"(?:twenty|thirty)[ -](?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth))")
_TENS_WORD = r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
_UNIT_WORD = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_TEEN_WORD = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
_YEAR_WORDS = (rf"(?:nineteen[ -](?:{_TENS_WORD}(?:[ -]{_UNIT_WORD})?|{_TEEN_WORD}|o[ -]{_UNIT_WORD}|hundred)|"
               rf"two[ -]thousand(?:[ -](?:and[ -])?(?:{_UNIT_WORD}|{_TEEN_WORD}|{_TENS_WORD}(?:[ -]{_UNIT_WORD})?))?|"
               rf"twenty[ -](?:{_UNIT_WORD}|{_TEEN_WORD}|o[ -]{_UNIT_WORD}))")
_DAY = (rf"(?:\d{{1,2}}(?:st|nd|rd|th)?|{_ORDINAL_WORD}|{_TENS_WORD}[ -]{_UNIT_WORD}|{_TEEN_WORD}|{_UNIT_WORD}|"
        rf"twenty|thirty)")
_SPOKEN_DATE = (rf"(?i:{_MONTHS}[ \t]+(?:the[ \t]+)?{_DAY},?[ \t]+(?:{_YEAR_WORDS}|\d{{4}})|"
                rf"(?:the[ \t]+)?{_DAY}[ \t]+(?:of[ \t]+)?{_MONTHS},?[ \t]+(?:{_YEAR_WORDS}|\d{{4}}))(?![\w-])")
_BIRTH = re.compile(
    r"(?i:\b(?:born|date\s+of\s+birth|birth\s*date|birthday|d\.?o\.?b\.?|geboren|geburtsdatum|geburtstag|"
    r"cumpleaños|anniversaire|compleanno|aniversário|verjaardag|urodziny|né|née|"
    r"date\s+de\s+naissance|fecha\s+de\s+nacimiento|nacid[oa]|data\s+di\s+nascita|nato|nata|data\s+urodzenia|"
    r"urodzon[ya]|data\s+de\s+nascimento|nascid[oa]|geboortedatum|geboren\s+op|fødselsdato|födelsedatum|"
    r"syntymäaika|doğum\s+tarihi|дата\s+рождения|родил(?:ся|ась)|"
    # Greek, Romanian, Indonesian and Malay, Vietnamese, Czech, Hungarian, Ukrainian, the Nordic languages
    r"ημερομηνία\s+γέννησης|ημ\.?\s*γέννησης|γεννήθηκα|γενέθλια|data\s+na[șs]terii|n[ăa]scut[ăa]?|"
    r"tanggal\s+lahir|tgl\.?\s+lahir|tarikh\s+lahir|lahir|ngày\s+sinh|sinh\s+ngày|datum\s+narozen[íi]|narozen[aá]?|"
    r"születési\s+(?:dátum|idő)|születtem|дата\s+народження|народил(?:ся|ася)|född|født|syntynyt))"
    r"(?:\b|(?<=\.))[^.!?\n\d]{0,60}?" + rf"({_DATE}|{_SPOKEN_DATE})"
    r"|(?i:\bborn\s+(?:in\s+)?)((?:19|20)\d{2})\b(?![/.-]\d)"
    r"|(?:生年月日|出生日期|生日|생년월일|تاريخ\s+الميلاد|מועד\s+לידה|תאריך\s+לידה|วันเกิด|जन्म\s+तिथि)"
    r"\s*[はがは：:是은는]?\s*" + rf"({_DATE})"
)
_DATE_ALONE = re.compile(rf"(?<![\w/.-])(?:{_DATE})(?![\w/-])")
#: the last year a customer is likely born in: a later date after a birth cue is an event's
_LAST_BIRTH_YEAR = 2012
_SENTENCE_STOP = re.compile(r"[.!?](?!\S)|\n")
_HANDLE = re.compile(r"(?<![\w.@/])@[A-Za-z0-9_](?:[A-Za-z0-9_.]{0,38}[A-Za-z0-9_])?(?![\w@])")
_DISCORD = re.compile(r"(?<![\w#])[A-Za-z0-9_.]{2,32}#\d{4}(?!\w)")
_PLATFORMS = (r"steam|psn|xbox|epic|riot|battle\.?net|twitch|discord|telegram|instagram|insta|tiktok|reddit|"
              r"skype|github|gitlab|roblox|minecraft|game|gamer|player|account")
_USERNAME_LATER = re.compile(
    r"(?i:\b(?:user\s*name|username|login|user\s*id|handle|screen\s*name)\b[^.\n:]{1,30}?\b(?:is|:)\s*)"
    r"([A-Za-z0-9_][\w.@-]{2,39})(?<![.-])")
#: a host name: two dots or more, or a last label that is a top-level domain
_HOST_NAME = re.compile(r"(?i)[a-z0-9-]+(?:\.[a-z0-9-]+){2,}|[a-z0-9-]+\.(?:com|net|org|io|dev|app|example|local|"
                        r"internal|corp|lan|cloud|ai|co|de|uk|fr|es|it|nl|eu|us|in|br|pl)")
_PAYMENT_HANDLE = re.compile(r"(?<![\w.@+-])[A-Za-z0-9][\w.-]{1,63}@[A-Za-z][A-Za-z0-9]{1,30}(?![\w@.-]|\.[A-Za-z])")
_PLATFORM = re.compile(rf"(?i:{_PLATFORMS})")
_SAID_OF_A_NAME = frozenset((
    "wrong", "incorrect", "invalid", "hidden", "taken", "required", "mandatory", "missing", "empty", "correct",
    "right", "case", "locked", "blocked", "disabled", "enabled", "visible", "shown", "displayed", "different",
    "same", "too", "not", "already", "still", "now", "also", "unique", "optional", "fine", "ok", "okay", "gone",
    "changed", "unknown", "unavailable", "available", "greyed", "grayed", "blank", "shorter", "longer", "the",
    "my", "your", "our", "their", "his", "her", "in", "on", "at", "used", "set", "listed", "saved", "stored",
))
_USERNAME = re.compile(
    r"(?i:\b(?:user\s*name|username|user|user\s*id|login|handle|nick(?:name)?|gamertag|screen\s*name|pseudo|"
    r"benutzername|benutzer|utente|utilisateur|gebruiker|usuario|nome\s+utente|ign|in-game\s+name|seller|buyer|"
    r"vendor|merchant|streamer|creator|identifiant|nom\s+d'utilisateur|usuário|nazwa\s+użytkownika|"
    r"gebruikersnaam|kullanıcı\s+adı|brugernavn|användarnamn|"
    rf"(?:{_PLATFORMS})\s*(?:name|id|handle|tag)?|(?:log(?:ged)?|sign(?:ed)?)[\s-]*in\s+as)(?![\w]))"
    # a JSON or YAML key closes its quote before the colon ('"username":"svc-k8s-puller"')
    r"(?:[\"'](?=[ \t]*[:=]))?\s*(is\s+|[:=]\s*)?(?:(?:ist|lautet|es|est|é|è|är|er|jest|to|je)\s+)?"
    r"[\"'“‘]?([A-Za-z0-9_][\w.@-]{2,39})(?<![.-])"
)


# -- names no list holds: capitalised words this bot's corpus does not know ---------------------
#: a word with a capital inside is a product's name ("PayPal", "iPhone"), unless the capital
#: follows a surname's prefix ("McAllister", "O'Brien", "DeShawn")
_INNER_CAPITAL = re.compile(r"^(?!(?:Mc|Mac|O['’]|D['’]|De|Di|Da|La|Le|Van|Von|Al-|El-))\w+[A-Z]")
#: words after which a person is named ("picking this up from Laura", "cc Hamza")
_TAKES_A_PERSON = frozenset(("from", "with", "by", "and", "cc", "ask", "asked", "tell", "told", "thank", "thanks",
                             "contact", "contacted", "per", "for", "called", "named", "to", "emailed", "messaged"))
_SENTENCE_OPEN = re.compile(r"[.!?:;\n\"“(\-–—][ \t]*$")


def vocabulary_candidates(texts: Iterable[str]) -> set[str]:
    """The capitalised words of ``texts`` (lower case, as :func:`name_lexicon.key` writes
    them) that a bot's vocabulary is asked about: the rule of :func:`_unknown_names` reads a
    word as a name only when the bot's own corpus does not know it."""
    out = set()
    for text in texts:
        for m in _WORD.finditer(text):
            w = m.group()
            if len(w) >= 2 and w[0].isupper() and not w.isupper() and w.lower() not in _NOT_NAMES:
                out.add(name_lexicon.key(w))
        # and the words in lower case where a name is introduced ("hey its olusegun")
        for cue in _LOWER_CUE.finditer(text):
            out.update(name_lexicon.key(w) for w in cue.group(2).split())
        # and a lower-case writer's words that are given names ("tell jessica")
        if _lower_case_writer(text):
            out.update(name_lexicon.key(m.group()) for m in _LOWER_WORD.finditer(text) if _given(m.group()))
        # and the parts of a code no word introduces ("WD-4001"): a product's error code when
        # the corpus knows them, a customer's reference when not
        for m in _REFERENCE.finditer(text):
            out.update(_code_parts(m.group(1) or m.group(2)))
    return out


def _code_parts(code: str) -> list[str]:
    return [part.lower() for part in re.findall(r"[^\W_]+", code)]


#: names of the platforms, payment networks, browsers, devices and banks that tickets of any
#: product mention, which a bot's own corpus may not: none is a person's
_BRANDS = frozenset((
    "amex", "mastercard", "visa", "maestro", "discover", "paypal", "venmo", "zelle", "klarna", "afterpay", "alipay",
    "wechat", "paytm", "mpesa", "revolut", "wise", "monzo", "n26", "barclays", "hsbc", "santander", "citi",
    "chase", "coinbase", "binance", "kraken", "bybit", "okx", "kucoin", "metamask", "ledger", "trezor", "koinly",
    "arbitrum", "solana", "ethereum", "bitcoin", "polygon", "tron", "google", "gmail", "android", "apple", "iphone",
    "ipad", "macos", "ios", "windows", "linux", "ubuntu", "chrome", "chromium", "firefox", "safari", "edge",
    "opera", "brave", "samsung", "pixel", "huawei", "xiaomi", "oneplus", "motorola", "nokia", "instagram",
    "facebook", "whatsapp", "telegram", "signal", "twitter", "tiktok", "youtube", "linkedin", "reddit", "discord",
    "slack", "zoom", "teams", "outlook", "hotmail", "yahoo", "okta", "auth0", "xero", "quickbooks", "shopify",
    "stripe", "adyen", "amazon", "aws", "azure", "github", "gitlab", "jira", "zendesk", "salesforce", "hubspot",
    "dropbox", "notion", "figma", "uber", "airbnb", "netflix", "spotify", "steam", "nintendo", "playstation",
    "xbox", "nike", "adidas", "tesla", "mercedes", "benz", "bmw", "toyota", "dhl", "fedex", "ups", "usps",
    "sonoma", "ventura", "monterey", "tor", "vpn",
    # the software, telecoms and money services support tickets name most
    "zapier", "hubspot", "pipedrive", "mailchimp", "twilio", "intercom", "freshdesk", "helpscout", "trello",
    "asana", "clickup", "wordpress", "woocommerce", "magento", "squarespace", "wix", "godaddy", "cloudflare",
    "heroku", "vercel", "netlify", "sendgrid", "mailgun", "terraform", "kubernetes", "docker", "postgres",
    "postgresql", "mysql", "mongodb", "redis", "bitbucket", "acrobat", "electrum", "exodus", "phantom", "uniswap",
    "opensea", "tether", "usdt", "usdc", "plaid", "payoneer", "skrill", "neteller", "cashapp", "gpay", "nubank",
    "chime", "robinhood", "etoro", "webull", "bitstamp", "bitfinex", "gemini", "airtel", "mtn", "vodafone",
    "safaricom", "verizon", "tmobile", "comcast", "orange", "lycamobile", "nano", "trustwallet", "blockchain",
))
_TRAVEL_TO = re.compile(r"(?i:\b(?:travel|travell?ing|fly|flying|flew|move|moving|moved|relocat\w*|trip|"
                        r"visit\w*|going|go|went|ship\w*|deliver\w*|back)[ \t]+(?:to|from)[ \t]+)\Z")
#: "from Nairobi to Kampala": the second of two places
_FROM_TO = re.compile(r"\b(?i:from)[ \t]+[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*){0,2}[ \t]+to[ \t]+\Z")
_BEFORE_NUMBER = re.compile(r"\.?[ \t]?\d")
#: what follows a place's name ("the Dublin office")
_PLACE_AFTER = re.compile(r"[ \t]+(?:office|team|branch|airport|store|warehouse|site)\b")
#: what follows a company's name ("Pampa Foods S.A.", "Hoffmann & Partner")
_COMPANY_AFTER = re.compile(r"[ \t]*(?:&|\+|S\.?A\.?|S\.?L\.?|S\.?p\.?A\.?|N\.?V\.?|(?:Ltd|Inc|GmbH|LLC|AG|BV|Co|Corp|"
                            r"PLC|Pty|SRL|SAS|Oy|AB)\b)")


_NEXT_WORD = re.compile(r"[ \t]+([^\s,;:()]+)")


def _company_after(text: str, pos: int) -> bool:
    """A company's legal form follows ("Ltd", "S.A.", or any locale's from Faker: "Bt.", "Kft.",
    "s.r.o."): a longer form in any case, a short one as the locale writes it."""
    if _COMPANY_AFTER.match(text, pos):
        return True
    m = _NEXT_WORD.match(text, pos)
    return m is not None and _legal_form(m.group(1))


def _legal_form(word: str) -> bool:
    """One of the legal forms of :func:`name_lexicon.legal_forms`, with or without its last stop."""
    forms = name_lexicon.legal_forms()
    if word in forms or word + "." in forms:
        return True
    return len(word.rstrip(".")) > 3 and word.lower().rstrip(".") in _long_legal_forms()


@functools.cache
def _long_legal_forms() -> frozenset[str]:
    return frozenset(f.lower().rstrip(".") for f in name_lexicon.legal_forms() if len(f.rstrip(".")) > 3)


def _name_like(word: str, known: Collection[str]) -> bool:
    """A capitalised word that may be part of a name: not known to the bot, no stop word, no
    title, no contraction, no acronym, no product's inner capital."""
    k = name_lexicon.key(word)
    low = word.lower().strip("'’")
    return (k not in known and low not in _NOT_NAMES and low.rstrip("s") not in _NOT_NAMES and low not in _TITLES
            and not any(name_lexicon.key(part) in _BRANDS for part in re.split(r"[-'’]", word))
            and not word.isupper() and _INNER_CAPITAL.match(word) is None and len(k) >= 2
            and not re.search(r"['’](?:m|s|re|ve|d|ll|t)$", word, re.IGNORECASE)
            # a word of Latin letters with no vowel is an abbreviation ("Txn", "Msg"), unless a
            # listed family name ("Ng")
            and not (re.fullmatch(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]+", k) and not _surname(k)))


def _plain_word(word: str, *, glued: bool = False) -> bool:
    """An ordinary word or a compound of ordinary words ("Hungarian-order"); with ``glued``,
    written as one word too ("Whitelisted", "Username"; family names are such compounds as
    often, "Sandberg", so only where a sentence opens on a lone word)."""
    if _ordinary_form(word) or all(_ordinary_form(part) for part in re.split(r"[-'’]", word) if part):
        return True
    if not glued:
        return False
    w = name_lexicon.key(word)
    return any(w[:i] in name_lexicon.ordinary_words() and _ordinary_form(w[i:]) for i in range(3, len(w) - 2))


#: words every English sentence of some length has one of, and other languages' lack
_ENGLISH_GLUE = frozenset(("the", "a", "an", "and", "to", "of", "is", "are", "was", "my", "your", "you", "it",
                           "for", "with", "on", "this", "that", "not", "can", "have", "has", "please", "what",
                           "how", "we", "our", "me", "he", "she", "his", "her", "they", "from", "at", "but"))


#: (each part bounded: a long run of one character class stays linear)
_ADDRESS_LIKE = re.compile(r"[^\s@]{0,64}@\S{1,255}|\b[a-z][a-z0-9+.-]{1,15}://\S{1,2048}|"
                           r"(?<![\w-])[\w-]{1,63}(?:\.[\w-]{1,63}){2,}")


def _english(text: str) -> bool:
    """Most lower-case words of ``text`` are English words: elsewhere (German writes its nouns
    with a capital) a capitalised word unknown to the dictionary says nothing."""
    # the words of an address, a URL or a host are no words of the sentence ("(seun.adebayo@gmail.com)")
    text = _ADDRESS_LIKE.sub(" ", text)
    lower = [w for w in _WORD.findall(text) if w[0].islower()]
    if len(lower) < 3:
        return False
    plain, glue = sum(_plain_word(w) for w in lower), sum(w in _ENGLISH_GLUE for w in lower)
    # a short text may have a single glue word, if nearly all its words are English
    return plain >= 0.7 * len(lower) and (glue >= 2 or (glue == 1 and plain >= 0.85 * len(lower)))


#: words of chat that no dictionary has and that follow "I'm" or "it's" as often as a name
_CHAT_WORDS = frozenset(("gonna", "wanna", "gotta", "kinda", "sorta", "lemme", "dunno", "btw", "tbh", "idk", "lol",
                         "pls", "plz", "thx", "ok", "okay", "ya", "yeah", "yep", "nope", "cuz", "coz", "tho", "omg",
                         "smh", "fyi", "imo", "imho", "rn", "asap", "literally", "u", "ur", "im", "ive", "dont",
                         "cant", "wont", "didnt", "doesnt", "isnt", "wasnt", "thats", "whats", "theres", "youre",
                         "max", "min", "sys", "dev", "devs", "admin", "repo", "config", "app", "apps"))


_LOWER_WORD = re.compile(r"(?<![\w'’@./-])[a-zà-ÿ][a-zà-ÿ]{2,}(?![\w'’@/-]|\.\w)")
#: a sign-off that is a dash and a name in lower case closing the message ("got it, thx. - sven")
_LOWER_DASH_SIGN = re.compile(r"(?:^|(?<=\s))[-–—~]+[ \t]*([a-zà-ÿ][a-zà-ÿ'’-]{2,})[ \t]*[.!]*[ \t]*\Z")


#: a capitalised word before a verb people do in tickets ("Marco confirmed", "Olena will call"),
#: or after a question's auxiliary ("Can Arjun get …")
_SUBJECT = re.compile(
    rf"(?<![\w'’-])({_NAME_WORD})[ \t]+(?=(?:confirmed|sent|said|says|called|asked|told|wrote|replied|emailed|"
    r"mentioned|approved|signed|will|would|can|could|needs|wants|tried|lost|paid|joined|left|received|forgot|"
    r"changed|deposited|withdrew|transferred|shared|added|invited|promised|explained|already|still|just)\b)"
    rf"|\b(?:Can|Could|Will|Would|Does|Did|Should|Has|Is)[ \t]+({_NAME_WORD})[ \t]+(?=[a-z])")
#: given names that are common English words, which open a sentence as that word as often ("Hope
#: this helps", "Grace period ends"); the BIP-39 list's 2,048 common words are read the same way
_COMMON_WORD_NAMES = frozenset((
    "grace", "hope", "faith", "joy", "dawn", "summer", "autumn", "ruby", "jade", "amber", "crystal", "pearl", "iris",
    "violet", "lily", "holly", "ivy", "sky", "rose", "daisy", "angel", "honey", "sunny", "happy", "lucky",
    "patience", "charity", "destiny", "trinity", "unity", "liberty", "justice", "harmony", "melody", "river", "rain",
    "storm", "star"))


def _subject_names(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """A listed given name that does something ("Marco confirmed the transfer", "Olena will call
    you", "Can Arjun get admin rights?") or owns something ("Arjun's trade"), even one the
    dictionary has as a rare word: never a
    verb or a common word ("Bill", "Grace", "Hope"), a month, a place, a brand, nor a word the
    corpus knows; never after an article or a possessive ("our Jasper will …")."""
    for pattern in (_SUBJECT, _POSSESSIVE_NAME):
        for m in pattern.finditer(text):
            g = 1 if m.group(1) else 2
            word = m.group(g)
            low, k = word.lower(), name_lexicon.key(word)
            before = text[max(0, m.start(g) - 12) : m.start(g)].split()
            if (not _given(word) or low in _NAME_VERBS or low in _NOT_NAMES or low in _PLACE_NAMES or k in _BRANDS
                    or k in name_lexicon.coin_names() or low in _COMMON_WORD_NAMES or k in name_lexicon.seed_words()
                    or (known is not None and k in known) or word.isupper()
                    or (before and before[-1].lower() in (*_POSSESSIVE, "the", "a", "an", "this"))):
                continue
            yield Span(m.start(g), m.end(g), "person_name")


def _lower_given(word: str, known: Collection[str] | None) -> bool:
    """A word written in lower case that is a listed given name and nothing else: no word of the
    dictionary in any form, no particle, stop, chat or common verb, unknown to the corpus."""
    return (_given(word) and not _ordinary_form(word) and re.fullmatch(_PARTICLE, word) is None
            and word not in _NOT_NAMES and word not in _CHAT_WORDS and word not in _COMMON_VERBS
            and (known is None or name_lexicon.key(word) not in known))


def _lower_given_names(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """Names where the writer writes everything in lower case ("ok so yesterday aisha sent me
    the link", "please tell jessica her card is ready"): in such an English message, a listed
    given name that is nothing else, with a listed family name after it; a dash sign-off."""
    for m in _LOWER_DASH_SIGN.finditer(text):
        if _given(m.group(1)) and not _ordinary(m.group(1)) and m.group(1) not in _NOT_NAMES:
            yield Span(m.start(1), m.end(1), "person_name")
    if not (_lower_case_writer(text) and _english(text)):
        return
    words = list(_LOWER_WORD.finditer(text))
    for i, m in enumerate(words):
        if not _lower_given(m.group(), known):
            continue
        end = m.end()
        if i + 1 < len(words) and re.fullmatch(r"[ \t]+", text[m.end() : words[i + 1].start()]):
            nxt = words[i + 1].group()
            if (_surname(nxt) and not _ordinary_form(nxt) and nxt not in _NOT_NAMES and nxt not in _COMMON_VERBS
                    and nxt not in _ENGLISH_GLUE):
                end = words[i + 1].end()
        yield Span(m.start(), end, "person_name")


def _lower_unknown_names(text: str, known: Collection[str]) -> Iterator[Span]:
    """A name written in lower case after the words that introduce one ("hey its olusegun"),
    that no list holds: a word no dictionary has, no chat word, unknown to the corpus; the
    next word joins it when it is such a word too."""
    for m in _LOWER_CUE.finditer(text):
        words = list(re.finditer(r"\S+", m.group(2)))

        def unknown(w: str) -> bool:
            k = name_lexicon.key(w)
            return (len(k) >= 3 and k not in known and k not in _CHAT_WORDS and w.lower() not in _NOT_NAMES
                    and not _plain_word(w) and not _given(w))  # a listed one: ``_context_names``

        if not words or not unknown(words[0].group()):
            continue
        end = words[1].end() if len(words) > 1 and unknown(words[1].group()) else words[0].end()
        yield Span(m.start(2) + words[0].start(), m.start(2) + end, "person_name")


def _unknown_names(text: str, known: Collection[str]) -> Iterator[Span]:
    """With the words the bot's corpus knows (``known``): in English text, a capitalised word
    that is no English word, no place and unknown to the corpus is a name ("Olusegun Adebayo",
    at a sentence's start only with a second such word); in any text, a listed given name inside
    a sentence that the corpus does not know, even if the dictionary has it as a rare word
    ("picking this up from Laura"). The capitalised neighbours that are names too go with it.
    A run naming a company ("Morgan & Chase Logistics Ltd") or a product ("Ruby SDK") is none."""
    english = _english(text)
    runs = list(_capitalised_runs(text))
    cut: set[str] | None = None

    def abbreviated() -> set[str]:
        """The first three to six letters of each longer word of the text: a capitalised word
        among them is that word cut short ("uncheck Verify Cert" beside "certificate")."""
        nonlocal cut
        if cut is None:
            cut = {w[:n] for w in {w.lower() for w in re.findall(r"[^\W\d_]{7,}", text)} for n in range(3, 7)}
        return cut

    for r, (run, before) in enumerate(runs):
        if before in _POSSESSIVE or before in _LOCATIVE or _TRAVEL_TO.search(text, max(0, run[0].start() - 24),
                                                                              run[0].start()) \
                or _FROM_TO.search(text, max(0, run[0].start() - 60), run[0].start()):
            continue  # "our Wells Fargo account", "a team of 12 in Chicago", "I fly to Mombasa"
        words = [m.group() for m in run]
        if any(m.group().lower().rstrip(".") in _COMPANY_WORDS or _company_after(text, m.end())
               or (k and _legal_form(m.group())) for k, m in enumerate(run)):
            continue
        if r and re.fullmatch(r",?[ \t]+(?:and|or|&)[ \t]+|,[ \t]*", text[runs[r - 1][0][-1].end() : run[0].start()]) \
                and runs[r - 1][1] in (*_LOCATIVE, "to", "from"):
            continue  # "ship to Florence and Victoria": places listed after a place word
        start = run[0].start()
        opens = ((start <= 16 and not text[:start].strip())
                 or _SENTENCE_OPEN.search(text, max(0, start - 16), start) is not None)
        if _PLACE_AFTER.match(text, run[-1].end()):
            continue  # "the Dublin office", "our Lisbon team"

        def joins(word: str) -> bool:
            return _name_like(word, known) and (not _plain_word(word) or _given(word) or _surname(word))

        likely = []
        for i, w in enumerate(words):
            k = name_lexicon.key(w)
            if not _name_like(w, known) or re.fullmatch(_PARTICLE, w) or _BEFORE_NUMBER.match(text, run[i].end()):
                likely.append(False)  # "Ksh 3,000", "Block 12": a unit or a place's number
                continue
            head, dash, tail = w.partition("-")
            if dash and tail[:1].islower() and (len(head) <= 3 or _plain_word(tail)):
                likely.append(False)  # "Re-serialising", "Pre-auth": a prefix before a word
                continue
            if not (_given(w) or _surname(w)) and 3 <= len(k) <= 6 and k in abbreviated():
                likely.append(False)  # "Verify Cert" beside "certificate": a word cut short
                continue
            listed_name = _given(w) or _surname(w)
            unlisted = (english and not _plain_word(w) and len(k) >= 3
                        and (k not in name_lexicon.place_names() or listed_name))
            if unlisted and i == 0 and opens:
                # a sentence opens on it: alone, it must be no compound of English words
                # ("Olusegun paid", not "Whitelisted addresses"); before more capitalised words,
                # the next must be unknown too ("Olusegun Adebayo", not "Kampala Mobile Money")
                unlisted = ((_name_like(words[1], known) and not _plain_word(words[1])) if len(words) > 1
                            else not _plain_word(w, glued=True))
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if unlisted and i == 0 and before in ("from", "via") and (len(words) == 1 or not joins(words[1])):
                unlisted = False  # "Hello from Lagos!", "via Doha": a place more often
            # a given name that is a rare word too ("Laura", "Hamza") after a word that takes a person
            listed = (english and _given(w) and i == 0 and before in _TAKES_A_PERSON and w.lower() not in _NAME_VERBS
                      and k not in _PLACE_NAMES
                      # "Jordan Freight", "Ruby SDK": a given name before a noun or an acronym names a thing
                      and not (nxt and (nxt.isupper() or (_plain_word(nxt) and not _given(nxt) and not _surname(nxt)))))
            # a listed given name before a listed family name, neither known to the corpus, even
            # when the dictionary has both ("Yesterday Anna Weber approved it", "co-signer, Anna
            # Weber,"): a person, not a feature ("Bill Pay", "Grace Period" are words it knows)
            pair = (bool(nxt) and _given(w) and _surname(nxt) and _name_like(nxt, known)
                    and w.lower() not in _NAME_VERBS and k not in _PLACE_NAMES
                    and name_lexicon.key(nxt) not in name_lexicon.place_names()
                    and not (i > 0 and words[i - 1].lower() in (*_LOCATIVE, "visit", "from", "to"))
                    and nxt.lower() not in _COMPANY_WORDS and not _PLACE_AFTER.match(text, run[i + 1].end()))
            likely.append(unlisted or listed or pair)

        i = 0
        while i < len(run):
            if not likely[i]:
                i += 1
                continue
            start, end = i, i + 1
            while start > 0 and joins(words[start - 1]) and not re.fullmatch(_PARTICLE, words[start - 1]):
                start -= 1
            # after a name no dictionary has, the next capitalised word the corpus does not know is
            # its family name even when it is a word too ("Tendai Moyo", "Mei Ling")
            unlisted_before = not _plain_word(words[i])
            while end < len(run) and (joins(words[end]) or (
                    re.fullmatch(_PARTICLE, words[end]) and end + 1 < len(run) and joins(words[end + 1]))
                    or (unlisted_before and end == i + 1 and _name_like(words[end], known)
                        and words[end].lower() not in _NAME_VERBS)):
                end += 1
            yield Span(run[start].start(), run[end - 1].end(), "person_name")
            i = end

#: a given name's initial and a family name ("J. Okafor", "t.n.v. S. Bakker")
_INITIAL_SURNAME = re.compile(rf"(?<![\w.@/-])[{_UPPER}]\.[ \t]?({_NAME_WORD})(?![\w@]|[.-]\w)")
#: the name a mailbox is shown under, before its address ("Annelies van der Berg <a.vdberg@…>",
#: '"Tran, Minh" <…>')
_DISPLAY_NAME = re.compile(rf"(?<![\w@])[\"']?({_NAME_SEQ}(?:,[ \t]*{_NAME_WORD})?)[\"']?[ \t]*"
                           r"<[^\s<>@]{1,64}@[^\s<>]{1,255}>")


def _initials_and_mailboxes(text: str) -> Iterator[Span]:
    """A listed family name after an initial, no dictionary word ("J. Okafor", not "A. Install");
    the capitalised words a mailbox is shown under, unless a company's ("Acme Support <…>")."""
    for m in _INITIAL_SURNAME.finditer(text):
        word = m.group(1)
        if _surname(word) and not _ordinary(word) and word.lower() not in _NOT_NAMES:
            yield Span(m.start(), m.end(1), "person_name")
    if "<" in text:
        for m in _DISPLAY_NAME.finditer(text):
            words = [w.strip(",") for w in m.group(1).split() if not re.fullmatch(_PARTICLE, w)]
            if any(w.lower() in _COMPANY_WORDS or w.lower() in _NOT_NAMES
                   or (_ordinary(w) and not (_given(w) or _surname(w))) for w in words):
                continue  # "Harbor Notifications <noreply@…>", "Billing Team <…>"
            yield Span(m.start(1), m.end(1), "person_name")


def _people(text: str) -> Iterator[Span]:
    yield from _names(text)
    yield from _initials_and_mailboxes(text)
    yield from _lexicon_names(text)
    yield from _context_names(text)
    for m in _BIRTH.finditer(text):
        group = next(g for g in (1, 2, 3) if m.group(g))
        yield Span(m.start(group), m.end(group), "date_of_birth")
        # every date after the cue in the same sentence is one ("it says 1991-07-22 but it's 1991-07-12")
        # (within 120 characters: a text of many cues stays linear)
        window_end = min(len(text), m.end(group) + 120)
        stop = _SENTENCE_STOP.search(text, m.end(group), window_end)
        line_end = text.find("\n", m.end(group), window_end)
        line_end = window_end if line_end < 0 else line_end
        # ("… shows 01.03.1987. The right one is 14.03.1987": on the cue's line, a later date of a
        # year a customer may be born in is a birth date too, past the sentence's end)
        for later in _DATE_ALONE.finditer(text, m.end(group), line_end):
            year = re.search(r"(?:19|20)\d{2}", later.group())
            if (stop is None or later.end() <= stop.start()) or (
                    year and 1900 <= int(year.group()) <= _LAST_BIRTH_YEAR):
                yield Span(later.start(), later.end(), "date_of_birth")
    for m in _USERNAME_LATER.finditer(text):
        value = m.group(1)
        # after a word that only names a user name ("my username on your site is cryptoqueen"), a
        # lower-case word no dictionary has is one too ("is required", "is invalid" are words)
        named = re.match(r"(?i)user\s*name|username|screen\s*name|handle", m.group())
        if re.search(r"[\d_.]", value) or (
                named and re.fullmatch(r"[a-z]{4,30}", value) and not _ordinary_form(value)
                and value not in _NOT_NAMES and value not in _ENGLISH_GLUE and value not in _CHAT_WORDS):
            yield Span(m.start(1), m.end(1), "username")
    for m in _HANDLE_AFTER.finditer(text):
        if re.search(r"_.*\d|\d.*_|[a-z]\d{2,}", m.group(1)):  # "trader_jo3", not "the dashboard"
            yield Span(m.start(1), m.end(1), "username")
    for m in _HANDLE_ON.finditer(text):
        if re.search(r"[_.\d]", m.group(1)):  # a handle, not "Maria on the forum"
            yield Span(m.start(1), m.end(1), "username")
    for pattern in (_HANDLE, _DISCORD):
        for m in pattern.finditer(text):
            yield Span(m.start(), m.end(), "username")
    for m in _USERNAME.finditer(text):
        # "login from ..." is not a user name: one is said ("username: x") or looks like one; a
        # platform's name alone says nothing ("Discord is community-run")
        cue = text[m.start() : m.start(1) if m.group(1) else m.start(2)]
        said = bool(m.group(1)) and not _PLATFORM.fullmatch(cue.strip())
        # "the user is blocked": after a bare "user", a word of the dictionary is no handle
        if re.fullmatch(r"(?i)(?:user|login|handle)\s*", cue) and _ordinary(m.group(2)):
            said = False
        # "the username is wrong", "screen name is hidden": after "is", a word that says
        # something of the name ("my username is falcon" gives one)
        if (m.group(1) or "").strip().lower() == "is" and m.group(2).lower() in _SAID_OF_A_NAME:
            said = False
        # "Account name: Oluwaseun Adeyemi-Clarke": a capitalised word before another is a full name
        if re.fullmatch(r"[A-Z][a-z'’]+", m.group(2)) and re.match(rf"[ \t]+{_NAME_WORD}", text[m.end(2) :]):
            continue
        # a number is no handle ("paid a seller 3.2 XMR"), nor a host name ("login harbor.acme.example")
        if (not re.search(r"[^\W\d_]", m.group(2)) or _HOST_NAME.fullmatch(m.group(2))) and "@" not in m.group(2):
            continue
        if said or re.search(r"[\d_.]", m.group(2)) or _initial_surname(m.group(2)):
            yield Span(m.start(2), m.end(2), "username")
    # a payment handle: a user and a bank or app after "@" with no domain ("rahul.verma@okhdfcbank")
    for m in _PAYMENT_HANDLE.finditer(text):
        yield Span(m.start(), m.end(), "username")
    yield from _account_names(text)


#: a user given to a command line's user option ("docker login -u lwei registry.example")
_CLI_USER = re.compile(
    r"(?i:\b(?:docker|podman|helm|oras|skopeo|nerdctl|crane|psql|mysql|mongo(?:sh)?|redis-cli|ssh|sftp|ftp|curl|"
    r"git|kubectl|oc|az|login)\b[^\n`]{0,80}?(?<!\S)(?:-u|-l|--user(?:name)?|--login)(?:[ \t]+|=))"
    r"[\"']?([A-Za-z0-9_][\w.@$-]{1,39})(?<![.-])")
#: an account's name said after what names one ("Access ID replicator", "robot account
#: robot$ci-builder", "Who set it: dkowalski", "created by jsmith")
_ACCOUNT_NAME_CUE = re.compile(
    r"(?i:\b(?:access\s+(?:key\s+)?id|client\s+id|login\s+id|user\s+id|robot\s+account|service\s+account|"
    r"bot\s+account|technical\s+user|service\s+user|"
    r"who\s+(?:set|created|added|configured|changed|made|installed|owns)\s+(?:it|this|that|them)|"
    r"(?:set\s+up|created|added|configured|changed|owned|installed|made)\s+by|assigned\s+to|assignee|owner|"
    r"(?:ran|runs|run|running|executed|executes|authenticated|impersonating|acting)\s+as)\b)"
    r"(?:[ \t]*(?:is|was|named|called|:|=|-))*[ \t]*[\"'`“‘]?([A-Za-z0-9_$][\w.@$-]{1,39})(?<![.-])")
#: the user of a URL's user-info ("postgres://tdadmin:…@db", "https://hookuser:…@ci.example")
_URL_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,15}://([^\s:/@]{1,64}):[^\s/@]{1,128}@(?=[\w\[])")
#: the user named in an LDAP distinguished name: a "uid=" anywhere, a "cn=" before the rest of
#: the name ("cn=svc-harbor,ou=svc,dc=corp,dc=local")
_LDAP_USER = re.compile(r"(?i)\b(?:uid|samaccountname|userprincipalname)=([^,;+=\s\"'()]{2,64})"
                        r"|\bcn=([^,;+=\n\"'()]{2,64}?)(?=[ \t]*,[ \t]*(?:ou|dc|o|cn|uid|c|l|st)=)")
#: Harbor's robot accounts carry their prefix ("robot$ci-builder")
_ROBOT = re.compile(r"(?<![\w$])robot\$[A-Za-z0-9][\w.+-]{0,60}(?<![.+-])")
_NOT_ACCOUNT_NAMES = frozenset(("the", "a", "an", "and", "or", "is", "was", "for", "to", "in", "on", "of", "with",
                                "field", "value", "here", "there", "it", "this", "that", "someone", "somebody",
                                "admin", "admins", "you", "your", "us", "our", "me", "my", "them", "him", "her",
                                "default", "mistake", "accident", "hand", "email", "but", "then", "when",
                                # the accounts a system comes with, nobody's own
                                "root", "postgres", "mysql", "oracle", "ubuntu", "ec2-user", "centos", "debian",
                                "administrator", "guest", "user", "test", "sa", "sys", "system", "nobody",
                                "www-data", "git", "jenkins", "docker"))


def _system_account(value: str) -> bool:
    """A system's or an application's own account ("root", "postgres", "app", "Users"), a
    variable ("$USER") or a word of the dictionary: nobody's user name."""
    low = value.lower()
    return (low.startswith(("$", "%", "{")) or low in _NOT_ACCOUNT_NAMES or low in _ENGLISH_GLUE
            or low in _NOT_NAMES or low in _CHAT_WORDS or _ordinary_form(value))


#: a user name written before its secret, after a word for an account ("uses our account
#: acmebuilds / dckr_pat_…", "login: jdoe / <password>")
_USER_BEFORE_SECRET = re.compile(
    r"(?i:\b(?:account|login|user(?:\s*name)?|credentials?|creds|log(?:ged)?\s+in\s+as|as)\b)"
    r"(?:[ \t]*(?:is|:|=))?[ \t]+[\"'`]?([A-Za-z0-9_][\w.@$-]{1,39})[\"'`]?[ \t]*(?:/|:|,)[ \t]*\Z")


def _url_users(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """The user of a URL's user-info, unless a system's or the product's own account
    ("postgres://app:…@db", "postgres://ticketdesk:…@db" where the corpus knows "ticketdesk")."""
    if "://" not in text:
        return
    for m in _URL_USER.finditer(text):
        if not _system_account(m.group(1)) and not (known is not None and name_lexicon.key(m.group(1)) in known):
            yield Span(m.start(1), m.end(1), "username")


def _users_before_secrets(text: str, taken: Sequence[Span], known: Collection[str] | None) -> list[Span]:
    """A user name written before a secret found, after a word for an account; never a system's
    account nor the product's own name ("--rpc-login coinvault:…" where the corpus knows it)."""
    out: list[Span] = []
    covered = bytearray(len(text) + 1)
    for t in taken:
        covered[t.start : t.end] = b"\x01" * (t.end - t.start)
    for span in taken:
        if span.kind != "secret":
            continue
        m = _USER_BEFORE_SECRET.search(text, max(0, span.start - 80), span.start)
        if m and not any(covered[m.start(1) : m.end(1)]) and not _system_account(m.group(1)) \
                and re.search(r"[^\W\d_]", m.group(1)) \
                and not (known is not None and name_lexicon.key(m.group(1)) in known):
            out.append(Span(m.start(1), m.end(1), "username"))
            covered[m.start(1) : m.end(1)] = b"\x01" * (m.end(1) - m.start(1))
    return out


#: the word for one's own account, login or user in the languages tickets come in, in a customer's
#: message ("my other acct satoshi_fan_1984", "Мой аккаунт CV-30571842", "tài khoản hoangminh.tran")
_OWN_ACCOUNT_CUE = re.compile(
    r"(?i:\b(?:account|acct|acc|a/c|user(?:\s*name)?|login|handle|profile|konto|benutzer(?:name)?|compte|"
    r"identifiant|cuenta|usuario|conta|utilizador|usu[áa]rio|conto|utente|rekening|gebruiker(?:snaam)?|"
    r"hesab[ıi]m?|hesap|kullan[ıi]c[ıi](?:\s+ad[ıi])?|akun|pengguna|tài\s+khoản|аккаунт\w*|логин\w*|"
    r"учётн\w+\s+запис\w*|учетн\w+\s+запис\w*|счёт\w*|счет\w*|профил\w*|λογαριασμ\w*|χρήστη|"
    r"hesabi|konta|użytkownik\w*|účet\w*|fiók\w*|tili\w*|kontot?)\b|账户|账号|帳戶|帳號|用户名|계정|아이디|アカウント|"
    r"ユーザー名|حساب\w*)"
    r"(?:[ \t]*(?:(?i:id|name|number|no\.?|nr\.?|#|is|ist|est|es|è|é|là|adalah|:|=|是|は|：)))*[ \t]*[\"'`“‘«]?"
    r"([A-Za-z0-9][\w.$+-]{2,40})(?<![.+-])(?![\w@])")


def _own_accounts(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """In a customer's message, the code after a word for their account: a number or a code of
    letters and digits ("CV-30571842", "8830 1921") is the account's number; a user name's
    shape (a digit, a dot, a dash or an underscore between letters: "satoshi_fan_1984") is the
    user name; an ordinary word ("my account settings"), a file or a host is neither."""
    for m in _OWN_ACCOUNT_CUE.finditer(text):
        value = m.group(1)
        digits = sum(c.isdigit() for c in value)
        letters = sum(c.isalpha() for c in value)
        if _DATE_SHAPE.fullmatch(value) or _YEAR_RANGE.fullmatch(value):
            continue  # "my last login 2024-01-15": a date
        if re.fullmatch(r"(?:[A-Z]{0,5}[-/ ]?)?\d[\d-]{4,}\d(?:-?[A-Z]{1,2})?", value) and digits >= 6:
            yield Span(m.start(1), m.end(1), "account_number")
            continue
        tail = value.rsplit(".", 1)[-1].lower() if "." in value else ""
        if (letters < 3 or not re.search(r"\d.*\d|[A-Za-z][._-][A-Za-z0-9]", value) or tail in _FILE_OR_HOST
                or _system_account(value) or re.fullmatch(r"v?\d+(?:\.\d+)+", value)
                or (known is not None and name_lexicon.key(value) in known)):
            continue
        yield Span(m.start(1), m.end(1), "username")


def _initial_surname(word: str) -> bool:
    """A user name of a given name's initial and a listed family name ("dkowalski", "lwei"),
    no dictionary word."""
    return (word.islower() and word.isalpha() and 4 <= len(word) <= 20 and _surname(word[1:])
            and not _ordinary(word))


def _account_names(text: str) -> Iterator[Span]:
    for m in _CLI_USER.finditer(text):
        low = m.group(1).lower()
        # "$USER" is a variable; "login -u with your user name" explains the option
        if not low.startswith("$") and low not in _NOT_ACCOUNT_NAMES and low not in _ENGLISH_GLUE \
                and low not in _NOT_NAMES:
            yield Span(m.start(1), m.end(1), "username")
    for m in _ROBOT.finditer(text):
        yield Span(m.start(), m.end(), "username")
    for m in _LDAP_USER.finditer(text):
        g = 1 if m.group(1) else 2
        value = m.group(g).strip()
        if _system_account(value):
            continue  # "cn=admin", "cn=Users": a directory's own entries
        # a person's name in a DN ("cn=Anna Weber,ou=People") is a name
        kind = "person_name" if " " in value and value[:1].isupper() else "username"
        yield Span(m.start(g), m.start(g) + len(value), kind)
    for m in _ACCOUNT_NAME_CUE.finditer(text):
        value = m.group(1)
        cue = m.group().lower()
        if value.lower() in _NOT_ACCOUNT_NAMES or value.lower() in _NOT_NAMES:
            continue
        # after "by" or a kind of account, a word is a person's name (found by the name rules)
        # or the sentence going on ("a robot account under Projects"): a handle has a digit, a
        # sign or is a given name's initial and a family name
        if re.search(r"\bby\b|\bas\b|account|user\b|assign|owner", cue) and not (re.search(r"[\d_.$@-]", value)
                                                              or _initial_surname(value)):
            continue
        if value[:1].isupper() and not re.search(r"[\d_.$@-]", value):
            continue
        yield Span(m.start(1), m.end(1), "username")


_CURRENCY_WORDS = (r"dollars?|euros?|pounds?|bucks|reais|real|pesos?|rupees?|yen|yuan|rmb|won|francs?|"
                   r"zlotys?|złotych|złote|kroner|kronor|kronur|lira|liras|rand|naira|shillings?|dirhams?|ringgit|"
                   r"baht|dong|rubles?|roubles?|hryvnias?|sats|satoshis?|gwei|cents?")
#: a number as the locales write one: "1,250.00", "1.249,90", "2 340,00", "1'200.50", "0.185"
_NUMBER = r"(?:\d{1,3}(?:[.,'\u00a0\u202f ]\d{3})+|\d+)(?:[.,]\d+)?"
_SYMBOLS = "$€£¥₹₩₽₺₪₫₱฿₴₦"
#: a word character of a script that writes no spaces: a number or a code may touch it ("金额是500 USDT。")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_NOT_BEFORE = rf"(?<![^\W{_CJK}])(?<![.,])"
_NOT_AFTER = rf"(?![^\W{_CJK}])"
_AMOUNT = re.compile(
    # "~850 ATOM", "≈ €40": the sign of an approximate amount goes with it
    rf"(?:[~≈][ \t]?)?"
    rf"(?:-?(?<![A-Za-z])(?:[A-Z]{{1,3}})?[{_SYMBOLS}]\s?\d[\d,.]*(?<=\d)(?:\s?(?:k|K|m|M)\b)?"
    rf"|{_NOT_BEFORE}-?{_NUMBER}\s?(?:[万萬億亿千]\s?)?(?:[{_SYMBOLS}]|zł|Kč|kr|Ft|lei|грн|гривень|гривні|гривня|гривен|рублей|рубля|рублів|руб|лв|тг|тенге|сом|сум|₾|₸|원|円|元|块|圓|ドル|美元|欧元)"
    rf"{_NOT_AFTER}"
    r"|\b(?:Rs\.?|INR)\s?\d[\d,]*(?:\.\d+)?"
    # a number and a unit after it: a currency's code, a coin's ticker or a currency's word
    # (``_money_unit`` decides which units are money)
    # (a range before it: "5k-6k DOT", "2–3 ETH")
    rf"|{_NOT_BEFORE}(?:{_NUMBER}[kKmM]?[ \t]?[-–][ \t]?)?-?{_NUMBER}(?:\s?[kKmM](?=[\s\u00a0]))?"
    r"(?P<gap>[ \t\u00a0\u202f]?)(?P<unit>[A-Za-zł]{2,8})"
    rf"{_NOT_AFTER}"
    # a code before the number ("USD 250", "EUR 1.200,50", "KSh 3,000")
    r"|(?<![\w])(?P<code>[A-Z]{3,5}|KSh|Ksh|RM|Rp)\.?[ \t\u00a0]?\d(?:[\d,.'\u00a0\u202f ]*\d)?(?![\d])"
    r")"
)
#: capital units and words that follow a number and are no money ("16 GB", "9 AM", "404 NOT FOUND")
_NOT_MONEY = frozenset((
    "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "bps", "kbps", "mbps", "gbps", "ms", "ns", "hz",
    "khz", "mhz", "ghz", "dpi", "ppi", "fps", "rpm", "kw", "kwh", "mw", "mwh", "am", "pm", "utc", "gmt", "cet",
    "cest", "est", "edt", "pst", "pdt", "cst", "cdt", "mst", "mdt", "ist", "bst", "jst", "kst", "aest", "hkt",
    "sgt", "msk", "wat", "eat", "sast", "hrs", "hr", "min", "mins", "sec", "secs", "px", "pt", "em", "rem", "cm",
    "mm", "km", "kg", "lb", "lbs", "oz", "ml", "gpu", "cpu", "cpus", "vcpu", "ram", "ssd", "hdd", "tps", "rps",
    "qps", "otp", "sms", "api", "ip", "ips", "mah", "fa", "st", "nd", "rd", "th", "not", "and", "or", "the",
    "for", "to", "of", "in", "on", "at", "is", "it", "error", "errors", "ok", "id", "ids", "no", "yes", "days",
    "hours", "usb", "hdmi", "pin", "pins", "pcs", "qty", "mp", "hd", "uhd", "fhd", "tls", "ssl", "http", "https",
    "tcp", "udp", "dns", "vpn", "ssh", "nft", "nfts", "dpa", "gdpr", "kyc", "aml", "faq", "eta", "sla",
))


#: codes that are English words too, which an all-capitals writer puts before a number ("TRY 3
#: TIMES", "TOP 10", "APT 4"): before a number they are no currency
_CODE_WORDS = frozenset(("all", "top", "apt", "try", "cup", "pot", "amp", "imp", "mad", "near", "link", "dash",
                         "burst", "tit", "rub", "bam", "pol", "ton", "neo", "koi", "yer", "gip", "lak", "sol",
                         "dot", "atom", "iota", "doge", "pen", "op", "arb", "sui"))


def _money_unit(unit: str, glued: bool) -> bool:
    """A unit after a number that names money: a currency's ISO 4217 code or a coin's ticker
    (Faker's lists), any other code of two to five capitals written apart from the number
    ("12,400 ATOM", "420 SOL"; the tickers of new coins are on no list), a currency's word
    ("200 dollars"), or a listed code in lower case ("0.5 btc")."""
    low = unit.lower()
    if low in _NOT_MONEY:
        return False
    if re.fullmatch(_CURRENCY_WORDS, low) or unit in ("TL", "zł"):
        return True
    codes = name_lexicon.currency_codes()
    if unit.isupper():
        return low in codes or (not glued and 2 <= len(unit) <= 5)
    return unit.islower() and low in codes and len(low) >= 3 and (not _ordinary(low) or low in ("sol",))


def _amount_matches(text: str) -> Iterator[re.Match[str]]:
    for m in _AMOUNT.finditer(text):
        if m.group("unit") is not None and not _money_unit(m.group("unit"), glued=not m.group("gap")):
            continue
        code = m.group("code")
        if code is not None and code not in ("KSh", "Ksh", "RM", "Rp") and (
                code.lower() not in name_lexicon.currency_codes() or code.lower() in _CODE_WORDS):
            continue
        yield m


#: a threshold's words before an amount said to someone ("deposits over $250")
_THRESHOLD = re.compile(r"(?i)\b(?:over|under|from|starting\s+at|between|and|or|to)\s*\Z")


def _named_amounts(text: str, people: Sequence[Span]) -> Iterator[Span]:
    """An amount in a sentence that names a person ("Customer Hannah Kleinschmidt is waiting on
    310 XMR"): that person's money, unless it reads as a policy figure."""
    starts = sorted(p.start for p in people)
    if not starts:
        return
    for sentence in _SENTENCE.finditer(text):
        i = bisect.bisect_left(starts, sentence.start())
        if i == len(starts) or starts[i] >= sentence.end():
            continue
        body, offset = sentence.group(), sentence.start()
        for m in _amount_matches(body):
            near_before = " ".join(body[max(0, m.start() - 80) : m.start()].split()[-5:])
            if (_POLICY.search(near_before) or _THRESHOLD.search(near_before[-24:])
                    or _PER_PERIOD.match(body, m.end())):
                continue  # "Hi Daniel, the bonus applies to deposits over $250 only"
            yield Span(offset + m.start(), offset + m.end(), "amount")


def _has_amount(text: str) -> bool:
    return next(_amount_matches(text), None) is not None


_PERSONAL = re.compile(
    r"(?i)\b(?:my|mine|your|yours|i|i'm|i've|i'd|me|balance|balances|wallet|deposited|withdrew|withdrawn|sent|"
    r"received|lost|refund|refunded|owe|owed|credited|debited|missing|stolen|transferred|"
    # the same in the languages tickets most often come in
    r"j'ai|mon|ma|mes|payé|solde|versé|mein|meine|ich|habe|guthaben|kontostand|überwiesen|bezahlt|mi|mis|"
    r"pagué|saldo|meu|minha|paguei|mio|mia|pagato|mijn|betaald|mój|moje|zapłaciłem|zapłaciłam|tenía|tenia|"
    r"mera|meri|mere|maine|mujhe|mera|benim|hesabım|bakiyem|tengo|tinha|avevo|hatte|"
    r"kartımdan|kartımda|kartıma|hesabımdan|hesabıma|bana|számlámon|számlámról|számlámra|kártyámról|kártyámon|"
    r"egyenlegem|nekem|moje|mojej|mojego|mého|mém|moji|"
    # charged, billed or paid back: one customer's money ("fui cobrado", "proszę o zwrot")
    r"charged|billed|overcharged|cobrado|cobrada|cobraram|cobraron|cargado|cargaron|abgebucht|belastet|prélevé|"
    r"débité|addebitato|addebitati|pobrano|obciążono|afgeschreven|çekildi|списали|zwrot|zwrotu|remboursement|"
    r"reembolso|rimborso|rückerstattung|erstattung|terugbetaling|iade|возврат|"
    # the first person's payments in the languages above ("ödedim", "envié", "wysłałem")
    r"ödedim|gönderdim|yatırdım|çektim|envié|deposité|transferí|retiré|envoyé|gezahlt|eingezahlt|abgehoben|"
    r"inviato|versato|prelevato|depositato|trasferito|ricevuto|enviei|depositei|transferi|saquei|wpłaciłem|wpłaciłam|wysłałem|wysłałam|"
    r"przelałem|przelałam|tôi|mình|số\s+dư|"
    # someone else's money, their stake, what one needs to move ("his 0.9 BTC", "Staked 120 DOT",
    # "need to move 0.42 BTC", "vous m'avez facturé 0,08 ETH")
    r"his|her|their|our|staked|restaked|unstaked|bonded|delegated|need|needed|facturé|facturée|facturado|"
    r"facturada|fatturato|fatturati|berechnet|m'avez|me\s+han|mi\s+avete|mir|uns|brauche|benötige|necesito|"
    r"necesitamos|preciso|precisamos|bisogno|besoin|ik|gestort|overgemaakt|opgenomen|gestakt|"
    # wanting, selling, buying and asking back in the languages above ("ho venduto 0,75 ETH",
    # "chcę wypłacić 1 200 DOT", "devolvam 120 €"), and romanised Hindi's money verbs ("2.3 ETH
    # bhejna tha", "paise nikalne hain")
    r"ho|vorrei|venduto|comprato|prelevare|quero|queria|vendi|comprei|devolvam|devolver|devolução|quiero|"
    r"quería|vendí|compré|devuelvan|devolver|devolución|restituite|restituire|verkauft|gekauft|möchte|"
    r"chcę|chciałbym|chciałabym|wypłacić|wypłaciłem|wypłaciłam|wypłata|wypłaty|moja|moich|moim|"
    r"bhejna|bheja|bheje|bhejne|bhejni|nikalna|nikala|nikale|nikalne|nikali|paise|paisa|jama|mila|mile|"
    r"mere|mujhe|hamara|hamare|humne)\b"
    # the same where words are not spaced: I, my, balance, refund in Chinese, Japanese, Korean
    r"|我|私|僕|余额|餘額|残高|退款|返金|내\s|제\s|저의|나의|잔액|잔고|환불"
    # and their "I paid", "I withdrew", "I deposited", "I sent"
    r"|出金し|入金し|送金し|支払|払った|払いました|提了|提现了|充了|充值了|转了|付了|支付了|결제했|입금했|출금했|송금했|보냈"
    r"|金额|金額|금액"
)
_NUMBER_WORD = (r"(?:a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                r"hundred|thousand|million|grand|couple)")
#: money written in words ("two hundred dollars", "fifty-five euros", "a thousand bucks")
_WORD_AMOUNT = re.compile(
    rf"(?i)\b{_NUMBER_WORD}(?:(?:[ \t]+|-)(?:and[ \t]+|of[ \t]+)?{_NUMBER_WORD}){{0,6}}[ \t]+(?:{_CURRENCY_WORDS})\b"
    # "two grand", "a few grand": thousands of the writer's currency, said without it
    rf"|\b(?:(?:a[ \t]+)?few|several|{_NUMBER_WORD})(?:(?:[ \t]+|-)(?:and[ \t]+)?{_NUMBER_WORD}){{0,3}}[ \t]+grand\b")
#: the verbs that move one's money before an amount in words ("Need two hundred dollars")
_MONEY_VERB = re.compile(r"(?i)\b(?:need|needs|needed|send|sent|withdraw|withdrew|withdrawn|transfer|transferred|"
                         r"pay|paid|move|moved|cash\s+out|lost|owe|owed|deposit|deposited|refund|charged)\b")
#: the amount of one payment, said as such ("Total was €38.12", "Montant : 1 250 USDC")
_AMOUNT_LABEL = re.compile(
    r"(?i:\b(?:total|amount|montant|betrag|importe|monto|valor|importo|bedrag|kwota|kwotę|toplam|tutar|сумма|"
    r"số\s+tiền)\b\s*(?:was|is|of|:|war|ist|est|era|es|è|wynosi|=)?\s*:?\s*)\Z")
#: a digit: no amount without one
_AMOUNT_HINT = re.compile(r"\d")
#: "the withdrawal of €500": a particular transaction, so someone's
_THEIR_TRANSACTION = re.compile(
    r"(?i)\b(?:the|this|that|a|one)\s+(?:withdrawal|deposit|transfer|payment|charge|chargeback|payout|transaction|"
    r"purchase|wire|top-?up)s?\s+(?:of|for)\s*$"
    # one transaction named without an article ("Top-up of €150 failed"); plurals are policy
    r"|(?:^|[.!?]\s+|\b)(?:withdrawal|deposit|transfer|payment|charge|payout|purchase|wire|top-?up)\s+of\s*$"
)
_REFERS_BACK = re.compile(r"\s*(?:it|that|this|which)\b(?:'s|\s+(?:was|is|were|cost|came))", re.IGNORECASE)
_POLICY = re.compile(r"(?i)\b(?:minimum|maximum|min|max|fee|fees|limit|limits|cost|costs|price|at least|up to|"
                     r"more than|less than|smaller than|larger than|greater than|below|above|exceeding|exceeds)\b")
#: "€1,000 per day", "$50 a month", "5 BTC/day": a limit or a price, said of no one
_PER_PERIOD = re.compile(r"(?i)\s*(?:per|a|an|each|every|/)\s*(?:day|week|month|year|transaction|withdrawal|deposit|"
                         r"request|user|seat|account)s?\b")
_BALANCE_WORD = re.compile(r"(?i)\b(?:balance|saldo|solde|guthaben|kontostand)\b")
_BARE_MOVED = re.compile(
    r"(?i)\b(?:i|we)\s+(?:withdrew|deposited|sent|transferred|paid|lost|received|topped\s+up)\s+(\d[\d,.]*(?<=\d))"
    r"(?![\d%]|\s*(?:%|days?|hours?|minutes?|times?|items?|percent|am|pm|h\b|of\b|x\b))")
_BARE_BALANCE = re.compile(
    r"(?i)\b(?:balance|saldo|solde|guthaben|kontostand|it|wallet|account)\s+(?:now\s+)?(?:says|shows|displays|reads|"
    r"is\s+(?:at|now|only)|is|was|went\s+to|dropped\s+to|of|zeigt|ist|est|es|indica|mostra)\s*:?\s*"
    r"(\d[\d,.]*(?<=\d))(?![\d%]|[.,]\d|\s*(?:%|days?|hours?|minutes?|times?|items?|percent|am|pm|h\b))"
)
#: a figure without its currency after the word for an amount ("amount 0.0182", "сумма: 1200")
_LABELLED_FIGURE = re.compile(
    r"(?i:\b(?:amount|sum|total|montant|betrag|importe|monto|valor|importo|bedrag|kwota|tutar|сумма|"
    r"số\s+tiền|jumlah|nominal|ποσό)\b|金额|金額|금액)\s*(?:was|is|of|:|=)?\s*:?\s*"
    r"(\d[\d,.]*(?<=\d))(?![\d%]|[.,]\d|\s*(?:%|days?|hours?|minutes?|times?|items?|percent|am|pm|h\b))")
#: a sentence: up to its full stop (a stop inside a number, "0.3", is none) or its line's end
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=[^\s.!?]))+(?:[.!?。！？]+|$)", re.MULTILINE)


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


#: the user-info of a URL holds a password ("postgres://app:S3cret!@db01/app"), and so does a login
#: written as user and password ("the login admin:Qz7#mVp2!kL9")
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@]{1,64}:([^\s/@]{1,128})@(?=[\w\[])")
_LOGIN_PAIR = re.compile(
    r"(?i:(?:\b(?:login|log-in|credentials?|creds|user(?:name)?\s*/\s*pass(?:word)?|account)|"
    r"(?<!\S)(?:-u|--user(?:name)?))\s*(?:is|are|was|:|=)?\s*[\"']?)"
    r"[\w.-]{1,40}:([^\s:@/]{6,64})(?<![.,;!?)])")
#: words that say a password or a key follows, in the languages tickets come in
_PASSWORD_CUE = re.compile(
    r"(?i)(?<![a-z])(?:password|passwd|passphrase|pass\s+phrase|pwd|pw|secret|credentials?|creds|access\s+key|"
    r"login\s+details|log-?in|sign-?in|"
    r"secret\s+key|api\s+key|passwort|kennwort|contraseña|clave|mot\s+de\s+passe|senha|hasło|haslo|"
    r"wachtwoord|parola\s+d[i']\s*ordine|parola|lösenord|adgangskode|salasana|şifre|sifre|пароль|密码|密碼|"
    r"パスワード|비밀번호)(?![a-z])")
#: a password's shape: eight or more characters of lower and upper case letters and digits, no
#: word, path, address or URL ("Welcome2Harbor!", "Hn8v2Lq0pZ!rT5")
_PW_CHAR = "A-Za-z0-9!#$%&*+?^~@_.-"
_PASSWORD_SHAPE = re.compile(rf"(?<![\w/@.:-])(?=[{_PW_CHAR}]*[a-z])(?=[{_PW_CHAR}]*[A-Z])(?=[{_PW_CHAR}]*\d)"
                             rf"[{_PW_CHAR}]{{8,64}}(?<![.,;:-])(?![\w/@])")
def _identifier(value: str) -> bool:
    """A product's or a setting's name: letters and digits only, two or more of its parts words
    of three letters or more ("HelpDesk2Go", "ApiKeyV2", "adminRequire2fa"), where a password's
    parts are random ("Kp9xTq2wLm", "Hn8v2Lq0pZ")."""
    if not value.isalnum():
        return False
    parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", value)
    return sum(len(p) >= 3 and p[1:].islower() for p in parts) >= 2

#: a URL whose path carries a token (a webhook: "hooks.slack.com/services/T0/B0/f8Hq…",
#: "discord.com/api/webhooks/1234/AbC…"): the URL is the credential
_URL = re.compile(r"(?i)\bhttps?://[^\s<>\"'`()\[\]]{8,2048}")
_WEBHOOK_HOST = re.compile(r"(?i)^https?://(?:hooks\.slack\.com/|(?:[\w-]+\.)?discord(?:app)?\.com/api/webhooks/|"
                           r"[\w.-]*webhook[\w.-]*/|hooks\.[\w.-]+/[^?#\s]*\d|"
                           r"[^/]+/(?:[^/?#]+/)*(?:webhooks?|hooks)/[^?#\s]*\d)")


def _token_like(part: str) -> bool:
    """A path segment that is a random token: sixteen or more letters and digits in both cases
    ("f8Hq2XwLm4Tz7VbN1cYr"), or twenty-four or more of one case, a quarter of them digits
    ("3f9a1c7e…"), with an entropy no word has; never a file's name ("app-compose-2.4.tar.gz")."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,}", part) or _entropy(part) < 3.5:
        return False
    digits = sum(c.isdigit() for c in part)
    if re.search(r"[a-z]", part) and re.search(r"[A-Z]", part):
        return digits >= 2
    return len(part) >= 24 and 4 * digits >= len(part)


def _webhooks(text: str) -> Iterator[Span]:
    if "://" not in text:
        return
    for m in _URL.finditer(text):
        url = m.group().rstrip(".,;:!?")
        # the path, not the query: a token in a query's value is found alone ("?token=a8F3…")
        path = re.split(r"[?#]", url.split("://", 1)[1], maxsplit=1)[0].partition("/")[2]
        parts = path.split("/")
        named = len([p for p in parts if p]) >= 2 and re.search(r"\d", path)
        if (_WEBHOOK_HOST.match(url) and named) or any(_token_like(p) for p in parts):
            yield Span(m.start(), m.start() + len(url), "secret")


def _cued_passwords(text: str) -> Iterator[Span]:
    """A password-shaped token up to 160 characters after a word for a password or a key
    ("I put the database password straight into app.yaml as Hn8v2Lq0pZ!rT5", "forgot his
    password … set it to Welcome2Harbor!"), a URL's user-info and a login's user:password."""
    for pattern in (_URL_PASSWORD, _LOGIN_PAIR):
        for m in pattern.finditer(text):
            value = m.group(1)
            if sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w\s]")) >= 2:
                yield Span(m.start(1), m.end(1), "secret")
    reach = -1
    for cue in _PASSWORD_CUE.finditer(text):
        if cue.end() <= reach:
            continue  # the window of an earlier cue already read this stretch: linear
        reach = cue.end() + 160
        for m in _PASSWORD_SHAPE.finditer(text, cue.end(), min(len(text), reach)):
            value = m.group()
            # a "!" or "?" closing a sentence is no part of the password ("… is Abc12345!
            # Please …"); one before more of the sentence is ("set it to Welcome2Harbor! for him")
            if value[-1] in "!?" and not re.match(r"[ \t]+[a-z]|[,;:)]", text[m.end() : m.end() + 2]):
                value = value.rstrip("!?")
            if len(value) < 8 or _EMAIL.fullmatch(value) or _identifier(value):
                continue  # an address; a product's name of capitalised parts ("HelpDesk2Go", "ApiKeyV2")
            yield Span(m.start(), m.start() + len(value), "secret")


def _secrets(text: str) -> Iterator[Span]:
    yield from _cued_passwords(text)
    yield from _webhooks(text)
    for m in _SECRET_PREFIXED.finditer(text):
        body = m.group("body")
        # a service's token is random after its prefix; a setting named with the prefix is words
        # ("npm_config_cache_dir")
        # ("whsec_td_71c9a0…": a part that opens on a digit is random, not a word)
        if body is not None and (not re.search(r"\d", body) or _entropy(body) < 3.5
                                 or re.fullmatch(r"[a-z]+(?:[_-][a-z]+[0-9]*)+", body)):
            continue
        yield Span(m.start(), m.end(), "secret")
    # any service's token that names itself by a lower-case prefix ("whsec_", "td_live_", "rk_"):
    # the prefix, an underscore and sixteen or more random letters and digits
    for m in _SERVICE_TOKEN.finditer(text):
        body = m.group("body")
        if re.search(r"\d", body) and re.search(r"[A-Za-z]", body) and _entropy(body) >= 3.5:
            yield Span(m.start(), m.end(), "secret")
    # the backup or recovery codes of a two-factor login, written after the words that name them
    # (up to 300 characters on, a list across lines): short groups of letters and digits
    for cue in _BACKUP_CODE_CUE.finditer(text):
        end = min(len(text), cue.end() + 300)
        for m in _BACKUP_CODE.finditer(text, cue.end(), end):
            if re.search(r"\d", m.group()) and re.search(r"[A-Za-z]", m.group()):
                yield Span(m.start(), m.end(), "secret")
    for m in _BEARER.finditer(text):
        value = m.group(1).rstrip(".")
        # a word ("password is incorrect") is not a secret: a secret mixes kinds of characters
        kinds = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w\s]"))
        if kinds >= 2:
            yield Span(m.start(1), m.start(1) + len(value), "secret")
    for m in _LONG_TOKEN.finditer(text):
        token = m.group()
        classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
        if classes >= 2 and re.search(r"\d", token) and _entropy(token) >= 3.5:
            yield Span(m.start(), m.end(), _GENERIC_SECRET)


_SEED_WORD = re.compile(r"[^\W\d_A-Z]+")
#: what may stand between the words of a written-down recovery phrase: spaces, commas, a line
#: break, their numbers ("1. vivid 2. ranch")
_SEED_GAP = re.compile(r"(?:[ \t,;\n-]|\d{1,2}[.):]?)+")


#: the words that say a recovery phrase follows ("my seed phrase:", "recovery words are")
_SEED_CUE = re.compile(r"(?i:\b(?:seed|recovery|mnemonic|backup|secret|passphrase|phrase|(?:12|24)\s+words|"
                       r"frase|palabras|wörter|mots|parole|słowa|woorden|semilla|semente|graine|slova)\b)")
_PHRASE_LENGTHS = (12, 15, 18, 21, 24)


def _seed_phrases(text: str) -> Iterator[Span]:
    """Twelve or more words of one BIP-39 list (English, Spanish, French, Italian, Portuguese,
    Czech) in a row: a wallet's recovery phrase, which is the wallet itself (any 12 of 2,048
    words in a row is no sentence). After the words that name one ("my recovery phrase:"), one
    word in six may be off the list (words misremembered or mistyped are the phrase still)."""
    runs: list[list[re.Match[str]]] = []
    for m in _SEED_WORD.finditer(text):
        if m.start() and text[m.start() - 1].isalpha():
            continue  # inside a capitalised or longer word
        if runs and runs[-1] and _SEED_GAP.fullmatch(text[runs[-1][-1].end() : m.start()]) is not None:
            runs[-1].append(m)
        else:
            runs.append([m])
    runs = [run for run in runs if len(run) >= 12]
    if not runs:
        return
    found: list[Span] = []
    for language in name_lexicon.SEED_LANGUAGES:
        words = name_lexicon.seed_words_in(language)
        for run in runs:
            found.extend(_phrases_in_run(text, run, words))
    yield from found


def _phrases_in_run(text: str, run: list[re.Match[str]], words: frozenset[str]) -> Iterator[Span]:
    on = [m.group() in words for m in run]
    found = False
    i = 0
    while i < len(run):
        if not on[i]:
            i += 1
            continue
        # the words naming a phrase are read before the phrase's own first word, not the run's
        cued = _SEED_CUE.search(text, max(0, run[i].start() - 80), run[i].start()) is not None
        j, misses = i, 0
        while j + 1 < len(run):
            if on[j + 1]:
                j += 1
            elif cued and misses + 1 <= max(1, (j + 3 - i) // 12) and j + 2 < len(run) and on[j + 2]:
                j, misses = j + 2, misses + 1
            elif cued and misses == 0 and j + 2 == len(run) and (j + 2 - i) in _PHRASE_LENGTHS:
                j, misses = j + 1, 1  # the last word of a phrase of a standard length
            else:
                break
        if j - i + 1 >= 12:
            # a phrase has 12, 15, 18, 21 or 24 words: one or two more after a phrase the
            # words before named are the sentence going on ("… skull margin please send")
            length = j - i + 1
            whole = max(n for n in _PHRASE_LENGTHS if n <= length)
            end = i + whole - 1 if cued and misses == 0 and length - whole in (1, 2) else j
            yield Span(run[i].start(), run[end].end(), "secret")
            found = True
        i = j + 1
    if found:
        return
    # after the words naming one, a phrase of a standard length that closes its line (or the
    # message), its first word on the list and at most one word in six off it
    ends = [k for k in range(len(run) - 1) if "\n" in text[run[k].end() : run[k + 1].start()]]
    for end in (*ends, len(run) - 1):
        for n in reversed(_PHRASE_LENGTHS):
            start = end + 1 - n
            if start >= 0 and on[start] and n - sum(on[start : end + 1]) <= n // 6 and \
                    _SEED_CUE.search(text, max(0, run[start].start() - 80), run[start].start()):
                yield Span(run[start].start(), run[end].end(), "secret")
                break


#: a code of the shape backup codes are printed in ("4827-1937", "a7f3-9k2m"), read up to 200
#: characters after the words for such codes ("I still have the printed backup codes … the
#: first one is 4827-1937")
_CODE_CUE = re.compile(r"(?i)\b(?:(?:backup|recovery|2fa|mfa|one[- ]time|emergency|scratch)\s+codes?|"
                       r"zugangscodes?|sicherungscodes?|backup-codes?|wiederherstellungscodes?|"
                       r"codes?\s+de\s+(?:secours|récupération|sauvegarde)|c[óo]digos?\s+de\s+(?:respaldo|recuperaci[óo]n|"
                       r"seguran[çc]a|backup)|codic[ei]\s+di\s+(?:backup|recupero)|herstelcodes?|back-?upcodes?)\b")
_PRINTED_CODE = re.compile(r"(?<![\w.,/:-])(?=[a-zA-Z0-9]{0,4}\d)[a-zA-Z0-9]{4,5}[- ](?=[a-zA-Z0-9]{0,4}\d)"
                           r"[a-zA-Z0-9]{4,5}(?![\w/:-]|[.,]\d)")


def _card_codes(text: str) -> Iterator[Span]:
    for pattern in (_CARD_CODE, _PIN):
        for m in pattern.finditer(text):
            yield Span(m.start(1), m.end(1), "secret")
    reach = -1
    for cue in _CODE_CUE.finditer(text):
        if cue.end() <= reach:
            continue
        reach = cue.end() + 200
        for m in _PRINTED_CODE.finditer(text, cue.end(), min(len(text), reach)):
            if sum(c.isdigit() for c in m.group()) >= 4 and not _DATE_SHAPE.fullmatch(m.group()) \
                    and not _YEAR_RANGE.fullmatch(m.group()):
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
            if check == "bech32" and (sum(c.isdigit() for c in value) < 4 or _entropy(value) < 3.8):
                continue
            if check == "ss58" and not _ss58_valid(value):
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
        iban.validate(value.upper().replace("-", ""), check_country=False)
    except ValidationError:
        return False
    return True


def _ibans(text: str) -> Iterator[Span]:
    for m in _IBAN.finditer(text):
        value = m.group()
        # the pattern may run into the next word: the longest valid prefix wins
        for end in range(len(value), 14, -1):
            if value[end - 1] not in " -" and _iban_valid(value[:end]):
                yield Span(m.start(), m.start() + end, "iban")
                break


def _emails(text: str) -> Iterator[Span]:
    for plain in _EMAIL.finditer(text):
        if re.search(r"://[^\s/@]*\Z", text[max(0, plain.start() - 200) : plain.start()]):
            continue  # "postgres://app:pa!ss@db01.internal": a URL's user-info and host, no address
        yield Span(plain.start(), plain.end(), "email")
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
        # "at home point of sale": a word said for "." other than "dot" closes on a real top-level domain
        if said and re.split(r"[^A-Za-z]+", domain)[-1].lower() not in _SAID_TLDS:
            continue
        yield Span(m.start(), m.end(), "email")
        pos = m.end()


#: the words that name the support desk's own record of a conversation: its number leads back to
#: nothing but the ticket the draft is made from, and it stays ("we will look into it under
#: reference CV-20931", "Ticket CV-60331", "Following up on ticket 402117")
_CASE_WORDS = frozenset(("ticket", "case", "reference", "ref"))
#: the prefixes that name a customer's purchase, payment or delivery ("INV-88213", "ORD-771204",
#: "TX-88120"): such a code leads back to one customer wherever it stands
_PURCHASE_PREFIX = re.compile(r"(?i)(?:INV|INVOICE|ORD|ORDER|PO|SO|TX|TXN|TRX|TRN|BK|BKG|BOOK|BOOKING|RES|RSV|"
                              r"RCPT|RCP|RECEIPT|SHP|SHIP|TRK|AWB|PAY|PMT|RMA|SUB|CHG|CH|PI|IN|WIRE|WT)(?=[-/#]?\d)")
#: a payment's or a purchase's words before "reference": the reference a payer writes on a
#: transfer, a transaction's reference ("Txn ref 4128 7733 9021") are theirs
_PAYMENT_BEFORE = re.compile(r"(?i)\b(?:payment|transfer|wire|bank|sepa|transaction|txn|deposit|withdrawal|order|"
                             r"invoice|booking|purchase|"
                             r"remittance|überweisung|virement|transferencia|bonifico|pagamento|pago)\b[^.!?\n]{0,20}\Z")


def _references(text: str, known: Collection[str] | None = None) -> Iterator[Span]:
    for m in _REFERENCE.finditer(text):
        group = 1 if m.group(1) else 2
        code = m.group(group)
        purchase = _PURCHASE_PREFIX.match(code.lstrip("#")) is not None
        if group == 2 and not purchase:
            continue  # a code nothing introduces: an error code, a product's or the desk's own number
        cue = (re.findall(r"[^\W\d_]+", m.group()) or [""])[0].lower() if group == 1 else ""
        if (cue in _CASE_WORDS and not purchase
                and not _PAYMENT_BEFORE.search(text, max(0, m.start() - 40), m.start())):
            continue
        parts = _code_parts(code)
        if known is not None and (group == 2 or len(parts) >= 2) and all(part in known for part in parts):
            continue  # a code the bot's own documents hold ("WD-4001" in its error-code table, the
            # example reference "TD-48213" of its help pages)
        if len(re.sub(r"\D", "", m.group(group))) >= 4:
            start = m.start(group)
            # "#A7731-2290": the sign that marks the number goes with it
            yield Span(start - 1 if start and text[start - 1] == "#" else start, m.end(group), "reference")


def _id_documents(text: str) -> Iterator[Span]:
    for m in _ID_DOCUMENT.finditer(text):
        value = m.group(1)
        if len(re.sub(r"\D", "", value)) >= 4:
            yield Span(m.start(1), m.end(1), "national_id")
    for pattern, module in ((_SSN_SHAPE, ssn), (_CPF_SHAPE, cpf), (_DNI_SHAPE, dni), (_NIE_SHAPE, nie),
                            (_CODICE_FISCALE_SHAPE, codicefiscale)):
        for m in pattern.finditer(text):
            if module.is_valid(m.group()) or (
                    module is codicefiscale and _CODICE_CUE.search(text, max(0, m.start() - 60), m.start())):
                yield Span(m.start(), m.end(), "national_id")
    for m in _NINO_SHAPE.finditer(text):
        yield Span(m.start(), m.end(), "national_id")


def _accounts(text: str) -> Iterator[Span]:
    for pattern in (_ACCOUNT, _CUSTOMER_NUMBER):
        for m in pattern.finditer(text):
            group = next(g for g in range(1, (pattern.groups or 1) + 1) if m.group(g))
            yield Span(m.start(group), m.end(group), "account_number")


_DOCUMENTATION_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))


_EXAMPLE_WORD = re.compile(r"(?i)\b(?:documentation|example|examples|placeholder|diagram|dummy|fictional|"
                           r"for\s+instance|such\s+as)\b|\be\.g\.")


def _ips(text: str) -> Iterator[Span]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            value = m.group()
            if pattern is _IPV6 and value.count(":") < 2:
                continue
            try:
                address = ipaddress.ip_address(value)
            except ValueError:
                continue
            # RFC 5737 and 3849 keep ranges for examples: one the text calls an example is nobody's
            # (customers do write them as their own, so the range alone says nothing)
            if any(address in net for net in _DOCUMENTATION_NETWORKS if net.version == address.version) and (
                    _EXAMPLE_WORD.search(text, max(0, m.start() - 80), min(len(text), m.end() + 80))):
                continue
            yield Span(m.start(), m.end(), "ip_address")


def _phones(text: str, regions: Sequence[str]) -> Iterator[Span]:
    for region in regions:
        for match in phonenumbers.PhoneNumberMatcher(text, region):
            if _DATE_SHAPE.fullmatch(match.raw_string):  # "birthday 07-03-1985" is a date
                continue
            if re.fullmatch(r"\d{5}-\d{4}", match.raw_string) and re.search(r"\b[A-Z]{2}\s+$", text[: match.start]):
                continue  # "CA 95131-2021" is a ZIP+4 code
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


def _streets(text: str) -> Iterator[Span]:
    for start, end in addresses.find(text):
        yield Span(start, end, "street_address")


def _amounts(text: str, customer: bool = False) -> Iterator[Span]:
    """Amounts tied to a person (their balance, their deposit): an amount is redacted when a
    personal or account word is near it in its sentence, unless it reads as a policy figure
    ("the minimum is $10") said of no one in particular. In a ``customer``'s own message every
    amount is theirs unless it reads as a policy figure: customers write of their own
    transactions in every language, and no list of personal words covers them all."""
    previous = ""
    for sentence in _SENTENCE.finditer(text):
        body, offset = sentence.group(), sentence.start()
        # "It was only 0.8 ETH": a sentence opening on a pronoun speaks of the one before
        context = bool(_REFERS_BACK.match(body) and _PERSONAL.search(previous))
        # the personal words of the sentence, found once: a sentence of many amounts stays linear
        personal = [p.start() for p in _PERSONAL.finditer(body)] if _AMOUNT_HINT.search(body) else []
        for m in _amount_matches(body):
            # the words near it decide: 300 characters before, 40 after
            before = body[max(0, m.start() - 300) : m.start()]
            after = body[m.end() : m.end() + 40]
            near_before = " ".join(before[-80:].split()[-5:])
            if ((_POLICY.search(near_before) or _PER_PERIOD.match(after))
                    and not re.search(r"(?i)\b(?:my|your)\b", near_before)):
                continue
            i = bisect.bisect_left(personal, m.start() - 300)
            j = bisect.bisect_left(personal, m.end())
            near = (i < len(personal) and personal[i] < m.start()) or (
                j < len(personal) and personal[j] < m.end() + 40)
            # from a customer, an amount no personal word is near is still a threshold after "over",
            # "under", "between" ("do withdrawals over 10,000 USDT need a review?")
            # or a policy figure asked about ("what is the maximum daily withdrawal for verified users,
            # 10,000 EUR?")
            # ("1.29 EKS", "3 AZ": from a customer with no personal word near, only a listed
            # currency, coin or currency word after a number is money)
            unit = m.group("unit")
            mine = (customer and not _THRESHOLD.search(near_before[-24:])
                    and not _POLICY.search(" ".join(before[-160:].split()[-10:]))
                    and (unit is None or unit.lower() in name_lexicon.currency_codes()
                         or re.fullmatch(_CURRENCY_WORDS, unit.lower()) is not None or unit in ("TL", "zł")))
            if (near or mine or context or _THEIR_TRANSACTION.search(before[-60:])
                    or _AMOUNT_LABEL.search(before[-40:])):
                yield Span(offset + m.start(), offset + m.end(), "amount")
        for m in _WORD_AMOUNT.finditer(body):
            if re.fullmatch(r"(?i)a[ \t]+\S+", m.group()):
                continue  # "a dollar": a way of speaking more often than a sum
            before = body[max(0, m.start() - 60) : m.start()]
            if customer or _PERSONAL.search(before) or _MONEY_VERB.search(before):
                yield Span(offset + m.start(), offset + m.end(), "amount")
        if customer:
            # a figure without its currency after the word for an amount ("amount 0.0182")
            for m in _LABELLED_FIGURE.finditer(body):
                if not _has_amount(body[m.start(1) : m.end(1) + 8]):
                    yield Span(offset + m.start(1), offset + m.end(1), "amount")
        # a figure without its currency where a balance is read out ("now it says 0!", "my
        # balance shows 1,250.00"), when this sentence already speaks of money
        for m in _BARE_MOVED.finditer(body):
            if not _has_amount(body[m.start(1) : m.end(1) + 8]):
                yield Span(offset + m.start(1), offset + m.end(1), "amount")
        if _has_amount(body) or _BALANCE_WORD.search(body):
            for m in _BARE_BALANCE.finditer(body):
                if not _has_amount(body[max(0, m.start(1) - 4) : m.end(1) + 6]):
                    yield Span(offset + m.start(1), offset + m.end(1), "amount")
        previous = body


#: a pasted table's column of money, by its header in the languages tickets come in ("amount",
#: "valueEur", "Total", "fee", "Betrag", "összeg", "suma", "сумма")
_MONEY_COLUMN = frozenset((
    "amount", "amt", "value", "total", "subtotal", "fee", "price", "sum", "summe", "suma", "betrag", "összeg",
    "osszeg", "montant", "importe", "importo", "valor", "bedrag", "kwota", "сумма", "сума", "balance", "paid",
    "cost", "net", "gross", "reward", "payout", "credit", "debit", "charge", "refund", "deposit", "withdrawal",
    "金额", "金額", "금액"))


def _money_column(cell: str) -> bool:
    """A header cell that names money: one of its words ("valueEur", "total_fee", "Amount (EUR)")."""
    return any(w in _MONEY_COLUMN or w.removesuffix("s") in _MONEY_COLUMN for w in _column_words(cell))
_TABLE_NUMBER = re.compile(r"[ \t]*-?[$€£]?(?:\d{1,3}(?:[,.' ]\d{3})+|\d+)(?:[.,]\d+)?[ \t]*")


#: a pasted table's column of user names, by its header ("username", "login", "user_id", "Benutzer")
_USER_COLUMN = frozenset(("username", "user", "login", "handle", "userid", "uid", "account", "benutzer",
                          "benutzername", "usuario", "utilisateur", "utente", "gebruiker", "gebruikersnaam",
                          "użytkownik", "felhasználó", "пользователь", "логин", "користувач"))
_USER_CELL = re.compile(r"[ \t]*[A-Za-z][\w.$-]{1,39}[ \t]*")


def _column_words(cell: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z\u00c0-\u024f]+|[A-Z]+(?![a-z])|[^\W\d_]+", cell.strip())]


def _table_amounts(text: str) -> Iterator[Span]:
    """The figures of a pasted table (CSV, semicolon, tab or pipe separated) in a column whose
    header names money, and the user names in one whose header names a user ("username",
    "login"): its rows, each with as many cells as the header, up to a line that has not."""
    lines = list(re.finditer(r"[^\n]+", text))
    i = 0
    while i < len(lines):
        header = lines[i].group()
        sep = next((c for c in ",;\t|" if header.count(c) >= 2), None)
        cells = header.split(sep) if sep else []
        money = [k for k, cell in enumerate(cells) if len(cell) <= 40 and _money_column(cell)
                 and not re.search(r"\d", cell)]
        users = [k for k, cell in enumerate(cells) if len(cell) <= 40 and not re.search(r"\d", cell)
                 and "".join(_column_words(cell)) in _USER_COLUMN]
        i += 1
        if not (money or users):
            continue
        while i < len(lines) and lines[i].group().count(sep or ",") == len(cells) - 1:
            row, offset = lines[i].group(), lines[i].start()
            start = 0
            for k, cell in enumerate(row.split(sep)):
                lead = len(cell) - len(cell.lstrip())
                if k in money and _TABLE_NUMBER.fullmatch(cell) and cell.strip():
                    yield Span(offset + start + lead, offset + start + len(cell.rstrip()), "amount")
                elif k in users and _USER_CELL.fullmatch(cell) and not _system_account(cell.strip()):
                    yield Span(offset + start + lead, offset + start + len(cell.rstrip()), "username")
                start += len(cell) + 1
            i += 1


def _folded(text: str) -> str:
    """``text`` without accents, letter for letter ("Oyelarán" -> "Oyelaran"): same length."""
    out = []
    for c in text:
        base = unicodedata.normalize("NFKD", c)
        out.append(base[0] if base and not unicodedata.combining(base[0]) and len(base[0]) == 1 else c)
    return "".join(out)


def _known(text: str, names: Collection[str]) -> Iterator[Span]:
    """Every whole-word occurrence of a name found elsewhere in the ticket, with or without its
    accents ("Mr Oyelaran" ... "spelled Oyelarán"), capitalised or not ("my brother arjun" ...
    "Arjun's trade"); in lower case where the writer writes so ("hi, it's marco again" after
    "Ciao Marco"), never a verb ("will") or a stop word. A name
    that is also a place is none after a place word ("I don't live in Georgia")."""
    folded = _folded(text)
    lower_writer = _lower_case_writer(text)
    for name in {_folded(n) for n in names}:
        low = name.lower()
        for m in re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", folded, re.IGNORECASE):
            found = m.group()
            if found != name and not found[0].isupper() and (
                    low in _NAME_VERBS or low in _NOT_NAMES or not lower_writer):
                continue
            before = folded[max(0, m.start() - 12) : m.start()].split()
            if _COMPANY_TAIL.match(folded, m.end()):
                continue  # "Schmidt Logistics GmbH", "Hoffmann & Partner": a company named after someone
            place = name_lexicon.key(found) in name_lexicon.place_names() or found.lower() in _PLACE_NAMES
            if before and before[-1].lower() in (*_LOCATIVE, "from", "to") and place:
                continue
            yield Span(m.start(), m.end(), "person_name")


def _email_names(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """Capitalised words that the local part of an e-mail address in the same text spells: the
    writer's or someone's name ("Mei Ling Chua" beside "meiling.chua@…", "Sora Tanaka" beside
    "s.tanaka.work@…", "Oluwaseun Adebayo" beside "seun.adebayo@…", a signature "Raj" under
    "old.mailbox.raj@…"). A word matches a part of three letters or more, two words a part
    written as one that is a listed given name ("meiling"); the word before a listed name or a
    word no dictionary has matches the part's initial ("s"), the word before a matched one that
    ends or opens on the part before ("seun"). A run needs a listed name among its matches or
    two matches; a word of the dictionary matches only where a name would stand (a line of its
    own, or beside the address). A role's mailbox of one word ("sales@") spells no one; a word
    of the dictionary no name list holds ("billing"), a place, a brand, a product the corpus
    knows or one with an inner capital never matches."""
    if "@" not in text:
        return
    emails = list(_EMAIL.finditer(text))
    parts = [[p for p in re.split(r"[._+-]+|\d+", m.group().split("@", 1)[0].lower()) if p] for m in emails]
    # a role's mailbox of one word ("sales@", "support@") spells no one
    parts = [p for p in parts if 0 < len(p) <= 8 and not (len(p) == 1 and _ordinary_form(p[0]))]
    if not parts:
        return

    def usable(word: str) -> bool:
        k = name_lexicon.key(word)
        return (word.lower() not in _NOT_NAMES and k not in _BRANDS and _INNER_CAPITAL.match(word) is None
                and k not in _PLACE_NAMES and k not in name_lexicon.country_names()
                and k not in _COMPANY_WORDS and not word.isupper()
                and (known is None or k not in known or _given(word) or _surname(word))
                and (not _ordinary_form(word) or _given(word) or _surname(word)))

    for run, _ in _capitalised_runs(text):
        words = [m.group() for m in run][:6]
        if any(w.lower() in _COMPANY_WORDS for w in words):
            continue  # "the Sales Team", "CoinVault Support"
        keys = [name_lexicon.key(w) for w in words]
        # where a name stands: a line of its own (a signature), or beside an address ("Name <a@b>")
        line_start = text.rfind("\n", 0, run[0].start()) + 1
        line_end = text.find("\n", run[-1].end())
        line_end = len(text) if line_end < 0 else line_end
        alone = not re.search(r"[^\W\d_]", text[line_start : run[0].start()] + text[run[-1].end() : line_end])
        beside = any(re.fullmatch(r"[\s<>()\[\],;:/|-]*", text[m.end() : run[0].start()])
                     or re.fullmatch(r"[\s<>()\[\],;:/|-]*", text[run[-1].end() : m.start()]) for m in emails
                     if m.end() <= run[0].start() or m.start() >= run[-1].end())
        for pieces in parts:
            hit = [False] * len(words)
            listed = False
            for i, k in enumerate(keys):
                if len(k) >= 3 and k in pieces and usable(words[i]):
                    hit[i] = True
                    plain = _ordinary_form(words[i])
                    listed = listed or ((_given(words[i]) or _surname(words[i])) and (not plain or alone or beside))
                if (i + 1 < len(keys) and keys[i] + keys[i + 1] in pieces and _given(keys[i] + keys[i + 1])
                        and usable(words[i]) and usable(words[i + 1])):
                    hit[i] = hit[i + 1] = listed = True  # "Mei Ling" / "meiling"
            for i in range(len(words) - 2, -1, -1):
                if hit[i] or not hit[i + 1] or keys[i + 1] not in pieces or words[i].lower() in _NOT_NAMES:
                    continue
                at = pieces.index(keys[i + 1])
                short = pieces[at - 1] if at > 0 else ""
                initial = (len(short) == 1 and short == keys[i][:1]
                           and (_given(words[i + 1]) or _surname(words[i + 1]) or not _ordinary_form(words[i + 1])))
                affix = (3 <= len(short) < len(keys[i]) and (keys[i].startswith(short) or keys[i].endswith(short))
                         and usable(words[i]) and not _ordinary_form(words[i]))
                hit[i] = initial or affix  # "Sora Tanaka" / "s.tanaka", "Oluwaseun Adebayo" / "seun.adebayo"
            if listed or sum(hit) >= 2:
                i = 0
                while i < len(hit):  # the words matched in a row are one name
                    if not hit[i]:
                        i += 1
                        continue
                    j = i
                    while j + 1 < len(hit) and hit[j + 1]:
                        j += 1
                    yield Span(run[i].start(), run[j].end(), "person_name")
                    i = j + 1
                break


_HANDLE_TOKEN = re.compile(r"(?<![\w@.+-])[A-Za-z][A-Za-z0-9._-]{3,40}(?<![._-])(?![\w@]|[.-]\w)")


_NAME_HANDLE = re.compile(r"(?<![\w@./-])([a-z]{3,20})[._-]([a-z]{3,20})\d{0,4}(?![\w@/-]|\.\w)")
_FILE_OR_HOST = frozenset(("com", "net", "org", "io", "dev", "app", "example", "local", "internal", "yaml", "yml",
                           "json", "txt", "log", "csv", "pdf", "png", "jpg", "jpeg", "gif", "exe", "zip", "html",
                           "htm", "xml", "conf", "cfg", "ini", "env", "py", "js", "ts", "md", "sql", "tar", "gz"))


def _derived_handles(text: str, names: Collection[str]) -> Iterator[Span]:
    """A user name built from a name found in the ticket ("Tomasz Zieliński (tzielinski)",
    "j.smith", "anna_kowalska92"): a given name or its initial joined to a family name, in
    either order, with or without a dot, dash or underscore, digits after."""
    if not names:
        return
    parts = {name_lexicon.key(_folded(n)) for n in names if len(n) >= 3}
    built = set()
    for a in parts:
        for b in parts:
            if a != b:
                for first in (a, a[0]):
                    for sep in ("", ".", "_", "-"):
                        built.add(first + sep + b)
                built.add(a + b[0])
    for m in _HANDLE_TOKEN.finditer(text):
        token = _folded(m.group()).lower().rstrip("0123456789")
        if token in built:
            yield Span(m.start(), m.end(), "username")


def _name_handles(text: str) -> Iterator[Span]:
    """A user name of a listed given name and a listed family name joined by a dot, an underscore
    or a dash ("ines.garcia", "tom_okafor"), one of them no dictionary word; never a file or a
    host ("notes.txt", "mail.example")."""
    for m in _NAME_HANDLE.finditer(text):
        first, second = m.group(1), m.group(2)
        if (_given(first) and _surname(second) and not (_ordinary(first) and _ordinary(second))
                and second.lower() not in _FILE_OR_HOST and first.lower() not in _NOT_NAMES):
            yield Span(m.start(), m.end(), "username")


_COMPANY_TAIL = re.compile(r"(?:[ \t]+[A-Z][\w'’-]*){0,3}" + _COMPANY_AFTER.pattern)


def _lower_case_writer(text: str) -> bool:
    """A message written in lower case: its sentences open in lower case, "i" is its pronoun
    ("hi, it's marco again. i talked to giulia"), or it has no capital at all."""
    if re.search(r"(?<![\w'’])i(?:['’]m|['’]ve|['’]d|[ \t]+(?:am|was|have|had|talked|spoke|sent|did|do|got|need|"
                 r"want|tried|think|just|can|cant|dont))\b", text):
        return True
    starts = re.findall(r"(?:^|[.!?][ \t]+)([^\W\d_])", text, re.MULTILINE)
    if len(starts) >= 2 and 2 * sum(c.islower() for c in starts) >= len(starts):
        return True
    # or a message of some words with no capital at all
    return len(re.findall(r"[^\W\d_]+", text)) >= 4 and not any(c.isupper() for c in text)


#: words before an honorific that name a role, not a person
_CJK_NOT_NAMES = frozenset(("고객", "회원", "담당자", "관리자", "선생", "사장", "부장", "과장", "お客", "皆"))
_CJK_WORD = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf가-힣]{2}")


def names_in(texts: Iterable[str], *, known_words: Collection[str] | None = None) -> set[str]:
    """The words of every name found in ``texts`` (at least three letters, particles left
    out; a shorter given name too when it closes a longer name, "Nguyễn Văn An"): a name
    introduced in one message of a ticket is removed from all of them."""
    out: set[str] = set()
    for text in texts:
        for span in find_spans(text, known_words=known_words):
            if span.kind == "person_name":
                words = [w.strip(".,") for w in text[span.start : span.end].split()]
                out.update(w for w in words if (len(w) >= 3 or _CJK_WORD.search(w)) and not re.fullmatch(_PARTICLE, w))
                if len(words) >= 2 and len(words[-1]) == 2 and words[-1][0].isupper() and words[-1][1].islower():
                    out.add(words[-1])
    return out


def find_spans(text: str, *, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS,
               known_names: Collection[str] = (), known_words: Collection[str] | None = None,
               speaker: str | None = None) -> list[Span]:
    """Non-overlapping spans of personal or secret data, in text order; ``known_names``:
    name words found elsewhere in the same conversation (:func:`names_in`); ``known_words``:
    the words of :func:`vocabulary_candidates` that the bot's corpus knows (None: no corpus
    to ask, and the rule of :func:`_unknown_names` is off); ``speaker``: who wrote the text
    (``"customer"``, ``"agent"`` or None when unknown, as for a title): in a customer's own
    message amounts and the codes after a word for an account are the customer's."""
    customer = speaker == "customer"
    found = [
        *_emails(text), *_secrets(text), *_seed_phrases(text), *_card_codes(text), *_wallets(text), *_ibans(text),
        *_cards(text),
        *_accounts(text), *_id_documents(text), *_checked_ids(text, customer), *_ips(text),
        *_phones(text, phone_regions), *_spoken_phones(text), *_streets(text), *_amounts(text, customer),
        *(_table_amounts(text) if speaker != "agent" else ()),
        *_people(text), *(_own_accounts(text, known_words) if customer else ()),
        *_known(text, known_names), *_derived_handles(text, known_names), *_name_handles(text),
        *_email_names(text, known_words),
        *_references(text, known_words), *_url_users(text, known_words),
        *(_unknown_names(text, known_words) if known_words is not None else ()),
        *(_lower_unknown_names(text, known_words) if known_words is not None else ()),
        *_lower_given_names(text, known_words), *_subject_names(text, known_words),
    ]
    found.extend(_pronoun_subjects(text, known_words))
    found = [span for span in found if span.kind != "person_name" or not _names_a_thing(text, span, known_words)]
    found = [_with_title(text, span, known_words) if span.kind == "person_name" else span for span in found]
    # a Thai name after its cue is read whole: the cue's own words are no part of it
    thai = list(_thai_names(text))
    found = [span for span in found if span.kind != "person_name" or not any(
        t.start < span.end and span.start < t.end for t in thai)] + thai
    found.extend(_named_amounts(text, [s for s in found if s.kind == "person_name"]))
    # a number of six digits or fewer inside a street address is its postcode, not a telephone
    # ("Lindenallee 7, 14050 Berlin")
    streets = [s for s in found if s.kind == "street_address"]
    found = [span for span in found if span.kind != "phone" or sum(c.isdigit() for c in text[span.start:span.end]) > 6
             or not any(s.start <= span.start and span.end <= s.end for s in streets)]
    # the winning kind first, then the longest span
    found.sort(key=lambda s: (_PRIORITY[s.kind], -(s.end - s.start), s.start))
    taken: list[Span] = []
    covered = bytearray(len(text) + 1)  # the characters a taken span holds: a text of many spans stays linear
    for span in found:
        if not any(covered[span.start : span.end]):
            taken.append(span if span.kind != _GENERIC_SECRET else Span(span.start, span.end, "secret"))
            covered[span.start : span.end] = b"\x01" * (span.end - span.start)
        elif span.kind == "street_address":
            # an address holding a phone or a customer number keeps the parts around it
            for part in _uncovered(text, span, taken):
                taken.append(part)
                covered[part.start : part.end] = b"\x01" * (part.end - part.start)
    taken.extend(_joined_names(text, taken, known_words))
    taken.extend(_users_before_secrets(text, taken, known_words))
    return sorted(taken, key=lambda s: s.start)


#: the academic and professional titles of many languages before a name ("Ing.", "Mgr.",
#: "Dipl.-Ing.", "Prof. Dr.", "Datuk"): a degree or an office says who the person is, so it goes
#: with the name; a courtesy title ("Herr", "Mrs", "Pak", "Khun") says only how one is addressed
#: and stays, as the labelled sets keep it
_NAME_TITLES = frozenset(("dr", "dra", "prof", "professor", "doctor", "ing", "mgr", "bc", "phdr", "mudr", "judr",
                          "rndr", "mvdr", "paeddr", "doc", "dipl", "dipl.-ing", "ir", "drs", "mag", "univ", "avv",
                          "arch", "dott", "lic", "lcda", "lcdo", "eng", "atty", "hon", "rev", "dato", "datuk",
                          "haji", "hajjah", "phd", "ph.d"))
_TITLE_BEFORE = re.compile(r"(?<![\w.-])([^\W\d_][\w.-]{0,9}?)\.?[ \t]+\Z")
_WORD_BEFORE = re.compile(rf"(?<![\w'’.-])({_NAME_WORD})[ \t]+\Z")


def _with_title(text: str, span: Span, known: Collection[str] | None = None) -> Span:
    """A name with the titles before it ("Ing. Lucie Procházková", "Prof. Dr. Anna Berg") and
    the first of its given names when the name has three parts ("Maria Lourdes Dimaculangan",
    "Rogério Fagundes Lima"): a capitalised word just before it on its line that is a listed
    given name, or no word of the dictionary, no brand and none the bot's corpus knows."""
    start = span.start
    words = text[span.start : span.end].split()
    if len(words) >= 2 and (m := _WORD_BEFORE.search(text, max(0, start - 30), start)):
        word = m.group(1)
        key = name_lexicon.key(word)
        if (_given(word) or not (_ordinary_form(word) or key in _BRANDS or (known is not None and key in known))) and (
                word.lower() not in (*_NAME_TITLES, *_TITLES) and not _GREETING_WORD.fullmatch(word)):
            start = m.start(1)
    for _ in range(3):
        m = _TITLE_BEFORE.search(text, max(0, start - 14), start)
        if not m or m.group(1).lower() not in _NAME_TITLES:
            break
        start = m.start(1)
    return span if start == span.start else Span(start, span.end, span.kind)


_GREETING_WORD = re.compile(r"(?i:hi|hello|hey|dear|thanks|thank|regards|cheers|salamat|danke|merci|gracias|grazie|"
                            r"obrigad[oa]|hola|ol[aá]|oi|bonjour|hallo|ciao|ahoj|szia|sveiki|tere|hej|hei|moi|"
                            r"üdv|udv|pozdrav|sawasdee|selamat|terima|kasih|po|ya|yes|no|ok|okay)")
#: a name in Thai script after the words that say one follows ("ชื่อลูกค้าคือ สมชาย วงศ์ไพบูลย์", "คุณสมชาย"):
#: a given name and a surname, the two words Thai writes a person's name in
_THAI_NAME = re.compile(r"(?<![\u0E00-\u0E7F])(?:ชื่อ[\u0E00-\u0E7F]{0,16}?(?:คือ|:|ว่า)|คุณ|นางสาว|นาย|นาง)[ \t]*"
                        r"([\u0E01-\u0E4E]{2,20}(?:[ \t][\u0E01-\u0E4E]{2,24})?)")


#: a capitalised word that does what a person does ("Takeshi is on holiday and says it wasn't
#: him"): the subject of a person's verb, a personal pronoun later in the same sentence
_PERSON_SUBJECT = re.compile(
    r"(?:^|(?<=[.!?][ \t])|(?<=\n))([A-Z][a-z]{2,15})[ \t]+(?:is|was|has|had|says|said|told|tells|wrote|thinks|"
    r"claims|claimed|confirmed|swears|insists|left|joined)\b([^.!?\n]{0,120})")
_PERSONAL_PRONOUN = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself)\b")


def _pronoun_subjects(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """The first word of a sentence that a personal pronoun later in it refers to, when it is
    no dictionary word, brand or word the bot's corpus knows: a given name no list holds."""
    for m in _PERSON_SUBJECT.finditer(text):
        word = m.group(1)
        key = name_lexicon.key(word)
        if not _PERSONAL_PRONOUN.search(m.group(2)) or _ordinary_form(word) or key in _BRANDS or (
                known is not None and key in known) or word.lower() in _NOT_NAMES:
            continue
        yield Span(m.start(1), m.end(1), "person_name")


def _thai_names(text: str) -> Iterator[Span]:
    for m in _THAI_NAME.finditer(text):
        yield Span(m.start(1), m.end(1), "person_name")


_JOINED_BEFORE = re.compile(rf"(?<![\w'’-])({_NAME_WORD})[ \t]*(?:,[ \t]*|[ \t]+(?:and|or|&|und|et|y|e|i)[ \t]+)\Z")
_JOINED_AFTER = re.compile(rf"(?:[ \t]*,[ \t]*|[ \t]+(?:and|or|&|und|et|y|e|i)[ \t]+)({_NAME_WORD})(?![\w'’-])")


def _joined_names(text: str, taken: Sequence[Span], known: Collection[str] | None) -> list[Span]:
    """A listed given name joined to a name found by "and", "or" or a comma ("Both Ken and
    Aiko", "Aiko and Ken"): the same guards as a name that does something."""
    out: list[Span] = []
    covered = bytearray(len(text) + 1)
    for t in taken:
        covered[t.start : t.end] = b"\x01" * (t.end - t.start)
    for span in [t for t in taken if t.kind == "person_name"]:
        candidates = []
        if m := _JOINED_BEFORE.search(text, max(0, span.start - 40), span.start):
            candidates.append((m.start(1), m.end(1)))
        if m := _JOINED_AFTER.match(text, span.end):
            candidates.append((m.start(1), m.end(1)))
        for a, b in candidates:
            word = text[a:b]
            low, k = word.lower(), name_lexicon.key(word)
            if (not _given(word) or low in _NAME_VERBS or low in _NOT_NAMES or low in _PLACE_NAMES or k in _BRANDS
                    or k in name_lexicon.place_names() or k in name_lexicon.coin_names() or low in _COMMON_WORD_NAMES
                    or (known is not None and k in known) or word.isupper()
                    or any(covered[a:b])):
                continue
            out.append(Span(a, b, "person_name"))
            covered[a:b] = b"\x01" * (b - a)
    return out


#: a job title and a comma or "at" before a company's name ("Office Manager, Brightline Dental")
_JOB_TITLE_BEFORE = re.compile(
    r"(?i:\b(?:manager|director|engineer|officer|lead|head|founder|co-founder|owner|administrator|admin|"
    r"accountant|assistant|ceo|cto|cfo|coo|president|consultant|developer|analyst|specialist|coordinator|"
    r"supervisor|partner|controller|secretary|treasurer|buyer|bookkeeper)(?:[ \t]*,[ \t]*|[ \t]+at[ \t]+))\Z")
#: the verbs of using software before the products' names ("we use Grafana and Prometheus")
_SOFTWARE_BEFORE = re.compile(
    r"\b(?i:use|uses|using|used|install|installs|installed|installing|deploy|deploys|deployed|integrat\w*\s+with|"
    r"run|runs|running|ran|restart|restarts|restarted|reinstall\w*|uninstall\w*|configur\w*|enabl\w*|"
    r"upgrad\w*|patch\w*|schedul\w*|"
    r"connect\w*\s+(?:to|with)|upgrad\w*\s+to|migrat\w*\s+(?:to|from)|switch\w*\s+to)[ \t]+"
    r"(?:[A-Z][\w.+-]*(?:[ \t]+[A-Z][\w.+-]*)*[ \t]*(?:,|and|or|&)[ \t]*)*\Z")
_ACRONYM_AFTER = re.compile(r"[ \t]+([A-Z]{2,6}[0-9]?)(?![\w'’-])")
_NAME_SUFFIXES = frozenset(("md", "phd", "jr", "sr", "ii", "iii", "iv", "esq", "dds", "rn", "cpa", "mba", "obe",
                            "mbe", "kc", "qc"))
_DETERMINER = re.compile(r"(?i:\b(?:the|a|an|this|that|each|every|any)[ \t]+)\Z")
_RUN_AFTER = re.compile(r"(?:[ \t]+[A-Z][\w'’-]*)*")


def _names_a_thing(text: str, span: Span, known: Collection[str] | None) -> bool:
    """A capitalised run read as a name that names a thing: a brand's name ("Okta", "Nike Air
    Max"); words the bot's corpus knows and no name list holds ("Hi, Polkadot holds …"), or a
    product's inner capital ("Hi, CoinVault accepts"); a word between an article and a
    lower-case noun ("the Munich queue"); a company after a job title ("Office Manager,
    Brightline Dental", not "our CTO, Ravi Kumar"), or before its legal form ("Maria Santos
    Ltd"); what follows a verb of using software ("we use Grafana and Prometheus"); a run no
    listed given name opens that ends on an ordinary word the corpus knows and no name list
    holds ("Auth Mode", "Forward Syslog Endpoint")."""
    words = text[span.start : span.end].split()
    if not words or not all(w[:1].isupper() for w in words):
        return False
    keys = [name_lexicon.key(w) for w in words]
    if any(k in _BRANDS or k in name_lexicon.coin_names() for k in keys):
        return True  # a brand, a coin ("Cardano", "Tezos")
    unlisted = [not (_given(w) or _surname(w)) for w in words]
    if all(unlisted) and all((known is not None and k in known) or _INNER_CAPITAL.match(w)
                             for w, k in zip(words, keys, strict=True)):
        return True
    if _DETERMINER.search(text, max(0, span.start - 8), span.start) and re.match(r"[ \t]+[a-z]", text[span.end :]):
        return True
    if (len(words) == 1 and not (_given(words[0]) or _surname(words[0]))
            and (m := _ACRONYM_AFTER.match(text, span.end)) and m.group(1).lower() not in _NAME_SUFFIXES):
        return True  # "switched to Keycloak OIDC", "the Acme SDK": a product before its acronym
    if _JOB_TITLE_BEFORE.search(text, max(0, span.start - 40), span.start) and not _given(words[0]):
        return True
    if keys[-1] in _COMPANY_WORDS or _legal_form(words[-1]) or _company_after(text, span.end) or (
            _SOFTWARE_BEFORE.search(text, max(0, span.start - 80), span.start) and not _given(words[0])):
        return True  # "Maria Santos Ltd"; "we use Grafana and Prometheus", not "I used Kevin's card"
    tail = _RUN_AFTER.match(text, span.end)
    last = (text[span.start : tail.end() if tail else span.end].split() or [""])[-1]
    return (known is not None and not _given(words[0]) and len(last) > 2 and name_lexicon.key(last) in known
            and _plain_word(last, glued=True) and not _given(last) and not _surname(last))


def _uncovered(text: str, span: Span, taken: Sequence[Span]) -> list[Span]:
    pieces, start = [], span.start
    for t in sorted(taken, key=lambda t: t.start):
        if t.end <= start or t.start >= span.end:
            continue
        pieces.append((start, t.start))
        start = max(start, t.end)
    pieces.append((start, span.end))
    out = []
    for a, b in pieces:
        piece = text[a:b]
        a, b = a + len(piece) - len(piece.lstrip(" ,;-")), b - (len(piece) - len(piece.rstrip(" ,;-")))
        # what is left must still read as part of an address: a number or a capitalised word
        if b > a and re.search(r"\d|\b[^\W\d_a-z]", text[a:b]):
            out.append(Span(a, b, span.kind))
    return out


def redact(text: str, *, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS,
           known_names: Collection[str] = (), known_words: Collection[str] | None = None,
           speaker: str | None = None) -> Redaction:
    """``text`` with every span replaced by ``[kind]``, and how many of each kind; ``speaker``
    as :func:`find_spans` reads it."""
    spans = find_spans(text, phone_regions=phone_regions, known_names=known_names, known_words=known_words,
                       speaker=speaker)
    out, last = [], 0
    for span in spans:
        out.append(text[last : span.start])
        out.append(f"[{span.kind}]")
        last = span.end
    out.append(text[last:])
    counts = Counter(s.kind for s in spans)
    return Redaction("".join(out), {k: counts[k] for k in KINDS if counts[k]}, tuple(spans))
