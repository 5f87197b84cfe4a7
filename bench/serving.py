"""HTTP benchmark: ``POST retrieve`` through ``kb serve`` beside in-process ``retrieve()``.

    python bench/serving.py [--requests 400] [--clients 1,4,16] [--servers kb,waitress]

The corpus is the bundled example packs (what ``make run`` serves), built and ingested into a
temporary folder; questions are the pages' titles and first lines. In the same run:

- ``in-process``: ``retrieve()`` called directly on the same data folder, one thread;
- for each server, ``--requests`` questions per row, through keep-alive connections held by
  1, 4 and 16 client threads (one connection each), then one client opening a new connection
  per request. Figures: p50, p95, p99 latency in ms and requests/s over the row's wall time.

Servers: ``kb`` is ``kb serve`` itself, started as a user would (a subprocess of the CLI);
``waitress`` is the candidate WSGI server around the same ``dispatch`` (measured only when
waitress is installed; the row exists to compare servers, kb does not ship it). The clients
run in this process (``http.client``), the server in its own: on a 2-core machine both share
the CPUs, as they do when an agent and kb run side by side. ``--before SRC`` adds the rows of
``kb serve`` from another source tree, for a before/after comparison in one run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "layers" / "core" / "src"
sys.path.insert(0, str(SRC))
sys.path.insert(0, str(ROOT / "examples"))

from build_packs import build_all  # type: ignore[import-not-found]  # noqa: E402

from knowledge.api.auth import create_token  # noqa: E402
from knowledge.refresh.packsync import install_pack  # noqa: E402
from knowledge.refresh.reindex import reindex  # noqa: E402
from knowledge.retrieve.service import RetrievalRequest, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

BOT = "default"
PATH = f"/api/bots/{BOT}/knowledge/retrieve"

#: the WSGI candidate: the same dispatch behind waitress (run as ``python bench/serving.py --waitress-child``)
WAITRESS_CHILD = """
import sys
from urllib.parse import parse_qsl
from waitress import serve
from knowledge.api.http import Request
from knowledge.api.routes import dispatch
from knowledge.settings import LocalSettings
from knowledge.wiring import build_local_services

services = build_local_services(LocalSettings.from_env(sys.argv[1]))

def app(environ, start_response):
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else b""
    headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
    request = Request(environ["REQUEST_METHOD"], environ.get("PATH_INFO") or "/", headers,
                      dict(parse_qsl(environ.get("QUERY_STRING", ""))), body)
    response = dispatch(services, request)
    payload = response.encoded()
    start_response(f"{response.status} X", [("Content-Type", "application/json; charset=utf-8"),
                                           ("Content-Length", str(len(payload)))])
    return [payload]

