"""Adapters under contract. Each port's suite runs against every adapter listed here: the
embedded ones, and the AWS ones — DynamoDB and S3 inside moto, OpenSearch against an
in-process ``osmem-server`` (started once per session on 127.0.0.1; every test gets its own
index prefix).

A factory takes the pytest request (to pull in the backend fixture it needs) and the test's
temporary folder, and returns a fresh adapter."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from knowledge.adapters.local.folder_blobs import FolderBlobStore
from knowledge.adapters.local.sqlite_state import SqliteStateStore
from knowledge.adapters.local.tantivy_index import TantivySearchIndex
from tests.conftest import osmem_server

Factory = Callable[[pytest.FixtureRequest, Path], Any]

AWS_REGION = "us-east-1"
TABLE = "kb-state-test"
BUCKET = "kb-blobs-test"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto's in-memory AWS with fake credentials (never a real account)."""
    from moto import mock_aws

    for name in ("AWS_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", AWS_REGION)
    monkeypatch.setenv("AWS_REGION", AWS_REGION)
    with mock_aws():
        yield


@pytest.fixture(scope="session")
def osmem_search() -> Iterator[Any]:
    """One in-memory OpenSearch-compatible server for the session; skipped (not failed) only
    when the bundled binary cannot run on this machine."""
    with osmem_server() as server:
        yield server


@pytest.fixture
def search_client(osmem_search: Any) -> Any:
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[osmem_search.url], timeout=30)


@pytest.fixture
def index_prefix(search_client: Any) -> Iterator[str]:
    """A fresh index prefix per test; its indexes are deleted afterwards."""
    prefix = f"kb{uuid.uuid4().hex[:12]}"
    yield prefix
    search_client.indices.delete(index=f"{prefix}-*", ignore_unavailable=True, allow_no_indices=True)


def _dynamodb_state(request: pytest.FixtureRequest, tmp: Path) -> Any:
    import boto3

    from knowledge.adapters.aws.dynamodb_state import DynamoDbStateStore
    from knowledge.adapters.aws.dynamodb_table import create_table

    request.getfixturevalue("aws")
    client = boto3.client("dynamodb", region_name=AWS_REGION)
    create_table(client, TABLE)
    return DynamoDbStateStore(TABLE, client=client)


def _s3_blobs(request: pytest.FixtureRequest, tmp: Path) -> Any:
    import boto3

    from knowledge.adapters.aws.s3_blobs import S3BlobStore

    request.getfixturevalue("aws")
    client = boto3.client("s3", region_name=AWS_REGION)
    client.create_bucket(Bucket=BUCKET)
    return S3BlobStore(BUCKET, client=client, prefix="tenant-data")


def _opensearch_index(request: pytest.FixtureRequest, tmp: Path) -> Any:
    from knowledge.adapters.aws.opensearch_index import OpenSearchIndex

    client = request.getfixturevalue("search_client")
    return OpenSearchIndex(client, request.getfixturevalue("index_prefix"), dimension=8)


def _opensearch_http_index(request: pytest.FixtureRequest, tmp: Path) -> Any:
    """The Lambda functions' client: queries as plain HTTP (unsigned here), the rest through
    opensearch-py."""
    from knowledge.adapters.aws.opensearch_index import OpenSearchIndex
    from knowledge.adapters.aws.search_http import QueryClient

    client = request.getfixturevalue("search_client")
    queries = QueryClient(request.getfixturevalue("osmem_search").url, None, credentials=None, full=lambda: client)
    return OpenSearchIndex(queries, request.getfixturevalue("index_prefix"), dimension=8)


STATE_ADAPTERS: dict[str, Factory] = {
    "sqlite": lambda request, tmp: SqliteStateStore(tmp / "state.db"),
    "dynamodb": _dynamodb_state,
}
INDEX_ADAPTERS: dict[str, Factory] = {
    "tantivy": lambda request, tmp: TantivySearchIndex(tmp / "index"),
    "opensearch": _opensearch_index,
    "opensearch-http": _opensearch_http_index,
}
BLOB_ADAPTERS: dict[str, Factory] = {
    "folder": lambda request, tmp: FolderBlobStore(tmp / "blobs"),
    "s3": _s3_blobs,
}


@pytest.fixture(params=sorted(STATE_ADAPTERS))
def state_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield STATE_ADAPTERS[request.param](request, tmp_path)


@pytest.fixture(params=sorted(INDEX_ADAPTERS))
def search_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield INDEX_ADAPTERS[request.param](request, tmp_path)


@pytest.fixture(params=sorted(BLOB_ADAPTERS))
def blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield BLOB_ADAPTERS[request.param](request, tmp_path)
