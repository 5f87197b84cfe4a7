"""The console's files as `kb serve` answers them: the mapping from a path to a file of the
built folder (index page, hashed assets, content types, security headers, no escape from
the folder), then the same over real HTTP beside the API."""

from __future__ import annotations

import http.client
import json
import signal
from pathlib import Path

import pytest

from knowledge.embedded.console import (
    CONTENT_SECURITY_POLICY,
    IMMUTABLE,
    console_dir,
    console_response,
    is_console_path,
)
from tests.e2e.support import free_port, run_kb, start_server

INDEX = (b'<!doctype html><html lang="en"><title>kb console</title>'
         b'<script type="module" src="/assets/app-1a2b3c4d.js"></script></html>')
SCRIPT = b"console.log('kb');"


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    root = tmp_path / "dist"
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_bytes(INDEX)
    (root / "assets" / "app-1a2b3c4d.js").write_bytes(SCRIPT)
    (root / "assets" / "app-9f8e7d6c.css").write_bytes(b"body{margin:0}")
    (root / "favicon.svg").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    (root / "blob.bin").write_bytes(b"\x00\x01")
    (root / ".env").write_bytes(b"SECRET=1")
    (tmp_path / "outside.txt").write_bytes(b"not the console's")
    return root


def test_root_is_the_index_page_revalidated_with_the_security_headers(dist):
    status, headers, body = console_response("/", dist)
    assert status == 200 and body == INDEX
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cache-Control"] == "no-cache"
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY and "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert console_response("/index.html", dist)[2] == INDEX


def test_hashed_assets_are_cached_for_a_year_with_their_content_type(dist):
    status, headers, body = console_response("/assets/app-1a2b3c4d.js", dist)
    assert (status, body) == (200, SCRIPT)
    assert headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert headers["Cache-Control"] == IMMUTABLE
    css = console_response("/assets/app-9f8e7d6c.css", dist)[1]
    assert css["Content-Type"] == "text/css; charset=utf-8" and css["Cache-Control"] == IMMUTABLE
    svg = console_response("/favicon.svg", dist)[1]
    assert svg["Content-Type"] == "image/svg+xml" and svg["Cache-Control"] == "no-cache"
    assert console_response("/blob.bin", dist)[1]["Content-Type"] == "application/octet-stream"


@pytest.mark.parametrize("path", [
    "/nope.js",
    "/assets/",
    "/assets",
    "/../outside.txt",
    "/assets/../../outside.txt",
    "/%2e%2e/outside.txt",
    "/assets/%2E%2E/%2E%2E/outside.txt",
    "/..%2foutside.txt",
    "/..%5coutside.txt",
    "/.env",
    "/%2eenv",
    "/index.html%00.js",
    "//index.html",
    "/./index.html",
    "/%ff%fe",
])
def test_paths_that_name_no_file_of_the_folder_are_404(dist, path):
    status, headers, body = console_response(path, dist)
    assert status == 404, path
    assert b"SECRET" not in body and b"not the console" not in body
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_a_symlink_out_of_the_folder_is_not_followed(dist):
    (dist / "assets" / "link.js").symlink_to(dist.parent / "outside.txt")
    assert console_response("/assets/link.js", dist)[0] == 404


def test_an_unbuilt_console_says_how_to_build_it(tmp_path):
    status, headers, body = console_response("/", tmp_path / "missing")
    assert status == 404
    assert b"make console" in body and b"npm run build" in body
    assert headers["Content-Type"].startswith("text/plain")
    assert console_response("/assets/app.js", tmp_path / "missing")[2] == b"Not found.\n"


def test_api_paths_are_left_to_the_api():
    assert not is_console_path("/api/bots/default/knowledge/sources")
    assert not is_console_path("/api")
    assert not is_console_path("/openapi.json")
    assert is_console_path("/") and is_console_path("/assets/app.js") and is_console_path("/apiary.html")


def test_the_folder_is_the_repository_build_unless_configured(monkeypatch, tmp_path):
    monkeypatch.delenv("KB_CONSOLE_DIR", raising=False)
    assert console_dir() == Path(__file__).resolve().parents[2] / "console" / "dist"
    monkeypatch.setenv("KB_CONSOLE_DIR", str(tmp_path))
    assert console_dir() == tmp_path


# -- over real HTTP -----------------------------------------------------------------------


def fetch(port: int, method: str, path: str, headers: dict[str, str] | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.fixture
def served(tmp_path, dist):
    data = tmp_path / "data"
    token = run_kb(data, "token", "create", "--bot", "default", "--scopes", "knowledge:read").strip().splitlines()[-1]
    port = free_port()
    proc, _ = start_server(data, port, {"KB_CONSOLE_DIR": str(dist)})
    yield port, token
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)


def test_kb_serve_answers_the_console_at_root_and_the_api_under_api(served):
    port, token = served
    status, headers, body = fetch(port, "GET", "/")
    assert (status, body) == (200, INDEX)
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-length"] == str(len(INDEX))

    status, headers, body = fetch(port, "HEAD", "/assets/app-1a2b3c4d.js")
    assert status == 200 and body == b""
    assert headers["content-length"] == str(len(SCRIPT)) and headers["cache-control"] == IMMUTABLE

    status, headers, body = fetch(port, "GET", "/../../etc/passwd")
    assert status == 404 and b"root:" not in body

    # the API is untouched: JSON, with its own errors
    status, headers, body = fetch(port, "GET", "/api/bots/default/knowledge/sources",
                                  {"Authorization": f"Bearer {token}"})
    assert status == 200 and json.loads(body) == {"sources": []}
    status, _, body = fetch(port, "GET", "/api/nothing-here")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"
    status, _, body = fetch(port, "GET", "/openapi.json")
    assert status == 200 and "paths" in json.loads(body)
    # other methods on console paths stay with the API router
    status, _, body = fetch(port, "POST", "/")
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"


def test_kb_serve_without_a_built_console_explains_itself(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    proc, _ = start_server(data, port, {"KB_CONSOLE_DIR": str(tmp_path / "no-dist")})
    try:
        status, headers, body = fetch(port, "GET", "/")
        assert status == 404 and b"make console" in body
        assert headers["content-type"].startswith("text/plain")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
