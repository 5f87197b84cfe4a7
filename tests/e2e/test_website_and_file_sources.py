"""Website and file sources end to end over HTTP: the embedded server (in process, so the
crawler can be pointed at the local HTTPS test site) and one real ``kb serve`` subprocess.

A hostile help site is created as a website source over the API, indexes what it could
(failed pages counted with a code), answers through ``POST retrieve``, and a later refresh
that finds the site unreachable leaves the indexed pages answering. A file of every
accepted type is uploaded over HTTP and answers; hostile uploads fail with their codes.
"""

# The site fixtures are imported from tests.e2e.sites, so test arguments shadow them by design.
# ruff: noqa: F811

from __future__ import annotations

import json
import signal
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.api.auth import create_token
from knowledge.embedded.server import EmbeddedServer
from knowledge.errors import Code
from knowledge.settings import LocalSettings
from knowledge.wiring import build_local_services
from tests.e2e.sites import (  # noqa: F401 - fixtures
    FILE_CASES,
    HOSTILE_FAILURES,
    LEGACY_DOC,
    MB,
    hostile_site,
    make_fetcher,
    resolver,
    site,
    site_fetcher,
    tls,
    wait_for,
    zip_bomb_docx,
)
from tests.e2e.support import call, free_port, run_kb, start_server
from tests.unit.extract import hostile

pytestmark = pytest.mark.timeout(60)

KB = "/api/bots/default/knowledge"


class Client:
    def __init__(self, base: str, token: str):
        self.base = base
        self.token = token

    def __call__(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, reply, _ = call(self.base, method, KB + path, self.token, body)
        return status, reply

    def upload(self, source_id: str, data: bytes) -> tuple[int, Any]:
        request = urllib.request.Request(f"{self.base}{KB}/sources/{source_id}/upload", data=data, method="POST")
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Content-Type", "application/octet-stream")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")

    def create(self, kind: str, name: str, config: dict[str, Any], **extra: Any) -> dict[str, Any]:
        status, body = self("POST", "/sources", {"type": kind, "name": name, "config": config, **extra})
        assert status == 201, body
        return dict(body)

    def settled(self, source_id: str, *, attempts: int = 1, timeout: float = 40.0) -> dict[str, Any]:
        """The index status once a run that started as attempt ``attempts`` (or later) ended."""

        def done() -> dict[str, Any] | None:
            status, body = self("GET", f"/sources/{source_id}/index-status")
            assert status == 200, body
            finished = body["status"] in ("ready", "failed") and not body["indexing"]
            return body if finished and body["attempts"] >= attempts else None

        return dict(wait_for(done, timeout=timeout))

    def ask(self, q: str) -> list[dict[str, Any]]:
        status, body = self("POST", "/retrieve", {"q": q, "audience": "customer"})
        assert status == 200, body
        return list(body["excerpts"])


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    services = build_local_services(LocalSettings(data_dir=tmp_path / "data"))
    token = create_token(services, "default", ["knowledge:read", "knowledge:write"])
    server = EmbeddedServer(services, "127.0.0.1", 0)
    server.start()
    try:
        yield Client(f"http://127.0.0.1:{server.port}", token)
    finally:
        server.stop()


# -- websites --------------------------------------------------------------------------------


