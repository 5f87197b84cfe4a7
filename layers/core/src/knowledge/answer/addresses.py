"""Street addresses in ticket text, in the formats of the countries tickets come from.

An address is found four ways, and the spans of all four are merged:

- by its shape: a house number and a street word in the order a country writes them ("221B
  Baker Street", "Hauptstraße 5", "Calle de Alcalá 45", "18 rue des Lilas", "ul. Marszałkowska
  84/92"), in Chinese, Japanese and Korean the chain of province, city, district and block;
- by its postcode: a house number, capitalised words and a postcode whose format belongs to a
  country (British, Canadian, Dutch, a US state with its ZIP) even with no street word;
- by the words that introduce one ("my address is", "ship it to", "Adresse :", "住所は"): the
  text up to the end of the clause, when it holds a number;
- as a line of short comma-separated parts, the way most countries write one ("Kızılay Mah.
  Atatürk Bulvarı No: 58/9, 06420 Çankaya/Ankara"): every word of each part capitalised, a
  number, a particle or a street, unit or district word, one part a house number beside a word,
  and a street word or a postcode after it.

Whatever was found then takes the parts that follow it (a flat or floor, a postcode, a city,
a region), so an address is removed whole, not only its street.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import pkgutil
import re
from collections.abc import Iterator

from . import name_lexicon

_STREET_SUFFIX = (r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|Blvd|Drive|Dr|Court|Ct|Way|Place|Pl|"
                  r"Terrace|Close|Square|Sq|Parkway|Pkwy|Highway|Hwy|Crescent|Cres|Row|Gardens|Grove|Mews|Walk|"
                  r"Hill|Gate|Rise|Green|Circle|Cir|Trail|Alley|Wharf|Quay|Vale|Heights|Parade|Esplanade|"
                  r"Promenade|Park|View|Point|Mall|Hts)")
#: the same in capitals, as a bill or a form prints an address ("14 PROTEA CRESCENT BRYANSTON")
#: (the long forms only: "3 NEW USERS ST" is a shout)
_CAPS_SUFFIX = "(?:" + "|".join(w.upper() for w in _STREET_SUFFIX[3:-1].split("|") if len(w) >= 4) + ")"
#: a post box in the languages tickets come in ("PO Box 4411", "BP 4021", "Postfach 1120",
#: "Apartado 318", "Caixa Postal 77")
_POST_BOX_WORD = (r"(?:P\.?\s?O\.?\s?Box|Bo[iî]te\s+postale|Postfach|Postbus|Apartado\s+de\s+correos|Caixa\s+Postal|"
                  r"Casella\s+postale|Skrytka\s+pocztowa|Postboks|Căsuța\s+poștală)")
_POST_BOX_NUMBER = r"\s*(?:n[º°o]\.?\s*)?\d{1,6}(?![\w])"
#: (the short forms only after a street: "BP 4021" alone may be anything)
_POST_BOX = r"(?:" + _POST_BOX_WORD + r"|B\.?P\.?|Apartado|Apdo\.?|C\.?P\.?|Box)" + _POST_BOX_NUMBER
#: a flat, floor or door after the street ("Flat 4", "Apt 2B", "3º B", "2. Stock"; Romanian and
#: Moldovan blocks, stairs, floors and flats: "bl. C3", "sc. A", "et. 2", "ap. 41")
#: (the words in lower case too, as an address block's line writes them: Polish "lok. 4", Czech "byt 4",
#: "unit 3.12", a floor and a room written with a dot between them)
_UNIT = (_POST_BOX + r"|(?:(?:Apt|Apartment|Suite|Ste|Unit|Flat|Fl|Floor|Piso|Planta|Puerta|Étage|Etage|Stock|"
         r"Whg|Wohnung|Bus|Bte|Appt|Interno|Scala|Lok|lok|m\.|apto|apt|unit|suite|flat|byt|andar|sala|bloco|casa|depto|dpto|"
         r"lote|No:|kv|кв|korp|корп|str|стр|d|д|bl|bloc|sc|scara|et|etaj|ap|#)\.?\s*#?\s*"
         r"(?:\d[\w-]{0,4}(?:\.\d{1,3})?|[A-Z](?![\w]))"
         r"|\d{1,2}\s?[º°ª]\s?[A-Z\d]?(?:\s?(?:izq|izda|dcha|dch)\.?)?|\d{1,2}\.\s?(?:Stock|OG|Etage)"
         # (an English floor by its ordinal: "38th Floor")
         r"|\d{1,3}(?:st|nd|rd|th)\s+(?:Floor|Fl\.?)"
         r"|(?:(?:Esc|Escalera|Bloque|Bl|Portal|Torre)\.?\s*[\w-]{1,4}))")
_ROMANCE_PREFIX = (r"(?:Calle|C/|Avenida|Avda\.|Av\.|Rue|Via|Viale|Piazza|Piazzale|Corso|Largo|Rua|Travessa|Praça|"
                   r"Plaza|Pza\.|Paseo|Pº|Carrer|Ronda|Camino|Carretera|Ctra\.|Chemin|Allée|Place|Boulevard|"
                   r"ul\.|ulica|al\.|aleja|os\.|Strada|Bulevardul|Calea|Str\.|ulitsa|ul|Rruga|Odos|Odós)")
_STREET = re.compile(
    r"(?:\b(?:Apt|Apartment|Suite|Unit|Flat|Level|Floor|Shop|Office|Building|Bldg|Block|Blk)\.?\s*#?\s*\w{1,5},?\s+)?"
    r"\b\d{1,5}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?,?\s+(?:(?:N|S|E|W|NE|NW|SE|SW)\.?\s+)?"
    r"(?:(?:[A-Z][A-Za-z'’-]+|\d{1,3}(?:st|nd|rd|th))\.?\s+){1,4}(?:" + _STREET_SUFFIX + r"\b\.?"
    # (in capitals, the suburb after it to the line's end: "14 PROTEA CRESCENT BRYANSTON")
    r"|" + _CAPS_SUFFIX + r"\b(?:[ \t]+[A-Z]{3,}){0,2}(?=[ \t]*(?:\n|$)))"
    # a numbered avenue or street of a district ("Ang Mo Kio Avenue 6")
    r"(?:[ \t]\d{1,2}(?![\w/.-]))?"
    r"(?:\s+(?:North|South|East|West|N|S|E|W|NE|NW|SE|SW|O)\b\.?)?"
    r"(?:,?\s*(?:Apt|Apartment|Suite|Unit|Flat|Fl|#)\.?\s*#?\s*[\w-]+)?"
    # German, Dutch and Nordic streets: the street word glued on or after an adjective ("Berliner Str. 12")
    # (an adjective before it, "Nieuwe Binnenweg 61A", "Alte Gasse 3")
    r"|\b(?:(?:Nieuwe|Oude|Grote|Kleine|Lange|Korte|Hoge|Alte|Neue|Große|Obere|Untere|Stora|Lilla|Nya|Gamla|Store|"
    r"Lille|Nye|Gamle)[ \t]+)?(?:[A-ZÄÖÜ][a-zäöüß]+-)*[A-ZÄÖÜ][a-zäöüßé]+(?:straße|strasse|str\.|weg|platz|allee|"
    r"gasse|ring|damm|ufer|"
    r"chaussee|steig|pfad|markt|straat|laan|gracht|plein|kade|singel|dijk|vej|gade|gatan|gata|gate|vägen|väg|"
    # (a floor after the number: "318-II", "12-hs", "4/2")
    r"veien|vegen|katu|tie)\s+\d{1,4}[a-zA-Z]?(?:\s?[-/]\s?(?:\d{1,4}[a-z]?|[IVX]{1,4}|hs|bis|[A-Za-z])"
    r"|[ ](?:bis|ter|[A-H])"
    r"(?=[,.\s\"']|$))?(?![\w])"
    r"|\b(?:[A-ZÄÖÜ][a-zäöüß]+-)+(?:Straße|Strasse|Str\.|Weg|Platz|Allee|Gasse|Ring|Damm|Ufer|Chaussee)"
    r"\s+\d{1,4}[a-z]?(?![\w])"
    r"|\b[A-ZÄÖÜ][a-zäöüß]+(?:er|e|es)?\s+(?:Straße|Strasse|Str\.|Weg|Platz|Allee|Gasse|Ring|Damm|Ufer|Chaussee)"
    r"\s+\d{1,4}[a-z]?(?![\w])"
    r"|\b[A-ZÁÉÍÓÖŐÚÜŰ][\w]+(?:\s[A-ZÁÉÍÓÖŐÚÜŰ][\w]+)?\s+(?:utca|út|tér|körút)\s+\d{1,4}(?![\w])"
    # (its floor and door: "52. II/4", "24. 3. em. 12.")
    r"(?:\.?[ \t]+[IVX]{1,4}\.?/\d{1,3}\.?|\.[ \t]+\d{1,2}\.[ \t]?em(?:elet)?\.?(?:[ \t]+\d{1,3}\.?)?)?"
    # a German street named by its place ("Am Hofgarten 3", "An der Alster 12", "Im Tal 4")
    r"|\b(?:Am|An\s+der|An\s+den|Auf\s+der|Auf\s+dem|Im|In\s+der|Zum|Zur|Hinter\s+der)\s+[A-ZÄÖÜ][a-zäöüß]+\s+\d{1,4}[a-z]?"
    r"(?![\w])"
    # the street word first and the number after the name ("Calle de Alcalá 45", "Rua Augusta, 1500")
    r"|(?<![\w/])" + _ROMANCE_PREFIX + r"\s*"
    r"(?:[^\W\d_][\w'’.-]*\s+){0,5}?[^\W\d_][\w'’.-]*,?\s+(?:n[º°o]\.?\s*)?\d{1,4}[a-z]?(?:/\d{1,4}[a-z]?)?(?![\w])"
    # (the number no part of a larger one, "₹18,500 via UPI"; the street's name capitalised after
    # its particles, "rue des Lilas", never an acronym or a lower-case word, "via UPI to buy")
    r"|(?<![\d][,.])\b\d{1,4}(?:\s?(?:bis|ter|[a-z]))?,?\s+(?i:rue|avenue|av\.|boulevard|bd|place|chemin|allée|"
    r"impasse|quai|cours|route|calle|via|viale|rua)"
    r"(?:\s+(?:(?:de|des|du|del|della|di|da|do|dos|das|la|le|les|l['’]|d['’])\s*)*(?![A-Z]{2,}\b)[A-ZÀ-Þ][\w'’-]*)"
    r"(?:\s+[^\W\d_][\w'’-]*){0,3}"
    r"|\b" + _POST_BOX_WORD + _POST_BOX_NUMBER +
    r"|\b(?:Flat|Apt|Apartment|House|Plot|Door|Villa|Unit)\s*(?:No\.?\s*)?#?\s*\d{1,5}[A-Za-z]?,\s+"
    r"(?:(?:[A-Z][\w'’-]*\s+){0,3}[A-Z][\w'’-]*,\s+)?(?:\d{1,3}(?:st|nd|rd|th)\s+)?(?:[A-Z][\w'’-]*\s+){0,3}"
    + _STREET_SUFFIX + r"\b\.?"
)
#: postcodes by country; the strong ones name a country by their shape alone
_STRONG_POSTCODE = (r"(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"  # United Kingdom
                    r"|[A-Z]\d[A-Z]\s?\d[A-Z]\d"  # Canada
                    r"|(?:[AC-FHKNPRTV-Y]\d{2}|D6W)[ ](?=[0-9A-Z]{0,3}[A-Z])[0-9AC-FHKNPRTV-Y]{4}"  # Ireland
                    r"|\d{4}\s?[A-Z]{2}"  # the Netherlands
                    r"|(?:[A-Z]{2,3}\s+)\d{4,5}(?:-\d{4})?)(?![\w])")  # a US, Australian or Mexican state
_POSTCODE = (r"(?:" + _STRONG_POSTCODE + r"|(?:〒\s?)?\d{3}-\d{4}|\d{5}-\d{3}|\d{4}-\d{3}|\d{2}-\d{3}"
             r"|\d{3}\s\d{2}|(?:[A-Z]{1,2}-)?\d{4,6}|[A-Z]{2}\d{3,5}|KY\d-\d{4})(?![\w-])")
_NOT_PLACE = (r"(?!(?:Thanks|Thank|Please|Regards|Best|Cheers|Kind|Many|I|My|The|It|We|But|And|Also|Can|Could|"
              r"Is|Was|Are|Do|Does|How|What|When|Why|Hi|Hello|Gracias|Danke|Merci|Obrigad[oa]|Grazie|Bedankt|"
              r"Dziękuję|Saludos|Tack|Phone|Email|Tel|DOB|SSN|Mobile|Cell)(?![\w]))")
_PLACE_WORD = r"[A-ZÀ-ÞĀ-Ž][^\W\d_]*(?:['’-][^\W\d_]+)*"
_PLACE = (_NOT_PLACE + _PLACE_WORD + r"(?:(?<=\b[A-Z])\.|(?<=\b[A-Z][a-z])\.|(?<=\b[A-Z][a-z]{2})\.)?"
          r"(?:[ ](?:(?:de|del|di|la|le|am|an|im|sur|upon|on|do|da|dos)[ ])?" + _PLACE_WORD + r"){0,2}")
#: what follows a street: its flat, postcode, city, district or region, each after a comma or a dash
_SEPARATOR = r"(?:,[ \t]*|[ \t]+[-–][ \t]+|[ \t]+(?=" + _UNIT + r"|" + _POSTCODE + r"))"
_TAIL_PART = re.compile(
    _SEPARATOR + r"(?:(?P<unit>" + _UNIT + r")(?![\w])|(?P<code>" + _POSTCODE + r"(?:[ \t]+" + _PLACE + r")?"
    r"|" + _PLACE + r"[ \t]+(?:[-–][ \t]+)?" + _POSTCODE + r")|(?P<place>" + _PLACE + r"(?:[ \t]\d{1,2}(?![\w]))?))"
)
_CLAUSE_ENDS_HERE = re.compile(r"[ \t]*(?:[.!?;)\n]|$)")


def postcode(value: str) -> bool:
    """``value`` has the shape of some country's postcode ("04544-000", "120 00", "SW1A 1AA")."""
    return bool(re.fullmatch(_POSTCODE, value.strip()))


