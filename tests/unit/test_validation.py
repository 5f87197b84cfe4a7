"""Source body validation: every rule, its boundary and its stable code (pure, no I/O)."""

from __future__ import annotations

import pytest

from knowledge.api.ratelimit import TokenBucket
from knowledge.errors import InvalidInput, RateLimited
from knowledge.lifecycle.validation import SourceSpec, parse_create, parse_patch
from knowledge.settings import OutboundPolicy

INSTRUCTION = {"text": "Refunds take three days."}
WEB = {"origins": ["https://docs.example.com"], "startUrls": ["https://docs.example.com/start"]}


def body(kind="instruction", config=None, **extra):
    return {"type": kind, "name": "A source", "config": INSTRUCTION if config is None else config, **extra}


def code_of(raw):
    with pytest.raises(InvalidInput) as err:
        parse_create(raw)
    return err.value.code


# -- top level --------------------------------------------------------------------------


def test_a_minimal_body_gets_defaults():
    spec = parse_create(body())
    assert (spec.type, spec.name, spec.visibility, spec.priority, spec.refresh_every) == (
        "instruction", "A source", "agent", 0, None)


@pytest.mark.parametrize("raw,code", [
    ("not an object", "invalid_input"),
    ([], "invalid_input"),
    ({"name": "x", "config": {}}, "invalid_type"),
    ({"type": "web-page", "name": "x", "config": {}}, "invalid_type"),
    ({"type": ["article"], "name": "x", "config": {}}, "invalid_type"),
    ({"type": "instruction", "config": INSTRUCTION}, "invalid_name"),
    ({"type": "instruction", "name": "x"}, "invalid_config"),
    ({**body(), "owner": "me"}, "unknown_field"),
])
def test_shape_errors(raw, code):
    assert code_of(raw) == code


@pytest.mark.parametrize("name,ok", [
    ("x" * 120, True), ("x" * 121, False), ("", False), ("   ", False), (12, False), (None, False),
    ("tab\there", False), ("  padded  ", True), ("Ünïcödé ✓", True),
])
def test_name_is_at_most_120_characters(name, ok):
    raw = {**body(), "name": name}
    if ok:
        assert parse_create(raw).name == name.strip()
    else:
        assert code_of(raw) == "invalid_name"


@pytest.mark.parametrize("priority,ok", [
    (-100, True), (100, True), (0, True), (-101, False), (101, False), (1.5, False), ("5", False),
    (True, False), (None, False),
])
def test_priority_is_an_integer_from_minus_100_to_100(priority, ok):
    raw = body(priority=priority)
    if ok:
        assert parse_create(raw).priority == priority
    else:
        assert code_of(raw) == "invalid_priority"


def test_config_is_at_most_64_kb_serialised():
    # {"text":"..."} is 11 bytes of JSON around the text
    assert parse_create(body(config={"text": "a" * (64 * 1024 - 11)}))
    assert code_of(body(config={"text": "a" * (64 * 1024 - 10)})) == "config_too_large"
    # counted in UTF-8 bytes, not characters
    assert code_of(body(config={"text": "é" * (33 * 1024)})) == "config_too_large"


# -- visibility -------------------------------------------------------------------------


@pytest.mark.parametrize("kind,config", [
    ("instruction", INSTRUCTION),
    ("fact", {"key": "k", "value": "v"}),
    ("file", {"filename": "a.pdf", "contentType": "application/pdf"}),
])
def test_files_instructions_and_facts_are_never_public(kind, config):
    assert code_of(body(kind, config, visibility="public")) == "invalid_visibility"
    for allowed in ("agent", "operator"):
        assert parse_create(body(kind, config, visibility=allowed)).visibility == allowed


@pytest.mark.parametrize("value", ["everyone", "", None, 1, "PUBLIC"])
def test_unknown_visibility(value):
    assert code_of(body(visibility=value)) == "invalid_visibility"


def test_article_visibility_follows_its_state():
    published = {"title": "T", "body": "B", "state": "published"}
    assert parse_create(body("article", published)).visibility == "public"
    assert parse_create(body("article", {**published, "state": "internal"})).visibility == "agent"
    assert parse_create(body("article", {"body": "B"})).config["state"] == "draft"
    assert code_of(body("article", published, visibility="operator")) == "invalid_visibility"
    assert code_of(body("article", {**published, "state": "archived"})) == "invalid_config"


def test_faq_and_website_may_be_public():
    assert parse_create(body("faq", {"entries": [{"question": "q", "answer": "a"}]}, visibility="public"))
    assert parse_create(body("website", WEB, visibility="public")).visibility == "public"


# -- per-type config --------------------------------------------------------------------


