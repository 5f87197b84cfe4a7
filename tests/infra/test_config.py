"""Stack configuration from CDK context, and the env/metric names shared with the code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_logs as logs

from infra import env_names
from infra.config import REPO_ROOT, ConfigError, StackConfig, default_domain_name, log_retention
from knowledge import settings


def config_from(context: dict[str, Any]) -> StackConfig:
    return StackConfig.from_node(cdk.App(context=context).node)


def test_defaults_are_the_minimum_profile() -> None:
    config = config_from({})
    assert config.profile == "minimum"
    assert config.search.data_nodes == 1 and config.search.master_nodes == 0
    assert config.search.data_instance_type == "t3.small.search" and config.search.volume_gb == 10
    assert config.search.index_replicas == 0
    assert config.assets_dir == REPO_ROOT / "build" / "assets"


def test_context_strings_are_coerced() -> None:
    config = config_from(
        {
            "kb:profile": "production",
            "kb:retainData": "false",
            "kb:apiBurstLimit": "250",
            "kb:searchVolumeGb": "40",
            "kb:searchInstanceType": "m7g.large.search",
            "kb:assetsDir": "some/where",
            "kb:logLevel": "debug",
        }
    )
    assert config.profile == "production" and config.retain_data is False
    assert config.api_burst_limit == 250 and config.log_level == "DEBUG"
    assert config.search.volume_gb == 40 and config.search.data_instance_type == "m7g.large.search"
    assert config.search.master_nodes == 3 and config.search.availability_zones == 3
    assert config.assets_dir == REPO_ROOT / "some" / "where"


@pytest.mark.parametrize(
    ("context", "key"),
    [
        ({"kb:profile": "huge"}, "kb:profile"),
        ({"kb:embedder": "magic"}, "kb:embedder"),
        ({"kb:logLevel": "LOUD"}, "kb:logLevel"),
        ({"kb:nightlyReindexHourUtc": "25"}, "kb:nightlyReindexHourUtc"),
        ({"kb:apiBurstLimit": "lots"}, "kb:apiBurstLimit"),
        ({"kb:indexPrefix": "KB_Index"}, "kb:indexPrefix"),
        ({"kb:searchDomainName": "9bad"}, "kb:searchDomainName"),
        ({"kb:searchVolumeGb": "5"}, "kb:searchVolumeGb"),
    ],
)
def test_invalid_context_is_rejected_by_key(context: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)):
        config_from(context)


@pytest.mark.parametrize("stack_name", ["KnowledgeStack", "kb", "1st-Stack_Name", "X" * 60, "a-"])
def test_default_domain_name_is_always_valid(stack_name: str) -> None:
    name = default_domain_name(stack_name)
    assert re.fullmatch(r"[a-z][a-z0-9-]{2,27}", name), name


def test_log_retention_rounds_up() -> None:
    assert log_retention(30) == logs.RetentionDays.ONE_MONTH
    assert log_retention(31) == logs.RetentionDays.TWO_MONTHS
    assert log_retention(1) == logs.RetentionDays.ONE_DAY


def test_every_function_variable_is_named_once_in_settings(minimum) -> None:
    """Each environment variable the stack gives a function is one of the names the code
    reads (``knowledge.settings.ENV_*``, re-exported by ``infra.env_names``), and no two
    settings share a value: a renamed or misspelt variable fails here, not in Lambda."""
    names = {k: v for k, v in vars(settings).items() if k.startswith("ENV_")}
    assert len(set(names.values())) == len(names), "two settings read the same variable"
    exported = {k: getattr(env_names, k) for k in env_names.__all__ if k.startswith("ENV_")}
    assert exported == {k: names[k] for k in exported}
    functions = minimum.of_type("AWS::Lambda::Function")
    used: set[str] = set()
    for props in (f["Properties"] for f in functions.values()):
        used |= set(props.get("Environment", {}).get("Variables", {}))
    assert used, "no function has an environment"
    # AWS_* and NODE_* belong to the runtime or to CDK's own helper functions
    ours = {name for name in used if not name.startswith(("AWS_", "NODE_"))}
    assert ours <= set(names.values()), sorted(ours - set(names.values()))


def test_missing_assets_fail_with_instructions(tmp_path: Path) -> None:
    from infra.stack import KnowledgeStack

    app = cdk.App(context={"kb:assetsDir": str(tmp_path / "empty")})
    from infra.functions import AssetsError

    with pytest.raises(AssetsError, match=r"no Lambda assets at .*run `make assets` first"):
        KnowledgeStack(app, "NoAssets")


def test_waf_and_reserved_answering_concurrency_follow_the_profile() -> None:
    minimum, production = config_from({}), config_from({"kb:profile": "production"})
    assert (minimum.waf_enabled, production.waf_enabled) == (False, True)
    assert 0 < minimum.retrieve_reserved < production.retrieve_reserved
    assert config_from({"kb:waf": "true"}).waf_enabled is True
    assert config_from({"kb:profile": "production", "kb:waf": "false"}).waf_enabled is False
    assert config_from({"kb:retrieveConcurrency": "0"}).retrieve_reserved == 0
    with pytest.raises(ConfigError, match="kb:retrieveConcurrency"):
        config_from({"kb:retrieveConcurrency": "-1"})


def test_the_index_dimension_follows_the_embedder_and_a_mismatch_is_refused() -> None:
    assert config_from({}).dimension == 1024  # Titan v2
    assert config_from({"kb:embedder": "openai"}).dimension == 1536  # text-embedding-3-small
    assert config_from({"kb:embedder": "bedrock", "kb:embeddingDimension": "512"}).dimension == 512
    assert config_from({"kb:embedder": "openai", "kb:embeddingDimension": "3072"}).dimension == 3072
    with pytest.raises(ConfigError, match=r"kb:embeddingDimension=1536 does not fit the bedrock embedder"):
        config_from({"kb:embedder": "bedrock", "kb:embeddingDimension": "1536"})
    with pytest.raises(ConfigError, match=r"kb:embeddingDimension must be within"):
        config_from({"kb:embedder": "openai", "kb:embeddingDimension": "20000"})


def test_shards_and_replicas_are_parameters_with_per_profile_defaults() -> None:
    minimum, production = config_from({}).search, config_from({"kb:profile": "production"}).search
    assert (minimum.index_shards, minimum.index_replicas) == (1, 0)
    assert (production.index_shards, production.index_replicas) == (production.data_nodes, 1)
    tuned = config_from({"kb:profile": "production", "kb:searchShards": "6", "kb:searchReplicas": "2"}).search
    assert (tuned.index_shards, tuned.index_replicas) == (6, 2)
    with pytest.raises(ConfigError, match=r"kb:searchReplicas=1 needs more than 1 data node"):
        config_from({"kb:searchReplicas": "1"})
    with pytest.raises(ConfigError, match=r"kb:searchShards must be within"):
        config_from({"kb:searchShards": "0"})


def test_the_functions_read_the_shard_count_the_stack_sets() -> None:
    from knowledge.wiring import AwsSettings

    base = {settings.ENV_TABLE: "t", settings.ENV_BUCKET: "b", settings.ENV_SEARCH_ENDPOINT: "https://s.invalid"}
    assert AwsSettings.from_env(base).shards == 1
    assert AwsSettings.from_env({**base, settings.ENV_SEARCH_SHARDS: "3"}).shards == 3
    for bad in ("0", "many"):
        with pytest.raises(ValueError, match=settings.ENV_SEARCH_SHARDS):
            AwsSettings.from_env({**base, settings.ENV_SEARCH_SHARDS: bad})


def test_provisioned_answering_is_an_option_within_the_reserved_concurrency() -> None:
    assert config_from({}).retrieve_provisioned == 0
    assert config_from({"kb:retrieveProvisioned": "5"}).retrieve_provisioned == 5
    with pytest.raises(ConfigError, match=r"kb:retrieveProvisioned=11 exceeds the reserved concurrency"):
        config_from({"kb:retrieveProvisioned": "11"})  # minimum profile reserves 10


def test_with_provisioned_concurrency_questions_go_to_the_live_alias(synthesis: Any) -> None:
    import json

    from aws_cdk.assertions import Template

    from infra.stack import KnowledgeStack

    app = cdk.App(context={"kb:assetsDir": str(synthesis.assets), "kb:allowPlaceholderAssets": True,
                           "kb:retrieveProvisioned": 4})
    resources = Template.from_stack(KnowledgeStack(app, "Provisioned")).to_json()["Resources"]
    [(alias_id, alias)] = [(k, v) for k, v in resources.items() if v["Type"] == "AWS::Lambda::Alias"]
    assert alias["Properties"]["Name"] == "live"
    assert alias["Properties"]["ProvisionedConcurrencyConfig"] == {"ProvisionedConcurrentExecutions": 4}
    uris = [json.dumps(m["Properties"]["Integration"]["Uri"]) for m in resources.values()
            if m["Type"] == "AWS::ApiGateway::Method" and m["Properties"].get("Integration")]
    assert sum(alias_id in uri for uri in uris) == 2  # POST retrieve and POST retrieval-test


def test_upload_origins_are_read_as_origins_and_anything_else_is_refused() -> None:
    assert config_from({}).upload_origins == ("*",)
    assert config_from({"kb:uploadOrigins": "https://console.example.com, http://localhost:5173/"}).upload_origins \
        == ("https://console.example.com", "http://localhost:5173")
    assert config_from({"kb:uploadOrigins": ["https://a.example"]}).upload_origins == ("https://a.example",)
    for bad in ("console.example.com", "https://a.example/path", "javascript:alert(1)"):
        with pytest.raises(ConfigError, match="kb:uploadOrigins"):
            config_from({"kb:uploadOrigins": bad})


RERANK_ARN = "arn:aws:bedrock:eu-central-1::foundation-model/amazon.rerank-v1:0"


def test_a_rerank_model_is_an_arn_or_nothing() -> None:
    assert config_from({}).rerank_model_arn is None
    assert config_from({"kb:rerankModelArn": f" {RERANK_ARN} "}).rerank_model_arn == RERANK_ARN
    for bad in ("amazon.rerank-v1:0", "arn:aws:bedrock:eu-central-1::foundation-model/*",
                "arn:aws:s3:::bucket/key"):
        with pytest.raises(ConfigError, match="kb:rerankModelArn"):
            config_from({"kb:rerankModelArn": bad})


def test_a_rerank_model_reaches_the_question_functions_and_only_that_model(synthesis: Any) -> None:
    from aws_cdk.assertions import Template

    from infra.stack import KnowledgeStack

    def rerank_of(stack_name: str, context: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        app = cdk.App(context={"kb:assetsDir": str(synthesis.assets), "kb:allowPlaceholderAssets": True,
                               **context})
        resources = Template.from_stack(KnowledgeStack(app, stack_name)).to_json()["Resources"]
        env_of = {r["Properties"]["Role"]["Fn::GetAtt"][0]: r["Properties"]["Environment"]["Variables"]
                  for r in resources.values() if r["Type"] == "AWS::Lambda::Function"
                  and "Environment" in r["Properties"]}
        grants: dict[str, Any] = {}
        for r in resources.values():
            if r["Type"] != "AWS::IAM::Policy":
                continue
            for statement in r["Properties"]["PolicyDocument"]["Statement"]:
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                if "bedrock:Rerank" in actions or statement.get("Resource") == RERANK_ARN:
                    for role in r["Properties"]["Roles"]:
                        grants.setdefault(role["Ref"], []).append((actions, statement["Resource"]))
        with_arn = {role: env for role, env in env_of.items()
                    if env.get(settings.ENV_RERANK_MODEL_ARN) == RERANK_ARN}
        return with_arn, grants

    envs, grants = rerank_of("NoRerank", {})
    assert envs == {} and grants == {}
    envs, grants = rerank_of("Rerank", {"kb:rerankModelArn": RERANK_ARN})
    assert envs and set(grants) <= set(envs)
    retrieve_roles = [role for role in grants if "retrieve" in role.lower()]
    admin_roles = [role for role in grants if "admin" in role.lower()]
    assert len(grants) == 2 and retrieve_roles and admin_roles
    for given in grants.values():
        assert sorted(given) == [(["bedrock:InvokeModel"], RERANK_ARN), (["bedrock:Rerank"], "*")]
