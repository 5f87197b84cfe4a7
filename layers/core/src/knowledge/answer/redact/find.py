"""The public entry points: ``find_spans`` runs every detector on a text, resolves overlaps by
``_PRIORITY`` and applies the rules across detectors; ``redact`` replaces the spans;
``names_in`` and ``vocabulary_candidates`` serve a ticket read as a whole (``tickets``).

Who wrote a text matters: in a customer's own message (``speaker="customer"``) a code after a
word for an account is theirs and a number a strong identity-number check accepts is one with no
word before it; in a message of either side (not a title) every amount is the customer's unless
it reads as a policy figure."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence

from .. import addresses, name_lexicon
from .contact import _emails, _ips, _streets
from .context_names import _LOWER_CUE, answered_names, asks_name
from .documents import _call_notes, _document_names, _no_person, _script_aliases
from .id_documents import mrz_names
from .ids import _ID_WORD, _REFERENCE, _accounts, _checked_ids, _code_parts, _id_documents, _references, asks_id
from .keyed import keyed_values
from .lexicon_names import (
    _LOWER_WORD,
    _capital_names,
    _email_names,
    _known,
    _lower_given_names,
    _lower_unknown_names,
    _subject_names,
    _unknown_names,
)
from .money import _amounts, _named_amounts, _table_amounts
from .names import (
    _adjacent_names,
    _agent_signature,
    _extended_names,
    _initial_names,
    _joined_names,
    _names_a_thing,
    _pronoun_subjects,
    _thai_names,
    _with_title,
)
from .payment import _card_codes, _cards, _ibans, _last_digits, _wallets, answered_last_digits, asks_last_digits
from .people import _people, answered_births, asks_birth
from .phones import _phones, _spoken_phones
from .secrets import _secrets, _seed_phrases, answered_secrets, asks_secret
from .spans import _GENERIC_SECRET, _PRIORITY, DEFAULT_PHONE_REGIONS, KINDS, Redaction, Span
from .users import (
    _derived_handles,
    _glued_handles,
    _handle_lists,
    _handles_after_names,
    _name_handles,
    _own_accounts,
    _signed_handles,
    _table_users,
    _url_users,
    _users_before_secrets,
    answered_usernames,
    asks_username,
    configured_users,
)
from .words import _COMPANY_WORDS, _NAME_WORD, _NOT_NAMES, _PARTICLE, _WORD, _given, _lower_case_writer, _ordinary


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
        out.update(name_lexicon.key(user) for user in configured_users(text))
    return out


_CJK_WORD = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf가-힣]{2}")


def names_in(texts: Iterable[str], *, known_words: Collection[str] | None = None,
             speakers: Sequence[str | None] | None = None) -> set[str]:
    """The words of every name found in ``texts`` (at least three letters, particles left
    out; a shorter given name too when it closes a longer name, "Nguyễn Văn An"): a name
    introduced in one message of a ticket is removed from all of them; ``speakers``: who wrote
    each text, as :func:`find_spans` reads it (an agent's own signature is no name to remove)."""
    out: set[str] = set()
    texts = list(texts)
    for text, speaker in zip(texts, speakers if speakers is not None else [None] * len(texts), strict=True):
        for span in find_spans(text, known_words=known_words, speaker=speaker):
            if span.kind == "person_name":
                words = [w.strip(".,") for w in text[span.start : span.end].split()]
                out.update(w for w in words if (len(w) >= 3 or _CJK_WORD.search(w)) and not re.fullmatch(_PARTICLE, w))
                if len(words) >= 2 and len(words[-1]) == 2 and words[-1][0].isupper() and words[-1][1].islower():
                    out.add(words[-1])
                # and one inside a name of three words ("Wong Ka Yan": "Hi Ka Yan")
                out.update(w for w in words[1:-1] if len(words) >= 3 and len(w) == 2 and w[0].isupper()
                           and w[1].islower() and not re.fullmatch(_PARTICLE, w.lower()))
    return out


_INITIAL_AFTER = re.compile(r"[ \t][A-Z]\.[ \t]+[A-ZÀ-Þ][a-zà-ÿ'’-]+(?:-[A-Z][a-z]+)?(?![\w'’])"
                            r"|[ \t][B-HJ-Z]\.?(?![\w'’])")
_INITIAL_BEFORE = re.compile(r"(?<![\w.'’-])([A-HJ-Z])\.?[ \t]\Z")
_SPELLED = re.compile(r"(?<![\w-])[A-ZÀ-Þ](?:[-. ][A-ZÀ-Þ]){2,}(?![\w-])")


def _spelled_names(text: str, taken: Sequence[Span], known_names: Collection[str]) -> list[Span]:
    """Letters joined by dashes, dots or spaces that spell a name of the ticket ("V-A-S-S-E-U-R")."""
    if not _SPELLED.search(text):
        return []
    names = {w.lower() for w in known_names} | {w.lower() for s in taken if s.kind == "person_name"
                                                 for w in text[s.start : s.end].split()}
    covered = bytearray(len(text) + 1)
    for t in taken:
        covered[t.start : t.end] = b"\x01" * (t.end - t.start)
    return [Span(m.start(), m.end(), "person_name") for m in _SPELLED.finditer(text)
            if re.sub(r"[-. ]", "", m.group()).lower() in names and not any(covered[m.start() : m.end()])]


_LISTED_FIGURE = re.compile(r"(?<![\w.,])(\d{1,3}(?:[.,]\d{3})*[.,]\d{2})"
                            r"(?:,[ \t]*|[ \t]+(?:and|or|y|e|et|und|i|ve)[ \t]+)\Z")


def _listed_before(amounts: Sequence[Span], text: str) -> list[Span]:
    """The figures with cents listed right before an amount, which its currency closes."""
    out: list[Span] = []
    for span in amounts:
        pos = span.start
        while (m := _LISTED_FIGURE.search(text, max(0, pos - 30), pos)) is not None and len(out) < 50:
            out.append(Span(m.start(1), m.end(1), "amount"))
            pos = m.start(1)
    return out


_KANJI_NAME = re.compile(r"[\u4e00-\u9fff]{1,3}")
_GIVEN_AFTER = re.compile(r"[\u4e00-\u9fff\u3040-\u309f]{1,3}?(?=です|と申します|でございます|さん|様|氏)")
_COUNT_BEFORE = re.compile(r"(?<![\w.,])\d{1,3}[ \t]?[x×][ \t]?\Z")


_CHAT_LABEL = re.compile(r"\A[ \t]*\[?\d{1,2}:\d{2}(?::\d{2})?\]?[ \t]+"
                         r"(?:[^\W\d_][\w.'-]{0,20}(?:[ ][^\W\d_][\w.'-]{0,20})?:[ \t]*)?")


def signed_names(texts: Sequence[str], speakers: Sequence[str | None]) -> frozenset[str]:
    """The first names the support's agents sign their messages with ("— Mei", "Kind regards,
    Sven"): the desk's own people, whom a ticket keeps wherever they are named alone ("Hi Mei")."""
    out = set()
    for text, speaker in zip(texts, speakers, strict=True):
        if speaker == "agent" and (signed := _agent_signature(text)) is not None:
            out.add(text[signed.start : signed.end])
    return frozenset(out)


def find_spans(text: str, *, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS,
               known_names: Collection[str] = (), known_words: Collection[str] | None = None,
               speaker: str | None = None, asked: Collection[str] = (),
               known_values: Collection[tuple[str, str]] = (), birth_years: Collection[str] = (),
               staff: Collection[str] = ()) -> list[Span]:
    """Non-overlapping spans of personal or secret data, in text order; ``known_names``:
    name words found elsewhere in the same conversation (:func:`names_in`); ``known_words``:
    the words of :func:`vocabulary_candidates` that the bot's corpus knows (None: no corpus
    to ask, and the rule of :func:`_unknown_names` is off); ``speaker``: who wrote the text
    (``"customer"``, ``"agent"`` or None when unknown, as for a title): in a customer's own
    message the codes after a word for an account are the customer's, in either side's message
    the amounts no policy states; ``asked``:
    the kinds the other side's last message asked for (:func:`asked_in`): a date in the reply
    to a question of a date of birth is one, a number an identity number's check accepts in the
    reply to one is one; ``known_values``: (value, kind) of data found in
    other messages of the same ticket (:func:`repeated_values`), removed wherever they recur;
    ``birth_years``: the years of the dates of birth found in the ticket: a date of one of them is
    that birth date written again ("your profile had 05/03/1979"); ``staff``: the names the
    ticket's agents sign with (:func:`signed_names`), kept where they stand alone."""
    # (an agent's notes of a call write down the caller's own words)
    customer = speaker == "customer" or (speaker == "agent" and _call_notes(text))
    # (and an agent writes of the customer's own position, charge or withdrawal as often: "your
    # position is now 1 204,37 ATOM", "until then you can withdraw 6.500 USD"; a policy's figure
    # stays a policy's in either message)
    found = [
        *_emails(text), *_secrets(text), *_seed_phrases(text), *_card_codes(text), *_wallets(text), *_ibans(text),
        *_cards(text), *_last_digits(text),
        *_accounts(text), *_id_documents(text), *_checked_ids(text, customer, "national_id" in asked), *_ips(text),
        *_phones(text, phone_regions), *_spoken_phones(text), *_streets(text),
        *_amounts(text, customer or speaker == "agent"),
        *(_table_amounts(text) if speaker != "agent" else ()), *keyed_values(text),
        *_people(text), *(_own_accounts(text, known_words) if customer else ()),
        *_known(text, known_names), *_derived_handles(text, known_names), *_name_handles(text),
        *_initial_names(text, known_names),
        *_email_names(text, known_words),
        *_references(text, known_words), *_url_users(text, known_words), *_handle_lists(text, known_words),
        *_glued_handles(text, known_words), *_table_users(text, known_words), *_signed_handles(text),
        *(_unknown_names(text, known_words) if known_words is not None else ()),
        *(_lower_unknown_names(text, known_words) if known_words is not None else ()),
        *_lower_given_names(text, known_words), *_subject_names(text, known_words), *_capital_names(text, known_words),
    ]
    found.extend(_pronoun_subjects(text, known_words))
    # (a chat log's reply opens on its time and speaker: "[10:03] cliente: tiago.m.nunes")
    label = _CHAT_LABEL.match(text)
    reply, shift = (text[label.end() :], label.end()) if label else (text, 0)
    for kind, answered in (("date_of_birth", answered_births), ("person_name", answered_names),
                           ("secret", answered_secrets), ("card", answered_last_digits),
                           ("username", answered_usernames)):
        if kind in asked:
            found.extend(Span(s.start + shift, s.end + shift, s.kind) for s in answered(reply))
    if birth_years:
        found.extend(s for s in answered_births(text) if any(y in text[s.start : s.end] for y in birth_years))
    found.extend(_recurring(text, known_values))
    # (nor the word for an identity document: "My Medicare number is …")
    # (a name of the ticket printed in capitals is that name: "a payment from T ASHWORTH")
    known_caps = {name_lexicon.key(n) for n in known_names}
    found = [span for span in found if span.kind != "person_name" or not (
        (_names_a_thing(text, span, known_words) and not (text[span.start : span.end].isupper() and all(
            name_lexicon.key(w) in known_caps for w in text[span.start : span.end].split())))
        or _ID_WORD.fullmatch(text[span.start : span.end]))]
    found.extend(mrz_names(text))  # the holder's name in a passport's machine-readable zone, all capitals
    # (a document's fields, an MRZ, a file's name: read by their place, after the filter of things)
    found.extend(_document_names(text, known_names))
    # a chat log's staff, named in their speaker labels, stay as an agent's sign-off does; so
    # does a place where a place is written ("(Texas)", "Gallup, NM")
    found = [span for span in found if span.kind != "person_name" or not _no_person(text, span)]
    if speaker == "agent" and (signed := _agent_signature(text)) is not None:
        found = [span for span in found if span != signed]
    if staff:
        found = [span for span in found if span.kind != "person_name" or text[span.start : span.end] not in staff]
    found = [_with_title(text, span, known_words) if span.kind == "person_name" else span for span in found]
    # a Thai name after its cue is read whole: the cue's own words are no part of it
    thai = list(_thai_names(text))
    found = [span for span in found if span.kind != "person_name" or not any(
        t.start < span.end and span.start < t.end for t in thai)] + thai
    found.extend(_named_amounts(text, [s for s in found if s.kind == "person_name"]))
    # an amount charged a number of times takes its count ("2 x 149,00 €")
    found = [Span(c.start(), span.end, "amount") if span.kind == "amount" and (
        c := _COUNT_BEFORE.search(text, max(0, span.start - 8), span.start)) else span for span in found]
    # a capitalised word inside an amount is its scale or its currency ("3,5 Mio. €"), no name
    in_amount = bytearray(len(text) + 1)
    for span in found:
        if span.kind == "amount":
            in_amount[span.start : span.end] = b"\x01" * (span.end - span.start)
    found = [span for span in found if span.kind != "person_name" or not all(in_amount[span.start : span.end])]
    # a number of six digits or fewer, or in a postcode's shape, inside a street address is its
    # postcode, not a telephone ("Lindenallee 7, 14050 Berlin", "CEP 04544-000")
    streets = [s for s in found if s.kind == "street_address"]
    found = [span for span in found if span.kind != "phone" or not any(
        s.start <= span.start and span.end <= s.end for s in streets) or not (
        sum(c.isdigit() for c in text[span.start:span.end]) <= 6 or addresses.postcode(text[span.start:span.end]))]
    # figures listed before an amount share its currency ("249.00, 499.00 and 999.00 EUR")
    found.extend(_listed_before([s for s in found if s.kind == "amount"], text))
    # digits glued to a word by an underscore are a handle's or a key's ("u_30077215"), no telephone
    # (and digits before "@" and a name are a payment handle's or an address's: "9810427735@ybl")
    found = [span for span in found if span.kind != "phone" or not (
        text[span.start - 1 : span.start] == "_" or re.match(r"_|@[A-Za-z]", text[span.end : span.end + 2]))]
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
    taken.extend(_names_before_data(text, taken))
    taken.extend(_births_after_names(text, taken))
    for holder in _names_after_accounts(text, taken):
        # (a part of the name found alone goes into it: "S. de Vries-Bakker" beside "Vries-Bakker")
        taken = [t for t in taken if not (t.kind == "person_name" and holder.start <= t.start and t.end <= holder.end)]
        taken.append(holder)
    taken.extend(_users_before_secrets(text, taken, known_words))
    taken = _extended_names(_adjacent_names(_script_aliases(text, taken), text), text)
    taken.extend(_handles_after_names(text, taken, known_words))
    # a name goes on with the initial of a family name after it ("it shows "Sunitha R""), or with
    # a middle initial and the family name ("Ines C. Pinto")
    taken = [Span(s.start, i.end(), s.kind) if s.kind == "person_name" and (i := _INITIAL_AFTER.match(text, s.end))
             else s for s in taken]
    # and takes the initial of a given name before it ("Mr T Ashworth", "a payment from T ASHWORTH",
    # "MR S NDLOVU"), then the name after a middle initial ("Tamika L" and "Johnson")
    # ("A" only before a name in capitals: "A Johnson account" is an article's)
    ends = {s.end for s in taken}
    taken = _adjacent_names([Span(i.start(1), s.end, s.kind) if s.kind == "person_name" and (
        i := _INITIAL_BEFORE.search(text, max(0, s.start - 4), s.start)) and i.end(1) not in ends and (
        i.group(1) != "A" or text[s.start : s.end].isupper()) else s for s in taken], text)
    # a name spelled out letter by letter after it is the name ("Gérard Vasseur, V-A-S-S-E-U-R")
    taken.extend(_spelled_names(text, taken, known_names))
    # a Japanese family name goes on with the given name written after it before "です", "さん"
    # or "様" ("佐藤美咲です")
    taken = [Span(s.start, g.end(), s.kind) if s.kind == "person_name" and _KANJI_NAME.fullmatch(
        text[s.start : s.end]) and (g := _GIVEN_AFTER.match(text, s.end)) else s for s in taken]
    return sorted(taken, key=lambda s: s.start)


#: two to four capitalised words (particles between) closed by a comma (or a space before a
#: number), and the word that names the datum after them: a person listed with their data
#: ("- Oksana Hrytsenko, NIE Y4820371E", "Het gaat om Bas van der Meulen, e-mail …", "call me
#: if needed, Anders Ruud +47 412 65 038")
_NAME_BEFORE_DATUM = re.compile(
    r"(?:^|(?<=\n)|(?<=[-*•:,]\s)|"
    + "|".join(rf"(?<=\s{w}\s)" for w in ("om", "is", "of", "de", "für", "pour", "para", "per")) + r")[ \t]*"
    rf"((?:{_NAME_WORD})(?:[ \t]+(?:{_PARTICLE}[ \t]+){{0,2}}{_NAME_WORD}){{1,3}})(?:,[ \t]*|[ \t]+)"
    r"(?:(?i:e-?mail|mail|tel\.?|telefo\w*|phone|mobile|nie|dni|nif|iban|bsn|ssn|dob|geb\.?)[ \t]*:?[ \t]*)?\Z")
#: the kinds of datum that follow a person's name in such a list
_DATUM_AFTER_NAME = frozenset(("email", "phone", "national_id", "iban", "street_address", "date_of_birth"))


def _names_before_data(text: str, taken: Sequence[Span]) -> list[Span]:
    """The capitalised words right before a datum found, closed by a comma: the person the datum
    is of, though no list holds their name; not words of the dictionary all, nor a company."""
    out: list[Span] = []
    covered = bytearray(len(text) + 1)
    for t in taken:
        covered[t.start : t.end] = b"\x01" * (t.end - t.start)
    for span in taken:
        if span.kind not in _DATUM_AFTER_NAME:
            continue
        m = _NAME_BEFORE_DATUM.search(text, max(0, span.start - 80), span.start)
        if m is None or any(covered[m.start(1) : m.end(1)]):
            continue
        words = [w for w in m.group(1).split() if not re.fullmatch(_PARTICLE, w)]
        if (any(w.lower() in _NOT_NAMES or w.lower() in _COMPANY_WORDS for w in words)
                or all(_ordinary(w) and not _given(w) for w in words)):
            continue
        out.append(Span(m.start(1), m.end(1), "person_name"))
        covered[m.start(1) : m.end(1)] = b"\x01" * (m.end(1) - m.start(1))
    return out


#: the holder's name after an account on a bank statement's line ("van NL59 RABO 0314 2567 80  S. de
#: Vries-Bakker"): initials, particles and capitalised words to the line's end
_HOLDER_AFTER = re.compile(
    rf"[ \t]{{1,6}}((?:[A-Z]\.[ \t]?){{0,3}}(?:{_PARTICLE}[ \t]+){{0,2}}{_NAME_WORD}"
    rf"(?:[ \t]+(?:{_PARTICLE}[ \t]+){{0,2}}{_NAME_WORD}){{0,2}})[ \t]*(?=\n|\Z)")


#: "in the name of" before an account's holder ("IBAN … t.n.v. S. de Vries", "a nome di")
_IN_THE_NAME_OF = re.compile(r"(?i:\bt\.\s?n\.\s?v\.|\bten\s+name\s+van|\ba\s+nome\s+di|\bau\s+nom\s+de)[ \t]+"
                             r"(?=(?-i:[A-Z]))")


def _names_after_accounts(text: str, taken: Sequence[Span]) -> list[Span]:
    out: list[Span] = []
    for cue in _IN_THE_NAME_OF.finditer(text):
        m = _HOLDER_AFTER.match(" " + text[cue.end() : cue.end() + 80].split("\n")[0].split(",")[0].rstrip(". ") + "\n")
        if m is not None:
            start = cue.end() + m.start(1) - 1
            out.append(Span(start, start + len(m.group(1)), "person_name"))
    for span in taken:
        if span.kind not in ("iban", "account_number"):
            continue
        m = _HOLDER_AFTER.match(text, span.end)
        if m is None or any(t.start < m.end(1) and m.start(1) < t.end and not (
                t.kind == "person_name" and m.start(1) <= t.start and t.end <= m.end(1)) for t in taken):
            continue
        words = [w for w in m.group(1).split() if not re.fullmatch(_PARTICLE, w) and not w.endswith(".")]
        if words and not any(w.lower() in _NOT_NAMES or w.lower() in _COMPANY_WORDS for w in words) and not all(
                _ordinary(w) and not _given(w) for w in words):
            out.append(Span(m.start(1), m.end(1), "person_name"))
    return out


def _births_after_names(text: str, taken: Sequence[Span]) -> list[Span]:
    """A date of a year a customer may be born in right after a person's name and a comma ("my
    name Lars Petersen, 1990-05-21 if you need to verify")."""
    out: list[Span] = []
    for span in taken:
        if span.kind != "person_name" or not re.match(r",[ \t]*\d", text[span.end : span.end + 4]):
            continue
        start = span.end + len(text[span.end :]) - len(text[span.end :].lstrip(", \t"))
        for date in answered_births(text[start : start + 24]):
            if date.start == 0 and not any(t.start < start + date.end and start < t.end for t in taken):
                out.append(Span(start, start + date.end, "date_of_birth"))
    return out


def asked_in(texts: Sequence[str], speakers: Sequence[str | None]) -> list[frozenset[str]]:
    """For each text of a ticket, the kinds of datum the other side's last message before it
    asked for ("please confirm your date of birth" -> ``{"date_of_birth"}``, a word for an
    identity document -> ``{"national_id"}``, "the account holder's name?" -> ``{"person_name"}``);
    a text with no
    speaker (a title) answers nothing, and asks only of a date of birth: a ticket whose title
    speaks of one ("Geburtsdatum falsch eingetragen") is about the customer's, and a date of a
    year one is born in that the customer writes in it is theirs."""
    out: list[frozenset[str]] = []
    last: dict[str, str] = {}  # each speaker's latest message
    about_birth = any(speaker is None and asks_birth(text) for text, speaker in zip(texts, speakers, strict=True))
    for text, speaker in zip(texts, speakers, strict=True):
        other = next((t for s, t in last.items() if s != speaker), None) if speaker is not None else None
        kinds = frozenset() if other is None else frozenset(
            kind for kind, asks in (("date_of_birth", asks_birth), ("national_id", asks_id),
                                    ("person_name", asks_name), ("secret", asks_secret),
                                    ("card", asks_last_digits), ("username", asks_username)) if asks(other))
        out.append(kinds | {"date_of_birth"} if about_birth and speaker == "customer" else kinds)
        if speaker is not None:
            last[speaker] = text
    return out


#: the kinds whose value, found once in a ticket, is the same datum wherever it recurs in it
#: ("User akosinski ... -u akosinski"); names have their own rule (:func:`names_in`), and an
#: amount or a date may recur as a policy's figure
_RECURRING_KINDS = frozenset(("username", "secret", "email", "account_number", "national_id", "crypto_wallet",
                              "iban", "card"))


def repeated_values(texts: Sequence[str], results: Sequence[Redaction]) -> set[tuple[str, str]]:
    """The (value, kind) of the data of :data:`_RECURRING_KINDS` found in ``results`` (one per
    text) that recur unredacted in another text: at least four characters, and no ordinary
    word ("admin", "support" may be a user name once and a word elsewhere)."""
    values = {(text[s.start : s.end], s.kind) for text, r in zip(texts, results, strict=True) for s in r.spans
              if s.kind in _RECURRING_KINDS}
    return {(v, k) for v, k in values if len(v) >= 4 and "\n" not in v and not _plain_value(v)
            and any(_whole(v).search(r.text) or ((sibling := _sibling(v, k)) is not None and sibling.search(r.text))
                    for r in results)}


def recurs_in(text: str, values: Collection[tuple[str, str]]) -> bool:
    """Whether a value of :func:`repeated_values` (or its sibling, ``_sibling``) is in ``text``."""
    return any(v in text or ((sibling := _sibling(v, k)) is not None and sibling.search(text) is not None)
               for v, k in values)


def _plain_value(value: str) -> bool:
    return re.fullmatch(r"[^\W\d_]+", value) is not None and name_lexicon.key(value) in name_lexicon.ordinary_words()


def _whole(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w@.-]){re.escape(value)}(?![\w@-]|\.\w)")


