"""Answer-time use cases over ``Services``: one call per place the retrieval and the API need
them (see the package docstring for where each is called)."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import BackendError, InvalidInput, NotFound
from ..model import AUDIENCE_VISIBILITY, GAP_OUTCOMES, GapRecord
from ..ports import Services
from ..retrieve.ranking import RRF_K
from . import gaps as gaps_mod
from .gate import gate, gate_enabled
from .topics import DEFAULT_CLASSIFIER, TopicClassifier

if TYPE_CHECKING:
    from .live import LiveReader

# ``live`` (pydantic) and ``redact`` (phonenumbers, stdnum) are imported where first needed:
# most questions have no topic and answer, and a cold start should not pay for them.

#: the live source type and the weight live passages are fused in with (``live`` holds the same)
SOURCE_TYPE = "live"
LIVE_WEIGHT = 1.3

log = logging.getLogger(__name__)

#: at most this many gaps are clustered per request (the most recent)
MAX_GAPS_CLUSTERED = 5000


def answer_settings(bot_settings: object) -> dict[str, Any]:
    """A bot's answer-time settings: the ``answer`` dict of its settings when it has one
    (``{"topics": ..., "context": ..., "gate": bool, "gapRetentionDays": N}``), else the
    defaults."""
    value = getattr(bot_settings, "answer", None)
    return dict(value) if isinstance(value, Mapping) else {}


def classifier_for(settings: Mapping[str, Any]) -> TopicClassifier:
    """The bot's classifier (built once per distinct set of terms, not once per question)."""
    topical = {k: v for k, v in settings.items() if k in ("topics", "context", "extraContext")}
    return _classifier(json.dumps(topical, sort_keys=True)) if topical else DEFAULT_CLASSIFIER


@functools.lru_cache(maxsize=64)
def _classifier(topical: str) -> TopicClassifier:
    return TopicClassifier.from_settings(json.loads(topical))


def fuse_live(excerpts: Sequence[dict[str, Any]], live: Sequence[dict[str, Any]], limit: int,
              k: int = RRF_K) -> list[dict[str, Any]]:
    """Live excerpts fused in by rank: the n-th live passage scores ``1.3/(k + n)`` against the
    n-th excerpt's ``1/(k + n)``; ranks are renumbered and the list cut at ``limit``."""
    scored = [(1.0 / (k + i), 1, i, e) for i, e in enumerate(excerpts, start=1)]
    scored += [(LIVE_WEIGHT / (k + i), 0, i, e) for i, e in enumerate(live, start=1)]
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    out = []
    for rank, (score, kind, _, e) in enumerate(scored[:limit], start=1):
        item = dict(e)
        item["rank"] = rank
        if kind == 0:  # a live excerpt: its score is its fused score
            item["score"] = round(score, 6)
            item["signals"] = {**item.get("signals", {}), "rrf": round(score, 6)}
        out.append(item)
    return out


@dataclass
class AnswerTime:
    """The answer-time state of one question: its topic, then the live excerpts and the gate."""

    services: Services
    bot: str
    question: str
    audience: str
    settings: dict[str, Any]
    classifier: TopicClassifier
    topic: str | None
    reader: LiveReader | None
    live: list[dict[str, Any]] = field(default_factory=list)
    #: live sources that could not be read for this question: ``{"sourceId", "code"}``
    unavailable: list[dict[str, str]] = field(default_factory=list)

    def add_live(self, excerpts: Sequence[dict[str, Any]], limit: int, *,
                 only: Collection[str] | None = None) -> list[dict[str, Any]]:
        """The excerpts with this question's live passages fused in (unchanged when the
        question has no topic or no live source gives anything). Call before recording the
        retrieval, so the live excerpts can be cited. ``only``: the source ids an agent
        selected (None: every source)."""
        failures: list[dict[str, str]] = []
        live = live_excerpts(self.services, self.bot, self.question, self.topic, self.audience, reader=self.reader,
                             failures=failures, only=only)
        self.unavailable = failures
        self.live = live
        return fuse_live(excerpts, self.live, limit) if self.live else list(excerpts)

    def finish(self, response: dict[str, Any], *, record_gap: bool = True) -> dict[str, Any]:
        """Sets ``topic`` and ``gate`` on the response, turns ``wouldAnswer`` off when the
        gate did not pass, lists the live sources that could not be read
        (``liveUnavailable``), and records a gap when the answer is nothing, below the floor
        or gated. Returns the response (changed in place)."""
        verdict = gate(self.topic, response.get("excerpts") or [], enabled=gate_enabled(self.settings),
                       classifier=self.classifier)
        response["topic"] = self.topic
        response["gate"] = verdict
        if self.unavailable:
            response["liveUnavailable"] = list(self.unavailable)
        if verdict is not None and not verdict["passed"]:
            response["wouldAnswer"] = False
        if record_gap:
            outcome = gaps_mod.outcome_of(response)
            if outcome is not None:
                self._record(outcome)
        return response

    def _record(self, outcome: str) -> None:
        """Hands the gap to the store, which builds it (redacting the question) and writes it
        behind the answer where it can (``StateStore.put_gap_later``)."""
        if outcome not in GAP_OUTCOMES:
            raise ValueError(f"unknown gap outcome {outcome!r}")
        bot, audience, question, topic = self.bot, self.audience, self.question, self.topic
        now, retention = self.services.clock.now(), gaps_mod.retention_of(self.settings)

        def make() -> GapRecord:
            return gaps_mod.new_gap(bot, audience, question, outcome, topic, now, retention_seconds=retention)

        try:
            self.services.state.put_gap_later(make)
        except BackendError:  # a gap is a statistic: failing to keep one never fails the answer
            log.warning("a gap could not be recorded for bot %s", self.bot)


