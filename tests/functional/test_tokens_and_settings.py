"""Tokens and settings as API (through ``dispatch``, which both deployments share): created,
used, listed, expired and revoked; settings read and changed with secrets write-only."""

from __future__ import annotations

import json

import pytest

from knowledge.api.auth import create_token, hash_token
from knowledge.api.http import Request
from knowledge.api.ratelimit import TokenBucket
from knowledge.api.routes import dispatch
from knowledge.embedded.worker import InProcessWorkflow
from knowledge.model import BotSettings

BOT = "/api/bots/default"
KB = f"{BOT}/knowledge"


class Api:
    def __init__(self, services):
        self.services = services
        self.limiter = TokenBucket(per_minute=1000)
        self.admin = create_token(services, "default", ["knowledge:admin"])

    def __call__(self, method, path, body=None, token=None):
        data = json.dumps(body).encode() if body is not None else b""
        req = Request(method, path, {"authorization": f"Bearer {token or self.admin}"}, {}, data)
        resp = dispatch(self.services, req, limiter=self.limiter)
        return resp.status, resp.body


@pytest.fixture
def api(services):
    services.workflow = InProcessWorkflow(services, background=False)
    return Api(services)


def test_a_token_is_created_used_listed_and_revoked(api, services, clock):
    status, made = api("POST", f"{BOT}/tokens", {"scopes": ["knowledge:read"]})
    assert status == 201 and made["token"].startswith("kb_") and made["scopes"] == ["knowledge:read"]
    assert made["expiresAt"] is None and made["lastUsedAt"] is None
    assert services.state.get_token(hash_token(made["token"])).id == made["id"]
    clock.advance(30)
    assert api("GET", f"{KB}/sources", token=made["token"])[0] == 200
    status, listed = api("GET", f"{BOT}/tokens")
    assert status == 200
    row = next(t for t in listed["tokens"] if t["id"] == made["id"])
    assert row["lastUsedAt"] is not None and row["createdAt"] == made["createdAt"]
    assert all("token" not in t for t in listed["tokens"])  # never a secret in a list
    assert made["token"] not in json.dumps(listed) and hash_token(made["token"]) not in json.dumps(listed)
    assert api("DELETE", f"{BOT}/tokens/{made['id']}")[0] == 204
    status, body = api("GET", f"{KB}/sources", token=made["token"])
    assert (status, body["error"]["code"]) == (401, "unauthorized")  # revoked at once
    status, body = api("DELETE", f"{BOT}/tokens/{made['id']}")
    assert (status, body["error"]["code"]) == (404, "not_found")
    assert made["id"] not in {t["id"] for t in api("GET", f"{BOT}/tokens")[1]["tokens"]}


def test_an_expired_token_is_refused(api, clock):
    status, made = api("POST", f"{BOT}/tokens", {"scopes": ["knowledge:read"], "expiresInSeconds": 3600})
    assert status == 201 and made["expiresAt"] is not None
    clock.advance(3599)
    assert api("GET", f"{KB}/sources", token=made["token"])[0] == 200
    clock.advance(1)
    status, body = api("GET", f"{KB}/sources", token=made["token"])
    assert (status, body["error"]["code"]) == (401, "token_expired")


def test_last_use_is_written_at_most_once_a_minute(api, services, clock):
    token = create_token(services, "default", ["knowledge:read"])
    writes = []
    original = services.state.touch_token
    services.state.touch_token = lambda h, now: (writes.append(now), original(h, now))[1]
    for _ in range(5):
        api("GET", f"{KB}/index", token=token)
        clock.advance(10)
    assert len(writes) == 1
    clock.advance(60)
    api("GET", f"{KB}/index", token=token)
    assert len(writes) == 2


@pytest.mark.parametrize("body,code", [
    ({"scopes": []}, "invalid_scope"),
    ({"scopes": ["knowledge:everything"]}, "invalid_scope"),
    ({"scopes": "knowledge:read"}, "invalid_scope"),
    ({"scopes": ["knowledge:read"], "expiresInSeconds": 59}, "invalid_expiry"),
    ({"scopes": ["knowledge:read"], "expiresInSeconds": "3600"}, "invalid_expiry"),
    ({"scopes": ["knowledge:read"], "bot": "other"}, "unknown_field"),
])
def test_token_bodies(api, body, code):
    status, reply = api("POST", f"{BOT}/tokens", body)
    assert (status, reply["error"]["code"]) == (400, code)


def test_only_an_admin_token_of_the_bot_opens_tokens_and_settings(api, services):
    rw = create_token(services, "default", ["knowledge:read", "knowledge:write"])
    other_admin = create_token(services, "other", ["knowledge:admin"])
    calls = (("GET", f"{BOT}/tokens", None), ("POST", f"{BOT}/tokens", {"scopes": ["knowledge:read"]}),
             ("GET", f"{BOT}/settings", None), ("PATCH", f"{BOT}/settings", {"floor": 0.5}))
    for method, path, body in calls:
        for token in (rw, other_admin):
            status, reply = api(method, path, body, token=token)
            assert (status, reply["error"]["code"]) == (403, "forbidden"), (method, path)
    # an admin token opens no knowledge route by itself
    assert api("GET", f"{KB}/sources")[0] == 403
    # a token of another bot cannot be revoked through this bot
    made = api("POST", "/api/bots/other/tokens", {"scopes": ["knowledge:read"]}, token=other_admin)[1]
    assert api("DELETE", f"{BOT}/tokens/{made['id']}")[0] == 404
    assert api("GET", "/api/bots/other/knowledge/index", token=made["token"])[0] == 200


