"""Word lists that tell a person's name from an ordinary word, loaded once on first use.

- given names and surnames: the person lists Faker (MIT) keeps for each of its locales
  (about 30,000 given names and 28,000 surnames, from Yoruba to Japanese);
- ordinary words: the words Webster's word list (``english-words``, MIT) spells in lower case,
  so "will", "may", "grant" or "mark" are ordinary while "Kevin" or "Robert" (listed only
  capitalised there) are not.

All three are sets of lower-case words without apostrophes or hyphens (``O'Malley`` is
``omalley``).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import unicodedata
from collections.abc import Iterable


def _kind(attr: str) -> int | None:
    """0 for a list of given names (``first_names_female``, ``first_romanized_names``,
    ``middle_names``), 1 for one of surnames (``last_names``, ``male_last_names``,
    ``last_romanized_names``), None otherwise."""
    if attr.startswith("_") or "pairs" in attr or "kana" in attr:
        return None
    if (attr.startswith("first_") or attr.startswith("middle_")) and "names" in attr:
        return 0
    # "last_names", "male_last_names", and the romanised lists of Japanese and Chinese
    # ("last_romanized_names": "Tanaka", "Chen")
    return 1 if "last_name" in attr or (attr.startswith("last_") and "names" in attr) else None


def key(word: str) -> str:
    """The form a word is looked up in: lower case, apostrophes and hyphens dropped."""
    return "".join(c for c in word.lower() if c.isalpha())


def _words(values: object) -> Iterable[str]:
    # a locale keeps its names as a tuple, or as a mapping of name to weight
    for value in values if isinstance(values, tuple | list | dict) else ():
        if isinstance(value, str):
            yield from (key(w) for w in value.split())


@functools.cache
def _person_lists() -> tuple[frozenset[str], frozenset[str]]:
    import faker.providers.person as person

    lists: tuple[set[str], set[str]] = (set(), set())
    for module in pkgutil.iter_modules(person.__path__):
        provider = getattr(importlib.import_module(f"{person.__name__}.{module.name}"), "Provider", None)
        for attr in dir(provider):
            kind = _kind(attr)
            if kind is not None:
                lists[kind].update(_words(getattr(provider, attr)))
    given, surnames = (frozenset(w for w in names if w) for names in lists)
    return given, surnames


@functools.cache
def unaccented_names() -> tuple[frozenset[str], frozenset[str]]:
    """The given names and the family names as written without their accents, where that differs
    ("Hồng" -> "hong", "Đức" -> "duc", "Jürgen" -> "jurgen"): as many type their own name in a
    form, or a bank prints it. Read only for a capitalised word: in lower case such a form is a
    word of some language more often ("hai", "duc")."""
    given, surnames = _person_lists()
    return (frozenset(f for f in map(_unaccented, given) if len(f) >= 3) - given,
            frozenset(f for f in map(_unaccented, surnames) if len(f) >= 3) - surnames)


def _unaccented(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word.replace("đ", "d").replace("ø", "o").replace("ł", "l"))
                   if not unicodedata.combining(c))


def given_names() -> frozenset[str]:
    return _person_lists()[0]


def surnames() -> frozenset[str]:
    return _person_lists()[1]


@functools.cache
def ordinary_words() -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["web2"], alpha=True, lower=False))


@functools.cache
def place_names() -> frozenset[str]:
    """Countries, regions, states and cities as Faker's address lists name them in every
    locale: a capitalised word that names a place is no one's name."""
    import faker.providers.address as address

    out: set[str] = set()
    for module in pkgutil.iter_modules(address.__path__):
        provider = getattr(importlib.import_module(f"{address.__name__}.{module.name}"), "Provider", None)
        for attr in dir(provider):
            if attr.startswith("_") or not any(k in attr for k in ("countr", "state", "province", "region",
                                                                      "cities", "city_name", "department")):
                continue
            values = getattr(provider, attr)
            if isinstance(values, tuple | list | dict):
                out.update(key(w) for v in values if isinstance(v, str) for w in v.split())
    return frozenset(w for w in out if len(w) > 2)


@functools.cache
def country_names() -> frozenset[str]:
    """The one-word names of countries in Faker's English country list ("ireland", "india",
    "jordan"): alone, such a word is the country, though the name lists hold it too."""
    from faker.providers.address.en import Provider

    return frozenset(key(c) for c in Provider.countries if " " not in c.strip())