def _tail_end(text: str, pos: int, coded: bool = False) -> int:
    """Where the parts after a street end: after a postcode only a last place closing the
    clause may follow ("…, IL 62704, USA."), never the next phrase ("…, Kundennummer …");
    ``coded``: the postcode was already read."""
    while part := _TAIL_PART.match(text, pos):
        if coded and not (part.group("place") and _CLAUSE_ENDS_HERE.match(text, part.end())):
            break
        coded = coded or bool(part.group("code"))
        pos = part.end()
    return pos


#: a house number and capitalised words closed by a postcode that names its country
_LINK = r"(?:(?:y|yr|na|an|nan|of|the|upon|on|de|la|le|du|des|del|van|der|den|von)[ \t]+(?:h-)?)?"
_BY_POSTCODE = re.compile(
    r"\b\d{1,5}[A-Za-z]?,?[ \t]+[A-Z][\w'’-]+(?:[ \t]+" + _LINK + r"[A-Z][\w'’-]+){0,3}"
    r"(?:,[ \t]*[A-Z][\w'’-]+(?:[ \t]+" + _LINK + r"[A-Z][\w'’-]+){0,2}){0,2},?[ \t]+" + _STRONG_POSTCODE
)
#: province, city, district, block: 東京都渋谷区神南1-2-3, 上海市浦东新区世纪大道100号, 서울특별시 강남구 테헤란로 123
#: (a Korean one with its five-digit postcode before it, "(03922) 서울특별시 …", and its building, floor
#: and flat after the number, "… 월드컵북로58길 9, 5층", "… 123, 101동 1203호", and the neighbourhood a
#: road address names in brackets at its end, "(상암동)")
_NUM = r"[0-9０-９]"
_CJK_ADDRESS = re.compile(
    rf"(?:〒?\s?{_NUM}{{3}}[-－]{_NUM}{{4}}\s*)?[\u4e00-\u9fff]{{1,3}}[都道府県][\u4e00-\u9fff\u3040-\u30ff]{{1,8}}?"
    rf"[市区町村郡][\u4e00-\u9fff\u3040-\u30ff]{{0,10}}?(?:{_NUM}{{1,4}}|[一二三四五六七八九十]+)(?:丁目|[-－−‐]|番地?)"
    rf"(?:{_NUM}{{1,4}}(?:[-－−‐]|番地?|号)?){{0,3}}"
    rf"|(?![是在为到往于的])(?:[\u4e00-\u9fff]{{2,3}}(?:省|自治区))?[\u4e00-\u9fff]{{2,3}}市[\u4e00-\u9fff]{{1,12}}?(?:路|街|道|巷|弄|大道)"
    rf"{_NUM}{{1,5}}号(?:[\u4e00-\u9fff{_NUM[1:-1]}]{{0,10}}?(?:室|楼|栋|单元|层))?"
    r"|(?:\(\d{5}\)\s?|(?<![\d-])\d{5}\s)?"
    r"[가-힣]{2,6}(?:특별시|광역시|특별자치시|시|도)\s?[가-힣]{1,6}(?:구|군|시)\s?(?:[가-힣]{1,6}(?:동|읍|면)\s?)?"
    r"[가-힣0-9]{1,10}(?:로|길)\s?\d{1,4}(?:-\d{1,4})?(?:,?\s?(?:지하\s?)?\d{1,4}(?:동|호|층)(?![가-힣])){0,3}"
    r"(?:\s?\([가-힣]{1,8}\d?(?:동|가|리)(?:,\s?[가-힣A-Za-z0-9 ]{1,20})?\))?"
)
#: the words that say an address follows
_CUE = re.compile(
    r"(?i:\b(?:(?:my|our|the|his|her)\s+(?:new\s+|old\s+|current\s+|correct\s+)?(?:home\s+|billing\s+|mailing\s+|"
    r"postal\s+|delivery\s+|shipping\s+|street\s+|registered\s+)?address\s+(?:is|was|should\s+be|now\s+is)|"
    r"(?:new|home|billing|mailing|postal|delivery|shipping|street|registered|current)\s+address\s*(?:is\s*)?:?|"
    r"address\s*(?::|=|to\b|is\b)|i\s+live\s+at|(?:moved|relocated|moving)\s+to|i\s+now\s+live\s+at|(?:ship|deliver|send|post|mail)\s+"
    r"(?:it|them|the\s+card|the\s+parcel|the\s+package|the\s+documents?|everything)?\s*to|"
    r"meine\s+(?:neue\s+)?(?:adresse|anschrift)\s+(?:ist|lautet)|(?:neue\s+)?\w*(?:adresse|anschrift)\s*:|wohne\s+(?:in\s+der|am|an\s+der)|"
    r"mon\s+(?:nouvelle\s+)?adresse\s+est|(?:nouvelle\s+)?adresse\s*:|j'habite\s+(?:au|à|a)|"
    r"mi\s+(?:nueva\s+)?direcci[oó]n\s+es|(?:nueva\s+)?direcci[oó]n\s*:|vivo\s+en|"
    r"meu\s+(?:novo\s+)?endere[cç]o\s+[ée]|endere[cç]o\s*:|moro\s+na|"
    r"il\s+mio\s+(?:nuovo\s+)?indirizzo\s+[èe]|indirizzo\s*:|abito\s+in|"
    r"mijn\s+(?:nieuwe\s+)?adres\s+is|\w*adres\s*:|ik\s+woon\s+(?:op|aan)|mój\s+(?:nowy\s+)?adres\s+to|"
    r"min\s+(?:nya\s+)?adress\s+är|adresse(?:n)?\s+(?:er|är)|мой\s+адрес|(?:moja\s+|moje\s+|mea\s+)?adres[aă]\s*:|"
    r"adresa\s+je|osoite\s*:|cím(?:em)?\s*:|adresim\s*:?|"
    # ("please update our billing address on the invoices to:" and the address on the next line)
    r"address\b[^\n:.!?]{0,60}\bto\s*:(?=[ \t]*\n))(?![\w]))[ \t]*(?:\n[ \t]*)?"
    r"|住所[はが：:]\s*|地址[是：:]\s*|주소[는:：]\s*"
)
#: where an introduced address ends: a clause or sentence ends, or a new subject starts
_CLAUSE_END = re.compile(
    r"[!?;\n(]|[.。](?=\s|$)|[ \t]*(?:です|でした|입니다|이에요|예요|에요)|。|，|、|$"
    # a comma before a lower-case word, unless the word is a flat's, a block's or a floor's ("…, bl. C3, ap. 41")
    r"|,[ \t]+(?=[a-zà-ÿ])(?!(?:bl|bloc|sc|scara|et|etaj|ap|apt|apto|nr|no|esc|piso|dpto|depto|kv|korp|app|appt|int)"
    r"\b\.?[ \t]*[\w-]{0,5}\d?)"
    r"|[ \t]+(?:and|but|please|pls|thanks|thank|since|because|from|until|so|y|pero|et|mais|und|aber|e|ma|en|maar|"
    r"or|oder|ou|o|or)\b(?!\.[ \t]*\d)"
)
#: abbreviations a full stop inside an address belongs to ("Str. 12", "Av. Paulista")
_ABBREVIATION = re.compile(r"(?i:\b(?:st|str|av|ave|avda|rd|dr|apt|no|nr|ul|al|bd|blvd|ctra|pza|ste|fl|n|s|e|w|o|"
                           r"cad|sok|sk|mah|blv|col|esq|apto|dpto|depto|int|bl|esc|ap|sc|et|bloc|app|appt)$)")
