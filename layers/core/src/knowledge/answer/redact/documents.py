"""Personal data in documents pasted into a ticket rather than written in it: the fields of an
OCR'd card or bill ("Név / Name: …", "姓名 王 丽 娟"), read also where the OCR spaced every
letter ("N A M E :  D E S H A W N   T .   C O O P E R"); the names of a passport's machine
readable zone; the name column of a CSV export; a name inside a file name
("passport_scan_juan_garcia_vazquez.jpg") or a query string ("?name=…"); and a name written in
lower case that an e-mail address of the same text spells ("signed tom harwood" beside
"tom.harwood@…")."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator, Sequence

from .. import name_lexicon
from .contact import _EMAIL
from .people import birth_patterns_for
from .spans import Span
from .users import _system_account
from .words import _NOT_NAMES, _given, _ordinary_form, _surname

# -- letter-spaced OCR ---------------------------------------------------------------------

#: a run of single characters each one space apart ("N A M E :", "生 年 月 日", "이 서 연"); the
#: words of a spaced line stand two or more spaces apart
_SPACED_RUN = re.compile(r"(?<!\S)\S(?: \S)+(?!\S)")


def _collapsed(text: str) -> tuple[str, list[int]] | None:
    """``text`` with its letter-spaced runs closed up ("D E S H A W N   T .   C O O P E R" ->
    "DESHAWN T. COOPER") and, for each character of the result, its offset in ``text``; None
    when no run is spaced. A run counts when most of its characters are letters."""
    every = list(_SPACED_RUN.finditer(text))
    long = [len(m.group()) >= 5 and sum(c.isalpha() for c in m.group()[::2]) * 2 > len(m.group()[::2])
            for m in every]
    # a run of two ("T .", an initial) or one of figures ("0 3 / 0 4 / 1 9 8 8") counts a
    # column's gap from a spaced word (the run before it or after it)
    runs = [m for i, m in enumerate(every) if long[i] or ((m.group()[0].isalpha() or len(m.group()) >= 5) and (
        (i > 0 and long[i - 1] and 0 < m.start() - every[i - 1].end() <= 5)
        or (i + 1 < len(every) and long[i + 1] and 0 < every[i + 1].start() - m.end() <= 5)))]
    if not any(long):
        return None
    out: list[str] = []
    where: list[int] = []
    pos = 0
    prev_end = -1
    for m in runs:
        gap = text[pos : m.start()]
        if prev_end == pos and gap.strip(" ") == "" and m.start() - pos >= 2:
            # the wider gap between two spaced words is one space
            out.append(" ")
            where.append(pos)
        else:
            out.extend(gap)
            where.extend(range(pos, m.start()))
        for i in range(m.start(), m.end(), 2):
            out.append(text[i])
            where.append(i)
        pos = prev_end = m.end()
    out.extend(text[pos:])
    where.extend(range(pos, len(text)))
    return "".join(out), where


# -- document fields ------------------------------------------------------------------------

#: the words that label a person's name on a card, a bill or a form, in the languages tickets
#: arrive in (a label in the Latin alphabet opens its line and ends on a colon or an OCR
#: column's gap; one in another script may stand anywhere and ends on a space or a colon)
_LATIN_LABELS = (
    "name", "names", "full name", "surname", "surnames", "last name", "family name", "first name", "first names",
    "given name", "given names", "forename", "forenames", "middle name", "name of holder", "holder",
    "account holder", "cardholder", "card holder", "customer name", "applicant", "nom", "nom de famille", "prénom",
    "prénoms", "nom complet", "titulaire", "nombre", "nombres", "apellido", "apellidos", "nombre completo", "titular",
    "cliente", "nome", "cognome", "nome completo", "nomes", "apelido", "név", "vezetéknév", "utónév", "vorname",
    "nachname", "familienname", "naam", "voornaam", "voornamen", "achternaam", "imię", "imiona", "nazwisko",
    "jméno", "příjmení", "meno", "priezvisko", "namn", "efternamn", "förnamn", "navn", "etternavn", "fornavn",
    "efternavn", "nimi", "sukunimi", "etunimi", "ad", "soyad", "soyadı", "ad soyad", "adı soyadı", "nama",
    "nama lengkap", "ho ten", "họ tên", "họ và tên", "pangalan", "όνομα", "επώνυμο", "ονοματεπώνυμο", "имя",
    "фамилия", "фио", "ім'я", "прізвище",
    # an agent's notes name the one who called or asked ("Caller: Beau Thibodeaux, Lafayette LA")
    "caller", "contact person", "requester", "requested by", "reported by", "submitted by",
)
_OTHER_LABELS = ("姓名", "氏名", "名前", "お名前", "성명", "이름", "账户名", "賬戶名", "户名", "戶名", "持卡人",
                 "申请人", "الاسم", "الاسم الكامل", "שם מלא")


def _label_pattern(labels: Sequence[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"[ \t]+") for w in sorted(labels, key=len, reverse=True))


_LATIN_FIELD = re.compile(
    rf"(?im)^[ \t>|*-]*(?:{_label_pattern(_LATIN_LABELS)})(?:[ \t]*/[ \t]*(?:{_label_pattern(_LATIN_LABELS)}))*"
    r"(?:[ \t]*[:：][ \t]*|[ \t]{2,})(?P<value>[^\n]+)")
#: the title of an identity card whose next line is its holder's name (Korean resident and
#: driving cards)
_CARD_TITLE = ("주민등록증", "운전면허증")
_OTHER_FIELD = re.compile(
    r"(?<![\u4e00-\u9fff\u3040-\u30ff가-힣\u0600-\u06ff\u05d0-\u05ea])"
    rf"(?:{_label_pattern((*_OTHER_LABELS, *_CARD_TITLE))})"
    rf"(?:[ \t]*[:：]?[ \t]*|(?<={_label_pattern(_CARD_TITLE)})[ \t]*\n[ \t]*)(?P<value>[^\n，,;；。(（]+)")
#: where a field's value ends before the line does: an OCR column's gap, a bracket, a code
_VALUE_END = re.compile(r"[ \t]{3,}|[(\[<{|]|\b(?:[A-Z]{2,6}[ \t]*[:#]|(?i:born|dob|tel|phone|email|e-mail|id)\b)")
_LATIN_VALUE_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*\.?|[^\W\d_]\.")
_SCRIPT_VALUE = re.compile(r"[\u4e00-\u9fff]{2,4}|[가-힣]{2,4}|[\u3040-\u30ff\u4e00-\u9fff]{2,8}"
                           r"|[\u0600-\u06ff]+(?:[ \t]+[\u0600-\u06ff]+){0,3}"
                           r"|[\u05d0-\u05ea]+(?:[ \t]+[\u05d0-\u05ea]+){0,3}")
_CONNECTORS = frozenset(("binti", "bin", "bte", "a/l", "a/p", "de", "da", "del", "der", "van", "von", "y", "dos", "das",
                         "di", "du", "la", "le", "e"))


def _latin_name(value: str) -> bool:
    """Whether a field's value reads as a person's name: two to six words of letters (an
    initial among them), no figure, not all of them ordinary words unless one is a listed name."""
    words = value.split()
    if not 1 <= len(words) <= 6 or any(not _LATIN_VALUE_WORD.fullmatch(w) for w in words):
        return False
    plain = [w.strip(".") for w in words if w.lower() not in _CONNECTORS]
    if not plain or any(w.lower() in _NOT_NAMES for w in plain if len(w) > 1):
        return False
    if not all(w[0].isupper() for w in plain):
        return False
    long = [w for w in plain if len(w) > 1]
    if not long:
        return False
    if _ordinary_form(long[-1]) and not (_given(long[-1]) or _surname(long[-1])):
        return False  # a thing's name ends on a word of the dictionary ("Grafana Export Job")
    if not all(_ordinary_form(w) for w in long):
        return True
    # words of the dictionary only: a name when a listed given name opens it and every other is
    # a listed name too ("Grace Young"), not "Billing Export Job"
    return _given(long[0]) and all(_given(w) or _surname(w) for w in long[1:])


def _field_values(text: str) -> Iterator[Span]:
    for m in _LATIN_FIELD.finditer(text):
        start, end = m.start("value"), m.end("value")
        cut = _VALUE_END.search(text, start, end)
        if cut is not None and cut.start() > start:
            end = cut.start()
        value = text[start:end]
        stripped = value.rstrip(" \t.,;:")
        # the name up to a comma ("Beau Thibodeaux, Lafayette LA"), or one written family name
        # first ("Smith, John")
        head = stripped.split(",", 1)[0].rstrip()
        if "," in stripped and len(head.split()) >= 2 and _latin_name(head):
            yield Span(start, start + len(head), "person_name")
        elif _latin_name(stripped.replace(",", " ")):
            yield Span(start, start + len(stripped), "person_name")
    for m in _OTHER_FIELD.finditer(text):
        if m.group().startswith(_CARD_TITLE) and "\n" not in m.group():
            continue  # a card's title names its holder on the next line only
        value = m.group("value").strip()
        start = m.start("value") + m.group("value").find(value[:1]) if value else m.start("value")
        closed = re.sub(r"[ \t]+", "", value)
        script = _SCRIPT_VALUE.match(value) if not re.search(r"[\u4e00-\u9fff가-힣]", value) else None
        if re.fullmatch(r"[\u4e00-\u9fff]{2,4}|[가-힣]{2,4}|[\u3040-\u30ff\u4e00-\u9fff]{2,8}", closed) and (
                len(value) - len(closed) <= len(closed)) and (_surname(closed[:1]) or _surname(closed[:2])):
            # (a listed family name opens it: "必填", "required", is no one)
            yield Span(start, start + len(value), "person_name")
        elif script is not None and script.group() == value:
            yield Span(start, start + len(value), "person_name")


def _document_fields(text: str) -> Iterator[Span]:
    """The name after a document's field label, and after it too where the OCR spaced the
    letters of the label and of the value (read on the text closed up, mapped back)."""
    yield from _field_values(text)
    view = _collapsed(text)
    if view is None:
        return
    closed, where = view
    for span in _field_values(closed):
        start, end = where[span.start], where[span.end - 1] + 1
        if " " in text[start:end] and re.search(r"\S \S \S", text[start:end]):
            yield Span(start, end, span.kind)
    # and a date of birth after a spaced cue ("生 年 月 日   平成2年 8月 19日", "D A T E  O F  B I R T H")
    patterns = birth_patterns_for(closed)
    for m in patterns[0].finditer(closed) if patterns is not None else ():
        group = next(g for g in (1, 2, 3) if m.group(g))
        yield Span(where[m.start(group)], where[m.end(group) - 1] + 1, "date_of_birth")


#: a driving licence of the European (and British) model read out field by field: its numbered
#: fields "4a." (issued) and "4b." (expires) say it is one; "1." is the surname, "2." the given
#: names, "3." the date (and place) of birth
_LICENCE_MARK = re.compile(r"(?m)^[ \t]*4a\.[ \t]")
_LICENCE_FIELD = re.compile(r"(?m)^[ \t]*([123])\.[ \t]+([^\n]+?)[ \t]*$")
_FIELD_DATE = re.compile(r"\d{1,2}[./-]\d{1,2}[./-](?:\d{4}|\d{2})")


def _licence_fields(text: str) -> Iterator[Span]:
    if not (_LICENCE_MARK.search(text) and re.search(r"(?<![\w.])4b\.", text)):
        return
    for m in _LICENCE_FIELD.finditer(text):
        if m.group(1) in "12" and re.fullmatch(r"[^\W\d_][\w'’ .-]{1,60}", m.group(2)):
            yield Span(m.start(2), m.end(2), "person_name")
        elif m.group(1) == "3" and (date := _FIELD_DATE.match(m.group(2))):
            yield Span(m.start(2), m.start(2) + date.end(), "date_of_birth")


# -- machine readable zone, CSV, file names, query strings ----------------------------------

#: a passport's (P) or an identity card's (I, A, C) name line: SURNAME<<GIVEN<NAMES<<<…
_MRZ_NAME = re.compile(r"(?m)(?:^P[A-Z<][A-Z<]{3}|^)([A-Z]{2,}(?:<[A-Z]{2,})*<<[A-Z]{2,}(?:<[A-Z]{2,})*)<{2,}[ \t]*$")
_CSV_NAME_COLUMNS = frozenset(("name", "full name", "fullname", "full_name", "customer", "customer name",
                               "customer_name", "contact", "contact name", "first_name", "last_name", "first name",
                               "last name", "display name", "display_name", "requester", "nom", "nombre", "name_en"))
_FILE_NAME = re.compile(r"(?i)(?<![\w/.-])([\w-]{3,120})\."
                        r"(?:pdf|jpe?g|png|heic|heif|gif|tiff?|docx?|xlsx?|csv|txt|zip)\b")
_QUERY_NAME = re.compile(r"(?i)[?&;](?:name|full_?name|first_?name|last_?name|customer_?name|holder)="
                         r"([^&#\s\"'<>]{2,80})")
_QUERY_USER = re.compile(r"(?i)[?&;](?:user|user_?name|login|uid)=([A-Za-z][\w.-]{1,40})(?=[&#\s\"'<>]|\Z)")


def _mrz_names(text: str) -> Iterator[Span]:
    """The holder's name in a machine-readable zone: surname and given names joined by ``<``."""
    for m in _MRZ_NAME.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line = text[line_start : text.find("\n", m.end()) if "\n" in text[m.end():] else len(text)]
        if len(line.strip()) >= 28 and "<<" in m.group(1):
            yield Span(m.start(1), m.end(1), "person_name")


