"""The retrieval use case (DESIGN.md §7): question in, at most 12 grounded excerpts out.

validate -> live sources of the bot (minus disabled, minus an agent's unselected) ->
lexical BM25 top 50 inside the audience's partition, filtered in the search by bot,
visibility set and live generations (+ semantic kNN top 50, same filters, blended with it by
FUSION_SHARES) -> score x weight, ties by priority then recency ->
neighbours collapsed -> (the question's words in a title or file name lift a passage,
FIELD_BOOST: over word-match scores among the loaded passages; with a semantic list, in the
lexical list's first FIELD_BOOST_DEPTH before the fusion) -> (when the bot reranks and the deployment has a
reranker: the first 20 reordered by it) -> the bot's topK (<= 12) excerpts of <= 800 chars
(a benchmark that switches the rescue on may get one more, never a 13th) -> confidence (and
its components), floor, wouldAnswer, operatorGrounded, corpusSize -> recorded for citation checks.
"""

from __future__ import annotations

import itertools
import logging
import math
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import analysis
from ..errors import Code, Conflict, InvalidInput, KnowledgeError, NotFound
from ..model import (
    AUDIENCE_VISIBILITY,
    AUDIENCES,
    OPERATOR_AUTHORED_TYPES,
    Hit,
    LiveSource,
    Passage,
    RetrievalRecord,
    key64,
    partition_of_audience,
)
from ..ports import Embedder, Reranker, Services, TokenEmbedder
from ..refresh import rescue_build
from ..settings import (
    DEFAULT_TOP_K,
    LEXICAL_TOP_K,
    MAX_EXCERPT_CHARS,
    MAX_EXCERPTS,
    MAX_QUESTION_CHARS,
    RECENCY_SECONDS,
    RETRIEVAL_TTL_SECONDS,
)
from . import confidence as conf
from . import ranking

if TYPE_CHECKING:  # numpy: imported when a bot has a model, not with this module
    from .rescue import Probe, RescueModel

log = logging.getLogger(__name__)
SEMANTIC_TOP_K = 50
#: how many of the first candidates a reranker reads (it returns the bot's topK of them)
RERANK_DEPTH = 20
#: how much a question's words in a passage's title, breadcrumb or file name lift it (0: off);
#: chosen on the tuning half of the support suite (bench/RESULTS.md). Over word-match scores
#: it reorders the served passages. A fused (reciprocal-rank) list's scores are not word-match
#: scores (the boost over them lowered that half), so with a semantic list it reorders the
#: lexical list's first FIELD_BOOST_DEPTH hits before the fusion instead
FIELD_BOOST = 3.0
#: the title lift's lower tier: a question term found in the passage's breadcrumb but not in its
#: page title or file name (the product, the folders, the headings under the title) counts this
#: share of one found in the title or file name. A deep heading's generic word ("Harbor UI",
#: "Sbom Integration") then lifts a page half as much as its title would; 0.5 was the weight
#: the previous round's analysis proposed, and over the eleven support sets it raised the
#: lexical mean margin over bm25s (+0.029 -> +0.034) with no set lower (bench/RESULTS.md)
CRUMB_SHARE = 0.5
#: how the lexical and semantic lists are combined: each list's scores over its top score,
#: weighted by these shares (``ranking.blend``; None: reciprocal rank fusion, k = 60). Chosen
#: by leaving one question set out: over the nine support and vocabulary-mismatch sets and
#: NFCorpus, the lexical share that did best on the other nine was 0.35 for every set left out
#: (bench/RESULTS.md); with MiniLM the blend beat rank fusion on 7 of the 10
FUSION_SHARES: dict[str, float] | None = {"lexical": 0.35, "semantic": 0.65}
#: how much the question's neighbouring terms found close together (within NEAR_CHARS
#: characters) in a passage lift it among the served passages of a word-match list (0: off):
#: ``score * (1 + NEAR_BOOST * share of the pairs found so)``. Chosen by leaving one question
#: set out (bench/RESULTS.md); over a semantic list it was mixed, so it is off there
NEAR_BOOST = 0.75
NEAR_CHARS = 15
#: how many of the lexical list's first hits the boost reorders before a fusion (the window
#: of passages a lexical-only answer loads)
FIELD_BOOST_DEPTH = DEFAULT_TOP_K