serve(app, host="127.0.0.1", port=int(sys.argv[2]), threads=8, backlog=1024, _quiet=True)
"""


def build_corpus(data: Path) -> list[str]:
    packs = build_all(ROOT / "examples" / "packs", data.parent / "packs")
    services = build_local_services(LocalSettings(data_dir=data))
    questions = []
    for pack in packs:
        install_pack(services, pack)
        import gzip

        for line in gzip.decompress(pack.read_bytes()).splitlines():
            page = json.loads(line)
            words = [w for w in page["body"].split() if w.isalpha()][:8]
            questions.append(f"{page.get('title') or ''} {' '.join(words)}".strip())
    reindex(services, BOT)
    services.state.close()
    return questions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def row(name: str, latencies: list[float], wall: float) -> str:
    ms = [v * 1000 for v in latencies]
    return (f"{name:<34} {statistics.median(ms):>8.2f} {percentile(ms, 0.95):>8.2f} {percentile(ms, 0.99):>8.2f}"
            f" {len(ms) / wall:>9.1f}")


def in_process(data: Path, questions: list[str], n: int) -> str:
    services = build_local_services(LocalSettings(data_dir=data))
    rng = random.Random(1)
    for q in questions[:20]:  # warm caches as a running server's would be
        retrieve(services, RetrievalRequest(BOT, q, "customer"))
    latencies = []
    started = time.perf_counter()
    for _ in range(n):
        q = rng.choice(questions)
        t = time.perf_counter()
        retrieve(services, RetrievalRequest(BOT, q, "customer"))
        latencies.append(time.perf_counter() - t)
    wall = time.perf_counter() - started
    services.state.close()
    return row("in-process retrieve()", latencies, wall)


def post(conn: http.client.HTTPConnection, token: str, q: str) -> None:
    body = json.dumps({"q": q, "audience": "customer"}).encode()
    conn.request("POST", PATH, body=body, headers={"Authorization": f"Bearer {token}",
                                                  "Content-Type": "application/json"})
    resp = conn.getresponse()
    payload = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"{resp.status}: {payload[:200]!r}")


def keep_alive(port: int, token: str, questions: list[str], clients: int, n: int) -> tuple[list[float], float]:
    per_client = max(1, n // clients)
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        rng = random.Random(i)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            post(conn, token, questions[i % len(questions)])  # connect and warm up
            barrier.wait()
            for _ in range(per_client):
                t = time.perf_counter()
                post(conn, token, rng.choice(questions))
                latencies[i].append(time.perf_counter() - t)
        except BaseException as exc:  # noqa: BLE001 - reported after the row
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} client(s) failed: {errors[0]!r}")
    return [v for lat in latencies for v in lat], wall


def new_connections(port: int, token: str, questions: list[str], n: int) -> tuple[list[float], float]:
    rng = random.Random(99)
    latencies = []
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        post(conn, token, rng.choice(questions))
        conn.close()
        latencies.append(time.perf_counter() - t)
    return latencies, time.perf_counter() - started


def start(kind: str, data: Path, port: int, before: str | None) -> subprocess.Popen[bytes]:
    src = before if kind == "kb-before" and before else str(SRC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    if kind in ("kb", "kb-before"):
        cmd = [sys.executable, "-m", "knowledge.embedded.cli", "--data", str(data), "serve", "--port", str(port)]
    else:
        cmd = [sys.executable, "-c", WAITRESS_CHILD, str(data), str(port)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="questions per row (default 400)")
    parser.add_argument("--clients", default="1,4,16", help="keep-alive client counts (default 1,4,16)")
    parser.add_argument("--servers", default="kb,waitress", help="servers to measure (default kb,waitress)")
    parser.add_argument("--before", metavar="SRC",
                        help="also measure `kb serve` from another source tree (e.g. an older commit's "
                             "layers/core/src, from `git archive`) as the server kb-before")
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",") if c.strip()]
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    if args.before:
        servers.append("kb-before")
    if "waitress" in servers:
        try:
            import waitress  # noqa: F401
        except ImportError:
            print("waitress is not installed: its rows are skipped")
            servers.remove("waitress")

    with tempfile.TemporaryDirectory(prefix="kb-bench-http-") as tmp:
        data = Path(tmp) / "data"
        questions = build_corpus(data)
        services = build_local_services(LocalSettings(data_dir=data))
        token = create_token(services, BOT, ["knowledge:read"])
        services.state.close()
        print(f"corpus: the example packs, {len(questions)} pages; {args.requests} questions per row;"
              f" {os.cpu_count()} CPUs")
        print(f"{'':<34} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'req/s':>9}")
        print(in_process(data, questions, args.requests))
        for kind in servers:
            port = free_port()
            proc = start(kind, data, port, args.before)
            try:
                wait_for(port, proc)
                for c in clients:
                    lat, wall = keep_alive(port, token, questions, c, args.requests)
                    print(row(f"{kind}: {c} keep-alive client(s)", lat, wall))
                lat, wall = new_connections(port, token, questions, args.requests)
                print(row(f"{kind}: new connection per request", lat, wall))
            finally:
                proc.terminate()
                proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