#: a CSV column's head that names another kind of personal datum ("coinvault_account",
#: "amount_eur", "username"): its values are of that kind
_CSV_KIND_COLUMNS = (
    (re.compile(r"(?:^|[ _])(?:user(?:name)?|login|handle|uid)$"), "username"),
    (re.compile(r"(?:account|acct|konto|iban|member_id|customer_id|client_id)(?:$|[ _])"), "account_number"),
    (re.compile(r"(?:^|[ _])(?:amount|balance|total|betrag|montant|importe)(?:$|[ _])"), "amount"),
)


def _column_kind(head: str) -> str | None:
    if head in _CSV_NAME_COLUMNS:
        return "person_name"
    return next((kind for pattern, kind in _CSV_KIND_COLUMNS if pattern.search(head)), None)


def _csv_names(text: str) -> Iterator[Span]:
    """The values of a CSV export's columns of personal data, read by its header ("name,email",
    "employee_id,coinvault_account,amount_eur", "username,role"): names, user names, account
    numbers and amounts."""
    offset = 0
    columns: dict[int, str] = {}
    width = 0
    for line in text.split("\n"):
        cells = line.split(",")
        if columns and len(cells) == width:
            for column, kind in columns.items():
                value = cells[column].strip().strip('"')
                at = offset + sum(len(c) + 1 for c in cells[:column])
                at = line.find(value, at - offset) + offset if value else at
                if not value:
                    continue
                # (under a name column's head a family name may be a word too: "Mei Lin Chow")
                if kind == "person_name" and not (
                        _latin_name(value) or (value.isupper() and _latin_name(value.title()))
                        or (re.fullmatch(r"[A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+){1,3}", value)
                            and any(_given(w) or _surname(w) for w in value.split()))
                        # (or one in a script without capitals: "张伟", "فاطمة الحربي")
                        or re.fullmatch(rf"{_OTHER_SCRIPT_WORD}(?: {_OTHER_SCRIPT_WORD}){{0,3}}", value)):
                    continue
                if kind in ("account_number", "amount") and not re.search(r"\d", value):
                    continue
                if kind == "username" and not re.fullmatch(r"[\w.@$-]{2,64}", value):
                    continue
                yield Span(at, at + len(value), kind)
        elif len(cells) >= 2:
            heads = [c.strip().strip('"').lower() for c in cells]
            kinds = {i: k for i, h in enumerate(heads) if (k := _column_kind(h)) is not None}
            if kinds and all(re.fullmatch(r"[a-z][a-z _]{0,30}", h) for h in heads):
                columns, width = kinds, len(cells)
            else:
                columns = {}
        else:
            columns = {}
        offset += len(line) + 1


