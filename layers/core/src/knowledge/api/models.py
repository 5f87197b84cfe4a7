"""The request bodies of the API, declared once (pydantic v2) for both deployments.

Each body is a model with ``extra="forbid"`` and strict types: a JSON string is never taken
for a number, ``true`` never for ``1``, and a field nobody declared is ``unknown_field``, not
silently dropped. Every string, list and integer is bounded here. The route table names the
model of each body; ``dispatch`` validates with it and the OpenAPI document publishes its
JSON Schema, so the validator and the document cannot drift. The two retrieval bodies are
checked by ``bodies`` instead (no pydantic on the path of a question), to the same rules: a
test compares the two over many bodies.

A field names the stable error code its failures get in ``x-error-code`` (published in the
schema too): either one code, or a map from pydantic's error type to a code with ``*`` for
the rest. :func:`invalid_input` is the one place a ``ValidationError`` becomes an
``InvalidInput`` with such a code; rules that need more than a shape (an article's visibility
following its state, start URLs inside the origins...) stay in ``lifecycle.validation``.

Models build their validators on first use (``defer_build``): a function that never sees a
source body does not pay for building its validator at cold start.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from ..errors import Code, InvalidInput
from ..model import SOURCE_TYPES, VISIBILITIES
from ..settings import MAX_AGENT_SOURCES, MAX_QUESTION_CHARS
from .bodies import UNKNOWN_FIELD, safe

# -- stable codes of body errors (HTTP 400) ------------------------------------------------
INVALID_BODY = Code.INVALID_INPUT
INVALID_TYPE = "invalid_type"
INVALID_NAME = "invalid_name"
INVALID_VISIBILITY = "invalid_visibility"
INVALID_PRIORITY = "invalid_priority"
INVALID_CONFIG = "invalid_config"
CONFIG_TOO_LARGE = "config_too_large"
INVALID_ORIGIN = "invalid_origin"
INVALID_START_URL = "invalid_start_url"
INVALID_REFRESH_INTERVAL = "invalid_refresh_interval"
INVALID_CONTENT_TYPE = "invalid_content_type"
INVALID_STATUS = "invalid_status"
TOO_MANY_SOURCES = "too_many_sources"
INVALID_SCOPE = "invalid_scope"
INVALID_EXPIRY = "invalid_expiry"
INVALID_SETTING = "invalid_setting"

# -- limits (reference 003, "Source types", "Website sources") ----------------------------
MAX_NAME_CHARS = 120
MAX_CONFIG_BYTES = 64 * 1024
MIN_PRIORITY, MAX_PRIORITY = -100, 100
MAX_ORIGINS = 20
MAX_START_URLS = 100
MAX_URL_CHARS = 2048
#: website include/exclude: patterns per list, characters per pattern
MAX_PATH_PATTERNS = 50
MAX_PATTERN_CHARS = 200
MIN_REFRESH_SECONDS = 60
MAX_REFRESH_SECONDS = 366 * 24 * 3600
MAX_FACT_KEY_CHARS = 200
MAX_FILENAME_CHARS = 255
MAX_TITLE_CHARS = 500
MAX_CONTENT_TYPE_CHARS = 200
MAX_ID_CHARS = 200
MAX_CITATIONS = 100
MAX_PRODUCTS = 200
MIN_TOKEN_SECONDS, MAX_TOKEN_SECONDS = 60, 10 * 366 * 24 * 3600

# the Literal types below spell these out (a test checks they agree)
SCOPES = ("knowledge:read", "knowledge:write", "knowledge:admin")

#: an id of a bot or an agent: what ``model.valid_bot_id`` accepts (it also refuses "..")
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
#: a pack slug (``sources.packs.valid_slug``)
SLUG_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,99}$"
#: at least one character that is not white space, and no control character
TEXT_PATTERN = r"^[^\x00-\x1f]*[^\s\x00-\x1f][^\x00-\x1f]*$"
#: at least one character that is not white space (multi-line text)
NOT_BLANK = r"\S"

CODE_KEY = "x-error-code"


def coded(code: str | dict[str, str], **kwargs: Any) -> Any:
    """A ``Field`` whose failures get ``code`` (see the module docstring)."""
    extra: dict[str, Any] = {CODE_KEY: code}
    return Field(json_schema_extra=extra, **kwargs)


class Body(BaseModel):
    """A JSON request body: unknown fields refused, strict types, validators built on first use."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True, frozen=True)


