"""Schemathesis against a real `kb serve`: every operation of the published OpenAPI document
is fuzzed (valid and invalid inputs) with a valid token for the path's bot, under every
check schemathesis has: no 5xx, documented status codes, content types and headers, answers
that conform to the response schemas, schema-invalid requests refused and schema-valid ones
accepted.

Two allowances, each for a reason a schema cannot express:

* a body can be schema-valid and still refused for the state it meets (a pack slug nobody
  dropped, a config of another type than the stored source's, an article visibility that
  contradicts its state, an agent selecting sources that do not exist, citations of a
  retrieval that never served them, an openai embedder without a key given or stored):
  those operations may answer their documented 400/422;
* a live table needs the bot to have exactly one live source (or one named), a ticket needs
  a customer and an agent message with text and must fit an article's 64 KB, and ``since``
  of the gaps is a string that must read as a time: those may answer 400 (with their code);
* the settings routes run against a bot of their own (``sandbox``, with its own admin
  token): a fuzzed upstream address or embedder there is never used by the questions the
  fuzzer asks of ``default``, so nothing leaves the machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import pack_bytes, page
from tests.e2e.support import free_port, run_kb, start_server

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
ACCEPTED = ["2xx", "401", "403", "404", "409"]
#: operations whose schema-valid bodies may meet a rule of state (see the module docstring)
STATE_DEPENDENT = {
    "createSource": [*ACCEPTED, "400"],
    "patchSource": [*ACCEPTED, "400"],
    "putAgent": [*ACCEPTED, "400"],
    "validateCitationsRoute": [*ACCEPTED, "422"],
    # the openai embedder needs a provider key: given now, or stored before
    "patchSettings": [*ACCEPTED, "400"],
    "putLiveTable": [*ACCEPTED, "400"],
    "articleFromTicket": [*ACCEPTED, "400"],
    "listGaps": [*ACCEPTED, "400"],
}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_fuzzing_the_api_passes_every_check(tmp_path: Path):
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
                   "knowledge:read,knowledge:write,knowledge:admin").strip().splitlines()[-1]
    sandbox = run_kb(data, "token", "create", "--bot", "sandbox", "--scopes",
                     "knowledge:admin").strip().splitlines()[-1]
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
            + "".join(
                "[[operations]]\n"
                f'include-operation-id = "{op}"\n'
                '[operations.checks.positive_data_acceptance]\n'
                f"expected-statuses = {statuses}\n"
                for op, statuses in STATE_DEPENDENT.items()
            )
            + "[[operations]]\n"
            'include-path-regex = "/settings$"\n'
            'headers = { Authorization = "Bearer ' + sandbox + '" }\n'
            '[operations.parameters]\n'
            '"path.botID" = "sandbox"\n'
        )
        report = tmp_path / "report.json"
        exe = str(SCHEMATHESIS) if SCHEMATHESIS.exists() else "schemathesis"
        result = subprocess.run(
            [exe, "--config-file", str(config), "run", f"{base}/openapi.json",
             "--checks", "all", "--phases", "examples,coverage,fuzzing",
             "--workers", "1", "--seed", "20240501", "--no-shrink", "--request-timeout", "20",
             "--generation-database", "none", "--report", "json", "--report-json-path", str(report)],
            capture_output=True, text=True, timeout=540, env={**os.environ, "NO_COLOR": "1"}, cwd=tmp_path,
        )
        summary = json.loads(report.read_text()) if report.exists() else {}
        (tmp_path / "schemathesis.out").write_text(result.stdout)
        assert result.returncode == 0, (result.stdout[-6000:], result.stderr[-2000:], summary)
        assert summary["failures"] == [] and summary["errors"] == []
        assert summary["operations"]["tested"] == summary["operations"]["total"] >= 24
        assert summary["test_cases"]["generated"] > 100
    finally:
        proc.terminate()
        proc.wait(timeout=10)
