"""Compaction of the embedded index: when it rewrites a partition, what it leaves alone, and that
a failure or a reader in the middle of it loses nothing. (That no answer changes is part of the
SearchIndex contract, tests/contract/test_search_index.py.)"""

from __future__ import annotations

import threading

import pytest

from knowledge.adapters.local import tantivy_index
from knowledge.adapters.local.tantivy_index import TantivySearchIndex
from knowledge.errors import BackendError
from knowledge.model import Passage, key64

CUSTOMER = {"visibilities": ["public", "agent"]}


def passage(pid: str, text: str, *, source: str = "s1", gen: int = 1, vis: str = "public",
            vector: list[float] | None = None) -> Passage:
    return Passage(id=pid, bot="b1", source_id=source, document_id=f"{source}-doc", generation=gen,
                   ordinal=int(pid.rsplit("-", 1)[-1]) if pid[-1].isdigit() else 0, title="T", path="help/x.md",
                   breadcrumb="P › T", text=text, visibility=vis, vector=vector)


def write_sources(index: TantivySearchIndex, sources: list[str], per_source: int = 6) -> list[str]:
    # one write (one commit) per source, each a segment or two: fewer than the eight of a size
    # that make tantivy merge them itself
    for source in sources:
        index.write("b1", [passage(f"{source}-{i}", f"monero withdrawal note {source} {i}", source=source)
                           for i in range(per_source)])
    return [f"{s}:1" for s in sources]


def found(index: TantivySearchIndex, gens: list[str], query: str = "monero withdrawal") -> list[str]:
    hits = index.search_lexical("b1", "customer", query, source_gens=gens, **CUSTOMER)
    index.hydrate("b1", hits)
    return [h.passage.id for h in hits if h.passage is not None]


def segments(index: TantivySearchIndex, partition: str = "customer") -> tuple[int, int, int]:
    part = index._part("b1", partition, create=False)
    assert part is not None
    return part.layout()


def test_several_segments_become_one(tmp_path):
    index = TantivySearchIndex(tmp_path)
    gens = write_sources(index, ["s1", "s2", "s3"])
    assert segments(index)[0] >= tantivy_index.COMPACT_MIN_SEGMENTS
    before = found(index, gens)
    [done] = index.compact("b1")
    assert done["partition"] == "customer" and done["passages"] == 18
    assert done["segmentsBefore"] >= tantivy_index.COMPACT_MIN_SEGMENTS and done["segmentsAfter"] == 1
    assert segments(index) == (1, 18, 0)
    assert found(index, gens) == before
    assert index.compact("b1") == []  # one segment: nothing left to do


def test_a_tidy_partition_is_left_alone(tmp_path):
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("s1-0", "monero withdrawal")])
    meta = tmp_path / "b1" / "customer" / "meta.json"
    stamp = meta.read_bytes()
    assert index.compact("b1") == []
    assert meta.read_bytes() == stamp  # not even an empty commit
    assert index.compact("never-written") == []


def test_deleted_documents_alone_make_it_worth_it(tmp_path):
    index = TantivySearchIndex(tmp_path)
    # one write of two generations: the same segments hold both; deleting one leaves the
    # segments with half their documents deleted, and fewer segments than the threshold
    index.write("b1", [passage(f"s1-{i}", f"monero note {i}", gen=g) for i in range(40) for g in (1, 2)])
    index.delete_generation("b1", "s1", 1)
    count, docs, deleted = segments(index)
    assert count < tantivy_index.COMPACT_MIN_SEGMENTS and deleted >= tantivy_index.COMPACT_DELETED_SHARE * docs
    before = found(index, ["s1:2"], "monero note")
    [done] = index.compact("b1")
    assert done["passages"] == 40 and done["deletedDropped"] == deleted
    assert segments(index) == (1, 40, 0)
    assert found(index, ["s1:2"], "monero note") == before


def test_a_partition_past_the_size_cap_is_left_to_tantivy(tmp_path, monkeypatch):
    index = TantivySearchIndex(tmp_path)
    write_sources(index, ["s1", "s2", "s3"])
    layout = segments(index)
    monkeypatch.setattr(tantivy_index, "COMPACT_MAX_PASSAGES", 17)
    assert index.compact("b1") == []
    assert index.compact("b1", force=True) == []  # the cap holds even when forced
    assert segments(index) == layout
    monkeypatch.setattr(tantivy_index, "COMPACT_MAX_PASSAGES", 18)
    assert len(index.compact("b1")) == 1


