"""Live sources through the route table (SQLite + tantivy): created ready and never queued,
never refreshed by any path, tables gone with the source, their bodies checked with stable
codes."""

from __future__ import annotations

import pytest

from knowledge.answer.service import replace_live_table
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.refresh.reindex import reindex
from tests.functional.test_lifecycle import KB, Api, create

ROWS = [{"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "fixedFee": 0.0005, "processingTime": "1 hour"}]


class CountingWorkflow(InProcessWorkflow):
    """The embedded workflow, recording each refresh it is asked to start."""

    def __init__(self, services):
        super().__init__(services, background=False)
        self.started: list[str] = []

    def start_refresh(self, bot, source_id, **kwargs):
        self.started.append(source_id)
        return super().start_refresh(bot, source_id, **kwargs)


@pytest.fixture
def api(services):
    services.workflow = CountingWorkflow(services)
    return Api(services)


def test_a_live_source_is_ready_at_once_weighs_1_3_and_is_never_queued(api, services):
    src = create(api, "live", {"tables": ["methods"], "fullList": "https://example.com/fees"}, name="Fees")
    assert (src["status"], src["queued"], src["weight"], src["visibility"]) == ("ready", False, 1.3, "agent")
    assert src["config"] == {"tables": ["methods"], "fullList": "https://example.com/fees"}
    sid = src["id"]
    status, body, _ = api("POST", f"{KB}/sources/{sid}/refresh")
    assert (status, body["status"], body["queued"]) == (202, "ready", False)
    status, body, _ = api("PATCH", f"{KB}/sources/{sid}", {"config": {"fullList": "the fees page"}})
    assert (status, body["status"], body["queued"]) == (200, "ready", False)
    api("POST", f"{KB}/sources/{sid}/disable")
    status, body, _ = api("POST", f"{KB}/sources/{sid}/enable")
    assert (status, body["status"], body["queued"]) == (202, "ready", False)
    reindex(services, "default")
    services.workflow.tick()
    assert services.workflow.started == []
    assert services.state.get_source("default", sid).status == "ready"


def test_deleting_a_live_source_deletes_its_tables(api, services):
    sid = create(api, "live", {}, name="Fees")["id"]
    replace_live_table(services, "default", "methods", {"rows": ROWS})
    assert services.state.get_live_tables("default", sid) == {"methods": [{**ROWS[0], "enabled": True}]}
    status, _, _ = api("DELETE", f"{KB}/sources/{sid}")
    assert status == 204
    assert services.state.get_live_tables("default", sid) == {}


@pytest.mark.parametrize(("body", "code"), [
    ({"type": "live", "name": "x", "config": {}, "visibility": "public"}, "invalid_visibility"),
    ({"type": "live", "name": "x", "config": {"colour": "red"}}, "invalid_config"),
    ({"type": "live", "name": "x", "config": {"tables": ["Not A Name"]}}, "invalid_config"),
    ({"type": "live", "name": "x", "config": {"tables": [f"t{i}" for i in range(51)]}}, "invalid_config"),
    ({"type": "live", "name": "x", "config": {"fullList": "x" * 2049}}, "invalid_config"),
    ({"type": "live", "name": "x", "config": {"fullList": 3}}, "invalid_config"),
])
def test_live_source_bodies_are_checked_with_stable_codes(api, services, body, code):
    status, reply, _ = api("POST", f"{KB}/sources", body)
    assert (status, reply["error"]["code"]) == (400, code), reply
    assert services.state.list_sources("default") == []
