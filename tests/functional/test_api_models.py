"""One declaration per body: every route validates with its model, answers the stable codes,
and the OpenAPI document publishes the same schemas (through ``dispatch``, the entry point
both deployments share)."""

from __future__ import annotations

import json

import pytest

from knowledge.api.auth import create_token
from knowledge.api.http import Request
from knowledge.api.models import REQUEST_MODELS, SourceCreate
from knowledge.api.ratelimit import TokenBucket
from knowledge.api.routes import ROUTES, dispatch, openapi_document
from knowledge.model import Agent

KB = "/api/bots/default/knowledge"


class Api:
    def __init__(self, services):
        self.services = services
        self.limiter = TokenBucket(per_minute=1000)
        self.rw = create_token(services, "default", ["knowledge:read", "knowledge:write"])

    def __call__(self, method, path, body=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        req = Request(method, path, {"authorization": f"Bearer {self.rw}"}, {}, data)
        resp = dispatch(self.services, req, limiter=self.limiter)
        return resp.status, resp.body, resp.headers


@pytest.fixture
def api(services):
    return Api(services)


def code(reply):
    status, body, _ = reply
    return status, body["error"]["code"]


# -- fail-open misspellings and strict types ---------------------------------------------


@pytest.mark.parametrize("body,expected", [
    ({"q": "deposit", "Audience": "public"}, "unknown_field"),  # misspelt: was run as customer
    ({"q": "deposit", "limit": 1000}, "unknown_field"),  # no limit is declared: not silently ignored
    ({"q": "deposit", "query": "x"}, "unknown_field"),
    ({"q": 5}, "invalid_input"),
    ({"q": ["deposit"]}, "invalid_input"),
    ({}, "empty_question"),
    ({"q": " \n\t"}, "empty_question"),
    ({"q": "x" * 16_001}, "question_too_long"),
    ({"q": "deposit", "audience": "admins"}, "invalid_audience"),
    ({"q": "deposit", "audience": 1}, "invalid_audience"),
    ({"q": "deposit", "agentId": ""}, "invalid_input"),
    ({"q": "deposit", "agentId": "a/b"}, "invalid_input"),
    ([{"q": "deposit"}], "invalid_input"),
])
@pytest.mark.parametrize("route", ["retrieve", "retrieval-test"])
def test_retrieval_bodies_are_strict(api, route, body, expected):
    assert code(api("POST", f"{KB}/{route}", body)) == (400, expected)


def test_an_unknown_field_is_named_in_the_error(api):
    status, body, _ = api("POST", f"{KB}/retrieve", {"q": "deposit", "Audience": "public"})
    assert (status, body["error"]["fields"]) == (400, ["Audience"])


@pytest.mark.parametrize("path", [f"{KB}/reindex", f"{KB}/sources/s1/refresh"])
def test_reindex_and_refresh_refuse_what_their_schema_refuses(api, services, path):
    from knowledge.model import Source

    services.state.put_source(Source(id="s1", bot="default", type="instruction", name="s",
                                     config={"text": "t"}, visibility="agent"))
    assert code(api("POST", path, {"force": True, "everything": True})) == (400, "unknown_field")
    assert code(api("POST", path, {"force": "yes"})) == (400, "invalid_input")
    assert code(api("POST", path, {"force": 1})) == (400, "invalid_input")


@pytest.mark.parametrize("body,expected", [
    ({"status": "asleep"}, "invalid_status"),
    ({"status": "active", "owner": "me"}, "unknown_field"),
    ({"sourceIds": "s1"}, "invalid_input"),
    ({"sourceIds": [1]}, "invalid_input"),
    ({"sourceIds": [f"s{n}" for n in range(101)]}, "too_many_sources"),
    ({"sourceIds": ["nope"]}, "unknown_source"),
])
def test_agent_bodies(api, body, expected):
    assert code(api("PUT", "/api/bots/default/agents/a1", body)) == (400, expected)


def test_agent_source_ids_may_be_null(api, services):
    services.state.put_agent(Agent(id="a1", bot="default", source_ids=[]))
    status, body, _ = api("PUT", "/api/bots/default/agents/a1", {"status": "paused", "sourceIds": None})
    assert (status, body) == (200, {"id": "a1", "status": "paused", "sourceIds": []})


# -- hostile JSON -------------------------------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize("method,path,raw", [
    ("POST", f"{KB}/retrieve", '{"q": "deposit", "agentId": HUGE}'),
    ("POST", f"{KB}/sources", '{"type": "instruction", "name": "x", "priority": HUGE, "config": {"text": "t"}}'),
    ("POST", f"{KB}/sources", '{"type": "fact", "name": "x", "config": {"key": "k", "value": -HUGE}}'),
    ("POST", f"{KB}/citations/validate", '{"retrievalId": "r", "citations": [HUGE]}'),
    ("PUT", "/api/bots/default/agents/a1", '{"sourceIds": [[HUGE]]}'),
])
def test_a_5000_digit_integer_is_a_400_with_a_code(api, method, path, raw):
    assert code(api(method, path, raw=raw.replace("HUGE", HUGE).encode())) == (400, "number_too_large")
    assert code(api(method, path, raw=raw.replace("HUGE", "1e999").encode())) == (400, "number_too_large")


