"""The embedded index leaves a filter clause out only when the index itself shows it could not
exclude anything; a foreign document smuggled into a bot's index brings the clause back."""

from __future__ import annotations

from knowledge.adapters.local.tantivy_index import TantivySearchIndex
from knowledge.model import Passage


def passage(pid: str, text: str, *, bot: str = "b1", gen: int = 1) -> Passage:
    return Passage(id=pid, bot=bot, source_id="s1", document_id="d1", generation=gen, ordinal=0,
                   title="T", path="help/x.md", breadcrumb="P › T", text=text, visibility="public")


def search(index: TantivySearchIndex, bot: str, q: str, gens: list[str]) -> list[str]:
    hits = index.search_lexical(bot, "customer", q, visibilities=("public", "agent"), source_gens=gens)
    index.hydrate(bot, hits)
    return [h.passage.id for h in hits if h.passage is not None]


def test_a_plain_question_on_a_clean_index_is_a_pure_disjunction(tmp_path):
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("p1", "withdrawal limits explained")])
    part = index._part("b1", "customer")
    assert part is not None
    assert index._filters("b1", "customer", ("public", "agent"), ["s1:1"], part.snapshot()) == []
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["p1"]


def test_a_foreign_document_in_the_index_restores_the_bot_clause(tmp_path):
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("p1", "withdrawal limits explained")])
    part = index._part("b1", "customer")
    assert part is not None
    # bypass ``write`` (which refuses another bot's passage) as a damaged index would
    with part.writer() as writer:
        writer.add_document(index._document(passage("x1", "withdrawal secrets of another tenant", bot="b2")))
    assert search(index, "b1", "withdrawal", ["s1:1"]) == ["p1"]
    assert len(index._filters("b1", "customer", ("public", "agent"), ["s1:1"], part.snapshot())) == 1


def test_a_generation_staged_after_the_searcher_opened_keeps_its_clause(tmp_path):
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("old", "withdrawal limits, old text", gen=1)])
    part = index._part("b1", "customer")
    assert part is not None
    view = part.snapshot()
    part.record_generations(added={"s1:2"})  # a refresh starts staging generation 2
    # the searcher cannot see generation 2 yet, but the clause is kept: never fewer filters
    assert len(index._filters("b1", "customer", ("public", "agent"), ["s1:1"], view)) == 1


def test_a_generation_that_is_not_live_restores_the_generation_clause(tmp_path):
    index = TantivySearchIndex(tmp_path)
    index.write("b1", [passage("old", "withdrawal limits, old text", gen=1),
                       passage("new", "withdrawal limits, new text", gen=2)])
    assert search(index, "b1", "withdrawal", ["s1:2"]) == ["new"]
    assert sorted(search(index, "b1", "withdrawal", ["s1:1", "s1:2"])) == ["new", "old"]
