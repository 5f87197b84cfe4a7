"""Build, store and load a bot's corpus-learned rescue model.

The model is learned from every live passage of the bot, both audiences, and stored as a
blob (a folder file embedded, an S3 object on AWS). A digest of the live generations it was
built from is kept in the bot's settings: when the live set moves on (a refresh committed, a
source disabled or deleted) the model is stale and is rebuilt after the work that changed it:
``kb ingest`` once its summary is printed, ``kb serve`` when its refresh queue drains, and on
AWS the scheduler's every-minute tick (:func:`rebuild_settled`) for each stale bot none of whose
sources is being indexed.

One analyser (:func:`analyzer`) learns the model and analyses the questions asked of it, in
both modes: the embedded index's English analyser (tantivy, in-process). In the embedded mode
it is the index's own ``analyze``, exactly what the rescue has always used; on AWS it is a
standalone instance of the same analyser, never OpenSearch's ``_analyze`` (a build analyses
every distinct word of the corpus: hundreds of thousands of round trips). The model depends on
its analyser only, never on the search backend's, so both deployments learn the same model
from the same corpus.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import KnowledgeError, NotFound
from ..ports import Services
from ..settings import RESCUE_FORMAT

if TYPE_CHECKING:
    from ..retrieve.rescue import RescueModel

log = logging.getLogger(__name__)
#: how long a rebuild claimed by one ``rebuild_settled`` keeps others off the bot: longer than
#: any run may last (Lambda stops a function after 15 minutes), so a claim older than this
#: belongs to a run that was stopped before it could drop it
CLAIM_SECONDS = 900.0


Analyze = Callable[[str], list[str]]


@functools.cache
def _standalone_analyzer() -> Analyze | None:
    """The embedded index's analysis outside any index (:func:`knowledge.analysis.terms`, one
    analyser per thread); None where tantivy is not installed."""
    try:
        import tantivy  # noqa: F401
    except ImportError:
        return None
    from .. import analysis

    return analysis.terms


def analyzer(index: Any = None) -> Analyze | None:
    """The analyser the rescue learns and asks with: ``index.analyze`` when ``index`` is the
    embedded tantivy index (whose analyser this is), else a standalone instance of the same
    analyser. None when tantivy cannot be imported here: the rescue is then neither built nor
    asked (a warning says so), and retrieval goes on without it."""
    try:
        from ..adapters.local.tantivy_index import TantivySearchIndex
    except ImportError:
        return None
    if isinstance(index, TantivySearchIndex):  # a Lazy holder of another index is never created by this
        return index.analyze
    return _standalone_analyzer()


def blob_key(bot: str) -> str:
    return f"rescue/{bot}.npz"


def claim_key(bot: str) -> str:
    return f"rescue/{bot}.building"


def _claimed(services: Services, bot: str, now: float) -> bool:
    try:
        claim = json.loads(services.blobs.get(claim_key(bot)))
        return bool(now - float(claim["at"]) < CLAIM_SECONDS)
    except NotFound:
        return False
    except (ValueError, TypeError, KeyError):  # unreadable: treated as absent, overwritten below
        return False


def _drop_claim(services: Services, bot: str) -> None:
    try:
        services.blobs.delete(claim_key(bot))
    except KnowledgeError as exc:  # the claim lapses after CLAIM_SECONDS on its own
        log.warning("rescue rebuild claim of %s not dropped (%s)", bot, exc.code)


def live_digest(services: Services, bot: str) -> str:
    return _digest(s.source_gen for s in services.state.live_sources(bot))


def _digest(source_gens: Iterable[str]) -> str:
    gens = sorted(source_gens)
    return hashlib.sha256("\n".join([f"format {RESCUE_FORMAT}", *gens]).encode()).hexdigest()[:32]


def is_stale(services: Services, bot: str) -> bool:
    return services.state.get_bot(bot).rescue_version != live_digest(services, bot)


def rebuild(services: Services, bot: str) -> dict[str, int]:
    """Learn the model from the bot's live corpus and store it (disabled below its minimums)."""
    analyze = analyzer(services.index)
    if analyze is None:
        raise RuntimeError("the rescue analyser (tantivy) is not installed")
    digest = live_digest(services, bot)
    live = [s.source_gen for s in services.state.live_sources(bot)]
    from ..retrieve.rescue import RescueModel

    model = RescueModel.build(services.index.iter_passages(bot, live), analyze)
    services.blobs.put(blob_key(bot), model.to_bytes())
    services.state.set_rescue_version(bot, digest)  # only that field: settings edited meanwhile stay
    log.info("rescue model of %s rebuilt: %s", bot, model.stats)
    return model.stats


def rebuild_if_stale(services: Services, bot: str) -> bool:
    if not is_stale(services, bot):
        return False
    rebuild(services, bot)
    return True


def rebuild_settled(
    services: Services,
    *,
    busy: Collection[str] = (),
    keep_going: Callable[[], bool] = lambda: True,
) -> list[str]:
    """Rebuild the model of every bot whose model is stale and none of whose sources is being
    indexed (holds an unexpired lease), once the work that moved its corpus is done: what the
    AWS scheduler's tick does, the counterpart of ``kb serve`` rebuilding when its queue
    drains. ``busy`` names bots to leave for a later call (e.g. those whose refresh was just
    started and has not taken its lease yet); ``keep_going`` is asked before each bot (a time
    budget). A bot that never had a model and has nothing live is left alone.

    Calls may overlap (a tick outlasting the minute to the next one, while it learns a large
    corpus): a rebuild is claimed with a small blob beside the model (``claim_key``), and a
    bot another call is rebuilding is skipped, until that claim is dropped or older than
    ``CLAIM_SECONDS``.

    The rescue is an enhancement: a rebuild that fails is logged and the others go on; the
    bot stays stale and the next call tries again. Returns the bots rebuilt."""
    state = services.state
    rebuilt: list[str] = []
    skip = set(busy)
    for bot in state.list_bots():
        if not keep_going():
            break
        if bot in skip:
            continue
        version = state.get_bot(bot).rescue_version
        live = state.live_sources(bot)
        if version is None and not live:
            continue
        if version == _digest(s.source_gen for s in live):
            continue
        now = services.clock.now()
        if any(s.lease_owner is not None and (s.lease_expires_at is None or s.lease_expires_at > now)
               for s in state.list_sources(bot)):
            continue  # being indexed: rebuilt once that work is done
        if analyzer(services.index) is None:  # imported only once a bot needs its model
            log.warning("rescue models are not rebuilt: the rescue analyser (tantivy) is not installed")
            break
        if _claimed(services, bot, now):
            continue  # another call is learning it
        try:
            services.blobs.put(claim_key(bot), json.dumps({"at": now}).encode())
            rebuild(services, bot)
            rebuilt.append(bot)
        except Exception:  # an enhancement: log, keep answering with the previous model
            log.exception("rescue rebuild of %s failed", bot)
        finally:
            _drop_claim(services, bot)
    return rebuilt


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
