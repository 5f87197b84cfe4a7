"""API Gateway REST API: every route of DESIGN.md §5, the MCP endpoint and the OpenAPI document.

* ``/api/bots/{botID}/knowledge/...``, ``/api/bots/{botID}/agents/{agentID}``, ``.../tokens``
  and ``.../settings`` proxy to ``admin_api``, except ``retrieve`` and ``retrieval-test`` which
  proxy to ``retrieve``;
* ``POST /mcp`` (MCP tools over HTTP) proxies to ``admin_api``;
* ``GET /openapi.json`` proxies to ``admin_api`` and is the only route without the authorizer.

The REQUEST authorizer reads the ``Authorization`` header. Its answers are not cached: a token
is checked against the bot and scope of each request, and a cached policy would be keyed on the
header alone. Errors raised by API Gateway itself use the project's error body
``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from cdk_nag import NagSuppressions
from constructs import Construct

from knowledge.errors import Code

ADMIN = "admin_api"
RETRIEVE = "retrieve"
STAGE_NAME = "v1"

BINARY_MEDIA_TYPES = (
    "application/octet-stream",
    "application/pdf",
    "application/zip",
    "application/gzip",
    "application/x-gzip",
    "multipart/form-data",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
)


@dataclass(frozen=True)
class Route:
    path: str  # below /api/bots/{botID}/
    methods: tuple[str, ...]
    target: str = ADMIN


BOT_ROUTES: tuple[Route, ...] = (
    Route("knowledge/sources", ("GET", "POST")),
    Route("knowledge/sources/{id}", ("GET", "PATCH", "DELETE")),
    *(Route(f"knowledge/sources/{{id}}/{verb}", ("POST",)) for verb in
      ("upload", "upload-url", "refresh", "cancel", "disable", "enable")),
    Route("knowledge/sources/{id}/index-status", ("GET",)),
    Route("knowledge/sources/{id}/documents", ("GET",)),
    Route("knowledge/retrieval-test", ("POST",), RETRIEVE),
    Route("knowledge/retrieve", ("POST",), RETRIEVE),
    Route("knowledge/reindex", ("POST",)),
    Route("knowledge/index", ("GET",)),
    Route("knowledge/citations/validate", ("POST",)),
    # answer time: live tables, gaps, teaching from a ticket
    Route("knowledge/live", ("GET",)),
    Route("knowledge/live/{table}", ("PUT",)),
    Route("knowledge/gaps", ("GET",)),
    Route("knowledge/gaps/recheck", ("POST",)),
    Route("knowledge/articles/from-ticket", ("POST",)),
    Route("agents", ("GET",)),
    Route("agents/{agentID}", ("GET", "PUT")),
    # administration (scope knowledge:admin): tokens and settings
    Route("tokens", ("GET", "POST")),
    Route("tokens/{tokenID}", ("DELETE",)),
    Route("settings", ("GET", "PATCH")),
)

ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "ip": "$context.identity.sourceIp",
    "method": "$context.httpMethod",
    "resource": "$context.resourcePath",
    "path": "$context.path",
    "status": "$context.status",
    "latencyMs": "$context.responseLatency",
    "integrationLatencyMs": "$context.integration.latency",
    "integrationStatus": "$context.integration.status",
    "authorizerError": "$context.authorizer.error",
    "bot": "$context.authorizer.botId",
    "bytes": "$context.responseLength",
    "xrayTraceId": "$context.xrayTraceId",
}

#: responses API Gateway produces itself; ``None`` keeps the status API Gateway chose
GATEWAY_ERRORS: tuple[tuple[apigw.ResponseType, str | None, str], ...] = (
    (apigw.ResponseType.UNAUTHORIZED, "401", Code.UNAUTHORIZED),
    (apigw.ResponseType.ACCESS_DENIED, "403", Code.FORBIDDEN),
    (apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, "404", Code.NOT_FOUND),
    (apigw.ResponseType.THROTTLED, "429", Code.RATE_LIMITED),
    (apigw.ResponseType.BAD_REQUEST_BODY, "400", Code.INVALID_INPUT),
    (apigw.ResponseType.BAD_REQUEST_PARAMETERS, "400", Code.INVALID_INPUT),
    (apigw.ResponseType.REQUEST_TOO_LARGE, "413", Code.FILE_TOO_LARGE),
    (apigw.ResponseType.DEFAULT_5_XX, None, Code.INTERNAL),
)


class KnowledgeApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        admin_api: lambda_.IFunction,
        retrieve: lambda_.IFunction,
        authorizer: lambda_.IFunction,
        rate_limit: float,
        burst_limit: int,
        log_retention: logs.RetentionDays,
        waf: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)
        self.access_log = logs.LogGroup(
            self, "AccessLog", retention=log_retention, removal_policy=RemovalPolicy.DESTROY
        )
        self.api = apigw.RestApi(
            self,
            "RestApi",
            description="kb knowledge sources and retrieval",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            binary_media_types=list(BINARY_MEDIA_TYPES),
            # API Gateway needs an account-level role to write execution logs
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=STAGE_NAME,
                throttling_rate_limit=rate_limit,
                throttling_burst_limit=burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(self.access_log),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FIELDS)),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # request bodies hold customer questions
                metrics_enabled=True,
                tracing_enabled=True,
            ),
        )
        self.authorizer = apigw.RequestAuthorizer(
            self,
            "BotTokenAuthorizer",
            handler=authorizer,
            identity_sources=[apigw.IdentitySource.header("Authorization")],
            results_cache_ttl=Duration.seconds(0),
        )
        self.validator = self.api.add_request_validator(
            # bodies are only checked where a method declares a model (none do: the handlers
            # validate); required parameters (the Authorization header) are checked here
            "Validate", validate_request_parameters=True, validate_request_body=True
        )
        integrations = {
            ADMIN: apigw.LambdaIntegration(admin_api, proxy=True, allow_test_invoke=False),
            RETRIEVE: apigw.LambdaIntegration(retrieve, proxy=True, allow_test_invoke=False),
        }
        self.methods: dict[tuple[str, str], apigw.Method] = {}

        def add(resource: apigw.IResource, method: str, target: str, full_path: str) -> None:
            self.methods[(method, full_path)] = resource.add_method(
                method,
                integrations[target],
                authorizer=self.authorizer,
                authorization_type=apigw.AuthorizationType.CUSTOM,
                request_validator=self.validator,
                request_parameters={"method.request.header.Authorization": True},
            )

        bot = self.api.root.add_resource("api").add_resource("bots").add_resource("{botID}")
        for route in BOT_ROUTES:
            resource: apigw.IResource = bot
            for part in route.path.split("/"):
                resource = resource.get_resource(part) or resource.add_resource(part)
            for method in route.methods:
                add(resource, method, route.target, f"/api/bots/{{botID}}/{route.path}")
        add(self.api.root.add_resource("mcp"), "POST", ADMIN, "/mcp")
        openapi = self.api.root.add_resource("openapi.json")
        self.methods[("GET", "/openapi.json")] = openapi.add_method(
            "GET", integrations[ADMIN], authorization_type=apigw.AuthorizationType.NONE
        )

        for response_type, status, code in GATEWAY_ERRORS:
            self.api.add_gateway_response(
                f"Error{response_type.response_type}",
                type=response_type,
                status_code=status,
                templates={"application/json": _error_template(code)},
            )
        self._nag(openapi, waf=waf)

    @property
    def url(self) -> str:
        return self.api.url

    def _nag(self, openapi: apigw.Resource, *, waf: bool) -> None:
        if not waf:
            NagSuppressions.add_resource_suppressions(
                self.api,
                [
                    {
                        "id": "AwsSolutions-APIG3",
                        "reason": "No WAF at the minimum profile (kb:waf=false): every route but "
                        "/openapi.json needs a bot token and stage throttling bounds abuse; the "
                        "production profile attaches the web ACL of infra/waf.py.",
                    }
                ],
                apply_to_children=True,
            )
        NagSuppressions.add_resource_suppressions(
            self.api,
            [
                {
                    "id": "AwsSolutions-IAM4",
                    "reason": "The account-level API Gateway logging role uses the AWS managed "
                    "AmazonAPIGatewayPushToCloudWatchLogs policy, which AWS keeps current.",
                    "applies_to": [
                        "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                        "AmazonAPIGatewayPushToCloudWatchLogs"
                    ],
                },
            ],
            apply_to_children=True,
        )
        NagSuppressions.add_resource_suppressions(
            self.api,
            [
                {
                    "id": "AwsSolutions-COG4",
                    "reason": "Callers are support agents holding per-bot API tokens, not Cognito "
                    "users; the Lambda REQUEST authorizer validates token, bot and scope.",
                }
            ],
            apply_to_children=True,
        )
        NagSuppressions.add_resource_suppressions(
            openapi,
            [
                {
                    "id": "AwsSolutions-APIG4",
                    "reason": "GET /openapi.json publishes the API description and is public on "
                    "purpose; it reads no tenant data.",
                }
            ],
            apply_to_children=True,
        )



def _error_template(code: str) -> str:
    """Gateway response body in the project's error shape (the message comes JSON-quoted)."""
    return '{"error": {"code": "' + code + '", "message": $context.error.messageString}}'
