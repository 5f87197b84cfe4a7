"""Route definitions shared by API Gateway (Lambda) and the embedded server.

Each route names its method, path template, required scope, handler and the models of its
bodies (``models.py``; ``openapi.py`` publishes their schemas), by name: pydantic and the
models load with the first route that has a body (or the document), never for a cold start
whose invocations only read (most admin calls are GETs) nor for questions (the retrieval
bodies are checked by ``bodies``, to the same rules). ``dispatch`` is the only
entry point: it authenticates, authorises against the path's bot, validates the body with
the route's model, runs the handler and turns any error into the documented
``{"error": {...}}`` shape. ``HEAD`` is answered as ``GET`` (the transport sends no body).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..model import Source, Token, valid_bot_id
from ..ports import Services
from ..retrieve.service import RetrievalOptions, RetrievalRequest, retrieve
from . import views
from .auth import SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE, authenticate, authorize, issue_token
from .bodies import PARSERS
from .http import Request, Response, encodable, error_response
from .ratelimit import TokenBucket

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .. import lifecycle
    from . import models


def _lifecycle() -> ModuleType:
    """The source lifecycle (create, edit, upload, refresh...), imported by the first admin
    route that needs it: it brings the whole refresh pipeline, which a function that only
    answers questions would otherwise load at every cold start."""
    from .. import lifecycle

    return lifecycle

Handler = Callable[["Context"], Response]
log = logging.getLogger(__name__)
#: code of a ``since`` that is neither Unix seconds nor an ISO 8601 time (HTTP 400)
INVALID_SINCE = "invalid_since"


@dataclass
class Context:
    services: Services
    request: Request
    params: dict[str, str]
    token: Token | None = None
    limiter: TokenBucket | None = None
    #: the body validated with the route's model (None: the route takes no JSON body)
    body: Any = None

    @property
    def bot(self) -> str:
        return self.params["botID"]

    @property
    def source_id(self) -> str:
        return self.params["sourceID"]

    def source(self) -> Source:
        source = self.services.state.get_source(self.bot, self.params["sourceID"])
        if source is None:
            raise NotFound(f"source {self.params['sourceID']} not found")
        return source

    def workflow(self) -> Any:
        workflow = self.services.workflow
        if workflow is None:
            raise InvalidInput("this deployment has no refresh workflow")
        return workflow


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    scope: str | None
    handler: Handler
    summary: str
    #: the name of the JSON body's model in ``models`` (None: no JSON body)
    body: str | None = None
    body_required: bool = False
    #: the body is raw bytes (an upload), not JSON
    raw_body: bool = False
    ok: int = 200
    #: the name of the success body's model in ``responses`` (None: no body)
    response: str | None = None
    #: error statuses this route may answer besides 400/401/403/429/500
    errors: tuple[int, ...] = ()
    #: rate limited per token (429), counted before the body is read
    limited: bool = False
    #: optional query parameters, for the document: (name, description, JSON Schema)
    query: tuple[tuple[str, str, dict[str, Any]], ...] = ()

    @property
    def body_model(self) -> type[BaseModel] | None:
        """The body's model class (imports ``models``, and pydantic with it)."""
        return None if self.body is None else _model("models", self.body)

    @property
    def response_model(self) -> type[BaseModel] | None:
        """The success body's model class (imports ``responses``, and pydantic with it)."""
        return None if self.response is None else _model("responses", self.response)

    @property
    def pattern(self) -> re.Pattern[str]:
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.template)
        return re.compile(f"^{regex}$")

    @property
    def operation_id(self) -> str:
        head, *rest = self.handler.__name__.split("_")
        return head + "".join(part.title() for part in rest)


def _model(module: str, name: str) -> Any:
    return getattr(import_module(f"{__package__}.{module}"), name)


BOT = "/api/bots/{botID}"
KB = f"{BOT}/knowledge"
AGENTS = f"{BOT}/agents"


def _source_reply(result: lifecycle.Queued, status: int) -> Response:
    body = views.source_json(result.source)
    body["queued"] = result.queued
    return Response(status, body)