# -- sources -------------------------------------------------------------------------------

Name = Annotated[str, coded(INVALID_NAME, max_length=MAX_NAME_CHARS, pattern=TEXT_PATTERN,
                            description=f"1-{MAX_NAME_CHARS} characters, not blank, no control characters")]
VisibilityField = Annotated[Literal["public", "agent", "operator"], coded(INVALID_VISIBILITY)]
Priority = Annotated[int, coded(INVALID_PRIORITY, ge=MIN_PRIORITY, le=MAX_PRIORITY)]
RefreshInterval = Annotated[int, coded(INVALID_REFRESH_INTERVAL, ge=MIN_REFRESH_SECONDS, le=MAX_REFRESH_SECONDS)]
Text = Annotated[str, Field(max_length=MAX_CONFIG_BYTES)]
NonBlankText = Annotated[str, Field(max_length=MAX_CONFIG_BYTES, pattern=NOT_BLANK)]


class Config(Body):
    """A source's ``config``: its serialised size is checked before anything else."""

    @model_validator(mode="before")
    @classmethod
    def _size(cls, data: Any) -> Any:
        if isinstance(data, dict):
            check_config_size(data)
            if "refreshEverySeconds" in data and "refreshEverySeconds" not in cls.model_fields:
                raise PydanticCustomError(INVALID_REFRESH_INTERVAL,
                                          "refreshEverySeconds applies to website sources only")
        return data


def check_config_size(config: dict[str, Any]) -> None:
    import json

    try:
        size = len(json.dumps(config, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
                   .encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError) as exc:
        raise PydanticCustomError(INVALID_CONFIG, "config is not serialisable JSON") from exc
    if size > MAX_CONFIG_BYTES:
        raise PydanticCustomError(CONFIG_TOO_LARGE, "config is {size} bytes; the limit is {limit}",
                                  {"size": size, "limit": MAX_CONFIG_BYTES})


class ArticleConfig(Config):
    body: Text
    title: Annotated[str, Field(max_length=MAX_TITLE_CHARS)] = None  # type: ignore[assignment]
    state: Literal["published", "internal", "draft"] = Field(
        "draft", description="published -> public, internal -> agent, draft -> nothing searchable")


class InstructionConfig(Config):
    text: NonBlankText


class FactConfig(Config):
    key: Annotated[str, Field(max_length=MAX_FACT_KEY_CHARS, pattern=TEXT_PATTERN)]
    value: Annotated[str, Field(max_length=MAX_CONFIG_BYTES, pattern=NOT_BLANK)] | int | float


class FaqEntry(Body):
    question: NonBlankText
    answer: NonBlankText


class FaqConfig(Config):
    entries: Annotated[list[FaqEntry], Field(min_length=1)]


Origin = Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS, description="a bare https://host[:port]")]
StartUrl = Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS, description="an https URL inside the origins")]
PathPattern = Annotated[str, coded(INVALID_CONFIG, min_length=1, max_length=MAX_PATTERN_CHARS,
                                   description="a URL path starting with /")]


class WebsiteConfig(Config):
    origins: Annotated[list[Origin], coded(INVALID_ORIGIN, min_length=1, max_length=MAX_ORIGINS)]
    startUrls: Annotated[list[StartUrl], coded(INVALID_START_URL, min_length=1, max_length=MAX_START_URLS)]
    refreshEverySeconds: RefreshInterval | None = None
    include: Annotated[list[PathPattern], coded(INVALID_CONFIG, max_length=MAX_PATH_PATTERNS)] | None = Field(
        None, description="crawl only URL paths matching one of these (robots.txt syntax: prefix, *, final $)")
    exclude: Annotated[list[PathPattern], coded(INVALID_CONFIG, max_length=MAX_PATH_PATTERNS)] | None = Field(
        None, description="never crawl URL paths matching one of these")


