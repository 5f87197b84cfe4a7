"""The detector of people that runs the name detectors found by cue, by lexicon and by context
together with dates of birth ("born", "DOB", in figures or in words) and user names said or
shaped like one."""

from __future__ import annotations

import re
from collections.abc import Iterator

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
