"""CDK assertions and cdk-nag on the synthesised KnowledgeStack (one synthesis per session)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_cdk.assertions import Annotations, Match

from knowledge import settings
from tests.infra.conftest import Synthesis, Synthesised

FUNCTIONS = ("ingest", "crawl", "retrieve", "admin_api", "authorizer", "scheduler")
ENV_NAMES = (
    settings.ENV_TABLE,
    settings.ENV_BUCKET,
    settings.ENV_SEARCH_ENDPOINT,
    settings.ENV_INDEX_PREFIX,
    settings.ENV_STATE_MACHINE,
    settings.ENV_EMBEDDER,
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "LOG_LEVEL",
)

# DESIGN.md §5, written out independently of infra/api.py
KNOWLEDGE = "/api/bots/{botID}/knowledge"
EXPECTED_ROUTES: dict[tuple[str, str], str] = {
    ("GET", f"{KNOWLEDGE}/sources"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources"): "admin_api",
    ("GET", f"{KNOWLEDGE}/sources/{{id}}"): "admin_api",
    ("PATCH", f"{KNOWLEDGE}/sources/{{id}}"): "admin_api",
    ("DELETE", f"{KNOWLEDGE}/sources/{{id}}"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources/{{id}}/upload"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources/{{id}}/upload-url"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources/{{id}}/refresh"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources/{{id}}/cancel"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources/{{id}}/disable"): "admin_api",
    ("POST", f"{KNOWLEDGE}/sources/{{id}}/enable"): "admin_api",
    ("GET", f"{KNOWLEDGE}/sources/{{id}}/index-status"): "admin_api",
    ("GET", f"{KNOWLEDGE}/sources/{{id}}/documents"): "admin_api",
    ("POST", f"{KNOWLEDGE}/retrieval-test"): "retrieve",
    ("POST", f"{KNOWLEDGE}/retrieve"): "retrieve",
    ("POST", f"{KNOWLEDGE}/reindex"): "admin_api",
    ("GET", f"{KNOWLEDGE}/index"): "admin_api",
    ("POST", f"{KNOWLEDGE}/citations/validate"): "admin_api",
    ("GET", f"{KNOWLEDGE}/live"): "admin_api",
    ("PUT", f"{KNOWLEDGE}/live/{{table}}"): "admin_api",
    ("GET", f"{KNOWLEDGE}/gaps"): "admin_api",
    ("POST", f"{KNOWLEDGE}/gaps/recheck"): "admin_api",
    ("POST", f"{KNOWLEDGE}/articles/from-ticket"): "admin_api",
    ("GET", "/api/bots/{botID}/agents"): "admin_api",
    ("GET", "/api/bots/{botID}/agents/{agentID}"): "admin_api",
    ("PUT", "/api/bots/{botID}/agents/{agentID}"): "admin_api",
    ("GET", "/api/bots/{botID}/tokens"): "admin_api",
    ("POST", "/api/bots/{botID}/tokens"): "admin_api",
    ("DELETE", "/api/bots/{botID}/tokens/{tokenID}"): "admin_api",
    ("GET", "/api/bots/{botID}/settings"): "admin_api",
    ("PATCH", "/api/bots/{botID}/settings"): "admin_api",
    ("POST", "/mcp"): "admin_api",
    ("GET", "/openapi.json"): "admin_api",
}

# every rule the stack acknowledges; a new suppression must be added here on purpose
ALLOWED_SUPPRESSIONS = {
    "AwsSolutions-S1",
    "AwsSolutions-OS1",
    "AwsSolutions-OS3",
    "AwsSolutions-OS4",
    "AwsSolutions-OS7",
    "AwsSolutions-L1",
    "AwsSolutions-IAM4",
    "AwsSolutions-IAM5",
    "AwsSolutions-APIG3",
    "AwsSolutions-APIG4",
    "AwsSolutions-COG4",
    "AwsSolutions-SQS3",
    "AwsSolutions-CFR1",
    "AwsSolutions-CFR2",
    "AwsSolutions-CFR3",
    "AwsSolutions-CFR4",
}


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def function_id(s: Synthesised, name: str) -> str:
    pattern = re.compile(rf"^Functions{_pascal(name)}[0-9A-F]{{8}}$")
    found = [k for k in s.of_type("AWS::Lambda::Function") if pattern.match(k)]
    assert len(found) == 1, (name, found)
    return found[0]


def role_statements(s: Synthesised, name: str) -> list[dict[str, Any]]:
    fn = s.resources[function_id(s, name)]
    role_id = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    statements: list[dict[str, Any]] = []
    for policy in s.of_type("AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    assert statements, f"no policy attached to {name}'s role"
    return statements


def actions_on(statements: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(action, resource-as-json) pairs of every Allow statement."""
    pairs = []
    for st in statements:
        assert st["Effect"] == "Allow"
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
        for action in actions:
            for resource in resources:
                pairs.append((action, json.dumps(resource)))
    return pairs


def actions_of(s: Synthesised, name: str) -> set[str]:
    return {action for action, _ in actions_on(role_statements(s, name))}


# --- cdk-nag ------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["minimum", "production"])
def test_no_unsuppressed_nag_errors(synthesis: Synthesis, profile: str) -> None:
    stack = getattr(synthesis, profile).stack
    errors = Annotations.from_stack(stack).find_error("*", Match.string_like_regexp("AwsSolutions-.*"))
    assert [(e.id, str(e.entry.data)[:160]) for e in errors] == []


def test_every_suppression_is_known_and_reasoned(minimum: Synthesised) -> None:
    seen: set[str] = set()
    for logical_id, resource in minimum.resources.items():
        rules = resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
        for rule in rules:
            seen.add(rule["id"])
            assert rule["id"] in ALLOWED_SUPPRESSIONS, (logical_id, rule["id"])
            assert len(rule["reason"]) >= 60, (logical_id, rule)
    # the ones that must be there for the minimum profile's documented trade-offs
    assert {"AwsSolutions-OS4", "AwsSolutions-OS7", "AwsSolutions-L1"} <= seen