def prepare(services: Services, bot: str, question: str, audience: str, *, bot_settings: object = None,
            reader: LiveReader | None = None) -> AnswerTime:
    """Classify the question under the bot's settings; the first call at answer time."""
    settings = answer_settings(bot_settings if bot_settings is not None else services.state.get_bot(bot))
    classifier = classifier_for(settings)
    return AnswerTime(services=services, bot=bot, question=question, audience=audience, settings=settings,
                      classifier=classifier, topic=classifier.classify(question), reader=reader)


def live_excerpts(services: Services, bot: str, question: str, topic: str | None, audience: str, *,
                  reader: LiveReader | None = None, failures: list[dict[str, str]] | None = None,
                  only: Collection[str] | None = None) -> list[dict[str, Any]]:
    """The excerpts the bot's live sources give a question, in source order (ranks from 1);
    none unless the question has a topic. Only sources the audience may see (and, ``only``,
    an agent selected) are read: the pushed tables and, when the config names one, the
    operator's endpoint (``answer.endpoint``). A source that could not be read gives nothing
    and is noted in ``failures``."""
    if topic is None:
        return []
    visible = AUDIENCE_VISIBILITY.get(audience, ())
    sources = [source for source in services.state.list_sources(bot)
               if source.type == SOURCE_TYPE and source.visibility in visible and (only is None or source.id in only)]
    if not sources:  # most bots have no live source: the readers (and pydantic) are not loaded
        return []
    from .endpoint import EndpointLiveReader
    from .live import source_passages

    passages = []
    for source in sources:
        reader = reader or EndpointLiveReader(services.state, services.outbound, services.clock)
        passages.extend(source_passages(reader, source, question, topic, failures))
    return [p.excerpt(rank) for rank, p in enumerate(passages, start=1)]


def replace_live_table(services: Services, bot: str, table: str, body: object,
                       source_id: str | None = None) -> dict[str, Any]:
    """``PUT live/{table}``: validate the rows and replace the table at once (the next
    question reads it; nothing is reindexed). The bot's live source is the one named, or its
    only one."""
    from .live import validate_table

    rows = validate_table(table, body)
    live = [s for s in services.state.list_sources(bot) if s.type == SOURCE_TYPE]
    if source_id is not None:
        live = [s for s in live if s.id == source_id]
    if not live:
        raise NotFound("this bot has no live source")
    if len(live) > 1:
        raise InvalidInput("this bot has several live sources: name one", code="ambiguous_live_source")
    services.state.put_live_table(bot, live[0].id, table, rows)
    return {"sourceId": live[0].id, "table": table, "rows": len(rows),
            "enabled": sum(1 for r in rows if r.get("enabled", True))}


def gap_clusters(services: Services, bot: str, audience: str | None = None, since: float | None = None, *,
                 embed: Callable[[Sequence[str]], list[list[float]]] | None = None) -> list[dict[str, Any]]:
    """``GET gaps``: the bot's gaps clustered, most frequent first. ``embed`` (the bot's
    embedder, when it has one) clusters by meaning instead of wording."""
    if audience is not None and audience not in AUDIENCE_VISIBILITY:
        raise InvalidInput("audience must be customer, public or operator", code="invalid_audience")
    now = services.clock.now()
    settings = answer_settings(services.state.get_bot(bot))
    oldest = now - gaps_mod.retention_of(settings)
    found = services.state.list_gaps(bot, audience, since=max(oldest, since or 0.0), now=now)
    found = found[-MAX_GAPS_CLUSTERED:]
    vectors = embed([g.question for g in found]) if embed is not None and found else None
    return gaps_mod.cluster_gaps(found, vectors)


def recheck_gaps(clusters: Sequence[dict[str, Any]], ask: Callable[[str], Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``POST gaps/recheck``: re-ask every cluster's examples (``ask`` runs a retrieval on the
    current index, without recording a gap) and mark the clusters whose every example now
    answers above the floor."""
    out = []
    for cluster in clusters:
        examples = list(cluster.get("examples") or [])
        answered = [ex for ex in examples if gaps_mod.outcome_of(ask(ex)) is None]
        out.append({**cluster, "answered": len(answered), "nowAnswers": bool(examples) and
                    len(answered) == len(examples)})
    return out