@dataclass(frozen=True)
class RetrievalRequest:
    bot: str
    q: str
    audience: str = "customer"
    agent_id: str | None = None

    @classmethod
    def parse(cls, bot: str, body: Any) -> RetrievalRequest:
        """From a ``POST retrieve`` body: parsed JSON, or the fields the route checked
        (``api.bodies``: the rules of ``models.RetrievalBody``, without pydantic)."""
        from ..api.bodies import RetrievalFields, parse_retrieval

        model = body if isinstance(body, RetrievalFields) else parse_retrieval(body)
        return cls(bot=bot, q=model.q, audience=model.audience or "customer", agent_id=model.agentId).validated()

    def validated(self, raw_q: object = "") -> RetrievalRequest:
        if raw_q is not None and not isinstance(raw_q, str):
            raise InvalidInput("q must be a string", code=Code.INVALID_INPUT)
        if not self.q.strip():
            raise InvalidInput("the question is empty", code=Code.EMPTY_QUESTION)
        if len(self.q) > MAX_QUESTION_CHARS:
            raise InvalidInput(
                f"the question is longer than {MAX_QUESTION_CHARS} characters", code=Code.QUESTION_TOO_LONG
            )
        if self.audience not in AUDIENCES:
            raise InvalidInput(
                f"audience must be one of {', '.join(AUDIENCES)}", code=Code.INVALID_AUDIENCE
            )
        return self


def _allowed_sources(services: Services, req: RetrievalRequest,
                     live: list[LiveSource]) -> tuple[list[LiveSource], set[str] | None]:
    """The searchable sources the question may use, and the agent's selection (None: all)."""
    if req.agent_id is None:
        return live, None
    agent = services.state.get_agent(req.bot, req.agent_id)
    if agent is None:
        raise NotFound(f"agent {req.agent_id} not found")
    if agent.status != "active":
        raise Conflict("the agent is paused", code="agent_paused")
    if not agent.source_ids:
        return live, None
    selected = set(agent.source_ids)
    return [s for s in live if s.source_id in selected], selected


@dataclass(frozen=True)
class RetrievalOptions:
    """Which parts of the pipeline run (all by default). Benchmarks and regression suites
    switch parts off to measure what each contributes; the API never does."""

    lexical: bool = True
    semantic: bool = True
    #: the corpus-learned rescue (``rescue.py``): off on the answer path, where it did not earn
    #: its place (bench/rescue_gate.py: on the tuning halves it never brought a right page the
    #: list lacked, and most of its passages were wrong); benchmarks switch it on to measure it
    rescue: bool = False
    upstream: bool = True
    #: the bot's reranker, when its ``rerank`` setting is on and the deployment has one
    #: (``retrieval-test`` with ``rerank: false`` turns it off)
    rerank: bool = True
    #: the components read sentence by sentence (``sentence``, ``sentcov``): None computes them
    #: when a confidence model weighs one (``confidence.wants_sentences``), True always
    #: (benchmarks that fit them), False never
    sentences: bool | None = None
    #: the components read from the embedder's per-piece vectors (``softcov``): None computes
    #: them when the embedder's model weighs one (``confidence.wants_tokens``), True always when
    #: the embedder gives piece vectors (benchmarks that fit them), False never
    tokens: bool | None = None


ALL = RetrievalOptions()