def _name_part(word: str, known: Collection[str]) -> bool:
    low = word.lower()
    return len(low) >= 2 and (low in known or ((_given(word) or _surname(word)) and not _ordinary_form(word)))


def _file_names(text: str, known_names: Collection[str]) -> Iterator[Span]:
    """The name inside a file's name ("passport_scan_juan_garcia_vazquez.jpg",
    "dana_kowalski_dl_front_back.pdf"): two to four parts joined by ``_`` or ``-`` that are
    listed names or names found elsewhere in the ticket, at least one of them a given name or
    a found one."""
    known = {n.lower() for n in known_names}
    for m in _FILE_NAME.finditer(text):
        stem, base = m.group(1), m.start(1)
        parts = [(p.start(), p.end(), p.group()) for p in re.finditer(r"[^\W\d_]+", stem)]
        i = 0
        while i < len(parts):
            j = i
            while j < len(parts) and _name_part(parts[j][2], known):
                j += 1
            run = parts[i:j]
            if len(run) >= 2 and len(run) <= 4 and any(_given(p[2]) or p[2].lower() in known for p in run):
                yield Span(base + run[0][0], base + run[-1][1], "person_name")
            i = max(j, i + 1)


def _query_values(text: str) -> Iterator[Span]:
    """A name or a user name in a URL's query string (``?name=Ana+Lima``, ``&user=jdoe``)."""
    for m in _QUERY_NAME.finditer(text):
        value = re.sub(r"%20|\+", " ", m.group(1))
        if _latin_name(value) or _latin_name(value.title()):
            yield Span(m.start(1), m.end(1), "person_name")
    for m in _QUERY_USER.finditer(text):
        if not _ordinary_form(m.group(1)) and m.group(1).lower() not in ("admin", "root", "guest", "anonymous"):
            yield Span(m.start(1), m.end(1), "username")