#: an introduced address starts like one (a number, a flat, a street word), unless the cue
#: says outright that it is an address
_STARTS_LIKE_ONE = re.compile(r"\d|(?:Apt|Apartment|Suite|Unit|Flat|House|P\.?\s?O\.?\s?Box|#)\b|" + _ROMANCE_PREFIX)
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff가-힣]")
_SAYS_ADDRESS = re.compile(r"(?i)address|adress|anschrift|direcci|endere|indirizzo|adres|住所|地址|주소|адрес")


def _introduced(text: str) -> Iterator[tuple[int, int]]:
    for cue in _CUE.finditer(text):
        start = cue.end()
        if start >= len(text) or not (text[start].isupper() or text[start].isdigit() or text[start] in "#〒"
                                      or text[start] >= "\u3000"):
            continue
        end = start
        while True:
            stop = _CLAUSE_END.search(text, end)
            assert stop is not None  # "$" always matches
            end = stop.start()
            # (an address is at most 120 characters: past them the scan stops, so a text of many
            # cues and abbreviations stays linear)
            if stop.group() == "." and end - start <= 120 and _ABBREVIATION.search(text[max(start, end - 8) : end]):
                end = stop.end()
                continue
            break
        value = text[start:end].rstrip(" ,")
        if len(value) > 120 or not re.search(r"[0-9０-９]", value) or (len(value.split()) < 2 and not (
                _CJK.search(value))):
            continue
        if len(value.split()[0]) > 12 and not _CJK.search(value):
            continue  # "address: 0x9fB2… instead of mine" is a wallet
        if not _SAYS_ADDRESS.search(cue.group()) and not _STARTS_LIKE_ONE.match(value):
            continue  # "send it to Binance 3 times"
        yield start, start + len(value)


