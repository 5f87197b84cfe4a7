"""The API's input defects as found, over real HTTP against the embedded server: each bad body
gets a 4xx with its code and the keep-alive connection stays usable; HEAD answers like GET;
a token is created, used, listed and revoked over the API."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.api.auth import create_token
from knowledge.embedded.server import EmbeddedServer
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.model import Source
from knowledge.settings import LocalSettings
from knowledge.wiring import build_local_services

KB = "/api/bots/default/knowledge"


class Conn:
    """One keep-alive connection: every request goes over the same socket."""

    def __init__(self, port: int, token: str):
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.token = token

    def __call__(self, method: str, path: str, body: Any = None, raw: bytes | None = None,
                 token: str | None = None) -> tuple[int, Any, http.client.HTTPResponse]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Authorization": f"Bearer {token or self.token}"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        self.http.request(method, path, body=data, headers=headers)
        resp = self.http.getresponse()
        payload = resp.read()
        return resp.status, json.loads(payload) if payload else None, resp


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[Conn]:
    services = build_local_services(LocalSettings(data_dir=tmp_path / "data"))
    services.workflow = InProcessWorkflow(services, background=False)
    services.state.put_source(Source(id="s1", bot="default", type="instruction", name="Rules",
                                     config={"text": "The heron refund takes three days."}, visibility="agent"))
    token = create_token(services, "default", ["knowledge:read", "knowledge:write", "knowledge:admin"])
    server = EmbeddedServer(services, "127.0.0.1", 0)
    server.start()
    client = Conn(server.port, token)
    try:
        yield client
    finally:
        client.http.close()
        server.stop()


def still_usable(conn: Conn) -> None:
    status, body, _ = conn("POST", f"{KB}/retrieve", {"q": "heron refund"})
    assert status == 200 and body["audience"] == "customer", body


HUGE = "9" * 5000

DEFECTS = [
    # a misspelt field was run as customer (fail-open); "limit" was silently ignored
    ("POST", f"{KB}/retrieve", b'{"q": "heron refund", "Audience": "public"}', "unknown_field"),
    ("POST", f"{KB}/retrieve", b'{"q": "heron refund", "limit": 1000}', "unknown_field"),
    # reindex's schema refused extra fields, the route accepted them
    ("POST", f"{KB}/reindex", b'{"force": false, "all": true}', "unknown_field"),
    # a 5,000-digit integer anywhere was a 500 with a traceback
    ("POST", f"{KB}/retrieve", b'{"q": "heron", "agentId": ' + HUGE.encode() + b"}", "number_too_large"),
    ("POST", f"{KB}/sources",
     b'{"type": "instruction", "name": "n", "priority": ' + HUGE.encode() + b', "config": {"text": "t"}}',
     "number_too_large"),
    ("PUT", "/api/bots/default/agents/a1", b'{"sourceIds": [' + HUGE.encode() + b"]}", "number_too_large"),
    # an escaped lone surrogate was a 500 or a dropped connection
    ("POST", f"{KB}/retrieve", rb'{"q": "heron \ud800"}', "invalid_unicode"),
    ("POST", f"{KB}/retrieve", rb'{"q": "heron", "agentId": "\udc00"}', "invalid_unicode"),
    ("POST", f"{KB}/sources", rb'{"type": "instruction", "name": "\ud800", "config": {"text": "t"}}',
     "invalid_unicode"),
    ("PUT", "/api/bots/default/agents/a1", rb'{"sourceIds": ["\ud800"]}', "invalid_unicode"),
    ("PATCH", f"{KB}/sources/s1", rb'{"name": "\udbff"}', "invalid_unicode"),
    ("POST", f"{KB}/retrieve", rb'{"q": "heron", "\ud800": 1}', "invalid_unicode"),
]


@pytest.mark.parametrize("method,path,raw,code", DEFECTS)
def test_each_defect_is_a_400_with_its_code_and_the_connection_stays_usable(conn, method, path, raw, code):
    status, body, resp = conn(method, path, raw=raw)
    assert (status, body["error"]["code"]) == (400, code)
    assert resp.getheader("Content-Type", "").startswith("application/json")
    still_usable(conn)


def test_every_defect_in_a_row_on_one_connection(conn):
    for method, path, raw, code in DEFECTS:
        status, body, _ = conn(method, path, raw=raw)
        assert (status, body["error"]["code"]) == (400, code), (method, path)
    still_usable(conn)


def test_head_answers_like_get_without_a_body(conn):
    status, body, resp = conn("GET", f"{KB}/sources")
    assert status == 200
    length = resp.getheader("Content-Length")
    status, body, resp = conn("HEAD", f"{KB}/sources")
    assert (status, body) == (200, None)
    assert resp.getheader("Content-Length") == length
    still_usable(conn)


def test_a_token_is_created_used_listed_and_revoked_over_http(conn):
    status, made, _ = conn("POST", "/api/bots/default/tokens", {"scopes": ["knowledge:read"]})
    assert status == 201
    status, _, _ = conn("POST", f"{KB}/retrieve", {"q": "heron refund"}, token=made["token"])
    assert status == 200
    status, listed, _ = conn("GET", "/api/bots/default/tokens")
    row = next(t for t in listed["tokens"] if t["id"] == made["id"])
    assert row["scopes"] == ["knowledge:read"] and row["lastUsedAt"] is not None
    assert made["token"] not in json.dumps(listed)
    status, _, _ = conn("DELETE", f"/api/bots/default/tokens/{made['id']}")
    assert status == 204
    status, body, _ = conn("POST", f"{KB}/retrieve", {"q": "heron refund"}, token=made["token"])
    assert (status, body["error"]["code"]) == (401, "unauthorized")
