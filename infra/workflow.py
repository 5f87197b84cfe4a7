"""The refresh workflow (Step Functions, Standard).

Execution input: ``{"botId": "...", "sourceId": "...", "reason": "schedule|pack|manual|reindex", "force": false}``
(``force`` optional: refresh even when the content checksum is unchanged).
The starter names the execution deterministically, so a duplicate start is rejected by Step
Functions instead of running twice; the execution name is also the lease owner.

::

    Lease [TakeLease -> LeaseBusy? --busy--> LeaseHeldElsewhere (fail "LeaseBusy")]
      | Retry "LeaseBusy" with backoff for longer than a lease; then Catch -> AlreadyRunning
    LeaseTaken? --no (disabled, missing)--> AlreadyRunning (succeed)
                     | yes
                 SourceType? --website--> StartCrawl -> CrawlPages -> CrawlDone? --no--> CrawlDelay (Wait) -> CrawlPages
                     | other                                              | yes
                     +--------------------------------------------> ListDocuments
    ListDocuments -> ProcessBatches (Distributed Map, 4 child runs at once: process_batch) -> Commit -> Refreshed
    any error after retries -> MarkFailed (ingest "fail") -> RefreshFailed (fail)

Another execution holding the source's lease is waited for, not given up on at once: an
edit during a refresh stops the running execution and starts a new one, which must index the
edit once the first has let go (or its lease has expired, if its worker died). The wait is a
Retry of the ``Lease`` Parallel state (its one branch takes the lease and fails with
``LeaseBusy`` when another execution holds it): 5 s doubling to at most 30 s, 10 attempts —
about four minutes, twice the lease. Two executions never work on one source at once.

Every ingest task gets ``{"action", "botId", "sourceId", "executionName", ...}``; results land
under ``$.job`` (take_lease), ``$.crawl`` (crawl), ``$.listing`` (list_documents) and
``$.result`` (commit), so the execution input stays available to every later state.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from cdk_nag import NagSuppressions
from constructs import Construct

#: error name the handlers raise (exception class name) when a backend throttles them
RATE_LIMITED_ERROR = "RateLimited"
#: raised by the Lambda service itself when the function is throttled (not retried by default)
LAMBDA_THROTTLED_ERROR = "Lambda.TooManyRequestsException"
MAP_MAX_CONCURRENCY = 4
#: error the Lease branch fails with while another execution holds the source's lease
LEASE_BUSY_ERROR = "LeaseBusy"
#: waiting for another execution's lease: 5, 10, 20, 30, 30... seconds, no jitter so the
#: total wait is known — it must outlast a lease (2 minutes) with room for the holder to
#: notice a cancel at its next checkpoint; see ``lease_busy_wait_seconds``
LEASE_BUSY_INTERVAL = Duration.seconds(5)
LEASE_BUSY_BACKOFF = 2.0
LEASE_BUSY_MAX_DELAY = Duration.seconds(30)
LEASE_BUSY_ATTEMPTS = 10
WORKFLOW_TIMEOUT = Duration.hours(12)


def lease_busy_wait_seconds() -> float:
    """How long an execution waits, at most, for a lease another execution holds."""
    interval, cap = LEASE_BUSY_INTERVAL.to_seconds(), LEASE_BUSY_MAX_DELAY.to_seconds()
    return float(sum(min(cap, interval * LEASE_BUSY_BACKOFF**n) for n in range(LEASE_BUSY_ATTEMPTS)))


def _ids(**extra: Any) -> dict[str, Any]:
    return {
        "botId.$": "$.botId",
        "sourceId.$": "$.sourceId",
        "executionName.$": "$$.Execution.Name",
        **extra,
    }


class RefreshWorkflow(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        ingest: lambda_.IFunction,
        crawl: lambda_.IFunction,
        state_machine_name: str,
        log_retention: logs.RetentionDays,
    ) -> None:
        super().__init__(scope, construct_id)

        def ingest_task(state_id: str, action: str, result_path: str, **extra: Any) -> tasks.LambdaInvoke:
            return tasks.LambdaInvoke(
                self,
                state_id,
                lambda_function=ingest,
                payload=sfn.TaskInput.from_object(_ids(action=action, **extra)),
                payload_response_only=True,
                retry_on_service_exceptions=True,
                result_path=result_path,
            )

        def retry_rate_limited(task: tasks.LambdaInvoke) -> tasks.LambdaInvoke:
            # a throttled backend (RateLimited from the handler) or a throttled function
            task.add_retry(
                errors=[RATE_LIMITED_ERROR, LAMBDA_THROTTLED_ERROR],
                interval=Duration.seconds(5),
                backoff_rate=2.0,
                max_attempts=6,
                max_delay=Duration.minutes(2),
                jitter_strategy=sfn.JitterType.FULL,
            )
            return task

        # failure path: record the error code, drop the partial generation, release the lease
        mark_failed = tasks.LambdaInvoke(
            self,
            "MarkFailed",
            lambda_function=ingest,
            payload=sfn.TaskInput.from_object(_ids(action="fail", **{"error.$": "$.error", "state.$": "$"})),
            payload_response_only=True,
            retry_on_service_exceptions=True,
            result_path=sfn.JsonPath.DISCARD,
        )
        mark_failed.add_retry(
            errors=["States.ALL"], interval=Duration.seconds(2), backoff_rate=2.0, max_attempts=3
        )
        failed = sfn.Fail(
            self, "RefreshFailed", error_path="$.error.Error", cause_path="$.error.Cause"
        )
        on_error = mark_failed.next(failed)

        def catch_all(state: Any) -> Any:
            state.add_catch(on_error, errors=["States.ALL"], result_path="$.error")
            return state

        # the whole execution input rides along so optional fields (``force``) reach the lease step
        take_lease = retry_rate_limited(
            ingest_task("TakeLease", "take_lease", "$.job", **{"input.$": "$$.Execution.Input"})
        )
        lease_busy = sfn.Fail(
            self,
            "LeaseHeldElsewhere",
            error=LEASE_BUSY_ERROR,
            cause="lease_busy: another execution holds the lease of this source",
        )
        lease_check = (
            sfn.Choice(self, "LeaseBusy?")
            .when(
                sfn.Condition.and_(
                    sfn.Condition.boolean_equals("$.job.acquired", False),
                    sfn.Condition.string_equals("$.job.reason", "busy"),
                ),
                lease_busy,
            )
            .otherwise(sfn.Succeed(self, "LeaseAnswered"))
        )
        # one branch, so the Retry below re-runs TakeLease; the output is the branch's state
        # (the input plus "job"), unwrapped from the one-element result list
        lease = sfn.Parallel(
            self,
            "Lease",
            comment="take the lease; while another execution holds it, wait and try again",
            output_path="$[0]",
        )
        lease.branch(take_lease.next(lease_check))
        lease.add_retry(
            errors=[LEASE_BUSY_ERROR],
            interval=LEASE_BUSY_INTERVAL,
            backoff_rate=LEASE_BUSY_BACKOFF,
            max_attempts=LEASE_BUSY_ATTEMPTS,
            max_delay=LEASE_BUSY_MAX_DELAY,
            jitter_strategy=sfn.JitterType.NONE,
        )
        already_running = sfn.Succeed(
            self, "AlreadyRunning", comment="nothing to refresh, or another execution kept the lease"
        )
        # still busy after the whole wait: the holder kept working (it was not asked to stop)
        # or hangs until its lease lapses and the reaper queues the source again; end quietly
        lease.add_catch(already_running, errors=[LEASE_BUSY_ERROR], result_path="$.error")
        catch_all(lease)

        list_documents = catch_all(
            retry_rate_limited(ingest_task("ListDocuments", "list_documents", "$.listing", **{"job.$": "$.job"}))
        )

        # website crawl loop: each call gets the previous result under "crawl" (the first call
        # {"done": false, "waitSeconds": 0}, no cursor), fetches pages within a time budget and
        # returns {"done": bool, "cursor": ..., "waitSeconds": int} (the Crawl-delay to honour)
        start_crawl = sfn.Pass(
            self,
            "StartCrawl",
            result=sfn.Result.from_object({"done": False, "waitSeconds": 0}),
            result_path="$.crawl",
        )
        crawl_pages = tasks.LambdaInvoke(
            self,
            "CrawlPages",
            lambda_function=crawl,
            payload=sfn.TaskInput.from_object(_ids(**{"job.$": "$.job", "crawl.$": "$.crawl"})),
            payload_response_only=True,
            retry_on_service_exceptions=True,
            result_path="$.crawl",
        )
        catch_all(retry_rate_limited(crawl_pages))
        crawl_delay = sfn.Wait(self, "CrawlDelay", time=sfn.WaitTime.seconds_path("$.crawl.waitSeconds"))
        crawl_done = (
            sfn.Choice(self, "CrawlDone?")
            .when(sfn.Condition.boolean_equals("$.crawl.done", True), list_documents)
            .otherwise(crawl_delay.next(crawl_pages))
        )
        start_crawl.next(crawl_pages).next(crawl_done)

        process_batch = retry_rate_limited(
            tasks.LambdaInvoke(
                self,
                "ProcessBatch",
                lambda_function=ingest,
                payload=sfn.TaskInput.from_object(
                    {
                        "action": "process_batch",
                        "botId.$": "$.botId",
                        "sourceId.$": "$.sourceId",
                        "executionName.$": "$.executionName",
                        "job.$": "$.job",
                        "batch.$": "$.batch",
                    }
                ),
                payload_response_only=True,
                retry_on_service_exceptions=True,
                result_path=sfn.JsonPath.DISCARD,
            )
        )
        # distributed: each batch runs as a child execution with its own event history, so a
        # source of thousands of batches stays far from the 25,000-event limit of one execution
        process_batches = sfn.DistributedMap(
            self,
            "ProcessBatches",
            items_path="$.listing.batches",
            map_execution_type=sfn.StateMachineType.STANDARD,
            max_concurrency=MAP_MAX_CONCURRENCY,
            item_selector={
                "botId.$": "$.botId",
                "sourceId.$": "$.sourceId",
                "executionName.$": "$$.Execution.Name",
                "job.$": "$.job",
                "batch.$": "$$.Map.Item.Value",
            },
            result_path=sfn.JsonPath.DISCARD,
        )
        process_batches.item_processor(process_batch)
        catch_all(process_batches)

        commit = catch_all(
            retry_rate_limited(ingest_task("Commit", "commit", "$.result", **{"job.$": "$.job"}))
        )
        refreshed = sfn.Succeed(self, "Refreshed")
        list_documents.next(process_batches).next(commit).next(refreshed)

        source_type = (
            sfn.Choice(self, "SourceType?")
            .when(sfn.Condition.string_equals("$.job.sourceType", "website"), start_crawl)
            .otherwise(list_documents)
        )
        lease_taken = (
            sfn.Choice(self, "LeaseTaken?")
            .when(sfn.Condition.boolean_equals("$.job.acquired", False), already_running)
            .otherwise(source_type)
        )
        definition = lease.next(lease_taken)

        self.log_group = logs.LogGroup(
            self, "Logs", retention=log_retention, removal_policy=RemovalPolicy.DESTROY
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=state_machine_name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_chainable(definition),
            timeout=WORKFLOW_TIMEOUT,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=self.log_group,
                level=sfn.LogLevel.ALL,
                # payloads are ids and cursors, but keep page data out of the logs regardless
                include_execution_data=False,
            ),
        )
        NagSuppressions.add_resource_suppressions(
            self.state_machine,
            [
                {
                    "id": "AwsSolutions-IAM5",
                    "reason": "lambda:InvokeFunction on '<function-arn>:*' covers the versions and "
                    "aliases of the two task functions (ingest, crawl) and nothing else.",
                    "applies_to": [{"regex": "/^Resource::<Functions(Ingest|Crawl)[0-9A-F]+\\.Arn>:\\*$/"}],
                },
                {
                    "id": "AwsSolutions-IAM5",
                    "reason": "X-Ray tracing and CloudWatch Logs delivery APIs used by Step Functions "
                    "support no resource scoping, so they need Resource '*'.",
                    "applies_to": ["Resource::*"],
                },
            ],
            apply_to_children=True,
        )
