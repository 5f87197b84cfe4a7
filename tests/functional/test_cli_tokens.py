"""``kb token create|list|revoke`` on the embedded store, and ``kb aws bootstrap`` (the first
admin token of a deployed stack) against moto's CloudFormation and DynamoDB."""

from __future__ import annotations

import json

import pytest

from knowledge.adapters.local.sqlite_state import SqliteStateStore
from knowledge.api.auth import hash_token
from knowledge.embedded.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_create_list_and_revoke(tmp_path, capsys):
    data = str(tmp_path / "data")
    code, out, _ = run(capsys, "--data", data, "token", "create", "--bot", "acme", "--scopes",
                       "knowledge:read,knowledge:admin", "--expires-in", "3600")
    assert code == 0
    secret = out.strip().splitlines()[-1]
    code, out, _ = run(capsys, "--data", data, "token", "list", "--bot", "acme")
    [row] = json.loads(out)
    assert row["scopes"] == ["knowledge:read", "knowledge:admin"] and row["expiresAt"] is not None
    assert secret not in out and hash_token(secret) not in out
    assert run(capsys, "--data", data, "token", "list", "--bot", "other")[1].strip() == "[]"
    assert run(capsys, "--data", data, "token", "revoke", "--bot", "other", row["id"])[0] == 1
    assert run(capsys, "--data", data, "token", "revoke", "--bot", "acme", row["id"])[0] == 0
    assert SqliteStateStore(tmp_path / "data" / "state.db").get_token(hash_token(secret)) is None
    assert json.loads(run(capsys, "--data", data, "token", "list", "--bot", "acme")[1]) == []


def test_bad_scopes_are_refused(tmp_path, capsys):
    code, _, err = run(capsys, "--data", str(tmp_path), "token", "create", "--bot", "acme", "--scopes", "root")
    assert code == 2 and "scopes" in err


@pytest.fixture
def aws(monkeypatch):
    from moto import mock_aws

    for name in ("AWS_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_SESSION_TOKEN", "testing"), ("AWS_DEFAULT_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    with mock_aws():
        yield


def test_aws_bootstrap_writes_a_hashed_admin_token_into_the_stack_table(aws, capsys):
    import boto3

    from knowledge.adapters.aws.dynamodb_state import DynamoDbStateStore
    from knowledge.adapters.aws.dynamodb_table import create_table

    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_table(dynamodb, "kb-prod-table")
    boto3.client("cloudformation", region_name="us-east-1").create_stack(StackName="kb-prod", TemplateBody=json.dumps({
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"TableName": {"Value": "kb-prod-table"}, "ApiUrl": {"Value": "https://api.example/v1/"}},
    }))
    code, out, _ = run(capsys, "aws", "bootstrap", "--stack", "kb-prod", "--bot", "acme")
    assert code == 0
    secret = out.strip().splitlines()[-1]
    store = DynamoDbStateStore("kb-prod-table", client=dynamodb)
    token = store.get_token(hash_token(secret))
    assert token is not None and (token.bot, token.scopes) == ("acme", ("knowledge:admin",))
    assert [t.id for t in store.list_tokens("acme")] == [token.id]
    assert secret not in json.dumps(dynamodb.scan(TableName="kb-prod-table")["Items"])  # only its hash


def test_aws_bootstrap_needs_the_table_output(aws, capsys):
    import boto3

    boto3.client("cloudformation", region_name="us-east-1").create_stack(StackName="bare", TemplateBody=json.dumps({
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}))
    code, _, err = run(capsys, "aws", "bootstrap", "--stack", "bare")
    assert code == 2 and "TableName" in err
