"""Refreshing a source (DESIGN.md §6): take the lease -> (website: crawl in time-boxed turns)
-> list documents -> process them in batches -> commit; any error -> fail.

One orchestration, two runners: the Step Functions workflow (AWS mode) runs one stage per
Lambda task; the in-process :class:`~knowledge.refresh.pipeline.Refresher` (embedded mode)
calls the same stage functions in the state machine's order. Modules:

* ``indexing``: checksum, document cap, chunking and its tally, embedding;
* ``leases``: taking, checking and heartbeating a run's lease, and releasing expired ones;
* ``crawl_turn``: one turn of a website's crawl loop;
* ``batches``: listing the documents into batches, and processing one batch;
* ``staging``: the blobs a workflow run keeps between its tasks;
* ``finish``: commit, fail, abandon, and dropping generations no query may see;
* ``workflow_errors``: the errors a workflow task raises, and how a caught one is recorded;
* ``scheduling``: starting the refresh of every due source (the AWS scheduler's tick);
* ``pipeline``: the embedded runner of the stages above;
* ``reindex``, ``reaper``, ``packsync``, ``rescue_build``: reindexing every source, requeueing
  dead workers' sources, syncing packs, rebuilding the rescue model.
"""