def _sibling(value: str, kind: str) -> re.Pattern[str] | None:
    """An account's or a member's number written again with other digits, as a typo and its
    correction are ("member ID on file was BPH884210357 … corrected it to BPH884210375"): the same
    letters before as many digits."""
    m = re.fullmatch(r"([A-Z]{2,5})(-?)(\d{6,14})", value) if kind in ("account_number", "national_id") else None
    if m is None:
        return None
    return re.compile(rf"(?<![\w-]){m.group(1)}{re.escape(m.group(2))}\d{{{len(m.group(3))}}}(?![\w-])")


def _recurring(text: str, values: Collection[tuple[str, str]]) -> Iterator[Span]:
    for value, kind in values:
        for m in _whole(value).finditer(text):
            yield Span(m.start(), m.end(), kind)
        if (sibling := _sibling(value, kind)) is not None:
            for m in sibling.finditer(text):
                yield Span(m.start(), m.end(), kind)


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
           speaker: str | None = None, asked: Collection[str] = (),
           known_values: Collection[tuple[str, str]] = (), birth_years: Collection[str] = (),
           staff: Collection[str] = ()) -> Redaction:
    """``text`` with every span replaced by ``[kind]``, and how many of each kind; ``speaker``,
    ``asked``, ``known_values``, ``birth_years`` and ``staff`` as :func:`find_spans` reads them."""
    spans = find_spans(text, phone_regions=phone_regions, known_names=known_names, known_words=known_words,
                       speaker=speaker, asked=asked, known_values=known_values, birth_years=birth_years,
                       staff=staff)
    return replaced(text, spans)


def replaced(text: str, spans: Sequence[Span], counted: Sequence[Span] | None = None) -> Redaction:
    """``text`` with each of ``spans`` (in text order, none overlapping) replaced by ``[kind]``;
    the counts are of ``counted`` (default: every span; the second piece of a datum split
    across two messages is removed but counted once)."""
    out, last = [], 0
    for span in spans:
        out.append(text[last : span.start])
        out.append(f"[{span.kind}]")
        last = span.end
    out.append(text[last:])
    counts = Counter(s.kind for s in (spans if counted is None else counted))
    return Redaction("".join(out), {k: counts[k] for k in KINDS if counts[k]}, tuple(spans))