_CARE_OF = re.compile(
    r"(?i:\b(?:c/o|care\s+of|attn\.?:?|attention:|z\.\s?Hd\.?|à\s+l'attention\s+de)\s+[^,\n]{1,40},[ \t]*)\Z")


#: the word before a house number that names its block ("Block 123 Ang Mo Kio Avenue 6")
_BLOCK = re.compile(r"\b(?:Block|Blk|Bloco|Plot)\.?[ \t]+\Z")


def _head_start(text: str, start: int) -> int:
    head = _CARE_OF.search(text[max(0, start - 60) : start])
    start -= len(head.group()) if head else 0
    block = _BLOCK.search(text[max(0, start - 12) : start])
    return start - (len(block.group()) if block else 0)


@functools.cache
def street_words() -> frozenset[str]:
    """The street words of every locale Faker (MIT) keeps: the suffixes and prefixes a street
    name takes ("utca", "náměstí", "allee", "rua", "jalan", "ulica"), lower case, without a
    closing full stop; read as data once, on the first address candidate."""
    import faker.providers.address as address

    words: set[str] = set()
    for module in pkgutil.iter_modules(address.__path__):
        provider = getattr(importlib.import_module(f"{address.__name__}.{module.name}"), "Provider", None)
        for attr in dir(provider):
            if attr.startswith("street_") and ("suffix" in attr or "prefix" in attr):
                values = getattr(provider, attr)
                for value in values if isinstance(values, tuple | list | dict) else ():
                    if isinstance(value, str) and "{" not in value:
                        words.update(w.strip().lower().rstrip(".") for w in value.split())
    return frozenset(w for w in words if len(w) >= 2 and not w.isdigit())


#: a street of any country beside a postcode and its town, in either order ("Lindenallee 7,
#: 14050 Berlin", "6720 Szeged, Kárász utca 9", "Náměstí Míru 12, 377 01 Jindřichův Hradec"):
#: a few words and a house number, a comma, a postcode's shape and a capitalised place
_LOOSE_WORD = r"[^\W\d_][\w'’-]*\.?"
_LOOSE_STREET = r"(?:" + _LOOSE_WORD + r"[ \t]+){1,4}\d{1,4}[a-zA-Z]?(?:/\d{1,4}[a-zA-Z]?)?(?![\w])"
_LOOSE_CODE = r"(?:\d{3}[ ]\d{2}|\d{4,5}|[A-Z]{2}[- ]?\d{3,5})[ \t]+" + _PLACE
_STREET_THEN_CODE = re.compile(r"(?<![\w.,-])(?P<street>" + _LOOSE_STREET + r"),[ \t]*" + _LOOSE_CODE)
_CODE_THEN_STREET = re.compile(r"(?<![\w.,-])" + _LOOSE_CODE + r",[ \t]*(?P<street>" + _LOOSE_STREET + r")")
_PARTICLE = frozenset(("de", "del", "della", "di", "da", "do", "dos", "das", "du", "des", "la", "le", "les", "von",
                       "van", "der", "den", "am", "an", "el", "al", "na"))
_LOWER_ABBREVIATION = re.compile(r"[^\W\d_A-Z]{1,4}\.")


def _address_word(word: str) -> bool:
    """A word a street's name may hold: capitalised, a particle, a street word or its abbreviation."""
    key = word.rstrip(".").lower()
    if _SAYS_ADDRESS.search(word):
        return False  # "Adresse Lindenallee 7": the word that says an address follows is none
    return (word[0].isupper() and bool(re.fullmatch(_NOT_PLACE + r"\w+", word.rstrip(".")))) or key in _PARTICLE or (
        key in street_words()) or bool(_LOWER_ABBREVIATION.fullmatch(word))


def _street_word(word: str) -> bool:
    """A street word of some locale, glued on ("Lindenallee") or abbreviated ("krt.")."""
    key = word.rstrip(".").lower()
    words = street_words()
    return key in words or bool(_LOWER_ABBREVIATION.fullmatch(word)) or any(
        key.endswith(w) and len(key) > len(w) for w in (key[-i:] for i in range(4, 8)) if w in words)


def _loose(text: str) -> Iterator[tuple[int, int]]:
    for pattern, leading in ((_STREET_THEN_CODE, True), (_CODE_THEN_STREET, False)):
        for m in pattern.finditer(text):
            tokens = list(re.finditer(r"\S+", m.group("street")))[:-1]  # the words before the number
            keep = len(tokens)
            while keep and _address_word(tokens[keep - 1].group()):
                keep -= 1
            if keep and not leading:
                continue  # after the town, the street starts at the comma
            words = tokens[keep:]
            if not words or not any(_street_word(w.group()) for w in words):
                continue
            start = m.start("street") + words[0].start() if leading else m.start()
            yield start, _tail_end(text, m.end(), coded=True)


def _house_number_stop(text: str, end: int) -> bool:
    return text[end : end + 2] in (".", ".\n") and bool(re.search(r"(?<![\d/-])\d{1,3}\Z", text[max(0, end - 5) : end]))


# -- an address line of any country: comma-separated parts, each a few words of a place -------

