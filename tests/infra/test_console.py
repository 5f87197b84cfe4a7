"""The console's CDK construct on its own small stack: a private bucket read through OAC,
CloudFront with kb serve's security headers, /api/* forwarded to the REST API with the
bearer header, and the built files deployed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_apigateway as apigw
from aws_cdk.assertions import Annotations, Match, Template
from cdk_nag import AwsSolutionsChecks

from infra.console import API_PATHS, KnowledgeConsole, KnowledgeConsoleStack
from knowledge.embedded.console import CONTENT_SECURITY_POLICY


def synth(dist: Path | None) -> tuple[cdk.Stack, Template]:
    app = cdk.App(context={"kb:consoleDir": str(dist) if dist else "/nonexistent"})
    stack = cdk.Stack(app, "ConsoleOnly")
    api = apigw.RestApi(stack, "Api", deploy_options=apigw.StageOptions(stage_name="v1"))
    api.root.add_method("GET", apigw.MockIntegration())
    KnowledgeConsole(stack, "Console", api=api)
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    return stack, Template.from_stack(stack)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[cdk.Stack, Template]:
    dist = tmp_path_factory.mktemp("dist")
    (dist / "index.html").write_text("<!doctype html><title>kb console</title>")
    return synth(dist)


def one(template: Template, type_name: str) -> dict[str, Any]:
    found = template.find_resources(type_name)
    assert len(found) == 1, found
    return dict(next(iter(found.values()))["Properties"])


def test_the_bucket_is_private_and_read_by_cloudfront_through_oac(built) -> None:
    _, t = built
    bucket = next(iter(t.find_resources("AWS::S3::Bucket").values()))["Properties"]
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    oac = one(t, "AWS::CloudFront::OriginAccessControl")["OriginAccessControlConfig"]
    assert (oac["OriginAccessControlOriginType"], oac["SigningBehavior"]) == ("s3", "always")
    policy = json.dumps(one(t, "AWS::S3::BucketPolicy")["PolicyDocument"])
    assert "cloudfront.amazonaws.com" in policy and "AWS:SourceArn" in policy
    dist = one(t, "AWS::CloudFront::Distribution")["DistributionConfig"]
    s3_origin = next(o for o in dist["Origins"] if "S3OriginConfig" in o)
    assert s3_origin["S3OriginConfig"] == {"OriginAccessIdentity": ""} and "OriginAccessControlId" in s3_origin
    assert dist["DefaultRootObject"] == "index.html"
    assert dist["DefaultCacheBehavior"]["ViewerProtocolPolicy"] == "redirect-to-https"


def test_every_response_carries_kb_serves_csp_and_security_headers(built) -> None:
    _, t = built
    cfg = one(t, "AWS::CloudFront::ResponseHeadersPolicy")["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    assert cfg["ContentSecurityPolicy"] == {"ContentSecurityPolicy": CONTENT_SECURITY_POLICY, "Override": True}
    assert "connect-src 'self'" in CONTENT_SECURITY_POLICY and "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert cfg["ContentTypeOptions"] == {"Override": True}
    assert cfg["FrameOptions"]["FrameOption"] == "DENY"
    assert cfg["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"
    dist = one(t, "AWS::CloudFront::Distribution")["DistributionConfig"]
    behaviours = [dist["DefaultCacheBehavior"], *dist["CacheBehaviors"]]
    assert all("ResponseHeadersPolicyId" in b for b in behaviours)


def test_the_api_is_forwarded_on_the_same_origin_with_the_bearer_header(built) -> None:
    _, t = built
    dist = one(t, "AWS::CloudFront::Distribution")["DistributionConfig"]
    api_behaviours = {b["PathPattern"]: b for b in dist["CacheBehaviors"]}
    assert set(api_behaviours) == set(API_PATHS)
    for b in api_behaviours.values():
        assert b["ViewerProtocolPolicy"] == "https-only"
        assert set(b["AllowedMethods"]) >= {"GET", "POST", "PUT", "PATCH", "DELETE"}
    api_origin = next(o for o in dist["Origins"] if o["Id"] == next(iter(api_behaviours.values()))["TargetOriginId"])
    assert "execute-api" in json.dumps(api_origin["DomainName"])
    # the stage's URL, split at "/": its fourth part is the stage name (v1), the origin path
    path = api_origin["OriginPath"]["Fn::Join"][1]
    assert path[0] == "/" and path[1]["Fn::Select"][0] == 3 and "ApiDeploymentStagev1" in json.dumps(path[1])
    cache = one(t, "AWS::CloudFront::CachePolicy")["CachePolicyConfig"]
    assert cache["DefaultTTL"] == 0 and cache["MinTTL"] == 0
    keys = cache["ParametersInCacheKeyAndForwardedToOrigin"]["HeadersConfig"]
    assert keys == {"HeaderBehavior": "whitelist", "Headers": ["Authorization"]}


def test_the_built_files_are_deployed_and_index_html_invalidated(built) -> None:
    _, t = built
    deploy = one(t, "Custom::CDKBucketDeployment")
    assert deploy["Prune"] is True and deploy["DistributionPaths"] == ["/index.html"]


def test_without_a_build_the_console_is_made_empty(tmp_path: Path) -> None:
    _, t = synth(None)
    assert t.find_resources("Custom::CDKBucketDeployment") == {}
    t.resource_count_is("AWS::CloudFront::Distribution", 1)


def test_no_unsuppressed_nag_errors(built) -> None:
    stack, _ = built
    errors = Annotations.from_stack(stack).find_error("*", Match.string_like_regexp("AwsSolutions-.*"))
    # the stand-in API is not the project's; only the console's resources are judged here
    assert [(e.id, str(e.entry.data)[:160]) for e in errors if not e.id.startswith("/ConsoleOnly/Api/")] == []


def test_the_app_deploys_the_console_beside_the_knowledge_stack(minimum) -> None:
    """The knowledge stack is unchanged (one bucket, no custom resource); the console stack
    reaches its REST API through a stack export."""
    console = next(c for c in minimum.stack.node.scope.node.children if isinstance(c, KnowledgeConsoleStack))
    t = Template.from_stack(console)
    dist = one(t, "AWS::CloudFront::Distribution")["DistributionConfig"]
    api_origin = next(o for o in dist["Origins"] if "CustomOriginConfig" in o)
    assert "Fn::ImportValue" in json.dumps(api_origin["DomainName"])
    assert set(t.to_json()["Outputs"]) >= {"ConsoleUrl", "ConsoleBucketName"}
    errors = Annotations.from_stack(console).find_error("*", Match.string_like_regexp("AwsSolutions-.*"))
    assert [(e.id, str(e.entry.data)[:160]) for e in errors] == []
