"""The operator console's first load: bytes transferred and time until the sources are drawn.

    python bench/console_load.py [--runs 7]

The corpus is the bundled example packs (what ``make run`` serves), ingested with ``kb ingest``
into a temporary folder; ``kb serve`` runs on a free loopback port with the built console
(``console/dist``; run ``make console`` first). Debian's Chromium, driven by Playwright, opens
a fresh browser context for every run (empty cache), so each run is a first load:

- ``signed in``: the token already in the tab's session storage (as after signing in once),
  navigation to ``/`` until the first row of the sources table is in the page;
- ``sign-in``: ``/`` opened signed out, the form filled, and the time from pressing "Sign in"
  until the first sources row (the page's own load not counted);
- ``reference``: in the same browser, a fresh context navigating straight to
  ``GET .../sources`` (the one API call the table needs, bearer header set on the context),
  until its response ends.

Times are read in the page (``performance.now()``, from navigation start, polled each frame);
bytes are the Chromium network layer's encoded lengths (headers and bodies as they crossed the
socket) of every response finished by then. Figures are medians over ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from build_packs import build_all  # type: ignore[import-not-found]  # noqa: E402
from playwright.sync_api import Browser, Page, sync_playwright  # noqa: E402

CHROMIUM = os.environ.get("KB_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
KB = [sys.executable, "-m", "knowledge.embedded.cli"]
BOT = "default"
SOURCES = f"/api/bots/{BOT}/knowledge/sources"
FIRST_ROW = "table.sources tbody tr"
#: resolves with performance.now() once the sources table has a row
DRAWN = f"() => document.querySelector({json.dumps(FIRST_ROW)}) ? performance.now() : null"


def kb(data: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core" / "src"), str(ROOT)])}
    return subprocess.run([*KB, "--data", str(data), *args], check=True, capture_output=True,
                          text=True, timeout=300, env=env).stdout


def serve(data: Path, dist: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = {**os.environ, "KB_CONSOLE_DIR": str(dist),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core" / "src"), str(ROOT)])}
    proc = subprocess.Popen([*KB, "--data", str(data), "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("kb serve did not start")


class Bytes:
    """Encoded bytes of every response the page's network layer finished (devtools protocol)."""

    def __init__(self, page: Page):
        self.total = 0
        self.responses = 0
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.loadingFinished", self._finished)

    def _finished(self, event: dict[str, Any]) -> None:
        self.total += int(event.get("encodedDataLength", 0))
        self.responses += 1


def signed_in(browser: Browser, base: str, token: str) -> tuple[float, int, int]:
    context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900})
    creds = json.dumps({"bot": BOT, "token": token})
    context.add_init_script(f"sessionStorage.setItem('kb.console.credentials', {json.dumps(creds)})")
    page = context.new_page()
    count = Bytes(page)
    page.goto("/", wait_until="commit")
    ms = float(page.wait_for_function(DRAWN, polling="raf", timeout=30_000).json_value())
    page.wait_for_timeout(200)  # responses still finishing when the row was drawn
    out = (ms, count.total, count.responses)
    context.close()
    return out


def sign_in(browser: Browser, base: str, token: str) -> float:
    context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto("/")
    page.get_by_label("Bot").fill(BOT)
    page.get_by_label("Token").fill(token)
    start = float(page.evaluate("() => performance.now()"))
    page.get_by_role("button", name="Sign in").click()
    ms = float(page.wait_for_function(DRAWN, polling="raf", timeout=30_000).json_value())
    context.close()
    return ms - start


def reference(browser: Browser, base: str, token: str) -> tuple[float, int]:
    context = browser.new_context(extra_http_headers={"Authorization": f"Bearer {token}"})
    page = context.new_page()
    count = Bytes(page)
    page.goto(base + SOURCES)
    ms = float(page.evaluate("() => performance.getEntriesByType('navigation')[0].responseEnd"))
    page.wait_for_timeout(50)
    out = (ms, count.total)
    context.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    dist = ROOT / "console" / "dist"
    if not (dist / "index.html").is_file():
        sys.exit("console/dist is missing: run `make console` first")
    assets = sorted(p for p in dist.rglob("*") if p.is_file())
    print("built console:", ", ".join(f"{p.relative_to(dist)} {p.stat().st_size / 1024:.1f} KiB" for p in assets))
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        for pack in build_all(ROOT / "examples" / "packs", Path(tmp) / "packs"):
            kb(data, "ingest", str(pack))
        token = kb(data, "token", "create", "--bot", BOT, "--scopes",
                   "knowledge:read,knowledge:write").strip().splitlines()[-1]
        proc, base = serve(data, dist)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
                signed_in(browser, base, token)  # warm the server and the browser once, not counted
                loads, signs, refs = [], [], []
                for _ in range(args.runs):
                    loads.append(signed_in(browser, base, token))
                    signs.append(sign_in(browser, base, token))
                    refs.append(reference(browser, base, token))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    med = statistics.median
    print(f"runs: {args.runs} (medians; each a fresh browser context, empty cache)")
    print(f"{'':36}{'ms':>8}{'KiB':>9}{'responses':>11}")
    print(f"{'first load, signed in -> sources drawn':36}{med(x[0] for x in loads):8.0f}"
          f"{med(x[1] for x in loads) / 1024:9.1f}{med(x[2] for x in loads):11.0f}")
    print(f"{'sign-in pressed -> sources drawn':36}{med(signs):8.0f}")
    print(f"{'reference: GET sources alone':36}{med(x[0] for x in refs):8.0f}"
          f"{med(x[1] for x in refs) / 1024:9.1f}{1:11d}")
    print(f"first load range: {min(x[0] for x in loads):.0f}-{max(x[0] for x in loads):.0f} ms; "
          f"bytes range {min(x[1] for x in loads)}-{max(x[1] for x in loads)}")


if __name__ == "__main__":
    main()