# -- lower-case names an address spells, or beside a found surname --------------------------

_LOCAL_PART = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}\Z")
_LOWER_PAIR = re.compile(r"(?<![\w@.'’-])(?=([a-zà-ÿ]{2,})[ \t]+([a-zà-ÿ][a-zà-ÿ'’-]{1,})(?![\w@'’-]|\.\w))")


def _lower_spelled_names(text: str, known_names: Collection[str]) -> Iterator[Span]:
    """Two lower-case words that spell the local part of an e-mail address of the same text
    ("signed tom harwood" beside "tom.harwood@…"), or a listed given name before a surname found
    elsewhere in the ticket ("kontot heter kalle lindström" after "Karl-Johan Lindström"); a
    pair of ordinary words ("support team") never."""
    pairs: set[tuple[str, str]] = set()
    # (an address's local part read back from each "@": a long run of letters with none is
    # read once, not from every letter of it)
    for at in re.finditer("@", text):
        local = _LOCAL_PART.search(text, max(0, at.start() - 64), at.start())
        if local is None or not _EMAIL.match(text, local.start()):
            continue
        parts = [p for p in re.split(r"[._+-]+|\d+", local.group().lower()) if p]
        if len(parts) == 2 and all(len(p) >= 2 for p in parts):
            pairs.add((parts[0], parts[1]))
    known = {n.lower() for n in known_names if len(n) >= 4}
    for m in _LOWER_PAIR.finditer(text):
        a, b = m.group(1), m.group(2)
        if a in _NOT_NAMES or b in _NOT_NAMES:
            continue
        named = _given(a) or _surname(a) or _given(b) or _surname(b)
        spelled = (a, b) in pairs and named and not (_ordinary_form(a) and _ordinary_form(b))
        beside = b in known and _given(a) and not _ordinary_form(a)
        if spelled or beside:
            yield Span(m.start(1), m.end(2), "person_name")


