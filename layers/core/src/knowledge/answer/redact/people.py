"""The detector of people that runs the name detectors found by cue, by lexicon and by context
together with dates of birth ("born", "DOB", in figures or in words) and user names said or
shaped like one."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from typing import Any

from .context_names import _context_names
from .lexicon_names import _lexicon_names
from .names import _initials_and_mailboxes, _names
from .spans import Span
from .users import (
    _DISCORD,
    _HANDLE,
    _HANDLE_AFTER,
    _HANDLE_ON,
    _HOST_NAME,
    _PAYMENT_HANDLE,
    _PLATFORM,
    _REDDIT,
    _SAID_OF_A_NAME,
    _USERNAME,
    _USERNAME_LATER,
    _account_names,
    _initial_surname,
)
from .words import _CHAT_WORDS, _ENGLISH_GLUE, _NAME_WORD, _NOT_NAMES, _ordinary, _ordinary_form

_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
           r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|janvier|février|mars|avril|mai|juin|juillet|août|septembre|"
           r"octobre|novembre|décembre|Januar|Februar|März|Juni|Juli|Oktober|Dezember|enero|febrero|marzo|abril|"
           r"mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|"
           r"giugno|luglio|settembre|ottobre|dicembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|"
           r"dezembro|januari|februari|maart|mei|augustus|stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|"
           r"sierpnia|września|października|listopada|grudnia)\.?")


@functools.cache
def _month_names() -> str:
    """The months of every locale Faker's date lists name them in, as a pattern: the names
    ("listopad", "Январь", "Ocak", "มีนาคม"), a name's other cases by its first letters and up
    to four more ("listopada", "января"; a name of five letters or fewer and one more,
    "марта"), and Thai's abbreviations ("มี.ค."); the English and the other western names
    above stay first."""
    import faker.providers.date_time as date_time

    names: set[str] = set()
    for module in pkgutil.iter_modules(date_time.__path__):
        loaded = importlib.import_module(f"{date_time.__name__}.{module.name}")
        months = getattr(loaded.Provider, "MONTH_NAMES", None)
        if isinstance(months, dict):
            names.update(str(v) for v in months.values())
        elif "month_name" in vars(loaded.Provider):
            # a locale that keeps its months inside ``month_name`` (Indonesian "Maret",
            # Hungarian "március", Croatian "Ožujak", Hindi "मार्च"): asked for each month
            names.update(_named_months(vars(loaded.Provider)["month_name"]))
        for attr in ("_TH_FULL_MONTHS", "_TH_ABBR_MONTHS"):  # Thai keeps its months in the module
            names.update(str(v) for v in getattr(loaded, attr, ()))
    forms = set()
    for name in names:
        low = name.lower()
        if " " in low or "." in low or len(low) < 4 or not re.fullmatch(r"[^\W\d_]+", low):
            forms.add(re.escape(low))  # "Tháng Một", "มี.ค.", "一月" as written
        elif len(low) < 6:
            forms.add(re.escape(low) + r"[^\W\d_]?")  # a short name and one more letter ("март" -> "марта")
        else:
            # a case ending in place of the nominative's last letters ("styczeń" -> "stycznia")
            forms.add(re.escape(low[:-2]) + r"[^\W\d_]{0,4}")
    alternatives = "|".join(sorted(forms, key=len, reverse=True))
    return rf"(?:{_MONTHS}|(?i:{alternatives})(?![^\W\d_]))"


class _OneMonth:
    """What a locale's ``month_name`` asks of its provider: the month, as "01" to "12"."""

    def __init__(self, month: int) -> None:
        self._month = f"{month:02d}"

    def month(self) -> str:
        return self._month


def _named_months(month_name: Callable[[Any], object]) -> list[str]:
    names = []
    for month in range(1, 13):
        try:
            names.append(str(month_name(_OneMonth(month))))
        except (AttributeError, KeyError, TypeError, ValueError):
            return []  # a provider that asks for more than its month: its names are read elsewhere or not at all
    return names


