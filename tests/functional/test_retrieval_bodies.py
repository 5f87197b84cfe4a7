"""The retrieval bodies are checked without pydantic (``knowledge.api.bodies``) to exactly the
rules of their models (``models.RetrievalBody``, ``RetrievalTestBody``: what the OpenAPI
document publishes): both are fed the same valid and hostile bodies and must agree on every
outcome, the fields of a valid body or the code, message and details of the error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge.api import bodies, models
from knowledge.api.http import Request
from knowledge.api.routes import dispatch
from knowledge.errors import Code, InvalidInput
from knowledge.retrieve.service import RetrievalRequest
from knowledge.settings import MAX_QUESTION_CHARS
from knowledge.wiring import Services

FIELDS = ("q", "audience", "agentId", "rerank")


def outcome(check: Any, data: Any) -> tuple[Any, ...]:
    """What a check makes of ``data``: the fields it keeps, or its error."""
    try:
        body = check(data)
    except InvalidInput as exc:
        return ("error", exc.code, exc.message, exc.details)
    return ("ok", body.q, body.audience, body.agentId, getattr(body, "rerank", True))


def with_model(model: type[Any]) -> Any:
    return lambda data: models.parse(model, data)


PAIRS = (
    (with_model(models.RetrievalBody), bodies.parse_retrieval),
    (with_model(models.RetrievalTestBody), bodies.parse_retrieval_test),
)


def assert_same(data: Any) -> tuple[Any, ...]:
    """Both pairs agree on ``data``; returns the ``retrieve`` outcome."""
    results = []
    for model, plain in PAIRS:
        expected = outcome(model, data)
        assert outcome(plain, data) == expected, data if len(repr(data)) < 500 else repr(data)[:500]
        results.append(expected)
    return results[0]


LONG = "a" * MAX_QUESTION_CHARS
CASES: list[tuple[str, Any, str | None]] = [
    # (what, body, the code the retrieve body gets; None: valid)
    ("plain question", {"q": "how do I withdraw?"}, None),
    ("every field", {"q": "fees", "audience": "operator", "agentId": "agent-1.b_2"}, None),
    ("nulls are no value", {"q": "fees", "audience": None, "agentId": None}, None),
    ("longest question", {"q": LONG}, None),
    ("control characters are text", {"q": "\x00\x1c"}, None),
    ("file separators are text to the model", {"q": "\x1c\x1d\x1e\x1f"}, None),
    ("zero-width space is text", {"q": "\u200b"}, None),
    ("longest agent id", {"q": "x", "agentId": "A" * 64}, None),
    ("a list", [], Code.INVALID_INPUT),
    ("a string", "q", Code.INVALID_INPUT),
    ("null", None, Code.INVALID_INPUT),
    ("a number", 3, Code.INVALID_INPUT),
    ("true", True, Code.INVALID_INPUT),
    ("empty object", {}, Code.EMPTY_QUESTION),
    ("q null", {"q": None}, Code.INVALID_INPUT),
    ("q a number", {"q": 1}, Code.INVALID_INPUT),
    ("q true", {"q": True}, Code.INVALID_INPUT),
    ("q a list", {"q": ["how"]}, Code.INVALID_INPUT),
    ("q nested junk", {"q": {"a": [{"b": None}]}}, Code.INVALID_INPUT),
    ("q blank", {"q": "   \t\n"}, Code.EMPTY_QUESTION),
    ("q empty", {"q": ""}, Code.EMPTY_QUESTION),
    ("q unicode spaces", {"q": "\xa0\u2003\u3000\u2028\x85"}, Code.EMPTY_QUESTION),
    ("q one too long", {"q": LONG + "a"}, Code.QUESTION_TOO_LONG),
    ("q huge blank", {"q": " " * (4 * MAX_QUESTION_CHARS)}, Code.QUESTION_TOO_LONG),
    ("q huge", {"q": "x" * 1_000_000}, Code.QUESTION_TOO_LONG),
    ("q lone surrogate", {"q": "why \ud800"}, Code.INVALID_INPUT),
    ("q huge with a surrogate", {"q": "x" * 20_000 + "\udfff"}, Code.INVALID_INPUT),
    ("unknown field", {"q": "fees", "topK": 99}, bodies.UNKNOWN_FIELD),
    ("unknown fields before a bad q", {"topK": 0, "q": 5, "filters": {"a": 1}}, bodies.UNKNOWN_FIELD),
    ("many unknown fields", {"q": "x", **{f"field{i}": i for i in range(40)}}, bodies.UNKNOWN_FIELD),
    ("a huge unknown field", {"q": "x", "k" * 10_000: 1}, bodies.UNKNOWN_FIELD),
    ("an unknown field with a surrogate", {"q": "x", "\ud800": 1}, Code.INVALID_INPUT),
    ("rerank is retrieval-test's", {"q": "x", "rerank": False}, bodies.UNKNOWN_FIELD),
    ("audience unknown", {"q": "x", "audience": "admin"}, Code.INVALID_AUDIENCE),
    ("audience case", {"q": "x", "audience": "Customer"}, Code.INVALID_AUDIENCE),
    ("audience a number", {"q": "x", "audience": 1}, Code.INVALID_AUDIENCE),
    ("audience a list", {"q": "x", "audience": ["customer"]}, Code.INVALID_AUDIENCE),
    ("audience with a surrogate", {"q": "x", "audience": "\udc80"}, Code.INVALID_AUDIENCE),
    ("agent empty", {"q": "x", "agentId": ""}, Code.INVALID_INPUT),
    ("agent too long", {"q": "x", "agentId": "A" * 65}, Code.INVALID_INPUT),
    ("agent trailing newline", {"q": "x", "agentId": "a\n"}, Code.INVALID_INPUT),
    ("agent path", {"q": "x", "agentId": "../a"}, Code.INVALID_INPUT),
    ("agent not ascii", {"q": "x", "agentId": "Ä"}, Code.INVALID_INPUT),
    ("agent a number", {"q": "x", "agentId": 7}, Code.INVALID_INPUT),
    ("agent with a surrogate", {"q": "x", "agentId": "a\ud800"}, Code.INVALID_INPUT),
    ("the first field's error wins", {"q": " ", "audience": "x", "agentId": 5}, Code.EMPTY_QUESTION),
    ("then the audience's", {"q": "x", "audience": "x", "agentId": 5}, Code.INVALID_AUDIENCE),
]


@pytest.mark.parametrize(("what", "data", "code"), CASES, ids=[c[0] for c in CASES])
def test_each_body_gets_the_model_s_outcome(what: str, data: Any, code: str | None) -> None:
    result = assert_same(data)
    assert result[0] == ("ok" if code is None else "error"), result
    if code is not None:
        assert result[1] == code


def test_rerank_is_checked_for_retrieval_test_only() -> None:
    for value, code in ((False, None), (True, None), (None, Code.INVALID_INPUT), (1, Code.INVALID_INPUT),
                        ("true", Code.INVALID_INPUT), ([], Code.INVALID_INPUT)):
        assert_same({"q": "x", "rerank": value})
        result = outcome(bodies.parse_retrieval_test, {"q": "x", "rerank": value})
        assert result[0] == ("ok" if code is None else "error") and (code is None or result[1] == code)
    assert outcome(bodies.parse_retrieval_test, {"q": "x", "rerank": False})[-1] is False
    assert outcome(bodies.parse_retrieval_test, {"q": "x"})[-1] is True


def test_the_unknown_fields_are_named_in_order_and_cut() -> None:
    data = {"q": "x", **{f"f{i:02d}": i for i in range(30)}, "k" * 100: 1}
    code, message, details = assert_same(data)[1:]
    assert code == bodies.UNKNOWN_FIELD
    assert details == {"fields": [f"f{i:02d}" for i in range(20)]}
    assert message.startswith("unknown field(s): f00, f01, f02") and len(message) == 200


# -- generated bodies ------------------------------------------------------------------------

def texts() -> st.SearchStrategy[str]:
    """Questions and ids of every kind: words, white space of every sort, control characters,
    lone surrogates, lengths about the limit."""
    spaces = st.sampled_from([*sorted(bodies.WHITE_SPACE), "\x1c", "\x1f", "\u200b", "\ufeff", "\u180e"])
    return st.one_of(
        st.text(max_size=30),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
        st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.just("a"), max_size=4),
        st.lists(spaces, max_size=6).map("".join),
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,70}", fullmatch=True),
        st.from_regex(r"[A-Za-z0-9_.\n -]{0,5}", fullmatch=True),
        st.sampled_from(["customer", "public", "operator", "CUSTOMER", "customer ", ""]),
        st.tuples(st.sampled_from(["a", " ", "\u3000"]), st.integers(MAX_QUESTION_CHARS - 2, MAX_QUESTION_CHARS + 2),
                  st.sampled_from(["", "b", " ", "\ud800"])).map(lambda t: t[0] * t[1] + t[2]),
    )


def values() -> st.SearchStrategy[Any]:
    """A field's value: text, or any JSON junk (nested too)."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), texts())
    return st.one_of(texts(), texts(), st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                                                    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                                                    max_leaves=6))