#: a row of an exported audit log: a timestamp, then who acted and what they did
_AUDIT_ROW = re.compile(r"(?m)^[ \t]*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
                        r"[ \t]*[,;|\t][ \t]*([A-Za-z][\w.@-]{1,40})[ \t]*[,;|\t][ \t]*([a-z_]{3,20})\b([^\n]*)")
_AUDIT_VERBS = frozenset(("create", "created", "delete", "deleted", "update", "updated", "login", "logout", "push",
                          "pull", "read", "write", "invite", "invited", "remove", "removed", "add", "added", "grant",
                          "revoke", "revoked", "reset", "disable", "disabled", "enable", "enabled", "upload",
                          "download", "export", "import", "modify", "modified", "assign", "assigned", "approve",
                          "approved"))
#: "…,create,user,jdoherty": the user an action was done to, named after the word for one
_AUDIT_USER = re.compile(r"[,;|\t][ \t]*(?:user|member|account)[ \t]*[,;|\t][ \t]*([A-Za-z][\w.-]{1,40})"
                         r"(?=[ \t]*(?:[,;|\t]|$))")


def _audit_users(text: str) -> Iterator[Span]:
    """The user names in an exported audit log: the actor after a row's timestamp when an
    action's verb follows ("2024-10-21T14:02:11Z,jdoherty,delete,repository,…"), and the user an
    action names ("…,create,user,jdoherty"); a system's own account ("admin", "robot$ci",
    "system") is no one's."""
    for m in _AUDIT_ROW.finditer(text):
        if m.group(2) not in _AUDIT_VERBS:
            continue
        actor = m.group(1)
        if "@" not in actor and not _system_account(actor):
            yield Span(m.start(1), m.end(1), "username")
        for u in _AUDIT_USER.finditer(text, m.end(2), m.end(3)):
            if not _system_account(u.group(1)):
                yield Span(u.start(1), u.end(1), "username")


