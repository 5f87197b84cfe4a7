"""An optional AWS WAF web ACL on the API stage (``kb:waf``; on by default in the production
profile): rate-based rules per caller, counted by WAF across every Lambda instance.

* ``PerToken``: requests per bearer token (the ``Authorization`` header) — one tenant's token
  cannot use up the stage-wide throttle the other tenants share;
* ``RetrievalTestPerToken``: the same, tighter, for ``POST .../knowledge/retrieval-test`` (an
  operator tool that runs the whole retrieval pipeline per call);
* ``PerIp``: requests per client address, against floods that rotate or omit tokens.

A request over a limit is answered 429 with the project's error body (``rate_limited``).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from knowledge.errors import Code

#: WAF counts requests over this window (seconds)
WINDOW_SECONDS = 300
RATE_LIMITED_BODY = "RateLimited"


@dataclass(frozen=True)
class WafLimits:
    """Requests per ``WINDOW_SECONDS`` (5 minutes) per key; WAF's floor is 10."""

    per_token: int = 3000  # 10 rps sustained per token
    retrieval_test_per_token: int = 150  # 0.5 rps
    per_ip: int = 6000


class KnowledgeWaf(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, stage: apigw.Stage, limits: WafLimits) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)

        def rule(name: str, priority: int, limit: int, key: wafv2.CfnWebACL.RateBasedStatementProperty | None = None,
                 ) -> wafv2.CfnWebACL.RuleProperty:
            return wafv2.CfnWebACL.RuleProperty(
                name=name,
                priority=priority,
                statement=wafv2.CfnWebACL.StatementProperty(rate_based_statement=key),
                action=wafv2.CfnWebACL.RuleActionProperty(
                    block=wafv2.CfnWebACL.BlockActionProperty(
                        custom_response=wafv2.CfnWebACL.CustomResponseProperty(
                            response_code=429, custom_response_body_key=RATE_LIMITED_BODY
                        )
                    )
                ),
                visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                    cloud_watch_metrics_enabled=True, metric_name=f"kb-{name}", sampled_requests_enabled=True
                ),
            )

        token_key = [
            wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(
                header=wafv2.CfnWebACL.RateLimitHeaderProperty(
                    name="authorization",
                    text_transformations=[wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")],
                )
            )
        ]
        retrieval_test = wafv2.CfnWebACL.StatementProperty(
            byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
                field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}),
                positional_constraint="ENDS_WITH",
                search_string="/knowledge/retrieval-test",
                text_transformations=[wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")],
            )
        )
        rules = [
            rule("RetrievalTestPerToken", 0, limits.retrieval_test_per_token,
                 wafv2.CfnWebACL.RateBasedStatementProperty(
                     aggregate_key_type="CUSTOM_KEYS", custom_keys=token_key,
                     limit=limits.retrieval_test_per_token, evaluation_window_sec=WINDOW_SECONDS,
                     scope_down_statement=retrieval_test)),
            rule("PerToken", 1, limits.per_token,
                 wafv2.CfnWebACL.RateBasedStatementProperty(
                     aggregate_key_type="CUSTOM_KEYS", custom_keys=token_key,
                     limit=limits.per_token, evaluation_window_sec=WINDOW_SECONDS)),
            rule("PerIp", 2, limits.per_ip,
                 wafv2.CfnWebACL.RateBasedStatementProperty(
                     aggregate_key_type="IP", limit=limits.per_ip, evaluation_window_sec=WINDOW_SECONDS)),
        ]
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            rules=rules,
            custom_response_bodies={
                RATE_LIMITED_BODY: wafv2.CfnWebACL.CustomResponseBodyProperty(
                    content_type="APPLICATION_JSON",
                    content='{"error": {"code": "' + Code.RATE_LIMITED + '", "message": "too many requests"}}',
                )
            },
            visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True, metric_name="kb-api", sampled_requests_enabled=True
            ),
        )
        self.association = wafv2.CfnWebACLAssociation(
            self,
            "Association",
            resource_arn=f"arn:{stack.partition}:apigateway:{stack.region}::/restapis/"
            f"{stage.rest_api.rest_api_id}/stages/{stage.stage_name}",
            web_acl_arn=self.web_acl.attr_arn,
        )