def test_production_profile_needs_no_single_node_exemptions(production: Synthesised) -> None:
    for resource in production.of_type("AWS::OpenSearchService::Domain").values():
        ids = {r["id"] for r in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])}
        assert "AwsSolutions-OS4" not in ids and "AwsSolutions-OS7" not in ids


# --- storage ------------------------------------------------------------------------------------


def test_bucket_encrypted_private_tls_only_and_staging_expires(minimum: Synthesised) -> None:
    buckets = minimum.of_type("AWS::S3::Bucket")
    assert len(buckets) == 1
    [(bucket_id, bucket)] = buckets.items()
    props = bucket["Properties"]
    rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in {"AES256", "aws:kms"}
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["NotificationConfiguration"]["EventBridgeConfiguration"]["EventBridgeEnabled"] is True
    staging = [r for r in props["LifecycleConfiguration"]["Rules"] if r.get("Prefix") == "staging/"]
    assert staging and staging[0]["Status"] == "Enabled" and staging[0]["ExpirationInDays"] >= 1

    [policy] = minimum.of_type("AWS::S3::BucketPolicy").values()
    assert policy["Properties"]["Bucket"] == {"Ref": bucket_id}
    denies = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
    assert any(s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false" for s in denies)


def test_no_custom_resource_lambdas(minimum: Synthesised) -> None:
    # only our six functions: no bucket-notification, log-retention or access-policy helpers
    assert len(minimum.of_type("AWS::Lambda::Function")) == len(FUNCTIONS)
    assert not [r for r in minimum.resources.values() if r["Type"].startswith("Custom::")]


# --- state --------------------------------------------------------------------------------------


def test_table_keys_pitr_ttl_and_due_index(minimum: Synthesised) -> None:
    [table] = minimum.of_type("AWS::DynamoDB::Table").values()
    props = table["Properties"]
    assert props["KeySchema"] == [
        {"AttributeName": "PK", "KeyType": "HASH"},
        {"AttributeName": "SK", "KeyType": "RANGE"},
    ]
    types = {a["AttributeName"]: a["AttributeType"] for a in props["AttributeDefinitions"]}
    assert types["PK"] == "S" and types["SK"] == "S"
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expiresAt", "Enabled": True}
    gsis = {g["IndexName"]: g for g in props["GlobalSecondaryIndexes"]}
    assert set(gsis) == {"due", "leases"}
    assert gsis["due"]["KeySchema"] == [
        {"AttributeName": "dueShard", "KeyType": "HASH"},
        {"AttributeName": "dueAt", "KeyType": "RANGE"},
    ]
    assert types["dueShard"] == "S" and types["dueAt"] == "N"
    # the reaper's index: exactly the items carrying a lease expiry, i.e. leased sources
    assert gsis["leases"]["KeySchema"] == [
        {"AttributeName": "kind", "KeyType": "HASH"},
        {"AttributeName": "leaseExpiresAt", "KeyType": "RANGE"},
    ]
    assert types["kind"] == "S" and types["leaseExpiresAt"] == "N"
    from knowledge.adapters.aws import dynamodb_state

    assert (dynamodb_state.DUE_INDEX, dynamodb_state.LEASE_INDEX) == ("due", "leases")
    assert (dynamodb_state.LEASE_PARTITION_KEY, dynamodb_state.LEASE_SORT_KEY) == ("kind", "leaseExpiresAt")


# --- search -------------------------------------------------------------------------------------


def _domain(s: Synthesised) -> tuple[str, dict[str, Any]]:
    [(domain_id, domain)] = s.of_type("AWS::OpenSearchService::Domain").items()
    return domain_id, domain["Properties"]


def test_domain_encrypted_https_and_fine_grained_with_iam_master(minimum: Synthesised) -> None:
    _, props = _domain(minimum)
    assert re.fullmatch(r"OpenSearch_2\.\d+", props["EngineVersion"])
    assert props["EncryptionAtRestOptions"]["Enabled"] is True
    assert props["NodeToNodeEncryptionOptions"]["Enabled"] is True
    assert props["DomainEndpointOptions"]["EnforceHTTPS"] is True
    assert props["DomainEndpointOptions"]["TLSSecurityPolicy"] == "Policy-Min-TLS-1-2-2019-07"
    security = props["AdvancedSecurityOptions"]
    assert security["Enabled"] is True and security["InternalUserDatabaseEnabled"] is False
    ingest_role = minimum.resources[function_id(minimum, "ingest")]["Properties"]["Role"]
    assert security["MasterUserOptions"]["MasterUserARN"] == ingest_role
    statements = props["AccessPolicies"]["Statement"]
    principals = json.dumps([st["Principal"] for st in statements])
    assert '"*"' not in principals and ":root" in principals


def test_minimum_profile_is_one_small_node(minimum: Synthesised) -> None:
    _, props = _domain(minimum)
    cluster = props["ClusterConfig"]
    assert cluster["InstanceCount"] == 1
    assert cluster["InstanceType"] == "t3.small.search"
    assert cluster["DedicatedMasterEnabled"] is False
    assert cluster["ZoneAwarenessEnabled"] is False
    assert props["EBSOptions"] == {"EBSEnabled": True, "VolumeSize": 10, "VolumeType": "gp3"}
    for fn_id in minimum.of_type("AWS::Lambda::Function"):
        env = minimum.resources[fn_id]["Properties"]["Environment"]["Variables"]
        assert env["KB_SEARCH_REPLICAS"] == "0"


def test_production_profile_is_highly_available(production: Synthesised) -> None:
    _, props = _domain(production)
    cluster = props["ClusterConfig"]
    assert cluster["InstanceCount"] == 3
    assert cluster["DedicatedMasterEnabled"] is True and cluster["DedicatedMasterCount"] == 3
    assert cluster["ZoneAwarenessEnabled"] is True
    assert cluster["ZoneAwarenessConfig"]["AvailabilityZoneCount"] == 3


# --- functions ----------------------------------------------------------------------------------


def test_every_function_is_py312_arm64_with_both_layers_env_and_tracing(minimum: Synthesised) -> None:
    layer_ids = set(minimum.of_type("AWS::Lambda::LayerVersion"))
    assert len(layer_ids) == 2
    for name in FUNCTIONS:
        props = minimum.resources[function_id(minimum, name)]["Properties"]
        assert props["Runtime"] == "python3.12", name
        assert props["Architectures"] == ["arm64"], name
        assert props["Handler"] == "handler.handler", name
        assert {layer["Ref"] for layer in props["Layers"]} == layer_ids, name
        assert props["TracingConfig"] == {"Mode": "Active"}, name
        env = props["Environment"]["Variables"]
        missing = [key for key in ENV_NAMES if key not in env]
        assert not missing, (name, missing)
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "kb"
        assert env[settings.ENV_INDEX_PREFIX] == "kb"
        assert json.dumps(env[settings.ENV_SEARCH_ENDPOINT]).startswith('{"Fn::Join": ["", ["https://"')


def test_state_machine_env_points_at_the_real_state_machine(minimum: Synthesised) -> None:
    [sm] = minimum.of_type("AWS::StepFunctions::StateMachine").values()
    name = sm["Properties"]["StateMachineName"]
    env = minimum.resources[function_id(minimum, "scheduler")]["Properties"]["Environment"]["Variables"]
    assert json.dumps(env[settings.ENV_STATE_MACHINE]).endswith(f':stateMachine:{name}"]]}}')


def test_no_wildcard_actions_anywhere(minimum: Synthesised) -> None:
    for name in FUNCTIONS:
        for action, _ in actions_on(role_statements(minimum, name)):
            assert "*" not in action, (name, action)


def test_only_writers_can_put_objects_and_only_under_their_prefix(minimum: Synthesised) -> None:
    puts = {
        name: sorted(res for action, res in actions_on(role_statements(minimum, name)) if action == "s3:PutObject")
        for name in FUNCTIONS
    }
    assert not puts["retrieve"] and not puts["authorizer"]
    assert not puts["scheduler"]  # state reads and workflow starts: no object written
    assert puts["crawl"] and all(res.endswith('/staging/*"]]}') for res in puts["crawl"])
    # admin_api: direct uploads, and the presigned POSTs it signs (incoming/ only)
    assert puts["admin_api"] and all(res.endswith(('/uploads/*"]]}', '/incoming/*"]]}')) for res in puts["admin_api"])
    assert any(res.endswith('/incoming/*"]]}') for res in puts["admin_api"])
    # ingest moves a checked presigned upload to uploads/; it never writes a pack or incoming/
    assert puts["ingest"] and all('/packs/' not in res and '/incoming/' not in res for res in puts["ingest"])
    assert any(res.endswith('/uploads/*"]]}') for res in puts["ingest"])


def test_bot_secrets_are_read_and_written_only_under_the_stack_s_secret_prefix(minimum: Synthesised) -> None:
    stack_name = minimum.stack.stack_name
    for name in FUNCTIONS:
        env = minimum.resources[function_id(minimum, name)]["Properties"]["Environment"]["Variables"]
        assert env[settings.ENV_SECRETS_PREFIX] == f"{stack_name}/bots"
        pairs = [(a, r) for a, r in actions_on(role_statements(minimum, name)) if a.startswith("secretsmanager:")]
        assert all(f':secret:{stack_name}/bots/*' in r and "*" not in r.split(":secret:")[0] for _, r in pairs), name
        actions = {a for a, _ in pairs}
        if name == "admin_api":  # PATCH settings writes them
            assert actions == {"secretsmanager:GetSecretValue", "secretsmanager:CreateSecret",
                               "secretsmanager:PutSecretValue", "secretsmanager:DeleteSecret"}
        elif name in ("ingest", "retrieve", "scheduler"):  # embed, ask upstream
            assert actions == {"secretsmanager:GetSecretValue"}, name
        else:
            assert not actions, name


def test_read_side_functions_cannot_change_sources(minimum: Synthesised) -> None:
    retrieve = actions_of(minimum, "retrieve")
    assert "dynamodb:PutItem" in retrieve  # the retrieval record
    assert not retrieve & {"dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
    # UpdateItem only records a token's last use: token items only, never a source
    updates = [st for st in role_statements(minimum, "retrieve") if "dynamodb:UpdateItem" in
               (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])]
    assert len(updates) == 1
    assert updates[0]["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["TOKEN#*"]}}
    assert not {a for a in retrieve if a.startswith("s3:")}  # answers read no object
    assert not retrieve & {"es:ESHttpPut", "es:ESHttpDelete", "es:ESHttpPatch"}
    authorizer = actions_of(minimum, "authorizer")
    assert {a for a in authorizer if not a.startswith(("logs:", "xray:"))} == {"dynamodb:GetItem"}


def test_search_writes_belong_to_ingest_alone(minimum: Synthesised) -> None:
    for name in FUNCTIONS:
        writes = actions_of(minimum, name) & {"es:ESHttpPut", "es:ESHttpDelete"}
        assert bool(writes) == (name == "ingest"), name
    # the scheduler never searches; the nightly reindex lists packs/ (pack sync) and reads no object
    assert not {a for a in actions_of(minimum, "scheduler") if a.startswith("es:")}
    assert {a for a in actions_of(minimum, "scheduler") if a.startswith("s3:")} == {"s3:ListBucket"}
    assert not {a for a in actions_of(minimum, "crawl") if a.startswith("es:")}


def test_starting_refreshes_is_limited_to_the_starters(minimum: Synthesised) -> None:
    for name in FUNCTIONS:
        starts = "states:StartExecution" in actions_of(minimum, name)
        assert starts == (name in {"ingest", "admin_api", "scheduler"}), name


def list_bucket_statements(s: Synthesised, name: str) -> list[dict[str, Any]]:
    return [st for st in role_statements(s, name)
            if "s3:ListBucket" in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])]


