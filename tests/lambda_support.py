"""What the Lambda handler tests share: the sample events, a Lambda context and the
environment the stack gives a function."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from knowledge.settings import (
    ENV_BUCKET,
    ENV_EMBEDDER,
    ENV_INDEX_PREFIX,
    ENV_SEARCH_ENDPOINT,
    ENV_SECRETS_PREFIX,
    ENV_STATE_MACHINE,
    ENV_TABLE,
)

EVENTS = Path(__file__).resolve().parent / "events"
REPO = Path(__file__).resolve().parents[1]


def event(name: str) -> dict[str, Any]:
    """A fresh copy of one sample event from ``tests/events``."""
    return copy.deepcopy(json.loads((EVENTS / name).read_text()))


class FakeContext:
    """The attributes Powertools reads from a Lambda context. ``remaining_ms`` is the time the
    invocation has left; subclass to set another."""

    function_name = "kb-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:kb-test"
    aws_request_id = "4b1f0c1e-0000-4000-8000-000000000000"
    log_group_name = "/aws/lambda/kb-test"
    log_stream_name = "2026/03/13/[$LATEST]0123456789"
    remaining_ms = 60_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def function_env(prefix: str = "kb", *, table: str = "kb-table", bucket: str = "kb-bucket",
                 embedder: str = "none", state_machine: str | None = None) -> dict[str, str]:
    """The variables the stack sets on every function (the search endpoint is never contacted)."""
    env = {
        ENV_TABLE: table, ENV_BUCKET: bucket, ENV_SEARCH_ENDPOINT: "https://search.invalid",
        ENV_INDEX_PREFIX: prefix, ENV_EMBEDDER: embedder, ENV_SECRETS_PREFIX: f"{prefix}/bots",
        "POWERTOOLS_SERVICE_NAME": "kb", "POWERTOOLS_METRICS_NAMESPACE": "kb",
    }
    if state_machine is not None:
        env[ENV_STATE_MACHINE] = state_machine
    return env


def fresh_lambda_env(function: str, task_root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a fresh interpreter that imports a handler as Lambda would: this
    process's variables minus any AWS/kb/Powertools/Lambda ones, dummy credentials, the
    variables the Lambda runtime sets (tracing on), the function's own, the repo importable;
    ``extra`` overrides any of them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "KB_", "POWERTOOLS_", "LAMBDA_"))}
    env.update({
        "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "cold", "AWS_SECRET_ACCESS_KEY": "cold",
        "AWS_EC2_METADATA_DISABLED": "true", "LAMBDA_TASK_ROOT": str(task_root),
        "AWS_LAMBDA_FUNCTION_NAME": f"kb-{function}", "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000",
        "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
        **function_env(),
        "PYTHONPATH": os.pathsep.join([str(REPO / "layers" / "core" / "src"), str(REPO)]),
        **(extra or {}),
    })
    return env