class FileConfig(Config):
    filename: Annotated[str, Field(max_length=MAX_FILENAME_CHARS, pattern=TEXT_PATTERN)]
    contentType: Annotated[str, coded(INVALID_CONTENT_TYPE, max_length=MAX_CONTENT_TYPE_CHARS,
                                      description="PDF, DOCX, XLSX, PPTX, text/plain, text/markdown, "
                                                  "text/html or XHTML")]


class PackConfig(Config):
    slug: Annotated[str, Field(pattern=SLUG_PATTERN, description="a pack dropped in packs/")]


#: a live table's name (``answer.live``): lower-case letters, digits, '-' or '_'
TABLE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
MAX_LIVE_TABLES = 50
TableName = Annotated[str, Field(pattern=TABLE_PATTERN, description="1-64 lower-case letters, digits, '-' or '_'")]


class LiveConfig(Config):
    """Live data: tables of rows pushed with ``PUT live/{table}`` and read at answer time,
    never indexed."""

    tables: Annotated[list[TableName], Field(max_length=MAX_LIVE_TABLES)] | None = Field(
        None, description="tables that must be present: a missing one gives no live passage at all")
    fullList: Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS, pattern=TEXT_PATTERN)] | None = Field(
        None, description="where the full list is (an https URL or a label), named when a passage shows part of it")
    endpoint: Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS)] | None = Field(
        None, description="an https URL answering {\"tables\": {name: [rows]}}, read at answer time (1 s budget, "
                          "kept at most 30 s); its tables are read besides the pushed ones")


CONFIG_MODELS: dict[str, type[Config]] = {
    "article": ArticleConfig,
    "instruction": InstructionConfig,
    "fact": FactConfig,
    "faq": FaqConfig,
    "website": WebsiteConfig,
    "file": FileConfig,
    "pack": PackConfig,
    "live": LiveConfig,
}


class _SourceFields(Body):
    name: Name
    priority: Priority = 0

    @model_validator(mode="before")
    @classmethod
    def _website_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and "refreshEverySeconds" in data and "refreshEverySeconds" not in cls.model_fields:
            raise PydanticCustomError(INVALID_REFRESH_INTERVAL, "refreshEverySeconds applies to website sources only")
        return data


#: the visibilities a type may take: files, instructions and facts are never public, an
#: article is public or agent (its state decides which; ``lifecycle.validation`` checks)
TYPE_VISIBILITIES: dict[str, tuple[str, ...]] = {
    "article": ("public", "agent"),
    "file": ("agent", "operator"),
    "instruction": ("agent", "operator"),
    "fact": ("agent", "operator"),
    "live": ("agent", "operator"),  # answer.live.LIVE_VISIBILITIES
}


def _typed(kind: str, config: type[Config]) -> type[_SourceFields]:
    from pydantic import create_model

    visibilities = TYPE_VISIBILITIES.get(kind, VISIBILITIES)
    fields: dict[str, Any] = {
        "type": (Annotated[Literal[kind], coded(INVALID_TYPE)], ...),
        "visibility": (Annotated[Literal[visibilities], coded(INVALID_VISIBILITY)],
                       Field(None, description="default: public for packs, the state's for articles, agent "
                                               "otherwise")),
        "config": (Annotated[config, coded(INVALID_CONFIG)], ...),
    }
    if kind == "website":
        fields["refreshEverySeconds"] = (RefreshInterval | None, Field(None, description="also accepted in config"))
    return create_model(f"{kind.title()}Source", __base__=_SourceFields, __doc__=f"A {kind} source.", **fields)


SOURCE_MODELS: dict[str, type[_SourceFields]] = {kind: _typed(kind, model) for kind, model in CONFIG_MODELS.items()}

