"""The operator console on AWS, in a stack of its own beside ``KnowledgeStack`` (which keeps
its one bucket and no custom-resource function): the built page (``console/dist``) in a private S3 bucket,
served by CloudFront through Origin Access Control, with ``/api/*`` and ``/openapi.json``
forwarded to the REST API stage so the page and the API share one origin (the page's
Content-Security-Policy stays ``connect-src 'self'`` and no CORS is opened). The same
security headers as ``kb serve`` are set by a response-headers policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, Duration, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from cdk_nag import NagSuppressions
from constructs import Construct

from knowledge.embedded.console import CONTENT_SECURITY_POLICY

#: the built console (``make console``); ``-c kb:consoleDir=PATH`` names another
DIST_CONTEXT = "kb:consoleDir"
DEFAULT_DIST = Path(__file__).resolve().parents[1] / "console" / "dist"

#: paths CloudFront forwards to API Gateway (everything else is the console's files)
API_PATHS = ("/api/*", "/openapi.json")


class KnowledgeConsole(Construct):
    """``dist``: the built console folder; when it is absent (``make console`` not run) the
    bucket and distribution are made empty and a later deployment fills them."""

    def __init__(self, scope: Construct, construct_id: str, *, api: apigw.RestApi, dist: Path | None = None) -> None:
        super().__init__(scope, construct_id)
        if dist is None:
            given = self.node.try_get_context(DIST_CONTEXT)
            dist = Path(given) if given else DEFAULT_DIST
        self.bucket = s3.Bucket(
            self,
            "Files",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=False,
            removal_policy=RemovalPolicy.DESTROY,
            auto_delete_objects=True,
        )
        headers = cloudfront.ResponseHeadersPolicy(
            self,
            "Headers",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=CONTENT_SECURITY_POLICY, override=True),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365), include_subdomains=True, override=True),
            ),
        )
        # the bearer header reaches API Gateway only if it is part of the cache key; answers
        # are never kept (TTL 0 unless the API says otherwise, and it sends no-store)
        api_cache = cloudfront.CachePolicy(
            self,
            "ApiCache",
            default_ttl=Duration.seconds(0),
            min_ttl=Duration.seconds(0),
            max_ttl=Duration.seconds(1),
            header_behavior=cloudfront.CacheHeaderBehavior.allow_list("Authorization"),
            query_string_behavior=cloudfront.CacheQueryStringBehavior.all(),
        )
        api_behavior = cloudfront.BehaviorOptions(
            origin=origins.RestApiOrigin(api),
            allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
            viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
            cache_policy=api_cache,
            origin_request_policy=cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
            response_headers_policy=headers,
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment="kb operator console",
            default_root_object="index.html",
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(self.bucket),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=headers,
                compress=True,
            ),
            additional_behaviors={path: api_behavior for path in API_PATHS},
        )
        if dist is not None and (dist / "index.html").is_file():
            s3deploy.BucketDeployment(
                self,
                "Deploy",
                sources=[s3deploy.Source.asset(str(dist))],
                destination_bucket=self.bucket,
                distribution=self.distribution,
                distribution_paths=["/index.html"],
                prune=True,
                memory_limit=256,
            )
        self._nag()

    @property
    def url(self) -> str:
        return f"https://{self.distribution.distribution_domain_name}/"

    def _nag(self) -> None:
        NagSuppressions.add_resource_suppressions(
            self.bucket,
            [{"id": "AwsSolutions-S1",
              "reason": "The console bucket holds only the public build of the page, read by CloudFront "
                        "alone; CloudFront's own logs would show every read"}],
        )
        NagSuppressions.add_resource_suppressions(
            self.distribution,
            [
                {"id": "AwsSolutions-CFR1", "reason": "Operators sign in from anywhere; every API call is checked "
                                                      "against a bot token, so no country is blocked"},
                {"id": "AwsSolutions-CFR2", "reason": "The API stage behind the /api behaviour has its own WAF "
                                                      "(kb:waf); the static files need none"},
                {"id": "AwsSolutions-CFR3", "reason": "Static files of a public build; API access is logged by "
                                                      "API Gateway's access log"},
                {"id": "AwsSolutions-CFR4", "reason": "The default CloudFront certificate; TLS 1.2 is the "
                                                      "minimum once a custom domain is configured"},
            ],
        )
        # the deployment's and the auto-delete's custom-resource functions are CDK's own (the
        # deployment's is a singleton at the stack's top level)
        singletons = [c for c in Stack.of(self).node.children if c.node.id.startswith("Custom::CDKBucketDeployment")]
        for target in (self, *singletons):
            NagSuppressions.add_resource_suppressions(target, self._cdk_functions(), apply_to_children=True)

    @staticmethod
    def _cdk_functions() -> list[dict[str, Any]]:
        return [
                {"id": "AwsSolutions-IAM4", "reason": "CDK's S3 deployment and auto-delete custom resources "
                                                      "use the AWS managed basic execution role",
                 "appliesTo": ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                               "AWSLambdaBasicExecutionRole"]},
                {"id": "AwsSolutions-IAM5", "reason": "CDK's S3 deployment copies every file of the build "
                                                      "into the console bucket"},
                {"id": "AwsSolutions-L1", "reason": "CDK's S3 deployment and auto-delete functions pin their own "
                                                    "runtime, which this project cannot choose"},
            ]


class KnowledgeConsoleStack(Stack):
    """The console's stack: ``api`` is the REST API of the knowledge stack (its URL crosses
    over as a stack export)."""

    def __init__(self, scope: Construct, construct_id: str, *, api: apigw.RestApi, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.console = KnowledgeConsole(self, "Console", api=api)
        CfnOutput(self, "ConsoleUrl", value=self.console.url,
                  description="The operator console (the API under /api on the same origin)")
        CfnOutput(self, "ConsoleBucketName", value=self.console.bucket.bucket_name)
