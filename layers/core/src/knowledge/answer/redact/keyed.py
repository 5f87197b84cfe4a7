"""Personal data read by the key that names it in a pasted request, response, webhook or config
(JSON, YAML, a query string's or an environment's ``key=value``): a customer's reference or
account under ``customerId``, a tax number under ``taxId``, an identity document's ``number``, a
holder's name under ``lastName`` or ``name``, an address under ``address`` or ``line2``, the
figures under ``amount`` or a balance's currency codes; and the user a home directory's path
names ("/home/dkowalski/exporter")."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .spans import Span
from .users import _system_account
from .words import _PARTICLE, _given, _surname

#: a key, quoted or not, its colon or equals sign, and its value: a quoted string, an array of
#: strings on one line, or a bare token
_PAIR = re.compile(
    r"(?P<q>[\"']?)(?P<key>[A-Za-z_][\w.-]{0,40})(?P=q)[ \t]*[:=][ \t]*"
    # (an array of objects is read pair by pair: "idDocs":[{"number":…}])
    r"(?P<value>\"(?:[^\"\\\n]|\\.){0,200}\"|'[^'\n]{0,200}'|\[[^\]\n{]{0,400}\]|[^\s,;}\]\"'\[{]{1,80}|(?=[{\[]))")
_QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.){1,200})\"|'([^'\n]{1,200})'")

#: the keys by the kind of datum their value is, written without case, dashes nor underscores
_AMOUNT_KEYS = frozenset(("amount", "amt", "balance", "availablebalance", "totalbalance", "total", "totalamount",
                          "sum", "payout", "reward", "rewards", "totalrewards", "credited", "debited", "netamount",
                          "grossamount", "withdrawnamount", "depositamount", "stakedamount", "principal"))
_MONEY_OBJECTS = frozenset(("balances", "balance", "totals", "totalrewards", "rewards", "amounts", "holdings",
                            "portfolio", "positions"))
_ACCOUNT_KEYS = frozenset(("customerid", "customerref", "customernumber", "customerno", "externaluserref",
                           "externaluserid", "externalcustomerid", "userref", "accountid", "accountnumber",
                           "accountno", "subaccountid", "memberid", "membernumber", "clientref", "walletid",
                           "holderid", "enduserid", "enduserref", "payerid", "beneficiaryid"))
_ID_KEYS = frozenset(("taxid", "tin", "ssn", "nationalid", "idnumber", "passportnumber", "passportno",
                      "documentnumber", "docnumber", "personalnumber", "personalcode", "nif", "cpf", "pesel", "bsn",
                      "nin", "taxnumber", "vatpersonal", "idcardnumber", "driverlicense", "licensenumber"))
_NAME_KEYS = frozenset(("firstname", "lastname", "fullname", "givenname", "givennames", "familyname", "surname",
                        "middlename", "holdername", "accountholder", "accountholdername", "beneficiaryname",
                        "customername", "cardholder", "cardholdername", "legalname", "payername", "sendername",
                        "recipientname"))
_ADDRESS_KEYS = frozenset(("address", "addressline", "addressline1", "addressline2", "addressline3", "line1",
                           "line2", "line3", "street", "streetaddress", "postaladdress", "homeaddress",
                           "billingaddress", "residentialaddress", "mailingaddress", "shippingaddress"))
#: the words near a bare ``number`` key that make it an identity document's
_DOCUMENT_NEAR = re.compile(r"(?i)iddoc|document|passport|id_?card|idtype|identity|licen[cs]e")
_PREFIXED = re.compile(r"[a-z]{2,8}_[a-z0-9_]*\d{3,}[a-z0-9]*")
_BALANCE_AFTER = re.compile(r"[^{}\n]{0,80}?[\"']?(?i:balances?|holdings)[\"']?[ \t]*:")
_FIGURE = re.compile(r"-?\d+(?:[.,]\d+)?")
_CODE_VALUE = re.compile(r"(?=(?:[^\d\n]*\d){3})[A-Za-z0-9][\w.-]{2,40}")
_ID_VALUE = re.compile(r"(?=(?:[^\d\n]*\d){5})[A-Za-z0-9][A-Za-z0-9 ./-]{4,24}")
_NAME_VALUE = re.compile(r"[^\W\d_][\w'’.-]*(?:[ ][^\W\d_][\w'’.-]*){0,5}")
_CURRENCY_PAIR = re.compile(r"[\"']?(?P<code>[A-Z]{2,6})[\"']?[ \t]*:[ \t]*[\"']?(?P<figure>-?\d+(?:[.,]\d+)?)")
#: a user's home directory in a path ("/home/dkowalski/…", "C:\\Users\\mkim\\…", "/Users/ana/…")
_HOME = re.compile(r"(?:/home/|/Users/|[A-Za-z]:[\\/]{1,2}Users[\\/]{1,2})([A-Za-z0-9][\w.-]{1,31})(?=[\\/])")
_SYSTEM_HOMES = frozenset(("ubuntu", "root", "runner", "ec2-user", "admin", "app", "node", "user", "shared",
                           "public", "default", "centos", "debian", "vagrant", "git", "www-data", "jenkins",
                           "gitlab-runner", "circleci", "docker", "opc", "azureuser", "pi", "all users"))


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.rsplit(".", 1)[-1].lower())


def _strings(value: str, base: int) -> Iterator[tuple[int, int]]:
    """The (start, end) of each string a value holds: itself when bare, each quoted one inside."""
    if value[:1] not in "\"'[":
        yield base, base + len(value)
        return
    for m in _QUOTED.finditer(value):
        g = 1 if m.group(1) is not None else 2
        yield base + m.start(g), base + m.end(g)


def _person(value: str, strict: bool) -> bool:
    """A value a person's name has: one to six words of letters; under a bare ``name`` key
    (``strict``), two to five capitalised words or particles of which one is a listed name."""
    if not _NAME_VALUE.fullmatch(value):
        return False
    if not strict:
        return True
    words = value.split()
    return 2 <= len(words) <= 5 and all(w[0].isupper() or re.fullmatch(_PARTICLE, w) for w in words) and (
        _given(words[0]) or any(_surname(w) for w in words[1:]))


def _named(key: str, value: str) -> bool:
    """A person's name under a key for one, or under a bare ``name`` when the value is one."""
    if key in _NAME_KEYS:
        return _person(value, strict=False) and not _system_account(value)
    return key == "name" and _person(value, strict=True)


