"""One synthesis per test session: the default (minimum-profile) stack with cdk-nag's
AwsSolutions checks applied, from assets built by ``scripts/build_lambda_assets.py --core-only``
into a temporary folder; plus the production-profile search domain on its own (small) stack."""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

REPO = Path(__file__).resolve().parents[2]
for _path in (REPO / "layers" / "core" / "src", REPO):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import aws_cdk as cdk  # noqa: E402
from aws_cdk.assertions import Template  # noqa: E402


def load_build_script() -> ModuleType:
    from tests.scripts import load_script

    return load_script("scripts/build_lambda_assets.py", "build_lambda_assets")


@pytest.fixture(scope="session")
def build_script() -> ModuleType:
    return load_build_script()


@dataclass
class Synthesised:
    stack: cdk.Stack
    template: Template

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return dict(self.template.to_json()["Resources"])

    def of_type(self, type_name: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == type_name}


@dataclass
class Synthesis:
    minimum: Synthesised
    production: Synthesised  # the search construct only
    assets: Path


@pytest.fixture(scope="session")
def synthesis(tmp_path_factory: pytest.TempPathFactory, build_script: ModuleType) -> Synthesis:
    from app import build_app
    from infra.stack import KnowledgeStack

    assets = tmp_path_factory.mktemp("assets")
    build_script.build(assets, core_only=True, allow_missing_functions=True)
    outdir = tmp_path_factory.mktemp("cdk.out")
    # the WAF is on by default in production only; synthesised here to check it
    context = {"kb:assetsDir": str(assets), "kb:allowPlaceholderAssets": True, "kb:waf": True}
    app = cdk.App(context=context, outdir=str(outdir))
    app, minimum = build_app(app)
    assert isinstance(minimum, KnowledgeStack)
    production = _production_search_stack(dataclasses.replace(minimum.config, profile="production"))
    return Synthesis(
        minimum=Synthesised(minimum, Template.from_stack(minimum)),
        production=Synthesised(production, Template.from_stack(production)),
        assets=assets,
    )


def _production_search_stack(config: Any) -> cdk.Stack:
    """The production profile differs from the default only in the search domain (and the
    replica count the functions get), so only that construct is synthesised for it: a second
    full synthesis would double the suite's run time for no extra coverage."""
    from aws_cdk import aws_iam as iam
    from cdk_nag import AwsSolutionsChecks

    from infra.config import log_retention
    from infra.search import KnowledgeSearch

    app = cdk.App()
    stack = cdk.Stack(app, "ProductionSearch")
    master = iam.Role(stack, "Master", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    KnowledgeSearch(
        stack,
        "Search",
        profile=config.search,
        master_role=master,
        domain_name="kb-production",
        retain=True,
        log_retention=log_retention(30),
    )
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    return stack


@pytest.fixture(scope="session")
def minimum(synthesis: Synthesis) -> Synthesised:
    return synthesis.minimum


@pytest.fixture(scope="session")
def production(synthesis: Synthesis) -> Synthesised:
    return synthesis.production
