"""Every search of the embedded index carries the bot, visibility and live-generation clauses
inside the query, whatever the partition holds: a document that should never be in a bot's
partition (written past ``write``, as a damaged index would hold it) is still never returned."""

from __future__ import annotations

import pytest

from knowledge.adapters.local.tantivy_index import TantivySearchIndex
from knowledge.model import Passage


def passage(pid: str, text: str, *, bot: str = "b1", gen: int = 1, visibility: str = "public") -> Passage:
    return Passage(id=pid, bot=bot, source_id="s1", document_id="d1", generation=gen, ordinal=0,
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


def test_every_search_has_the_three_boundary_clauses(index):
    assert len(index._filters("b1", ("public", "agent"), ["s1:1"])) == 3
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
