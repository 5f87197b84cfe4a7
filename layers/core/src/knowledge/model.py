"""Plain data shared by every layer. No I/O here."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

# -- audiences and visibility -------------------------------------------------------------

Visibility = Literal["public", "agent", "operator"]
Audience = Literal["customer", "public", "operator"]
Partition = Literal["customer", "operator"]

VISIBILITIES: tuple[Visibility, ...] = ("public", "agent", "operator")
AUDIENCES: tuple[Audience, ...] = ("customer", "public", "operator")
PARTITIONS: tuple[Partition, ...] = ("customer", "operator")

#: What each asking audience may see (DESIGN.md §4). This is the only place it is decided.
AUDIENCE_VISIBILITY: dict[str, tuple[Visibility, ...]] = {
    "customer": ("public", "agent"),
    "public": ("public",),
    "operator": ("operator",),
}


#: What each physical partition holds.
PARTITION_VISIBILITIES: dict[str, tuple[Visibility, ...]] = {
    "customer": ("public", "agent"),
    "operator": ("operator",),
}


def partition_of_visibility(visibility: str) -> Partition:
    """Physical partition a passage lives in: operator passages apart from everything else."""
    return "operator" if visibility == "operator" else "customer"


def partition_of_audience(audience: str) -> Partition:
    return "operator" if audience == "operator" else "customer"


# -- sources ---------------------------------------------------------------------------

SourceType = Literal["pack", "article", "website", "file", "instruction", "fact", "faq", "live"]
SOURCE_TYPES: tuple[str, ...] = ("pack", "article", "website", "file", "instruction", "fact", "faq", "live")

#: Source weights (reference 000 "Four sources"; issue 3). Operator-authored text outranks docs.
TYPE_WEIGHT: dict[str, float] = {
    "instruction": 1.15,
    "fact": 1.15,
    "article": 1.15,
    "pack": 1.0,
    "website": 1.0,
    "file": 1.0,
    "faq": 0.9,
    #: live data (tables read at answer time, never indexed): fused in at this weight
    "live": 1.3,
}
#: Inside a pack, pages under help/ are written for the person using the product.
HELP_PAGE_WEIGHT = 1.2
#: Types whose text an operator wrote themselves (drives ``operatorGrounded``).
OPERATOR_AUTHORED_TYPES = frozenset({"article", "instruction", "fact", "live"})

SourceStatus = Literal["waiting", "indexing", "ready", "needs_refresh", "failed", "disabled"]
STATUSES: tuple[str, ...] = ("waiting", "indexing", "ready", "needs_refresh", "failed", "disabled")


@dataclass
class Source:
    id: str
    bot: str
    type: str
    name: str
    visibility: str = "agent"
    priority: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    status: str = "waiting"
    error_code: str | None = None
    error_message: str | None = None
    attempts: int = 0
    documents_processed: int = 0
    fragments_processed: int = 0
    documents_failed: int = 0
    #: pages of the last crawl the site said were unchanged (304): kept, not extracted again
    documents_unchanged: int = 0
    checksum: str | None = None
    live_generation: int | None = None
    passages: int = 0
    last_indexed_at: float | None = None
    refresh_every: int | None = None
    next_refresh_at: float | None = None
    lease_owner: str | None = None
    lease_expires_at: float | None = None
    cancel_requested: bool = False
    #: live passages per visibility, e.g. {"public": 10, "operator": 4}
    visibility_counts: dict[str, int] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def weight(self) -> float:
        return TYPE_WEIGHT.get(self.type, 1.0)

    @property
    def enabled(self) -> bool:
        return self.status != "disabled"


@dataclass(frozen=True)
class LiveSource:
    """What a query needs to know about one searchable source of a bot."""

    source_id: str
    generation: int
    type: str
    name: str
    priority: int
    weight: float
    last_indexed_at: float | None
    visibility_counts: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def source_gen(self) -> str:
        return source_gen(self.source_id, self.generation)


def source_gen(source_id: str, generation: int) -> str:
    """The keyword every passage carries and every query filters on (DESIGN.md §3, §9)."""
    return f"{source_id}:{generation}"


@dataclass
class Document:
    id: str
    bot: str
    source_id: str
    title: str
    path: str
    url: str | None = None
    visibility: str = "agent"
    checksum: str | None = None
    fragments: int = 0
    error_code: str | None = None
    #: a crawled page's validators, sent back on the next crawl (conditional re-fetch)
    etag: str | None = None
    last_modified: str | None = None


@dataclass
class Passage:
    """One searchable fragment. ``text`` starts with the breadcrumb."""

    id: str
    bot: str
    source_id: str
    document_id: str
    generation: int
    ordinal: int
    title: str
    path: str
    breadcrumb: str
    text: str
    visibility: str
    weight: float = 1.0
    priority: int = 0
    indexed_at: float = 0.0
    url: str | None = None
    vector: list[float] | None = None

    @property
    def partition(self) -> Partition:
        return partition_of_visibility(self.visibility)

    @property
    def source_gen(self) -> str:
        return source_gen(self.source_id, self.generation)


@functools.lru_cache(maxsize=1 << 16)
def key64(value: str) -> int:
    """A stable 63-bit integer for an id: fits signed and unsigned 64-bit columns on every
    backend, so ranking can run on numeric keys before any stored text is fetched.
    Remembered for the ids seen most (every question hashes its bot's source ids)."""
    return int.from_bytes(hashlib.blake2b(value.encode("utf-8"), digest_size=8).digest(), "big") >> 1


class PassageRef(NamedTuple):
    """What ranking needs to know about a hit, readable without loading the passage text.
    (A named tuple: fifty are built per question, and they are cheap.)"""

    key: int  # key64(passage id)
    source_key: int  # key64(source id)
    doc_key: int  # key64(document id)
    ordinal: int
    weight: float
    indexed_at: float

    @classmethod
    def of(cls, p: Passage) -> PassageRef:
        return cls(key64(p.id), key64(p.source_id), key64(p.document_id), p.ordinal, p.weight, p.indexed_at)


@dataclass(slots=True)
class Hit:
    """A passage found by one search list, with its raw score and 1-based rank.

    ``passage`` may be None until the index hydrates the hits that survive ranking;
    ``address`` is the backend's handle for doing so."""

    ref: PassageRef
    score: float
    rank: int
    passage: Passage | None = None
    address: object = None


@dataclass
class Agent:
    id: str
    bot: str
    status: str = "active"  # active | paused
    source_ids: list[str] = field(default_factory=list)


@dataclass
class BotSettings:
    bot: str
    #: Products this bot runs (addons, blockchains, providers — any kind). Empty = every pack.
    products: list[str] = field(default_factory=list)
    scope_to_products: bool = True
    embedder: str | None = None
    #: e.g. openai {"baseUrl", "apiKey", "model", "dimensions"}; bedrock {"modelId", "dimensions"}
    embedder_options: dict[str, Any] = field(default_factory=dict)
    floor: float = 0.35
    #: excerpts a question gets (1-12)
    top_k: int = 10
    #: reorder the first excerpts with the deployment's reranker, when it has one
    rerank: bool = False
    #: another deployment of this service to fuse in: {"url", "token", "bot"}
    upstream: dict[str, Any] | None = None
    #: digest of the live generations the stored rescue model was learned from
    rescue_version: str | None = None
    #: answer time (``knowledge.answer``): {"gate": bool, "topics": {...}, "context": [...],
    #: "extraContext": [...], "gapRetentionDays": N}; None: every default
    answer: dict[str, Any] | None = None


@dataclass
class Token:
    token_hash: str
    bot: str
    scopes: tuple[str, ...]
    created_at: float = 0.0
    #: when it stops opening anything (None: never)
    expires_at: float | None = None
    #: when it last opened a route (recorded at most once a minute)
    last_used_at: float | None = None

    @property
    def id(self) -> str:
        """The public name of the token (``DELETE tokens/{id}``): a prefix of its hash,
        which reveals nothing of the secret."""
        return self.token_hash[:TOKEN_ID_CHARS]

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at


TOKEN_ID_CHARS = 16


@dataclass
class RetrievalRecord:
    id: str
    bot: str
    audience: str
    #: (sourceId, documentId, fragmentId) served, in rank order.
    served: list[tuple[str, str, str]]
    created_at: float
    expires_at: float


_BOT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def valid_bot_id(bot: str) -> bool:
    return bool(_BOT_RE.match(bot)) and ".." not in bot


def stable_id(*parts: str, length: int = 16) -> str:
    """Deterministic short id from parts (same input -> same id on every backend)."""
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return h[:length]


# -- answer time: what the state stores keep ---------------------------------------------

#: How a retrieval can end without an answer.
GAP_OUTCOMES: tuple[str, ...] = ("nothing_found", "below_floor", "gated")
#: Gaps are kept this long unless a bot says otherwise.
GAP_RETENTION_SECONDS = 90 * 24 * 3600


@dataclass(frozen=True)
class GapRecord:
    """One question that nothing answered. ``question`` is already redacted."""

    id: str
    bot: str
    audience: str
    question: str
    outcome: str
    topic: str | None
    created_at: float
    expires_at: float


@dataclass(frozen=True)
class TokenVectors:
    """A text's word pieces as an embedder's model reads them in context (``TokenEmbedder``):
    the character span of each piece in the text and its output vector (one unit-length row per
    piece, a numpy array)."""

    spans: list[tuple[int, int]]
    vectors: Any