def retrieve(
    services: Services, req: RetrievalRequest, *, record: bool = True, options: RetrievalOptions = ALL,
    gaps: bool = True,
) -> dict[str, Any]:
    """The retrieval response (DESIGN.md §5). ``record``: keep the retrieval for citation
    checks; ``gaps``: record a gap when nothing answered (only when ``record`` too; off for
    ``retrieval-test`` and re-checks). The answer-time steps (``knowledge.answer``) classify
    the question, fuse in live data and apply the topic gate."""
    from ..answer import service as answer_time  # here: the module loads topics, gate and gaps

    req.validated()
    index, state = services.index, services.state
    settings, live = state.retrieval_view(req.bot)
    at = answer_time.prepare(services, req.bot, req.q, req.audience, bot_settings=settings)
    sources, selected = _allowed_sources(services, req, live)
    visibilities = AUDIENCE_VISIBILITY[req.audience]
    partition = partition_of_audience(req.audience)
    source_gens = [s.source_gen for s in sources]
    corpus = sum(s.visibility_counts.get(v, 0) for s in sources for v in visibilities)

    semantic: list[Hit] = []
    spaces: list[str] = []
    question_vectors: dict[str, list[float]] = {}
    if options.semantic:
        semantic, spaces, question_vectors = _semantic(services, req, partition, visibilities, source_gens)
    # everyday words weigh less in a word-match answer (analysis.COMMON_WEIGHT); beside a semantic
    # list, which reads them in context, every word weighs alike (NFCorpus hybrid, the tune set)
    weighted = not semantic
    lexical: list[Hit] = (
        index.search_lexical(
            req.bot, partition, req.q, visibilities=visibilities, source_gens=source_gens, limit=LEXICAL_TOP_K,
            weighted=weighted,
        )
        if options.lexical
        else []
    )

    query_terms = index.analyze(req.q)
    idf: tuple[dict[str, float | None], int] | None = None  # the question's IDFs, read once when needed
    title_match: dict[int, float] = {}
    near: dict[int, float] = {}
    fused_lexical = lexical
    if FIELD_BOOST and semantic and lexical and query_terms:  # before the fusion (see FIELD_BOOST)
        idf = _idf(services, req.bot, partition, query_terms)
        head = lexical[:FIELD_BOOST_DEPTH]
        index.hydrate(req.bot, head)
        title_match = _title_match(services, query_terms, idf[0],
                                   [(h.ref.key, h.passage) for h in head if h.passage is not None])
        fused_lexical = ranking.lift(head, title_match, FIELD_BOOST) + lexical[FIELD_BOOST_DEPTH:]

    now = services.clock.now()
    priorities = {key64(s.source_id): s.priority for s in sources}
    cands = ranking.ranked({"lexical": fused_lexical, "semantic": semantic}, priorities=priorities, now=now,
                           recency_seconds=RECENCY_SECONDS, shares=FUSION_SHARES,
                           limits={"lexical": LEXICAL_TOP_K, "semantic": SEMANTIC_TOP_K})

    # Load the stored text of the survivors only. Defence in depth: the search already
    # filtered; a passage outside the audience or the live set reaching this point is a bug,
    # and it must never be served.
    allowed_gens = set(source_gens)
    top_k = top_k_of(settings.top_k)
    reranker = services.reranker if options.rerank and settings.rerank else None
    pool = max(top_k, RERANK_DEPTH) if reranker is not None else top_k  # the reranker reads a deeper pool
    served: list[tuple[ranking.Candidate, Passage]] = []
    while len(served) < pool:
        batch = list(itertools.islice(cands, pool - len(served)))
        if not batch:
            break
        index.hydrate(req.bot, [h for c in batch for h in c.hits])
        for cand in batch:
            p = cand.passage
            if p is not None and p.visibility in visibilities and p.source_gen in allowed_gens:
                served.append((cand, p))

    if (FIELD_BOOST or NEAR_BOOST) and not semantic and len(served) > 1 and query_terms:  # word-match scores only
        idf = _idf(services, req.bot, partition, query_terms)
        served, title_match, near = _field_boost(services, query_terms, idf[0], served)

    rerank_scores: list[float | None] = [None] * len(served)
    if reranker is not None and served:
        served, rerank_scores = _rerank(reranker, req.q, served, top_k)

    by_source = {s.source_id: s for s in sources}
    excerpts: list[dict[str, Any]] = []
    for rank, ((cand, p), reranked) in enumerate(zip(served, rerank_scores, strict=True), start=1):
        src = by_source.get(p.source_id)
        signals = cand.signals if reranked is None else {**cand.signals, "rerank": round(reranked, 4)}
        if cand.ref.key in title_match:  # why it stands where it does (see FIELD_BOOST)
            signals = {**signals, "titleMatch": round(title_match[cand.ref.key], 4)}
        if cand.ref.key in near:  # (see NEAR_BOOST)
            signals = {**signals, "nearMatch": round(near[cand.ref.key], 4)}
        excerpts.append(_excerpt_json(rank, p, src.type if src else None, query_terms, cand.score, cand.reason,
                                      signals))

    room = len(excerpts) < MAX_EXCERPTS  # the rescue's one beyond topK, never a 13th
    probe = _probe_rescue(services, req, settings.rescue_version) if options.rescue and lexical and room else None
    if probe is not None:
        rescued = _rescue(services, req, partition, visibilities, sources, probe, query_terms, lexical, excerpts,
                          {cand.ref.key for cand, _ in served})
        if rescued is not None:
            excerpts.append(rescued)  # appended with its own budget: never reorders, never evicts
    # the semantic components mean what they were fitted on in one vector space only
    space = spaces[0] if len(spaces) == 1 else None
    wants = options.sentences if options.sentences is not None else conf.wants_sentences(space)
    sentence = (_sentence(services, req.bot, space, question_vectors[space], excerpts)
                if wants and space is not None and semantic and excerpts else None)
    wants_tokens = options.tokens if options.tokens is not None else conf.wants_tokens(space)
    pieces = (_embedder_of(services, req.bot, space) if wants_tokens and space is not None and semantic and excerpts
              else None)
    components = _components(services, req.bot, partition, query_terms, excerpts, lexical, semantic, idf, sentence,
                             sentences=wants, question=req.q, weighted=weighted,
                             tokens=pieces if pieces is not None and isinstance(pieces, TokenEmbedder) else None)
    confidence = round(conf.score(components, space), 4) if excerpts else 0.0
    if options.upstream and settings.upstream:
        from . import upstream  # with the outbound client: only bots that fuse another deployment

        remote = upstream.fetch(settings.upstream, req.q, req.audience, policy=services.outbound)
        if remote:
            excerpts = upstream.fuse(excerpts, remote, MAX_EXCERPTS)
            for rank, e in enumerate(excerpts, start=1):
                e["rank"] = rank
    # before recording: live excerpts are citable; an agent reads only the live sources it selected
    excerpts = at.add_live(excerpts, MAX_EXCERPTS, only=selected)
    floor = float(settings.floor)
    operator_grounded = any(
        e.get("sourceType") == answer_time.SOURCE_TYPE
        or (by_source[e["sourceId"]].type if e["sourceId"] in by_source else "") in OPERATOR_AUTHORED_TYPES
        for e in excerpts
    )
    retrieval_id = new_retrieval_id()
    if record:
        state.put_retrieval(
            RetrievalRecord(
                id=retrieval_id,
                bot=req.bot,
                audience=req.audience,
                served=[(str(e["sourceId"]), str(e["documentId"]), str(e["fragmentId"])) for e in excerpts],
                created_at=now,
                expires_at=now + RETRIEVAL_TTL_SECONDS,
            )
        )
    response = {
        "retrievalId": retrieval_id,
        "audience": req.audience,
        "confidence": confidence,
        "confidenceComponents": components.as_json(),
        "floor": floor,
        "wouldAnswer": bool(excerpts) and confidence >= floor,
        "operatorGrounded": operator_grounded,
        "corpusSize": corpus,
        "excerpts": excerpts,
    }
    return at.finish(response, record_gap=record and gaps)


