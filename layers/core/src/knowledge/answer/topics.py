"""The topic classifier: is a question about fees, limits or processing time (DESIGN.md §7)?

A topic has *strong* terms, which settle it alone ("fee", "commission", "processing time"),
and *weak* terms, which count only when the question also names a money movement ("how long"
counts in "how long does a withdrawal take", not in "how long is the code valid"). Terms are
words or phrases matched on word boundaries; a trailing ``*`` matches any ending
("withdraw*" matches withdraw, withdrawal, withdrawing). The topic with the most weight wins
(strong 2, weak 1); ties go to the earlier topic in ``TOPICS``.

Each topic also has *evidence* terms: the words a passage must contain to be able to settle a
question of that topic (the gate reads them; see ``knowledge.answer.gate``).

A bot overrides any of it with a settings dict::

    {"topics": {"fees": {"strong": [...], "weak": [...], "evidence": [...],
                         "extraStrong": [...], "extraWeak": [...], "extraEvidence": [...]}},
     "context": [...], "extraContext": [...]}

``strong``/``weak``/``evidence``/``context`` replace the defaults; the ``extra*`` keys add to them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..api.bodies import UNKNOWN_FIELD
from ..errors import InvalidInput

TOPICS: tuple[str, ...] = ("fees", "limits", "processing_time")

#: Stable code for a malformed topic settings dict (HTTP 400).
INVALID_TOPIC_SETTINGS = "invalid_topic_settings"
MAX_TERMS = 500
MAX_TERM_CHARS = 80

#: Words that say the question is about moving or holding money (weak terms need one).
DEFAULT_CONTEXT: tuple[str, ...] = (
    "deposit*", "withdraw*", "transfer*", "payout*", "pay out", "cash out", "cashout", "payment*", "pay",
    "paying", "paid", "send*", "sent", "transaction*", "top up", "top-up", "topup", "refund*", "buy*",
    "bought", "sell*", "sold", "trade*", "trading", "exchange*", "swap*", "convert*", "conversion*",
    "purchase*", "order*", "card*", "bank*", "wire*", "sepa", "ach", "crypto*", "bitcoin", "btc", "eth",
    "usdt", "coin*", "token*", "wallet*", "money", "funds", "fund", "amount*", "balance*", "account funding",
    "plan", "plans", "subscription*", "upgrade*", "invoice*", "billing", "checkout", "credited", "credit",
    "debit*", "loan*", "stake", "staking", "unstake*", "payment method*", "method*", "$", "€", "£", "usd",
    "eur", "gbp", "currency", "currencies", "fiat", "spend*",
)

DEFAULT_TERMS: dict[str, dict[str, tuple[str, ...]]] = {
    "fees": {
        "strong": (
            "fee", "fees", "feeless", "fee-free", "commission*", "surcharge*", "service charge*",
            "transaction cost*", "processing charge*", "gas fee*", "network fee*", "markup", "mark-up",
        ),
        "weak": (
            "charge", "charges", "charged", "charging", "cost", "costs", "costing",
            "pricing", "how much", "free", "for free", "free of charge", "deduct*", "expensive", "cheap*",
        ),
        "evidence": (
            "fee", "fees", "commission*", "charge*", "cost*", "free", "%", "percent*", "price*", "pricing",
            "surcharge*", "deduct*", "spread", "rate", "rates",
        ),
    },
    "limits": {
        "strong": (
            "minimum deposit*", "minimum withdraw*", "maximum deposit*", "maximum withdraw*", "deposit limit*",
            "withdrawal limit*", "withdraw limit*", "transaction limit*", "daily limit*", "weekly limit*",
            "monthly limit*", "spending limit*", "transfer limit*", "payout limit*", "min deposit*",
            "max deposit*", "min withdraw*", "max withdraw*", "minimum amount*", "maximum amount*",
            "min amount*", "max amount*", "how much can i", "how much can we", "how much am i allowed",
        ),
        "weak": (
            "limit", "limits", "minimum", "minimums", "maximum", "maximums", "min", "max", "cap", "capped",
            "caps", "at least",
            "at most", "up to", "lowest", "highest", "smallest", "largest", "biggest", "threshold*",
            "too small", "too large", "too big", "too much", "too little", "exceed*", "how little", "limited",
        ),
        "evidence": (
            "minimum*", "maximum*", "min", "max", "limit*", "cap", "capped", "at least", "at most", "up to",
            "threshold*", "exceed*",
        ),
    },
    "processing_time": {
        "strong": (
            "processing time*", "processing period*", "processing speed", "business day*", "working day*",
            "banking day*", "how long does it take", "how long will it take", "how long do",
            "how long does", "how long will", "not arrived", "hasn't arrived", "has not arrived",
            "not received", "haven't received", "have not received", "still pending", "still not",
        ),
        "weak": (
            "how long", "how many days", "how many hours", "how many minutes", "how soon", "how fast",
            "how quickly", "when will", "when does", "when do", "when can", "take", "takes", "taking",
            "arrive", "arrives", "arrival", "arrived", "pending", "delay*", "wait*", "slow", "stuck",
            "eta", "instant", "instantly", "immediately", "confirmations", "credited", "reflect*", "show up",
            "settle*",
        ),
        "evidence": (
            "minute*", "hour*", "day*", "week*", "instant*", "immediately", "processing time*",
            "within", "confirmation*", "business day*", "working day*", "takes", "up to",
        ),
    },
}

_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*|[$€£%]")


def normalise(text: str) -> list[str]:
    """Lower-case words (hyphenated and apostrophe words kept whole) and currency signs."""
    return _WORD.findall(text.lower().replace("’", "'"))


@dataclass(frozen=True)
class _Term:
    words: tuple[str, ...]
    prefix: bool  # the last word may have any ending

    @classmethod
    def parse(cls, raw: str) -> _Term:
        prefix = raw.endswith("*")
        words = tuple(normalise(raw.rstrip("*")))
        return cls(words, prefix)

    def found_in(self, words: list[str], index: _Index | None = None) -> bool:
        """Whether the term occurs in ``words``; ``index`` (``_Index(words)``, built once per
        text by the caller) settles most terms with one set lookup: every question is checked
        against every term, so this is on each question's path."""
        n = len(self.words)
        if n == 0:
            return False
        head, last = self.words[:-1], self.words[-1]
        if index is not None:
            if n == 1:
                return last in (index.prefixes if self.prefix else index.present)
            if head[0] not in index.present:
                return False
        for i in range(len(words) - n + 1):
            if tuple(words[i : i + n - 1]) != head:
                continue
            word = words[i + n - 1]
            if word == last or (self.prefix and word.startswith(last)):
                return True
        return False