@pytest.mark.parametrize("kind,config", [
    ("instruction", {}),
    ("instruction", {"text": ""}),
    ("instruction", {"text": 5}),
    ("instruction", {"text": "t", "extra": 1}),
    ("fact", {"key": "k"}),
    ("fact", {"key": "", "value": "v"}),
    ("fact", {"key": "k", "value": True}),
    ("fact", {"key": "k", "value": {"nested": 1}}),
    ("faq", {"entries": []}),
    ("faq", {"entries": [{"question": "q"}]}),
    ("faq", {"entries": [{"question": "q", "answer": " "}]}),
    ("faq", {"entries": ["q: a"]}),
    ("file", {"filename": "../etc/passwd", "contentType": "text/plain"}),
    ("file", {"filename": "", "contentType": "text/plain"}),
    ("pack", {"slug": "../evil"}),
    ("pack", {"slug": "Upper"}),
    ("article", {"body": 3}),
])
def test_bad_type_configs(kind, config):
    assert code_of(body(kind, config)) == "invalid_config"


@pytest.mark.parametrize("content_type,ok", [
    ("application/pdf", True), ("text/markdown; charset=utf-8", True), ("application/xhtml+xml", True),
    ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", True),
    ("application/msword", False), ("image/png", False), ("", False), (None, False),
])
def test_file_content_types(content_type, ok):
    raw = body("file", {"filename": "doc", "contentType": content_type})
    if ok:
        assert parse_create(raw).config["contentType"] == content_type.split(";")[0]
    else:
        assert code_of(raw) == "invalid_content_type"


# -- websites ---------------------------------------------------------------------------


def web(origins=None, urls=None, **config):
    return body("website", {"origins": origins if origins is not None else WEB["origins"],
                            "startUrls": urls if urls is not None else WEB["startUrls"], **config})


@pytest.mark.parametrize("origin,normalised", [
    ("https://docs.example.com", "https://docs.example.com"),
    ("https://Docs.Example.COM/", "https://docs.example.com"),
    ("https://docs.example.com:443", "https://docs.example.com"),
    ("https://docs.example.com:8443", "https://docs.example.com:8443"),
    ("https://bücher.example", "https://xn--bcher-kva.example"),
])
def test_origins_are_normalised(origin, normalised):
    host = normalised.removeprefix("https://")
    spec = parse_create(web([origin], [f"https://{host}/"]))
    assert spec.config["origins"] == [normalised]


@pytest.mark.parametrize("origin", [
    "http://docs.example.com",  # http is refused
    "https://docs.example.com/help",  # a path
    "https://docs.example.com?a=1",  # a query
    "https://docs.example.com/#top",  # a fragment
    "https://user:pw@docs.example.com",  # userinfo
    "https://user@docs.example.com",
    "ftp://docs.example.com",
    "docs.example.com",
    "https://",
    "https://exa mple.com",
    "https://-bad-.example.com",
    "https://docs.example.com:99999",
    "",
    7,
    "https://" + "a" * 2100 + ".com",
])
def test_bad_origins(origin):
    assert code_of(web([origin])) == "invalid_origin"


@pytest.mark.parametrize(("origin", "normalised"), [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
    ("http://LOCALHOST:8000/", "http://localhost:8000"),
    ("http://127.1.2.3:8000", "http://127.1.2.3:8000"),
    ("http://[::1]:8000", "http://[::1]:8000"),
])
def test_the_development_switch_admits_http_loopback_on_its_port_only(origin, normalised):
    raw = web([origin], [f"{normalised}/guide"])
    assert code_of(raw) == "invalid_origin"  # production: no switch
    spec = parse_create(raw, OutboundPolicy(loopback_port=8000))
    assert (spec.config["origins"], spec.config["startUrls"]) == ([normalised], [f"{normalised}/guide"])
    with pytest.raises(InvalidInput) as err:
        parse_create(raw, OutboundPolicy(loopback_port=8001))
    assert err.value.code == "invalid_origin"


@pytest.mark.parametrize("origin", [
    "http://127.0.0.1",  # port 80, not the switch's
    "http://127.0.0.1:8001",
    "http://10.0.0.1:8000",  # not loopback
    "http://docs.example.com:8000",
    "http://user@127.0.0.1:8000",
])
def test_the_development_switch_admits_nothing_else_over_http(origin):
    with pytest.raises(InvalidInput) as err:
        parse_create(web([origin], [f"{origin}/"]), OutboundPolicy(loopback_port=8000))
    assert err.value.code == "invalid_origin"
    # an http start URL inside an https origin is refused as a start URL
    with pytest.raises(InvalidInput) as err:
        parse_create(web(["https://127.0.0.1:8000"], ["http://127.0.0.1:8000/"]), OutboundPolicy(loopback_port=8000))
    assert err.value.code == "invalid_start_url"


def test_one_to_twenty_origins():
    twenty = [f"https://h{i}.example.com" for i in range(20)]
    assert len(parse_create(web(twenty, ["https://h0.example.com/"])).config["origins"]) == 20
    assert code_of(web([*twenty, "https://h20.example.com"], ["https://h0.example.com/"])) == "invalid_origin"
    assert code_of(web([])) == "invalid_origin"
    assert code_of(web("https://docs.example.com")) == "invalid_origin"