@pytest.mark.parametrize("name", ["admin_api", "scheduler"])
def test_reindex_starters_list_only_the_prefixes_they_use(minimum: Synthesised, name: str) -> None:
    """POST reindex (admin_api) and the nightly reindex (scheduler) sync pack sources from
    the packs/ listing: s3:ListBucket on the bucket alone, limited to packs/ by condition."""
    [bucket_id] = minimum.of_type("AWS::S3::Bucket")
    [statement] = list_bucket_statements(minimum, name)
    assert statement["Action"] == "s3:ListBucket"
    assert statement["Resource"] == {"Fn::GetAtt": [bucket_id, "Arn"]}
    # admin_api looks a pack or an upload up as a one-key listing (HeadObject of a missing key
    # is a 403 without an unconditioned ListBucket)
    prefixes = ["packs/*"] if name == "scheduler" else ["packs/*", "uploads/*"]
    assert statement["Condition"] == {"StringLike": {"s3:prefix": prefixes}}
    # no object read beyond what the function had (the pack sync reads no pack)
    gets = [res for action, res in actions_on(role_statements(minimum, name)) if action == "s3:GetObject"]
    assert all("/uploads/" in res or "/packs/" in res for res in gets)
    if name == "scheduler":
        assert not gets
    else:  # existence checks are listings: admin_api reads no pack
        assert not any("/packs/" in res for res in gets)