def test_settings_are_read_and_changed_with_secrets_write_only(api, services):
    status, before = api("GET", f"{BOT}/settings")
    assert status == 200 and before["floor"] == 0.35 and before["upstream"] is None
    status, after = api("PATCH", f"{BOT}/settings", {
        "products": ["coinvault", "blockchain:monero"], "scopeToProducts": False, "floor": 0.5,
        "upstream": {"url": "https://kb.example.com", "bot": "shared", "token": "kb_upstream-secret"},
    })
    assert status == 200, after
    assert after["products"] == ["coinvault", "blockchain:monero"]
    assert (after["scopeToProducts"], after["floor"]) == (False, 0.5)
    assert after["upstream"] == {"url": "https://kb.example.com", "bot": "shared", "tokenSet": True}
    assert "kb_upstream-secret" not in json.dumps(after) + json.dumps(api("GET", f"{BOT}/settings")[1])
    stored = services.state.get_bot("default")
    assert stored.upstream["token"] == "kb_upstream-secret" and stored.floor == 0.5
    # a field left out keeps its value; the token stays while the address does
    api("PATCH", f"{BOT}/settings", {"upstream": {"url": "https://kb.example.com", "bot": "other"}})
    assert services.state.get_bot("default").upstream == {"url": "https://kb.example.com", "bot": "other",
                                                           "token": "kb_upstream-secret"}
    assert services.state.get_bot("default").products == ["coinvault", "blockchain:monero"]
    # ... but is never sent to another address
    status, moved = api("PATCH", f"{BOT}/settings", {"upstream": {"url": "https://elsewhere.example", "bot": "x"}})
    assert moved["upstream"]["tokenSet"] is False and "token" not in services.state.get_bot("default").upstream
    assert api("PATCH", f"{BOT}/settings", {"upstream": None})[1]["upstream"] is None


def test_a_provider_key_is_write_only_and_a_new_embedder_needs_a_reindex(api, services):
    status, body = api("PATCH", f"{BOT}/settings", {"embedder": "openai"})
    assert (status, body["error"]["code"]) == (400, "invalid_setting")  # no key, no address
    status, body = api("PATCH", f"{BOT}/settings", {
        "embedder": "hashing", "embedderOptions": {"dimensions": 64, "apiKey": "sk-secret-1"}})
    assert status == 200 and body["reindexNeeded"] is True
    assert body["embedderOptions"] == {"dimensions": 64, "apiKeySet": True}
    assert services.state.get_bot("default").embedder_options["apiKey"] == "sk-secret-1"
    # options without the key keep it; null removes it
    api("PATCH", f"{BOT}/settings", {"embedderOptions": {"dimensions": 128}})
    assert services.state.get_bot("default").embedder_options == {"dimensions": 128, "apiKey": "sk-secret-1"}
    status, body = api("PATCH", f"{BOT}/settings", {"floor": 0.4})
    assert body["reindexNeeded"] is False
    api("PATCH", f"{BOT}/settings", {"embedderOptions": {"dimensions": 128, "apiKey": None}})
    assert "apiKey" not in services.state.get_bot("default").embedder_options


@pytest.mark.parametrize("body", [
    {"floor": 1.5}, {"floor": "0.5"}, {"floor": None}, {"products": "coinvault"}, {"products": ["bogus:x"]},
    {"embedder": "gpt"}, {"upstream": {"url": "http://169.254.169.254/", "bot": "x"}},
    {"upstream": {"url": "https://kb.example.com", "token": "has space"}},
    {"embedderOptions": {"baseUrl": "file:///etc/passwd"}},
])
def test_settings_bodies(api, services, body):
    status, reply = api("PATCH", f"{BOT}/settings", body)
    assert (status, reply["error"]["code"]) == (400, "invalid_setting"), body
    assert services.state.get_bot("default") == BotSettings(bot="default")


def test_an_embedder_whose_vectors_do_not_fit_the_index_is_refused_when_it_is_set(api, services):
    """Where the index stores one vector dimension (AWS: the OpenSearch mapping), an embedder
    producing another is refused at PATCH time instead of failing every refresh after it."""
    openai = {"embedder": "openai", "embedderOptions": {"baseUrl": "https://embed.example.com/v1",
                                                        "apiKey": "sk-test"}}
    # tantivy keeps a vector space per embedder: any dimension is fine
    status, body = api("PATCH", f"{BOT}/settings", openai)
    assert status == 200 and body["embedder"] == "openai"
    api("PATCH", f"{BOT}/settings", {"embedder": None})

    services.vector_dimension = 1024
    status, body = api("PATCH", f"{BOT}/settings", openai)  # the openai default is 1,536
    assert (status, body["error"]["code"]) == (400, "invalid_setting")
    assert "1536" in body["error"]["message"] and "1024" in body["error"]["message"]
    assert services.state.get_bot("default").embedder is None  # nothing stored
    status, body = api("PATCH", f"{BOT}/settings", {"embedder": "hashing"})  # 256 by default
    assert (status, body["error"]["code"]) == (400, "invalid_setting")
    fitted = {"embedder": "openai", "embedderOptions": {**openai["embedderOptions"], "dimensions": 1024}}
    status, body = api("PATCH", f"{BOT}/settings", fitted)
    assert status == 200 and body["embedder"] == "openai"
    # settings that leave the embedder alone are not checked again
    status, body = api("PATCH", f"{BOT}/settings", {"floor": 0.4})
    assert status == 200 and body["floor"] == 0.4
