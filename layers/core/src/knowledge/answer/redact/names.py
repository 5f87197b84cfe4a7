"""People's names found by the words around them: a cue ("my name is", "account holder", a
greeting, "Mr", a sign-off), initials before a surname, a mailbox's display name; and the rules
find_spans applies to every name span: a title that goes with the name, names joined by "and",
names that a pronoun takes up, Thai names after their cue, and a name that names a thing (a
company, a product, a job title) is none.

A name is found where the text says it is one ("my name is", "account holder", a greeting,
"Mr", a sign-off): capitalised words after such a cue, never a word of the stop list."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence

from .. import name_lexicon
from .spans import Span
from .words import (
    _BRANDS,
    _COMMON_WORD_NAMES,
    _COMPANY_WORDS,
    _ENGLISH_GLUE,
    _INNER_CAPITAL,
    _NAME_VERBS,
    _NAME_WORD,
    _NOT_NAMES,
    _PARTICLE,
    _PLACE_NAMES,
    _TITLES,
    _UPPER,
    _company_after,
    _given,
    _legal_form,
    _ordinary,
    _ordinary_form,
    _plain_word,
    _surname,
)

_NAME_SEQ = (rf"{_NAME_WORD}(?:[ \t]+(?:(?:{_PARTICLE}[ \t]+){{1,2}}|[{_UPPER}]\.?[ \t]+)?{_NAME_WORD}){{0,3}}"
             r"(?![\w@])")
_NAME_CUES = re.compile(
    r"(?:(?i:\b(?:my\s+name\s+is|name\s+is|full\s+name|name|names|i\s+am|i'm|this\s+is|here\s+is|it's|"
    r"(?:sur|last\s+|family\s+|first\s+|given\s+|maiden\s+|middle\s+|legal\s+)name|"
    r"account\s+holder|card\s*holder|holder|beneficiary|recipient|payee|signed|attn|attention|"
    r"calls?\s+me|called\s+me|known\s+as|go(?:es)?\s+by|nickname\s+is|prefers?\s+to\s+be\s+called|"
    r"name\s+on\s+(?:the\s+|my\s+)?(?:card|account|passport|id|licen[cs]e)(?:\s+is)?|"
    r"hier\s+ist|ich\s+bin|ich\s+heiße|ich\s+heisse|mein\s+name\s+ist|kontoinhaber(?:in)?|je\s+suis|je\s+m'appelle|"
    r"mon\s+nom\s+est|titulaire|me\s+llamo|mi\s+nombre\s+es|soy|sou(?:\s+[ao](?=\s))?|el\s+titular\s+es|titular\s+es|titular|sono|"
    r"mi\s+chiamo|il\s+mio\s+nome\s+è|intestatario|meu\s+nome\s+é|me\s+chamo|mijn\s+naam\s+is|ik\s+ben|ik\s+heet|"
    r"nazywam\s+si[eę]|mam\s+na\s+imi[eę]|jmenuji\s+se|jag\s+heter|mitt\s+namn\s+är|jeg\s+heter|mit\s+navn\s+er|"
    r"nama\s+saya|benim\s+adım|ben|ad[ıi]m|меня\s+зовут|мене\s+звати|я|είμαι(?:\s+[οη])?|με\s+λένε|"
    r"tôi\s+là|tên\s+tôi\s+là|tôi\s+tên\s+là|mình\s+là|em\s+là|saya|ako\s+(?:po\s+)?si|"
    r"ang\s+pangalan\s+ko\s+(?:po\s+)?ay|"
    r"jeg\s+hedder|jeg\s+er|mitt\s+navn\s+er|nimeni\s+on|olen|"
    r"ονομάζομαι|λέγομαι|ismi|esmi|ismee|"
    # the name's labels and "in the name of" in more languages (Indonesian, Spanish, Portuguese,
    # French, Turkish, Polish, Czech, Romanian, Vietnamese, Tagalog, Swahili)
    r"atas\s+nama|nama\s+lengkap|pemilik\s+rekening|a\s+nombre\s+de|nombre\s+completo|em\s+nome\s+de|"
    r"nome\s+completo|titular\s+da\s+conta|au\s+nom\s+de|nom\s+complet|ismim|ad\s+soyad[ıi]?|hesap\s+sahibi|"
    r"imi[eę]\s+i\s+nazwisko|na\s+nazwisko|jméno\s+a\s+příjmení|jméno|příjmení|na\s+jméno|mă\s+numesc|"
    r"numele\s+meu\s+(?:e|este)|nume(?:\s+complet)?|họ\s+(?:và\s+)?tên|buong\s+pangalan|pangalan|"
    r"jina\s+langu\s+ni|naitwa|"
    # Afrikaans, Yoruba, Hausa, Igbo, Zulu, romanised Hindi and Urdu
    r"my\s+naam\s+is|ek\s+is|or[úu]k[ọo]\s+mi\s+ni|sunana|aha\s+m\s+bụ|igama\s+lami\s+ngu|"
    r"mera\s+naam(?:\s+hai)?|mera\s+name(?:\s+hai)?)"
    r"(?:\s+(?:is|was|used\s+to\s+be))?(?:\s+(?:spelled|spelt|written|actually))?)\s*[:,-]?\s+"
    # "ana" (Arabic in Latin letters: "I am") in lower case only: "Ana" is a name
    r"|\bana[ \t]+"
    # Persian in Latin letters: "man … hastam" ("I am …")
    rf"|\b(?i:man)[ \t]+(?=(?:{_NAME_WORD}[ \t]+){{1,3}}(?i:hastam|hastim)\b)"
    r"|(?:^|(?<=\n)|(?<=[.!?]\s)|(?<=[.!?]))(?i:best\s+regards|kind\s+regards|warm\s+regards|best\s+wishes|many\s+thanks|"
    r"thanks\s+again|yours\s+sincerely|sincerely|mit\s+freundlichen\s+grüßen|viele\s+grüße|liebe\s+grüße|grüße|"
    r"cordialement|bien\s+à\s+vous|saludos\s+cordiales|un\s+saludo|saludos|atentamente|cordiali\s+saluti|"
    r"distinti\s+saluti|atenciosamente|abraços|cumprimentos|pozdrawiam|met\s+vriendelijke\s+groet|groetjes|groeten|groet|"
    r"med\s+vänlig\s+hälsning|hälsningar|med\s+venlig\s+hilsen|mvh|s\s+pozdravem|saygılarımla|с\s+уважением)"
    r"\s*,?\s+"
    # greetings and thanks: the name follows on the same line ("Hello,\nChrome crashes" is no name)
    r"|(?:^|(?<=\n)|(?<=[.!?]\s)|(?<=[.!?]))(?i:good\s+morning|good\s+afternoon|good\s+evening|greetings|"
    r"hi|hello|hey|dear|thanks|thank\s+you|cheers|regards|best|hiya|howdy|heya|yo|xin\s+chào|chào|selam|salam|"
    r"cześć|tere|hoi|bună|marhaba|ahlan|assalamu\s+alaikum|salaam|halo|"
    r"bonjour|bonsoir|salut|hola|buenos\s+días|buenas\s+tardes|buenas|hallo|guten\s+(?:tag|morgen|abend)|"
    r"sehr\s+geehrte[rs]?|liebe[rs]?|grüezi|servus|moin|ciao|buongiorno|buonasera|gentile|caro|cara|olá|ola|"
    r"oi|querid[oa]|estimad[oa]|prezad[oa]|beste|geachte|hej|hei|moi|szia|ahoj|dzień\s+dobry|witam|"
    r"merhaba|привет|здравствуйте|добрый\s+день|уважаем(?:ый|ая)|"
    # the greetings and "dear" of more languages (Turkish, Czech, Slovak, Polish, Romanian, Hungarian,
    # Croatian and Serbian, Indonesian, Tagalog, Swahili)
    r"sayın|vážen[ýá]|dobrý\s+de[nň]|szanown[ya]|stimat[eă]|bună\s+ziua|kedves|poštovan[ia]|"
    r"selamat\s+(?:pagi|siang|sore|malam)|magandang\s+(?:umaga|hapon|gabi)|habari|kumusta|kamusta|"
    r"sawubona|sanibonani|dumela|molo|jambo|namaste|namaskar|vanakkam|"
    r"danke|merci|gracias|grazie|obrigad[oa]|bedankt|tack|takk|dzięki|dziękuję|spasibo|спасибо|"
    r"thx|thnx|thanx|tks|ty|tnx)[ \t]*,?[ \t]+"
    r"|\b(?:Mr|Mrs|Ms|Miss|Mx|Mister|Dr|Dra|Doctor|Prof|Professor|Sir|Herr|Hr|Frau|Fr|Monsieur|Madame|Mme|Mlle|M\.|"
    r"Señor|Señora|Señorita|Srta|Sr|Sra|Signor|Signora|Sig|Sig\.ra|Dott|Pan|Pani|Panie|Panu|Pana|Meneer|Mevrouw|"
    r"Dhr|Mevr|"
    r"Senhor|Senhora|Г-н|Г-жа|господин|госпожа|Κύριε|Κύριος|Κυρία|κύριε|κύριος|κυρία|κ)"
    r"\.?\s+"
    # Vietnamese titles are words, never abbreviated: a stop after one ends the sentence ("Cảm ơn
    # chị. Sau khi …"); so are the titles of Czech, Slovak, Romanian and Ukrainian, which take the
    # vocative after them ("pane Nováku", "domnule Popescu", "пане Тарасе"; "doamnă. Contul …")
    r"|\b(?:chị|anh|ông|bà|chú|bạn|Chị|Anh|Ông|Bà|Chú|Bạn|[Pp]ane|[Pp]aní|[Ss]lečno|[Dd]omnule|[Dd]omnul|[Dd]oamnă|"
    r"[Dd]oamna|[Dd]omnișoară|[Пп]ане|[Пп]ані)[ \t]+)"
    rf"({_NAME_SEQ})"
    # a title and a surname that opens on its particle ("mevrouw de Jong", "Herr von Trapp")
    r"|\b(?i:herr|frau|monsieur|madame|señor|señora|signor|signora|senhor|senhora|meneer|mevrouw|heer|mr|mrs|ms|dr)\.?"
    rf"[ \t]+((?:(?i:{_PARTICLE})[ \t]+){{1,2}}{_NAME_WORD})"
)
#: a turn that ends on two to four capitalised words after a full stop: a signature
_SIGNATURE = re.compile(
    rf"(?:(?<=[.!?])|(?<=[.!?]\s))\s*({_NAME_WORD}(?:[ \t]+(?:{_PARTICLE}[ \t]+)?{_NAME_WORD}){{1,3}})\s*$")

#: titles written after the name ("Emre Bey", "Ayşe Hanım", "Tanaka San")
_AFTER_TITLES = frozenset(("bey", "hanım", "hanim", "efendi", "san", "sama", "kun", "chan", "ji", "sahib", "saheb"))


def _is_name_word(word: str) -> bool:
    return word.lower().strip("'’") not in _NOT_NAMES


def _next_is_name(word: str) -> bool:
    """A capitalised word that goes on a name: a listed name or no word of the dictionary."""
    word = word.rstrip(".,")
    return (_is_name_word(word) and word.lower() not in _ENGLISH_GLUE
            and (_given(word) or _surname(word) or not _ordinary(word)))


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
            kept: list[re.Match[str]] = []
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
                # a listed given name that is also a small word, between a given name and a name
                # ("Mehmet Can Yıldırım"), where a sentence would go on in lower case ("John Can
                # you …") and a company's name opens on no given name ("SARL Les Ateliers")
                inside = inside or (i > 0 and i + 1 < len(words) and word[:1].isupper() and _given(word)
                                    and _given(words[i - 1].group()) and _next_is_name(words[i + 1].group()))
                # (a short listed name in capitals before another is a name's: "Name on card LI JING")
                nxt = words[i + 1].group().rstrip(".,") if i + 1 < len(words) else ""
                printed = (nxt.isupper() and (_given(word) or _surname(word)) and (_given(nxt) or _surname(nxt)))
                if (not _is_name_word(word) and not inside) or (i == 0 and word.isupper() and len(word) <= 3
                                                                 and not printed):
                    break  # a stop word, or an acronym ("building name UK")
                if (kept and word.isupper() and 2 <= len(word) <= 5 and not any(k.group().isupper() for k in kept)
                        and not _surname(word) and not _given(word)):
                    break  # an acronym after a name written in small letters ("Wong Ka Yan HKID Y903114")
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


#: an agent's own first name closing their message on the line of a sign-off ("… tres meses.
#: Saludos, Rodrigo", "… pracovní dny. Petra"): the support desk's staff, no customer's data; a
#: name after a comma ("We will call you, Derek.") or "thanks" ("thanks Rita") is the customer's
_AGENT_SIGN_OFF = re.compile(
    # (or a dash: "… a full, flat photo. - Rae"; or on a line of its own: "…\n— Mei", "…\nKind regards, Sven")
    r"(?:(?<=[.!?])|(?<=[.!?][ \t])|(?<=\n)|(?<=\n[ \t]))(?:[-–—~]+[ \t]*)?"
    r"(?:(?i:kind\s+regards|best\s+regards|warm\s+regards|regards|best|cheers|br|"
    r"saludos|un\s+saludo|atentamente|pozdrawiam|pozdrowienia|s\s+pozdravem|cu\s+stimă|abraços?|atenciosamente|"
    r"cordialement|grüße|groeten|mvh|hälsningar|iyi\s+günler|saygılarımla|salam|salamat|terima\s+kasih|"
    # the closings of two words or more ("Viele Grüße, Jonas", "Bonne journée, Camille")
    r"(?:viele|liebe|beste|freundliche)\s+grüße|mit\s+freundlichen\s+grüßen|bonne\s+(?:journée|soirée)|"
    r"belle\s+journée|bien\s+à\s+vous|saludos\s+cordiales|cordiali\s+saluti|distinti\s+saluti|"
    r"(?:met\s+)?vriendelijke\s+groet(?:en)?|med\s+vänlig\s+hälsning|venlig\s+hilsen|"
    r"med\s+vennlig\s+hilsen|(?:ystävällisin\s+)?terveisin)"
    rf",?[ \t]+)?({_NAME_WORD})[ \t]*[.!]?[ \t]*"
    # (a line or two of the desk's name or the agent's role under it: "Lukas\nInstitutional Desk")
    r"(?:\n[ \t]*[A-Z][\w&'’-]*(?:[ \t]+(?:[|&,–-][ \t]+)?[A-Za-z][\w&'’-]*){0,4}[ \t]*){0,2}\Z")


#: an agent introducing themself as their message opens ("Aoife here, picking up from …")
_AGENT_HERE = re.compile(rf"\A[ \t]*(?:(?i:hi|hello|hey)[,!]?[ \t]+)?({_NAME_WORD})[ \t]+here\b")


def _agent_signature(text: str) -> Span | None:
    """An agent's own first name signing off their message (``_AGENT_SIGN_OFF``): after a
    sign-off word any capitalised word, alone after the last sentence a listed given name; or,
    with no sign-off, the name they open their message with ("Aoife here picking up …")."""
    m = _AGENT_SIGN_OFF.search(text)
    if m is None and (here := _AGENT_HERE.match(text)) is not None:
        return Span(here.start(1), here.end(1), "person_name")
    if m is None or not ((m.start(1) > 0 and text[: m.start(1)].rstrip(" \t,")[-1:] not in ".!?")
                         or _given(m.group(1))):
        return None
    return Span(m.start(1), m.end(1), "person_name")


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
                word.lower() not in (*_NAME_TITLES, *_TITLES) and not _GREETING_WORD.fullmatch(word)
                and word.lower() not in _NOT_NAMES):
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
#: (and "คุณ" right after a polite particle: "สวัสดีครับคุณพิมพ์ชนก")
_THAI_NAME = re.compile(r"(?:(?<=ครับ)คุณ|(?<=ค่ะ)คุณ|(?<=คะ)คุณ|"
                        r"(?<![\u0E00-\u0E7F])(?:ชื่อ[\u0E00-\u0E7F]{0,16}?(?:คือ|:|ว่า)|คุณ|นางสาว|นาย|นาง|"
                        # "I" after a greeting, a space and the name ("สวัสดีครับ ผม ธนากร วงศ์สวัสดิ์")
                        r"สวัสดี(?:ครับ|ค่ะ|คะ|จ้า)?[ \t]+(?:ผม|ดิฉัน|ฉัน|หนู|กระผม)[ \t](?=[ \t]*[\u0E01-\u0E4E]+[ \t])))"
                        r"[ \t]*([\u0E01-\u0E4E]{2,20}(?:[ \t][\u0E01-\u0E4E]{2,24})?)")
#: the small words of a Thai sentence ("can", "at", "already", "not", "of", "and", "or", "give"), which no
#: family name holds: the word after a given name that has one goes on the sentence ("คุณธนากร ดาวน์โหลดได้ที่")
_THAI_SENTENCE_WORDS = ("ได้", "ที่", "แล้ว", "ครับ", "ค่ะ", "ไม่", "ของ", "และ", "หรือ", "ให้", "ว่า", "ด้วย",
                        "เลย", "กำลัง", "อยู่", "ต้องการ", "อยาก", "โหลด")
#: the words that open what a writer does after "I" ("want", "forgot", "have", "will", "can't"): no name
_THAI_VERBS = ("ต้องการ", "อยาก", "ลืม", "มี", "ไม่", "ได้", "จะ", "ทำ", "เป็น", "สมัคร", "ส่ง", "โอน", "ถอน",
               "ฝาก", "ซื้อ", "ขาย", "เปิด", "ใช้", "ยืนยัน", "ติด", "เข้า", "รอ", "ขอ", "สงสัย", "พบ", "เจอ")


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
        given, _, family = m.group(1).partition(" ")
        if given.startswith(_THAI_VERBS):
            continue  # "สวัสดีครับ ผม ต้องการ …": what the writer wants, no name
        end = m.end(1)
        if family and any(w in family for w in _THAI_SENTENCE_WORDS):
            end = m.start(1) + len(given)
        yield Span(m.start(1), end, "person_name")


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


_MONTH_DAY = re.compile(r"(?:Jan|January|Feb|February|Mar|March|Apr|April|May|Jun|June|Jul|July|Aug|August|Sep|Sept|"
                        r"September|Oct|October|Nov|November|Dec|December)\.?[ \t]+\d{1,2}(?:st|nd|rd|th)?"
                        r"(?![\d:.,]\d)\b")


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
    if len(words) == 1 and _MONTH_DAY.match(text, span.start):
        return True  # a month before its day ("on Jan 4", "May 12th")
    keys = [name_lexicon.key(w) for w in words]
    if any(k in _BRANDS or k in name_lexicon.coin_names() for k in keys):
        return True  # a brand, a coin ("Cardano", "Tezos")
    if len(words) >= 2 and all(w.isupper() for w in words) and not all(_ordinary_form(w) for w in words):
        return False  # a name printed in capitals (``_capital_names`` weighed its words): "use "ZEWDITU GEBREMEDHIN""
    unlisted = [not (_given(w) or _surname(w)) for w in words]
    if all(unlisted) and all((known is not None and k in known) or _INNER_CAPITAL.match(w)
                             for w, k in zip(words, keys, strict=True)):
        return True
    # (a listed given name and a family name after the article are a person: Portuguese and
    # Catalan write one before names, "sou a Fernanda Oliveira e …")
    if _DETERMINER.search(text, max(0, span.start - 8), span.start) and re.match(r"[ \t]+[a-z]", text[span.end :]) \
            and not (len(words) >= 2 and _given(words[0]) and _surname(words[-1])):
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


def _adjacent_names(taken: Sequence[Span], text: str) -> list[Span]:
    """``taken`` with the names that stand a space apart read as one ("Hi Ka Yan": the two
    words of "Wong Ka Yan" found on their own), or a family name's particles apart ("Bas" and
    "Meulen" of "Bas van der Meulen"): one name, not two with a word of it between."""
    out: list[Span] = []
    for span in sorted(taken, key=lambda s: s.start):
        last = out[-1] if out else None
        if (last is not None and last.kind == span.kind == "person_name" and span.start > last.end
                and (text[last.end : span.start] in (" ", "\u00a0")
                     or re.fullmatch(rf"[ \t]+(?:(?i:{_PARTICLE})[ \t]+){{1,2}}", text[last.end : span.start]))):
            out[-1] = Span(last.start, span.end, "person_name")
        else:
            out.append(span)
    return out


#: the endings of family names in the languages tickets come in, which a dictionary may list as
#: a rare word too ("Castellano", "Moretti", "Kowalski", "Petrova", "Popescu", "Petrosyan")
_SURNAME_ENDING = re.compile(r"(?i)(?:ez|ano|ini|elli|etti|ski|ska|cki|cka|ova|eva|ović|ovic|escu|yan|oglu|"
                             r"oğlu|sson|poulos|akis|enko|chuk|ić)$")
_WORD_BEFORE = re.compile(rf"(?<![\w'’.-])({_NAME_WORD})[ \t]+\Z")
_WORD_AFTER = re.compile(rf"[ \t]+((?:(?i:{_PARTICLE})[ \t]+)?({_NAME_WORD}))(?![\w'’@]|[-.]\w)")


_CLAUSE_OPENS = re.compile(r"(?:^|[.!?:;\n\"“(])[ \t]*\Z")


def _extended_names(taken: Sequence[Span], text: str) -> list[Span]:
    """``taken`` with a name's missing neighbour: the capitalised word before a family name found
    alone, inside a sentence ("en la app puse Majo Fernández" after "María José Fernández Ruiz");
    the family name after a name found, a particle before it ("Fatima Zahra El Amrani", "managed
    by Ines Castellano"): a listed family name, a word no dictionary has, or one with a family
    name's ending; never a stop word, a title, a company's word or a company's legal form."""
    def fits(word: str) -> bool:
        low = word.lower()
        # (a place's name with a family name's ending is a family name beside a name: "Castellano")
        return not (low in _NOT_NAMES or low in _TITLES or low in _COMPANY_WORDS or _legal_form(word)
                    or name_lexicon.key(word) in _BRANDS
                    or (name_lexicon.key(word) in name_lexicon.place_names() and not _SURNAME_ENDING.search(word)))

    out: list[Span] = []
    for span in taken:
        if span.kind != "person_name":
            out.append(span)
            continue
        start, end = span.start, span.end
        # (twice: a family name of two words takes its given name too, "Rajendra Singh Chauhan")
        for _ in range(2):
            first = text[start:end].split()[0] if text[start:end].split() else ""
            before = _WORD_BEFORE.search(text, max(0, start - 40), start)
            if not (before and _surname(first) and not _given(first) and fits(before.group(1))
                    and not before.group(1).isupper()
                    and not _CLAUSE_OPENS.search(text[max(0, before.start(1) - 3) : before.start(1)])
                    and not any(t.start < start and t.end > before.start(1) for t in taken if t is not span)):
                break
            start = before.start(1)
        after = _WORD_AFTER.match(text, end)
        if after:
            word = after.group(2)
            # (an acronym after a name ends it: "Wong Ka Yan HKID")
            if (fits(word) and not (word.isupper() and not text[start:end].isupper())
                    and (_surname(word) or not _ordinary_form(word) or _SURNAME_ENDING.search(word))
                    and not _company_after(text, after.end()) and not any(
                        t.start < after.end() and t.end > end for t in taken if t is not span)):
                end = after.end()
        out.append(Span(start, end, "person_name"))
    return out


#: initials before a family name ("A. Vogelsang", "T. de Groot", "J.M. de Vries")
_INITIALS_NAME = re.compile(rf"(?<![\w.])((?:-?[A-Z]\.[ \t]?){{1,3}}[ \t]*(?:(?i:{_PARTICLE})[ \t]+){{0,2}}"
                            r"([A-ZÀ-Þ][a-zà-ÿ'’]+(?:-[A-Z][a-zà-ÿ]+)?))(?![\w'’-])")


def _initial_names(text: str, known: Collection[str]) -> Iterator[Span]:
    """A family name after initials: a listed one, one found elsewhere in the ticket, or one no
    dictionary has; never a place nor a word that names no one ("U.S. Bank" is no one's)."""
    for m in _INITIALS_NAME.finditer(text):
        family = m.group(2)
        key = name_lexicon.key(family)
        if (family.lower() in _NOT_NAMES or key in name_lexicon.place_names() or family.lower() in _COMPANY_WORDS
                or not (_surname(family) or family in known or not _ordinary_form(family))):
            continue
        yield Span(m.start(1), m.end(1), "person_name")
