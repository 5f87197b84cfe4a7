"""S3 blob store specifics: the key prefix, key normalisation shared with the folder store,
and error translation. The shared behaviour is in test_blob_store.py."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from knowledge.adapters.aws.s3_blobs import S3BlobStore
from knowledge.adapters.local.folder_blobs import FolderBlobStore
from knowledge.errors import BackendError, InvalidInput, NotFound

REGION = "us-east-1"


@pytest.fixture
def s3(aws: None):
    client = boto3.client("s3", region_name=REGION)
    client.create_bucket(Bucket="kb-blobs")
    return client


def test_prefix_is_invisible_to_callers_and_isolates_tenants(s3):
    one = S3BlobStore("kb-blobs", client=s3, prefix="one/")
    two = S3BlobStore("kb-blobs", client=s3, prefix="two")
    one.put("packs/a.ndjson.gz", b"1")
    two.put("packs/b.ndjson.gz", b"2")
    assert one.list("packs/") == ["packs/a.ndjson.gz"]
    assert two.list("") == ["packs/b.ndjson.gz"]
    assert s3.get_object(Bucket="kb-blobs", Key="one/packs/a.ndjson.gz")["Body"].read() == b"1"
    assert not one.exists("packs/b.ndjson.gz")
    with pytest.raises(NotFound):
        one.get("packs/b.ndjson.gz")
    one.delete("packs/never-there")  # deleting a missing key is not an error


def test_keys_normalise_like_the_folder_store(s3, tmp_path):
    folder = FolderBlobStore(tmp_path)
    bucket = S3BlobStore("kb-blobs", client=s3)
    for store in (folder, bucket):
        store.put("uploads//x/./file.txt", b"data")
        assert store.get("uploads/x/file.txt") == b"data"
        assert store.list("uploads/") == ["uploads/x/file.txt"]
        for bad in ("", "a/..", "/etc/passwd", "../x"):
            with pytest.raises(InvalidInput):
                store.get(bad)
        with pytest.raises(InvalidInput):
            store.list("../")
    with pytest.raises(InvalidInput):
        bucket.get(".")  # names no object (the folder store would read its own root)
    with pytest.raises(InvalidInput):
        S3BlobStore("kb-blobs", client=s3, prefix="../other")


def test_backend_errors_are_translated(s3):
    missing = S3BlobStore("no-such-bucket", client=s3)
    for call in (lambda: missing.put("a", b"x"), lambda: missing.list(""), lambda: missing.get("a")):
        with pytest.raises(BackendError) as info:
            call()
        assert isinstance(info.value.__cause__, ClientError)


def test_access_denied_is_not_a_missing_key():
    client = boto3.client("s3", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    store = S3BlobStore("kb-blobs", client=client)
    with Stubber(client) as stub:
        stub.add_client_error("get_object", service_error_code="AccessDenied", http_status_code=403)
        with pytest.raises(BackendError) as info:
            store.get("packs/a")
        assert info.value.details == {"awsCode": "AccessDenied"}
        stub.add_client_error("list_objects_v2", service_error_code="AccessDenied", http_status_code=403)
        with pytest.raises(BackendError):
            store.exists("packs/a")


def test_exists_asks_a_listing_of_the_key_itself(s3):
    # no HeadObject: without an unconditioned s3:ListBucket grant, S3 answers a HeadObject of a
    # missing key with 403, and the functions may only list the prefixes they use
    store = S3BlobStore("kb-blobs", client=s3)
    store.put("packs/wallet.ndjson.gz.bak", b"x")
    assert store.exists("packs/wallet.ndjson.gz") is False  # a longer key is not this one
    store.put("packs/wallet.ndjson.gz", b"y")
    assert store.exists("packs/wallet.ndjson.gz") is True
    with Stubber(s3) as stub:
        stub.add_response("list_objects_v2", {"KeyCount": 0, "IsTruncated": False},
                          {"Bucket": "kb-blobs", "Prefix": "uploads/b/s1", "MaxKeys": 1})
        assert store.exists("uploads/b/s1") is False
        stub.assert_no_pending_responses()


def test_a_presigned_upload_names_the_prefixed_key_and_lands_there(s3):
    import base64
    import json

    import requests

    store = S3BlobStore("kb-blobs", client=s3, prefix="tenant-a")
    form = store.presign_upload("incoming/acme/src1", content_type="text/plain", max_bytes=10, expires_in=60)
    assert form["fields"]["key"] == "tenant-a/incoming/acme/src1"
    conditions = json.loads(base64.b64decode(form["fields"]["policy"]))["conditions"]
    assert ["content-length-range", 1, 10] in conditions and {"Content-Type": "text/plain"} in conditions
    sent = requests.post(form["url"], data=form["fields"], files={"file": ("a.txt", b"hello", "text/plain")},
                         timeout=30)
    assert sent.status_code in (200, 204)
    assert store.get("incoming/acme/src1") == b"hello"
    with pytest.raises(InvalidInput):
        store.presign_upload("../x", content_type="text/plain", max_bytes=10, expires_in=60)
