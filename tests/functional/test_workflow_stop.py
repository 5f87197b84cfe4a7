"""The embedded workflow stops cleanly: the running job finishes, nothing queued starts after
the stop, and neither the worker nor the scheduler thread is left running."""

from __future__ import annotations

import threading

from knowledge.embedded.worker import InProcessWorkflow
from knowledge.refresh.packsync import install_pack
from tests.conftest import page


def kb_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name in ("kb-worker", "kb-scheduler")}


def test_stop_ends_both_threads_and_starts_nothing_queued(services, write_pack):
    install_pack(services, write_pack("coinvault", [page("help/a.md", "# A\n\nWithdraw XMR.", audience="CUSTOMER")]))
    workflow = InProcessWorkflow(services, background=True, tick_seconds=0.05)
    workflow.start()
    assert kb_threads() == {"kb-worker", "kb-scheduler"}
    assert workflow.stop(timeout=30) is True
    assert kb_threads() == set()
    # a job submitted after the stop stays queued: no thread is left to run it
    job = workflow.start_reindex("default")
    assert workflow.job(job["id"]).status == "queued"
