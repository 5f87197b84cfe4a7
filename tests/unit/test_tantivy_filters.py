"""Every search of the embedded index carries the bot, visibility and live-generation clauses
inside the query, whatever the partition holds: a document that should never be in a bot's
partition (written past ``write``, as a damaged index would hold it) is still never returned.

The clauses filter on key columns by range (``_PartitionIndex.boundary``); the tests below
also cover what a range alone would let through: a value whose key lies between two allowed
keys, and a key shared by another bot."""

from __future__ import annotations

import itertools

import pytest
import tantivy

from knowledge.adapters.local import tantivy_index
from knowledge.adapters.local.tantivy_index import TantivySearchIndex
from knowledge.model import Passage, key64


def passage(pid: str, text: str, *, bot: str = "b1", gen: int = 1, visibility: str = "public",
            source: str = "s1") -> Passage:
    return Passage(id=pid, bot=bot, source_id=source, document_id="d1", generation=gen, ordinal=0,
                   title="T", path="help/x.md", breadcrumb="P › T", text=text, visibility=visibility)


def search(index: TantivySearchIndex, bot: str, q: str, gens: list[str],
           visibilities: tuple[str, ...] = ("public", "agent")) -> list[str]:
    hits = index.search_lexical(bot, "customer", q, visibilities=visibilities, source_gens=gens)
    index.hydrate(bot, hits)
    return [h.passage.id for h in hits if h.passage is not None]


def smuggle(index: TantivySearchIndex, p: Passage) -> None:
    """Add a document to b1's customer partition bypassing ``write`` and its checks."""
    part = index._part("b1", "customer")
    assert part is not None
    with part.writer() as writer:
        writer.add_document(index._document(p))


@pytest.fixture
def index(tmp_path) -> TantivySearchIndex:
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("p1", "withdrawal limits explained")])
    return index


def filters(index: TantivySearchIndex, gens: list[str], visibilities=("public", "agent")) -> list:
    part = index._part("b1", "customer")
    assert part is not None
    return index._filters(part, part.searcher(), "b1", visibilities, gens)


def test_every_search_has_the_three_boundary_clauses(index):
    # the partition holds nothing but b1's live public passage: the clauses are still there
    clauses = filters(index, ["s1:1"])
    assert [occur for occur, _ in clauses] == [tantivy.Occur.Must] * 3
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["p1"]


def test_another_tenants_document_in_the_partition_is_never_returned(index):
    smuggle(index, passage("x1", "withdrawal secrets of another tenant", bot="b2"))
    assert search(index, "b1", "withdrawal secrets", ["s1:1"]) == ["p1"]
    assert index.find_key("b1", "customer", index_key("x1"), visibilities=("public", "agent"),
                          source_gens=["s1:1"]) is None
    # the rescue's corpus walk applies the same clauses
    keys = {key for key, _vis, _text in index.iter_passages("b1", ["s1:1"])}
    assert keys == {index_key("p1")}


def test_a_generation_that_is_not_live_is_never_returned(index):
    smuggle(index, passage("staged", "withdrawal limits, new text", gen=2))
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["p1"]
    assert sorted(search(index, "b1", "withdrawal", ["s1:1", "s1:2"])) == ["p1", "staged"]


def test_a_visibility_outside_the_audience_is_never_returned(index):
    smuggle(index, passage("agent-only", "withdrawal limits for agents", visibility="agent"))
    assert search(index, "b1", "withdrawal", ["s1:1"], visibilities=("public",)) == ["p1"]
    assert sorted(search(index, "b1", "withdrawal", ["s1:1"])) == ["agent-only", "p1"]


def index_key(pid: str) -> int:
    from knowledge.model import key64

    return key64(pid)


def test_an_operator_passage_in_the_customer_partition_is_never_returned(index):
    smuggle(index, passage("op", "withdrawal limits for the desk", visibility="operator"))
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["p1"]


def named(template: str, wanted, start: int = 1) -> str:
    """The first ``template`` filled with n = start, start + 1, ... whose key64 satisfies ``wanted``."""
    return next(name for name in (template.format(n) for n in itertools.count(start)) if wanted(key64(name)))