# -- handlers: sources ------------------------------------------------------------------


def list_sources(ctx: Context) -> Response:
    sources = views.heaviest_first(ctx.services.state.list_sources(ctx.bot))
    return Response(200, {"sources": [views.source_json(s) for s in sources]})


def create_source(ctx: Context) -> Response:
    return _source_reply(_lifecycle().create_source(ctx.services, ctx.bot, ctx.body), 201)


def get_source(ctx: Context) -> Response:
    return Response(200, views.source_json(ctx.source()))


def patch_source(ctx: Context) -> Response:
    return _source_reply(_lifecycle().patch_source(ctx.services, ctx.bot, ctx.source_id, ctx.body), 200)


def delete_source(ctx: Context) -> Response:
    _lifecycle().delete_source(ctx.services, ctx.bot, ctx.source_id)
    return Response(204)


def upload_source(ctx: Context) -> Response:
    return _source_reply(_lifecycle().upload_file(ctx.services, ctx.bot, ctx.source_id, ctx.request.body), 202)


def upload_url(ctx: Context) -> Response:
    from ..lifecycle.uploads import upload_url as presigned

    return Response(200, presigned(ctx.services, ctx.bot, ctx.source_id))


def refresh_source(ctx: Context) -> Response:
    force = ctx.body.force
    return _source_reply(_lifecycle().refresh_source(ctx.services, ctx.bot, ctx.source_id, force=force), 202)


def cancel_source(ctx: Context) -> Response:
    return _source_reply(_lifecycle().cancel_source(ctx.services, ctx.bot, ctx.source_id), 202)


def disable_source(ctx: Context) -> Response:
    return Response(200, views.source_json(_lifecycle().disable_source(ctx.services, ctx.bot, ctx.source_id)))


def enable_source(ctx: Context) -> Response:
    return _source_reply(_lifecycle().enable_source(ctx.services, ctx.bot, ctx.source_id), 202)


def source_index_status(ctx: Context) -> Response:
    source = ctx.source()
    return Response(200, views.status_json(source, indexing=_lifecycle().is_indexing(ctx.services, source)))


def list_documents(ctx: Context) -> Response:
    source = ctx.source()
    docs = ctx.services.state.list_documents(ctx.bot, source.id)
    return Response(200, {"sourceId": source.id, "documents": [views.document_json(d) for d in docs]})


# -- handlers: index, retrieval, citations ----------------------------------------------


def get_index(ctx: Context) -> Response:
    from ..embed import bot_embedder

    embedder, _ = bot_embedder(ctx.services.state.get_bot(ctx.bot), ctx.services.default_embedder)
    return Response(200, views.index_json(ctx.services.state.list_sources(ctx.bot), embedder))


def post_reindex(ctx: Context) -> Response:
    job = ctx.workflow().start_reindex(ctx.bot, force=ctx.body.force)
    return Response(202, {"accepted": True, "job": job})


def post_retrieve(ctx: Context) -> Response:
    req = RetrievalRequest.parse(ctx.bot, ctx.body)
    return Response(200, retrieve(ctx.services, req))


def post_retrieval_test(ctx: Context) -> Response:
    """The same search without a model, rate limited per token, recording no gap: the
    response of ``retrieve``, with each excerpt's signals and the confidence components, so
    an operator can see why a question was or was not answered; ``rerank: false`` skips the
    bot's reranker."""
    req = RetrievalRequest.parse(ctx.bot, ctx.body)
    options = RetrievalOptions(rerank=bool(ctx.body.rerank))
    return Response(200, retrieve(ctx.services, req, gaps=False, options=options))


def validate_citations_route(ctx: Context) -> Response:
    from .citations import validate_citations

    return Response(200, validate_citations(ctx.services, ctx.bot, ctx.body))


# -- handlers: answer time (knowledge.answer) ------------------------------------------


