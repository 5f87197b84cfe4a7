"""The ports the core depends on. Adapters live in ``knowledge.adapters.<backend>`` and are
named ``<Backend><Port>``; they take injected clients and raise ``BackendError`` from backend
errors. Contract tests in ``tests/contract`` run the same suite against every adapter."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import BackendError
from .model import (
    Agent,
    BotSettings,
    Document,
    GapRecord,
    Hit,
    LiveSource,
    Passage,
    RetrievalRecord,
    Source,
    Token,
    TokenVectors,
)
from .settings import PRODUCTION_OUTBOUND, OutboundPolicy


class Clock(Protocol):
    def now(self) -> float: ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class StateStore(Protocol):
    """Sources, documents, agents, tokens, leases, generations and retrieval records."""

    # bots
    def get_bot(self, bot: str) -> BotSettings: ...
    def put_bot(self, settings: BotSettings) -> None: ...
    def set_rescue_version(self, bot: str, version: str | None) -> None:
        """Set only the bot's ``rescue_version``: a model learned in the background never
        writes back settings an operator changed meanwhile."""
        ...
    def list_bots(self) -> list[str]: ...
    def version(self) -> object | None:
        """A value that changes whenever anything committed, when the store can tell that
        cheaply (SQLite); None when it cannot (callers then re-read on a timer)."""
        ...

    # sources
    def put_source(self, source: Source) -> None: ...
    def get_source(self, bot: str, source_id: str) -> Source | None: ...
    def list_sources(self, bot: str) -> list[Source]: ...
    def delete_source(self, bot: str, source_id: str) -> None: ...
    def update_source(self, bot: str, source_id: str, **fields: object) -> Source: ...
    def live_sources(self, bot: str) -> list[LiveSource]: ...
    def retrieval_view(self, bot: str) -> tuple[BotSettings, list[LiveSource]]:
        """The bot's settings and live sources, read together: what every question needs first."""
        ...
    def due_sources(self, now: float, limit: int = 50) -> list[Source]: ...

    # leases (owner-conditioned; DESIGN.md §6, §9)
    def acquire_lease(self, bot: str, source_id: str, owner: str, now: float, ttl: float) -> bool: ...
    def extend_lease(self, bot: str, source_id: str, owner: str, now: float, ttl: float) -> bool: ...
    def release_lease(self, bot: str, source_id: str, owner: str) -> None: ...
    def expired_leases(self, now: float) -> list[Source]: ...

    # generations
    def begin_generation(self, bot: str, source_id: str, owner: str) -> int: ...
    def commit_generation(
        self,
        bot: str,
        source_id: str,
        owner: str,
        generation: int,
        *,
        checksum: str,
        documents: Sequence[Document],
        counters: dict[str, int],
        now: float,
        visibility_counts: dict[str, int] | None = None,
        error_code: str | None = None,
    ) -> int | None:
        """Flip the live generation (conditioned on the lease), write checksum, counters and
        documents in one write; the retired generation, or None when the lease was lost."""
        ...
    def finish_generation(self, bot: str, source_id: str, generation: int) -> None: ...
    def withdraw_generation(self, bot: str, source_id: str, **changes: object) -> int | None:
        """Take a source out of every search (no live generation) with ``changes``, in one
        write; the generation that was live, now retired."""
        ...
    def orphan_generations(self) -> list[tuple[str, str, int]]: ...
    def stale_staging(self, now: float) -> list[tuple[str, str, int]]:
        """Staging generations whose writer's lease expired."""
        ...

    # documents
    def list_documents(self, bot: str, source_id: str) -> list[Document]: ...

    # agents
    def get_agent(self, bot: str, agent_id: str) -> Agent | None: ...
    def put_agent(self, agent: Agent) -> None: ...
    def list_agents(self, bot: str) -> list[Agent]: ...

    # tokens
    def put_token(self, token: Token) -> None: ...
    def get_token(self, token_hash: str) -> Token | None: ...
    def list_tokens(self, bot: str) -> list[Token]:
        """The bot's tokens, oldest first."""
        ...
    def delete_token(self, bot: str, token_id: str) -> bool:
        """Revoke the bot's token named ``token_id`` (``Token.id``); False when there is none."""
        ...
    def touch_token(self, token_hash: str, now: float) -> None:
        """Record that the token was used at ``now`` (nothing when it was revoked meanwhile)."""
        ...

    # retrievals
    def put_retrieval(self, record: RetrievalRecord) -> None: ...
    def get_retrieval(self, bot: str, retrieval_id: str) -> RetrievalRecord | None: ...

    # answer time (knowledge.answer): live tables and gaps
    def put_live_table(self, bot: str, source_id: str, table: str, rows: list[dict[str, Any]]) -> None:
        """Replace one table of a live source in one write: a reader sees all the old rows or
        all the new ones, never a mix."""
        ...
    def get_live_tables(self, bot: str, source_id: str) -> dict[str, list[dict[str, Any]]]:
        """Every table of a live source, by name (empty when none was ever written)."""
        ...
    def delete_live_tables(self, bot: str, source_id: str) -> int:
        """Remove every table of a live source (its source is deleted); how many there were."""
        ...
    def put_gap(self, gap: GapRecord) -> None: ...
    def put_gap_later(self, make: Callable[[], GapRecord]) -> None:
        """Store the gap ``make()`` builds (building one redacts its question: more work than
        the rest of an unanswered question) off the question's path where the store can: the
        embedded store builds and commits queued gaps together on its writer thread, before its
        next ``list_gaps``, at ``close`` and at exit; nothing unredacted is ever written. A
        store that cannot (DynamoDB: a Lambda is frozen once it returns) builds and puts it now."""
        ...
    def list_gaps(self, bot: str, audience: str | None, *, since: float, now: float) -> list[GapRecord]:
        """The bot's gaps (of one audience, or all when None) created at or after ``since``
        that have not expired at ``now``, oldest first."""
        ...


