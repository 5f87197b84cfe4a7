#!/usr/bin/env python3
"""CDK entry point: ``cdk synth`` / ``cdk deploy`` (see infra/README.md).

``cdk.json`` runs it through ``scripts/cdk-app.sh``, which picks the project's interpreter
(``KB_PYTHON``, else ``.venv/bin/python``, else the active virtualenv's).

Offline and environment-agnostic: no lookups, no network. Lambda assets must exist first
(``make assets``); ``--core-only`` assets synthesise only with
``-c kb:allowPlaceholderAssets=true``. A configuration or asset problem ends the run with one
line on stderr and exit status 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
_REPO = Path(__file__).resolve().parent
for _path in (_REPO / "layers" / "core" / "src", _REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

try:
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks
except ImportError as _missing:  # the interpreter is not the project's (see scripts/cdk-app.sh)
    print(f"kb: {sys.executable} lacks the CDK libraries ({_missing.name}): run `make assets` "
          "(installs .venv with them) or set KB_PYTHON", file=sys.stderr)
    raise SystemExit(1) from None

from infra.console import KnowledgeConsoleStack  # noqa: E402
from infra.stack import KnowledgeStack  # noqa: E402

STACK_NAME_CONTEXT = "kb:stackName"


def build_app(app: cdk.App | None = None) -> tuple[cdk.App, KnowledgeStack]:
    """Create the app with the stack and cdk-nag's AwsSolutions checks applied."""
    app = app or cdk.App()
    name = str(app.node.try_get_context(STACK_NAME_CONTEXT) or "KnowledgeStack")
    stack = KnowledgeStack(app, name, description="kb: knowledge sources and retrieval for AI support agents")
    cdk.Tags.of(stack).add("project", "kb")
    console = KnowledgeConsoleStack(app, f"{name}Console", api=stack.api.api,
                                    description="kb: the operator console (S3 + CloudFront, /api to the REST API)")
    cdk.Tags.of(console).add("project", "kb")
    cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    return app, stack


def main() -> int:
    from infra.config import ConfigError
    from infra.functions import AssetsError

    try:
        app, _ = build_app()
    except (ConfigError, AssetsError) as exc:
        print(f"kb: {exc}", file=sys.stderr)
        return 1
    app.synth()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
