"""One refresh orchestration (DESIGN.md §6): the embedded runner (``refresh.pipeline.Refresher``)
calls the Step Functions workflow's stage functions in the state machine's order, so a rule of
a stage — what the fail stage records, when a failed source is next due — comes out the same
through both deployments. Each test runs against every state store (SQLite, DynamoDB in moto).

The Step Functions side is played here by ``run_as_the_state_machine``: the stages called as
the state machine of ``infra/workflow.py`` calls them through the ingest and crawl handlers
(a project error raised as the handlers raise it, handed to ``fail`` in the shape Step Functions
gives a caught Lambda error). ``tests/e2e/test_aws_workflow.py`` runs the synthesised state
machine itself in moto and asserts the same order of tasks.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import knowledge.sources.website as website
from knowledge.adapters.local.folder_blobs import FolderBlobStore
from knowledge.adapters.local.tantivy_index import TantivySearchIndex
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.errors import Code, KnowledgeError, SourceFailure
from knowledge.model import BotSettings, Source
from knowledge.ports import Services
from knowledge.refresh import batches, crawl_turn, finish, leases, scheduling
from knowledge.refresh.packsync import pack_source_id, sync_packs
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.workflow_errors import workflow_error
from knowledge.schedule import is_due, requeue_at, runnable
from tests.conftest import FakeClock, pack_bytes, page

EMBEDDED, AWS = "embedded", "stepfunctions"
PAGES = [page("help/withdraw.md", "# Withdraw\n\nA withdrawal takes ten confirmations.", audience="CUSTOMER"),
         page("help/fees.md", "# Fees\n\nThe network fee is shown before you confirm.", audience="CUSTOMER")]
#: what the two runs must leave alike on the source's row
COMPARED = ("status", "error_code", "error_message", "next_refresh_at", "lease_owner", "lease_expires_at",
            "cancel_requested", "checksum", "passages", "documents_failed", "attempts")


@pytest.fixture
def services(state_store: Any, tmp_path: Path) -> Services:
    return Services(state=state_store, blobs=FolderBlobStore(tmp_path / "blobs"),
                    index=TantivySearchIndex(tmp_path / "index"), clock=FakeClock())


def run_as_the_state_machine(services: Services, bot: str, source_id: str, execution: str,
                             *, force: bool = False) -> dict[str, Any]:
    """TakeLease -> (website: CrawlPages until done) -> ListDocuments -> ProcessBatches ->
    Commit; any error -> MarkFailed (``fail``)."""

    def task(stage: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return stage(services, bot, source_id, execution, *args, **kwargs)
        except KnowledgeError as exc:  # what the handlers do with a project error
            raise workflow_error(exc) from exc

    state: dict[str, Any] = {"botId": bot, "sourceId": source_id}
    try:
        state["job"] = job = task(leases.take_lease, force=force)
        if not job["acquired"]:
            return {"status": "AlreadyRunning", "reason": job["reason"]}
        if job["sourceType"] == "website":
            crawl: dict[str, Any] = {"done": False, "waitSeconds": 0}
            while not crawl["done"]:
                crawl = task(crawl_turn.crawl_pages, crawl.get("cursor"),
                             deadline=time.monotonic() + 30).as_dict()
        listing = task(batches.list_documents, job)
        for batch in listing["batches"]:
            task(batches.process_batch, job, batch)
        return dict(task(finish.commit, job))
    except Exception as exc:  # noqa: BLE001 - the Catch of every state: States.ALL
        name = type(exc).__name__
        cause = json.dumps({"errorMessage": str(exc), "errorType": name, "stackTrace": []})
        return dict(task(finish.fail, {"Error": name, "Cause": cause}, state))


class StateMachineWorkflow:
    """The Workflow port as the AWS deployment's: a started refresh is one execution, named by
    the scheduler's token."""

    def __init__(self, services: Services):
        self.services = services
        self.results: list[dict[str, Any]] = []

    def start_refresh(self, bot: str, source_id: str, *, force: bool = False, reason: str = "manual",
                      token: str | None = None) -> dict[str, Any]:
        execution = f"{source_id}-{token}"
        self.results.append(run_as_the_state_machine(self.services, bot, source_id, execution, force=force))
        return {"id": execution, "bot": bot}


