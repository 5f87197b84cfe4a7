"""The API declarations through the Lambda handlers (moto DynamoDB, osmem for OpenSearch):
strict bodies and hostile JSON answered with codes by ``retrieve`` and ``admin_api``, and a
token created, used, listed and revoked over the API on AWS (the authorizer refuses it at
once: API Gateway caches no authorizer answer)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.api.auth import create_token
from tests.functional import test_handlers
from tests.functional.test_handlers import BOT, Aws, api_event, invoke, reply
from tests.lambda_support import event

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics:UserWarning")

KB = f"/api/bots/{BOT}/knowledge"

#: test_handlers' moto + osmem deployment with every handler imported (a fixture)
aws = test_handlers.aws


def call(aws: Aws, function: str, token: str, method: str, path: str, body: Any = None,
         raw: str | None = None) -> tuple[int, Any]:
    ev = api_event("apigw_rest_retrieve.json", token, method=method, path=path, body=body)
    if raw is not None:
        ev["body"] = raw
    elif body is None:
        ev["body"] = None
    return reply(invoke(aws, function, ev))


def authorizer_effect(aws: Aws, token: str) -> str:
    ev = event("authorizer_request.json")
    ev["headers"]["Authorization"] = f"Bearer {token}"
    try:
        result = invoke(aws, "authorizer", ev)
    except Exception as exc:  # noqa: BLE001 - API Gateway's contract: this exact message is a 401
        assert str(exc) == "Unauthorized"
        return "Unauthorized"
    return str(result["policyDocument"]["Statement"][0]["Effect"])


@pytest.mark.parametrize("body,code", [
    ({"q": "Monero withdrawal", "Audience": "public"}, "unknown_field"),
    ({"q": "Monero withdrawal", "limit": 1000}, "unknown_field"),
    ({"q": "x" * 16_001}, "question_too_long"),
    ({"q": "Monero", "audience": "admins"}, "invalid_audience"),
])
def test_retrieve_refuses_what_its_model_refuses(aws: Aws, body: dict[str, Any], code: str) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read"])
    for route in ("retrieve", "retrieval-test"):
        assert call(aws, "retrieve", token, "POST", f"{KB}/{route}", body)[1]["error"]["code"] == code


@pytest.mark.parametrize("function,method,path,raw,code", [
    ("retrieve", "POST", f"{KB}/retrieve", '{"q": "Monero", "agentId": ' + "9" * 5000 + "}", "number_too_large"),
    ("retrieve", "POST", f"{KB}/retrieve", r'{"q": "Monero \ud800"}', "invalid_unicode"),
    ("admin_api", "POST", f"{KB}/sources",
     '{"type": "instruction", "name": "\\udfff", "config": {"text": "t"}}', "invalid_unicode"),
    ("admin_api", "PUT", f"/api/bots/{BOT}/agents/a1", '{"sourceIds": ["\\ud800"]}', "invalid_unicode"),
    ("admin_api", "POST", f"{KB}/reindex", '{"force": true, "everything": 1}', "unknown_field"),
])
def test_hostile_bodies_are_400_with_a_code(aws: Aws, function: str, method: str, path: str, raw: str,
                                            code: str) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    status, body = call(aws, function, token, method, path, raw=raw)
    assert (status, body["error"]["code"]) == (400, code)


def test_a_token_is_created_used_listed_and_revoked_over_the_api_on_aws(aws: Aws) -> None:
    admin = create_token(aws.services, BOT, ["knowledge:admin"])
    status, made = call(aws, "admin_api", admin, "POST", f"/api/bots/{BOT}/tokens",
                        {"scopes": ["knowledge:read"], "expiresInSeconds": 86400})
    assert status == 201 and made["token"].startswith("kb_")
    assert authorizer_effect(aws, made["token"]) == "Allow"
    status, answer = call(aws, "retrieve", made["token"], "POST", f"{KB}/retrieve", {"q": "Monero withdrawal"})
    assert status == 200 and "retrievalId" in answer
    status, listed = call(aws, "admin_api", admin, "GET", f"/api/bots/{BOT}/tokens")
    row = next(t for t in listed["tokens"] if t["id"] == made["id"])
    assert row["lastUsedAt"] is not None and row["expiresAt"] == made["expiresAt"]
    assert made["token"] not in json.dumps(listed)
    assert call(aws, "admin_api", admin, "DELETE", f"/api/bots/{BOT}/tokens/{made['id']}")[0] == 204
    assert authorizer_effect(aws, made["token"]) == "Unauthorized"
    status, body = call(aws, "retrieve", made["token"], "POST", f"{KB}/retrieve", {"q": "Monero withdrawal"})
    assert (status, body["error"]["code"]) == (401, "unauthorized")


def test_settings_over_the_api_on_aws_never_return_secrets(aws: Aws) -> None:
    admin = create_token(aws.services, BOT, ["knowledge:admin"])
    status, body = call(aws, "admin_api", admin, "PATCH", f"/api/bots/{BOT}/settings",
                        {"floor": 0.42, "upstream": {"url": "https://kb.example.com", "token": "kb_secret-up"}})
    assert status == 200 and body["floor"] == 0.42 and body["upstream"]["tokenSet"] is True
    status, body = call(aws, "admin_api", admin, "GET", f"/api/bots/{BOT}/settings")
    assert status == 200 and "kb_secret-up" not in json.dumps(body)
    assert aws.services.state.get_bot(BOT).upstream["token"] == "kb_secret-up"
    # stored in Secrets Manager under the stack's prefix; the table holds a reference only
    import boto3

    items = boto3.client("dynamodb", region_name="us-east-1").scan(TableName="kb-table")["Items"]
    assert "kb_secret-up" not in json.dumps(items)
    secret = boto3.client("secretsmanager", region_name="us-east-1").get_secret_value(
        SecretId=f"{aws.prefix}/bots/{BOT}/upstream-token")
    assert secret["SecretString"] == "kb_secret-up"
    reader = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    assert call(aws, "admin_api", reader, "GET", f"/api/bots/{BOT}/settings")[0] == 403


def test_head_is_answered_like_get_by_the_admin_function(aws: Aws) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read"])
    get = call(aws, "admin_api", token, "GET", f"{KB}/sources")
    head = call(aws, "admin_api", token, "HEAD", f"{KB}/sources")
    assert get[0] == head[0] == 200
