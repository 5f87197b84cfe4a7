"""``authorizer``: API Gateway REQUEST authorizer for bot tokens.

Rejects a missing, malformed or unknown bearer token early (``Unauthorized`` -> 401) and a
token of another bot (Deny -> 403); otherwise allows this one method and passes
``{bot, botId, scopes}`` on as the authorizer context. The route code checks bot and scope
again (``dispatch``): that check is the real gate, this one keeps strangers off the functions.
Tokens are looked up by their SHA-256 only.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from knowledge.api.auth import authenticate
from knowledge.entry.observability import powertools
from knowledge.errors import Unauthorized
from knowledge.wiring import build_aws_services

logger, tracer, metrics = powertools()
#: clients created at the cold start: a token lookup needs DynamoDB only; the others would
#: be created on first use (knowledge.wiring.Lazy)
EAGER = ("dynamodb",)
SERVICES = build_aws_services(embedder=False, eager=EAGER)


def policy(principal: str, effect: str, method_arn: str, context: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "principalId": principal,
        "policyDocument": {
            "Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": method_arn}],
        },
    }
    if context:
        out["context"] = context
    return out


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items() if isinstance(v, str)}
    try:
        token = authenticate(SERVICES, headers.get("authorization"))
    except Unauthorized as exc:
        logger.info("token rejected", extra={"reason": exc.message})
        raise Exception("Unauthorized") from None  # API Gateway answers 401 to this exact message
    method_arn = str(event.get("methodArn", ""))
    path_bot = (event.get("pathParameters") or {}).get("botID")
    principal = f"bot:{token.bot}"
    if path_bot is not None and path_bot != token.bot:
        return policy(principal, "Deny", method_arn)
    return policy(principal, "Allow", method_arn,
                  {"bot": token.bot, "botId": token.bot, "scopes": " ".join(token.scopes)})
