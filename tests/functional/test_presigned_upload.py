"""Presigned uploads on AWS (moto): ``POST .../upload-url`` signs a POST scoped to one key,
size range and content type; the file is sent to the (mocked) bucket over HTTP, and the S3
object-created event hands it to ``ingest``, which applies the direct upload's checks and
queues the refresh. The embedded server answers the route with ``not_supported``."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest
import requests

from knowledge.api.auth import create_token
from knowledge.api.http import Request
from knowledge.api.routes import dispatch
from knowledge.errors import Code
from knowledge.lifecycle import MAX_UPLOAD_BYTES
from knowledge.lifecycle.uploads import NOT_SUPPORTED, UPLOAD_URL_SECONDS
from knowledge.ports import Services
from tests.functional import test_handlers
from tests.functional.test_handlers import BOT, Aws, api_event, invoke, reply
from tests.lambda_support import event

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics:UserWarning")

KB = f"/api/bots/{BOT}/knowledge"
TEXT = b"Refunds reach the card in five business days.\n"

#: test_handlers' moto + osmem deployment with every handler imported (a fixture)
aws = test_handlers.aws


def call(aws: Aws, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    ev = api_event("apigw_rest_retrieve.json", token, method=method, path=path, body=body)
    if body is None:
        ev["body"] = None
    return reply(invoke(aws, "admin_api", ev))


def file_source(aws: Aws, token: str, content_type: str = "text/plain") -> str:
    status, source = call(aws, token, "POST", f"{KB}/sources",
                          {"type": "file", "name": "Refunds", "visibility": "agent",
                           "config": {"filename": "refunds.txt", "contentType": content_type}})
    assert status == 201, source
    return str(source["id"])


def object_created(key: str, size: int) -> dict[str, Any]:
    ev = event("s3_object_created.json")
    ev["detail"]["object"].update(key=key, size=size)
    return ev


def policy_of(form: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(base64.b64decode(form["fields"]["policy"])))


def test_the_form_is_signed_for_one_key_the_size_limit_and_the_source_s_type(aws: Aws) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    source_id = file_source(aws, token, "application/pdf")
    before = datetime.now(UTC)
    status, form = call(aws, token, "POST", f"{KB}/sources/{source_id}/upload-url")
    assert status == 200, form
    assert form["method"] == "POST" and form["maxBytes"] == MAX_UPLOAD_BYTES == 8 * 1024 * 1024
    assert form["url"].startswith("https://kb-bucket.s3.") and form["contentType"] == "application/pdf"
    fields = form["fields"]
    assert fields["key"] == f"incoming/{BOT}/{source_id}" and fields["Content-Type"] == "application/pdf"
    assert fields["x-amz-algorithm"] == "AWS4-HMAC-SHA256"  # SigV4: S3 refuses the legacy signature
    policy = policy_of(form)
    conditions = policy["conditions"]
    assert {"key": f"incoming/{BOT}/{source_id}"} in conditions
    assert {"Content-Type": "application/pdf"} in conditions
    assert ["content-length-range", 1, MAX_UPLOAD_BYTES] in conditions
    assert {"bucket": "kb-bucket"} in conditions
    expires = datetime.fromisoformat(policy["expiration"].replace("Z", "+00:00"))
    assert 0 < (expires - before).total_seconds() <= UPLOAD_URL_SECONDS + 60
    # signing is local: nothing was written, nothing queued
    assert aws.services.blobs.list("incoming/") == [] and aws.executions() == []


def test_a_file_posted_to_the_bucket_is_checked_moved_and_queued_once(aws: Aws) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    source_id = file_source(aws, token)
    _, form = call(aws, token, "POST", f"{KB}/sources/{source_id}/upload-url")
    sent = requests.post(form["url"], data=form["fields"], files={"file": ("refunds.txt", TEXT, "text/plain")},
                         timeout=30)
    assert sent.status_code in (200, 204), sent.text
    incoming = f"incoming/{BOT}/{source_id}"
    assert aws.services.blobs.get(incoming) == TEXT
    result = invoke(aws, "ingest", object_created(incoming, len(TEXT)))
    assert result == {"status": "queued", "bot": BOT, "sourceId": source_id}
    assert aws.services.blobs.get(f"uploads/{BOT}/{source_id}") == TEXT
    assert not aws.services.blobs.exists(incoming)
    [execution] = aws.executions()
    assert json.loads(execution["input"])["sourceId"] == source_id
    assert aws.services.state.get_source(BOT, source_id).status == "waiting"
    # EventBridge delivers at least once: the same event again finds nothing to take
    assert invoke(aws, "ingest", object_created(incoming, len(TEXT)))["status"] == "ignored"
    assert len(aws.executions()) == 1


@pytest.mark.parametrize("size,code", [(MAX_UPLOAD_BYTES + 1, Code.FILE_TOO_LARGE), (0, "empty_upload")])
def test_an_object_the_policy_should_have_refused_is_dropped_with_the_direct_upload_s_code(
        aws: Aws, size: int, code: str) -> None:
    token = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    source_id = file_source(aws, token)
    incoming = f"incoming/{BOT}/{source_id}"
    aws.services.blobs.put(incoming, b"x" * size)  # moto does not enforce the POST policy
    result = invoke(aws, "ingest", object_created(incoming, size))
    assert result["status"] == "refused" and result["errorCode"] == code
    source = aws.services.state.get_source(BOT, source_id)
    assert source.status == "failed" and source.error_code == code
    assert not aws.services.blobs.exists(incoming) and not aws.services.blobs.exists(f"uploads/{BOT}/{source_id}")
    assert aws.executions() == []
    status, body = call(aws, token, "GET", f"{KB}/sources/{source_id}/index-status")
    assert status == 200 and body["errorCode"] == code


def test_objects_of_unknown_sources_or_odd_keys_under_incoming_are_ignored(aws: Aws) -> None:
    aws.services.blobs.put(f"incoming/{BOT}/nosuchsource", TEXT)
    assert invoke(aws, "ingest", object_created(f"incoming/{BOT}/nosuchsource", len(TEXT)))["status"] == "ignored"
    assert not aws.services.blobs.exists(f"incoming/{BOT}/nosuchsource")
    assert invoke(aws, "ingest", object_created(f"incoming/{BOT}/a/b", 3))["status"] == "ignored"
    assert aws.executions() == []


def test_only_writers_get_a_form_and_only_for_their_file_sources(aws: Aws) -> None:
    writer = create_token(aws.services, BOT, ["knowledge:read", "knowledge:write"])
    reader = create_token(aws.services, BOT, ["knowledge:read"])
    source_id = file_source(aws, writer)
    status, body = call(aws, reader, "POST", f"{KB}/sources/{source_id}/upload-url")
    assert status == 403 and body["error"]["code"] == Code.FORBIDDEN
    status, body = call(aws, writer, "POST", f"{KB}/sources/nosuchsource/upload-url")
    assert status == 404 and body["error"]["code"] == Code.NOT_FOUND
    status, faq = call(aws, writer, "POST", f"{KB}/sources",
                       {"type": "faq", "name": "FAQ", "visibility": "agent",
                        "config": {"entries": [{"question": "Fees?", "answer": "Shown before you confirm."}]}})
    assert status == 201, faq
    status, body = call(aws, writer, "POST", f"{KB}/sources/{faq['id']}/upload-url")
    assert status == 409 and body["error"]["code"] == "not_a_file_source"


def test_the_embedded_server_answers_not_supported(services: Services) -> None:
    token = create_token(services, "default", ["knowledge:read", "knowledge:write"])
    headers = {"authorization": f"Bearer {token}"}
    created = dispatch(services, Request("POST", "/api/bots/default/knowledge/sources", headers, {}, json.dumps(
        {"type": "file", "name": "Refunds", "visibility": "agent",
         "config": {"filename": "refunds.txt", "contentType": "text/plain"}}).encode()))
    assert created.status == 201, created.body
    source_id = created.body["id"]
    answer = dispatch(services, Request("POST", f"/api/bots/default/knowledge/sources/{source_id}/upload-url",
                                        headers, {}, b""))
    assert answer.status == 400 and answer.body["error"]["code"] == NOT_SUPPORTED
    # the direct upload route is what it takes instead
    direct = dispatch(services, Request("POST", f"/api/bots/default/knowledge/sources/{source_id}/upload",
                                        headers, {}, TEXT))
    assert direct.status == 202, direct.body