def row(services: Services, bot: str, source_id: str) -> dict[str, Any]:
    source = services.state.get_source(bot, source_id)
    assert source is not None
    return {name: getattr(source, name) for name in COMPARED}


def pack_for_both(services: Services, slug: str, data: bytes) -> dict[str, str]:
    """The same pack source in two bots, one per deployment's runner."""
    services.blobs.put(f"packs/{slug}.ndjson.gz", data)
    for bot in (EMBEDDED, AWS):
        services.state.put_bot(BotSettings(bot=bot))
        sync_packs(services, bot)
    return {bot: pack_source_id(bot, slug) for bot in (EMBEDDED, AWS)}


def record_stages(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stage functions called, in order (wrapped where both runners look them up)."""
    called: list[str] = []
    for module, name in ((leases, "take_lease"), (crawl_turn, "crawl_pages"), (batches, "list_documents"),
                         (batches, "process_batch"), (finish, "commit"), (finish, "fail")):
        real = getattr(module, name)

        def wrapped(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            called.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapped)
    return called


# -- the order of the stages ------------------------------------------------------------------------


def test_the_embedded_runner_calls_the_stages_in_the_state_machines_order(services: Services,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    good = pack_for_both(services, "wallet", pack_bytes(PAGES))[EMBEDDED]
    called = record_stages(monkeypatch)
    assert Refresher(services).refresh(EMBEDDED, good).status == "indexed"
    assert called == ["take_lease", "list_documents", "process_batch", "commit"]
    called.clear()
    assert Refresher(services).refresh(EMBEDDED, good).status == "skipped"  # the commit stage ends a skip
    assert called == ["take_lease", "list_documents", "commit"]
    called.clear()
    # the order tests/e2e/test_aws_workflow.py sees the state machine take for a malformed pack
    broken = pack_for_both(services, "broken", b"\x1f\x8b\x08 not really gzip")[EMBEDDED]
    assert Refresher(services).refresh(EMBEDDED, broken).status == "failed"
    assert called == ["take_lease", "list_documents", "fail"]


def test_the_embedded_runner_keeps_its_batch_files_in_memory(services: Services,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The same stages write the same files; in one process they need not reach the store."""
    ids = pack_for_both(services, "wallet", pack_bytes(PAGES))
    written: list[str] = []
    real_put = services.blobs.put

    def put(key: str, data: bytes) -> None:
        written.append(key)
        real_put(key, data)

    monkeypatch.setattr(services.blobs, "put", put)
    assert Refresher(services).refresh(EMBEDDED, ids[EMBEDDED]).status == "indexed"
    assert [k for k in written if k.startswith("staging/")] == []
    assert run_as_the_state_machine(services, AWS, ids[AWS], "exec-wallet")["status"] == "indexed"
    staged = sorted(k.rsplit("/", 1)[-1] for k in written if k.startswith(f"staging/{AWS}/"))
    assert staged == ["docs-0.json", "manifest.json", "result-0.json"]
    assert row(services, EMBEDDED, ids[EMBEDDED]) == row(services, AWS, ids[AWS])
    assert services.blobs.list("staging/") == []


# -- a rule of the fail stage, seen through both runners --------------------------------------------


def test_a_failed_run_is_recorded_alike_by_both_runners(services: Services) -> None:
    ids = pack_for_both(services, "broken", b"\x1f\x8b\x08 not really gzip")
    outcome = Refresher(services).refresh(EMBEDDED, ids[EMBEDDED])
    result = run_as_the_state_machine(services, AWS, ids[AWS], "exec-broken")
    assert (outcome.status, outcome.error_code) == (result["status"], result["errorCode"]) \
        == ("failed", Code.MALFORMED_FILE)
    embedded, aws = row(services, EMBEDDED, ids[EMBEDDED]), row(services, AWS, ids[AWS])
    assert embedded == aws
    assert (aws["status"], aws["error_code"], aws["lease_owner"]) == ("failed", Code.MALFORMED_FILE, None)
    assert services.state.orphan_generations() == []
    assert services.blobs.list("staging/") == []  # neither run left its batch files


def test_a_rule_changed_in_the_fail_stage_changes_both_runners(services: Services,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Which failures are queued again rather than failed is the fail stage's rule: changed
    there, both runners follow (a runner with a copy of its own would still fail the source)."""
    monkeypatch.setattr(finish, "REQUEUE_CODES", finish.REQUEUE_CODES | {Code.MALFORMED_FILE})
    ids = pack_for_both(services, "broken", b"\x1f\x8b\x08 not really gzip")
    outcome = Refresher(services).refresh(EMBEDDED, ids[EMBEDDED])
    result = run_as_the_state_machine(services, AWS, ids[AWS], "exec-broken")
    assert (outcome.status, result["status"]) == ("queued", "queued")
    embedded, aws = row(services, EMBEDDED, ids[EMBEDDED]), row(services, AWS, ids[AWS])
    assert embedded == aws
    assert (aws["status"], aws["error_code"]) == ("waiting", Code.MALFORMED_FILE)


def test_an_embedder_outage_queues_the_source_again_alike(services: Services) -> None:
    """A passing failure (the bot's embedder cannot be built) is queued again with the one
    backoff rule (``schedule.requeue_at``), whichever runner met it."""
    ids = pack_for_both(services, "wallet", pack_bytes(PAGES))
    for bot in (EMBEDDED, AWS):
        services.state.put_bot(BotSettings(bot=bot, embedder="hashing"))  # no factory builds it here
    now = services.clock.now()
    outcome = Refresher(services).refresh(EMBEDDED, ids[EMBEDDED])
    result = run_as_the_state_machine(services, AWS, ids[AWS], "exec-outage")
    assert (outcome.status, outcome.error_code) == (result["status"], result["errorCode"]) \
        == ("queued", Code.EMBEDDING_FAILED)
    embedded, aws = row(services, EMBEDDED, ids[EMBEDDED]), row(services, AWS, ids[AWS])
    assert embedded == aws
    assert aws["status"] == "waiting" and aws["next_refresh_at"] == requeue_at(aws["attempts"], now)
    assert not is_due(aws["status"], aws["next_refresh_at"], now)
    assert [s.id for s in services.state.due_sources(now)] == []
    due_again = {s.id for s in services.state.due_sources(aws["next_refresh_at"])}
    assert due_again == set(ids.values())


# -- the due time after a failed scheduled run, through both schedulers -----------------------------


class Unreachable:
    """Every request times out."""

    def fetch(self, url: str, **kwargs: Any) -> Any:
        raise SourceFailure(Code.FETCH_TIMEOUT, "timed out")

    fetch_robots = fetch


def test_a_failing_website_is_next_due_one_interval_after_its_pickup_on_both(
        services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(website, "default_fetcher", lambda policy: Unreachable())
    clock = services.clock
    assert isinstance(clock, FakeClock)
    interval = 3600.0

    def scheduled_site(bot: str) -> None:
        now = clock.now()
        services.state.put_bot(BotSettings(bot=bot))
        services.state.put_source(Source(id="site", bot=bot, type="website", name="Docs", status="ready",
                                         config={"origins": ["https://help.example"],
                                                 "startUrls": ["https://help.example/"]},
                                         refresh_every=interval, next_refresh_at=now - 1,
                                         created_at=now, updated_at=now))

    # the embedded scheduler's tick, its worker running the job in the call
    scheduled_site(EMBEDDED)
    picked_up = clock.now()
    InProcessWorkflow(services, background=False).tick()
    # the AWS scheduler's tick, each execution run through the stages
    scheduled_site(AWS)
    workflow = StateMachineWorkflow(services)
    services.workflow = workflow
    assert len(scheduling.start_due_refreshes(services, runnable)) == 1
    assert [r["status"] for r in workflow.results] == ["failed"]

    embedded, aws = row(services, EMBEDDED, "site"), row(services, AWS, "site")
    assert embedded == aws
    assert (aws["status"], aws["error_code"], aws["lease_owner"]) == ("failed", Code.FETCH_TIMEOUT, None)
    # not due at every tick after the failure: one interval after the pickup
    assert aws["next_refresh_at"] == picked_up + interval
    assert services.state.due_sources(clock.now()) == []
    clock.advance(interval)
    assert {(s.bot, s.id) for s in services.state.due_sources(clock.now())} == {(EMBEDDED, "site"), (AWS, "site")}