@pytest.mark.parametrize("url", [
    "https://other.example.com/start",  # outside the origins
    "https://docs.example.com:8443/start",  # another port is another origin
    "http://docs.example.com/start",
    "https://user@docs.example.com/start",
    "/start",
    "",
    None,
])
def test_start_urls_must_be_inside_the_origins(url):
    assert code_of(web(urls=[url])) == "invalid_start_url"


def test_one_to_a_hundred_start_urls():
    hundred = [f"https://docs.example.com/p{i}" for i in range(100)]
    assert len(parse_create(web(urls=hundred)).config["startUrls"]) == 100
    assert code_of(web(urls=[*hundred, "https://docs.example.com/p100"])) == "invalid_start_url"
    assert code_of(web(urls=[])) == "invalid_start_url"


def test_include_and_exclude_path_patterns():
    spec = parse_create(web(include=["/docs/*", "/docs/*", "/faq$"], exclude=["/docs/old/*"]))
    assert spec.config["include"] == ["/docs/*", "/faq$"]
    assert spec.config["exclude"] == ["/docs/old/*"]
    assert "include" not in parse_create(web()).config
    fifty = [f"/p{i}/*" for i in range(50)]
    assert len(parse_create(web(exclude=fifty)).config["exclude"]) == 50
    assert len(parse_create(web(include=["/" + "a" * 199])).config["include"]) == 1


@pytest.mark.parametrize("field", ["include", "exclude"])
@pytest.mark.parametrize("value", [
    "/docs/*",  # not a list
    [f"/p{i}" for i in range(51)],  # too many
    ["/" + "a" * 200],  # too long
    ["docs/*"],  # not a path
    ["https://docs.example.com/docs"],
    [""],
    ["/a b"],
    ["/a\n"],
    ["/a#b"],
    [7],
    [None],
])
def test_bad_path_patterns_are_invalid_config(field, value):
    assert code_of(web(**{field: value})) == "invalid_config"


@pytest.mark.parametrize("seconds,ok", [
    (60, True), (366 * 24 * 3600, True), (59, False), (366 * 24 * 3600 + 1, False), (3600.5, False),
    ("3600", False), (True, False), (-60, False),
])
def test_refresh_interval_from_a_minute_to_366_days(seconds, ok):
    raw = web(refreshEverySeconds=seconds)
    if ok:
        assert parse_create(raw).refresh_every == seconds
    else:
        assert code_of(raw) == "invalid_refresh_interval"


@pytest.mark.parametrize("kind,config", [
    ("instruction", {**INSTRUCTION, "refreshEverySeconds": 3600}),
    ("file", {"filename": "a.pdf", "contentType": "application/pdf", "refreshEverySeconds": 3600}),
])
def test_refresh_interval_is_for_websites_only(kind, config):
    assert code_of(body(kind, config)) == "invalid_refresh_interval"
    assert code_of(body("instruction", refreshEverySeconds=3600)) == "invalid_refresh_interval"


def test_refresh_interval_at_the_top_level_lands_in_the_config():
    spec = parse_create({**web(), "refreshEverySeconds": 600})
    assert (spec.refresh_every, spec.config["refreshEverySeconds"]) == (600, 600)


# -- patch ------------------------------------------------------------------------------


def test_patch_keeps_what_is_not_given_and_checks_what_is():
    current = SourceSpec("instruction", "Name", "operator", 5, dict(INSTRUCTION))
    assert parse_patch({"priority": -3}, current) == SourceSpec("instruction", "Name", "operator", -3,
                                                                dict(INSTRUCTION))
    assert parse_patch({"type": "instruction", "name": "New"}, current).name == "New"
    for raw, code in [({"type": "fact"}, "invalid_type"), ({"visibility": "public"}, "invalid_visibility"),
                      ({"config": {"text": ""}}, "invalid_config"), ({"nope": 1}, "unknown_field"),
                      ({"name": "x" * 121}, "invalid_name")]:
        with pytest.raises(InvalidInput) as err:
            parse_patch(raw, current)
        assert err.value.code == code, raw


def test_patching_an_article_state_moves_its_visibility():
    current = SourceSpec("article", "A", "public", 0, {"title": "T", "body": "B", "state": "published"})
    assert parse_patch({"config": {"title": "T", "body": "B", "state": "internal"}}, current).visibility == "agent"


# -- the retrieval-test token bucket ----------------------------------------------------


def test_token_bucket_refills_over_time_per_key():
    bucket = TokenBucket(per_minute=6)  # one every 10 s, 6 at once
    for _ in range(6):
        bucket.take("a", 100.0)
    with pytest.raises(RateLimited) as err:
        bucket.take("a", 100.0)
    assert err.value.retry_after == pytest.approx(10.0)
    bucket.take("b", 100.0)  # another key is untouched
    with pytest.raises(RateLimited) as err:
        bucket.take("a", 104.0)
    assert err.value.retry_after == pytest.approx(6.0)
    bucket.take("a", 110.0)
    bucket.take("a", 1000.0)  # a long pause refills to the burst, not beyond
    for _ in range(5):
        bucket.take("a", 1000.0)
    with pytest.raises(RateLimited):
        bucket.take("a", 1000.0)