def _date(months: str) -> str:
    """A date in figures or with a month's name; the year of a spaced date or of one with a
    month's name is one a customer may be born in (19.., 20.., 25.. of Thailand's Buddhist
    era): "Rua Augusta 1450" is a street, "4. 9. 1450" no date."""
    year = r"(?:19|20|25)\d{2}(?!\d)"  # 25..: Thailand's Buddhist era ("12 มี.ค. 2533")
    return (rf"(?:\d{{4}}\.[ \t]\d{{1,2}}\.[ \t]\d{{1,2}}\.?|"  # Hungarian: "1991. 03. 07."
            rf"\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{1,2}}[./-]\d{{1,2}}[./-](?:\d{{4}}|\d{{2}})|"
            # spaced: "4. 9. 1991" (Czech, Slovak, German), "12 / 03 / 1990"
            rf"\d{{1,2}}[ \t]?[./-][ \t]?\d{{1,2}}[ \t]?[./-][ \t]?{year}|"
            # spaces alone, as a voice note's transcript writes one ("12 03 1990")
            rf"\d{{1,2}} \d{{1,2}} {year}|"
            rf"(?i:{months})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{year}|"
            rf"\d{{1,2}}(?:st|nd|rd|th|\.|º|°)?[\s-]+(?:(?:of|de|di|do|da)\s+)?(?i:{months})[\s-]+(?:(?:de|del|of)\s+)?{year}|"
            rf"\d{{4}}\s*年\s*\d{{1,2}}\s*月\s*\d{{1,2}}\s*日|\d{{4}}년\s*\d{{1,2}}월\s*\d{{1,2}}일|"
            # Japan's era years ("平成2年 8月 19日", "昭和63年1月5日", "令和元年")
            rf"(?:明治|大正|昭和|平成|令和)\s*(?:元|\d{{1,2}})\s*年\s*\d{{1,2}}\s*月\s*\d{{1,2}}\s*日|"
            # Vietnamese names a month by its number: "12 tháng 3 năm 1990", "12 tháng 3, 1990"
            rf"\d{{1,2}}\s+(?i:tháng)\s+\d{{1,2}},?\s+(?:(?i:năm)\s+)?{year}|"
            # (the year first: "1990. március 12." in Hungarian)
            rf"(?i:{months})[\s,]+(?:(?:de|of)\s+)?{year}|{year}\.?[-/ ]+(?i:{months})[-/ ]+\d{{1,2}}|"
            rf"\d{{1,2}}(?:st|nd|rd|th)?[\s-]+(?i:{months})[\s-]+'?\d{{2}}(?![\d:])|"
            rf"(?i:{months})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+'?\d{{2}}(?![\d:]))")


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
#: the words for a birth, a date of birth or being born, in the languages tickets come in,
#: written with spaces ("date of birth", "data urodzenia", "datum narození", "doğum tarihi")
_BIRTH_WORDS = (
    r"born|date\s+of\s+birth|birth\s*date|birthday|d\.?o\.?b\.?|geboren|geburtsdatum|geburtstag|geburt|geb\.|"
    r"cumpleaños|anniversaire|compleanno|aniversário|verjaardag|urodziny|né|née|"
    r"date\s+de\s+naissance|naissance|fecha\s+de\s+nacimiento|nacimiento|nacid[oa]|data\s+di\s+nascita|nascita|"
    r"nato|nata|data\s+urodzenia|urodzenia|urodzon[ya]|data\s+de\s+nascimento|nascimento|nascid[oa]|nasci|nac[ií]|"
    r"geboortedatum|geboren\s+op|fødselsdato|födelsedatum|syntymäaika|doğum\s+tarihi|doğum|dogum|"
    r"дата\s+рождения|рождения|родил(?:ся|ась)|"
    # Greek, Romanian, Indonesian and Malay, Vietnamese, Czech, Slovak, Hungarian, Ukrainian, the
    # Nordic languages, the South Slavic and Baltic languages, Albanian, Swahili, Filipino
    r"ημερομηνία\s+γέννησης|ημ\.?\s*γέννησης|γέννησης|γεννήθηκα|γενέθλια|data\s+na[șs]terii|na[șs]terii|"
    r"n[ăa]scut[ăa]?|tanggal\s+lahir|tgl\.?\s+lahir|tarikh\s+lahir|lahir|ngày\s+sinh|sinh\s+ngày|sinh\s+năm|"
    r"datum\s+narozen[íi]|narozen[íiaá]?|nar\.|narodenia|narodil[a]?|születési\s+(?:dátum|idő)|születtem|születés|"
    r"szül\.|"
    r"дата\s+народження|народження|народил(?:ся|ася)|född|født|syntynyt|rođenja|rodjenja|rojstva|рођења|"
    r"раждане|gimimo|dzimšanas|lindjes|kuzaliwa|kapanganakan"
)
#: the same in the scripts that write no spaces between words or read right to left: "生年月日",
#: "تاريخ الميلاد", "ولدت" (Arabic: I was born), "תאריך לידה", "जन्म" (alone, "الميلاد" is
#: Christmas too, "לידה" a maternity leave)
_BIRTH_GLUED = (r"生年月日|出生日期|出生|生日|생년월일|태어났|تاريخ\s+الميلاد|ولدت|مواليد|تولد|"
                r"מועד\s+לידה|תאריך\s+לידה|נולדתי|วันเกิด|जन्म\s+तिथि|जन्म")
#: Thai's "born", which also says something happened ("เกิดข้อผิดพลาดเมื่อ 12/03/2024": an error
#: occurred): a birth only with its date right after it ("เกิด 12 มี.ค. 2533", "เกิดวันที่ ...")
_THAI_BORN = r"เกิด\s*(?:วันที่\s*)?"


