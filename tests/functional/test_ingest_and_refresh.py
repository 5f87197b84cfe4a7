"""Packs through the refresh pipeline over the real embedded adapters (SQLite + tantivy)."""

from __future__ import annotations

import pytest

import knowledge.sources.base as sources_base
from knowledge.errors import BackendError, Code
from knowledge.refresh.finish import drop_orphans
from knowledge.refresh.packsync import install_pack, pack_source_id
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from tests.conftest import page

HELP = page("help/withdraw/monero.md",
            "# Withdraw Monero\n\nSend XMR out to your subaddress. Payouts take ten confirmations.",
            audience="CUSTOMER", title="Withdraw Monero")
ADMIN = page("admin/hot-wallet.md", "# Hot wallet\n\nThe hot wallet rebalancing threshold moves XMR to cold storage.",
             audience="OPERATOR", title="Hot wallet")
NEW_PAGE = page("help/limits.md", "# Limits\n\nThe daily quokka allowance caps withdrawals.", audience="CUSTOMER",
                title="Limits")


def ask(services, q, audience="customer", bot="default"):
    return retrieve(services, RetrievalRequest(bot, q, audience))


def paths(result):
    return [e["path"] for e in result["excerpts"]]


def ingest(services, path, bot="default", **kw):
    install_pack(services, path)
    return reindex(services, bot, **kw)


def test_customer_never_sees_operator_pages(services, write_pack):
    ingest(services, write_pack("coinvault", [HELP, ADMIN]))
    # the operator page matches this question perfectly; it must still never be returned
    for audience in ("customer", "public"):
        res = ask(services, "hot wallet rebalancing threshold cold storage", audience)
        assert "admin/hot-wallet.md" not in paths(res)
    res = ask(services, "hot wallet rebalancing threshold", "operator")
    assert paths(res)[0] == "admin/hot-wallet.md"
    assert "help/withdraw/monero.md" not in paths(ask(services, "withdraw monero subaddress", "operator"))


def test_unchanged_pack_is_skipped_and_changed_pack_reingested(services, write_pack):
    first = ingest(services, write_pack("coinvault", [HELP, ADMIN]))
    assert [o.status for o in first.outcomes] == ["indexed"]
    again = ingest(services, write_pack("coinvault", [HELP, ADMIN]))
    assert [o.status for o in again.outcomes] == ["skipped"]
    changed = ingest(services, write_pack("coinvault", [HELP, ADMIN, NEW_PAGE]))
    assert [o.status for o in changed.outcomes] == ["indexed"]
    assert paths(ask(services, "quokka allowance"))[0] == "help/limits.md"


def test_checksum_written_only_after_passages_replaced(services, write_pack, monkeypatch):
    """Regression (reference 000): the stored checksum must be the evidence that the new
    passages landed. A refresh that fails while staging must leave the old checksum, so
    the next run re-ingests instead of skipping forever."""
    ingest(services, write_pack("coinvault", [HELP, ADMIN]))
    sid = pack_source_id("default", "coinvault")
    old_checksum = services.state.get_source("default", sid).checksum

    original_write = services.index.write

    def failing_write(bot, passages, **kw):
        raise BackendError("disk full")

    monkeypatch.setattr(services.index, "write", failing_write)
    install_pack(services, write_pack("coinvault", [HELP, ADMIN, NEW_PAGE]))
    with pytest.raises(BackendError):
        Refresher(services).refresh("default", sid)
    src = services.state.get_source("default", sid)
    assert src.checksum == old_checksum
    assert src.status == "failed"
    # the old generation still answers
    assert paths(ask(services, "withdraw monero subaddress"))[0] == "help/withdraw/monero.md"

    monkeypatch.setattr(services.index, "write", original_write)
    report = reindex(services, "default")
    assert [o.status for o in report.outcomes] == ["indexed"]
    assert paths(ask(services, "quokka allowance"))[0] == "help/limits.md"
    assert services.state.get_source("default", sid).checksum != old_checksum


def test_raising_ingest_version_reingests_exactly_once(services, write_pack, monkeypatch):
    path = write_pack("coinvault", [HELP, ADMIN])
    ingest(services, path)
    monkeypatch.setattr(sources_base, "INGEST_VERSION", sources_base.INGEST_VERSION + "-next")
    assert [o.status for o in ingest(services, path).outcomes] == ["indexed"]
    assert [o.status for o in ingest(services, path).outcomes] == ["skipped"]


def test_skip_requires_passages(services, write_pack):
    path = write_pack("coinvault", [HELP, ADMIN])
    ingest(services, path)
    sid = pack_source_id("default", "coinvault")
    # same checksum but nothing indexed (e.g. an index wiped by hand): must rebuild
    services.state.update_source("default", sid, passages=0)
    assert [o.status for o in ingest(services, path).outcomes] == ["indexed"]


def test_one_failing_pack_never_aborts_the_run(services, write_pack, tmp_path):
    good = write_pack("coinvault", [HELP])
    bad = tmp_path / "broken.ndjson.gz"
    bad.write_bytes(b"this is not gzip")
    install_pack(services, bad)
    report = ingest(services, good)
    by_name = {o.name: o for o in report.outcomes}
    assert report.failed == 1
    assert by_name["Documentation — Broken"].error_code == Code.MALFORMED_FILE
    assert by_name["Documentation — Coinvault"].status == "indexed"
    assert report.as_dict()["warning"]
    row = services.state.get_source("default", pack_source_id("default", "broken"))
    assert (row.status, row.error_code) == ("failed", Code.MALFORMED_FILE)


