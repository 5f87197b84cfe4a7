"""The nightly reindex as a bounded queue (AWS mode).

Starting a refresh of every source of every bot at once would run thousands of executions
together: Lambda concurrency, Bedrock quotas and the search domain's write capacity all at
their limits, and the questions answered meanwhile slowed. Instead the nightly run puts one
message per source on an SQS queue (``enqueue``), and every scheduler run (``drain``) starts
refreshes from it only while fewer than ``max_running`` refresh executions run. A message is
deleted once its execution started (or was already started: the names are deterministic, so
a message delivered twice starts nothing new); one that keeps failing to start goes to the
queue's dead-letter queue after a few receives (an alarm watches it).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ...errors import RateLimited

log = logging.getLogger(__name__)

#: SQS limits: 10 messages per send or receive batch
SQS_BATCH = 10


class ReindexQueue:
    def __init__(self, client: Any, queue_url: str, workflow: Any, *, max_running: int):
        if not queue_url:
            raise ValueError("the reindex queue URL is not configured")
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self.client = client
        self.queue_url = queue_url
        self.workflow = workflow
        self.max_running = max_running

    def enqueue(self, bot: str, token: str) -> dict[str, Any]:
        """Queue a reindex refresh of every enabled source of ``bot`` (after ``sync_packs``)."""
        targets, out_of_scope = self.workflow.reindex_targets(bot)
        for start in range(0, len(targets), SQS_BATCH):
            entries = [
                {"Id": str(n), "MessageBody": json.dumps({"botId": bot, "sourceId": source_id, "token": token})}
                for n, source_id in enumerate(targets[start : start + SQS_BATCH])
            ]
            response = self.client.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            if response.get("Failed"):
                raise RuntimeError(f"{len(response['Failed'])} reindex messages could not be queued")
        return {"bot": bot, "queued": len(targets), "outOfScope": out_of_scope}

    def drain(self) -> list[dict[str, Any]]:
        """Start queued refreshes while fewer than ``max_running`` executions run."""
        capacity = self.max_running - self.workflow.running_executions(self.max_running)
        started: list[dict[str, Any]] = []
        while capacity > 0:
            received = self.client.receive_message(QueueUrl=self.queue_url,
                                                   MaxNumberOfMessages=min(SQS_BATCH, capacity),
                                                   WaitTimeSeconds=0).get("Messages", [])
            if not received:
                break
            for message in received:
                if capacity <= 0:  # received more than could start: visible again at once
                    self.client.change_message_visibility(QueueUrl=self.queue_url,
                                                          ReceiptHandle=message["ReceiptHandle"],
                                                          VisibilityTimeout=0)
                    continue
                body = json.loads(message["Body"])
                try:
                    job = self.workflow.start_refresh(str(body["botId"]), str(body["sourceId"]),
                                                      reason="reindex", token=str(body["token"]))
                except RateLimited:
                    log.warning("reindex queue: Step Functions throttled; the rest waits for the next run")
                    return started
                self.client.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])
                if job.get("status") != "duplicate":
                    started.append(job)
                    capacity -= 1
        return started