@functools.cache
def _birth_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A date of birth after its cue (three groups: a date after a spaced cue, a year after
    "born", a date after an unspaced cue) and a date standing alone, with the months of every
    locale (:func:`_month_names`, read on first use)."""
    date = _date(_month_names())
    birth = re.compile(
        rf"(?i:\b(?:{_BIRTH_WORDS}))"
        r"(?:\b|(?<=\.))[^.!?\n\d]{0,60}?" + rf"({date}|{_SPOKEN_DATE})"
        r"|(?i:\bborn\s+(?:in\s+)?)((?:19|20)\d{2})\b(?![/.-]\d)"
        rf"|(?:(?:{_BIRTH_GLUED})" r"\s*[はがは：:是은는]?[^.!?\n\d]{0,20}?" + rf"|{_THAI_BORN})({date})"
    )
    return birth, re.compile(rf"(?<![\w/.-])(?:{date})(?![\w/-])")


@functools.cache
def _birth_cue() -> re.Pattern[str]:
    """Any of the words every alternative of :func:`_birth_patterns` starts with: a text without
    one holds no date of birth, and the months of every locale (a pattern that takes about 0.2 s
    to compile) are never needed for it."""
    return re.compile(rf"(?i:\b(?:{_BIRTH_WORDS}))|(?i:\bborn\b)|(?:{_BIRTH_GLUED})|{_THAI_BORN}")


def birth_patterns_for(text: str) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """:func:`_birth_patterns` when ``text`` holds a birth cue, else None."""
    return _birth_patterns() if _birth_cue().search(text) else None


#: the last year a customer is likely born in: a later date after a birth cue is an event's
_LAST_BIRTH_YEAR = 2012


def asks_birth(text: str) -> bool:
    """Whether ``text`` speaks of a date of birth ("please confirm your date of birth"): the
    next message of the other side that answers it with a date gives one."""
    return _birth_cue().search(text) is not None


def _born_year(date: str) -> bool:
    """A date whose year a customer may be born in (two digits, 1900 to 2012, or 2443 to 2555 of
    Thailand's Buddhist era); a date of this year is an event's."""
    year = re.search(r"(?<!\d)(?:19|20|25)\d{2}(?!\d)", date)
    if year is None:
        return re.search(r"(?<!\d)\d{2}$", date.strip(" .'")) is not None  # "12.03.88"
    y = int(year.group())
    return 1900 <= y <= _LAST_BIRTH_YEAR or 2443 <= y <= _LAST_BIRTH_YEAR + 543


def answered_births(text: str) -> Iterator[Span]:
    """The dates in a reply to a message that asks for a date of birth (:func:`asks_birth`):
    "It is 2 June 1979.", "23/08/1991, Av. Insurgentes Sur 1457" with no cue of its own."""
    _, date_alone = _birth_patterns()
    for m in date_alone.finditer(text):
        if _born_year(m.group()):
            yield Span(m.start(), m.end(), "date_of_birth")
    for m in re.finditer(_SPOKEN_DATE, text):
        yield Span(m.start(), m.end(), "date_of_birth")
_SENTENCE_STOP = re.compile(r"[.!?](?!\S)|\n")


def _overlapping(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Every match, the next searched from where this one's value starts: a cue may sit in the
    words another cue took ("account is registered as cryptokhalid99")."""
    pos = 0
    while m := pattern.search(text, pos):
        yield m
        pos = max(m.start(2), m.start() + 1)


def _people(text: str) -> Iterator[Span]:
    yield from _names(text)
    yield from _initials_and_mailboxes(text)
    yield from _lexicon_names(text)
    yield from _context_names(text)
    patterns = birth_patterns_for(text)
    birth, date_alone = patterns if patterns is not None else (None, None)
    for m in birth.finditer(text) if birth is not None else ():
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
        assert date_alone is not None
        for later in date_alone.finditer(text, m.end(group), line_end):
            year = re.search(r"(?:19|20)\d{2}", later.group())
            if (stop is None or later.end() <= stop.start()) or (
                    year and 1900 <= int(year.group()) <= _LAST_BIRTH_YEAR):
                yield Span(later.start(), later.end(), "date_of_birth")
    # a date of a year a customer may be born in, on a birth cue's line within 120 characters,
    # past the cue's sentence ("… data urodzenia się nie zgadza. W dowodzie mam 23.06.1995")
    if date_alone is not None:
        for birth_word in _birth_cue().finditer(text):
            line_end = text.find("\n", birth_word.end())
            end = min(len(text) if line_end < 0 else line_end, birth_word.end() + 120)
            for later in date_alone.finditer(text, birth_word.end(), end):
                if _born_year(later.group()) and re.search(r"(?:19|20)\d{2}", later.group()):
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
    for pattern in (_HANDLE, _DISCORD, _REDDIT):
        for m in pattern.finditer(text):
            yield Span(m.start(), m.end(), "username")
    for m in _overlapping(_USERNAME, text):
        # "login from ..." is not a user name: one is said ("username: x") or looks like one; a
        # platform's name alone says nothing ("Discord is community-run")
        cue = text[m.start() : m.start(1) if m.group(1) else m.start(2)]
        said = bool(m.group(1)) and not _PLATFORM.fullmatch(cue.strip())
        # "the user is blocked": after a bare "user", a word of the dictionary is no handle
        if re.fullmatch(r"(?i)(?:user|login|handle)\s*", cue) and _ordinary(m.group(2)):
            said = False
        # "the agent is busy": after "agent" only a handle's shape says one ("agent integration.bot")
        if re.fullmatch(r"(?i)agent\s*", cue):
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