def _field_boost(services: Services, query_terms: list[str], idf: dict[str, float | None],
                 served: list[tuple[ranking.Candidate, Passage]]
                 ) -> tuple[list[tuple[ranking.Candidate, Passage]], dict[int, float], dict[int, float]]:
    """The served passages reordered by ``score * (1 + FIELD_BOOST * m) * (1 + NEAR_BOOST * n)``,
    ``m`` the IDF-weighted share of the question's terms found in the passage's title,
    breadcrumb or file name (a title field's boost), ``n`` the share of the question's
    neighbouring terms found close together in its text (:func:`ranking.together`), applied
    to the window already loaded; ties keep the order. Returns the order, the ``m`` and ``n``."""
    match = _title_match(services, query_terms, idf, [(cand.ref.key, p) for cand, p in served]) if FIELD_BOOST else {}
    near = ({cand.ref.key: ranking.together(p.text, query_terms, NEAR_CHARS) for cand, p in served}
            if NEAR_BOOST and any(idf.get(t) for t in query_terms) else {})
    if not match and not near:
        return served, {}, {}
    order = sorted(range(len(served)), key=lambda i: -served[i][0].score
                   * (1.0 + FIELD_BOOST * match.get(served[i][0].ref.key, 0.0))
                   * (1.0 + NEAR_BOOST * near.get(served[i][0].ref.key, 0.0)))
    return [served[i] for i in order], match, near


