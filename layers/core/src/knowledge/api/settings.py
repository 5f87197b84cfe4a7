"""``PATCH /api/bots/{botID}/settings``: a validated ``SettingsPatch`` applied to the stored
settings. Secrets are write-only: a provider key or upstream token left out stays as stored,
null removes it; an upstream token is never kept for another upstream address."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import InvalidInput
from ..model import BotSettings
from ..settings import OutboundPolicy
from .models import INVALID_SETTING, SettingsPatch


def apply_settings(current: BotSettings, patch: SettingsPatch,
                   policy: OutboundPolicy | None = None, *,
                   vector_dimension: int | None = None,
                   default_embedder: str | None = None) -> tuple[BotSettings, bool]:
    """(the new settings, whether the embedder changed: passages must be rebuilt). ``policy``
    is the deployment's outbound policy (the development loopback port, if any);
    ``vector_dimension`` the index's one vector dimension where it has one (AWS): an embedder
    producing another is refused now rather than failing every refresh after it."""
    from ..crawl.outbound import check_configured_url
    from ..sources.scope import validate_product

    given = patch.model_fields_set
    new = replace(current, products=list(current.products), embedder_options=dict(current.embedder_options or {}),
                  upstream=dict(current.upstream) if current.upstream else None,
                  answer=dict(current.answer) if current.answer else None)
    if "products" in given:
        try:
            new.products = list(dict.fromkeys(validate_product(p) for p in patch.products))
        except ValueError as exc:
            raise InvalidInput(f"products: {exc}", code=INVALID_SETTING) from None
    if "scopeToProducts" in given:
        new.scope_to_products = patch.scopeToProducts
    if "floor" in given:
        new.floor = float(patch.floor)
    if "topK" in given:
        new.top_k = int(patch.topK)
    if "rerank" in given:
        new.rerank = bool(patch.rerank)
    if "embedder" in given:
        new.embedder = None if patch.embedder is None else patch.embedder
    if "embedderOptions" in given:
        options = patch.embedderOptions
        stored_key = new.embedder_options.get("apiKey")
        fresh: dict[str, Any] = options.model_dump(exclude_unset=True, exclude={"apiKey"})
        if "apiKey" in options.model_fields_set:
            if options.apiKey is not None:
                fresh["apiKey"] = options.apiKey
        elif stored_key:
            fresh["apiKey"] = stored_key
        new.embedder_options = fresh
    if "upstream" in given:
        if patch.upstream is None:
            new.upstream = None
        else:
            up = patch.upstream
            upstream: dict[str, Any] = {"url": up.url, "bot": up.bot}
            if "token" in up.model_fields_set:
                upstream["token"] = up.token
            elif current.upstream and current.upstream.get("url") == up.url and current.upstream.get("token"):
                upstream["token"] = current.upstream["token"]
            new.upstream = upstream
    if "answer" in given:
        new.answer = _answer(patch)
    # a URL the outbound guard would refuse is refused when it is set, not at the first call
    # (names are still resolved and checked at every call: DNS can change)
    if "baseUrl" in new.embedder_options and "embedderOptions" in given:
        new.embedder_options["baseUrl"] = check_configured_url(new.embedder_options["baseUrl"], policy)
    if new.upstream and "upstream" in given:
        new.upstream["url"] = check_configured_url(new.upstream["url"], policy)
    if new.embedder == "openai" and not (new.embedder_options.get("baseUrl") and new.embedder_options.get("apiKey")):
        raise InvalidInput("the openai embedder needs embedderOptions.baseUrl and embedderOptions.apiKey",
                           code=INVALID_SETTING)
    changed = (new.embedder, new.embedder_options) != (current.embedder, dict(current.embedder_options or {}))
    if changed and vector_dimension is not None:
        _check_dimension(new.embedder or default_embedder, new.embedder_options, vector_dimension)
    return new, changed


def _check_dimension(name: str | None, options: dict[str, Any], vector_dimension: int) -> None:
    from ..embed.factory import embedder_dimensions

    produced = embedder_dimensions(name, options)
    if produced is not None and produced != vector_dimension:
        raise InvalidInput(f"embedderOptions.dimensions: the {name} embedder would produce {produced} dimensions "
                           f"and this deployment's index stores {vector_dimension}; set "
                           f"embedderOptions.dimensions to {vector_dimension}", code=INVALID_SETTING)


def _answer(patch: SettingsPatch) -> dict[str, Any] | None:
    """The answer settings to store (None: the defaults); the topic terms are built once here
    so that a term the classifier cannot use (nothing left once normalised) is refused now."""
    from ..answer.topics import TopicClassifier

    if patch.answer is None:
        return None
    answer = patch.answer.model_dump(exclude_unset=True, exclude_none=True)
    try:
        TopicClassifier.from_settings({k: v for k, v in answer.items() if k in ("topics", "context", "extraContext")})
    except InvalidInput as exc:
        raise InvalidInput(f"answer: {exc.message}", code=INVALID_SETTING) from None
    return answer or None
