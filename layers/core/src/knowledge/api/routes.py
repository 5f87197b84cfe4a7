"""Route definitions shared by API Gateway (Lambda) and the embedded server.

Each route names its method, path template, required scope and handler. ``dispatch`` is
the only entry point: it authenticates, authorises against the path's bot, runs the
handler and turns any error into the documented ``{"error": {...}}`` shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput, NotFound
from ..model import Source, valid_bot_id
from ..retrieve.service import RetrievalRequest, retrieve
from ..wiring import Services
from . import views
from .auth import SCOPE_READ, SCOPE_WRITE, authenticate, authorize
from .http import Request, Response, error_response

Handler = Callable[["Context"], Response]


@dataclass
class Context:
    services: Services
    request: Request
    params: dict[str, str]

    @property
    def bot(self) -> str:
        return self.params["botID"]

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

    @property
    def pattern(self) -> re.Pattern[str]:
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.template)
        return re.compile(f"^{regex}$")


KB = "/api/bots/{botID}/knowledge"


# -- handlers ---------------------------------------------------------------------------


def list_sources(ctx: Context) -> Response:
    sources = views.heaviest_first(ctx.services.state.list_sources(ctx.bot))
    return Response(200, {"sources": [views.source_json(s) for s in sources]})


def get_source(ctx: Context) -> Response:
    return Response(200, views.source_json(ctx.source()))


def list_documents(ctx: Context) -> Response:
    source = ctx.source()
    docs = ctx.services.state.list_documents(ctx.bot, source.id)
    return Response(200, {"sourceId": source.id, "documents": [views.document_json(d) for d in docs]})


def get_index(ctx: Context) -> Response:
    return Response(200, views.index_json(ctx.services.state.list_sources(ctx.bot)))


def post_reindex(ctx: Context) -> Response:
    body = ctx.request.json()
    force = bool(body.get("force", False)) if isinstance(body, dict) else False
    job = ctx.workflow().start_reindex(ctx.bot, force=force)
    return Response(202, {"accepted": True, "job": job})


def post_retrieve(ctx: Context) -> Response:
    req = RetrievalRequest.parse(ctx.bot, ctx.request.json())
    return Response(200, retrieve(ctx.services, req))


def post_retrieval_test(ctx: Context) -> Response:
    body = ctx.request.json()
    req = RetrievalRequest.parse(ctx.bot, body)
    return Response(200, retrieve(ctx.services, req))


ROUTES: list[Route] = [
    Route("GET", f"{KB}/sources", SCOPE_READ, list_sources, "List the bot's sources, heaviest first"),
    Route("GET", f"{KB}/sources/{{sourceID}}", SCOPE_READ, get_source, "One source with its status"),
    Route("GET", f"{KB}/sources/{{sourceID}}/documents", SCOPE_READ, list_documents, "A source's documents"),
    Route("GET", f"{KB}/index", SCOPE_READ, get_index, "What is indexed: builtAt, totals, per-source rows"),
    Route("POST", f"{KB}/reindex", SCOPE_WRITE, post_reindex, "Re-index every source of the bot"),
    Route("POST", f"{KB}/retrieve", SCOPE_READ, post_retrieve, "Grounded excerpts for a question"),
    Route("POST", f"{KB}/retrieval-test", SCOPE_READ, post_retrieval_test, "Retrieval without a model"),
]


def match(method: str, path: str) -> tuple[Route, dict[str, str]] | tuple[None, bool]:
    """(route, params), or (None, path_exists) so 404 and 405 can be told apart."""
    path_exists = False
    for route in ROUTES:
        m = route.pattern.match(path)
        if m:
            path_exists = True
            if route.method == method:
                return route, m.groupdict()
    return None, path_exists


def dispatch(services: Services, request: Request) -> Response:
    try:
        route, params = match(request.method.upper(), request.path.rstrip("/") or "/")
        if route is None:
            if params:
                return Response(405, {"error": {"code": "method_not_allowed", "message": "method not allowed"}})
            raise NotFound("no such route")
        assert isinstance(params, dict)
        if route.scope is not None:
            token = authenticate(services, request.header("authorization"))
            bot = params.get("botID", "")
            if not valid_bot_id(bot):
                raise InvalidInput("invalid bot id")
            authorize(token, bot, route.scope)
        return route.handler(Context(services, request, params))
    except Exception as exc:  # noqa: BLE001 - the one place every error becomes an HTTP answer
        return error_response(exc)
