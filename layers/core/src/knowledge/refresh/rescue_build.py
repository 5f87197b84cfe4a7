"""Build, store and load a bot's corpus-learned rescue model.

The rescue is off on the answer path (``RetrievalOptions.rescue``: it did not earn its place,
``bench/rescue_gate.py``), so no deployment learns models by itself: the benchmarks
that measure it build one with :func:`rebuild_if_stale` and ask with the option switched on.
The model is learned from every live passage of the bot, both audiences, and stored as a
blob. A digest of the live generations it was built from is kept in the bot's settings: when
the live set moves on the model is stale.

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
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import KnowledgeError
from ..ports import Services
from ..settings import RESCUE_FORMAT

if TYPE_CHECKING:
    from ..retrieve.rescue import RescueModel

log = logging.getLogger(__name__)
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
