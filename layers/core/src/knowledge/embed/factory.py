"""Pick an embedder by name; embed in batches of 32 with backoff on throttling."""

from __future__ import annotations

import importlib.util
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import Code, InvalidInput, KnowledgeError, SourceFailure
from ..model import BotSettings
from ..ports import Embedder
from ..settings import EMBED_BATCH

if TYPE_CHECKING:
    from ..crawl.outbound import OutboundPolicy

log = logging.getLogger(__name__)

EMBEDDER_CHOICES = ("none", "hashing", "local", "bedrock", "openai")


class EmbedderUnavailable(KnowledgeError):
    """An embedder that cannot work here (a package or a setting is missing): the message is
    one line saying what is missing and how to fix it."""

    default_code = Code.EMBEDDING_FAILED


def bot_embedder(settings: BotSettings, default: str | None) -> tuple[str, str]:
    """The embedder a bot uses and where that choice comes from: ``(name, "bot")`` for the
    bot's own setting, ``(name, "default")`` for the deployment's (``KB_EMBEDDER``)."""
    if settings.embedder:
        return settings.embedder, "bot"
    return default or "none", "default"


def check_embedder(
    name: str | None, options: dict[str, Any] | None = None, *, policy: OutboundPolicy | None = None
) -> None:
    """Raise :class:`EmbedderUnavailable` when the named embedder cannot load in this process:
    its packages or model files are not installed, or its settings are incomplete. Neither
    reads model weights nor calls a network service, so it is cheap enough for every start."""
    options = options or {}
    if name in (None, "", "none", "hashing"):
        return
    if name == "local":
        from .local import INSTALL_HINT, missing_requirement

        missing = missing_requirement()
        if missing:
            raise EmbedderUnavailable(f"the local embedder cannot load: {missing}; {INSTALL_HINT}")
        return
    if name == "openai":
        absent = [key for key in ("baseUrl", "apiKey") if not options.get(key)]
        if absent:
            raise EmbedderUnavailable(f"the openai embedder needs {' and '.join(absent)} in the bot's settings")
        from ..crawl.outbound import check_configured_url

        try:  # https only, no blocked IP literal (names are checked again at every call)
            check_configured_url(options["baseUrl"], policy)
        except InvalidInput as exc:
            raise EmbedderUnavailable(f"the openai embedder's baseUrl is refused: {exc.message}",
                                      code=exc.code) from exc
        return
    if name == "bedrock":
        if importlib.util.find_spec("boto3") is None:
            raise EmbedderUnavailable("the bedrock embedder cannot load: boto3 is not installed; "
                                      "install it with `pip install boto3`")
        return
    raise EmbedderUnavailable(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDER_CHOICES)}")


#: what each embedder produces when its options name no ``dimensions``
DEFAULT_DIMENSIONS = {"hashing": 256, "local": 384, "openai": 1536, "bedrock": 1024}


def embedder_dimensions(name: str | None, options: dict[str, Any] | None = None) -> int | None:
    """How many dimensions the embedder ``name`` with ``options`` produces, without building
    it (None: no embedder)."""
    if name in (None, "", "none") or name not in DEFAULT_DIMENSIONS:
        return None
    if name == "local":
        return DEFAULT_DIMENSIONS["local"]
    return int((options or {}).get("dimensions", DEFAULT_DIMENSIONS[name]))


def build_embedder(
    name: str | None, options: dict[str, Any] | None = None, *, policy: OutboundPolicy | None = None
) -> Embedder | None:
    """``none``/None -> no embedder. Options come from the bot's settings (openai: baseUrl,
    apiKey, model, dimensions; bedrock: modelId, dimensions; hashing: dimensions).
    ``policy`` (the composition root's) governs the openai embedder's outbound calls; a
    misconfigured embedder (a base URL that may not be called included) is ``ValueError``."""
    options = options or {}
    if name in (None, "", "none"):
        return None
    if name == "hashing":
        from .hashing import HashingEmbedder

        return HashingEmbedder(int(options.get("dimensions", DEFAULT_DIMENSIONS["hashing"])))
    if name == "local":
        from .local import LocalEmbedder

        return LocalEmbedder()
    if name == "openai":
        from .openai import OpenAIEmbedder

        if not options.get("baseUrl") or not options.get("apiKey"):
            raise ValueError("the openai embedder needs baseUrl and apiKey in the bot's settings")
        try:
            return OpenAIEmbedder(str(options["baseUrl"]), str(options["apiKey"]),
                                  model=str(options.get("model", "text-embedding-3-small")),
                                  dimensions=int(options.get("dimensions", DEFAULT_DIMENSIONS["openai"])),
                                  policy=policy)
        except InvalidInput as exc:
            raise ValueError(f"the openai embedder's baseUrl is refused ({exc.code})") from exc
    if name == "bedrock":
        import boto3

        from ..adapters.aws.bedrock_embedder import BedrockEmbedder

        return BedrockEmbedder(boto3.client("bedrock-runtime"),
                               model_id=str(options.get("modelId", "amazon.titan-embed-text-v2:0")),
                               dimensions=int(options.get("dimensions", DEFAULT_DIMENSIONS["bedrock"])))
    raise ValueError(f"unknown embedder {name!r}; choose one of {', '.join(EMBEDDER_CHOICES)}")


def embed_in_batches(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    batch: int = EMBED_BATCH,
    attempts: int = 5,
    base_delay: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> list[list[float]]:
    """Embed ``texts`` 32 at a time. Throttling is retried with exponential backoff; when it
    persists the error stays ``rate_limited`` (the job is retried later), any other failure is
    ``embedding_failed`` — the source never goes live half-embedded."""
    out: list[list[float]] = []
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        for attempt in range(attempts):
            try:
                vectors = embedder.embed(chunk)
                break
            except SourceFailure as exc:
                if exc.code != Code.RATE_LIMITED or attempt == attempts - 1:
                    raise
                delay = base_delay * (2**attempt)
                log.info("embedder throttled; retrying in %.1fs", delay)
                sleep(delay)
        if len(vectors) != len(chunk):
            raise SourceFailure(Code.EMBEDDING_FAILED, "embedder returned a different number of vectors")
        out.extend(vectors)
    return out
