"""`kb serve` at the HTTP level: keep-alive, chunked bodies, malformed framing, slow clients,
large unauthenticated bodies, HEAD, a graceful SIGTERM, and the CLI around it. Each test is a
defect the hand-made server had, asserted on the wire against a real server on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import pack_bytes, page
from tests.e2e.sites import FILE_CASES, wait_for
from tests.e2e.support import KB, free_port, run_kb, start_server

pytestmark = pytest.mark.timeout(120)

KB_PATH = "/api/bots/default/knowledge"
RETRIEVE = f"{KB_PATH}/retrieve"
QUESTION = {"q": "how do I withdraw monero to my subaddress", "audience": "customer"}


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[int, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("http")
    data = root / "data"
    pack = root / "coinvault.ndjson.gz"
    pack.write_bytes(pack_bytes([
        page("help/withdraw/monero.md", "# Withdraw Monero\n\nSend XMR to your subaddress; payouts need ten "
             "confirmations.", audience="CUSTOMER", title="Withdraw Monero"),
    ]))
    run_kb(data, "ingest", str(pack))
    tokens = {name: run_kb(data, "token", "create", "--bot", "default", "--scopes", scopes).strip().splitlines()[-1]
              for name, scopes in (("rw", "knowledge:read,knowledge:write"), ("ro", "knowledge:read"))}
    port = free_port()
    proc = subprocess.Popen([*KB, "--data", str(data), "serve", "--port", str(port), "--read-timeout", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: _connectable(port, proc), timeout=30, interval=0.1)
        yield port, tokens, data
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


def _connectable(port: int, proc: subprocess.Popen[bytes]) -> bool:
    if proc.poll() is not None:
        raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server died")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    return sock


class Reader:
    """Responses off a raw socket, in order; bytes past one response are kept for the next
    (pipelined answers may arrive in one read)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a full response: {self.buf!r}")
        self.buf += chunk

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, headers, body


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One response off a raw socket that carries no other."""
    return Reader(sock).response()


def read_to_eof(sock: socket.socket) -> bytes:
    out = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return out
        out += chunk


def request_bytes(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body: bytes, size: int) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size]) for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def error_code(body: bytes) -> str:
    return str(json.loads(body)["error"]["code"])


# -- keep-alive ------------------------------------------------------------------------------------


def test_a_series_of_requests_is_answered_on_one_connection(served):
    port, tokens, _ = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {tokens['ro']}", "Content-Type": "application/json"}
    ids = set()
    conn.request("GET", f"{KB_PATH}/sources", headers=headers)
    first = conn.getresponse()
    assert first.status == 200 and not first.will_close
    first.read()
    sock = conn.sock
    for _ in range(25):
        conn.request("POST", RETRIEVE, body=json.dumps(QUESTION).encode(), headers=headers)
        resp = conn.getresponse()
        body = json.loads(resp.read())
        assert resp.status == 200, body
        assert body["excerpts"][0]["path"] == "help/withdraw/monero.md"
        ids.add(body["retrievalId"])
        assert conn.sock is sock  # http.client would reconnect silently had the server closed it
    assert len(ids) == 25
    conn.close()


def test_pipelined_requests_are_answered_in_order(served):
    port, tokens, _ = served
    auth = {"Authorization": f"Bearer {tokens['ro']}"}
    payload = json.dumps(QUESTION).encode()
    with connect(port) as sock:
        sock.sendall(request_bytes("GET", f"{KB_PATH}/index", auth)
                     + request_bytes("POST", RETRIEVE, {**auth, "Content-Length": str(len(payload))}, payload)
                     + request_bytes("GET", f"{KB_PATH}/nope", auth))
        reader = Reader(sock)
        statuses = [reader.response()[0] for _ in range(3)]
    assert statuses == [200, 200, 404]


# -- chunked bodies --------------------------------------------------------------------------------


def test_a_chunked_question_is_read_whole_and_the_connection_stays_in_step(served):
    port, tokens, _ = served
    auth = {"Authorization": f"Bearer {tokens['ro']}"}
    with connect(port) as sock:
        sock.sendall(request_bytes("POST", RETRIEVE, {**auth, "Transfer-Encoding": "chunked",
                                                      "Content-Type": "application/json"},
                                   chunked(json.dumps(QUESTION).encode(), 7)))
        reader = Reader(sock)
        status, _, body = reader.response()
        assert status == 200, body
        assert json.loads(body)["excerpts"][0]["path"] == "help/withdraw/monero.md"
        # the chunks were the body, not the start of another request: the next one is answered
        sock.sendall(request_bytes("GET", f"{KB_PATH}/index", auth))
        status, _, body = reader.response()
        assert reader.buf == b""
        assert status == 200 and json.loads(body)["totalPassages"] == 1


def test_a_chunked_upload_is_indexed(served):
    port, tokens, _ = served
    filename, content_type, data, question, phrase = FILE_CASES["html"]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {tokens['rw']}", "Content-Type": "application/json"}
    conn.request("POST", f"{KB_PATH}/sources", headers=headers, body=json.dumps(
        {"type": "file", "name": "Shipping", "config": {"filename": filename, "contentType": content_type}}))
    created = conn.getresponse()
    source = json.loads(created.read())
    assert created.status == 201, source
    pieces = (data[i:i + 100] for i in range(0, len(data), 100))  # no length: http.client sends chunks
    conn.request("POST", f"{KB_PATH}/sources/{source['id']}/upload", body=pieces, encode_chunked=True,
                 headers={"Authorization": f"Bearer {tokens['rw']}", "Content-Type": "application/octet-stream"})
    uploaded = conn.getresponse()
    assert (uploaded.status, json.loads(uploaded.read())["queued"]) == (202, True)

    def settled():
        conn.request("GET", f"{KB_PATH}/sources/{source['id']}/index-status", headers=headers)
        card = json.loads(conn.getresponse().read())
        return card if card["status"] in ("ready", "failed") and not card["indexing"] else None

    card = wait_for(settled, timeout=60, interval=0.1)
    assert (card["status"], card["errorCode"], card["documentsProcessed"]) == ("ready", None, 1)
    conn.request("POST", RETRIEVE, headers=headers, body=json.dumps({"q": question, "audience": "customer"}))
    top = json.loads(conn.getresponse().read())["excerpts"][0]
    assert top["sourceId"] == source["id"] and phrase in top["text"]
    conn.close()


# -- malformed framing, slow clients, large bodies -----------------------------------------------


def test_a_bad_content_length_is_400_with_a_code_and_the_server_goes_on(served):
    port, tokens, _ = served
    auth = {"Authorization": f"Bearer {tokens['ro']}"}
    with connect(port) as sock:
        sock.sendall(request_bytes("POST", RETRIEVE, {**auth, "Content-Length": "abc"}, b"{}"))
        status, headers, body = read_response(sock)
        assert (status, error_code(body)) == (400, "bad_request")
        assert headers["connection"] == "close"  # the framing is lost: this connection ends
        assert read_to_eof(sock) == b""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", RETRIEVE, body=json.dumps(QUESTION), headers={**auth, "Content-Type": "application/json"})
    assert conn.getresponse().status == 200
    conn.close()


def test_a_client_that_stops_sending_its_body_is_cut_off(served):
    port, tokens, _ = served
    with connect(port) as sock:
        sock.sendall(request_bytes("POST", RETRIEVE, {"Authorization": f"Bearer {tokens['ro']}",
                                                      "Content-Length": "100"}, b'{"q":'))
        status, headers, body = read_response(sock)  # the server answers and closes; the client is silent
        assert (status, error_code(body), headers["connection"]) == (408, "request_timeout", "close")
        assert read_to_eof(sock) == b""


def test_a_client_that_stops_sending_its_headers_is_disconnected(served):
    port, _, _ = served
    with connect(port) as sock:
        sock.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert read_to_eof(sock) == b""  # closed by the server (the socket timeout is 30 s)


def test_a_large_unauthenticated_body_is_refused_before_it_is_read(served):
    port, _, _ = served
    with connect(port) as sock:
        # 9 MB declared, 64 KB sent: the 401 comes without the rest, and the connection closes
        sock.sendall(request_bytes("POST", f"{KB_PATH}/sources/any/upload",
                                   {"Content-Length": str(9 * 1024 * 1024)}, b"x" * 65536))
        status, headers, body = read_response(sock)
        assert (status, error_code(body), headers["connection"]) == (401, "unauthorized", "close")


def test_bodies_over_the_cap_are_413_declared_or_chunked(served):
    port, tokens, _ = served
    auth = {"Authorization": f"Bearer {tokens['rw']}"}
    with connect(port) as sock:
        sock.sendall(request_bytes("POST", f"{KB_PATH}/sources/any/upload", {**auth, "Content-Length": "20000000"}))
        status, _, body = read_response(sock)
        assert (status, error_code(body)) == (413, "file_too_large")
    with connect(port) as sock:
        sock.sendall(request_bytes("POST", f"{KB_PATH}/sources/any/upload", {**auth, "Transfer-Encoding": "chunked"}))
        chunk = b"%x\r\n%s\r\n" % (1 << 20, b"y" * (1 << 20))
        try:
            for _ in range(12):  # 12 MB, over the 9 MB cap: refused while arriving
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the client was done
        status, _, body = read_response(sock)
        assert (status, error_code(body)) == (413, "file_too_large")


def test_head_answers_like_get_without_a_body(served):
    port, tokens, _ = served
    auth = {"Authorization": f"Bearer {tokens['ro']}", "Connection": "close"}
    with connect(port) as sock:
        sock.sendall(request_bytes("GET", f"{KB_PATH}/sources", auth))
        get_status, get_headers, get_body = read_response(sock)
    with connect(port) as sock:
        sock.sendall(request_bytes("HEAD", f"{KB_PATH}/sources", auth))
        raw = read_to_eof(sock)
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert rest == b""  # headers only
    assert f"content-length: {len(get_body)}".encode() in head.lower()
    assert get_status == 200 and get_headers["content-type"].startswith("application/json")


# -- SIGTERM and the command line ------------------------------------------------------------------


def test_an_answer_given_just_before_sigterm_is_citable_after_restart(tmp_path):
    data = tmp_path / "data"
    pack = tmp_path / "coinvault.ndjson.gz"
    pack.write_bytes(pack_bytes([page("help/withdraw/monero.md", "# Withdraw Monero\n\nSend XMR to your "
                                      "subaddress.", audience="CUSTOMER", title="Withdraw Monero")]))
    run_kb(data, "ingest", str(pack))
    token = run_kb(data, "token", "create", "--bot", "default", "--scopes", "knowledge:read").strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    port = free_port()
    proc, _ = start_server(data, port)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", RETRIEVE, body=json.dumps(QUESTION), headers=headers)
    answer = json.loads(conn.getresponse().read())
    proc.send_signal(signal.SIGTERM)  # at once: the record is still queued for its batch
    assert proc.wait(timeout=60) == 0
    conn.close()
    assert b"Traceback" not in (proc.stderr.read() if proc.stderr else b"")

    proc, _ = start_server(data, port)
    try:
        top = answer["excerpts"][0]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", f"{KB_PATH}/citations/validate", headers=headers, body=json.dumps({
            "retrievalId": answer["retrievalId"],
            "citations": [{k: top[k] for k in ("sourceId", "documentId", "fragmentId")}]}))
        resp = conn.getresponse()
        assert (resp.status, json.loads(resp.read())) == (200, {"valid": True})
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0


def test_sigterm_lets_a_request_in_flight_finish(tmp_path):
    data = tmp_path / "data"
    token = run_kb(data, "token", "create", "--bot", "default", "--scopes", "knowledge:read").strip().splitlines()[-1]
    port = free_port()
    proc, _ = start_server(data, port)
    payload = json.dumps({"q": "withdraw monero", "audience": "customer"}).encode()
    with connect(port) as sock:
        # Expect: 100-continue makes the server say when it has the headers and waits for the
        # body: only then is the request in flight (a connection with nothing parsed is idle)
        sock.sendall(request_bytes("POST", RETRIEVE, {"Authorization": f"Bearer {token}", "Expect": "100-continue",
                                                      "Content-Length": str(len(payload))}))
        interim = b""
        while not interim.endswith(b"\r\n\r\n"):
            chunk = sock.recv(1)
            assert chunk, "closed before 100 Continue"
            interim += chunk
        assert interim.startswith(b"HTTP/1.1 100 ")
        sock.sendall(payload[:10])
        proc.send_signal(signal.SIGTERM)

        def refused() -> bool:  # the server stops accepting first
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                return False
            except ConnectionRefusedError:
                return True

        wait_for(refused, timeout=30, interval=0.05)
        sock.sendall(payload[10:])  # the rest of the request that was in flight
        status, _, body = read_response(sock)
        assert status == 200 and "retrievalId" in json.loads(body)
        assert read_to_eof(sock) == b""  # answered, then closed: the server is stopping
    assert proc.wait(timeout=60) == 0


def test_serve_on_a_busy_port_says_so_in_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([*KB, "--data", str(tmp_path / "data"), "serve", "--port", str(port)],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == f"kb serve: cannot listen on 127.0.0.1:{port}: address already in use\n"


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    doc = tmp_path / "long.md"
    doc.write_text("# Long\n\n" + "\n\n".join(f"## Part {i}\n\n" + "word " * 300 for i in range(200)))
    proc = subprocess.Popen([*KB, "chunk", str(doc)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before kb writes (as `kb ... | head` once head exits)
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    assert stderr == b""