def test_integers_up_to_40_digits_reach_the_model(api):
    raw = '{"type": "instruction", "name": "x", "priority": %s, "config": {"text": "t"}}' % ("9" * 40)
    assert code(api("POST", f"{KB}/sources", raw=raw.encode())) == (400, "invalid_priority")


@pytest.mark.parametrize("method,path,raw", [
    ("POST", f"{KB}/retrieve", r'{"q": "deposit \ud800"}'),
    ("POST", f"{KB}/retrieve", r'{"q": "deposit", "agentId": "\udfff"}'),
    ("POST", f"{KB}/sources", r'{"type": "instruction", "name": "\ud800", "config": {"text": "t"}}'),
    ("PUT", "/api/bots/default/agents/a1", r'{"sourceIds": ["\ud800"]}'),
    ("POST", f"{KB}/retrieve", r'{"q": "deposit", "\ud800": 1}'),
])
def test_a_lone_surrogate_is_a_400_with_a_code_and_an_encodable_message(api, method, path, raw):
    status, body, _ = api(method, path, raw=raw.encode())
    assert (status, body["error"]["code"]) == (400, "invalid_unicode")
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # the reply itself can be sent


@pytest.mark.parametrize("raw", [b'{"q": NaN}', b'{"q": "x", "audience": Infinity}', b"\xff\xfe"])
def test_non_json_constants_and_bytes_are_refused(api, raw):
    assert code(api("POST", f"{KB}/retrieve", raw=raw)) == (400, "invalid_input")


def test_a_surrogate_in_a_path_parameter_does_not_break_the_reply(api):
    status, body, _ = api("GET", f"{KB}/sources/\udc80")  # undecodable bytes a server kept as surrogates
    assert (status, body["error"]["code"]) == (400, "invalid_unicode")
    json.dumps(body, ensure_ascii=False).encode("utf-8")


# -- HEAD ---------------------------------------------------------------------------------


def test_head_is_answered_as_get(api):
    get = api("GET", f"{KB}/sources")
    head = api("HEAD", f"{KB}/sources")
    assert head[0] == get[0] == 200 and head[1] == get[1]
    status, _, headers = api("DELETE", f"{KB}/index")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    assert api("HEAD", f"{KB}/retrieve")[0] == 405  # a POST-only path has no GET to answer


# -- the document comes from the same models ------------------------------------------------