#: a line of a pasted statement or letter that is only a name in capitals, as a bank or a
#: utility prints its customer's ("INGRID  M  LARSEN")
_CAPITALS_LINE = re.compile(r"(?m)^[ \t]*([A-ZÀ-ÖØ-Þ][A-ZÀ-ÖØ-Þ'’-]+"
                            r"(?:[ \t]+(?:[A-Z]\.?|[A-ZÀ-ÖØ-Þ][A-ZÀ-ÖØ-Þ'’-]+)){1,3})[ \t]*$")


def _capitals_lines(text: str) -> Iterator[Span]:
    """A line that is only a listed given name, an initial or another name, and a listed
    family name, in capitals; one of them no dictionary word ("WELLS FARGO", "JUNE SALES" stay)."""
    for m in _CAPITALS_LINE.finditer(text):
        words = [w.title() for w in m.group(1).split()]
        long = [w for w in words if len(w.rstrip(".")) > 1]
        if (len(long) >= 2 and _given(long[0]) and _surname(long[-1])
                and not all(_ordinary_form(w) for w in long) and not any(w.lower() in _NOT_NAMES for w in long)):
            yield Span(m.start(1), m.end(1), "person_name")


#: an e-mail header's person ("To: Harry Field", "Cc: Ana Ruiz <ana@…>", "Von: Jana Novak"): one to
#: four capitalised words closed by an address, a comma or the line's end
_HEADER_NAME = re.compile(
    r"(?m)^[ \t>]*(?:To|From|Cc|CC|Bcc|Reply-To|Von|An|De|À|Para|Van|Aan|Od|Do|Från|Till|Fra|Til)[ \t]*:[ \t]*"
    # (initials and a family name's particles too: "Van: J.M. de Vries – NL79…")
    r"((?:[A-Z]\.(?:[ \t]?[A-Z]\.)*[ \t]*|[A-ZÀ-ÞĀ-Ž][^\W\d_]+[ \t]+)"
    r"(?:(?:van|von|de|der|den|da|di|du|del|la|le|ter|ten)[ \t]+){0,2}[A-ZÀ-ÞĀ-Ž][^\W\d_]+"
    r"(?:[ \t]+[A-ZÀ-ÞĀ-Ž][^\W\d_]+){0,2}|[A-ZÀ-ÞĀ-Ž][^\W\d_]+)[ \t]*(?=<|,|;|$|[ \t]+[–—-][ \t])")


def _header_names(text: str) -> Iterator[Span]:
    """The people of a forwarded e-mail's header, read by their place: a family name the bot's
    corpus knows as a word is still one there ("To: Harry Field")."""
    for m in _HEADER_NAME.finditer(text):
        words = m.group(1).split()
        initials = re.match(r"[A-Z]\.", words[0]) is not None
        if (_given(words[0]) or _surname(words[-1]) or initials) and not any(
                w.lower() in _NOT_NAMES for w in words if not w.endswith(".")):
            yield Span(m.start(1), m.end(1), "person_name")


