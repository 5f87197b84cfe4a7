"""What the Lambda handler tests share: the sample events and a Lambda context."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parent / "events"


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
