"""Powertools for the Lambda handlers, set up one way for all of them.

Logger (structured JSON, the invocation's context), Metrics (EMF) and the Tracer: X-Ray
traces every AWS SDK call (botocore is patched at once) and the OpenSearch client's HTTP
(requests is patched the moment something imports it, so tracing alone never imports it:
a function that never searches does not pay for requests at its cold start).
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer
from wrapt import register_post_import_hook


def powertools() -> tuple[Logger, Tracer, Metrics]:
    """A handler module's ``logger, tracer, metrics`` (call once, at module level)."""
    tracer = Tracer(patch_modules=("botocore",))
    register_post_import_hook(lambda _module: tracer.patch(["requests"]), "requests")
    return Logger(), tracer, Metrics()
