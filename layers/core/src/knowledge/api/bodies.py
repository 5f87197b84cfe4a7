"""The retrieval bodies (``POST retrieve`` and ``retrieval-test``), checked without pydantic.

Every question arrives with one of these bodies, so the function that answers questions
checks them here and never loads pydantic (nor builds the models' validators) at its cold
start or its first question. ``models.RetrievalBody`` and ``models.RetrievalTestBody`` still
declare the same bodies for the OpenAPI document; this check gives exactly the outcome
``models.parse`` gives with them (the same code, message and details for every body, or the
same fields), which ``tests/functional/test_retrieval_bodies.py`` asserts over many valid and
hostile bodies so the two cannot drift.

The rules, in the order the model's validator applies them:

* the body is a JSON object whose keys are all text (a lone surrogate in a key fails the
  whole body);
* a key that is not a field is ``unknown_field``, every such key named, before any other error;
* then each field in declaration order, the first failure answered: ``q`` required, a string,
  at most ``MAX_QUESTION_CHARS`` characters with one that is not Unicode white space;
  ``audience`` one of the audiences or null; ``agentId`` an id or null; ``rerank``
  (``retrieval-test`` only) true or false.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import Code, InvalidInput
from ..model import AUDIENCES
from ..settings import MAX_QUESTION_CHARS

#: the code of a field that no body declares
UNKNOWN_FIELD = "unknown_field"
#: an agent id (``models.ID_PATTERN``), matched against the whole value
_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: Unicode's White_Space characters: what ``\s`` means to the models' validator (Python's
#: ``str.isspace`` also takes U+001C..U+001F, which the validator counts as text)
WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_AUDIENCE_LIST = ", ".join(repr(a) for a in AUDIENCES[:-1]) + f" or {AUDIENCES[-1]!r}"


def safe(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` and made encodable (a lone surrogate becomes ``\\ud800``)."""
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class RetrievalFields:
    """A checked retrieval body (the attributes of ``models.RetrievalTestBody``)."""

    q: str
    audience: str | None = None
    agentId: str | None = None
    rerank: bool = True


def _text(value: str) -> bool:
    """No lone surrogate: the string is valid Unicode text."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _invalid(message: str, code: str = Code.INVALID_INPUT, **details: Any) -> InvalidInput:
    return InvalidInput(safe(message), code=code, details=details or None)


def parse_retrieval(data: Any, *, test: bool = False) -> RetrievalFields:
    """``data`` (parsed JSON) as a ``POST retrieve`` body (``retrieval-test``'s with ``test``),
    or ``InvalidInput`` with the code and message ``models.parse`` gives."""
    if not isinstance(data, dict):
        raise _invalid("the body must be a JSON object")
    for key in data:
        if not isinstance(key, str):
            raise _invalid(f"{key} is not valid")
        if not _text(key):
            raise _invalid("the body is not valid")
    fields = ("q", "audience", "agentId", "rerank") if test else ("q", "audience", "agentId")
    unknown = [safe(key, 64) for key in data if key not in fields]
    if unknown:
        raise _invalid(f"unknown field(s): {', '.join(unknown)}", UNKNOWN_FIELD, fields=unknown[:20])

    if "q" not in data:
        raise _invalid("q is required", Code.EMPTY_QUESTION)
    q = data["q"]
    if not isinstance(q, str):
        raise _invalid("q must be a string")
    if not _text(q):
        raise _invalid("q is not valid")
    if len(q) > MAX_QUESTION_CHARS:
        raise _invalid(f"q must be at most {MAX_QUESTION_CHARS} characters", Code.QUESTION_TOO_LONG)
    if all(char in WHITE_SPACE for char in q):
        raise _invalid("q has characters that are not allowed", Code.EMPTY_QUESTION)

    audience = data.get("audience")
    if audience is not None:
        if isinstance(audience, str) and not _text(audience):
            raise _invalid("audience is not valid", Code.INVALID_AUDIENCE)
        if not isinstance(audience, str) or audience not in AUDIENCES:
            raise _invalid(f"audience must be one of {_AUDIENCE_LIST}", Code.INVALID_AUDIENCE)

    agent = data.get("agentId")
    if agent is not None:
        if not isinstance(agent, str):
            raise _invalid("agentId must be a string")
        if not _text(agent):
            raise _invalid("agentId is not valid")
        if _AGENT_ID.fullmatch(agent) is None:
            raise _invalid("agentId has characters that are not allowed")

    rerank = data.get("rerank", True)
    if test and not isinstance(rerank, bool):
        raise _invalid("rerank must be true or false")
    return RetrievalFields(q=q, audience=audience, agentId=agent, rerank=rerank if test else True)


def parse_retrieval_test(data: Any) -> RetrievalFields:
    """``data`` as a ``POST retrieval-test`` body (``rerank`` besides the question)."""
    return parse_retrieval(data, test=True)


#: the bodies ``dispatch`` checks here instead of with their model, by the route's body name
PARSERS: dict[str, Callable[[Any], RetrievalFields]] = {
    "RetrievalBody": parse_retrieval,
    "RetrievalTestBody": parse_retrieval_test,
}
