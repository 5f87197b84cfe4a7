"""Schemathesis against a real `kb serve`: every operation of the published OpenAPI document
is fuzzed (valid and invalid inputs) with a valid token for the path's bot, and no answer
may be a 5xx (`not_a_server_error`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import pack_bytes, page
from tests.e2e.test_admin_api import start_server
from tests.e2e.test_embedded_server import free_port, run_kb

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_fuzzing_the_api_finds_no_server_error(tmp_path: Path):
    if not SCHEMATHESIS.exists() and shutil.which("schemathesis") is None:
        pytest.skip("schemathesis is not installed")
    data = tmp_path / "data"
    pack = tmp_path / "coinvault.ndjson.gz"
    pack.write_bytes(pack_bytes([
        page("help/deposit.md", "# Deposit\n\nDeposits of XMR need ten confirmations.", audience="CUSTOMER"),
        page("admin/sweep.md", "# Sweep\n\nThe sweep threshold moves funds to cold storage.", audience="OPERATOR"),
    ]))
    run_kb(data, "ingest", str(pack))
    token = run_kb(data, "token", "create", "--bot", "default", "--scopes",
                   "knowledge:read,knowledge:write").strip().splitlines()[-1]
    port = free_port()
    proc, base = start_server(data, port, extra_env={"KB_RETRIEVAL_TEST_PER_MINUTE": "100000"})
    try:
        config = tmp_path / "schemathesis.toml"
        # path parameters pinned to the token's bot, so requests reach the handlers rather
        # than stopping at 403; everything else is generated
        config.write_text(
            'headers = { Authorization = "Bearer ' + token + '" }\n'
            "[parameters]\n"
            '"path.botID" = "default"\n'
            "[generation]\n"
            "max-examples = 8\n"
            "allow-x00 = true\n"
        )
        report = tmp_path / "report.json"
        exe = str(SCHEMATHESIS) if SCHEMATHESIS.exists() else "schemathesis"
        result = subprocess.run(
            [exe, "--config-file", str(config), "run", f"{base}/openapi.json",
             "--checks", "all", "--phases", "examples,coverage,fuzzing",
             "--workers", "1", "--seed", "20240501", "--no-shrink", "--request-timeout", "20",
             "--generation-database", "none", "--report", "json", "--report-json-path", str(report)],
            capture_output=True, text=True, timeout=200, env={**os.environ, "NO_COLOR": "1"}, cwd=tmp_path,
        )
        summary = json.loads(report.read_text()) if report.exists() else {}
        assert result.returncode == 0, (result.stdout[-6000:], result.stderr[-2000:], summary)
        assert summary["failures"] == [] and summary["errors"] == []
        assert summary["operations"]["tested"] == summary["operations"]["total"] >= 19
        assert summary["test_cases"]["generated"] > 100
    finally:
        proc.terminate()
        proc.wait(timeout=10)
