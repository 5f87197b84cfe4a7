"""A bot's secrets (an embedding provider's key, an upstream deployment's token) in AWS
Secrets Manager, so the state table holds only a reference to them.

One secret per bot and purpose, named ``<prefix>/<bot>/<purpose>`` (the functions' IAM
policies are scoped to ``<prefix>/*``). A reference is ``{"secret": name, "version": id}``:
a write makes a new version, and a reader that meets a version it has not read yet fetches it
at once, so a changed key is never served stale; otherwise values come from the cache of
Powertools Parameters for ``max_age`` seconds (one ``GetSecretValue`` per secret per warm
function and period, not one per question).

Powertools Parameters imports boto3, which no cold start loads (see
``tests/functional/test_coldstart_imports.py``): it is imported by the first read of a secret.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...errors import BackendError

#: purposes of a bot's secrets
EMBEDDER_KEY = "embedder-api-key"
UPSTREAM_TOKEN = "upstream-token"
#: seconds a read secret is served from the function's cache
SECRET_MAX_AGE = 300

_PREFIX = re.compile(r"^[A-Za-z0-9/_+=.@-]{1,200}$")


def is_reference(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("secret"), str) and isinstance(value.get("version"), str)


class SecretVault:
    def __init__(self, prefix: str, *, client: Any, max_age: int = SECRET_MAX_AGE):
        prefix = prefix.strip("/")
        if not _PREFIX.match(prefix):
            raise ValueError(f"invalid secrets prefix {prefix!r}")
        self.prefix = prefix
        self.client = client
        self.max_age = max_age
        self._provider: Any = None
        self._seen: dict[str, str] = {}  # secret name -> the version this process last read
        self._lock = threading.Lock()

    def name(self, bot: str, purpose: str) -> str:
        return f"{self.prefix}/{bot}/{purpose}"

    @staticmethod
    def _error(operation: str, exc: Exception) -> BackendError:
        code = exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else ""
        return BackendError(f"secret {operation} failed", details={"awsCode": code} if code else None)

    def _secrets(self) -> Any:
        with self._lock:
            if self._provider is None:
                from aws_lambda_powertools.utilities.parameters import SecretsProvider

                self._provider = SecretsProvider(boto3_client=self.client)
            return self._provider

    def get(self, ref: dict[str, Any]) -> str:
        """The value a reference names (cached for ``max_age`` unless its version is new here)."""
        name, version = str(ref["secret"]), str(ref["version"])
        from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

        fresh = self._seen.get(name) != version
        try:
            value = self._secrets().get(name, max_age=self.max_age, force_fetch=fresh, VersionId=version)
        except GetParameterError as exc:
            raise BackendError("secret read failed") from exc
        self._seen[name] = version
        return str(value)

    def put(self, bot: str, purpose: str, value: str, current: dict[str, Any] | None = None) -> dict[str, str]:
        """Store ``value`` as the bot's secret for ``purpose``; the reference to keep. An
        unchanged value keeps ``current`` (no new version)."""
        if current is not None and is_reference(current) and self.get(current) == value:
            return {"secret": str(current["secret"]), "version": str(current["version"])}
        name = self.name(bot, purpose)
        try:
            try:
                answer = self.client.put_secret_value(SecretId=name, SecretString=value)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                    raise
                answer = self.client.create_secret(Name=name, SecretString=value,
                                                   Description=f"kb: {purpose} of bot {bot}")
        except (ClientError, BotoCoreError) as exc:
            raise self._error("write", exc) from exc
        return {"secret": name, "version": str(answer["VersionId"])}

    def delete(self, ref: dict[str, Any]) -> None:
        """Remove a secret no setting refers to any more (at once: nothing can restore it)."""
        try:
            self.client.delete_secret(SecretId=str(ref["secret"]), ForceDeleteWithoutRecovery=True)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                raise self._error("delete", exc) from exc
        except BotoCoreError as exc:
            raise self._error("delete", exc) from exc
        self._seen.pop(str(ref["secret"]), None)
