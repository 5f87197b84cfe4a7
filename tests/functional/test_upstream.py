"""Federation with an upstream kb over real HTTP: audience stated, rank fusion, failures ignored.

The upstream runs on 127.0.0.1 over plain http, which only the development switch (an
``OutboundPolicy`` with that port, as ``kb serve --dev-allow-loopback`` builds) allows."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import knowledge.retrieve.upstream as upstream
from knowledge.api.auth import create_token
from knowledge.crawl.outbound import OutboundPolicy
from knowledge.embedded.server import EmbeddedServer
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from knowledge.settings import LocalSettings
from knowledge.wiring import build_local_services
from tests.conftest import page


@pytest.fixture
def upstream_kb(tmp_path, write_pack):
    services = build_local_services(LocalSettings(data_dir=tmp_path / "upstream"))
    install_pack(services, write_pack("fresh", [
        page("help/new-feature.md", "# Vault lock\n\nThe vault lock freezes withdrawals for 24 hours.",
             audience="CUSTOMER"),
        page("admin/secret.md", "# Ops\n\nThe vault lock override lives in the admin console.", audience="OPERATOR"),
    ]))
    reindex(services, "default")
    token = create_token(services, "default", ["knowledge:read"])
    server = EmbeddedServer(services, "127.0.0.1", 0)
    server.start()
    yield f"http://127.0.0.1:{server.port}", token
    server.stop()


def local_with_upstream(services, write_pack, config):
    install_pack(services, write_pack("local", [
        page("help/lock.md", "# Locks\n\nOur vault lock policy: contact support to lift a vault lock.",
             audience="CUSTOMER"),
    ]))
    reindex(services, "default")
    settings = services.state.get_bot("default")
    settings.upstream = config
    services.state.put_bot(settings)


def dev(url):
    return OutboundPolicy(loopback_port=int(url.rsplit(":", 1)[1]))


def test_upstream_excerpts_are_fused_by_rank_with_local_first(services, write_pack, upstream_kb):
    url, token = upstream_kb
    local_with_upstream(services, write_pack, {"url": url, "token": token, "bot": "default"})
    # the production policy (the default of every composition root) never reaches loopback
    res = retrieve(services, RetrievalRequest("default", "vault lock", "customer"))
    assert [(e["path"], e["reason"]) for e in res["excerpts"]] == [("help/lock.md", "lexical")]
    services.outbound = dev(url)  # what build_local_services makes of the serve flag
    res = retrieve(services, RetrievalRequest("default", "vault lock", "customer"))
    assert [(e["path"], e["reason"]) for e in res["excerpts"]] == [
        ("help/lock.md", "lexical"), ("help/new-feature.md", "upstream")]
    # the customer asked: the upstream's operator page never comes back
    assert all(e["path"] != "admin/secret.md" for e in res["excerpts"])
    assert [e["rank"] for e in res["excerpts"]] == [1, 2]
    record = services.state.get_retrieval("default", res["retrievalId"])
    assert len(record.served) == 2


def test_audience_is_sent_explicitly():
    seen = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen["body"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            payload = json.dumps({"audience": "operator", "excerpts": []}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        upstream.fetch({"url": url, "token": "t"}, "q", "operator", policy=dev(url))
    finally:
        server.shutdown()
    assert seen["body"] == {"q": "q", "audience": "operator"}


def test_every_failure_is_an_empty_list(services, write_pack, upstream_kb, monkeypatch):
    release = threading.Event()
    answer = json.dumps({"excerpts": [{"text": "late but valid"}]}).encode()

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self):
            release.wait(1.0)  # a valid answer, later than the budget allows
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *a):
            pass

    slow = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    slow_url = f"http://127.0.0.1:{slow.server_address[1]}"
    live_url, token = upstream_kb
    monkeypatch.setattr(upstream, "TIMEOUT_SECONDS", 0.2)
    try:
        for config, policy in [
            (None, dev(slow_url)),
            ({"url": "http://127.0.0.1:9", "token": "t"}, dev("http://127.0.0.1:9")),  # nothing listens
            ({"url": slow_url, "token": "t"}, dev(slow_url)),  # over the budget
            ({"url": "http://127.0.0.1:9"}, dev("http://127.0.0.1:9")),  # no token
            ({"url": live_url, "token": "wrong"}, dev(live_url)),  # 401
            ({"url": live_url, "token": token}, None),  # loopback without the switch
        ]:
            assert upstream.fetch(config, "vault lock", "customer", policy=policy) == []
        # the same slow server within a budget that allows it: the empty list above was the budget
        assert upstream.fetch({"url": slow_url, "token": "t"}, "q", "customer", timeout=5.0,
                              policy=dev(slow_url)) == [{"text": "late but valid"}]
    finally:
        release.set()
        slow.shutdown()
    local_with_upstream(services, write_pack, {"url": "http://127.0.0.1:9", "token": "t"})
    res = retrieve(services, RetrievalRequest("default", "vault lock", "customer"))
    assert [e["path"] for e in res["excerpts"]] == ["help/lock.md"]


def test_fuse_reference():
    local = [{"id": f"l{i}"} for i in range(1, 13)]
    remote = [{"sourceId": f"r{i}", "text": "t"} for i in range(1, 4)]
    out = upstream.fuse(local, remote, 13)
    # local rank 10: 1.15/70 = 0.01643 > upstream rank 1: 1/61 = 0.01639 > local rank 11: 1.15/71 = 0.01620
    assert [e.get("id") or e["sourceId"] for e in out] == [f"l{i}" for i in range(1, 11)] + ["r1", "l11", "r2"]