def _title_match(services: Services, query_terms: list[str], idf: dict[str, float | None],
                 passages: Sequence[tuple[int, Passage]]) -> dict[int, float]:
    """{passage key: the IDF-weighted share of the question's terms found in the passage's
    page title or file name, a term found only in the rest of its breadcrumb counting
    CRUMB_SHARE of its weight}; empty when no question term is in the partition."""
    known = {t: float(v) for t in query_terms if (v := idf.get(t))}
    total = sum(known.values())
    if total <= 0:
        return {}
    match: dict[int, float] = {}
    for key, p in passages:
        page, crumb = _field_terms(services, p.title, p.breadcrumb, p.path)
        match[key] = sum(w if t in page else CRUMB_SHARE * w if t in crumb else 0.0 for t, w in known.items()) / total
    return match


def _file_words(path: str | None) -> str:
    """A page's file name as words (``roll-back_upgrade.md`` -> ``roll back upgrade``)."""
    return (path or "").rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("_", " ")


def _field_terms(services: Services, title: str | None, breadcrumb: str | None, path: str | None
                 ) -> tuple[frozenset[str], frozenset[str]]:
    """The analysed terms of a passage's page title and file name, and those of its breadcrumb
    (most breadcrumbs repeat the title: analysed once then)."""
    analyze = services.index.analyze
    page = frozenset(analyze(f"{title or ''} {_file_words(path)}"))
    crumb = page if not breadcrumb or breadcrumb == title else frozenset(analyze(breadcrumb))
    return page, crumb


def _rerank(reranker: Reranker, question: str, served: list[tuple[ranking.Candidate, Passage]], top_k: int
            ) -> tuple[list[tuple[ranking.Candidate, Passage]], list[float | None]]:
    """The first ``top_k`` of ``served`` by the reranker's score (ties keep the retrieval's
    order), with their scores. A reranker that fails leaves the retrieval's own order."""
    try:
        scores = reranker.score(question, [p.text for _, p in served])
    except KnowledgeError as exc:
        log.warning("the reranker failed (%s); the retrieval's own order is kept", exc.code)
        return served[:top_k], [None] * min(top_k, len(served))
    if len(scores) != len(served):
        log.warning("the reranker gave %d scores for %d passages; the retrieval's own order is kept",
                    len(scores), len(served))
        return served[:top_k], [None] * min(top_k, len(served))
    order = sorted(range(len(served)), key=lambda i: -scores[i])[:top_k]
    return [served[i] for i in order], [float(scores[i]) for i in order]


def top_k_of(value: object) -> int:
    """A bot's ``topK`` setting as used: an integer in 1..MAX_EXCERPTS (a stored value out of
    range is clamped, one that is not a number is the default)."""
    try:
        k = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return DEFAULT_TOP_K
    return max(1, min(MAX_EXCERPTS, k))


def new_retrieval_id() -> str:
    """32 hex digits: the wall clock in milliseconds, then 80 random bits. Ids in time order
    append to the end of the store's key index instead of landing on a random page of it:
    measured with 200k records kept (a few days of a busy bot), about 125 -> 46 us per record
    for the embedded store's writes. 80 random bits keep ids unguessable and unique."""
    return f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


