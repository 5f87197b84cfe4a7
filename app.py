#!/usr/bin/env python3
"""CDK entry point: ``cdk synth`` / ``cdk deploy`` (see infra/README.md).

Offline and environment-agnostic: no lookups, no network. Lambda assets must exist first
(``python scripts/build_lambda_assets.py``; ``--core-only`` is enough to synthesise).
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

import aws_cdk as cdk  # noqa: E402
from cdk_nag import AwsSolutionsChecks  # noqa: E402

from infra.stack import KnowledgeStack  # noqa: E402

STACK_NAME_CONTEXT = "kb:stackName"


def build_app(app: cdk.App | None = None) -> tuple[cdk.App, KnowledgeStack]:
    """Create the app with the stack and cdk-nag's AwsSolutions checks applied."""
    app = app or cdk.App()
    name = str(app.node.try_get_context(STACK_NAME_CONTEXT) or "KnowledgeStack")
    stack = KnowledgeStack(app, name, description="kb: knowledge sources and retrieval for AI support agents")
    cdk.Tags.of(stack).add("project", "kb")
    cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
    return app, stack


def main() -> None:
    app, _ = build_app()
    app.synth()


if __name__ == "__main__":
    main()
