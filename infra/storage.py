"""The blob bucket: ``packs/`` (operator drops), ``uploads/`` (file sources), ``incoming/``
(presigned uploads, moved to ``uploads/`` by ``ingest`` once checked), ``staging/`` (work files)."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_s3 as s3
from cdk_nag import NagSuppressions
from constructs import Construct

# presigned uploads land under INCOMING_PREFIX (knowledge.lifecycle.uploads); what ingest never took expires
from knowledge.sources.base import INCOMING_PREFIX

PACKS_PREFIX = "packs/"
UPLOADS_PREFIX = "uploads/"
STAGING_PREFIX = "staging/"


class KnowledgeStorage(Construct):
    """Encrypted, private, TLS-only bucket that reports object events to EventBridge."""

    def __init__(self, scope: Construct, construct_id: str, *, staging_expiry_days: int, retain: bool,
                 upload_origins: tuple[str, ...] = ("*",)) -> None:
        super().__init__(scope, construct_id)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            versioned=False,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-staging",
                    prefix=STAGING_PREFIX,
                    expiration=Duration.days(staging_expiry_days),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                ),
                s3.LifecycleRule(id="expire-incoming", prefix=INCOMING_PREFIX, expiration=Duration.days(1)),
                s3.LifecycleRule(
                    id="abort-stale-multipart-uploads",
                    abort_incomplete_multipart_upload_after=Duration.days(7),
                ),
            ],
            # browsers POST presigned uploads straight to the bucket; the signed policy, not
            # the origin, decides what may be written (one key, size range, content type)
            cors=[
                s3.CorsRule(
                    allowed_methods=[s3.HttpMethods.POST],
                    allowed_origins=list(upload_origins),
                    allowed_headers=["*"],
                    max_age=3000,
                )
            ],
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
        )
        # EventBridge delivery set on the resource itself: the L2 ``event_bridge_enabled`` flag
        # would add a notifications custom resource (an extra Lambda) for the same effect.
        cfn = self.bucket.node.default_child
        assert isinstance(cfn, s3.CfnBucket)
        cfn.notification_configuration = s3.CfnBucket.NotificationConfigurationProperty(
            event_bridge_configuration=s3.CfnBucket.EventBridgeConfigurationProperty(event_bridge_enabled=True)
        )
        NagSuppressions.add_resource_suppressions(
            self.bucket,
            [
                {
                    "id": "AwsSolutions-S1",
                    "reason": "Object-level activity is already visible through the EventBridge object "
                    "events and CloudTrail; a second access-log bucket would only add cost at the "
                    "minimum profile.",
                }
            ],
        )