@dataclass(frozen=True)
class _PendingProbe:
    model: RescueModel
    probe: Probe | None  # None: the question has no term the model knows


def _probe_rescue(services: Services, req: RetrievalRequest, model_version: str | None) -> _PendingProbe | None:
    """The question folded into the bot's rescue model and scored against its candidate
    passages (needs only the question, not the lexical list)."""
    model = rescue_build.load_version(services, req.bot, model_version)
    if model is None or not model.enabled:
        return None
    analyze = rescue_build.analyzer(services.index)  # the analyser the model learned with
    if analyze is None:
        return None
    return _PendingProbe(model, model.probe(analyze(req.q)))


def _rescue(
    services: Services,
    req: RetrievalRequest,
    partition: str,
    visibilities: Sequence[str],
    sources: list[LiveSource],
    pending: _PendingProbe,
    query_terms: list[str],
    lexical: list[Hit],
    excerpts: list[dict[str, Any]],
    served: set[int],
) -> dict[str, Any] | None:
    """At most one passage the words of the question missed, learned from the bot's corpus;
    ``served`` holds the keys of the passages already among the excerpts."""
    model, probe = pending.model, pending.probe  # a probe of None picks nothing
    source_gens = [s.source_gen for s in sources]
    found: dict[int, Passage] = {}

    listed = {h.ref.key: h for h in lexical}

    def allowed(key: int) -> bool:
        if key in served or model.visibility(key) not in visibilities:
            return False
        hit = listed.get(key)
        if hit is not None:  # the lexical search (same filters) found it: load it by address
            services.index.hydrate(req.bot, [hit])
            passage = hit.passage
        else:
            passage = services.index.find_key(req.bot, partition, key, visibilities=visibilities,
                                              source_gens=source_gens)
        if passage is None or passage.visibility not in visibilities or passage.source_gen not in source_gens:
            return False
        found[key] = passage
        return True

    pick = model.pick(probe, [h.ref.key for h in lexical], allowed)
    if pick is None:
        return None
    key, similarity = pick
    p = found[key]
    lexical_hit = next((h for h in lexical if h.ref.key == key), None)
    src = next((s for s in sources if s.source_id == p.source_id), None)
    signals = {"lexicalRank": lexical_hit.rank if lexical_hit else None, "semanticRank": None, "rrf": 0.0,
               "weight": p.weight, "rescueSimilarity": round(similarity, 4)}
    # its own word-match score: the floor and confidence mean what they meant before
    score = lexical_hit.score * p.weight if lexical_hit else 0.0
    return _excerpt_json(len(excerpts) + 1, p, src.type if src else None, query_terms, score, "rescue", signals)


def _excerpt_json(rank: int, p: Passage, source_type: str | None, query_terms: list[str], score: float,
                  reason: str, signals: dict[str, Any]) -> dict[str, Any]:
    """One excerpt of the retrieval response (DESIGN.md §5)."""
    return {
        "rank": rank,
        "sourceId": p.source_id,
        "sourceType": source_type,
        "documentId": p.document_id,
        "fragmentId": p.id,
        "title": p.title,
        "path": p.path,
        "breadcrumb": p.breadcrumb,
        "text": ranking.excerpt(p, query_terms, MAX_EXCERPT_CHARS),
        "url": p.url,
        "score": round(score, 6),
        "reason": reason,
        "signals": signals,
    }


def _semantic(
    services: Services, req: RetrievalRequest, partition: str, visibilities: Sequence[str], source_gens: list[str]
) -> tuple[list[Hit], list[str], dict[str, list[float]]]:
    """Cosine kNN top 50 with the same filters, in every vector space the live generations
    were embedded in (normally one; two while a bot moves to another embedder). Semantic
    search is an enhancement: an embedder that fails leaves the lexical list to answer.
    Returns the hits, the vector spaces the question was embedded in and its vector in each."""
    spaces = services.index.vector_spaces(req.bot, partition, source_gens) if source_gens else set()
    if not spaces:
        return [], [], {}
    try:
        current = services.embedder_for(req.bot)
    except ValueError:
        log.warning("bot %s has a misconfigured embedder; semantic search skipped", req.bot)
        current = None
    queries: dict[str, list[float]] = {}
    for space in spaces:
        embedder = current if current is not None and current.name == space else services.embedder_named(space)
        if embedder is None:
            continue
        try:
            queries[space] = embedder.embed([req.q])[0]
        except KnowledgeError as exc:
            log.debug("question embedding failed (%s); lexical only", exc.code)
    if not queries:
        return [], [], {}
    hits: list[Hit] = services.index.search_vector(
        req.bot, partition, queries, visibilities=visibilities, source_gens=source_gens, limit=SEMANTIC_TOP_K
    )
    return hits, sorted(queries), queries