def keyed_values(text: str) -> Iterator[Span]:
    if ":" not in text and "=" not in text and "/" not in text:
        return
    for m in _PAIR.finditer(text):
        key, value, base = _norm(m.group("key")), m.group("value"), m.start("value")
        if key in _MONEY_OBJECTS and text[m.end("value") - 1 : m.end("value")] != "]":
            # a balance's object of currency codes ("balances":{"USDT":"184220.55"})
            brace = text.find("{", m.start("value"), m.start("value") + 3)
            close = text.find("}", brace) if brace >= 0 else -1
            if 0 <= brace < close <= brace + 400:
                for pair in _CURRENCY_PAIR.finditer(text, brace, close):
                    yield Span(pair.start("figure"), pair.end("figure"), "amount")
        for start, end in _strings(value, base):
            s = text[start:end].strip()
            if not s:
                continue
            start += len(text[start:end]) - len(text[start:end].lstrip())
            end = start + len(s)
            if key in _AMOUNT_KEYS and _FIGURE.fullmatch(s):
                yield Span(start, end, "amount")
            elif (key in _ACCOUNT_KEYS or (key == "id" and _PREFIXED.fullmatch(s) and _BALANCE_AFTER.match(
                    text, m.end()))) and _CODE_VALUE.fullmatch(s):
                # (an object's own "id" when balances follow it is an account's: {"id":"sub_77120a",…"balances":…})
                yield Span(start, end, "account_number")
            elif (key in _ID_KEYS or (key == "number" and _DOCUMENT_NEAR.search(
                    text, max(0, m.start() - 120), m.start()))) and _ID_VALUE.fullmatch(s):
                yield Span(start, end, "national_id")
            elif _named(key, s):
                yield Span(start, end, "person_name")
            elif key in _ADDRESS_KEYS and re.search(r"\d", s) and re.search(r"[^\W\d_]{2}", s):
                yield Span(start, end, "street_address")
    for m in _HOME.finditer(text):
        if m.group(1).lower() not in _SYSTEM_HOMES:
            yield Span(m.start(1), m.end(1), "username")
