"""Bearer tokens: each opens exactly one bot, with explicit scopes. Only hashes are stored."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from ..errors import Forbidden, InvalidInput, Unauthorized
from ..model import Token, valid_bot_id
from ..ports import Services

SCOPE_READ = "knowledge:read"
SCOPE_WRITE = "knowledge:write"
SCOPES = (SCOPE_READ, SCOPE_WRITE)
TOKEN_PREFIX = "kb_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(services: Services, bot: str, scopes: list[str]) -> str:
    if not valid_bot_id(bot):
        raise InvalidInput(f"invalid bot id {bot!r}")
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise InvalidInput(f"scopes must be taken from {', '.join(SCOPES)}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    services.state.put_token(
        Token(token_hash=hash_token(token), bot=bot, scopes=tuple(dict.fromkeys(scopes)),
              created_at=services.clock.now())
    )
    return token


def authenticate(services: Services, authorization: str | None) -> Token:
    if not authorization:
        raise Unauthorized("missing bearer token")
    scheme, _, value = authorization.partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value.startswith(TOKEN_PREFIX) or len(value) > 200:
        raise Unauthorized("malformed bearer token")
    token = services.state.get_token(hash_token(value))
    if token is None or not hmac.compare_digest(token.token_hash, hash_token(value)):
        raise Unauthorized("unknown token")
    return token


def authorize(token: Token, bot: str, scope: str) -> None:
    if token.bot != bot:
        raise Forbidden("this token is for another bot")
    if scope not in token.scopes:
        raise Forbidden(f"this token lacks the {scope} scope")