def test_a_failure_halfway_loses_nothing(tmp_path, monkeypatch):
    index = TantivySearchIndex(tmp_path)
    gens = write_sources(index, ["s1", "s2", "s3"])
    layout, before = segments(index), found(index, gens)
    real = TantivySearchIndex._document
    calls = {"n": 0}

    def failing(p: Passage):
        calls["n"] += 1
        if calls["n"] > 10:
            raise OSError(28, "No space left on device")
        return real(p)

    monkeypatch.setattr(TantivySearchIndex, "_document", staticmethod(failing))
    with pytest.raises(BackendError):
        index.compact("b1")
    monkeypatch.setattr(TantivySearchIndex, "_document", staticmethod(real))
    assert segments(index) == layout
    assert found(index, gens) == before
    reopened = TantivySearchIndex(tmp_path)  # what the next process sees
    assert found(reopened, gens) == before
    index.write("b1", [passage("s5-0", "monero withdrawal", source="s5")])  # the writer lock was released
    assert "s5-0" in found(index, [*gens, "s5:1"])


def test_hits_found_before_load_after_and_other_readers_follow(tmp_path):
    index = TantivySearchIndex(tmp_path)
    gens = write_sources(index, ["s1", "s2", "s3"])
    other = TantivySearchIndex(tmp_path)  # another process's view of the same folder
    before = found(other, gens)
    hits = index.search_lexical("b1", "customer", "monero withdrawal", source_gens=gens, **CUSTOMER)
    index.compact("b1")
    index.hydrate("b1", hits)  # addresses of the searcher that found them, from segments now gone
    assert [h.passage.id for h in hits if h.passage is not None] == before
    assert all(key64(h.passage.id) == h.ref.key for h in hits if h.passage is not None)
    assert found(other, gens) == before
    other_part = other._part("b1", "customer", create=False)
    assert other_part is not None and other_part.searcher().num_segments == 1


def test_vector_hits_still_load(tmp_path):
    index = TantivySearchIndex(tmp_path)
    for n, source in enumerate(["s1", "s2", "s3"]):
        index.write("b1", [passage(f"{source}-0", f"monero {source}", source=source,
                                   vector=[1.0, float(n), 0.5])], space="test-space")
    gens = ["s1:1", "s2:1", "s3:1"]
    ask = {"test-space": [1.0, 2.0, 0.5]}
    before = index.search_vector("b1", "customer", ask, source_gens=gens, **CUSTOMER)
    index.compact("b1", force=True)
    after = index.search_vector("b1", "customer", ask, source_gens=gens, **CUSTOMER)
    index.hydrate("b1", after)
    assert [h.ref for h in after] == [h.ref for h in before]
    assert [h.passage.id for h in after if h.passage is not None] == ["s3-0", "s2-0", "s1-0"]


def test_writers_wait_for_a_compaction(tmp_path, monkeypatch):
    index = TantivySearchIndex(tmp_path)
    gens = write_sources(index, ["s1", "s2", "s3"])
    inside, release = threading.Event(), threading.Event()
    real = TantivySearchIndex._document
    first = {"done": False}

    def slow(p: Passage):
        if not first["done"]:
            first["done"] = True
            inside.set()
            release.wait(10)
        return real(p)

    monkeypatch.setattr(TantivySearchIndex, "_document", staticmethod(slow))
    compaction = threading.Thread(target=index.compact, args=("b1",))
    compaction.start()
    assert inside.wait(10)
    writer = threading.Thread(target=index.write, args=("b1", [passage("s5-0", "monero withdrawal", source="s5")]))
    writer.start()
    writer.join(0.3)
    assert writer.is_alive()  # waiting for the partition's writer
    release.set()
    compaction.join(10)
    writer.join(10)
    assert not writer.is_alive()
    assert sorted(found(index, [*gens, "s5:1"])) == sorted([f"s{s}-{i}" for s in range(1, 4) for i in range(6)]
                                                           + ["s5-0"])