def list_live_tables(ctx: Context) -> Response:
    """Each live source of the bot with the tables stored for it (read at answer time)."""
    from ..answer.service import SOURCE_TYPE as LIVE

    out = []
    for s in views.heaviest_first(x for x in ctx.services.state.list_sources(ctx.bot) if x.type == LIVE):
        stored = ctx.services.state.get_live_tables(ctx.bot, s.id)
        out.append({"sourceId": s.id, "name": s.name, "visibility": s.visibility, "status": s.status,
                    "requiredTables": list((s.config or {}).get("tables") or []),
                    "tables": [{"table": name, "rows": rows} for name, rows in stored.items()]})
    return Response(200, {"sources": out})


def put_live_table(ctx: Context) -> Response:
    from ..answer import service as answer_time

    source_id = ctx.request.query.get("sourceId") or None
    body = {"rows": list(ctx.body.rows)}
    return Response(200, answer_time.replace_live_table(ctx.services, ctx.bot, ctx.params["table"], body, source_id))


def _clusters(services: Services, bot: str, audience: str | None, since: float | None) -> list[dict[str, Any]]:
    """The bot's gap clusters, by meaning when the bot has an embedder (by wording when it
    has none or it fails)."""
    from ..answer import service as answer_time
    from ..errors import KnowledgeError

    try:
        embedder = services.embedder_for(bot)
    except ValueError:
        embedder = None
    if embedder is not None:
        try:
            return answer_time.gap_clusters(services, bot, audience, since, embed=embedder.embed)
        except KnowledgeError as exc:
            log.warning("gap clustering without the embedder (%s)", exc.code)
    return answer_time.gap_clusters(services, bot, audience, since)


def parse_since(value: str | None) -> float | None:
    """``since``: Unix seconds (``1767225600``) or an ISO 8601 time (``2026-01-01T00:00:00Z``;
    without a zone it is UTC)."""
    from datetime import UTC, datetime

    if value is None or value == "":
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        except ValueError:
            raise InvalidInput("since must be Unix seconds or an ISO 8601 time", code=INVALID_SINCE) from None
        seconds = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    if not 0 <= seconds < 1e11:
        raise InvalidInput("since must be Unix seconds or an ISO 8601 time", code=INVALID_SINCE)
    return seconds


def _audience_param(ctx: Context) -> str | None:
    return ctx.request.query.get("audience") or None


def gap_list(services: Services, bot: str, audience: str | None = None, since: float | None = None) -> dict[str, Any]:
    """The body of ``GET gaps`` (``kb gaps --json`` prints the same)."""
    return {"clusters": [views.gap_cluster_json(c) for c in _clusters(services, bot, audience, since)]}


def list_gaps(ctx: Context) -> Response:
    since = parse_since(ctx.request.query.get("since"))
    return Response(200, gap_list(ctx.services, ctx.bot, _audience_param(ctx), since))


def recheck_gaps(ctx: Context) -> Response:
    """Each cluster's examples asked again (nothing recorded), in the cluster's audience."""
    from ..answer import service as answer_time

    audience = ctx.body.audience if ctx.body is not None else None
    out = []
    for cluster in _clusters(ctx.services, ctx.bot, audience, None):
        asked = audience or (cluster.get("audiences") or ["customer"])[0]

        def ask(q: str, asked: str = asked) -> dict[str, Any]:
            req = RetrievalRequest(bot=ctx.bot, q=q, audience=asked)
            return retrieve(ctx.services, req, record=False, gaps=False)

        out.extend(answer_time.recheck_gaps([cluster], ask))
    return Response(200, {"clusters": [views.gap_cluster_json(c) for c in out]})


def article_from_ticket(ctx: Context) -> Response:
    """Redaction first (``draft_from_ticket``), then a draft article through the lifecycle.
    This body is never logged."""
    from ..answer.tickets import draft_from_ticket, index_vocabulary

    body: models.TicketArticle = ctx.body
    # product and feature names are words the bot's own corpus knows: no one's name
    draft = draft_from_ticket([m.model_dump() for m in body.messages], body.title,
                              vocabulary=index_vocabulary(ctx.services.index, ctx.bot))
    result = _lifecycle().create_source(ctx.services, ctx.bot, draft.source_body())
    reply = views.source_json(result.source)
    reply.update(queued=result.queued, redacted=draft.redacted)
    return Response(201, reply)


