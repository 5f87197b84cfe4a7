"""Bearer tokens: each opens exactly one bot, with explicit scopes, until it expires or is
revoked. Only hashes are stored; the secret is shown once, when the token is created."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from ..errors import Forbidden, InvalidInput, Unauthorized
from ..model import Token, valid_bot_id
from ..ports import Services

SCOPE_READ = "knowledge:read"
SCOPE_WRITE = "knowledge:write"
#: tokens and settings of the bot (``/api/bots/{botID}/tokens``, ``.../settings``)
SCOPE_ADMIN = "knowledge:admin"
SCOPES = (SCOPE_READ, SCOPE_WRITE, SCOPE_ADMIN)
TOKEN_PREFIX = "kb_"
#: a token's last use is written at most this often (a write per request would be a write
#: per question)
TOUCH_EVERY_SECONDS = 60.0


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(services: Services, bot: str, scopes: list[str], *, expires_in: float | None = None) -> str:
    """A new token's secret (printed or returned once; only its hash is kept)."""
    return issue_token(services, bot, scopes, expires_in=expires_in)[0]


def issue_token(services: Services, bot: str, scopes: list[str], *,
                expires_in: float | None = None) -> tuple[str, Token]:
    secret, token = new_token(bot, scopes, services.clock.now(), expires_in=expires_in)
    services.state.put_token(token)
    return secret, token


def new_token(bot: str, scopes: list[str], now: float, *, expires_in: float | None = None) -> tuple[str, Token]:
    """A fresh secret and the token to store (its hash); nothing is written."""
    if not valid_bot_id(bot):
        raise InvalidInput(f"invalid bot id {bot!r}")
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown or not scopes:
        raise InvalidInput(f"scopes must be taken from {', '.join(SCOPES)}", code="invalid_scope")
    if expires_in is not None and expires_in <= 0:
        raise InvalidInput("a token must expire after its creation", code="invalid_expiry")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = Token(token_hash=hash_token(secret), bot=bot, scopes=tuple(dict.fromkeys(scopes)), created_at=now,
                  expires_at=now + expires_in if expires_in is not None else None)
    return secret, token


def authenticate(services: Services, authorization: str | None, *, record_use: bool = False) -> Token:
    """The token an ``Authorization: Bearer`` header names; ``Unauthorized`` when it is
    missing, malformed, unknown (or revoked) or expired. ``record_use`` writes its last use
    (at most once a minute); the API Gateway authorizer, which may only read, does not."""
    if not authorization:
        raise Unauthorized("missing bearer token")
    scheme, _, value = authorization.partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value.startswith(TOKEN_PREFIX) or len(value) > 200:
        raise Unauthorized("malformed bearer token")
    token = services.state.get_token(hash_token(value))
    if token is None or not hmac.compare_digest(token.token_hash, hash_token(value)):
        raise Unauthorized("unknown token")
    now = services.clock.now()
    if token.expired(now):
        raise Unauthorized("the token has expired", code="token_expired")
    if record_use and (token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY_SECONDS):
        services.state.touch_token(token.token_hash, now)
        token.last_used_at = now
    return token


def authorize(token: Token, bot: str, scope: str) -> None:
    if token.bot != bot:
        raise Forbidden("this token is for another bot")
    if scope not in token.scopes:
        raise Forbidden(f"this token lacks the {scope} scope")
