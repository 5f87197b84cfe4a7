"""Text analysis: one definition for both search engines and for the code that reads the
question's terms back out of passages (confidence, excerpt windows).

A text is analysed in two steps:

1. :func:`expand` writes every identifier a second time beside itself, in the form the word
   split would not produce: ``SEND_ENDPOINT_TEXT_MESSAGE`` and ``config.maxRetries`` are also
   given whole (``SENDENDPOINTTEXTMESSAGE``, ``configmaxRetries``), ``startWithVideoMuted``
   and ``HTTPServer`` also in parts (``start With Video Muted``, ``HTTP Server``). A question
   naming the option then matches it exactly, and one naming its words still matches its
   parts. Hyphenated words are left to the word split (their whole forms cost NFCorpus 0.001
   nDCG@10).
2. The engine's analyser: split at every character that is not a letter or a digit, drop
   tokens of :data:`MAX_TOKEN_BYTES` bytes or more, lower-case, drop :data:`STOP_WORDS`, Snowball
   English (Porter2) stemming. The embedded index builds it with :func:`tantivy_analyzer`;
   OpenSearch gets the same chain from :func:`opensearch_analysis`.

The stored passage text is never changed: only the indexed copy is expanded.

The question's terms are searched at two weights (:func:`weight`): an everyday English word
(:func:`common_stems`: "get", "keep", "back", "want") counts :data:`COMMON_WEIGHT` of a word of
the documentation's own vocabulary. Customers ask in long conversational questions ("support
wants some long id for my transfer where do i get that"); in a small documentation set such a
word is as rare as "transfer", and its passages ("Unstake and get your coins back") outrank the
page the question is about. The index is unchanged: only the search weighs its terms.

Stems are not always prefixes of their words (``warranty`` -> ``warranti``, ``hoping`` ->
``hope``), so code that looks for a question term in a passage compares stems
(:func:`stem`, :func:`terms`), never prefixes.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: English stop words: the NLTK English list (``nltk_data/corpora/stopwords/english``,
#: itself the Snowball English list plus contraction pieces), without its apostrophe forms
#: ("don't", "you're": the word split cuts them into pieces the list holds, "don" and "t"),
#: plus the three words of the Snowball English list (snowballstem.org, algorithms/english/
#: stop.txt) that NLTK leaves out: "could", "ought", "would".
STOP_WORDS: tuple[str, ...] = (
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself",
    "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
    "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that",
    "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had",
    "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as",
    "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into", "through",
    "during", "before", "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off",
    "over", "under", "again", "further", "then", "once", "here", "there", "when", "where", "why", "how",
    "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not",
    "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should",
    "now", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren", "couldn", "didn", "doesn", "hadn", "hasn",
    "haven", "isn", "ma", "mightn", "mustn", "needn", "shan", "shouldn", "wasn", "weren", "won", "wouldn",
    # Snowball English, not in NLTK's list
    "could", "ought", "would",
)
STOP_SET = frozenset(STOP_WORDS)

#: tokens this long (in UTF-8 bytes) or longer are dropped (base64, hashes, minified code)
MAX_TOKEN_BYTES = 40

#: what a token is, for both engines: a run of letters and digits (tantivy's simple tokenizer
#: splits at every character that is not alphanumeric; OpenSearch's ``pattern`` tokenizer
#: emits the runs of this Java pattern)
OPENSEARCH_TOKEN_PATTERN = r"[\p{L}\p{N}\p{M}]+"
_WORD = re.compile(r"[^\W_]+")

# an identifier: runs of letters/digits joined by "_" or "." (no space), or one run with a
# lower-to-upper case change inside; at least one letter
_JOINED = re.compile(r"[^\W_]+(?:[_.][^\W_]+)+")
_CAMEL_WORD = re.compile(r"[^\W_]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z]{2})[^\W_]*")
_CAMEL_CUT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})")
# where :func:`expand` looks: the joints of joined tokens and the case changes inside runs,
# each found by a pattern that starts with one character class (the regex engine skips ahead
# to it), so that plain words cost nothing in Python
_JOINT = re.compile(r"[_.](?=[^\W_])(?<=[^\W_][_.])")
_CASE_CHANGE = re.compile(r"[A-Z](?<=[a-z0-9][A-Z])|[A-Z](?=[a-z]{2})(?<=[A-Z]{2})")


def _extra(token: str) -> str:
    """The forms of ``token`` the word split does not give, or "" when it gives them all."""
    if not any(c.isalpha() for c in token):
        return ""
    forms = []
    joined = _JOINED.fullmatch(token) is not None
    if joined:
        forms.append("".join(_WORD.findall(token)))
    for word in _WORD.findall(token):
        if _CAMEL_WORD.fullmatch(word):
            forms.append(" ".join(_CAMEL_CUT.split(word)))
    return " ".join(forms)


def _joined_at(text: str, i: int) -> tuple[int, int]:
    """The joined token around the joint at ``i``: runs of letters/digits joined by single
    "_" or "." characters."""
    n = len(text)
    start = i
    while True:
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        if start >= 2 and text[start - 1] in "_." and text[start - 2].isalnum():
            start -= 1
            continue
        break
    end = i + 1
    while True:
        while end < n and text[end].isalnum():
            end += 1
        if end + 1 < n and text[end] in "_." and text[end + 1].isalnum():
            end += 1
            continue
        break
    return start, end


def expand(text: str) -> str:
    """``text`` with each identifier followed by its other forms (see the module docstring).
    Text without identifiers comes back unchanged (the same object)."""
    spans: dict[int, int] = {}
    for m in _JOINT.finditer(text):
        start, end = _joined_at(text, m.start())
        spans.setdefault(start, end)
    for m in _CASE_CHANGE.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        end = m.end()
        while end < len(text) and text[end].isalnum():
            end += 1
        spans.setdefault(start, end)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    covered = -1
    for start, end in sorted(spans.items()):
        if start < covered:  # a run inside a joined token: the token's forms cover it
            continue
        covered = end
        extra = _extra(text[start:end])
        if extra:
            out.append(text[last:end])
            out.append(" " + extra)
            last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


# -- the engines' analysers --------------------------------------------------------------------


def tantivy_analyzer() -> Any:
    """The embedded index's analyser (without :func:`expand`, which runs before it)."""
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(list(STOP_WORDS)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def opensearch_analysis(name: str) -> dict[str, Any]:
    """The ``settings.analysis`` of an OpenSearch index whose analyser ``name`` is the chain of
    :func:`tantivy_analyzer`. OpenSearch counts token length in characters, tantivy in UTF-8
    bytes: the same for ASCII, the text identifiers and long codes are made of."""
    return {
        "tokenizer": {f"{name}_words": {"type": "pattern", "pattern": OPENSEARCH_TOKEN_PATTERN, "group": 0}},
        "filter": {
            f"{name}_long": {"type": "length", "max": MAX_TOKEN_BYTES - 1},
            f"{name}_stop": {"type": "stop", "stopwords": list(STOP_WORDS), "ignore_case": False},
            f"{name}_stem": {"type": "stemmer", "language": "porter2"},  # Snowball English
        },
        "analyzer": {
            name: {
                "type": "custom",
                "tokenizer": f"{name}_words",
                "filter": [f"{name}_long", "lowercase", f"{name}_stop", f"{name}_stem"],
            }
        },
    }


# -- terms and stems in Python ------------------------------------------------------------------

_local = threading.local()
_STEMS: dict[str, str] = {}
_STEMS_MAX = 200_000


def _analyzer() -> Any:
    found = getattr(_local, "full", None)
    if found is None:
        found = _local.full = tantivy_analyzer()
    return found


def _stemmer() -> Any:
    found = getattr(_local, "stem", None)
    if found is None:
        import tantivy

        found = _local.stem = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
    return found


def terms(text: str) -> list[str]:
    """The analysed terms of ``text``, exactly as the embedded index analyses it."""
    return [str(t) for t in _analyzer().analyze(expand(text))]


def stem(word: str) -> str:
    """The stem of one word (lower-cased first; no stop-word removal), remembered."""
    found = _STEMS.get(word)
    if found is None:
        out = _stemmer().analyze(word)
        found = str(out[0]) if out else word.lower()
        if len(_STEMS) >= _STEMS_MAX:
            _STEMS.clear()
        _STEMS[word] = found
    return found


def is_stop(word: str) -> bool:
    return word.lower() in STOP_SET


def content_terms(query_terms: Sequence[str]) -> list[str]:
    """Distinct analysed terms, in order (stop words are already gone after analysis)."""
    return list(dict.fromkeys(t for t in query_terms if t))


# -- question terms' weights --------------------------------------------------------------------

#: what an everyday English word of the question (:func:`common_stems`) weighs in the BM25
#: search, beside 1 for any other term. Chosen among 0.3 / 0.5 / 0.7 over every question set
#: (bench/RESULTS.md, 2026-12-02 "everyday words"): 0.5 helped the customers' own words most
#: (hard +0.034) and cost the sets written from the pages' words least
COMMON_WEIGHT = 0.5

# where the everyday words are read from: Faker's en_US lorem word list (MIT; a core dependency
# for the ticket redaction), about 970 of the most common English words, verbs, nouns, adverbs
# and adjectives, as its module documents. Read as data (no import of Faker, whose providers
# cost ~0.18 s to import)
_COMMON_SOURCE = ("providers", "lorem", "en_US", "__init__.py")


def _common_words(path: Path) -> tuple[str, ...]:
    """The ``word_list`` literal of the lorem provider module at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "word_list" for t in node.targets):
            words = ast.literal_eval(node.value)
            if isinstance(words, (tuple, list)) and all(isinstance(w, str) for w in words):
                return tuple(words)
    raise ValueError("no word_list in the module")


@functools.cache
def common_stems() -> frozenset[str]:
    """The stems of the everyday English words (see :data:`COMMON_WEIGHT`), stop words left
    out (they are never searched). Empty, with a warning, when the list cannot be read: every
    term then weighs 1, as before the weights existed."""
    spec = importlib.util.find_spec("faker")
    origin = spec.origin if spec is not None else None
    if origin is None:
        log.warning("the everyday-word list (faker) is not installed: every question word weighs 1")
        return frozenset()
    path = Path(origin).parent.joinpath(*_COMMON_SOURCE)
    try:
        words = _common_words(path)
    except (OSError, SyntaxError, ValueError) as exc:
        log.warning("the everyday-word list could not be read (%s): every question word weighs 1", exc)
        return frozenset()
    return frozenset(stem(w) for w in words if w.isalpha() and w.lower() not in STOP_SET)


def weight(term: str) -> float:
    """What the analysed question term ``term`` weighs in the BM25 search."""
    return COMMON_WEIGHT if term in common_stems() else 1.0


def weighted_words(text: str) -> tuple[list[str], list[str]]:
    """The question's words as the OpenSearch query sends them: (the words searched at full
    weight, the everyday words searched at :data:`COMMON_WEIGHT`), each lower-cased, in order,
    once, stop words left out. ``text`` is expanded like the passages (identifiers whole and in
    parts) and cut into the engine's tokens, so each word is one term of :func:`terms` and
    weighs what :func:`weight` gives its term."""
    full: list[str] = []
    common: list[str] = []
    for word in dict.fromkeys(w.lower() for w in _WORD.findall(expand(text))):
        if word not in STOP_SET:  # never searched
            (full if weight(stem(word)) == 1.0 else common).append(word)
    return full, common