def _sentence(services: Services, bot: str, space: str, question: list[float], excerpts: list[dict[str, Any]]
              ) -> float | None:
    """The ``sentence`` component: the question's best cosine with one sentence of the first
    excerpts, the sentences embedded in one batch by the embedder of the question's vector
    space; None when it is not at hand or fails (the component then drops out)."""
    texts = [s for e in excerpts[:conf.SENTENCE_EXCERPTS]
             for s in conf.sentences(str(e["text"]), conf.SENTENCES_PER_EXCERPT)]
    if not texts:
        return None
    embedder = _embedder_of(services, bot, space)
    if embedder is None:
        return None
    try:
        vectors = embedder.embed(texts)
    except KnowledgeError as exc:
        log.debug("sentence embedding failed (%s); the sentence component is left out", exc.code)
        return None
    return conf.best_cosine(question, vectors)


def _embedder_of(services: Services, bot: str, space: str) -> Embedder | None:
    """The embedder of the vector space ``space``: the bot's own when it is that one."""
    try:
        current = services.embedder_for(bot)
    except ValueError:
        current = None
    return current if current is not None and current.name == space else services.embedder_named(space)


def _softcov(services: Services, embedder: TokenEmbedder, bot: str, partition: str, question: str, text: str,
             idf: dict[str, float | None], rarest: float) -> float | None:
    """The ``softcov`` component of the question against ``text`` (the top excerpt): one
    forward pass over each; None when the embedder fails (the component then drops out)."""
    words = conf.content_words(question, services.index.analyze)
    extra = [t for _, _, t in words if t not in idf]  # a word analysed alone as the question was not
    if extra:
        idf = {**idf, **_idf(services, bot, partition, extra)[0]}
    weighted = [(a, b, v if (v := idf.get(t)) is not None else rarest) for a, b, t in words]
    if not weighted:
        return None
    try:
        q, e = embedder.embed_tokens([question, text])
    except KnowledgeError as exc:
        log.debug("token embedding failed (%s); the softcov component is left out", exc.code)
        return None
    return conf.soft_coverage(weighted, q, e)