class _Index:
    """A text's words as sets: the words, and every non-empty prefix of each (for the
    terms ending in ``*``)."""

    __slots__ = ("prefixes", "present")

    def __init__(self, words: list[str]):
        self.present = frozenset(words)
        self.prefixes = frozenset(w[:i] for w in self.present for i in range(1, len(w) + 1))


def _terms(raw: Iterable[str]) -> tuple[_Term, ...]:
    return tuple(t for t in (_Term.parse(r) for r in raw) if t.words)


@dataclass(frozen=True)
class TopicRule:
    strong: tuple[_Term, ...]
    weak: tuple[_Term, ...]
    evidence: tuple[_Term, ...]


class _Counter:
    """How many of a list of terms a text holds (a term listed twice counts twice), as
    ``sum(t.found_in(words, index) for t in terms)`` gives it, with the one-word terms (most of
    them) looked up from the text's side: a question has a few words, a list a hundred terms."""

    __slots__ = ("exact", "phrases", "prefixes")

    def __init__(self, terms: Iterable[_Term]):
        self.exact: dict[str, int] = {}
        self.prefixes: dict[str, int] = {}
        self.phrases: list[_Term] = []
        for t in terms:
            if len(t.words) > 1:
                self.phrases.append(t)
            else:
                table = self.prefixes if t.prefix else self.exact
                table[t.words[0]] = table.get(t.words[0], 0) + 1

    def count(self, words: list[str], index: _Index) -> int:
        exact, prefixes = self.exact, self.prefixes
        found = sum(exact[w] for w in index.present if w in exact) if exact else 0
        if prefixes:
            found += sum(prefixes[p] for p in index.prefixes if p in prefixes)
        return found + sum(t.found_in(words, index) for t in self.phrases)