def test_functions_that_never_sync_packs_cannot_list_the_bucket(minimum: Synthesised) -> None:
    for name in ("retrieve", "authorizer"):
        assert not list_bucket_statements(minimum, name), name


def test_scheduler_can_write_what_the_pack_sync_writes(minimum: Synthesised) -> None:
    # new pack rows are UpdateItem; withdrawing an out-of-scope pack is a transaction whose
    # Put retires the generation (a transaction needs the verbs of its parts)
    assert {"dynamodb:UpdateItem", "dynamodb:PutItem"} <= actions_of(minimum, "scheduler")
    assert "dynamodb:DeleteItem" not in actions_of(minimum, "scheduler")


def test_only_the_answering_functions_may_search(minimum: Synthesised) -> None:
    """ingest maps the roles that ask questions (retrieve; admin_api's retrieval-test and MCP)
    to the read-only search role, and no other: the scheduler starts work, it never searches."""
    ingest_env = minimum.resources[function_id(minimum, "ingest")]["Properties"]["Environment"]["Variables"]
    read_roles = json.dumps(ingest_env[settings.ENV_SEARCH_READ_ROLES])
    for name in FUNCTIONS:
        role = minimum.resources[function_id(minimum, name)]["Properties"]["Role"]["Fn::GetAtt"][0]
        assert (json.dumps({"Fn::GetAtt": [role, "Arn"]}) in read_roles) == (name in {"retrieve", "admin_api"}), name


def _definition(s: Synthesised) -> dict[str, Any]:
    [sm] = s.of_type("AWS::StepFunctions::StateMachine").values()
    parts = sm["Properties"]["DefinitionString"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else "ARN" for p in parts)
    return dict(json.loads(text))