class BlobStore(Protocol):
    def put(self, key: str, data: bytes) -> None: ...
    def get(self, key: str) -> bytes: ...
    def exists(self, key: str) -> bool: ...
    def delete(self, key: str) -> None: ...
    def list(self, prefix: str) -> list[str]: ...


class UploadSigner(Protocol):
    """Lets a client send a file straight to the blob store (a presigned S3 POST): the store
    itself enforces the key, the size range and the content type until ``expires_in``."""

    def presign_upload(self, key: str, *, content_type: str, max_bytes: int, expires_in: int) -> dict[str, Any]:
        """``{"url", "fields"}``: POST ``fields`` then the file (form field ``file``) to ``url``."""
        ...


class SearchIndex(Protocol):
    """Lexical (+ later vector) search, partitioned per (bot, audience partition).

    Every search takes the filters that decide what may be returned and applies them
    *inside* the search, before ranking and limit."""

    def write(self, bot: str, passages: Iterable[Passage], *, space: str | None = None) -> int:
        """Index passages (with their vectors, in vector space ``space``, when they have them)."""
        ...
    def delete_generation(self, bot: str, source_id: str, generation: int) -> None: ...
    def delete_bot(self, bot: str) -> None: ...
    def search_lexical(
        self,
        bot: str,
        partition: str,
        query: str,
        *,
        visibilities: Sequence[str],
        source_gens: Sequence[str],
        limit: int = 50,
        weighted: bool = True,
    ) -> list[Hit]: ...
    def search_vector(
        self,
        bot: str,
        partition: str,
        queries: Mapping[str, Sequence[float]],
        *,
        visibilities: Sequence[str],
        source_gens: Sequence[str],
        limit: int = 50,
    ) -> list[Hit]:
        """Cosine kNN with the same filters; ``queries`` maps a vector space to the question's
        vector in it."""
        ...
    def vector_spaces(self, bot: str, partition: str, source_gens: Sequence[str]) -> set[str]:
        """The vector spaces the given live generations were embedded in."""
        ...
    def hydrate(self, bot: str, hits: Sequence[Hit]) -> None: ...
    def count(self, bot: str, partition: str, source_gens: Sequence[str]) -> int: ...
    def analyze(self, text: str) -> list[str]: ...
    def doc_freqs(self, bot: str, partition: str, terms: Sequence[str]) -> tuple[dict[str, int], int]: ...
    def iter_passages(self, bot: str, source_gens: Sequence[str]) -> Iterator[tuple[int, str, str]]: ...
    def find_key(
        self, bot: str, partition: str, key: int, *, visibilities: Sequence[str], source_gens: Sequence[str]
    ) -> Passage | None: ...
    def compact(self, bot: str, *, force: bool = False) -> list[dict[str, Any]]: ...


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class TokenEmbedder(Protocol):
    """An embedder that can also give the per-piece vectors of its model's last layer (the
    local model; Bedrock's embedders give one vector per text only). Raises ``KnowledgeError``
    when it cannot."""

    name: str

    def embed_tokens(self, texts: Sequence[str]) -> list[TokenVectors]: ...