#: the words of a place's parts that the street words of Faker's locales lack: districts,
#: wards, blocks and flats, and their abbreviations (Turkish "Mah.", "Cad.", "No:"; Mexican
#: "Col.", "C.P."; Peruvian "Jr."; Philippine "Brgy.", "Blk", "Lot"; Indian "Salai", "Nagar";
#: Vietnamese "Phường", "Quận"; Indonesian "Kel.", "Kec."; Hebrew street and flat)
_PART_WORDS = frozenset((
    "mah", "mahalle", "mahallesi", "cad", "cadde", "caddesi", "sok", "sokak", "sokağı", "sk", "bulvarı", "blv",
    "daire", "kat", "col", "colonia", "int", "interior", "c.p", "cp", "cep", "plz", "jr", "jirón", "brgy",
    "barangay", "blk", "lot", "purok", "sitio", "salai", "nagar", "marg", "colony", "sector", "layout", "phường",
    "quận", "huyện", "xã", "tp", "thành", "kel", "kec", "kelurahan", "kecamatan", "rt", "rw", "apto", "depto",
    "dpto", "piso", "andar", "bloco", "lote", "kod", "ul", "flat", "apt", "unit", "suite", "floor",
    "block", "building", "tower", "residency", "apartments", "רחוב", "דירה", "שדרות", "קומה", "כניסה",
    # flats, doors and floors of Belgium, Scandinavia, Hungary, Portugal, France and Morocco ("bte 14",
    # "lgh 1203", "2. tv.", "3. em.", "2.º Dto", "app. 6", "Imm. 4"); a named residence
    "bte", "boîte", "lgh", "tv", "th", "mf", "st", "em", "emelet", "ajtó", "dto", "esq", "app", "appt", "imm",
    "immeuble", "résidence", "residencia", "bd", "co", "county", "bóthar", "sráid",
))
#: a house, flat or block number, or a postcode ("58/9", "1187", "3B", "No:12", "#4", "04544-000")
_PART_NUMBER = re.compile(r"(?:No[:.]?|N[º°o]\.?|#)?\d{1,7}[A-Za-z]?(?:[/-]\d{1,5}[A-Za-z]?)?[:,.]?"
                          r"|\d{2,3}[ ]\d{2,3}|[A-Z]{1,2}\d[A-Z\d]?|\d[A-Z]{2}|\d{1,3}\.?[º°ª]"
                          # an alphanumeric postcode's part (Irish "X2P7", Argentine "C1425BGH")
                          r"|(?=[A-Z\d]*[A-Z])(?=[A-Z\d]*\d)[A-Z\d]{3,8}"
                          # a Korean, Japanese or Chinese building, flat or floor number ("1204동", "803호")
                          r"|\d{1,5}(?:동|호|층|번지|号|室|楼|階)")
_PART_SPLIT = re.compile(r",(?!\d)[ \t]*|[ \t]+[-–—][ \t]+|[ \t]*/[ \t]*(?=[^\W\d_])")
_CASELESS = re.compile(r"[\u0590-\u06ff\u0750-\u077f\u0e00-\u0e7f\u0900-\u0dff가-힣]")
#: a Korean address's units: province or city, district, road or street, neighbourhood
_HANGUL_PLACE = re.compile(r"[가-힣]+(?:특별시|광역시|시|도|구|군|로|길|동|읍|면|리)")
#: a postcode of the shapes a later part of an address holds
_LATER_CODE = re.compile(r"\d{4,7}|\d{2,3}[ ]\d{2,3}|\b[A-Z]\d{2} ?[A-Z\d]{4}\b|\b[A-Z]\d[A-Z] ?\d[A-Z]\d\b"
                         r"|\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b|\b[A-Z]\d{4}[A-Z]{3}\b")
#: what an address line may follow on its line: the start, a colon, or the words for an address
_LINE_HEAD = re.compile(r"(?:^|\n|:[ \t]+|\b(?:at|to|en|em|à|a|na|ke|sa|ở|tại)[ \t]+)\Z")
_SENTENCE_WORD = re.compile(r"[^\W\d_]+")
#: the street words written in lower case before a street's name in Romance languages
_LOWER_STREET = frozenset(("rue", "avenue", "boulevard", "chemin", "allée", "impasse", "quai", "route", "calle",
                           "avenida", "via", "viale", "piazza", "corso", "strada", "rua", "travessa", "largo",
                           "carrer"))


def _abbreviated(before: str, stop: str) -> bool:
    """The word before a full stop or a colon is an abbreviation or a unit's word ("Mah.", "Jr.",
    "No:", "D:"), not a sentence's or a label's end."""
    word = re.search(r"(?<!\w)[^\W\d_]+\Z", before)
    if word is None:
        return False
    key = word.group().lower()
    if stop == ":":
        return len(key) <= 2 or key in _PART_WORDS
    if key in _PART_WORDS or key in street_words():
        return stop == "."
    # a region's or a district's capitals close a sentence ("20121 Milano MI. Il mio…", "København N.
    # Mit…"); initials with stops ("C.P.", "N.L.") and short words ("Dr.", "Jal.", "tv.") do not
    capitals = word.group().isupper() and not before[: word.start()].endswith(".")
    return stop == "." and len(key) <= 3 and not capitals


def _part_words(part: str) -> list[str]:
    return [w for w in re.split(r"[ \t]+", part.strip()) if w]


def _place_token(word: str) -> str | None:
    """What a token of an address part is: "number", "street" (a street, unit or district word of
    some locale), "name" (a capitalised or caseless-script word, or a particle), or None (a word
    an address does not hold: a lower-case everyday word, an e-mail, a sign)."""
    bare = word.strip(".,:;!?()\"“”«»")
    if not bare:
        return None
    if _HANGUL_PLACE.fullmatch(bare):
        return "street"
    if _PART_NUMBER.fullmatch(word) or _PART_NUMBER.fullmatch(bare):
        # a code of letters and digits may be a postcode's part, never a house's number
        return "code" if re.fullmatch(r"[A-Z]{2,}\d[A-Z\d]*|[A-Z\d]*\d[A-Z]{2,}[A-Z\d]*|[A-Z]\d[A-Z]\d[A-Z\d]*", bare) \
            else "number"
    key = bare.lower()
    if key in _PART_WORDS or re.fullmatch(r"(?:No|N[º°o]|D)[.:]", word):
        return "street"
    # a street word of Faker's locales written as one (capitalised, abbreviated or in a script
    # with no capitals): its lists hold everyday English words too ("of", "end", "block")
    if key in street_words() and (bare[0].isupper() or word.endswith(".") or not bare.isascii()):
        return "street"
    if bare[0].isupper() and _street_word(bare) and key not in street_words():
        return "street"  # a street word glued on: "Hämeenkatu", "Nørrebrogade", "Vasagatan"
    if _SAYS_ADDRESS.search(bare) or not re.fullmatch(r"[^\W\d_][^\W\d_'’.-]*(?:['’.-][^\W\d_]+)*\.?", bare):
        return None  # a code, an e-mail, a sign: no word of a place
    if _CASELESS.search(bare):
        return "name"
    if (bare[0].isupper() and re.fullmatch(_NOT_PLACE + r"\w[\w'’.-]*", bare)) or key in _PARTICLE:
        return "name"
    if _LOWER_ABBREVIATION.fullmatch(word) and len(bare) <= 3:
        return "street"
    return None


