"""What money is called in every locale: the words for currencies (from the names Faker's
currency lists give in each of their languages), the symbols written before or after a figure
(Faker's symbols), and the words and suffixes that scale a figure ("1.2m", "5 lakh", "4
millones", "42 ألف"). The lists are read once, on first use."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re

#: words and suffixes that scale a figure: thousands, millions, lakhs, crores, billions in the
#: languages tickets come in ("USD 1.2m", "₹5 lakh", "4 millones", "3,5 Mio.", "2 тыс.", "5 juta")
#: the scales written short, with a full stop that ends no sentence ("3,5 Mio. €", "2 тыс. руб")
SCALE_ABBREVIATIONS = r"bn|Bn|mn|mln|mld|tys|tyś|Mio|Mrd|mio|mrd|тыс|тис|млн|млрд|rb|jt"
SCALE = (rf"(?:(?:(?:k|K|m|M|{SCALE_ABBREVIATIONS})\.?"
         r"|(?i:thousand|million|billion|millones|millón|millon|mil|milhões|milhão|milhares|millions|"
         r"milioni|milione|miliardi|miliony|milionów|milion|miliard|millionen|milliarden|milliards?|"
         r"lakhs?|lacs?|crores?|juta|ribu|miliar|triệu|nghìn|ngàn|tỷ|bin|milyon|milyar|"
         r"тысяч[аи]?|миллион(?:а|ов)?|тисяч[аі]?|мільйон(?:а|ів)?)"
         r"|ألف|آلاف|الف|مليون|ملايين|مليار|हज़ार|हजार|लाख|करोड़|אלף|מיליון)"
         r"(?![^\W\d_])"
         # Thai spaces no words: its scales touch the currency after them ("5 ล้านบาท")
         r"|ล้าน|พัน|หมื่น|แสน)")

#: the words for currencies in languages Faker's currency lists do not name them in (Arabic,
#: Persian, Hebrew, Hindi, Indonesian and Malay, Vietnamese, Turkish, Polish, Czech, Hungarian)
_MORE_WORDS = frozenset((
    "دولار", "دولارات", "درهم", "دراهم", "دينار", "دنانير", "ريال", "ريالات", "جنيه", "جنيهات", "ليرة", "يورو",
    "روبل", "تومان", "ریال", "دلار", "שקל", "שקלים", "ש״ח", "ש\"ח", "דולר", "דולרים", "יורו", "रुपये", "रुपए",
    "रुपया", "डॉलर", "rupiah", "ringgit", "đồng", "đô", "lira", "lirası", "złotych", "złote", "złoty", "korun",
    "koruny", "koruna", "forint", "forintot", "hryvnia", "гривень", "рублей", "рубля", "долларов", "доларів",
    "евро", "євро", "tenge", "som", "lari", "manat", "leva", "лева", "лв", "dinara", "динара", "denari",
    "kuna", "kune", "soles", "sol", "nuevos", "rupia", "rupias", "rupii", "dolar", "funt", "rubel", "rubli", "rubla",
))
#: words of Faker's currency names that name no currency, or that are ordinary words after a
#: figure ("3 new", "5 gold", "2 mark"), however often the lists repeat them
_NOT_CURRENCY = frozenset(("new", "gold", "rights", "mark", "unit", "unidad", "special", "drawing", "oro", "us",
                           "bat", "sum", "sdr", "сдр", "sonderziehungsrecht",
                           "de", "la", "el", "des", "du", "und", "and", "of", "the", "och", "från"))
#: a word of a name: letters with the marks of the scripts that write them apart (Thai, Bengali)
_NAME_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|[\u0300-\u036f\u0981-\u09fe\u0e31-\u0e4e\u064b-\u065f])*")


def _currency_lists() -> list[tuple[tuple[str, str], ...]]:
    import faker.providers.currency as currency

    lists = [tuple(currency.Provider.currencies)]
    for module in pkgutil.iter_modules(currency.__path__):
        provider = importlib.import_module(f"{currency.__name__}.{module.name}").Provider
        if "currencies" in vars(provider):
            lists.append(tuple(provider.currencies))
    return lists


@functools.cache
def currency_words() -> frozenset[str]:
    """The word for each currency, in lower case, in every language Faker names currencies in
    ("dollar", "dólar", "доллар", "ดอลลาร์", "rand", "рубль"): in English the last word of a
    name ("South African rand"); in another language a word the names of two or more
    currencies share when those currencies share their English word ("Dólar australiano",
    "Dólar canadiense"), or a name of one word ("Afghani")."""
    lists = _currency_lists()
    english = {code: name.split()[-1].lower() for code, name in lists[0] if name.split()}
    words = set(english.values())
    for entries in lists[1:]:
        codes_of: dict[str, set[str]] = {}
        for code, name in entries:
            found = _NAME_WORD.findall(name.lower())
            if len(found) == 1 and code in english:
                words.add(found[0])
            for w in set(found):
                codes_of.setdefault(w, set()).add(code)
        for w, codes in codes_of.items():
            heads = [english[c] for c in codes if c in english]
            # (three or more: two currencies of one country share its name, "Nordkoreanischer",
            # "Südkoreanischer Won")
            if len(heads) >= 3 and max(heads.count(h) for h in set(heads)) >= 0.8 * len(heads):
                words.add(w)
    # (a word of two letters only from the list above: "500 đô")
    return frozenset(w for w in words | _MORE_WORDS if (len(w) >= 3 or w in _MORE_WORDS) and w not in _NOT_CURRENCY)


def is_currency_word(word: str, ordinary: bool = False) -> bool:
    """``word`` names a currency: one of :func:`currency_words` or an inflected form of one (up
    to two more letters, "pesos", "dólares", "долларов"; up to three in place of a soft or
    "y" ending, "złoty" -> "złotych", "рубль" -> "рублей"); ``ordinary``: the word is one of
    the dictionary's, which an inflected form may not be ("random" is no form of "rand"), nor
    a longer word that begins with a currency's name ("francesa", "libros")."""
    low = word.lower()
    words = currency_words()
    if low in words:
        return True
    if ordinary or len(low) < 4:
        return False
    for cut in range(1, 4):
        stem = low[:-cut]
        if len(stem) < 4:
            break
        if (cut <= 2 and stem in words) or any(stem + end in words for end in "yьйы"):
            return True
    return False


@functools.cache
def symbols() -> tuple[frozenset[str], frozenset[str]]:
    """The currency symbols of Faker's list: (the signs, "₵", "₼", "﷼", "лв"; the symbols in
    Latin letters, "R", "S/", "Kz", "KSh"), a figure beside them money."""
    import faker.providers.currency as currency

    signs, letters = set(), set()
    for symbol in currency.Provider.currency_symbols.values():
        symbol = symbol.strip("\u200e ")
        if re.search(r"[A-Za-z]", symbol):
            letters.add(symbol)
        elif symbol:
            signs.add(symbol)
    # ("Le" is French's article before a figure, "Le 1 200 premiers", more often than a leone)
    return frozenset(signs), frozenset(letters - {"x", "m", "SDR", "Le"})