#: a chat log's speaker label after its time ("[14:02] marek.p: ok sending now", "[10:02, 11/3/2026]
#: Rohit Sharma: hello")
_CHAT_SPEAKER = re.compile(r"(?m)^[ \t]*\[[^\]\n]{3,30}\][ \t]*([^\s:\[\]][^\n:\[\]]{0,38}?)[ \t]*:")
#: the words that open a label of the support's own side or of the writer ("Agent Priya", "me")
_CHAT_OWN_SIDE = re.compile(r"(?i)(?:agent|support|advisor|adviser|operator|rep|specialist|moderator|staff|csr|bot|"
                            r"system|me|you|ich|moi|yo|eu)\b")


def _chat_speakers(text: str) -> Iterator[Span]:
    """The other people of a pasted chat log, by their speaker labels: a handle ("marek.p") is a
    user name, capitalised words a name; the staff's and the writer's own labels stay."""
    for m in _CHAT_SPEAKER.finditer(text):
        label = m.group(1)
        if _CHAT_OWN_SIDE.match(label):
            continue
        if re.fullmatch(r"@?[A-Za-z0-9][A-Za-z0-9._-]{1,30}", label) and re.search(r"[._\d]", label):
            yield Span(m.start(1), m.end(1), "username")
        elif re.fullmatch(r"[A-ZÀ-Þ][^\W\d_]+(?:[ \t]+[A-ZÀ-Þ][^\W\d_.]*\.?){0,3}", label):
            words = label.split()
            if not any(w.lower() in _NOT_NAMES for w in words) and (_given(words[0]) or len(words) > 1):
                yield Span(m.start(1), m.end(1), "person_name")


def _document_names(text: str, known_names: Collection[str]) -> Iterator[Span]:
    """Every detector of this module on one text."""
    yield from _header_names(text)
    yield from _chat_speakers(text)
    yield from _capitals_lines(text)
    yield from _audit_users(text)
    yield from _document_fields(text)
    yield from _licence_fields(text)
    yield from _mrz_names(text)
    yield from _csv_names(text)
    yield from _file_names(text, known_names)
    yield from _query_values(text)
    yield from _lower_spelled_names(text, known_names)


# -- a chat log's staff -----------------------------------------------------------------------

#: a chat log's line spoken by the staff: "[14:06] Agent Priya:", "[09:15] Support - Dóra:"
_STAFF_SPEAKER = re.compile(
    r"(?im)^[ \t]*\[\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]*[ap]m)?\][ \t]*(?:agent|support|advisor|adviser|operator|"
    r"rep|specialist|moderator|staff|csr)[ \t]*[-–:]?[ \t]*([^\W\d_][\w'’-]*)[ \t]*:")


@functools.lru_cache(maxsize=16)
def _staff_names(text: str) -> frozenset[str]:
    """The names a chat log gives its staff in their speaker labels ("[14:06] Agent Priya:"):
    the support's own people, whom a ticket keeps as it keeps an agent's sign-off."""
    return frozenset(m.group(1) for m in _STAFF_SPEAKER.finditer(text))


#: the codes of the states of the United States, written after a town ("Gallup, NM", "Lafayette LA")
_US_STATES = frozenset((
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA",
    "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR",
    "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"))
_STATE_AFTER = re.compile(r",?[ \t]+([A-Z]{2})(?![\w-])")


def _no_person(text: str, span: Span) -> bool:
    """Whether a word read as a name is none: a chat log's staff named in their speaker labels
    (:func:`_staff_names`); a town before a US state's code ("Gallup, NM", "Lafayette LA");
    a listed place alone in brackets closing a line ("… under review (Texas)")."""
    value = text[span.start : span.end]
    if value in _staff_names(text):
        return True
    if " " in value:
        return False
    state = _STATE_AFTER.match(text, span.end)
    if state is not None and state.group(1) in _US_STATES and not _given(value):
        return True
    # (closing its line, as a title's region does: "my sister (Maria) sent it" is a person)
    return (text[span.start - 1 : span.start] == "(" and re.match(r"\)[ \t]*(?:\n|\Z)", text[span.end :]) is not None
            and name_lexicon.key(value) in name_lexicon.place_names())


# -- an agent's notes of a call --------------------------------------------------------------

