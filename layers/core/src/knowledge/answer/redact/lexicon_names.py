"""People's names no cue introduces: capitalised words that the name lists know as names
(``_lexicon_names``); capitalised words this bot's corpus does not know (``_unknown_names``, on
only with a vocabulary) and their lower-case forms; the subject of a sentence; names known from
elsewhere in the conversation (``_known``); and names read from an e-mail address."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

from .. import name_lexicon
from .contact import _EMAIL
from .context_names import _LOWER_CUE, _POSSESSIVE_NAME
from .spans import Span
from .words import (
    _BRANDS,
    _CHAT_WORDS,
    _COMMON_VERBS,
    _COMMON_WORD_NAMES,
    _COMPANY_AFTER,
    _COMPANY_WORDS,
    _ENGLISH_GLUE,
    _INNER_CAPITAL,
    _LOCATIVE,
    _NAME_VERBS,
    _NAME_WORD,
    _NOT_NAMES,
    _PARTICLE,
    _PLACE_NAMES,
    _POSSESSIVE,
    _TITLES,
    _UPPER,
    _capitalised_runs,
    _company_after,
    _english,
    _folded,
    _given,
    _legal_form,
    _lower_case_writer,
    _name_like,
    _ordinary,
    _ordinary_form,
    _plain_word,
    _surname,
)

#: words that open sentences in the other languages tickets come in ("during", "that", "after",
#: "when", "then", "if") and that the name lists hold as names: alone they are no one's name
_SENTENCE_OPENERS = frozenset(("durante", "esa", "ese", "este", "esta", "cuando", "donde", "entonces", "luego",
                               "depois", "então", "quando", "onde", "sau", "khi", "nếu", "sekarang", "kemudian",
                               "lalu", "jadi", "kalau", "setelah", "potem", "kiedy", "pokud", "când", "după",
                               "sonra", "şimdi", "eğer"))


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
        if len(run) == 1 and run[0].group().lower() in _SENTENCE_OPENERS:
            continue  # "Durante esse período", "Sau khi kích hoạt": a word opening a sentence
        if len(run) == 1 and re.search(r"\d[ \t]\Z", text[max(0, run[0].start() - 2) : run[0].start()]) \
                and re.match(r"[ \t,]+\d", text[run[0].end() :]):
            continue  # "Mon, 3 Jun 2024": a month between a day and a year
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
            # (a courtesy title is how one is addressed, no part of the name: "Halo Kak Dimas")
            starts = not re.fullmatch(_PARTICLE, w) and w.lower() not in _TITLES and (
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


#: words after which a person is named ("picking this up from Laura", "cc Hamza")
_TAKES_A_PERSON = frozenset(("from", "with", "by", "and", "cc", "ask", "asked", "tell", "told", "thank", "thanks",
                             "contact", "contacted", "per", "for", "called", "named", "to", "emailed", "messaged"))
_SENTENCE_OPEN = re.compile(r"[.!?:;\n\"“(\-–—][ \t]*$")

_TRAVEL_TO = re.compile(r"(?i:\b(?:travel|travell?ing|fly|flying|flew|move|moving|moved|relocat\w*|trip|"
                        r"visit\w*|going|go|went|ship\w*|deliver\w*|back)[ \t]+(?:to|from)[ \t]+)\Z")
#: "from Nairobi to Kampala": the second of two places
_FROM_TO = re.compile(r"\b(?i:from)[ \t]+[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*){0,2}[ \t]+to[ \t]+\Z")
_BEFORE_NUMBER = re.compile(r"\.?[ \t]?\d")
#: what follows a place's name ("the Dublin office")
_PLACE_AFTER = re.compile(r"[ \t]+(?:office|team|branch|airport|store|warehouse|site)\b")


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


#: two or more words written all in capitals, as a passport, a bank or a card prints a name
#: ("MARY W KAMAU", "JOY ANN MAGBANUA REYES")
_CAPITALS_RUN = re.compile(rf"(?<![\w'’.@/-])[{_UPPER}][{_UPPER}'’-]*(?:[ \t]+[{_UPPER}][{_UPPER}'’-]*\.?)+"
                           r"(?![\w@/]|[-.]\w)")


def _capital_names(text: str, known: Collection[str] | None) -> Iterator[Span]:
    """Names written in capitals: two or more words, each a listed name or a word of four letters
    or more that no dictionary, place list or this bot's corpus has (a middle initial between),
    one of them no ordinary word at all ("NUSRAT BIBI", "ZEWDITU GEBREMEDHIN"); never an acronym
    of three letters the lists lack ("MTN", "SBI"), a shout of ordinary words ("PLEASE HELP"), a
    place ("KUALA LUMPUR") or a company ("PIVOVAR DIGITAL S.R.O.")."""
    for run in _CAPITALS_RUN.finditer(text):
        if _COMPANY_TAIL.match(text, run.end()):
            continue
        words = list(re.finditer(r"\S+", run.group()))

        def candidate(w: str, inner: bool) -> bool:
            k = name_lexicon.key(w)
            low = w.lower().strip(".")
            if inner and len(k) == 1:
                return True  # a middle initial
            # (a word between two names is one too, though a dictionary has it: "SHARMA ANIL KUMAR")
            if inner and len(k) >= 3 and k.isalpha() and low not in _NOT_NAMES and low not in _TITLES \
                    and low not in _COMPANY_WORDS and not re.fullmatch(_PARTICLE, low) and k not in _BRANDS:
                return True
            if (len(k) < 2 or (known is not None and k in known) or low in _NOT_NAMES or low in _TITLES
                    or low in _COMPANY_WORDS or _legal_form(w)
                    or (k in name_lexicon.place_names() and not (_given(w) or _surname(w)))
                    or re.fullmatch(_PARTICLE, low) or k in _BRANDS):
                return False
            return _given(w) or _surname(w) or (len(k) >= 4 and re.search(r"[aeiouy]", k) is not None
                                                and not _ordinary_form(w))

        def strong(w: str) -> bool:
            return len(name_lexicon.key(w)) >= 4 and not _ordinary_form(w)

        i = 0
        while i < len(words):
            j = i
            while j < len(words) and candidate(words[j].group(), j > i and j + 1 < len(words)
                                               and candidate(words[j + 1].group(), False)):
                j += 1
            # (an initial closes no name: "MARY W" alone is a name and a letter)
            while j > i and len(name_lexicon.key(words[j - 1].group())) == 1:
                j -= 1
            start, end = run.start() + words[i].start(), run.start() + words[j - 1].end()
            end -= text[end - 1] == "." and len(words[j - 1].group()) > 2  # a sentence's full stop
            before = text[max(0, start - 12) : start].split()
            # (a place: after a place word, before what follows one, or written as one word in
            # the lists: "in DUBAI MARINA", "KUALA LUMPUR branch", "HONG KONG")
            place = ((bool(before) and before[-1].lower() in _LOCATIVE)
                     or re.match(_PLACE_AFTER.pattern, text[end:], re.IGNORECASE) is not None
                     or any(name_lexicon.key(a.group() + b.group()) in name_lexicon.place_names()
                            for a, b in zip(words[i:j], words[i + 1 : j], strict=False)))
            if j - i >= 2 and any(strong(w.group()) for w in words[i:j]) and not place:
                yield Span(start, end, "person_name")
            i = max(j, i + 1)


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
                      # (a given name no dictionary has goes on with a family name that is a word:
                      # "from Emily Carver")
                      and not (nxt and (nxt.isupper() or (_plain_word(nxt) and not _given(nxt) and not _surname(nxt)
                                                           and _plain_word(w)))))
            # a listed given name before a listed family name, neither known to the corpus, even
            # when the dictionary has both ("Yesterday Anna Weber approved it", "co-signer, Anna
            # Weber,"): a person, not a feature ("Bill Pay", "Grace Period" are words it knows)
            pair = (bool(nxt) and _given(w) and _surname(nxt) and _name_like(nxt, known)
                    and w.lower() not in _NAME_VERBS and k not in _PLACE_NAMES
                    and name_lexicon.key(nxt) not in name_lexicon.place_names()
                    and not (i > 0 and words[i - 1].lower() in (*_LOCATIVE, "visit", "from", "to"))
                    and nxt.lower() not in _COMPANY_WORDS and not _PLACE_AFTER.match(text, run[i + 1].end()))
            # a listed given name before a word no list and no dictionary has, in any language
            # ("Rohan Mehta", "Grace Nakato"): the family name the lists lack
            pair = pair or (bool(nxt) and _given(w) and w.lower() not in _NAME_VERBS and k not in _PLACE_NAMES
                            and _name_like(nxt, known) and not _plain_word(nxt)
                            and not _given(nxt) and not _surname(nxt) and len(name_lexicon.key(nxt)) >= 3
                            and name_lexicon.key(nxt) not in name_lexicon.place_names()
                            and nxt.lower() not in _COMPANY_WORDS and not _PLACE_AFTER.match(text, run[i + 1].end())
                            and not (i > 0 and words[i - 1].lower() in (*_LOCATIVE, "visit", "from", "to")))
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


#: the endings of the cases of Czech, Polish and Slovak given names and surnames
_CASE_ENDINGS = "ovi|owi|em|iem|ie|ze|ce|ou|ho|mu|a|u|e|i|y|ą|ę|o"


def _case_stem(name: str) -> str | None:
    """The stem a Slavic case ending goes on (five letters or more of Latin script): the name
    without its last vowel ("Lucie" -> "Luci", "Anna" -> "Ann"), without the "e" of a last
    syllable "-ek"/"-el"/"-ec" ("Marek" -> "Mark", "Pavel" -> "Pavl"), or whole ("Piotr")."""
    if len(name) < 4 or not re.fullmatch(r"[A-Za-zÀ-ž]+", name):
        return None
    if name[-1].lower() in "aeiouy":
        stem = name[:-1]
    elif re.search(r"e[klc]\Z", name, re.IGNORECASE):
        stem = name[:-2] + name[-1]
    else:
        stem = name
    return stem if len(stem) >= 4 else None


def _known(text: str, names: Collection[str]) -> Iterator[Span]:
    """Every whole-word occurrence of a name found elsewhere in the ticket, with or without its
    accents ("Mr Oyelaran" ... "spelled Oyelarán"), capitalised or not ("my brother arjun" ...
    "Arjun's trade"); in lower case where the writer writes so ("hi, it's marco again" after
    "Ciao Marco"), never a verb ("will") or a stop word. A name
    that is also a place is none after a place word ("I don't live in Georgia"). A Chinese or
    Korean name of two characters or more is found inside a run of its script too."""
    folded = _folded(text)
    lower_writer = _lower_case_writer(text)
    for name in {_folded(n) for n in names}:
        low = name.lower()
        # (a name in a script that writes no spaces between words stands between any two
        # characters: "请刘洋设置")
        bounded = not re.fullmatch(r"[\u4e00-\u9fff\u3400-\u4dbf\u3005가-힣]{2,}", name)
        pattern = rf"(?<![\w]){re.escape(name)}(?![\w])" if bounded else re.escape(name)
        # the cases of a Slavic name end it otherwise ("Marek" ... "Markovi", "Lucie" ... "Lucii",
        # "Piotr" ... "Piotrze"): its stem with a case ending, capitalised, no word of the dictionary
        stem = _case_stem(name)
        if stem is not None:
            pattern += rf"|(?<![\w]){re.escape(stem)}(?:{_CASE_ENDINGS})(?![\w])"
        for m in re.finditer(pattern, folded, re.IGNORECASE):
            found = m.group()
            # a part of a host, a path or an address is none ("harbor.internal.fenwick-logistics.com")
            if bounded and (folded[m.start() - 1 : m.start()] in (".", "@", "/")
                            or re.match(r"(?:-[\w-]*)?\.[A-Za-z]", folded[m.end() : m.end() + 40])):
                continue
            if found != name and not found[0].isupper() and (
                    low in _NAME_VERBS or low in _NOT_NAMES or not lower_writer):
                continue
            if len(found) != len(name) and (not found[0].isupper() or _ordinary_form(found)):
                continue  # a case of the name is written capitalised, and is no other word
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


_COMPANY_TAIL = re.compile(r"(?:[ \t]+[A-Z][\w'’-]*){0,3}" + _COMPANY_AFTER.pattern)