def test_openapi_publishes_the_schemas_the_validator_uses(services):
    doc = dispatch(services, Request("GET", "/openapi.json")).body
    schemas = doc["components"]["schemas"]
    assert {m.__name__ for m in REQUEST_MODELS} <= set(schemas)
    for route in ROUTES:
        op = doc["paths"][route.template][route.method.lower()]
        if route.body is not None:
            # the table names its models; each name is a model of the validator's
            assert route.body_model is not None and route.body_model.__name__ == route.body
            assert route.body_model in REQUEST_MODELS
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            assert schema == {"$ref": f"#/components/schemas/{route.body}"}
            # every body refuses unknown fields in the document, as the route does
            target = schemas[route.body]
            members = [schemas[m["$ref"].rsplit("/", 1)[1]] for m in target.get("oneOf", [])] or [target]
            assert all(m["additionalProperties"] is False for m in members), route.template
        if route.response is not None:
            ok = op["responses"][str(route.ok)]["content"]["application/json"]["schema"]
            assert route.response_model is not None and route.response_model.__name__ == route.response
            assert ok == {"$ref": f"#/components/schemas/{route.response}"}
    # the per-type configs are published as the validator reads them, codes included
    website = schemas["WebsiteConfig"]
    assert website["additionalProperties"] is False and website["required"] == ["origins", "startUrls"]
    assert website["properties"]["origins"]["maxItems"] == 20
    assert website["properties"]["origins"]["x-error-code"] == "invalid_origin"
    assert set(schemas["SourceCreate"]["discriminator"]["mapping"]) == {
        "article", "instruction", "fact", "faq", "website", "file", "pack", "live"}
    retrieve = schemas["RetrievalBody"]
    assert retrieve["properties"]["q"]["maxLength"] == 16_000 and "limit" not in retrieve["properties"]


def test_the_published_source_schema_and_the_validator_agree(services):
    """A body the document's schema allows is accepted by the model, and one it refuses is
    refused: checked with a JSON Schema validator over bodies that probe each rule."""
    import jsonschema

    doc = openapi_document()
    resolver_doc = {"components": doc["components"], "$ref": "#/components/schemas/SourceCreate"}
    validator = jsonschema.Draft202012Validator(resolver_doc)
    bodies = [
        {"type": "instruction", "name": "n", "config": {"text": "t"}},
        {"type": "instruction", "name": " ", "config": {"text": "t"}},
        {"type": "instruction", "name": "n", "config": {"text": "t"}, "priority": 101},
        {"type": "instruction", "name": "n", "config": {"text": "t", "x": 1}},
        {"type": "fact", "name": "n", "config": {"key": "k", "value": True}},
        {"type": "fact", "name": "n", "config": {"key": "k", "value": 5}},
        {"type": "faq", "name": "n", "config": {"entries": []}},
        {"type": "pack", "name": "n", "config": {"slug": "Upper"}},
        {"type": "website", "name": "n", "config": {"origins": [], "startUrls": ["https://a.example/"]}},
        {"type": "blog", "name": "n", "config": {}},
        {"type": "instruction", "name": "n"},
        {"type": "instruction", "name": "n", "config": {"text": "t"}, "colour": "red"},
    ]
    from pydantic import ValidationError

    for body in bodies:
        schema_ok = validator.is_valid(body)
        try:
            SourceCreate.model_validate(body)
            model_ok = True
        except ValidationError:
            model_ok = False
        assert schema_ok == model_ok, body


def test_the_literal_types_agree_with_the_names_the_core_uses():
    from knowledge import lifecycle
    from knowledge.api import auth, models
    from knowledge.embed.factory import EMBEDDER_CHOICES
    from knowledge.lifecycle.validation import ARTICLE_STATES
    from knowledge.model import AUDIENCES, SOURCE_TYPES, VISIBILITIES

    schemas = openapi_document()["components"]["schemas"]
    assert set(schemas["SourcePatch"]["properties"]["type"]["enum"]) == set(SOURCE_TYPES)
    assert set(schemas["SourcePatch"]["properties"]["visibility"]["enum"]) == set(VISIBILITIES)
    assert set(schemas["RetrievalBody"]["properties"]["audience"]["anyOf"][0]["enum"]) == set(AUDIENCES)
    assert set(schemas["ArticleConfig"]["properties"]["state"]["enum"]) == set(ARTICLE_STATES)
    assert set(schemas["AgentPut"]["properties"]["status"]["enum"]) == set(lifecycle.AGENT_STATUSES)
    assert set(schemas["TokenCreate"]["properties"]["scopes"]["items"]["enum"]) == set(auth.SCOPES)
    assert models.SCOPES == auth.SCOPES
    embedders = schemas["SettingsPatch"]["properties"]["embedder"]["anyOf"][0]["enum"]
    assert set(embedders) == set(EMBEDDER_CHOICES) == set(models.EMBEDDERS)