class Reranker(Protocol):
    """Scores how well each text answers the question, reading both together (a
    cross-encoder; Bedrock's rerank models on AWS): one score in [0, 1] per text, in order.
    Raises ``KnowledgeError`` when it cannot answer; retrieval then keeps its own order."""

    name: str

    def score(self, question: str, texts: Sequence[str]) -> list[float]: ...


class Workflow(Protocol):
    """Runs refreshes: Step Functions executions on AWS, the in-process worker embedded."""

    def start_refresh(self, bot: str, source_id: str, *, force: bool = False, reason: str = "manual",
                      token: str | None = None) -> dict[str, Any]: ...
    def start_reindex(self, bot: str, *, force: bool = False) -> dict[str, Any]: ...
    def cancel_refresh(self, bot: str, source_id: str) -> int:
        """Stop the queued or running refresh of a source; how many jobs were stopped."""
        ...


class RefreshQueue(Protocol):
    """A bounded queue of refreshes to start: the nightly reindex queues one per source and
    each scheduler run starts them only while few enough run (AWS: an SQS queue)."""

    def enqueue(self, bot: str, token: str) -> dict[str, Any]:
        """Queue a refresh of every enabled source of ``bot``; ``token`` names the run."""
        ...

    def drain(self) -> list[dict[str, Any]]:
        """Start queued refreshes while capacity lasts; the jobs started."""
        ...


EmbedderFactory = Callable[[str, dict[str, Any]], "Embedder | None"]


def no_embedders(name: str, options: dict[str, Any]) -> Embedder | None:
    raise ValueError(f"no embedder factory is configured (asked for {name!r})")


@dataclass
class Services:
    """Everything a use case needs, typed by the ports above; built once per process by a
    composition root (``knowledge.wiring``)."""

    state: StateStore
    blobs: BlobStore
    index: SearchIndex
    clock: Clock = field(default_factory=SystemClock)
    #: embedder of bots that set none (``KB_EMBEDDER`` in the embedded mode)
    default_embedder: str = "none"
    data_dir: Path | None = None
    workflow: Workflow | None = None
    #: the nightly reindex's bounded queue, when the deployment has one (AWS)
    reindex_queue: RefreshQueue | None = None
    #: builds an embedder from a name and a bot's options (the composition root sets it)
    embedder_factory: EmbedderFactory = no_embedders
    #: embedders built so far, by vector-space name, so questions can still be embedded in
    #: a space a bot is moving away from while its sources are re-embedded
    embedders: dict[str, Embedder] = field(default_factory=dict)
    #: per-process caches of derived data (e.g. loaded rescue models), keyed by purpose
    caches: dict[str, Any] = field(default_factory=dict)
    #: how outbound calls to configured URLs (crawler, upstream, embedder) may connect; only
    #: ``build_local_services`` under ``kb serve --dev-allow-loopback`` relaxes it
    outbound: OutboundPolicy = PRODUCTION_OUTBOUND
    #: the deployment's reranker (``KB_RERANKER``), used for the bots whose ``rerank`` is on
    reranker: Reranker | None = None
    #: presigned uploads (AWS: the S3 bucket); None where files only arrive through the API
    upload_signer: UploadSigner | None = None
    #: the one vector dimension the search index stores (AWS: the OpenSearch mapping's, fixed
    #: when the index is created); None where every vector space keeps its own (tantivy)
    vector_dimension: int | None = None

    def embedder_for(self, bot: str) -> Embedder | None:
        """The bot's embedder (its setting, else the default), built once per process."""
        settings = self.state.get_bot(bot)
        name = settings.embedder or self.default_embedder
        options = dict(settings.embedder_options or {})
        key = f"{name}|{sorted(options.items())!r}"
        cached = self.embedders.get(key)
        if cached is not None or name in (None, "", "none"):
            return cached
        embedder = self.embedder_factory(name, options)
        if embedder is not None:
            self.embedders[key] = embedder
            self.embedders.setdefault(embedder.name, embedder)
        return embedder

    def embedder_named(self, space: str) -> Embedder | None:
        return self.embedders.get(space)

    def require_workflow(self) -> Workflow:
        """The refresh workflow, for code that cannot run without one."""
        if self.workflow is None:
            raise BackendError("this deployment has no refresh workflow configured")
        return self.workflow
