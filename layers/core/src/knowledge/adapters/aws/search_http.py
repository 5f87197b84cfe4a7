"""The read path of the OpenSearch index as plain signed HTTP.

Every question searches, so the client its searches go through is part of every cold start
of the answering function. opensearch-py with requests and requests-aws4auth costs about as
much to import as botocore itself; what a query needs — sign a JSON request with SigV4, send
it, read the JSON answer — botocore already brings: ``SigV4Auth`` and ``AWSRequest`` sign,
its ``URLLib3Session`` (urllib3, certificate bundle, pooling, timeouts) sends.

:class:`QueryClient` answers the calls ``OpenSearchIndex`` reads with (``search``, ``mget``,
``count``, ``indices.analyze``) itself, with the request bodies the adapter builds; every
other call (index management, ``_bulk`` writes, deletes by query, the security plugin) goes
to the full opensearch-py client, created by the first of them (``full``, a factory).

Errors keep the shape the adapter reads from opensearch-py's: :class:`SearchNotFound` for a
404 (a partition never written), :class:`SearchBadRequest` for a 400 (``error`` is the
server's error type), :class:`SearchUnreachable` when no answer came (``status_code`` is
``"N/A"``), :class:`SearchHttpError` for any other status; the adapter turns them into the
same coded errors (``BackendError``) as the client's.

A traced function (X-Ray loaded, as the Powertools Tracer does in Lambda) gets one remote
subsegment per request, as the patched requests library gave the client's calls.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

#: attempts after the first when no answer came (a connection error or a timeout), like the
#: opensearch-py client's ``max_retries=2, retry_on_timeout=True``; searches change nothing
RETRIES = 2


class SearchHttpError(Exception):
    """An error answer (or none) to a search request."""

    def __init__(self, status_code: int | str, error: str, info: Any = None):
        super().__init__(status_code, error)
        self.status_code = status_code
        self.error = error
        self.info = info

    def __str__(self) -> str:
        return f"search request failed ({self.status_code}): {self.error}"


class SearchNotFound(SearchHttpError):
    """404: the index or alias does not exist (yet)."""


class SearchBadRequest(SearchHttpError):
    """400: the server refused the request (``error`` is its error type)."""


class SearchUnreachable(SearchHttpError):
    """No answer: the connection failed or timed out."""


def _error_of(status: int, payload: Any) -> SearchHttpError:
    error = payload.get("error") if isinstance(payload, dict) else None
    kind = error.get("type") if isinstance(error, dict) else error
    kind = str(kind) if kind else str(status)
    if status == 404:
        return SearchNotFound(status, kind, payload)
    if status == 400:
        return SearchBadRequest(status, kind, payload)
    return SearchHttpError(status, kind, payload)


@contextlib.contextmanager
def _traced(name: str) -> Iterator[None]:
    core = sys.modules.get("aws_xray_sdk.core")  # loaded by the Powertools Tracer, never here
    if core is None:
        yield
        return
    with core.xray_recorder.in_subsegment(name, namespace="remote"):
        yield


class _Indices:
    """``client.indices``: ``analyze`` over HTTP, the rest from the full client."""

    def __init__(self, owner: QueryClient):
        self._owner = owner

    def analyze(self, body: Any = None, index: str | None = None, **params: Any) -> Any:
        path = f"/{quote(index, safe='')}/_analyze" if index else "/_analyze"
        return self._owner.request("POST", path, body, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.full.indices, name)


class QueryClient:
    """Searches of an OpenSearch domain signed with SigV4 (service ``es``), everything else
    through the full client ``full()`` builds on first use.

    ``credentials`` is a botocore credentials object (refreshable under an assumed role:
    frozen anew for each request, so the client lives as long as the environment);
    ``None`` sends unsigned requests (a local test server only). ``endpoint`` is the
    domain's URL; ``http://`` is refused unless unsigned."""

    def __init__(self, endpoint: str, region: str | None, *, credentials: Any, full: Callable[[], Any],
                 service: str = "es", timeout: float = 10.0, retries: int = RETRIES):
        from botocore.httpsession import URLLib3Session

        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        if not parts.hostname or parts.scheme not in ("https", "http") or (
                parts.scheme == "http" and credentials is not None):
            raise ValueError("the search endpoint must be an https URL or a host name")
        default = 443 if parts.scheme == "https" else 80
        self.base = f"{parts.scheme}://{parts.hostname}:{parts.port or default}"
        self.region = region
        self.service = service
        self.credentials = credentials
        self.retries = retries
        self._http = URLLib3Session(timeout=timeout, max_pool_connections=10)  # type: ignore[arg-type]
        self._full_factory = full
        self._full: Any = None
        self._lock = threading.Lock()
        self.indices = _Indices(self)

    @property
    def full(self) -> Any:
        """The opensearch-py client, for everything but queries (created once, on first use)."""
        if self._full is None:
            with self._lock:
                if self._full is None:
                    self._full = self._full_factory()
        return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.full, name)

    # -- the read path ---------------------------------------------------------------------

    def search(self, index: str, body: Any = None, routing: str | None = None, **params: Any) -> Any:
        return self.request("POST", f"/{quote(index, safe=',')}/_search", body, {"routing": routing, **params})

    def count(self, index: str, body: Any = None, routing: str | None = None, **params: Any) -> Any:
        return self.request("POST", f"/{quote(index, safe=',')}/_count", body, {"routing": routing, **params})

    def mget(self, body: Any, index: str | None = None, routing: str | None = None,
             _source_excludes: Sequence[str] | None = None, **params: Any) -> Any:
        path = f"/{quote(index, safe='')}/_mget" if index else "/_mget"
        if _source_excludes:
            params["_source_excludes"] = ",".join(_source_excludes)
        return self.request("POST", path, body, {"routing": routing, **params})

    def request(self, method: str, path: str, body: Any, params: dict[str, Any]) -> Any:
        """Send one JSON request and return its decoded JSON answer (or raise a
        :class:`SearchHttpError`)."""
        from botocore.awsrequest import AWSRequest
        from botocore.exceptions import ConnectionError as BotocoreConnectionError
        from botocore.exceptions import HTTPClientError

        query = urlencode({k: v for k, v in params.items() if v is not None})
        url = f"{self.base}{path}" + (f"?{query}" if query else "")
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else b""
        operation = path.rsplit("/", 1)[-1] or "request"
        for attempt in range(self.retries + 1):
            request = AWSRequest(method=method, url=url, data=data,
                                 headers={"Content-Type": "application/json"})
            self._sign(request)
            try:
                with _traced(f"opensearch {operation}"):
                    response = self._http.send(request.prepare())
            except (BotocoreConnectionError, HTTPClientError) as exc:  # connection failed, timed out: no answer
                if attempt == self.retries:
                    raise SearchUnreachable("N/A", type(exc).__name__) from exc
                continue
            try:
                payload = json.loads(response.content) if response.content else {}
            except ValueError:
                payload = {"error": response.content[:200].decode("utf-8", "replace")}
            if response.status_code >= 400:
                raise _error_of(response.status_code, payload)
            return payload
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _sign(self, request: Any) -> None:
        if self.credentials is None:
            return
        from botocore.auth import SigV4Auth

        request.headers["X-Amz-Content-SHA256"] = _sha256(request.body or b"")
        SigV4Auth(self.credentials.get_frozen_credentials(), self.service, self.region or "").add_auth(request)


def _sha256(data: bytes) -> str:
    from hashlib import sha256

    return sha256(data).hexdigest()