# -- handlers: agents -------------------------------------------------------------------


def list_agents(ctx: Context) -> Response:
    return Response(200, {"agents": [views.agent_json(a) for a in ctx.services.state.list_agents(ctx.bot)]})


def get_agent(ctx: Context) -> Response:
    return Response(200, views.agent_json(_lifecycle().get_agent(ctx.services, ctx.bot, ctx.params["agentID"])))


def put_agent(ctx: Context) -> Response:
    agent = _lifecycle().put_agent(ctx.services, ctx.bot, ctx.params["agentID"], ctx.body)
    return Response(200, views.agent_json(agent))


# -- handlers: administration -------------------------------------------------------------


def post_token(ctx: Context) -> Response:
    body: models.TokenCreate = ctx.body
    secret, token = issue_token(ctx.services, ctx.bot, list(body.scopes), expires_in=body.expiresInSeconds)
    return Response(201, {**views.token_json(token), "token": secret})


def list_tokens(ctx: Context) -> Response:
    return Response(200, {"tokens": [views.token_json(t) for t in ctx.services.state.list_tokens(ctx.bot)]})


def delete_token(ctx: Context) -> Response:
    if not ctx.services.state.delete_token(ctx.bot, ctx.params["tokenID"]):
        raise NotFound("no such token")
    return Response(204)


def get_settings(ctx: Context) -> Response:
    return Response(200, views.settings_json(ctx.services.state.get_bot(ctx.bot)))


def patch_settings(ctx: Context) -> Response:
    from .settings import apply_settings

    settings, rebuild = apply_settings(ctx.services.state.get_bot(ctx.bot), ctx.body, ctx.services.outbound,
                                       vector_dimension=ctx.services.vector_dimension,
                                       default_embedder=ctx.services.default_embedder)
    ctx.services.state.put_bot(settings)
    # passages keep the vector space they were embedded in (and questions are embedded in
    # it) until a reindex rebuilds them: the caller starts it (POST reindex) when it suits
    return Response(200, {**views.settings_json(ctx.services.state.get_bot(ctx.bot)), "reindexNeeded": rebuild})


# -- handlers: meta ---------------------------------------------------------------------


def get_openapi(ctx: Context) -> Response:
    return Response(200, openapi_document())


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    """This route table's OpenAPI document (built once per process; callers must not mutate it)."""
    from .openapi import build_document

    return build_document(ROUTES)


S = f"{KB}/sources/{{sourceID}}"

