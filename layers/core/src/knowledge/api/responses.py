"""The response bodies of the API, declared as models for the OpenAPI document.

``views.py`` builds the bodies; these models say what clients may rely on, and the
end-to-end fuzzing checks every answer against them (schema conformance). They are never
used to build or validate an answer at run time.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["waiting", "indexing", "ready", "needs_refresh", "failed", "disabled"]
AudienceName = Literal["customer", "public", "operator"]
VisibilityName = Literal["public", "agent", "operator"]
SourceTypeName = Literal["pack", "article", "website", "file", "instruction", "fact", "faq", "live"]


class Reply(BaseModel):
    model_config = ConfigDict(defer_build=True)


class ErrorDetail(Reply):
    code: str = Field(description="stable, machine-readable")
    message: str
    invalid: list[dict[str, Any]] | None = Field(None, description="rejected citations (invalid_citation)")
    retryAfter: float | None = Field(None, description="seconds (rate_limited)")
    fields: list[str] | None = Field(None, description="the unknown fields (unknown_field)")


class Error(Reply):
    error: ErrorDetail


class Source(Reply):
    id: str
    type: SourceTypeName
    name: str
    status: Status
    errorCode: str | None
    errorMessage: str | None = None
    visibility: VisibilityName
    priority: int
    weight: float
    passages: int
    attempts: int
    documentsProcessed: int | None = None
    fragmentsProcessed: int | None = None
    documentsFailed: int | None = None
    documentsUnchanged: int | None = Field(None, description="pages the site said had not changed (HTTP 304) "
                                           "at the last crawl: kept without being fetched or extracted again")
    lastIndexedAt: str | None
    refreshEverySeconds: int | None = None
    nextRefreshAt: str | None = None
    config: dict[str, Any] | None = None
    createdAt: str | None = None
    updatedAt: str | None = None
    queued: bool | None = Field(None, description="whether the change queued a run")


class SourceList(Reply):
    sources: list[Source]


class IndexStatus(Reply):
    id: str
    status: Status
    indexing: bool
    cancelRequested: bool | None = None
    attempts: int
    documentsProcessed: int
    fragmentsProcessed: int
    documentsFailed: int
    documentsUnchanged: int | None = None
    passages: int | None = None
    errorCode: str | None
    errorMessage: str | None = None
    lastIndexedAt: str | None
    leaseExpiresAt: str | None = None


class DocumentRow(Reply):
    id: str
    title: str
    path: str
    url: str | None = None
    visibility: str
    fragments: int
    errorCode: str | None = None


class UploadUrl(Reply):
    url: str = Field(description="POST a multipart form here: every field below, then the file as field 'file'")
    method: Literal["POST"]
    fields: dict[str, str]
    expiresIn: int = Field(description="seconds the form stays usable")
    maxBytes: int = Field(description="the store refuses a larger file")
    contentType: str = Field(description="the Content-Type field the store requires (the source's)")


class DocumentList(Reply):
    sourceId: str
    documents: list[DocumentRow]


class IndexRow(Reply):
    id: str
    title: str
    type: str
    status: str | None = None
    passages: int
    weight: float | None = None
    error: str | None
    lastIndexedAt: str | None


class Index(Reply):
    builtAt: str | None
    totalPassages: int
    embedder: str = Field(description="the embedder the bot's questions use (none: lexical only)")
    sources: list[IndexRow]


class Excerpt(Reply):
    rank: int
    sourceId: str
    sourceType: str | None = None
    documentId: str
    fragmentId: str
    title: str
    path: str | None = None
    breadcrumb: str | None = None
    text: str = Field(max_length=800)
    url: str | None = None
    score: float
    reason: str
    signals: dict[str, Any] | None = Field(None, description="ranking internals: lexicalRank, semanticRank, rrf, "
                                                             "blendScore, weight, titleMatch, nearMatch, "
                                                             "rescueSimilarity, ...")


class Gate(Reply):
    topic: Literal["fees", "limits", "processing_time"]
    passed: bool = Field(description="false: wouldAnswer is false (no operator-authored excerpt settles it)")
    reason: str


class LiveUnavailable(Reply):
    sourceId: str
    code: str = Field(description="why it could not be read: fetch_timeout, file_too_large, blocked_address, "
                                  "malformed_file, live_endpoint_status, unknown_field, invalid_live_row...")


class Retrieval(Reply):
    retrievalId: str
    audience: AudienceName
    confidence: float = Field(ge=0, le=1)
    floor: float
    wouldAnswer: bool
    operatorGrounded: bool
    corpusSize: int
    confidenceComponents: dict[str, Any] | None = Field(
        None, description="the evidence the confidence is built from, each part explained")
    topic: Literal["fees", "limits", "processing_time"] | None = Field(
        None, description="what the question asks about, when it is one of the gated topics")
    gate: Gate | None = Field(None, description="the topic gate's verdict (null: the question has no topic)")
    liveUnavailable: list[LiveUnavailable] | None = Field(
        None, description="live sources that could not be read for this question (it was answered without them)")
    excerpts: list[Excerpt] = Field(max_length=12)


class LiveTable(Reply):
    sourceId: str
    table: str
    rows: int
    enabled: int = Field(description="rows that are read (enabled)")


class LiveTableRows(Reply):
    table: str
    rows: list[dict[str, Any]]


class LiveSource(Reply):
    sourceId: str
    name: str
    visibility: str
    status: str
    requiredTables: list[str] = Field(description="tables the source's config says must be present")
    tables: list[LiveTableRows]


class LiveList(Reply):
    sources: list[LiveSource]


class GapCluster(Reply):
    representative: str = Field(description="the most frequent phrasing (redacted)")
    count: int
    firstSeen: str
    lastSeen: str
    examples: list[str] = Field(max_length=5)
    outcomes: dict[str, int] = Field(description="nothing_found, below_floor, gated: how many of each")
    topic: Literal["fees", "limits", "processing_time"] | None = None
    audiences: list[AudienceName]
    answered: int | None = Field(None, description="recheck: examples that now answer above the floor")
    nowAnswers: bool | None = Field(None, description="recheck: every example now answers")


class GapList(Reply):
    clusters: list[GapCluster]


class DraftArticle(Source):
    redacted: dict[str, int] = Field(description="what was removed from the ticket, per kind")


class Accepted(Reply):
    accepted: bool
    job: dict[str, Any] | None = None


class CitationValid(Reply):
    valid: Literal[True]


class Agent(Reply):
    id: str
    status: Literal["active", "paused"]
    sourceIds: list[str]


class AgentList(Reply):
    agents: list[Agent]


class TokenInfo(Reply):
    id: str = Field(description="names the token in DELETE tokens/{id}; not the secret")
    bot: str
    scopes: list[str]
    createdAt: str | None
    lastUsedAt: str | None
    expiresAt: str | None


class TokenCreated(TokenInfo):
    token: str = Field(description="the secret: shown once, only its SHA-256 is stored")


class TokenList(Reply):
    tokens: list[TokenInfo]


class EmbedderOptionsView(Reply):
    baseUrl: str | None = None
    model: str | None = None
    modelId: str | None = None
    dimensions: int | None = None
    apiKeySet: bool = Field(description="whether a provider key is stored (it is never returned)")


class UpstreamView(Reply):
    url: str
    bot: str
    tokenSet: bool = Field(description="whether an upstream token is stored (it is never returned)")


class Settings(Reply):
    bot: str
    products: list[str]
    scopeToProducts: bool
    floor: float
    topK: int = Field(ge=1, le=12)
    rerank: bool = Field(False, description="the first excerpts are reordered by the deployment's reranker")
    embedder: str | None
    embedderOptions: EmbedderOptionsView
    upstream: UpstreamView | None
    answer: dict[str, Any] = Field(description="answer-time settings as stored ({}: every default): gate, topics, "
                                               "context, extraContext, gapRetentionDays")
    reindexNeeded: bool | None = Field(None, description="PATCH: the embedder changed; passages move to it at "
                                                         "the next reindex (POST knowledge/reindex)")


RESPONSE_MODELS: tuple[type[BaseModel], ...] = (
    Error, Source, SourceList, IndexStatus, DocumentList, Index, Retrieval, Accepted, CitationValid, Agent,
    TokenInfo, TokenCreated, TokenList, Settings, LiveTable, GapList, DraftArticle,
)
