"""Build, store and load a bot's corpus-learned rescue model.

The model is learned from every live passage of the bot, both audiences, and stored as a
blob (a folder file embedded, an S3 object on AWS). A digest of the live generations it was
built from is kept in the bot's settings: when the live set moves on (a refresh committed, a
source disabled or deleted) the model is stale and is rebuilt after the work that changed it.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any

from ..errors import KnowledgeError
from ..settings import RESCUE_FORMAT
from ..wiring import Services

if TYPE_CHECKING:
    from ..retrieve.rescue import RescueModel

log = logging.getLogger(__name__)


def blob_key(bot: str) -> str:
    return f"rescue/{bot}.npz"


def live_digest(services: Services, bot: str) -> str:
    gens = sorted(s.source_gen for s in services.state.live_sources(bot))
    return hashlib.sha256("\n".join([f"format {RESCUE_FORMAT}", *gens]).encode()).hexdigest()[:32]


def is_stale(services: Services, bot: str) -> bool:
    return services.state.get_bot(bot).rescue_version != live_digest(services, bot)


def rebuild(services: Services, bot: str) -> dict[str, int]:
    """Learn the model from the bot's live corpus and store it (disabled below its minimums)."""
    digest = live_digest(services, bot)
    live = [s.source_gen for s in services.state.live_sources(bot)]
    from ..retrieve.rescue import RescueModel

    model = RescueModel.build(services.index.iter_passages(bot, live), services.index.analyze)
    services.blobs.put(blob_key(bot), model.to_bytes())
    settings = services.state.get_bot(bot)
    settings.rescue_version = digest
    services.state.put_bot(settings)
    log.info("rescue model of %s rebuilt: %s", bot, model.stats)
    return model.stats


def rebuild_if_stale(services: Services, bot: str) -> bool:
    if not is_stale(services, bot):
        return False
    rebuild(services, bot)
    return True


def load(services: Services, bot: str) -> RescueModel | None:
    """The bot's model, loaded once per stored version (cached on ``services``)."""
    return load_version(services, bot, services.state.get_bot(bot).rescue_version)


def load_version(services: Services, bot: str, version: str | None) -> RescueModel | None:
    """``load`` for a caller that already read the bot's settings (``rescue_version``)."""
    if version is None:
        return None
    cache: dict[str, tuple[str, Any]] = services.caches.setdefault("rescue", {})
    hit = cache.get(bot)
    if hit is not None and hit[0] == version:
        return hit[1]
    from ..retrieve.rescue import RescueModel  # numpy: loaded when a bot has a model

    try:
        model = RescueModel.from_bytes(services.blobs.get(blob_key(bot)))
    except KnowledgeError as exc:
        log.warning("rescue model of %s unavailable (%s); retrieval goes on without it", bot, exc.code)
        return None
    cache[bot] = (version, model)
    return model