_AnySource = Annotated[Union[tuple(SOURCE_MODELS.values())], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007


class SourceCreate(RootModel[_AnySource]):  # type: ignore[valid-type]
    """``POST sources``: ``type`` decides the shape of ``config``."""

    model_config = ConfigDict(strict=True, defer_build=True, frozen=True)


_ANY_CONFIG_SCHEMA = {"anyOf": [{"$ref": f"#/components/schemas/{m.__name__}"} for m in CONFIG_MODELS.values()],
                      "description": "the config of the source's type; given, it replaces the whole config"}


class SourcePatch(Body):
    """``PATCH sources/{id}``: any field; a ``config`` given is checked against the source's type."""

    # fields left out keep their value (``model_fields_set`` tells which were given); null is no value
    type: Annotated[Literal["pack", "article", "website", "file", "instruction", "fact", "faq", "live"],
                    coded(INVALID_TYPE, description="must be the source's type")] = None  # type: ignore[assignment]
    name: Name = None  # type: ignore[assignment]
    visibility: VisibilityField = None  # type: ignore[assignment]
    priority: Priority = None  # type: ignore[assignment]
    config: Annotated[dict[str, Any], coded(INVALID_CONFIG), WithJsonSchema(_ANY_CONFIG_SCHEMA)] = None  # type: ignore[assignment]
    refreshEverySeconds: RefreshInterval | None = None


class Refresh(Body):
    force: bool = Field(False, description="rebuild even when the checksum is unchanged")


class Reindex(Body):
    force: bool = False


# -- retrieval ------------------------------------------------------------------------------

Question = Annotated[str, coded(
    {"string_too_long": Code.QUESTION_TOO_LONG, "string_pattern_mismatch": Code.EMPTY_QUESTION,
     "missing": Code.EMPTY_QUESTION, "*": Code.INVALID_INPUT},
    max_length=MAX_QUESTION_CHARS, pattern=NOT_BLANK)]
AudienceField = Annotated[Literal["customer", "public", "operator"], coded(Code.INVALID_AUDIENCE)]
AgentId = Annotated[str, Field(pattern=ID_PATTERN)]


class RetrievalBody(Body):
    """``POST retrieve``."""

    q: Question
    audience: AudienceField | None = Field(None, description="customer when left out")
    agentId: AgentId | None = None


class RetrievalTestBody(RetrievalBody):
    """``POST retrieval-test``: the same question; ``rerank: false`` skips the bot's reranker."""

    rerank: bool = True


# -- citations, agents -------------------------------------------------------------------------

Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


class Citation(Body):
    sourceId: Id
    documentId: Id
    fragmentId: Id


class CitationCheck(Body):
    retrievalId: Id
    citations: Annotated[list[Citation], Field(max_length=MAX_CITATIONS)]


class AgentPut(Body):
    status: Annotated[Literal["active", "paused"], coded(INVALID_STATUS)] = "active"
    sourceIds: Annotated[list[Id], coded({"too_long": TOO_MANY_SOURCES, "*": Code.INVALID_INPUT},
                                         max_length=MAX_AGENT_SOURCES)] | None = None


# -- answer time: live tables, gaps, tickets ------------------------------------------------------

#: rows per live table (``answer.live.MAX_ROWS_PER_TABLE``; each row is checked there)
MAX_LIVE_ROWS = 500
MAX_TICKET_MESSAGES = 200
MAX_TICKET_MESSAGE_CHARS = 16_000
INVALID_LIVE_TABLE = "invalid_live_table"
INVALID_TICKET = "invalid_ticket"

LiveRowBody = Annotated[dict[str, Any], WithJsonSchema({
    "type": "object", "additionalProperties": False, "required": ["area", "name"],
    "description": "area, name, code (2-6 upper-case letters), network, fixedFee, percentageFee, minAmount, "
                   "maxAmount, processingTime (quoted verbatim), enabled; any other field is unknown_field",
    "properties": {
        "area": {"type": "string", "minLength": 1, "maxLength": 60},
        "name": {"type": "string", "minLength": 1, "maxLength": 120},
        "code": {"type": ["string", "null"], "pattern": "^[A-Z]{2,6}$"},
        "network": {"type": ["string", "null"], "maxLength": 60},
        **{k: {"anyOf": [{"type": "number"}, {"type": "string", "minLength": 1, "maxLength": 60}, {"type": "null"}]}
           for k in ("fixedFee", "percentageFee", "minAmount", "maxAmount")},
        "processingTime": {"type": ["string", "null"], "maxLength": 200},
        "enabled": {"type": "boolean"},
    }})]


class LiveTablePut(Body):
    """``PUT live/{table}``: the whole table, replaced at once (the next question reads it)."""

    rows: Annotated[list[LiveRowBody], coded(INVALID_LIVE_TABLE, max_length=MAX_LIVE_ROWS)]


class GapRecheck(Body):
    """``POST gaps/recheck``: the clusters of one audience (all when left out)."""

    audience: AudienceField | None = None


class TicketMessage(Body):
    role: Annotated[Literal["customer", "agent"], coded(INVALID_TICKET)]
    text: Annotated[str, coded(INVALID_TICKET, max_length=MAX_TICKET_MESSAGE_CHARS)]


class TicketArticle(Body):
    """``POST articles/from-ticket``: a resolved conversation; redacted before anything reads it."""

    messages: Annotated[list[TicketMessage], coded(INVALID_TICKET, min_length=1, max_length=MAX_TICKET_MESSAGES)]
    title: Annotated[str, coded(INVALID_TICKET, max_length=MAX_NAME_CHARS, pattern=TEXT_PATTERN)]


# -- administration ------------------------------------------------------------------------------

ScopeField = Literal["knowledge:read", "knowledge:write", "knowledge:admin"]


class TokenCreate(Body):
    scopes: Annotated[list[ScopeField], coded(INVALID_SCOPE, min_length=1, max_length=len(SCOPES))]
    expiresInSeconds: Annotated[int, coded(INVALID_EXPIRY, ge=MIN_TOKEN_SECONDS, le=MAX_TOKEN_SECONDS)] | None = (
        Field(None, description="the token stops working this many seconds after its creation (none: never)"))


Secret = Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[\x21-\x7e]+$")]
HttpsUrl = Annotated[str, Field(max_length=MAX_URL_CHARS, pattern=r"^https://[^\s/?#@]+(/[^\s]*)?$")]
EMBEDDERS = ("none", "hashing", "local", "bedrock", "openai")


class EmbedderOptions(Body):
    """Replaces the stored options; ``apiKey`` left out keeps the stored key, null removes it."""

    baseUrl: HttpsUrl = None  # type: ignore[assignment]
    model: Annotated[str, Field(min_length=1, max_length=200)] = None  # type: ignore[assignment]
    modelId: Annotated[str, Field(min_length=1, max_length=200)] = None  # type: ignore[assignment]
    dimensions: Annotated[int, Field(ge=8, le=8192)] = None  # type: ignore[assignment]
    apiKey: Secret | None = Field(None, description="write-only: never returned")


class Upstream(Body):
    """``token`` left out keeps the stored one while ``url`` stays the same."""

    url: HttpsUrl
    bot: AgentId = "default"
    token: Secret = Field(None, description="write-only: never returned")  # type: ignore[assignment]


#: terms of one topic list (``answer.topics``: words or phrases, a trailing ``*`` any ending)
MAX_TOPIC_TERMS = 500
TopicTerm = Annotated[str, Field(min_length=1, max_length=80, pattern=TEXT_PATTERN)]
TermList = Annotated[list[TopicTerm], coded(INVALID_SETTING, max_length=MAX_TOPIC_TERMS)]


class TopicTerms(Body):
    """One topic's terms: ``strong`` settle the topic alone, ``weak`` count only beside a money
    movement, ``evidence`` is what an operator-authored excerpt must say to settle the gate.
    These replace the defaults; the ``extra*`` lists add to them."""

    strong: TermList = None  # type: ignore[assignment]
    weak: TermList = None  # type: ignore[assignment]
    evidence: TermList = None  # type: ignore[assignment]
    extraStrong: TermList = None  # type: ignore[assignment]
    extraWeak: TermList = None  # type: ignore[assignment]
    extraEvidence: TermList = None  # type: ignore[assignment]


class TopicOverrides(Body):
    fees: Annotated[TopicTerms, coded(INVALID_SETTING)] = None  # type: ignore[assignment]
    limits: Annotated[TopicTerms, coded(INVALID_SETTING)] = None  # type: ignore[assignment]
    processing_time: Annotated[TopicTerms, coded(INVALID_SETTING)] = None  # type: ignore[assignment]


class AnswerSettings(Body):
    """Answer time; replaces the stored answer settings (a field left out is its default).
    ``context``: the money-movement words weak terms need (replaces the defaults;
    ``extraContext`` adds)."""

    gate: Annotated[bool, coded(INVALID_SETTING)] = Field(  # type: ignore[assignment]
        None, description="the topic gate (on by default)")
    topics: Annotated[TopicOverrides, coded(INVALID_SETTING)] = Field(  # type: ignore[assignment]
        None, description="the topic classifier's terms, per topic")
    context: TermList = None  # type: ignore[assignment]
    extraContext: TermList = None  # type: ignore[assignment]
    gapRetentionDays: Annotated[int, coded(INVALID_SETTING, ge=1, le=365)] = Field(  # type: ignore[assignment]
        None, description="how long gaps are kept (1-365 days, 90 by default)")


class SettingsPatch(Body):
    """``PATCH settings``: the fields given replace the stored ones."""

    products: Annotated[list[Annotated[str, Field(min_length=1, max_length=200, pattern=TEXT_PATTERN)]],
                        coded(INVALID_SETTING, max_length=MAX_PRODUCTS)] = None  # type: ignore[assignment]
    scopeToProducts: Annotated[bool, coded(INVALID_SETTING)] = None  # type: ignore[assignment]
    floor: Annotated[float, coded(INVALID_SETTING, ge=0.0, le=1.0)] = None  # type: ignore[assignment]
    topK: Annotated[int, coded(INVALID_SETTING, ge=1, le=12)] = Field(  # type: ignore[assignment]
        None, description="excerpts per answer (1-12)")
    rerank: Annotated[bool, coded(INVALID_SETTING)] = Field(  # type: ignore[assignment]
        None, description="reorder the first excerpts with the deployment's reranker, when it has one")
    embedder: Annotated[Literal["none", "hashing", "local", "bedrock", "openai"], coded(INVALID_SETTING)] | None = (
        Field(None, description="null: the deployment's default"))
    embedderOptions: Annotated[EmbedderOptions, coded(INVALID_SETTING)] = None  # type: ignore[assignment]
    upstream: Annotated[Upstream, coded(INVALID_SETTING)] | None = Field(
        None, description="another deployment of kb to fuse in; null removes it")
    answer: Annotated[AnswerSettings, coded(INVALID_SETTING)] | None = Field(
        None, description="answer time: the topic gate, topic terms, gap retention; null restores the defaults")


#: every request body model, for the OpenAPI document
REQUEST_MODELS: tuple[type[BaseModel], ...] = (
    SourceCreate, SourcePatch, *CONFIG_MODELS.values(), Refresh, Reindex, RetrievalBody, RetrievalTestBody,
    CitationCheck, AgentPut, TokenCreate, SettingsPatch, LiveTablePut, GapRecheck, TicketArticle,
)


# -- errors ----------------------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any) -> M:
    """``data`` (parsed JSON) as ``model``, or ``InvalidInput`` with the field's stable code."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_input(exc, model) from None


def invalid_input(exc: ValidationError, model: type[BaseModel], *, prefix: tuple[str, ...] = (),
                  default: str = INVALID_BODY) -> InvalidInput:
    errors = exc.errors(include_input=False, include_url=False)
    # a misspelt field is reported first: it is usually why the rest failed
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    top_unknown = [e for e in unknown if len(_names(model, e["loc"], default)[1]) == 1]
    if top_unknown and not prefix:
        fields = [safe(str(_names(model, e["loc"], default)[1][-1]), 64) for e in top_unknown]
        return InvalidInput(safe(f"unknown field(s): {', '.join(fields)}"), code=UNKNOWN_FIELD,
                            details={"fields": fields[:20]})
    error = errors[0]
    kind = error["type"]
    code, path = _names(model, error["loc"], default)
    where = ".".join(str(p) for p in (*prefix, *path)) or "the body"
    if kind in _CUSTOM:
        return InvalidInput(safe(error["msg"]), code=kind)
    if kind in ("union_tag_not_found", "union_tag_invalid"):
        return InvalidInput(f"type must be one of {', '.join(SOURCE_TYPES)}", code=INVALID_TYPE)
    code = _code_for(code, kind)
    if not path and not prefix and kind in ("model_type", "model_attributes_type", "dict_type"):
        return InvalidInput("the body must be a JSON object", code=INVALID_BODY)
    if kind == "missing":
        message = f"{where} is required"
    elif kind == "extra_forbidden":
        message = f"unknown field {where}"
    else:
        message = describe(kind, error.get("ctx") or {}, where)
    return InvalidInput(safe(message), code=code)


_KINDS = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer", "bool_type": "true or false",
    "float_type": "a number", "list_type": "a list", "dict_type": "an object", "model_type": "an object",
    "model_attributes_type": "an object",
}


def describe(kind: str, ctx: dict[str, Any], where: str) -> str:
    """The project's own sentence for a validation failure (never the validator's prose)."""
    if kind == "literal_error":
        return f"{where} must be one of {ctx.get('expected', 'the documented values')}"
    if kind in _KINDS:
        return f"{where} must be {_KINDS[kind]}"
    if kind == "string_too_long":
        return f"{where} must be at most {ctx.get('max_length')} characters"
    if kind == "string_too_short":
        return f"{where} must be at least {ctx.get('min_length')} characters"
    if kind == "too_long":
        return f"{where} must have at most {ctx.get('max_length')} items"
    if kind == "too_short":
        return f"{where} must have at least {ctx.get('min_length')} items"
    bounds = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}
    if kind in bounds:
        limit = next(iter(ctx.values()), "")
        return f"{where} must be {bounds[kind]} {limit}"
    if kind == "string_pattern_mismatch":
        return f"{where} has characters that are not allowed"
    return f"{where} is not valid"


_CUSTOM = frozenset({CONFIG_TOO_LARGE, INVALID_CONFIG, INVALID_REFRESH_INTERVAL})


def _code_for(code: str | dict[str, str], kind: str) -> str:
    if isinstance(code, dict):
        return code.get(kind, code.get("*", INVALID_BODY))
    return code


def _names(model: Any, loc: tuple[int | str, ...], default: str) -> tuple[str | dict[str, str], list[str | int]]:
    """The code declared nearest to the failing value along ``loc``, and the field path
    (union tags left out)."""
    code: str | dict[str, str] = default
    path: list[str | int] = []
    ann: Any = model
    for part in loc:
        ann = _unwrap(ann)
        if isinstance(ann, type) and issubclass(ann, RootModel):
            ann = _unwrap(ann.model_fields["root"].annotation)
        members = [m for m in _union_members(ann) if isinstance(m, type) and issubclass(m, BaseModel)]
        if members and isinstance(part, str):
            tagged = [m for m in members if "type" in m.model_fields
                      and part in typing.get_args(_unwrap(m.model_fields["type"].annotation))]
            if tagged:  # a discriminated union: the tag is not a field
                ann = tagged[0]
                continue
            ann = members[0]
        if isinstance(part, int):
            args = typing.get_args(ann)
            ann = args[0] if args else None
            path.append(part)
            continue
        path.append(part)
        if isinstance(ann, type) and issubclass(ann, BaseModel) and part in ann.model_fields:
            field = ann.model_fields[part]
            extra = field.json_schema_extra
            if isinstance(extra, dict) and CODE_KEY in extra:
                code = extra[CODE_KEY]  # type: ignore[assignment]
            else:
                code = _annotated_code(field.annotation) or code
            ann = field.annotation
        else:
            ann = None
    return code, path


def _annotated_code(ann: Any) -> str | dict[str, str] | None:
    """The code of an ``Annotated[..., coded(...)]`` inside ``X | None`` (pydantic keeps the
    field's own ``json_schema_extra`` only when the annotation is not a union)."""
    for member in (ann, *typing.get_args(ann)):
        if typing.get_origin(member) is Annotated:
            for meta in typing.get_args(member)[1:]:
                extra = getattr(meta, "json_schema_extra", None)
                if isinstance(extra, dict) and CODE_KEY in extra:
                    return extra[CODE_KEY]
    return None


def _unwrap(ann: Any) -> Any:
    """``X | None`` -> X; ``Annotated[X, ...]`` -> X."""
    while True:
        origin = typing.get_origin(ann)
        if origin is Annotated:
            ann = typing.get_args(ann)[0]
            continue
        if origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(args) == 1:
                ann = args[0]
                continue
        return ann


def _union_members(ann: Any) -> tuple[Any, ...]:
    if typing.get_origin(ann) in (Union, types.UnionType):
        return tuple(_unwrap(a) for a in typing.get_args(ann))
    return ()
