"""Teach from a ticket: a resolved conversation becomes a *draft* article (never searchable
until an operator publishes it), shaped as a question and an answer. Every text is redacted
(``knowledge.answer.redact``) before anything else reads it; only the redacted text and the
counts of what was removed leave this module."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, InvalidInput
from ..lifecycle.validation import MAX_NAME_CHARS, UNKNOWN_FIELD
from .redact import (
    KINDS,
    Redaction,
    Span,
    asked_in,
    names_in,
    recurs_in,
    redact,
    repeated_values,
    replaced,
    signed_names,
    vocabulary_candidates,
)

#: asked once per ticket with the capitalised words of the ticket (lower case): returns those
#: the bot's own corpus knows (product and feature names), which are then no one's name
Vocabulary = Callable[[Collection[str]], Collection[str]]

if TYPE_CHECKING:
    from ..ports import SearchIndex

#: the partitions a bot's passages live in (``model.partition_of_visibility``)
_PARTITIONS = ("customer", "operator")


def index_vocabulary(index: SearchIndex, bot: str) -> Vocabulary:
    """The words of a ticket that ``bot``'s index knows: each word's stem (the index's own
    English stemmer) looked up in both partitions, one document-frequency request each. Only
    the ticket's capitalised words (and lower-case words where a name is introduced, and the
    letters and digits of a code no word introduces, "WD-4001") are asked, never a sentence;
    kb records none of them, but on AWS they travel, unredacted, in one search request to the
    bot's own OpenSearch domain (whose slow log, if an operator turns it on, could keep them).
    An index that cannot answer knows nothing: the redaction then removes more, never less."""
    from ..analysis import stem

    def known(words: Collection[str]) -> set[str]:
        stems = {w: stem(w) for w in words}
        terms = sorted(set(stems.values()))
        found: set[str] = set()
        if not terms:
            return found
        for partition in _PARTITIONS:
            try:
                counts, _ = index.doc_freqs(bot, partition, terms)
            except BackendError:
                return set()
            found.update(t for t, n in counts.items() if n > 0)
        return {w for w, t in stems.items() if t in found}

    return known

ROLES = ("customer", "agent")
MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 16_000

#: stable code (HTTP 400)
INVALID_TICKET = "invalid_ticket"


@dataclass(frozen=True)
class TicketDraft:
    title: str
    body: str
    #: what was removed, per kind (only kinds that occurred)
    redacted: dict[str, int]

    def source_body(self) -> dict[str, Any]:
        """The ``POST sources`` body that creates the draft article (state ``draft``: its
        passages are searchable by no one until the article is published)."""
        return {"type": "article", "name": self.title[:MAX_NAME_CHARS], "visibility": "agent",
                "config": {"title": self.title, "body": self.body, "state": "draft"}}


def _bad(message: str, code: str = INVALID_TICKET, **details: Any) -> InvalidInput:
    return InvalidInput(message, code=code, details=details or None)


def _validated(messages: object, title: object) -> tuple[list[tuple[str, str]], str]:
    if not isinstance(messages, list) or not 1 <= len(messages) <= MAX_MESSAGES:
        raise _bad(f"messages must be a list of 1 to {MAX_MESSAGES} messages")
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_NAME_CHARS:
        raise _bad(f"title must be text of 1 to {MAX_NAME_CHARS} characters")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise _bad(f"message {i} must be an object", index=i)
        unknown = sorted(str(k) for k in message if k not in ("role", "text"))
        if unknown:
            raise _bad(f"message {i}: unknown field(s): {', '.join(unknown)[:200]}", UNKNOWN_FIELD, index=i,
                       fields=unknown[:20])
        role, text = message.get("role"), message.get("text")
        if role not in ROLES:
            raise _bad(f"message {i}: role must be customer or agent", index=i)
        if not isinstance(text, str) or len(text) > MAX_MESSAGE_CHARS:
            raise _bad(f"message {i}: text must be at most {MAX_MESSAGE_CHARS} characters", index=i)
        out.append((str(role), text))
    if not any(r == "customer" and t.strip() for r, t in out) or not any(r == "agent" and t.strip() for r, t in out):
        raise _bad("a ticket needs at least one customer message and one agent message")
    return out, title


def redact_ticket(texts: Sequence[str], *, vocabulary: Vocabulary | None = None,
                  speakers: Sequence[str | None] | None = None) -> list[Redaction]:
    """Each text of one ticket (its title and messages) redacted; a name found in one text
    ("my name is Jonas Weber") is removed from every text ("Thanks Jonas"). With the bot's
    ``vocabulary``, a capitalised word that is no English word and that the bot's corpus does
    not know is read as a name too. ``speakers``: who wrote each text (``"customer"``,
    ``"agent"``, None for the title or when unknown), as many as ``texts``: a date in the reply to
    a question of a date of birth is one, and a user name, key or account number found in one
    message is removed wherever it recurs."""
    who = list(speakers) if speakers is not None else [None] * len(texts)
    # a run of messages from one side reads as one message ("Thanks," then "Brenda Castellano,
    # Office Manager"; an address over two messages), and each keeps its own part of the result
    runs: list[list[int]] = []
    for i, speaker in enumerate(who):
        if runs and speaker is not None and who[runs[-1][-1]] == speaker:
            runs[-1].append(i)
        else:
            runs.append([i])
    joined = ["\n".join(texts[i] for i in run) for run in runs]
    results = _redact_runs(joined, [who[run[0]] for run in runs], vocabulary)
    return [piece for run, result in zip(runs, results, strict=True) for piece in _pieces(
        [texts[i] for i in run], result)]


def _pieces(texts: Sequence[str], result: Redaction) -> list[Redaction]:
    """``result`` (of the texts joined by newlines) cut back into one result per text; a datum
    across two texts is removed from both and counted in the first."""
    out, start = [], 0
    for text in texts:
        end = start + len(text)
        spans, counted = [], []
        for s in result.spans:
            if s.start < end and s.end > start:
                spans.append(Span(max(s.start, start) - start, min(s.end, end) - start, s.kind))
                if s.start >= start:
                    counted.append(spans[-1])
        out.append(replaced(text, spans, counted))
        start = end + 1
    return out


def _redact_runs(texts: Sequence[str], who: Sequence[str | None], vocabulary: Vocabulary | None) -> list[Redaction]:
    words = None if vocabulary is None else set(vocabulary(vocabulary_candidates(texts)))
    # (the names the desk's agents sign with stay where they stand alone: "Hi Mei" to "— Mei")
    staff = signed_names(texts, who)
    known = names_in(texts, known_words=words, speakers=who) - staff
    asked = asked_in(texts, who)
    results = [redact(text, known_names=known, known_words=words, speaker=speaker, asked=a, staff=staff)
               for text, speaker, a in zip(texts, who, asked, strict=True)]
    # a user name, key or account number found in one message is removed where it recurs, and a
    # date of a year a date of birth has is that date written again
    recurring = repeated_values(texts, results)
    years = {y for text, r in zip(texts, results, strict=True) for s in r.spans if s.kind == "date_of_birth"
             for y in re.findall(r"(?:19|20)\d{2}", text[s.start : s.end])}
    if recurring or years:
        results = [redact(text, known_names=known, known_words=words, speaker=speaker, asked=a,
                          known_values=recurring, birth_years=years, staff=staff)
                   if recurs_in(r.text, recurring) or any(y in r.text for y in years) else r
                   for text, speaker, a, r in zip(texts, who, asked, results, strict=True)]
    return results


def draft_from_ticket(messages: object, title: object, *, vocabulary: Vocabulary | None = None) -> TicketDraft:
    """Redact every message and the title, then shape the conversation: customer turns make
    the question, agent turns the answer, each in the order they were written."""
    checked, raw_title = _validated(messages, title)
    counts: Counter[str] = Counter()
    results = redact_ticket([raw_title, *(t for _, t in checked)], vocabulary=vocabulary,
                            speakers=[None, *(role for role, _ in checked)])
    for result in results:
        counts.update(result.counts)
    clean_title = " ".join(results[0].text.split())
    turns = list(zip(checked, results[1:], strict=True))
    question = [r.text.strip() for (role, t), r in turns if role == "customer" and t.strip()]
    answer = [r.text.strip() for (role, t), r in turns if role == "agent" and t.strip()]
    body = "## Question\n\n" + "\n\n".join(question) + "\n\n## Answer\n\n" + "\n\n".join(answer) + "\n"
    return TicketDraft(title=clean_title, body=body, redacted={k: counts[k] for k in KINDS if counts[k]})