def test_out_of_scope_pack_is_listed_disabled_and_withdrawn(services, write_pack):
    ingest(services, write_pack("coinvault", [HELP]))
    ingest(services, write_pack("stakehouse", [page("help/pools.md", "# Pools\n\nJoin a zebrafinch pool.",
                                                   audience="CUSTOMER")]))
    assert paths(ask(services, "zebrafinch pool")) == ["help/pools.md"]

    settings = services.state.get_bot("default")
    settings.products = ["coinvault"]
    services.state.put_bot(settings)
    report = reindex(services, "default")
    assert report.out_of_scope == ["stakehouse"]
    row = services.state.get_source("default", pack_source_id("default", "stakehouse"))
    assert (row.status, row.error_code, row.passages) == ("disabled", Code.OUT_OF_SCOPE, 0)
    assert ask(services, "zebrafinch pool")["excerpts"] == []  # withdrawn, not left alone
    assert services.index.count("default", "customer", [f"{row.id}:1"]) == 0

    settings.products = ["coinvault", "stakehouse"]
    services.state.put_bot(settings)
    reindex(services, "default")
    assert paths(ask(services, "zebrafinch pool")) == ["help/pools.md"]


def test_bots_are_isolated(services, write_pack):
    path = write_pack("coinvault", [HELP])
    install_pack(services, path)
    reindex(services, "alpha")
    assert paths(ask(services, "withdraw monero", bot="alpha"))
    # same packs folder, but bot beta has not indexed anything: nothing of alpha's leaks
    assert ask(services, "withdraw monero", bot="beta")["excerpts"] == []
    reindex(services, "beta")
    beta = ask(services, "withdraw monero", bot="beta")
    assert {e["sourceId"] for e in beta["excerpts"]} == {pack_source_id("beta", "coinvault")}


def test_readers_see_old_or_new_generation_never_a_mix(services, write_pack, monkeypatch):
    v1 = [page(f"help/p{i}.md", f"# Page {i}\n\nversion one marmot text {i}", audience="CUSTOMER") for i in range(5)]
    v2 = [page(f"help/p{i}.md", f"# Page {i}\n\nversion two marmot text {i}", audience="CUSTOMER") for i in range(5)]
    ingest(services, write_pack("coinvault", v1))
    seen_during = []
    original_write = services.index.write

    def spying_write(bot, passages, **kw):
        n = original_write(bot, passages, **kw)
        seen_during.append(ask(services, "marmot text"))  # new generation written, not yet live
        return n

    monkeypatch.setattr(services.index, "write", spying_write)
    ingest(services, write_pack("coinvault", v2))
    assert seen_during
    for res in seen_during:
        assert res["excerpts"] and all("version one" in e["text"] for e in res["excerpts"])
    after = ask(services, "marmot text")
    assert after["excerpts"] and all("version two" in e["text"] for e in after["excerpts"])


def test_generation_that_never_went_live_is_removed_on_start(services, write_pack):
    ingest(services, write_pack("coinvault", [HELP]))
    sid = pack_source_id("default", "coinvault")
    live = services.state.get_source("default", sid).live_generation
    # a worker takes the lease, stages a generation, and dies without committing
    assert services.state.acquire_lease("default", sid, "dead-worker", services.clock.now(), 120)
    gen = services.state.begin_generation("default", sid, "dead-worker")
    from knowledge.model import Passage

    services.index.write("default", [Passage(id="x-0", bot="default", source_id=sid, document_id="x",
                                             generation=gen, ordinal=0, title="t", path="help/x.md",
                                             breadcrumb="b", text="orphaned words", visibility="public")])
    assert services.index.count("default", "customer", [f"{sid}:{gen}"]) == 1
    services.clock.advance(121)  # the lease expires
    from knowledge.refresh.reaper import reap_expired_leases

    reap_expired_leases(services)
    drop_orphans(services)
    assert services.index.count("default", "customer", [f"{sid}:{gen}"]) == 0
    assert services.state.get_source("default", sid).live_generation == live
    assert paths(ask(services, "withdraw monero"))[0] == "help/withdraw/monero.md"


def test_kb_serve_compacts_once_its_queue_drains(services, write_pack):
    import time

    from knowledge.embedded.worker import InProcessWorkflow

    for name in ("coinvault", "ticketdesk", "monerod"):  # three sources: three commits, segments apart
        install_pack(services, write_pack(name, [page(f"help/{name}-{i}.md", f"# {name} {i}\n\nWithdraw XMR {i}.",
                                                      audience="CUSTOMER", title=f"{name} {i}") for i in range(3)]))
    part_meta = services.index.root / "default" / "customer" / "meta.json"
    workflow = InProcessWorkflow(services, background=True, tick_seconds=3600)

    def compacted() -> bool:
        part = services.index._part("default", "customer", create=False)
        return part is not None and part.layout()[0] == 1

    workflow.start()
    try:
        job = workflow.start_reindex("default")  # a reindex job, not only a source refresh
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (workflow.job(job["id"]).status != "done" or not compacted()):
            time.sleep(0.05)
    finally:
        workflow.stop()
    assert workflow.job(job["id"]).status == "done"
    part = services.index._part("default", "customer", create=False)
    assert part is not None and part.layout() == (1, 9, 0) and part_meta.exists()
    assert {e["path"] for e in ask(services, "withdraw XMR 1")["excerpts"]} >= {"help/coinvault-1.md",
                                                                              "help/monerod-1.md"}