def _components(
    services: Services,
    bot: str,
    partition: str,
    query_terms: list[str],
    excerpts: list[dict[str, Any]],
    lexical: list[Hit],
    semantic: list[Hit],
    idf_n: tuple[dict[str, float | None], int] | None = None,
    sentence: float | None = None,
    *,
    sentences: bool = False,
    question: str = "",
    tokens: TokenEmbedder | None = None,
    weighted: bool = True,
) -> conf.Components:
    """What the confidence is made of (see :mod:`knowledge.retrieve.confidence`); ``sentence``
    is computed apart (it needs the embedder); ``sentences``: read the first excerpts sentence
    by sentence (``sentcov``); ``tokens``: the embedder whose piece vectors give ``softcov``
    (of ``question`` against the top excerpt); ``weighted``: the lexical search weighed the
    question's everyday words (``analysis.weight``)."""
    if not excerpts or not query_terms:
        return conf.Components()
    idf, n = idf_n if idf_n is not None else _idf(services, bot, partition, query_terms)
    rarest = math.log(1.0 + (max(n, 1) - 0.5) / 1.5)  # the IDF of a term one passage holds
    rescued = excerpts[-1] if excerpts[-1]["reason"] == "rescue" else None
    rescue = rescued["signals"].get("rescueSimilarity") if rescued is not None else None
    top = excerpts[0]
    doc_scores = [(h.ref.doc_key, h.score) for h in lexical]
    lexical_scores = [h.score for h in lexical]
    # the most the known terms could score, at the weights the search gave them (analysis.weight)
    weighed = {t: v * analysis.weight(t) if v is not None else None for t, v in idf.items()} if weighted else idf
    strength = conf.strength(lexical[0].score if lexical else None, query_terms, weighed)
    unseen = conf.unseen(query_terms, idf, rarest)
    nearness = conf.nearness(top["signals"].get("semanticScore"), [h.score for h in semantic])
    words = _words_as_written(services, question, query_terms)  # what ``matched`` and ``known`` count
    extra = [t for t in words if t not in idf]  # a word analysed alone as the question was not: looked up
    word_idf = {**idf, **_idf(services, bot, partition, extra)[0]} if extra else idf
    held = conf.held(str(top["text"]), [*query_terms, *extra], word_idf)  # the known ones the top excerpt holds
    return conf.Components(
        coverage=conf.coverage(excerpts[0]["text"], query_terms, idf),
        strength=strength,
        focus=conf.focus(doc_scores),
        unseen=unseen,
        agreement=conf.agreement([h.ref.doc_key for h in lexical], [h.ref.doc_key for h in semantic]),
        similarity=max(-1.0, min(1.0, semantic[0].score)) if semantic else None,
        rescue=float(rescue) if rescue is not None else None,
        reranker=excerpts[0]["signals"].get("rerank"),
        rare=conf.rare(top["text"], query_terms, idf, present=held),
        missing=conf.missing(top["text"], query_terms, idf, rarest, present=held),
        title=conf.title(frozenset().union(*_field_terms(services, top.get("title"), top.get("breadcrumb"),
                                                         top.get("path"))), query_terms, idf),
        depth=conf.focus(doc_scores, depth=conf.DEPTH),
        nearness=nearness,
        distinct=conf.distinct([(h.ref.doc_key, h.score) for h in semantic]) if semantic else None,
        concord=conf.concord([h.ref.doc_key for h in lexical], [h.ref.doc_key for h in semantic]),
        nqc=conf.nqc(lexical_scores, query_terms, idf),
        wig=conf.wig(lexical_scores, query_terms, idf, n),
        sentcov=(conf.sentence_coverage([str(e["text"]) for e in excerpts[:conf.SENTENCE_EXCERPTS]], query_terms, idf)
                 if sentences else None),
        sentence=sentence,
        reach=conf.known_share(strength, unseen),
        grounded=conf.known_share(nearness, unseen),
        softcov=(_softcov(services, tokens, bot, partition, question, str(top["text"]), idf, rarest)
                 if tokens is not None and question else None),
        matched=conf.matched(str(top["text"]), words, word_idf, rarest, present=held),
        known=conf.known(words, word_idf, rarest),
    )


def _words_as_written(services: Services, question: str, query_terms: list[str]) -> list[str]:
    """The question's distinct content words as written: each word's first analysed term, an
    identifier's parts ("PayPal": "pay", "pal") not counted apart. A question without identifiers
    analyses to exactly these (``query_terms``, nothing more to do); one with them is read word by
    word with the rescue's analyser (the embedded index's own, or a standalone instance of the
    same definition: no call to a search server), or as analysed when none is installed."""
    if not question or analysis.expand(question) is question:
        return list(dict.fromkeys(query_terms))
    analyze = rescue_build.analyzer(services.index)
    if analyze is None:
        return list(dict.fromkeys(query_terms))
    return list(dict.fromkeys(t for _, _, t in conf.content_words(question, analyze)))


def _idf(services: Services, bot: str, partition: str, terms: list[str]) -> tuple[dict[str, float | None], int]:
    """BM25-style IDF of each analysed query term inside the asker's partition (None when
    the partition has no passage with the term), and the partition's passage count."""
    dfs, n = services.index.doc_freqs(bot, partition, list(dict.fromkeys(terms)))
    return {term: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) if df > 0 else None for term, df in dfs.items()}, n
