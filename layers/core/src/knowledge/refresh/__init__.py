"""Refreshing a source (DESIGN.md §6): take the lease -> (website: crawl in time-boxed turns)
-> list documents -> process them in batches -> commit; any error -> fail.

Two runners share the same building blocks. The in-process
:class:`~knowledge.refresh.pipeline.Refresher` (embedded mode) runs them in one loop under one
lease; the Step Functions workflow (AWS mode) runs one stage per Lambda task. Modules:

* ``indexing``: checksum, document cap, chunking and its tally, embedding (both runners);
* ``leases``: taking, checking and heartbeating a run's lease, and releasing expired ones;
* ``crawl_turn``: one turn of a website's crawl loop;
* ``batches``: listing the documents into batches, and processing one batch;
* ``staging``: the blobs a workflow run keeps between its tasks;
* ``finish``: commit, fail, abandon, and dropping generations no query may see;
* ``workflow_errors``: the errors a workflow task raises, and how a caught one is recorded;
* ``scheduling``: starting the refresh of every due source (the AWS scheduler's tick);
* ``pipeline``, ``reindex``, ``reaper``, ``packsync``, ``rescue_build``: the embedded runner,
  reindexing every source, requeueing dead workers' sources, syncing packs, rebuilding the
  rescue model.
"""