def test_hostile_website_indexes_what_it_could_answers_and_survives_going_away(
    client: Client, site: Any, site_fetcher: Any
) -> None:
    hostile_site(site)
    web = client.create("website", "Marmot help", {"origins": [site.origin()], "startUrls": [site.url("/")]},
                        visibility="public", refreshEverySeconds=86400)
    assert web["queued"] is True
    card = client.settled(web["id"])
    assert card["status"] == "ready"
    assert card["documentsFailed"] == len(HOSTILE_FAILURES)
    assert card["errorCode"] in set(HOSTILE_FAILURES.values())
    assert card["documentsProcessed"] == 100  # the link trap stops at the page limit
    status, listing = client("GET", f"/sources/{web['id']}/documents")
    assert status == 200
    docs = {d["path"]: d for d in listing["documents"] if d["errorCode"] is None}
    assert len(docs) == 100 and {"/", "/guide", "/faq.md"} <= set(docs)
    # every page that failed is listed with its own code
    failed = [d for d in listing["documents"] if d["errorCode"] is not None]
    assert len(failed) == len(HOSTILE_FAILURES)
    assert {d["errorCode"] for d in failed} == set(HOSTILE_FAILURES.values())
    assert docs["/guide"]["url"] == site.url("/guide") and docs["/guide"]["title"] == "Ocelot guide"
    assert not any("utm_" in path or "gclid" in path for path in docs)

    top = client.ask("how do I reset the ocelot dongle")[0]
    assert (top["sourceId"], top["sourceType"], top["url"]) == (web["id"], "website", site.url("/guide"))
    assert "twelve seconds" in top["text"]
    faq = client.ask("can I pause a quokka subscription")[0]
    assert (faq["sourceId"], faq["path"]) == (web["id"], "/faq.md")
    assert all("pangolin" not in e["text"] for e in client.ask("pangolin script"))  # scripts never indexed
    assert {ip for ip, _ in site_fetcher.connections()} == {"127.0.0.1"}
    assert "/private/secret" not in site.paths()

    # later the site is unreachable: the refresh fails, nothing indexed before is lost
    passages = card["passages"]
    site_fetcher.refuse = True
    status, body = client("POST", f"/sources/{web['id']}/refresh", {})
    assert status == 202 and body["queued"] is True
    card = client.settled(web["id"], attempts=2)
    assert (card["status"], card["errorCode"], card["passages"]) == ("failed", Code.FETCH_TIMEOUT, passages)
    assert client.ask("how do I reset the ocelot dongle")[0]["url"] == site.url("/guide")
    assert len(client("GET", f"/sources/{web['id']}/documents")[1]["documents"]) == 100 + len(HOSTILE_FAILURES)


def test_failed_pages_are_listed_with_their_codes(client: Client, site: Any, site_fetcher: Any) -> None:
    site.routes["/robots.txt"] = site.page("User-agent: *\nDisallow: /private\n", "text/plain")
    site.routes["/"] = site.page(site.html("/private/x", "/logo.png", text="Badger home page."))
    site.routes["/logo.png"] = site.page(b"\x89PNG", "image/png")
    web = client.create("website", "Badger", {"origins": [site.origin()], "startUrls": [site.url("/")]})
    assert client.settled(web["id"])["documentsFailed"] == 2
    listing = client("GET", f"/sources/{web['id']}/documents")[1]["documents"]
    assert {(d["url"], d["errorCode"]) for d in listing if d["errorCode"]} == {
        (site.url("/private/x"), Code.ROBOTS_DENIED), (site.url("/logo.png"), Code.UNSUPPORTED_TYPE)}