def test_a_generation_whose_key_is_inside_the_live_range_is_never_returned(tmp_path):
    """A staged or replaced generation of a source between two others in key order: the range
    over the live keys admits it, only its exclusion by name keeps it out."""
    index = TantivySearchIndex(tmp_path)
    edge = 1 << 58
    live = [named("low{}:1", lambda k: k < edge), "s1:1", named("high{}:1", lambda k: k > (1 << 63) - edge)]
    index.write("b1", [passage(f"p-{g}", "withdrawal limits", source=g.split(":")[0]) for g in live])
    before = sorted(f"p-{g}" for g in live)
    assert sorted(search(index, "b1", "withdrawal", live)) == before  # the clauses of this question are built
    staged = named("s1:{}", lambda k: key64(live[0]) < k < key64(live[2]), start=2)
    # a refresh writes the next generation of s1 while the questions keep coming
    index.write("b1", [passage("staged", "withdrawal limits, new text", gen=int(staged.split(":")[1]))])
    assert sorted(search(index, "b1", "withdrawal", live)) == before
    assert index.find_key("b1", "customer", key64("staged"), visibilities=("public",), source_gens=live) is None
    assert {k for k, _v, _t in index.iter_passages("b1", live)} == {key64(f"p-{g}") for g in live}
    # the commit makes it live in place of s1:1, whose passages are still in the index
    flipped = [live[0], staged, live[2]]
    assert key64(live[0]) < key64("s1:1") < key64(live[2])
    assert sorted(search(index, "b1", "withdrawal", flipped)) == sorted([f"p-{live[0]}", f"p-{live[2]}", "staged"])
    assert index.find_key("b1", "customer", key64("p-s1:1"), visibilities=("public",), source_gens=flipped) is None
    # once the old generation is deleted, nothing is left to exclude by name
    index.delete_generation("b1", "s1", 1)
    assert all(occur == tantivy.Occur.Must for occur, _ in filters(index, flipped))
    assert sorted(search(index, "b1", "withdrawal", flipped)) == sorted([f"p-{live[0]}", f"p-{live[2]}", "staged"])


def test_another_bot_with_the_same_key_is_still_never_returned(index, monkeypatch):
    real = tantivy_index.boundary_key

    def colliding(field: str, value: str) -> int | None:
        return real(field, "b1") if (field, value) == ("bot", "b2") else real(field, value)

    monkeypatch.setattr(tantivy_index, "boundary_key", colliding)
    smuggle(index, passage("x1", "withdrawal secrets of another tenant", bot="b2"))
    assert search(index, "b1", "withdrawal secrets", ["s1:1"]) == ["p1"]
    assert {k for k, _v, _t in index.iter_passages("b1", ["s1:1"])} == {key64("p1")}


def test_an_index_of_an_older_format_is_rebuilt_empty(tmp_path):
    old = tmp_path / "b1" / "customer"
    old.mkdir(parents=True)
    (tmp_path / "FORMAT").write_text("tantivy-7")
    sb = tantivy.SchemaBuilder()  # the previous schema had no key columns
    sb.add_text_field("bot", stored=False, tokenizer_name="raw")
    sb.add_text_field("text", stored=False)
    made = tantivy.Index(sb.build(), path=str(old))
    writer = made.writer(15_000_000, 1)
    writer.add_document(tantivy.Document(bot="b1", text="withdrawal"))
    writer.commit()
    writer.wait_merging_threads()
    del writer, made
    index = TantivySearchIndex(tmp_path)
    assert (tmp_path / "FORMAT").read_text() == tantivy_index.INDEX_FORMAT
    assert index.search_lexical("b1", "customer", "withdrawal", visibilities=("public",), source_gens=["s1:1"]) == []
    index.write("b1", [passage("p1", "withdrawal limits explained")])
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["p1"]


def test_a_commit_within_the_same_clock_tick_as_the_last_is_still_seen(tmp_path):
    """Two commits whose meta.json carry the same modification time (a coarse file-system
    clock): the second must still reach the next search."""
    import os

    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("first", "withdrawal limits")])
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["first"]  # a searcher of the first commit
    meta = tmp_path / "b1" / "customer" / "meta.json"
    seen = os.stat(meta)
    index.write("b1", [passage("second", "withdrawal limits again")])
    os.utime(meta, ns=(seen.st_atime_ns, seen.st_mtime_ns))  # the same tick as the first commit
    assert sorted(search(index, "b1", "withdrawal", ["s1:1"])) == ["first", "second"]


def test_a_commit_whose_meta_json_repeats_inode_time_and_size_is_still_seen(tmp_path, monkeypatch):
    """The file system may give the next commit's meta.json the inode number the last one
    freed, within the same clock tick and at the same size: the stamp of the file alone then
    repeats. A commit made through this process must still reach its next search."""
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("first", "withdrawal limits")])
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["first"]
    frozen = tantivy_index.os.stat(tmp_path / "b1" / "customer" / "meta.json")
    real_stat = tantivy_index.os.stat
    monkeypatch.setattr(tantivy_index.os, "stat",
                        lambda path, *a, **k: frozen if str(path).endswith("meta.json") else real_stat(path, *a, **k))
    index.write("b1", [passage("second", "withdrawal limits again")])
    assert sorted(search(index, "b1", "withdrawal", ["s1:1"])) == ["first", "second"]