class TopicClassifier:
    """Classifies questions into one of ``TOPICS`` or None; build one per bot with
    :meth:`from_settings` (cheap: a few hundred short tuples)."""

    def __init__(self, rules: Mapping[str, TopicRule], context: tuple[_Term, ...]):
        self.rules = dict(rules)
        self.context = context
        self._context = _Counter(context)
        self._counters = {topic: (_Counter(rule.strong), _Counter(rule.weak)) for topic, rule in self.rules.items()}

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None = None) -> TopicClassifier:
        """The defaults, changed by a bot's settings dict (see the module docstring); a
        malformed dict raises ``InvalidInput`` (``unknown_field`` or ``invalid_topic_settings``)."""
        settings = dict(settings or {})
        _known(settings, {"topics", "context", "extraContext", "gate"}, "topic settings")
        topics = settings.get("topics") or {}
        if not isinstance(topics, Mapping):
            raise InvalidInput("topics must be an object", code=INVALID_TOPIC_SETTINGS)
        _known(topics, set(TOPICS), "topics")
        rules: dict[str, TopicRule] = {}
        for topic in TOPICS:
            override = topics.get(topic) or {}
            if not isinstance(override, Mapping):
                raise InvalidInput(f"topics.{topic} must be an object", code=INVALID_TOPIC_SETTINGS)
            kinds = ("strong", "weak", "evidence")
            _known(override, {*kinds, *(f"extra{k.title()}" for k in kinds)}, f"topics.{topic}")
            lists = {}
            for kind in kinds:
                base = _term_list(override[kind], f"topics.{topic}.{kind}") if kind in override else list(
                    DEFAULT_TERMS[topic][kind])
                extra = _term_list(override.get(f"extra{kind.title()}", []), f"topics.{topic}.extra{kind.title()}")
                lists[kind] = _terms([*base, *extra])
            rules[topic] = TopicRule(lists["strong"], lists["weak"], lists["evidence"])
        context = _term_list(settings["context"], "context") if "context" in settings else list(DEFAULT_CONTEXT)
        context += _term_list(settings.get("extraContext", []), "extraContext")
        return cls(rules, _terms(context))

    def scores(self, question: str) -> dict[str, int]:
        """Weight per topic: 2 per strong term found, 1 per weak term when the question
        also names a money movement."""
        words = normalise(question)
        present = _Index(words)
        has_context = self._context.count(words, present) > 0
        out: dict[str, int] = {}
        for topic, (strong, weak) in self._counters.items():
            score = 2 * strong.count(words, present)
            if has_context:
                score += weak.count(words, present)
            out[topic] = score
        return out

    def classify(self, question: str) -> str | None:
        """The question's topic, or None when it is about none of them."""
        scores = self.scores(question)
        best = max(TOPICS, key=lambda t: (scores.get(t, 0), -TOPICS.index(t)))
        return best if scores.get(best, 0) > 0 else None

    def speaks_of(self, text: str, topic: str) -> bool:
        """Whether a passage has the words that can settle a question of ``topic``."""
        rule = self.rules.get(topic)
        if rule is None:
            return False
        words = normalise(text)
        present = _Index(words)
        return any(t.found_in(words, present) for t in rule.evidence)


def _known(body: Mapping[str, Any], allowed: set[str], what: str) -> None:
    unknown = sorted(str(k) for k in body if k not in allowed)
    if unknown:
        raise InvalidInput(f"unknown field(s) in {what}: {', '.join(unknown)[:200]}", code=UNKNOWN_FIELD,
                           details={"fields": unknown[:20]})


def _term_list(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_TERMS:
        raise InvalidInput(f"{what} must be a list of at most {MAX_TERMS} terms", code=INVALID_TOPIC_SETTINGS)
    for term in value:
        if not isinstance(term, str) or not term.strip() or len(term) > MAX_TERM_CHARS or not normalise(term):
            raise InvalidInput(f"{what} holds a term that is empty, not text or longer than {MAX_TERM_CHARS} "
                               "characters", code=INVALID_TOPIC_SETTINGS)
    return list(value)


DEFAULT_CLASSIFIER = TopicClassifier.from_settings(None)


def classify(question: str, settings: Mapping[str, Any] | None = None) -> str | None:
    """The topic of ``question`` under a bot's settings dict (the defaults when None)."""
    clf = DEFAULT_CLASSIFIER if not settings else TopicClassifier.from_settings(settings)
    return clf.classify(question)