def _place_part(part: str) -> tuple[bool, bool, bool] | None:
    """(holds a number, holds a street word, holds a caseless-script word) for a part whose every
    token an address holds, of at most seven tokens; None for any other part."""
    words = _part_words(part)
    if not words or len(words) > 9:
        return None
    kinds = [_place_token(w) for w in words]
    # a street word in lower case before the street's name ("rue de la Canardière", "via Roma")
    # or after it, before the house number ("Váci utca 12"), when it is no English word ("block 6")
    kinds = ["street" if k is None and ((w in _LOWER_STREET and nxt in ("name", "street")) or (
        nxt == "number" and w.isalpha() and w in street_words() and w not in name_lexicon.ordinary_words()))
             else k for w, k, nxt in zip(words, kinds, [*kinds[1:], None], strict=True)]
    if None in kinds:
        return None
    # a number is a house's only beside a word ("4821-7730" alone is a code)
    numbered = "number" in kinds and ("street" in kinds or "name" in kinds)
    return numbered, "street" in kinds, any(_CASELESS.search(w) for w in words)


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """Address lines in the form of any country: two or more comma- or dash-separated parts of at
    most seven words each, every word capitalised, a number, a particle or a street, unit or
    district word of some locale; one part holds a house number with a name, and the line either
    holds a street word or a postcode part after the street, or starts a line or follows a colon.
    ("Kızılay Mah. Atatürk Bulvarı No: 58/9, 06420 Çankaya/Ankara", "45/12 Nguyễn Đình Chiểu,
    Phường Đa Kao, Quận 1, TP. Hồ Chí Minh", "Vinohradská 1233/48, 120 00 Praha 2")."""
    for line in re.finditer(r"[^\n]+", text):
        body, base = line.group(), line.start()
        # the clauses a line holds: a sentence's full stop ends one (not an abbreviation's)
        cuts = [0]
        for stop in re.finditer(r"[!?;]|[.:](?=[ \t])", body):
            if _abbreviated(body[max(0, stop.start() - 12) : stop.start()], stop.group()):
                continue
            # a floor or flat number's full stop inside an address ("Teréz körút 24. 3. em. 12.",
            # "Nørrebrogade 88, 2. tv.")
            floor = re.search(r"(?<![\d.,])\d{1,3}\Z", body[max(0, stop.start() - 4) : stop.start()])
            if stop.group() == "." and floor and re.match(r"[ \t]+(?:\d{1,3}\.|[^\W\d_]{1,5}\.)", body[stop.end() :]):
                continue
            cuts.append(stop.end())
        cuts.append(len(body))
        for lo, hi in itertools.pairwise(cuts):
            yield from _line_parts(text, body, base, lo, hi)