def _all_states(definition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    states: dict[str, dict[str, Any]] = {}
    for name, state in definition["States"].items():
        states[name] = state
        if state["Type"] == "Map":
            states.update(_all_states(state["ItemProcessor"]))
        for branch in state.get("Branches", []):
            states.update(_all_states(branch))
    return states


def test_state_machine_is_standard_traced_and_logged(minimum: Synthesised) -> None:
    [sm] = minimum.of_type("AWS::StepFunctions::StateMachine").values()
    props = sm["Properties"]
    assert props["StateMachineType"] == "STANDARD"
    assert props["TracingConfiguration"] == {"Enabled": True}
    assert props["LoggingConfiguration"]["Level"] == "ALL"


def test_workflow_shape(minimum: Synthesised) -> None:
    definition = _definition(minimum)
    states = _all_states(definition)
    first = states[definition["StartAt"]]
    assert first["Type"] == "Parallel" and len(first["Branches"]) == 1
    [branch] = first["Branches"]
    take = branch["States"][branch["StartAt"]]
    assert take["Type"] == "Task" and take["Parameters"]["action"] == "take_lease"

    waits = [s for s in states.values() if s["Type"] == "Wait"]
    assert len(waits) == 1 and waits[0]["SecondsPath"] == "$.crawl.waitSeconds"
    [crawl_task] = [s for s in states.values() if s["Type"] == "Task" and "action" not in s["Parameters"]]
    assert waits[0]["Next"] in states and states[waits[0]["Next"]] is crawl_task

    website = [
        c for s in states.values() if s["Type"] == "Choice" for c in s["Choices"]
        if c.get("StringEquals") == "website"
    ]
    assert website and website[0]["Variable"] == "$.job.sourceType"

    [map_state] = [s for s in states.values() if s["Type"] == "Map"]
    assert map_state["MaxConcurrency"] == 4
    assert map_state["ItemsPath"] == "$.listing.batches"
    inner = list(map_state["ItemProcessor"]["States"].values())
    assert [s["Parameters"]["action"] for s in inner] == ["process_batch"]
    # batches run as child executions: a source's thousands of batches do not fill the
    # parent's 25,000-event history
    assert map_state["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    [machine] = minimum.of_type("AWS::StepFunctions::StateMachine").values()
    role_id = machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    statements = [st for p in minimum.of_type("AWS::IAM::Policy").values()
                  if {"Ref": role_id} in p["Properties"]["Roles"]
                  for st in p["Properties"]["PolicyDocument"]["Statement"]]
    assert any("states:StartExecution" in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
               for st in statements)

    actions = {s["Parameters"].get("action") for s in states.values() if s["Type"] == "Task"}
    assert actions == {"take_lease", "list_documents", "process_batch", "commit", "fail", None}


def test_every_step_retries_rate_limits_and_failures_release_the_lease(minimum: Synthesised) -> None:
    definition = _definition(minimum)
    states = _all_states(definition)
    top = definition["States"]
    fail_task = next(n for n, s in top.items() if s["Type"] == "Task" and s["Parameters"].get("action") == "fail")
    assert top[top[fail_task]["Next"]]["Type"] == "Fail"
    for name, state in states.items():
        if state["Type"] != "Task" or name == fail_task:
            continue
        errors = {e for retry in state.get("Retry", []) for e in retry["ErrorEquals"]}
        assert "RateLimited" in errors, name
        backoff = next(r for r in state["Retry"] if "RateLimited" in r["ErrorEquals"])
        assert backoff["BackoffRate"] > 1 and backoff["MaxAttempts"] >= 3
    for name, state in top.items():
        if state["Type"] in {"Task", "Map", "Parallel"} and name != fail_task:
            catches = state.get("Catch", [])
            assert any(c["ErrorEquals"] == ["States.ALL"] and c["Next"] == fail_task for c in catches), name


def test_a_busy_lease_is_waited_for_longer_than_a_lease_then_ends_quietly(minimum: Synthesised) -> None:
    """An edit during a refresh stops the running execution and starts another, which finds
    the lease still held: it must wait (not fail, not give up at once) until the first one
    lets go, or its lease lapses if its worker died."""
    definition = _definition(minimum)
    top = definition["States"]
    lease = top[definition["StartAt"]]
    [branch] = lease["Branches"]
    # inside: take_lease, then a busy answer becomes the LeaseBusy error
    [busy] = [s for s in branch["States"].values() if s["Type"] == "Fail"]
    assert busy["Error"] == "LeaseBusy"
    [choice] = [s for s in branch["States"].values() if s["Type"] == "Choice"]
    [rule] = choice["Choices"]
    assert branch["States"][rule["Next"]] is busy
    assert {"Variable": "$.job.reason", "StringEquals": "busy"} in rule["And"]
    assert lease["OutputPath"] == "$[0]"  # downstream states still read $.job
    [retry] = [r for r in lease["Retry"] if "LeaseBusy" in r["ErrorEquals"]]
    assert retry.get("JitterStrategy", "NONE") == "NONE"
    waits = [min(retry["MaxDelaySeconds"], retry["IntervalSeconds"] * retry["BackoffRate"] ** n)
             for n in range(retry["MaxAttempts"])]
    assert sum(waits) >= 1.5 * settings.LEASE_SECONDS  # a dead holder's lease lapses meanwhile
    assert sum(waits) <= 5 * settings.LEASE_SECONDS and retry["IntervalSeconds"] <= 10
    # after the wait: a quiet end, not the failure path (which would mark the source failed)
    catches = lease["Catch"]
    assert catches[0]["ErrorEquals"] == ["LeaseBusy"] and top[catches[0]["Next"]]["Type"] == "Succeed"
    assert catches[-1]["ErrorEquals"] == ["States.ALL"]


def test_lease_wait_helper_matches_the_definition(minimum: Synthesised) -> None:
    from infra.workflow import lease_busy_wait_seconds

    lease = _definition(minimum)["States"]["Lease"]
    [retry] = lease["Retry"]
    expected = sum(min(retry["MaxDelaySeconds"], retry["IntervalSeconds"] * retry["BackoffRate"] ** n)
                   for n in range(retry["MaxAttempts"]))
    assert lease_busy_wait_seconds() == expected


def test_workflow_transitions_are_closed(minimum: Synthesised) -> None:
    def check(machine: dict[str, Any]) -> None:
        names = set(machine["States"])
        reached = {machine["StartAt"]}
        for state in machine["States"].values():
            targets = [state.get("Next"), state.get("Default")]
            targets += [c["Next"] for c in state.get("Choices", []) + state.get("Catch", [])]
            for target in filter(None, targets):
                assert target in names, target
                reached.add(target)
            if state["Type"] == "Map":
                check(state["ItemProcessor"])
            for branch in state.get("Branches", []):
                check(branch)
        assert reached == names

    check(_definition(minimum))


# --- schedules ----------------------------------------------------------------------------------


def _rule_targets(rule: dict[str, Any]) -> list[dict[str, Any]]:
    return list(rule["Properties"]["Targets"])


def test_every_minute_tick_and_nightly_reindex_go_to_the_scheduler(minimum: Synthesised) -> None:
    scheduler = function_id(minimum, "scheduler")
    rules = minimum.of_type("AWS::Events::Rule").values()
    by_schedule = {r["Properties"].get("ScheduleExpression"): r for r in rules}
    tick = by_schedule["rate(1 minute)"]
    [target] = _rule_targets(tick)
    assert target["Arn"] == {"Fn::GetAtt": [scheduler, "Arn"]}
    assert json.loads(target["Input"])["action"] == "tick"
    nightly = [r for expr, r in by_schedule.items() if expr and re.fullmatch(r"cron\(0 \d+ \* \* \? \*\)", expr)]
    assert len(nightly) == 1
    [target] = _rule_targets(nightly[0])
    assert target["Arn"] == {"Fn::GetAtt": [scheduler, "Arn"]}
    assert json.loads(target["Input"]) == {"action": "reindex_all"}


def test_object_rules_send_packs_and_presigned_uploads_of_our_bucket_to_ingest(minimum: Synthesised) -> None:
    [bucket_id] = minimum.of_type("AWS::S3::Bucket")
    drops = [r for r in minimum.of_type("AWS::Events::Rule").values() if "EventPattern" in r["Properties"]]
    by_prefix = {}
    for rule in drops:
        pattern = rule["Properties"]["EventPattern"]
        assert pattern["source"] == ["aws.s3"] and pattern["detail-type"] == ["Object Created"]
        assert pattern["detail"]["bucket"]["name"] == [{"Ref": bucket_id}]
        [key] = pattern["detail"]["object"]["key"]
        by_prefix[key["prefix"]] = rule
        [target] = _rule_targets(rule)
        assert target["Arn"] == {"Fn::GetAtt": [function_id(minimum, "ingest"), "Arn"]}
        assert "Input" not in target and "InputTransformer" not in target  # the raw S3 event
    # direct uploads (uploads/) start their refresh in the request: no event for them
    assert sorted(by_prefix) == ["incoming/", "packs/"]


def test_browsers_may_post_presigned_uploads_and_leftovers_expire(minimum: Synthesised) -> None:
    [bucket] = minimum.of_type("AWS::S3::Bucket").values()
    [cors] = bucket["Properties"]["CorsConfiguration"]["CorsRules"]
    assert cors["AllowedMethods"] == ["POST"] and cors["AllowedOrigins"] == ["*"]
    rules = {r["Id"]: r for r in bucket["Properties"]["LifecycleConfiguration"]["Rules"]}
    assert rules["expire-incoming"]["Prefix"] == "incoming/"
    assert rules["expire-incoming"]["ExpirationInDays"] == 1


# --- API ----------------------------------------------------------------------------------------


def _api_methods(s: Synthesised) -> dict[tuple[str, str], dict[str, Any]]:
    resources = s.of_type("AWS::ApiGateway::Resource")

    def path_of(ref: Any) -> str:
        if isinstance(ref, dict) and "Fn::GetAtt" in ref:
            assert ref["Fn::GetAtt"][1] == "RootResourceId"
            return ""
        props = resources[ref["Ref"]]["Properties"]
        return f"{path_of(props['ParentId'])}/{props['PathPart']}"

    methods = {}
    for method in s.of_type("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        methods[(props["HttpMethod"], path_of(props["ResourceId"]))] = props
    return methods


def test_every_route_exists_with_the_right_backend(minimum: Synthesised) -> None:
    methods = _api_methods(minimum)
    assert set(methods) == set(EXPECTED_ROUTES)
    for key, target in EXPECTED_ROUTES.items():
        integration = methods[key]["Integration"]
        assert integration["Type"] == "AWS_PROXY", key
        assert function_id(minimum, target) in json.dumps(integration["Uri"]), key


def test_every_route_but_openapi_uses_the_request_authorizer(minimum: Synthesised) -> None:
    [(authorizer_id, authorizer)] = minimum.of_type("AWS::ApiGateway::Authorizer").items()
    assert authorizer["Properties"]["Type"] == "REQUEST"
    assert authorizer["Properties"]["IdentitySource"] == "method.request.header.Authorization"
    assert function_id(minimum, "authorizer") in json.dumps(authorizer["Properties"]["AuthorizerUri"])
    for key, props in _api_methods(minimum).items():
        if key == ("GET", "/openapi.json"):
            assert props["AuthorizationType"] == "NONE"
            assert "AuthorizerId" not in props
        else:
            assert props["AuthorizationType"] == "CUSTOM", key
            assert props["AuthorizerId"] == {"Ref": authorizer_id}, key


def test_stage_throttles_and_writes_access_logs(minimum: Synthesised) -> None:
    [stage] = minimum.of_type("AWS::ApiGateway::Stage").values()
    props = stage["Properties"]
    assert "DestinationArn" in props["AccessLogSetting"]
    access_format = json.loads(props["AccessLogSetting"]["Format"])
    assert {"requestId", "status", "resource"} <= set(access_format)
    [settings_all] = [m for m in props["MethodSettings"] if m["ResourcePath"] == "/*"]
    assert settings_all["ThrottlingRateLimit"] > 0 and settings_all["ThrottlingBurstLimit"] > 0
    assert settings_all["DataTraceEnabled"] is False


def test_gateway_errors_use_the_project_error_body(minimum: Synthesised) -> None:
    responses = {r["Properties"]["ResponseType"]: r["Properties"] for r in
                 minimum.of_type("AWS::ApiGateway::GatewayResponse").values()}
    assert {"UNAUTHORIZED", "ACCESS_DENIED", "THROTTLED"} <= set(responses)
    body = responses["UNAUTHORIZED"]["ResponseTemplates"]["application/json"]
    assert body.startswith('{"error": {"code": "unauthorized"')
    assert responses["THROTTLED"]["StatusCode"] == "429"


# --- load isolation -----------------------------------------------------------------------------


def test_every_function_creates_the_index_with_the_embedders_dimension_and_shards(minimum: Synthesised) -> None:
    for name in FUNCTIONS:
        variables = minimum.resources[function_id(minimum, name)]["Properties"]["Environment"]["Variables"]
        assert variables[settings.ENV_SEARCH_DIMENSION] == str(minimum.stack.config.dimension) == "1024"
        assert (variables[settings.ENV_SEARCH_SHARDS], variables[settings.ENV_SEARCH_REPLICAS]) == ("1", "0")


def test_the_nightly_reindex_goes_through_a_bounded_queue_with_a_dead_letter_queue(minimum: Synthesised) -> None:
    variables = minimum.resources[function_id(minimum, "scheduler")]["Properties"]["Environment"]["Variables"]
    queue_ref = variables[settings.ENV_REINDEX_QUEUE]
    assert int(variables[settings.ENV_MAX_RUNNING_REFRESHES]) >= 1
    queue = minimum.resources[queue_ref["Ref"]]
    assert queue["Type"] == "AWS::SQS::Queue"
    redrive = queue["Properties"]["RedrivePolicy"]
    assert redrive["maxReceiveCount"] >= 1
    assert _queue_of(redrive["deadLetterTargetArn"]) in _alarmed_queues(minimum)
    pairs = actions_on(role_statements(minimum, "scheduler"))
    queue_arn = json.dumps({"Fn::GetAtt": [queue_ref["Ref"], "Arn"]})
    assert {a for a, r in pairs if r == queue_arn} >= {"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage"}
    assert ("states:ListExecutions", json.dumps(variables[settings.ENV_STATE_MACHINE])) in pairs
    for name in FUNCTIONS:
        if name != "scheduler":
            assert not [a for a, r in actions_on(role_statements(minimum, name)) if r == queue_arn], name


def test_the_scheduler_may_query_the_lease_index(minimum: Synthesised) -> None:
    [table_id] = minimum.of_type("AWS::DynamoDB::Table")
    queries = [r for a, r in actions_on(role_statements(minimum, "scheduler")) if a == "dynamodb:Query"]
    assert any('"/index/leases"' in r and table_id in r for r in queries), queries


def test_answering_has_reserved_concurrency_and_nothing_else_does(minimum: Synthesised) -> None:
    for name in FUNCTIONS:
        reserved = minimum.resources[function_id(minimum, name)]["Properties"].get("ReservedConcurrentExecutions")
        if name == "retrieve":
            assert isinstance(reserved, int) and reserved >= 1
        else:
            assert reserved is None, name


def test_waf_limits_each_token_retrieval_test_and_address_on_the_stage(minimum: Synthesised) -> None:
    [(acl_id, acl)] = minimum.of_type("AWS::WAFv2::WebACL").items()
    props = acl["Properties"]
    assert props["Scope"] == "REGIONAL" and "Allow" in props["DefaultAction"]
    rules = {r["Name"]: r for r in props["Rules"]}
    by_token = rules["PerToken"]["Statement"]["RateBasedStatement"]
    assert by_token["AggregateKeyType"] == "CUSTOM_KEYS"
    assert by_token["CustomKeys"][0]["Header"]["Name"] == "authorization"
    test_rule = rules["RetrievalTestPerToken"]["Statement"]["RateBasedStatement"]
    assert test_rule["CustomKeys"] == by_token["CustomKeys"] and test_rule["Limit"] < by_token["Limit"]
    match = test_rule["ScopeDownStatement"]["ByteMatchStatement"]
    assert match["SearchString"] == "/knowledge/retrieval-test" and match["PositionalConstraint"] == "ENDS_WITH"
    assert rules["RetrievalTestPerToken"]["Priority"] < rules["PerToken"]["Priority"]
    assert rules["PerIp"]["Statement"]["RateBasedStatement"]["AggregateKeyType"] == "IP"
    for rule in rules.values():
        block = rule["Action"]["Block"]["CustomResponse"]
        assert block["ResponseCode"] == 429
        body = props["CustomResponseBodies"][block["CustomResponseBodyKey"]]["Content"]
        assert json.loads(body)["error"]["code"] == "rate_limited"
    [association] = minimum.of_type("AWS::WAFv2::WebACLAssociation").values()
    assert association["Properties"]["WebACLArn"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    [stage_id] = minimum.of_type("AWS::ApiGateway::Stage")
    arn = json.dumps(association["Properties"]["ResourceArn"])
    assert '"/stages/", {"Ref": "' + stage_id + '"}' in arn  # the stage itself, after it exists


# --- monitoring ---------------------------------------------------------------------------------


def test_alarms_cover_refreshes_leases_api_and_search(minimum: Synthesised) -> None:
    alarms = list(minimum.of_type("AWS::CloudWatch::Alarm").values())
    by_metric = {(a["Properties"].get("Namespace"), a["Properties"].get("MetricName")): a for a in alarms}
    for key in [
        ("kb", "RefreshFailed"),
        ("kb", "LeaseReaped"),
        ("AWS/ApiGateway", "5XXError"),
        ("AWS/ApiGateway", "Latency"),
        ("AWS/ES", "ClusterStatus.red"),
        ("AWS/ES", "ClusterStatus.yellow"),
    ]:
        assert key in by_metric, key
    assert by_metric[("AWS/ApiGateway", "Latency")]["Properties"]["ExtendedStatistic"] == "p95"
    assert {"Name": "service", "Value": "kb"} in by_metric[("kb", "RefreshFailed")]["Properties"]["Dimensions"]
    [topic_id] = minimum.of_type("AWS::SNS::Topic")
    for alarm in alarms:
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]
    assert len(minimum.of_type("AWS::CloudWatch::Dashboard")) == 1


def _alarm_metrics(alarm: dict[str, Any]) -> list[tuple[str | None, str | None, list[Any]]]:
    """(namespace, metric name, dimensions) of an alarm's metric or of each metric of its math."""
    props = alarm["Properties"]
    if "MetricName" in props:
        return [(props.get("Namespace"), props["MetricName"], props.get("Dimensions", []))]
    out = []
    for query in props.get("Metrics", []):
        stat = query.get("MetricStat")
        if stat:
            metric = stat["Metric"]
            out.append((metric.get("Namespace"), metric["MetricName"], metric.get("Dimensions", [])))
    return out


def _alarms_on(s: Synthesised, namespace: str, metric: str) -> list[dict[str, Any]]:
    return [a for a in s.of_type("AWS::CloudWatch::Alarm").values()
            if any(ns == namespace and name == metric for ns, name, _ in _alarm_metrics(a))]


#: services that invoke Lambda asynchronously: Lambda retries, then drops the event unless a
#: destination (or DLQ) is configured
ASYNC_INVOKERS = {"events.amazonaws.com", "s3.amazonaws.com", "sns.amazonaws.com", "scheduler.amazonaws.com"}


def _queue_of(arn: Any) -> str:
    assert isinstance(arn, dict) and "Fn::GetAtt" in arn and arn["Fn::GetAtt"][1] == "Arn", arn
    return str(arn["Fn::GetAtt"][0])


def _function_of(ref: Any) -> str:
    """Logical id of a function named by ``Ref`` or ``Fn::GetAtt [id, Arn]``."""
    return str(ref["Ref"] if "Ref" in ref else ref["Fn::GetAtt"][0])


def _alarmed_queues(s: Synthesised) -> set[str]:
    queues = set()
    for alarm in _alarms_on(s, "AWS/SQS", "ApproximateNumberOfMessagesVisible"):
        [(_, _, dims)] = _alarm_metrics(alarm)
        [dim] = [d for d in dims if d["Name"] == "QueueName"]
        queues.add(dim["Value"]["Fn::GetAtt"][0])
    return queues


def test_every_async_target_has_a_dead_letter_queue_or_destination_with_an_alarm(minimum: Synthesised) -> None:
    alarmed = _alarmed_queues(minimum)
    rules = minimum.of_type("AWS::Events::Rule")
    assert rules
    for rule_id, rule in rules.items():
        for target in _rule_targets(rule):
            assert "DeadLetterConfig" in target, (rule_id, target["Id"])
            assert _queue_of(target["DeadLetterConfig"]["Arn"]) in alarmed, rule_id
            assert "MaximumEventAgeInSeconds" in target["RetryPolicy"], rule_id
    configs = {
        _function_of(c["Properties"]["FunctionName"]): c["Properties"]
        for c in minimum.of_type("AWS::Lambda::EventInvokeConfig").values()
    }
    async_functions = {
        _function_of(p["Properties"]["FunctionName"])
        for p in minimum.of_type("AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] in ASYNC_INVOKERS
    }
    assert len(async_functions) >= 2  # the scheduler (tick, nightly) and ingest (pack drops)
    for fn in async_functions:
        assert fn in configs, f"{fn} is invoked asynchronously without an on-failure destination"
        destination = configs[fn]["DestinationConfig"]["OnFailure"]["Destination"]
        assert _queue_of(destination) in alarmed, fn
    for queue in minimum.of_type("AWS::SQS::Queue").values():
        assert queue["Properties"].get("SqsManagedSseEnabled") or queue["Properties"].get("KmsMasterKeyId")


def test_alarm_topic_uses_a_customer_managed_key_cloudwatch_may_use(minimum: Synthesised) -> None:
    [topic] = minimum.of_type("AWS::SNS::Topic").values()
    key_ref = topic["Properties"]["KmsMasterKeyId"]
    assert "alias/aws/sns" not in json.dumps(key_ref)
    key = minimum.resources[key_ref["Fn::GetAtt"][0]]
    assert key["Type"] == "AWS::KMS::Key" and key["Properties"]["EnableKeyRotation"] is True
    grants = [st for st in key["Properties"]["KeyPolicy"]["Statement"]
              if st.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}]
    assert grants and grants[0]["Effect"] == "Allow"
    assert {"kms:Decrypt", "kms:GenerateDataKey*"} <= set(grants[0]["Action"])


@pytest.mark.parametrize(
    ("namespace", "metric"),
    [
        ("AWS/States", "ExecutionsFailed"),
        ("AWS/States", "ExecutionsTimedOut"),
        ("AWS/States", "ExecutionThrottled"),
        ("AWS/DynamoDB", "ReadThrottleEvents"),
        ("AWS/DynamoDB", "WriteThrottleEvents"),
        ("AWS/ES", "ClusterStatus.red"),
        ("AWS/ES", "ClusterStatus.yellow"),
        ("AWS/ES", "JVMMemoryPressure"),
        ("AWS/ES", "FreeStorageSpace"),
        ("AWS/ES", "ClusterIndexWritesBlocked"),
    ],
)
def test_workflow_table_and_search_health_are_alarmed(minimum: Synthesised, namespace: str, metric: str) -> None:
    assert _alarms_on(minimum, namespace, metric), (namespace, metric)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_has_error_and_throttle_alarms(minimum: Synthesised, name: str) -> None:
    ref = {"Name": "FunctionName", "Value": {"Ref": function_id(minimum, name)}}
    for metric in ("Errors", "Throttles"):
        assert [a for a in _alarms_on(minimum, "AWS/Lambda", metric) if ref in _alarm_metrics(a)[0][2]], (name, metric)


def test_a_silent_scheduler_is_an_alarm(minimum: Synthesised) -> None:
    ref = {"Name": "FunctionName", "Value": {"Ref": function_id(minimum, "scheduler")}}
    [stopped] = [a for a in _alarms_on(minimum, "AWS/Lambda", "Invocations") if ref in _alarm_metrics(a)[0][2]]
    props = stopped["Properties"]
    assert props["ComparisonOperator"] == "LessThanThreshold" and props["TreatMissingData"] == "breaching"


def test_every_alarm_has_a_runbook_line(minimum: Synthesised) -> None:
    from tests.infra.conftest import REPO

    readme = (REPO / "infra" / "README.md").read_text()
    for alarm in minimum.of_type("AWS::CloudWatch::Alarm").values():
        name = alarm["Properties"]["AlarmName"]
        assert isinstance(name, str) and name.startswith(f"{minimum.stack.stack_name}-")
        short = name[len(minimum.stack.stack_name) + 1 :]
        assert re.search(rf"^\| `{short}` \|[^|]+\|[^|]+\|$", readme, re.M), f"no runbook line for {short}"


def test_outputs(minimum: Synthesised) -> None:
    outputs = minimum.template.to_json()["Outputs"]
    assert {"ApiUrl", "BucketName", "TableName", "SearchEndpoint"} <= set(outputs)


def test_placeholder_layer_is_flagged(minimum: Synthesised) -> None:
    warnings = Annotations.from_stack(minimum.stack).find_warning("*", Match.string_like_regexp(".*make assets.*"))
    assert warnings