def keys() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(FIELDS), st.sampled_from(FIELDS), st.text(max_size=8),
                     st.sampled_from(["Q", "q ", "topK", "audience\x00", "\ud800"]))


BODIES = st.one_of(
    st.dictionaries(keys(), values(), max_size=6),
    st.fixed_dictionaries({"q": values()}, optional={"audience": values(), "agentId": values(), "rerank": values()}),
    st.fixed_dictionaries({"q": texts()}, optional={
        "audience": st.sampled_from(["customer", "public", "operator", None]),
        "agentId": st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", fullmatch=True) | st.none(),
        "rerank": st.booleans()}),
    values(),
)


@settings(max_examples=1500, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(BODIES)
def test_generated_bodies_get_the_model_s_outcome(data: Any) -> None:
    assert_same(data)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=60))
def test_bodies_that_went_through_json_get_the_model_s_outcome(q: str) -> None:
    # what a client sends: the same text parsed from JSON (escaped surrogates included)
    for raw in (json.dumps({"q": q}), json.dumps({"q": q}, ensure_ascii=False).replace("\\\\", "\\")):
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        assert_same(data)


# -- where the check is used -----------------------------------------------------------------

def test_a_question_is_checked_the_same_through_the_route_and_the_use_case(services: Services) -> None:
    from knowledge.api.auth import issue_token

    secret, _ = issue_token(services, "bot1", ["knowledge:read"])
    for data in ({"q": " "}, {"q": "x", "topK": 3}, {"q": "x", "audience": "all"}, [1]):
        request = Request("POST", "/api/bots/bot1/knowledge/retrieve", {"authorization": f"Bearer {secret}"},
                          {}, json.dumps(data).encode())
        response = dispatch(services, request)
        expected = outcome(with_model(models.RetrievalBody), data)
        assert response.status == 400
        assert (response.body["error"]["code"], response.body["error"]["message"]) == expected[1:3]
        with pytest.raises(InvalidInput) as caught:
            RetrievalRequest.parse("bot1", data)
        assert (caught.value.code, caught.value.message) == expected[1:3]
    request = Request("POST", "/api/bots/bot1/knowledge/retrieval-test", {"authorization": f"Bearer {secret}"},
                      {}, json.dumps({"q": "fees", "rerank": "no"}).encode())
    assert dispatch(services, request).body["error"]["code"] == Code.INVALID_INPUT
    assert RetrievalRequest.parse("bot1", {"q": "fees", "audience": "public"}).audience == "public"