ROUTES: list[Route] = [
    Route("GET", f"{KB}/sources", SCOPE_READ, list_sources, "List the bot's sources, heaviest first",
          response="SourceList"),
    Route("POST", f"{KB}/sources", SCOPE_WRITE, create_source, "Create a source (queued for indexing)",
          body="SourceCreate", body_required=True, ok=201, response="Source", errors=(409,)),
    Route("GET", S, SCOPE_READ, get_source, "One source with its status", response="Source", errors=(404,)),
    Route("PATCH", S, SCOPE_WRITE, patch_source,
          "Change a source; a new config or visibility queues a refresh, name and priority apply at once",
          body="SourcePatch", body_required=True, response="Source", errors=(404,)),
    Route("DELETE", S, SCOPE_WRITE, delete_source,
          "Delete a source with its documents and passages (409 while an active agent selects it)",
          ok=204, errors=(404, 409)),
    Route("POST", f"{S}/upload", SCOPE_WRITE, upload_source, "Upload the file of a file source (at most 8 MB)",
          raw_body=True, body_required=True, ok=202, response="Source", errors=(404, 409, 413)),
    Route("POST", f"{S}/upload-url", SCOPE_WRITE, upload_url,
          "A short-lived presigned form to send the file (up to 8 MB) straight to the store; the refresh "
          "is queued once it lands (400 not_supported where uploads go through POST .../upload only)",
          response="UploadUrl", errors=(404, 409)),
    Route("POST", f"{S}/refresh", SCOPE_WRITE, refresh_source, "Queue a refresh (unchanged content is skipped)",
          body="Refresh", ok=202, response="Source", errors=(404, 409)),
    Route("POST", f"{S}/cancel", SCOPE_WRITE, cancel_source,
          "Stop the current or queued run; the previous content keeps answering",
          ok=202, response="Source", errors=(404, 409)),
    Route("POST", f"{S}/disable", SCOPE_WRITE, disable_source, "Remove the source from every search at once",
          response="Source", errors=(404,)),
    Route("POST", f"{S}/enable", SCOPE_WRITE, enable_source, "Enable a disabled source and queue it",
          ok=202, response="Source", errors=(404, 409)),
    Route("GET", f"{S}/index-status", SCOPE_READ, source_index_status,
          "Status, attempts, counters, error code and lastIndexedAt", response="IndexStatus", errors=(404,)),
    Route("GET", f"{S}/documents", SCOPE_READ, list_documents, "A source's documents",
          response="DocumentList", errors=(404,)),
    Route("GET", f"{KB}/index", SCOPE_READ, get_index, "What is indexed: builtAt, totals, per-source rows",
          response="Index"),
    Route("POST", f"{KB}/reindex", SCOPE_WRITE, post_reindex, "Re-index every source of the bot",
          body="Reindex", ok=202, response="Accepted"),
    Route("POST", f"{KB}/retrieve", SCOPE_READ, post_retrieve, "Grounded excerpts for a question",
          body="RetrievalBody", body_required=True, response="Retrieval", errors=(404, 409)),
    Route("POST", f"{KB}/retrieval-test", SCOPE_READ, post_retrieval_test,
          "Retrieval without a model, rate limited per token; with each excerpt's signals and the "
          "confidence components",
          body="RetrievalTestBody", body_required=True, response="Retrieval", errors=(404, 409),
          limited=True),
    Route("POST", f"{KB}/citations/validate", SCOPE_READ, validate_citations_route,
          "Check the citations of an answer against what its retrieval served",
          body="CitationCheck", body_required=True, response="CitationValid", errors=(404, 422)),
    Route("GET", f"{KB}/live", SCOPE_READ, list_live_tables,
          "The bot's live sources, each with the rows of every table stored for it", response="LiveList"),
    Route("PUT", f"{KB}/live/{{table}}", SCOPE_WRITE, put_live_table,
          "Replace one table of the bot's live source at once (read at answer time, never indexed)",
          body="LiveTablePut", body_required=True, response="LiveTable", errors=(404,),
          query=(("sourceId", "the live source (needed only when the bot has several)", {"type": "string"}),)),
    Route("GET", f"{KB}/gaps", SCOPE_READ, list_gaps,
          "What was asked that nothing answered, clustered, most frequent first", response="GapList",
          query=(("audience", "customer, public or operator (all when left out)",
                  {"type": "string", "enum": ["customer", "public", "operator"]}),
                 ("since", "only gaps from this time: Unix seconds or an ISO 8601 time", {"type": "string"}))),
    Route("POST", f"{KB}/gaps/recheck", SCOPE_WRITE, recheck_gaps,
          "Ask each gap cluster's examples again; nowAnswers marks the clusters that now answer",
          body="GapRecheck", response="GapList"),
    Route("POST", f"{KB}/articles/from-ticket", SCOPE_WRITE, article_from_ticket,
          "Redact a resolved ticket and make it a draft article (searchable only once published)",
          body="TicketArticle", body_required=True, ok=201, response="DraftArticle"),
    Route("GET", AGENTS, SCOPE_READ, list_agents, "The bot's agents with their selected sources",
          response="AgentList"),
    Route("GET", f"{AGENTS}/{{agentID}}", SCOPE_READ, get_agent, "An agent and its selected sources",
          response="Agent", errors=(404,)),
    Route("PUT", f"{AGENTS}/{{agentID}}", SCOPE_WRITE, put_agent,
          "Create or replace an agent: status active|paused, at most 100 selected sources (none = all)",
          body="AgentPut", body_required=True, response="Agent"),
    Route("POST", f"{BOT}/tokens", SCOPE_ADMIN, post_token,
          "Create a token for this bot; its secret is in this answer only", body="TokenCreate",
          body_required=True, ok=201, response="TokenCreated"),
    Route("GET", f"{BOT}/tokens", SCOPE_ADMIN, list_tokens, "The bot's tokens: scopes, created, last used, expiry",
          response="TokenList"),
    Route("DELETE", f"{BOT}/tokens/{{tokenID}}", SCOPE_ADMIN, delete_token, "Revoke a token (at once)",
          ok=204, errors=(404,)),
    Route("GET", f"{BOT}/settings", SCOPE_ADMIN, get_settings,
          "The bot's settings; secrets only as whether they are set", response="Settings"),
    Route("PATCH", f"{BOT}/settings", SCOPE_ADMIN, patch_settings,
          "Change the bot's settings (a new embedder takes effect at the next reindex); secrets are write-only",
          body="SettingsPatch", body_required=True, response="Settings"),
    Route("GET", "/openapi.json", None, get_openapi, "This OpenAPI document"),
]


