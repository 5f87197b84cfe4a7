"""Stage behaviour the AWS follow-up refresh and the AWS reindex rely on, on the embedded
stores (the stages are backend-agnostic):

* a run asked to stop while it embeds a batch lets go at its next heartbeat, so the
  execution waiting for the lease (an edit's follow-up) starts soon;
* the pack sync withdraws an out-of-scope pack even when the caller may not write the index
  (on AWS: the admin API and the scheduler); the passages go at the next commit's clean-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from knowledge.errors import BackendError, Code
from knowledge.model import BotSettings
from knowledge.refresh import batches, finish, leases, staging
from knowledge.refresh.packsync import pack_source_id, sync_packs
from knowledge.wiring import Services
from tests.conftest import pack_bytes, page

BOT = "acme"


class CancellingEmbedder:
    """Embeds; on its first call, the source is edited (cancel requested) as by a PATCH."""

    name = "test-cancelling"
    dimensions = 4

    def __init__(self, services: Services, source_id: str):
        self.services = services
        self.source_id = source_id
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == 1:
            self.services.state.update_source(BOT, self.source_id, cancel_requested=True)
        return [[1.0, 0.0, 0.0, float(len(t) % 7)] for t in texts]


def pack_source_with(services: Services, pages: int) -> str:
    services.blobs.put("packs/rules.ndjson.gz", pack_bytes([
        page(f"help/rule-{n}.md", f"# Rule {n}\n\nWithdrawal rule number {n} applies to every wallet.",
             audience="CUSTOMER", title=f"Rule {n}")
        for n in range(pages)
    ]))
    services.state.put_bot(BotSettings(bot=BOT))
    [row] = sync_packs(services, BOT)
    return row.id


def test_a_batch_cancelled_while_embedding_stops_at_the_next_heartbeat(services: Services,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rules = pack_source_with(services, 5)
    embedder = CancellingEmbedder(services, rules)
    monkeypatch.setattr(batches, "bot_embedder", lambda _services, _bot: embedder)
    job = leases.take_lease(services, BOT, rules, "exec-1")
    listing = batches.list_documents(services, BOT, rules, "exec-1", job)
    [batch] = listing["batches"]

    result = batches.process_batch(services, BOT, rules, "exec-1", job, batch)

    assert result == {"batch": 0, "stopped": "cancelled"}
    # the slice was embedded, then the heartbeat saw the cancel: nothing was written
    assert embedder.calls == 1
    assert not services.blobs.exists(f"{staging.staging_prefix(BOT, rules, job['generation'])}result-0.json")
    outcome = finish.commit(services, BOT, rules, "exec-1", job)
    assert (outcome["status"], outcome["errorCode"]) == ("failed", Code.CANCELLED)
    source = services.state.get_source(BOT, rules)
    assert source.lease_owner is None and source.cancel_requested is False
    # the follow-up takes the lease at once
    assert leases.take_lease(services, BOT, rules, "exec-2")["acquired"] is True


def test_a_batch_not_cancelled_heartbeats_and_writes(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = pack_source_with(services, 5)

    class Plain(CancellingEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            self.calls += 1
            return [[1.0, 0.0, 0.0, 1.0] for _ in texts]

    embedder = Plain(services, rules)
    monkeypatch.setattr(batches, "bot_embedder", lambda _services, _bot: embedder)
    job = leases.take_lease(services, BOT, rules, "exec-1")
    [batch] = batches.list_documents(services, BOT, rules, "exec-1", job)["batches"]
    result = batches.process_batch(services, BOT, rules, "exec-1", job, batch)
    assert "stopped" not in result and result["passages"] == 5 and embedder.calls == 1
    assert finish.commit(services, BOT, rules, "exec-1", job)["status"] == "indexed"


class ReadOnlyIndex:
    """The caller's index: reads pass through, deletes are refused as a read-only role is."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.refused = 0

    def delete_generation(self, bot: str, source_id: str, generation: int) -> None:
        self.refused += 1
        raise BackendError("search index delete failed", details={"status": 403})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_pack_sync_withdraws_out_of_scope_packs_without_index_write_access(services: Services) -> None:
    services.blobs.put("packs/forex.ndjson.gz", pack_bytes([
        page("help/forex.md", "# Forex\n\nForex leverage up to fifty to one.", audience="CUSTOMER", title="Forex"),
    ]))
    services.state.put_bot(BotSettings(bot=BOT))
    [row] = sync_packs(services, BOT)
    owner = "exec-1"
    job = leases.take_lease(services, BOT, row.id, owner)
    for batch in batches.list_documents(services, BOT, row.id, owner, job)["batches"]:
        batches.process_batch(services, BOT, row.id, owner, job, batch)
    assert finish.commit(services, BOT, row.id, owner, job)["status"] == "indexed"
    live = services.state.get_source(BOT, row.id).live_generation
    assert live is not None

    services.state.put_bot(BotSettings(bot=BOT, products=["wallet"]))
    full_index = services.index
    services.index = ReadOnlyIndex(full_index)
    [withdrawn] = sync_packs(services, BOT)

    assert withdrawn.id == pack_source_id(BOT, "forex")
    assert (withdrawn.status, withdrawn.error_code, withdrawn.live_generation) == ("disabled", Code.OUT_OF_SCOPE, None)
    assert services.index.refused == 1
    assert services.state.orphan_generations() == [(BOT, row.id, live)]  # left for the clean-up
    services.index = full_index
    assert finish.drop_orphans(services) == 1
    assert services.state.orphan_generations() == []
