"""The one filter both reindex passes apply (``refresh.reindex.reindexed``): the embedded pass and
the AWS plan differ only in how they tell a file source is still awaiting its upload."""

from __future__ import annotations

from knowledge.model import Source
from knowledge.refresh.reindex import reindexed
from knowledge.sources.files import awaiting_first_upload


def never(_: Source) -> bool:
    return False


def test_a_reindex_refreshes_enabled_refreshable_sources_only() -> None:
    assert reindexed(Source("a", "b", "article", "A", status="ready"), never)
    assert reindexed(Source("w", "b", "website", "W", status="failed"), never)
    assert not reindexed(Source("a", "b", "article", "A", status="disabled"), never)
    assert not reindexed(Source("l", "b", "live", "L", status="ready"), never)


def test_a_file_source_awaiting_its_upload_is_left_out() -> None:
    fresh = Source("f", "b", "file", "F")
    indexed = Source("f", "b", "file", "F", status="ready", attempts=1, live_generation=3)
    assert not reindexed(fresh, awaiting_first_upload)
    assert reindexed(indexed, awaiting_first_upload)
    # the embedded pass asks the blob store instead: whatever it answers decides
    assert reindexed(fresh, never)
    assert not reindexed(indexed, lambda s: s.type == "file")