def test_loopback_sites_are_refused_without_the_development_switch(
    client: Client, site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_TEST_ALLOW_LOOPBACK", "1")  # the retired test variable opens nothing
    site.routes["/"] = site.page(site.html(text="Loopback page."))
    origin = f"https://localhost:{site.port}"
    web = client.create("website", "Local", {"origins": [origin], "startUrls": [origin + "/"]})
    card = client.settled(web["id"])
    assert (card["status"], card["errorCode"], card["passages"]) == ("failed", Code.BLOCKED_ADDRESS, 0)
    assert site.requests == []


def test_kb_serve_crawls_a_site_when_started_with_the_development_switch(
    tmp_path: Path, site: Any, tls: Any
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("".join(ssl.DER_cert_to_PEM_cert(der) for der in tls.client_context.get_ca_certs(True)))
    site.routes["/"] = site.page(site.html("/tips", title="Lynx", text="Lynx support lives here."))
    site.routes["/tips"] = site.page("# Tips\n\nFeed the lynx before the night shift.", "text/markdown")
    # the same local port also plays an upstream kb: the switch opens it to federation too
    upstream_answer = {"audience": "customer", "excerpts": [
        {"text": "Upstream: lynx feeding times are posted in the barn.", "path": "help/lynx.md", "title": "Lynx"}]}
    site.routes[KB + "/retrieve"] = site.page(json.dumps(upstream_answer), "application/json")
    data = tmp_path / "data"
    token = run_kb(data, "token", "create", "--bot", "default", "--scopes",
                   "knowledge:read,knowledge:write").strip().splitlines()[-1]
    local = build_local_services(LocalSettings(data_dir=data))
    settings = local.state.get_bot("default")
    settings.upstream = {"url": f"https://localhost:{site.port}", "token": "upstream-token", "bot": "default"}
    local.state.put_bot(settings)
    proc, base = start_server(data, free_port(), {"SSL_CERT_FILE": str(ca)},
                              ("--dev-allow-loopback", str(site.port)))
    try:
        kb = Client(base, token)
        origin = f"https://localhost:{site.port}"
        web = kb.create("website", "Lynx site", {"origins": [origin], "startUrls": [origin + "/"]})
        card = kb.settled(web["id"])
        assert (card["status"], card["documentsProcessed"], card["documentsFailed"]) == ("ready", 2, 0)
        excerpts = kb.ask("when do I feed the lynx")
        top = excerpts[0]
        assert (top["sourceId"], top["url"]) == (web["id"], origin + "/tips")
        assert [e["text"] for e in excerpts if e["reason"] == "upstream"] == [
            "Upstream: lynx feeding times are posted in the barn."]
        [federated] = [r for r in site.requests if r.method == "POST"]
        assert (federated.path, federated.authorization) == (KB + "/retrieve", "Bearer upstream-token")
        assert json.loads(federated.body) == {"q": "when do I feed the lynx", "audience": "customer"}
        assert {r.user_agent for r in site.requests} == {"KnowledgeBot/1.0"}
        assert site.paths()[0] == "/robots.txt"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    assert proc.stderr is not None
    said = proc.stderr.read().decode()
    assert "DEVELOPMENT SWITCH ON" in said and f"127.0.0.1:{site.port}" in said


# -- files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(FILE_CASES))
def test_a_file_of_each_type_answers_end_to_end(client: Client, kind: str) -> None:
    filename, content_type, data, question, phrase = FILE_CASES[kind]
    doc = client.create("file", f"{kind} upload", {"filename": filename, "contentType": content_type})
    assert (doc["status"], doc["queued"]) == ("waiting", False)
    status, body = client.upload(doc["id"], data)
    assert status == 202 and body["queued"] is True
    card = client.settled(doc["id"])
    assert (card["status"], card["errorCode"], card["documentsProcessed"]) == ("ready", None, 1)
    top = client.ask(question)[0]
    assert (top["sourceId"], top["sourceType"], top["path"]) == (doc["id"], "file", filename)
    assert phrase in top["text"]


def test_hostile_uploads_fail_with_their_codes_and_keep_what_answered(client: Client) -> None:
    doc = client.create("file", "Handbook", {"filename": "handbook.docx", "contentType":
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"})
    good = FILE_CASES["docx"][2]
    assert client.upload(doc["id"], good)[0] == 202
    attempts = client.settled(doc["id"])["attempts"]

    def upload_fails(data: bytes, code: str, filename: str | None = None) -> None:
        nonlocal attempts
        if filename is not None:
            status, body = client("PATCH", f"/sources/{doc['id']}",
                                  {"config": {"filename": filename, "contentType": "application/pdf"}})
            assert status == 200, body
            attempts += 1
        status, body = client.upload(doc["id"], data)
        assert status == 202, body
        attempts += 1
        card = client.settled(doc["id"], attempts=attempts)
        assert (card["status"], card["errorCode"]) == ("failed", code)
        # the last good upload keeps answering
        assert client.ask("wombat account trial")[0]["sourceId"] == doc["id"]

    upload_fails(zip_bomb_docx(), Code.EXPANDED_TOO_LARGE)
    upload_fails(hostile.build_zip([hostile.entry("word/document.xml", b"<w:document")]), Code.MALFORMED_FILE)
    upload_fails(hostile.encrypted_pdf("secret"), Code.MALFORMED_FILE, filename="report.pdf")
    upload_fails(LEGACY_DOC, Code.UNSUPPORTED_TYPE, filename="minutes.doc")

    status, body = client.upload(doc["id"], b"%PDF-1.4\n" + b"0" * (8 * MB))
    assert (status, body["error"]["code"]) == (413, Code.FILE_TOO_LARGE)
    card = client.settled(doc["id"], attempts=attempts)
    assert card["attempts"] == attempts  # nothing was queued for the refused upload


def test_text_of_a_file_never_leaks_into_error_messages(client: Client) -> None:
    doc = client.create("file", "Broken", {"filename": "broken.pdf", "contentType": "application/pdf"})
    assert client.upload(doc["id"], b"%PDF-1.4\nSECRET-CANARY-TEXT\n%%EOF")[0] == 202
    card = client.settled(doc["id"])
    assert card["errorCode"] == Code.MALFORMED_FILE
    assert "SECRET-CANARY" not in json.dumps(card)
