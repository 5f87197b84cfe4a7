"""What a handler's cold start imports, checked in a fresh interpreter with a Lambda-like
environment (tracing on, as in Lambda): the cold start pays for the modules a handler's
usual invocations need and for no others (``bench/coldstart.py`` times it).

* boto3 (and with it s3transfer and multiprocessing) is never imported: the composition root
  uses botocore's session and clients, and the DynamoDB store writes typed values itself;
* neither opensearch-py nor requests nor asyncio: the functions' search client sends queries as
  plain signed HTTP and loads opensearch-py for index management and writes only, when first
  made; the X-Ray SDK's wrapt must not import asyncio either (wrapt 2 imports asyncio
  and importlib.metadata at import: ``pyproject.toml`` keeps it below 2);
* nothing of the embedded deployment or of extraction (SQLite, tantivy, numpy, parsers);
* the functions that only answer (retrieve, the authorizer) load neither the source lifecycle
  nor the refresh pipeline (the admin routes import them on first use), nor the outbound
  client (a question loads it only for a bot that fuses in another deployment);
* no function loads pydantic or the API's body models at its cold start: the admin routes load
  them with the first route that takes a body (most admin calls are GETs), and a question's
  body is checked without them (``knowledge.api.bodies``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lambda_support import fresh_lambda_env, function_env

STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:kb"
HANDLERS = ("ingest", "crawl", "retrieve", "admin_api", "authorizer", "scheduler")
NEVER = ("boto3", "s3transfer", "multiprocessing", "sqlite3", "tantivy", "numpy", "bs4", "lxml", "pypdf",
         "markdown_it", "sentence_transformers")
#: the refresh pipeline, the source lifecycle and the outbound client: what the answering functions never load
PIPELINE = ("knowledge.lifecycle", "knowledge.refresh.pipeline", "knowledge.sources.registry",
            "knowledge.crawl.outbound")
ANSWERING = frozenset({"retrieve", "authorizer"})
WATCHED = (*NEVER, *PIPELINE, "asyncio", "opensearchpy", "requests", "wrapt", "pydantic", "knowledge.api.models")

PROBE = (
    "import importlib, json, sys\n"
    "module = importlib.import_module(sys.argv[1])\n"
    "assert not module.tracer.disabled\n"
    "import wrapt\n"
    "print(json.dumps({'loaded': sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules),\n"
    "                  'wrapt': wrapt.__version__}))\n"
)


def lambda_env(name: str, tmp_path: Path) -> dict[str, str]:
    return fresh_lambda_env(name, tmp_path, function_env(embedder="bedrock", state_machine=STATE_MACHINE))


@pytest.mark.parametrize("name", HANDLERS)
def test_a_cold_start_imports_what_the_function_uses_and_no_more(name: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, f"functions.{name}.handler", json.dumps(WATCHED)],
                         env=lambda_env(name, tmp_path), cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    loaded = set(report["loaded"])
    assert not loaded & set(NEVER), f"{name} imports {sorted(loaded & set(NEVER))} at its cold start"
    assert "wrapt" in loaded and int(report["wrapt"].split(".")[0]) < 2  # X-Ray's patching, the light wrapt
    if name in ANSWERING:
        assert not loaded & set(PIPELINE), f"{name} imports {sorted(loaded & set(PIPELINE))} at its cold start"
    validating = {"pydantic", "knowledge.api.models"}
    assert not loaded & validating, f"{name} imports {sorted(loaded & validating)} at its cold start"
    # retrieve creates its search client at the cold start: queries go as plain signed HTTP
    # (search_http), so no function loads opensearch-py (nor requests, nor asyncio) before an
    # index management call or a write needs it
    assert not loaded & {"opensearchpy", "requests", "asyncio"}, f"{name}: {sorted(loaded)}"


def test_the_default_session_is_botocore_s_in_the_region_the_function_runs_in(monkeypatch: pytest.MonkeyPatch) -> None:
    # botocore alone reads AWS_DEFAULT_REGION only; Lambda's AWS_REGION must reach every client
    from knowledge.wiring import build_aws_services

    for name in ("AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "cold")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cold")
    env = {"AWS_REGION": "eu-west-3",
           **function_env(state_machine="arn:aws:states:eu-west-3:123456789012:stateMachine:kb")}
    services = build_aws_services(env, embedder=False, eager=("dynamodb", "s3", "stepfunctions"))
    clients = (services.state.client, services.blobs.client, services.workflow.client)
    assert {type(c).__module__ for c in clients} == {"botocore.client"}
    assert {c.meta.region_name for c in clients} == {"eu-west-3"}