def test_answering_a_question_never_loads_pydantic(tmp_path: Path) -> None:
    """A fresh process answers a question (and refuses a bad one) through ``dispatch``
    without importing pydantic or the models."""
    probe = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from knowledge.api.auth import issue_token\n"
        "from knowledge.api.http import Request\n"
        "from knowledge.api.routes import dispatch\n"
        "from knowledge.settings import LocalSettings\n"
        "from knowledge.wiring import build_local_services\n"
        "services = build_local_services(LocalSettings(data_dir=Path(sys.argv[1])))\n"
        "secret, _ = issue_token(services, 'bot1', ['knowledge:read'])\n"
        "auth = {'authorization': 'Bearer ' + secret}\n"
        "statuses = []\n"
        "for path, body in (('retrieve', {'q': 'how do I withdraw?'}), ('retrieve', {'q': 'x', 'topK': 1}),\n"
        "                   ('retrieval-test', {'q': 'fees', 'rerank': False})):\n"
        "    request = Request('POST', '/api/bots/bot1/knowledge/' + path, auth, {}, json.dumps(body).encode())\n"
        "    statuses.append(dispatch(services, request).status)\n"
        "print(json.dumps({'statuses': statuses,\n"
        "                  'loaded': [m for m in ('pydantic', 'knowledge.api.models') if m in sys.modules]}))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "data")], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"statuses": [200, 400, 200], "loaded": []}
