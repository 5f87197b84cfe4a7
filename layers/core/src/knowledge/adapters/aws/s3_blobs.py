"""BlobStore over an S3 bucket (AWS mode), the twin of ``FolderBlobStore``.

Keys are validated by the same rule as the folder store (no empty key, no absolute path, no
``.``/``..``/empty segment), so a key that is refused embedded is refused here too, even though
S3 itself would store it. An optional ``prefix`` places every key under one folder of a shared
bucket; callers never see it. A single ``PutObject`` is atomic, like the folder store's rename.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import BackendError, InvalidInput, NotFound

_MISSING = {"NoSuchKey", "404", "NotFound"}


def check_key(key: str) -> str:
    """The folder store's key rule, and its normalisation (``a//b`` and ``a/./b`` name the
    same file there, so the same object here). Returns the object key or raises
    ``InvalidInput``."""
    pure = PurePosixPath(key)
    if not key or pure.is_absolute() or not pure.parts or any(part in ("", ".", "..") for part in pure.parts):
        raise InvalidInput(f"invalid blob key {key!r}")
    return "/".join(pure.parts)


class S3BlobStore:
    def __init__(self, bucket: str, *, client: Any = None, prefix: str = ""):
        if client is None:
            import boto3

            client = boto3.client("s3")
        if prefix:
            prefix = check_key(prefix) + "/"
        self.bucket = bucket
        self.client = client
        self.prefix = prefix

    def _key(self, key: str) -> str:
        return self.prefix + check_key(key)

    @staticmethod
    def _error(operation: str, exc: Exception) -> BackendError:
        code = exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else ""
        return BackendError(f"blob store {operation} failed", details={"awsCode": code} if code else None)

    def put(self, key: str, data: bytes) -> None:
        name = self._key(key)
        try:
            self.client.put_object(Bucket=self.bucket, Key=name, Body=data)
        except (ClientError, BotoCoreError) as exc:
            raise self._error("put", exc) from exc

    def get(self, key: str) -> bytes:
        name = self._key(key)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=name)
            body: bytes = response["Body"].read()
            return body
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _MISSING:
                raise NotFound(f"blob {key} not found") from exc
            raise self._error("get", exc) from exc
        except BotoCoreError as exc:
            raise self._error("get", exc) from exc

    def exists(self, key: str) -> bool:
        """Whether the object is there, asked as a one-key listing of its own name rather
        than a HeadObject: for a missing key S3 answers HeadObject with 403 unless the caller
        may list the bucket, and the functions are only granted listings under the prefixes
        they use (``s3:prefix`` conditions), which a HeadObject does not carry. The exact key
        sorts first among the keys it prefixes, so one key answers."""
        name = self._key(key)
        try:
            response = self.client.list_objects_v2(Bucket=self.bucket, Prefix=name, MaxKeys=1)
        except (ClientError, BotoCoreError) as exc:
            raise self._error("exists", exc) from exc
        contents = response.get("Contents") or []
        return bool(contents) and str(contents[0].get("Key")) == name

    def delete(self, key: str) -> None:
        name = self._key(key)
        try:
            self.client.delete_object(Bucket=self.bucket, Key=name)  # idempotent: a missing key is fine
        except (ClientError, BotoCoreError) as exc:
            raise self._error("delete", exc) from exc

    def presign_upload(self, key: str, *, content_type: str, max_bytes: int, expires_in: int) -> dict[str, Any]:
        """A presigned POST for exactly this key: S3 refuses a body outside 1..``max_bytes``,
        another ``Content-Type`` or another key, and anything after ``expires_in`` seconds.
        Signed locally with the function's credentials (no call to S3)."""
        name = self._key(key)
        try:
            post: dict[str, Any] = self.client.generate_presigned_post(
                Bucket=self.bucket,
                Key=name,
                Fields={"Content-Type": content_type},
                Conditions=[{"Content-Type": content_type}, ["content-length-range", 1, max_bytes]],
                ExpiresIn=expires_in,
            )
        except (ClientError, BotoCoreError) as exc:
            raise self._error("presign", exc) from exc
        return {"url": str(post["url"]), "fields": {str(k): str(v) for k, v in post["fields"].items()}}

    def list(self, prefix: str) -> list[str]:
        """Keys starting with ``prefix`` (a plain string prefix, like the folder store's)."""
        if "/" in prefix:
            check_key(prefix.rsplit("/", 1)[0])
        out = []
        try:
            paginator = self.client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix):
                for obj in page.get("Contents", []):
                    out.append(str(obj["Key"])[len(self.prefix):])
        except (ClientError, BotoCoreError) as exc:
            raise self._error("list", exc) from exc
        return sorted(out)
