"""A passage loaded from the embedded index is the passage that was written, field for field,
whatever its strings hold; a damaged stored record is a backend error, never a wrong passage."""

from __future__ import annotations

import dataclasses

import pytest

from knowledge.adapters.local.tantivy_index import TantivySearchIndex, _meta, _passage_of
from knowledge.errors import BackendError
from knowledge.model import Passage

HOSTILE = "Ünïcödé 🚀 𝔘 \x00 nul, \u202e bidi, \t tab; \"quotes\" [brackets] \\ back"


def passage(pid: str, **changes: object) -> Passage:
    base = Passage(id=pid, bot="b1", source_id="s1", document_id="d1", generation=3, ordinal=7,
                   title="T", path="help/x.md", breadcrumb="P › T", text="P › T\n\nwithdrawal limits explained",
                   visibility="public", weight=1.75, priority=-4, indexed_at=1_790_000_000.125, url=None)
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize("changes", [
    {},
    {"url": ""},
    {"url": "https://help.example.com/a?b=c#d"},
    {"title": HOSTILE, "path": HOSTILE, "breadcrumb": "", "document_id": HOSTILE * 3, "url": HOSTILE},
    {"id": "", "source_id": "", "title": "", "path": ""},
    {"generation": 2**62, "ordinal": 0, "priority": 2**40, "weight": 0.0, "indexed_at": 0.0},
])
def test_a_loaded_passage_equals_the_written_one(tmp_path, changes):
    index = TantivySearchIndex(tmp_path)
    original = passage("p1", **changes)
    index.write("b1", [original])
    hits = index.search_lexical("b1", "customer", "withdrawal", visibilities=("public",),
                                source_gens=[original.source_gen])
    index.hydrate("b1", hits)
    assert [h.passage for h in hits] == [original]


def test_a_missing_url_and_an_empty_url_stay_apart():
    for url in (None, ""):
        original = passage("p", url=url)
        assert _passage_of(_meta(original), original.bot) == original


@pytest.mark.parametrize("damage", [
    lambda raw: raw[:-1],  # a string cut short
    lambda raw: raw + b"x",  # bytes nobody accounts for
    lambda raw: raw[:10],  # not even the numbers
    lambda raw: raw[:-2] + b"\xff\xfe",  # not UTF-8
])
def test_a_damaged_record_is_a_backend_error(damage):
    raw = _meta(passage("p", title="withdrawal", url="https://x.example"))
    with pytest.raises(BackendError):
        _passage_of(damage(raw), "b1")


def test_hits_load_through_the_searcher_that_found_them(tmp_path):
    # three commits, three segments; then a whole segment's generation is deleted, which drops
    # that segment and renumbers the others for any searcher opened afterwards
    from knowledge.model import key64

    index = TantivySearchIndex(tmp_path)
    for source in ("s1", "s2", "s3"):
        index.write("b1", [passage(f"{source}-{i}", source_id=source, text=f"withdrawal note {i}")
                           for i in range(5)])
    gens = ["s1:3", "s2:3", "s3:3"]
    hits = index.search_lexical("b1", "customer", "withdrawal", visibilities=("public",), source_gens=gens)
    assert len(hits) == 15
    index.delete_generation("b1", "s1", 3)
    index.hydrate("b1", hits)
    assert all(h.passage is not None and key64(h.passage.id) == h.ref.key for h in hits)
    fresh = index.search_lexical("b1", "customer", "withdrawal", visibilities=("public",), source_gens=gens)
    assert len(fresh) == 10


def _settings(folder):
    import json

    return json.loads((folder / "meta.json").read_text())["index_settings"]


def test_new_partitions_store_passages_uncompressed_in_small_blocks(tmp_path):
    from knowledge.adapters.local.tantivy_index import STORE_SETTINGS

    index = TantivySearchIndex(tmp_path)
    for n in range(3):  # three commits, then a compaction: each writes meta.json again
        index.write("b1", [passage(f"p{n}", source_id=f"s{n}")])
    index.compact("b1", force=True)
    folder = tmp_path / "b1" / "customer"
    assert {k: _settings(folder)[k] for k in STORE_SETTINGS} == STORE_SETTINGS
    # the store really is uncompressed: the passage text is there in the clear
    assert any(b"withdrawal limits explained" in f.read_bytes() for f in folder.glob("*.store"))
    hits = index.search_lexical("b1", "customer", "withdrawal", visibilities=("public",),
                                source_gens=["s0:3", "s1:3", "s2:3"])
    index.hydrate("b1", hits)
    assert sorted(h.passage.id for h in hits) == ["p0", "p1", "p2"]


def test_an_index_with_segments_keeps_the_settings_it_was_made_with(tmp_path):
    import tantivy

    from knowledge.adapters.local.tantivy_index import ANALYZER, INDEX_FORMAT, build_analyzer, build_schema

    folder = tmp_path / "b1" / "customer"
    folder.mkdir(parents=True)
    (tmp_path / "FORMAT").write_text(INDEX_FORMAT)
    made = tantivy.Index(build_schema(), path=str(folder))  # tantivy's defaults, one segment
    made.register_tokenizer(ANALYZER, build_analyzer())
    writer = made.writer(15_000_000, 1)
    writer.add_document(TantivySearchIndex._document(passage("old")))
    writer.commit()
    writer.wait_merging_threads()
    before = _settings(folder)
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("new", source_id="s2")])
    assert _settings(folder) == before  # never rewritten under a live index
    hits = index.search_lexical("b1", "customer", "withdrawal", visibilities=("public",),
                                source_gens=["s1:3", "s2:3"])
    index.hydrate("b1", hits)
    assert sorted(h.passage.id for h in hits) == ["new", "old"]