_CALL_NOTES = re.compile(r"(?i)\A[ \t]*(?:call[ \t]+(?:notes?|log)|phone[ \t]+notes?|notes?[ \t]+(?:of|from)[ \t]+"
                         r"(?:the[ \t]+)?call|inbound[ \t]+call|caller[ \t]*:)")


def _call_notes(text: str) -> bool:
    """Whether an agent's text is their notes of a call ("Call notes 10:20 CT - inbound",
    "CALL LOG 16:20 | caller says …"): the caller's words written down, so the amounts and
    codes in it are the caller's as in a customer's own message."""
    return _CALL_NOTES.match(text) is not None


# -- a name's other script ------------------------------------------------------------------

#: a word of a script other than Latin: Arabic, Hebrew, Greek, Cyrillic, the scripts of South Asia
#: (with their vowel signs), Thai, Ethiopic, Han and kana, Hangul
_OTHER_SCRIPT_WORD = (r"(?:[\u0600-\u06ff]+|[\u05d0-\u05ea]+|[\u0370-\u03ff]+|[\u0400-\u04ff]+|"
                      r"[\u0900-\u0dff]+|[\u0e00-\u0e7f]+|[\u1200-\u137f]+|[\u4e00-\u9fff\u3005\u3040-\u30ff]+|[가-힣]+)")
#: (in brackets, or after a slash: "محمد الحسيني / Mohammed Al-Husseini")
_OTHER_SCRIPT_ALIAS = re.compile(rf"[ \t]*(?:[(（][ \t]*|/[ \t]*)"
                                 rf"({_OTHER_SCRIPT_WORD}(?:[ \t]+{_OTHER_SCRIPT_WORD}){{0,4}})"
                                 r"(?=[ \t]*[)）,.;\n]|[ \t]*\Z)")
#: the same name in Latin letters in brackets after a name in another script ("রোকেয়া বেগম (Rokeya Begum)")
_LATIN_ALIAS = re.compile(r"[ \t]*(?:[(（][ \t]*|/[ \t]*)([A-ZÀ-Þ][\w'’-]+(?:[ \t]+[A-ZÀ-Þ][\w'’.-]*){0,3})"
                          r"(?=[ \t]*[)）,.;\n]|[ \t]*\Z)")
#: a name in another script right before a name in brackets ("ਹਰਜੀਤ ਸਿੰਘ ਗਿੱਲ (Harjit Singh Gill)")
_ALIAS_BEFORE = re.compile(rf"(?<!\S)({_OTHER_SCRIPT_WORD}(?:[ \t]+{_OTHER_SCRIPT_WORD}){{0,3}})"
                           r"[ \t]*(?:[(（]|/)[ \t]*\Z")


def _script_aliases(text: str, taken: Sequence[Span]) -> list[Span]:
    """``taken`` with a name written again in another script in brackets right after a name
    ("Youssef El Amrani (يوسف العمراني)", "Wang Wei (王伟)", "রোকেয়া বেগম (Rokeya Begum)") or
    right before a name in brackets ("ਹਰਜੀਤ ਸਿੰਘ ਗਿੱਲ (Harjit Singh Gill)") read whole, over any
    part of it a name detector took."""
    out = list(taken)
    for span in taken:
        if span.kind != "person_name":
            continue
        latin = re.search(r"[A-Za-zÀ-ÿ]", text[span.start : span.end]) is not None
        aliases = [m for m in ((_OTHER_SCRIPT_ALIAS if latin else _LATIN_ALIAS).match(text, span.end),
                               _ALIAS_BEFORE.search(text, max(0, span.start - 80), span.start)) if m is not None]
        for m in aliases:
            # (the name before the brackets is in another script than the one inside them)
            if m.re is _ALIAS_BEFORE and (not latin or text[m.end() - 1 : span.start].strip(" \t(（/")):
                continue
            inside = [s for s in out if s.start < m.end(1) and m.start(1) < s.end]
            if all(s.kind == "person_name" and m.start(1) <= s.start and s.end <= m.end(1) for s in inside):
                out = [s for s in out if s not in inside] + [Span(m.start(1), m.end(1), "person_name")]
    return sorted(out, key=lambda s: s.start)