def _line_parts(text: str, body: str, base: int, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    segment = body[lo:hi]
    bounds: list[tuple[int, int]] = []
    pos = 0
    for sep in _PART_SPLIT.finditer(segment):
        bounds.append((pos, sep.start()))
        pos = sep.end()
    bounds.append((pos, len(segment)))
    parts: list[tuple[int, int, tuple[bool, bool, bool] | None]] = []
    for a, b in bounds:
        piece = segment[a:b]
        a += len(piece) - len(piece.lstrip())
        info = _place_part(segment[a:b].rstrip(" .") or "x")
        if info is None:
            # the place may start inside a clause ("na adresu Vinohradská 1233/48"): its words
            # after the last one no address holds, when they hold a number
            tail = list(re.finditer(r"\S+", segment[a:b]))
            keep = len(tail)
            while keep and _place_token(tail[keep - 1].group()) is not None:
                keep -= 1
            while keep < len(tail) - 1 and tail[keep].group().lower() in _PARTICLE:
                keep += 1  # "moro na Rua Augusta 15": the particle is the sentence's
            if keep < len(tail):
                cut = a + tail[keep].start()
                info = _place_part(segment[cut:b].rstrip(" ."))
                if info is not None and info[0]:
                    parts.append((-1, 0, None))  # the clause before it ends any run
                    a = cut
                else:
                    info = None
            if info is None and parts and parts[-1][2] is not None:
                # the place may end inside a clause ("…, Galway H91 X2P7 which matches"): its
                # words up to the first one no address holds close the run
                head = list(re.finditer(r"\S+", segment[a:b]))
                keep = 0
                while keep < len(head) and _place_token(head[keep].group()) is not None:
                    keep += 1
                    word = head[keep - 1].group()
                    if word.endswith(".") and word.rstrip(".").lower() not in _PART_WORDS and keep < len(head) \
                            and head[keep].group()[:1].isupper():
                        break  # "…, 2200 København N. Mit CPR-nr. er …": a sentence ends there
                if keep:
                    end = a + head[keep - 1].end()
                    info = _place_part(segment[a:end].rstrip(" .?!"))
                    # (only a town with its postcode: "Galway H91 X2P7", not "Kundennummer DE-4471",
                    # nor "2024 Berlin edition")
                    code = _LATER_CODE.search(segment[a:end])
                    if info is not None and code and not re.fullmatch(r"(?:19|20)\d\d", code.group()):
                        parts.extend(((a, end, info), (-1, 0, None)))
                        continue
                    info = None
        parts.append((a, b, info))
    i = 0
    while i < len(parts):
        if parts[i][2] is None:
            i += 1
            continue
        j = i
        while j + 1 < len(parts) and parts[j + 1][2] is not None:
            j += 1
        run = parts[i : j + 1]
        i = j + 1
        # the run starts at its first part with a number or a street word (a name before it is
        # a person's, "Yossi Ben-David, Herzl St 45")
        infos = [p[2] for p in run if p[2] is not None]
        # (a house number alone before the comma starts one too: "2145, rue de la Canardière")
        while infos and not (infos[0][0] or infos[0][1]) and not (
                len(infos) > 1 and re.fullmatch(r"\d{1,5}[A-Za-z]?", segment[run[0][0] : run[0][1]].strip())):
            run, infos = run[1:], infos[1:]
        if len(run) < 2:
            continue
        numbered = [k for k, info in enumerate(infos) if info[0]]
        if not numbered:
            continue
        street = any(info[1] for info in infos)
        caseless = any(info[2] for info in infos)
        later_code = any(_LATER_CODE.search(segment[a:b]) for a, b, _ in run[1:])
        start, end = base + lo + run[0][0], base + lo + run[-1][1]
        before = text[max(0, start - 12) : start]
        at_line_start = start == base + lo and (lo == 0 or bool(_LINE_HEAD.search(before)))
        if caseless and not street:
            continue  # a sentence in a script with no capitals reads like names: only with a street word
        cued = bool(_SAYS_ADDRESS.search(text[max(0, start - 30) : start]))
        if street or (later_code and (at_line_start or cued or len(run) >= 3)):
            # a full stop closing the line is the sentence's, unless it closes an abbreviation ("Jal.")
            if text[end - 1] == "." and not _abbreviated(text[max(0, end - 13) : end - 1], "."):
                end -= 1
            yield start, end


#: the line under an address's last line that goes on with it: its postcode and town ("79098
#: Freiburg im Breisgau", "8001 Zürich", "Leeds LS12 4QD", "San Francisco, CA 94109", a street
#: with no number before them: "Cotton Lane, Preston PR2 9NQ"; a town with its district's number,
#: "101 00 Praha 10"; a Brazilian town, a dash or a slash and its state before the CEP, "Porto Alegre
#: - RS, 90570-080", "São Paulo/SP 01310-100")
_CODE_LINE = re.compile(r"[ \t,]*\n[ \t]*(?:" + _POSTCODE + r"(?:[ \t]+" + _PLACE + r"(?:[ \t]\d{1,2}(?![\w]))?)?"
                        r"(?:[ \t]*/[ \t]*" + _PLACE + r")?"
                        r"|(?:" + _PLACE + r"(?:,[ \t]*|[ \t]+[-–][ \t]+|[ \t]*/[ \t]*)){0,2}" + _PLACE
                        + r",?[ \t]+" + _POSTCODE + r")[ \t,.]*(?=\n|\Z)")
#: a line of an address's ward, district or neighbourhood between its street and its postcode line
#: ("Kel. Pela Mampang, Kec. Mampang Prapatan", "Brgy. San Isidro", "Col. Roma Norte")
_DISTRICT_LINE = re.compile(
    r"[ \t,]*\n[ \t]*(?:(?:Kel|Kec|Kelurahan|Kecamatan|Desa|Kab|Kota|Brgy|Barangay|Col|Colonia|Mah|Mahallesi|Bairro|"
    r"Phường|Quận|Huyện|Xã|District|Dist|Sector|Distrito)\.?[ \t]+" + _PLACE + r"(?:,[ \t]*|[ \t]*(?=\n))){1,3}")
#: and the line under that: a country or a region alone ("Schweiz", "USA")
_PLACE_LINE = re.compile(r"[ \t,]*\n[ \t]*(" + _PLACE + r")[ \t.]*(?=\n|\Z)")


#: a postcode after the word for one ("postcode is OX4 1RE", "the postcode in your profile was M8 8PX",
#: "PLZ 80331", "CEP 01310-100"): a part of the customer's address
_CODE_CUED = re.compile(r"(?i:\b(?:post\s?code|postal\s+code|zip(?:\s?code)?|plz|cep|c[óo]digo\s+postal|code\s+postal|"
                        r"cap|postnummer|postinumero|kod\s+pocztowy)\b)[^\n.!?\d]{0,30}?(?:is|was|:|=|-)?[ \t]*"
                        r"(" + _POSTCODE + r")")


#: a post box alone on its line ("Box 1147", "PO Box 88"), which the postcode line under it makes an address
_BOX_LINE = re.compile(r"(?m)^[ \t]*((?:P\.?[ \t]?O\.?[ \t]?)?Box[ \t]+\d{1,6})[ \t]*(?=\n)")


def _box_lines(text: str) -> Iterator[tuple[int, int]]:
    for m in _BOX_LINE.finditer(text):
        if _CODE_LINE.match(text, m.end(1)):
            yield m.start(1), m.end(1)


#: a line that is only a street's name and its house number, with no street word: Czech and Slovak
#: streets are named so, their numbers the house's and the street's, "Korunní 2569/108", "Na Příkopě
#: 12", and so are others, "Unter den Linden 77"; a flat may follow ("Korunní 2569/108, byt 4")
_NAME_NUMBER_LINE = re.compile(r"(?m)^[ \t]*(?P<street>(?:" + _LOOSE_WORD + r"[ \t]+){1,4}"
                               r"\d{1,5}[a-zA-Z]?(?:/\d{1,5}[a-zA-Z]?)?)(?![\w/])")
#: a postcode whose shape says it is one, with a space, a dash or letters ("101 00", "80-827",
#: "3511 ED", "90570-080", "SW1A 1AA"): four or five digits alone may be a year or an amount
_SHAPED_CODE = re.compile(r"(?<![\w-])(?:\d{3}[ ]\d{2}|\d{2,5}-\d{3,4}|\d{4}[ ]?[A-Z]{2}"
                          r"|[A-Z]{1,2}\d[A-Z\d]?[ ]?\d[A-Z]{2}|[A-Z]\d[A-Z][ ]?\d[A-Z]\d)(?![\w-])")


def _street_lines(text: str) -> Iterator[tuple[int, int]]:
    """A name and a house number alone on their line, under which a postcode line follows: every
    word one a street's name holds (capitalised, a particle, a street word; no acronym among
    other words, "Ticket ABC 45"), one of them no everyday English word ("Version 2\n…", "Room
    12\n…"), and the postcode of a country's shape or, when it is no year, the town one of Faker's
    places ("10117 Berlin", not "2024 Berlin")."""
    for m in _NAME_NUMBER_LINE.finditer(text):
        words = m.group("street").split()[:-1]
        if not words[0][0].isupper() or not all(_address_word(w) for w in words):
            continue
        if any(len(w) > 1 and w.isupper() for w in words) and not all(w.isupper() for w in words):
            continue
        if all(name_lexicon.key(w) in name_lexicon.ordinary_words() and not _street_word(w) for w in words):
            continue
        end = _tail_end(text, m.end("street"))
        below = _CODE_LINE.match(text, end)
        if below is None:
            continue
        line = below.group().strip(" \t,.\n")
        town = re.sub(r"[\d\W_]+", " ", line).strip().split(" ")[0] if line else ""
        if _SHAPED_CODE.search(line) or (name_lexicon.key(town) in name_lexicon.place_names()
                                         and not re.match(r"(?:19|20)\d\d(?!\d)", line)):
            yield m.start("street"), end


#: a postcode whose shape with its space names its country alone, British, Irish or Canadian
#: ("BT9 6AD", "P31 FX27", "K1A 0B1"), and the towns, county or island before it ("Ballincollig, Co.
#: Cork P31 FX27", "Stornoway, Isle of Lewis HS1 2DQ", "Dublin 7, D07 N2X4")
_FULL_CODE = (r"(?:[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}|(?:[AC-FHKNPRTV-Y]\d{2}|D6W)[ ](?=[0-9A-Z]{0,3}[A-Z])"
              r"[0-9AC-FHKNPRTV-Y]{4}|[A-Z]\d[A-Z][ ]\d[A-Z]\d)(?![\w-])")
_TOWN_LINK = r"(?:of|upon|on|na|an|y|yr|le|la|de|sur|am|im|the)"
_TOWN = (_NOT_PLACE + _PLACE_WORD + r"\.?(?:[ ](?:" + _TOWN_LINK + r"[ ])?" + _PLACE_WORD + r"\.?){0,3}")
_CODED = re.compile(r"(?<![\w-])(?:(?:" + _TOWN + r"(?:[ \t]\d{1,2})?,[ \t]*){0,3}(?:" + _TOWN + r",?[ \t]+)?)?"
                    + _FULL_CODE)
#: a line of a postcode and its town that an address block ends with, by a postcode of some
#: country's shape ("903 26 Umeå", "0103 Oslo", "34346 Hann. Münden"), or of a US state
_TOWN_CODE_LINE = re.compile(r"(?m)^[ \t]*(?:(?P<code>" + _POSTCODE + r")[ \t]+(?P<town>" + _TOWN + r")"
                             r"(?:[ \t]\d{1,2})?"
                             # (one word a step, so that a line of capitalised words is read once)
                             r"|(?:" + _NOT_PLACE + _PLACE_WORD + r"\.?,?[ \t]+(?:" + _TOWN_LINK + r"[ \t]+)?){1,8}"
                             + _STRONG_POSTCODE + r")[ \t,.]*$")
#: the words of an address line above its postcode line besides capitalised ones: particles of
#: Celtic and other languages' street names ("Bóthar na Trá 14", "19 Heol y Nant", "4 Sràid na
#: h-Eaglaise"), a floor's short word ("Storgatan 14 B, 3 tr")
_LINE_PARTICLES = _PARTICLE | frozenset(("y", "yr", "a'", "nan", "of", "the", "on", "upon", "st", "tr", "lgh",
                                         "bis", "ter", "flat", "apt", "unit", "no", "nr"))
_HOUSE = re.compile(r"(?:No\.?|N[º°o]\.?|#)?\d{1,5}[A-Za-z]?(?:[/-]\d{1,5}[A-Za-z]?)?|\d[A-Z]\d|[A-Z]\d{1,3}")


def _address_like(line: str) -> bool:
    """A line an address block's street takes: two to eight words, a house or flat number among
    them, every other word capitalised (no greeting nor pronoun), a particle or a unit's word, and
    no colon nor question."""
    words = [w.strip(",.") for w in line.split()]
    words = [w for w in words if w]
    if not 1 < len(words) <= 8 or ":" in line or line.rstrip().endswith(("?", "!")):
        return False
    if not any(_HOUSE.fullmatch(w) for w in words):
        return False
    named = [w for w in words if not _HOUSE.fullmatch(w) and len(w) > 1]
    # (no acronym among other words, "Ticket ABC 45", nor only everyday English words, "Room 12")
    if any(w.isupper() for w in named) and not all(w.isupper() for w in named):
        return False
    if named and all(name_lexicon.key(w) in name_lexicon.ordinary_words() and not _street_word(w) for w in named):
        return False
    return all(_HOUSE.fullmatch(w) or w.lower() in _LINE_PARTICLES or re.fullmatch(r"h-[A-ZÀ-Þ]\w+", w)
               or (w[0].isupper() and re.fullmatch(_NOT_PLACE + r"[^\W\d_]+(?:['’-][^\W\d_]+)*", w)) for w in words)


def _coded(text: str) -> Iterator[tuple[int, int]]:
    for m in _CODED.finditer(text):
        yield m.start(), m.end()


_LABEL = re.compile(r"[ \t]*(?:[^\W\d_][\w.-]*[ \t]+){0,2}[^\W\d_][\w.-]*:[ \t]+|[ \t]*\d{1,2}[.)][ \t]+(?=\d)")


def _blocks(text: str) -> Iterator[tuple[int, int]]:
    """An address block read upwards from its postcode line: the one or two lines above that an
    address's street takes (after a short label and its colon, "Postal: Storgatan 14 B, 3 tr"),
    with the postcode line; a postcode of a country's shape or a town one of Faker's places, else a
    street or post box word above it (never a year: "Version 2\n2024 Berlin")."""
    for m in _TOWN_CODE_LINE.finditer(text):
        code = m.group("code")
        if code is not None and re.fullmatch(r"(?:19|20)\d\d", code):
            continue
        known = code is None or bool(_SHAPED_CODE.fullmatch(code)) or (
            name_lexicon.key(m.group("town").split()[0].rstrip(".")) in name_lexicon.place_names())
        start = m.start()
        for _ in range(2):
            above = text.rfind("\n", 0, max(0, start - 1))
            line = text[above + 1 : start - 1] if start else ""
            # (after a short label and its colon, or a list's number: "8. 27 ASHDOWN ROAD")
            label = _LABEL.match(line)
            street = line[label.end() :] if label else line
            if not street.strip() or not _address_like(street):
                break
            if not known and not (re.search(_POST_BOX_WORD, street) or any(
                    _street_word(w) for w in street.split() if w[0].isupper())):
                break
            known = True
            start = above + 1 + len(line) - len(street.lstrip())
            if label:
                break
        if start < m.start():
            yield start, m.end()


def _cued_codes(text: str) -> Iterator[tuple[int, int]]:
    for m in _CODE_CUED.finditer(text):
        yield m.start(1), m.end(1)


#: the line under a Japanese or Chinese address that names its building, with its floor or room
#: ("新大阪セントラルビル 9階", "渋谷スクエアA 12F", "金茂大厦 15楼1502室", "9階" alone): kanji, katakana,
#: Latin letters and digits closed by a building's word or a floor's or room's number; no hiragana,
#: which a sentence's particles are written in ("受付は9階です" is a sentence), nor a Chinese
#: sentence's pronouns and particles ("我在5楼")
_FLOOR = rf"{_NUM}{{1,3}}(?:階|[FＦ]|楼|层|層|号室|号|室)(?:[ \t　]*{_NUM}{{1,4}}(?:号室|号|室))?"
_BUILDING_LINE = re.compile(
    r"[ \t]*\n[ \t　]*(?![^\n]*[我你您他她们是的了吗请在])"
    r"[\u30a0-\u30ff\u4e00-\u9fffA-Za-zＡ-Ｚａ-ｚ0-9０-９・&＆ 　-]{0,30}?"
    r"(?:(?:ビル(?:ディング)?|タワー|マンション|ハイツ|コーポ|レジデンス|プラザ|センター|会館|[館棟荘]|大厦|大楼|广场)"
    r"(?:[ \t　]*" + _FLOOR + r")?|" + _FLOOR + r")[ \t　]*(?=\n|\Z)"
)


def _lines_below(text: str, end: int) -> int:
    """Where an address that ends a line at ``end`` ends with the lines under it that go on
    with it: a Japanese or Chinese address's building line, a postcode line, then a known place alone."""
    if _CJK.search(text[max(0, end - 16) : end]) and (building := _BUILDING_LINE.match(text, end)):
        end = building.end()
    coded = _CODE_LINE.match(text, end)
    if coded is None and (district := _DISTRICT_LINE.match(text, end)) is not None:
        coded = _CODE_LINE.match(text, district.end())
    if coded is None:
        return end
    end = coded.end()
    place = _PLACE_LINE.match(text, end)
    if place is not None and (name_lexicon.key(place.group(1)) in name_lexicon.place_names()
                              or place.group(1) in ("USA", "UK", "UAE")):
        end = place.end()
    return end


def find(text: str) -> list[tuple[int, int]]:
    """Spans of street addresses in ``text``, merged where they overlap, in text order; an
    address ending its line takes the postcode line under it."""
    found: list[tuple[int, int]] = []
    for pattern in (_STREET, _BY_POSTCODE, _CJK_ADDRESS):
        for m in pattern.finditer(text):
            end = m.end()
            found.append((m.start(), _tail_end(text, m.end())))
    found.extend(_introduced(text))
    found.extend(_cued_codes(text))
    found.extend(_coded(text))
    found.extend(_blocks(text))
    found.extend(_box_lines(text))
    found.extend(_street_lines(text))
    found.extend(_loose(text))
    found.extend(_lines(text))
    # "c/o Weber, Lindenweg 7": the person the post goes through is part of the address
    found = [(_head_start(text, start), end) for start, end in found]
    # a house number closing its line takes its full stop ("Kárász utca 9."): Hungarian and
    # Slavic addresses write the number so, and the stop is no sentence's
    found = [(start, end + 1 if _house_number_stop(text, end) else end) for start, end in found]
    found = [(start, _lines_below(text, end)) for start, end in found]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