@functools.cache
def seed_words() -> frozenset[str]:
    """The 2,048 words of the BIP-39 English list (``mnemonic``, the reference implementation,
    MIT): twelve or more of them in a row are a wallet's recovery phrase."""
    from mnemonic import Mnemonic

    return frozenset(Mnemonic("english").wordlist)


#: the BIP-39 lists in the Latin alphabet besides English that wallets offer
SEED_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech")


@functools.cache
def seed_words_in(language: str) -> frozenset[str]:
    """The 2,048 words of one BIP-39 list (``mnemonic`` ships them decomposed, NFKD; here
    composed, NFC, as a ticket's text is)."""
    import unicodedata

    from mnemonic import Mnemonic

    return frozenset(unicodedata.normalize("NFC", w) for w in Mnemonic(language).wordlist)


@functools.cache
def currency_codes() -> frozenset[str]:
    """The ISO 4217 currency codes and the coins' tickers Faker's currency lists hold, in
    lower case ("usd", "btc", "xmr"), with the coins tickets name most that those lists lack."""
    import faker.providers.currency as currency

    provider = currency.Provider
    codes = {code.lower() for code, _ in (*provider.currencies, *provider.cryptocurrencies)}
    return frozenset(codes | {"usdc", "sol", "dot", "atom", "avax", "matic", "bnb", "shib", "link", "ton", "near",
                              "arb", "op", "apt", "sui", "dai", "busd", "pyusd", "wbtc", "steth", "pol", "ksm"})


@functools.cache
def han_given_characters() -> frozenset[str]:
    """The Chinese characters of the given names Faker's Chinese lists hold ("伟", "芳", "明"):
    a listed family name before one or two of them, standing alone, is a name ("王芳")."""
    out: set[str] = set()
    for module in ("zh_CN", "zh_TW"):
        provider = importlib.import_module(f"faker.providers.person.{module}").Provider
        for attr in ("first_names", "first_names_male", "first_names_female"):
            out.update(c for name in getattr(provider, attr, ()) for c in name if "\u4e00" <= c <= "\u9fff")
    return frozenset(out)


@functools.cache
def japanese_given_names() -> frozenset[str]:
    """The given names in kanji of Faker's Japanese list ("健太", "翔太"): after a listed family
    name they close a message's signature ("佐藤健太")."""
    provider = importlib.import_module("faker.providers.person.ja_JP").Provider
    return frozenset(name for attr in ("first_names", "first_names_male", "first_names_female")
                     for name in getattr(provider, attr, ()) if isinstance(name, str))


@functools.cache
def coin_names() -> frozenset[str]:
    """The one-word names of the coins in Faker's list and of the chains tickets name most
    ("cardano", "monero", "tezos"): a capitalised coin is no one's name."""
    import faker.providers.currency as currency

    names = {key(name) for _, name in currency.Provider.cryptocurrencies if " " not in name.strip()}
    return frozenset(names | {"tezos", "polkadot", "cosmos", "avalanche", "algorand", "stellar", "cardano",
                              "monero", "litecoin", "dogecoin", "ripple", "chainlink", "filecoin", "tron",
                              "hedera", "aptos", "arbitrum", "optimism", "kusama", "near", "celestia"})


@functools.cache
def legal_forms() -> frozenset[str]:
    """The words that close a company's name in every locale Faker (MIT) keeps ("Kft.", "Bt.",
    "s.r.o.", "Sp.", "Ltda.", "GmbH", "Oyj", "EOOD"): the first word of each company suffix, as
    written (a short one such as "AS" or "ET" only in its own capitals, where "as" and "et" are
    words), none a lower-case word without a full stop."""
    import faker.providers.company as company

    forms: set[str] = set()
    for module in pkgutil.iter_modules(company.__path__):
        provider = getattr(importlib.import_module(f"{company.__name__}.{module.name}"), "Provider", None)
        for suffix in getattr(provider, "company_suffixes", ()):
            words = suffix.split() if isinstance(suffix, str) else []
            # (a lower-case word with no stop is a joining word: "και", "и", "and")
            if words and any(c.isalpha() for c in words[0]) and (
                    "." in words[0] or not words[0].islower()):
                forms.add(words[0])
    return frozenset(forms)