def match(method: str, path: str) -> tuple[Route, dict[str, str]] | tuple[None, bool]:
    """(route, params), or (None, path_exists) so 404 and 405 can be told apart. ``HEAD``
    matches the ``GET`` route of the path."""
    path_exists = False
    if method == "HEAD":
        method = "GET"
    for route in ROUTES:
        m = route.pattern.match(path)
        if m:
            path_exists = True
            if route.method == method:
                return route, m.groupdict()
    return None, path_exists


def parse_body(route: Route, data: Any) -> Any:
    """``data`` (parsed JSON) checked as the route's body: the retrieval bodies without
    pydantic (``bodies``: every question has one), the others with their model (pydantic and
    the models load with the first such route)."""
    plain = PARSERS.get(route.body or "")
    if plain is not None:
        return plain(data)
    from .models import parse

    return parse(route.body_model, data)  # type: ignore[arg-type]


_default_limiter: TokenBucket | None = None
_limiter_lock = threading.Lock()


def default_limiter() -> TokenBucket:
    """The process-wide ``retrieval-test`` limiter (rate from ``KB_RETRIEVAL_TEST_PER_MINUTE``)."""
    global _default_limiter
    with _limiter_lock:
        if _default_limiter is None:
            _default_limiter = TokenBucket.from_env()
        return _default_limiter


def dispatch(services: Services, request: Request, *, limiter: TokenBucket | None = None) -> Response:
    try:
        route, params = match(request.method.upper(), request.path.rstrip("/") or "/")
        if route is None:
            if params:
                path = request.path.rstrip("/") or "/"
                methods = {r.method for r in ROUTES if r.pattern.match(path)}
                methods |= {"HEAD"} if "GET" in methods else set()
                return Response(405, {"error": {"code": "method_not_allowed", "message": "method not allowed"}},
                                {"Allow": ", ".join(sorted(methods))})
            raise NotFound("no such route")
        assert isinstance(params, dict)
        for value in params.values():
            encodable(value)
        token = None
        if route.scope is not None:
            token = authenticate(services, request.header("authorization"), record_use=True)
            bot = params.get("botID", "")
            if not valid_bot_id(bot):
                raise InvalidInput("invalid bot id")
            authorize(token, bot, route.scope)
        ctx = Context(services, request, params, token, limiter or default_limiter())
        if route.limited and token is not None:
            ctx.limiter.take(token.token_hash, services.clock.now())  # type: ignore[union-attr]
        if route.body is not None:
            if route.body_required and not request.body:
                raise InvalidInput("this route needs a JSON body")
            ctx.body = parse_body(route, request.json())
        return route.handler(ctx)
    except Exception as exc:  # noqa: BLE001 - the one place every error becomes an HTTP answer
        return error_response(exc)
