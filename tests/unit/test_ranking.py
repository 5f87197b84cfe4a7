"""Pure ranking maths, checked against small hand computations."""

from __future__ import annotations

import pytest

from knowledge import analysis
from knowledge.model import Hit, Passage, PassageRef, key64
from knowledge.retrieve import ranking


def psg(pid: str, *, doc: str = "d", ordinal: int = 0, weight: float = 1.0, priority: int = 0,
        indexed_at: float = 0.0, text: str = "", crumb: str = "") -> Passage:
    return Passage(id=pid, bot="b", source_id=f"s-{pid}", document_id=doc, generation=1, ordinal=ordinal,
                   title="t", path="p.md", breadcrumb=crumb, text=text or pid, visibility="public",
                   weight=weight, priority=priority, indexed_at=indexed_at)


def test_rrf_reference():
    assert ranking.rrf(1) == pytest.approx(1 / 61)
    assert ranking.rrf(10, k=60) == pytest.approx(1 / 70)


def hit(p: Passage, score: float, rank: int) -> Hit:
    return Hit(ref=PassageRef.of(p), score=score, rank=rank, passage=p)


def test_single_list_score_is_bm25_times_weight():
    cands = ranking.fuse({"lexical": [hit(psg("a", weight=1.2), 5.0, 1), hit(psg("b"), 5.5, 2)]})
    scores = {c.passage.id: c.score for c in cands}
    assert scores == {"a": pytest.approx(6.0), "b": pytest.approx(5.5)}
    assert all(c.reason == "lexical" for c in cands)


def test_one_list_candidates_carry_the_same_signals_as_a_merge() -> None:
    a, b = psg("a", weight=1.2), psg("b")
    alone = ranking.fuse({"lexical": [hit(a, 5.0, 1), hit(b, 5.5, 2)], "semantic": []})
    assert [c.signals for c in alone] == [
        {"lexicalRank": 1, "semanticRank": None, "rrf": round(1 / 61, 6), "weight": 1.2, "lexicalScore": 5.0},
        {"lexicalRank": 2, "semanticRank": None, "rrf": round(1 / 62, 6), "weight": 1.0, "lexicalScore": 5.5},
    ]
    assert [len(c.hits) for c in alone] == [1, 1]
    # a list naming one passage twice (two vector spaces) still yields one candidate for it
    twice = ranking.fuse({"semantic": [hit(a, 0.9, 1), hit(a, 0.8, 2), hit(b, 0.7, 3)]})
    assert sorted(c.passage.id for c in twice if c.passage) == ["a", "b"]
    assert next(c for c in twice if c.passage and c.passage.id == "a").rrf == pytest.approx(1 / 61 + 1 / 62)


def test_two_lists_fuse_by_rank_not_score():
    a, b, c = psg("a"), psg("b"), psg("c")
    cands = ranking.fuse({
        "lexical": [hit(a, 1000.0, 1), hit(b, 1.0, 2)],
        "semantic": [hit(b, 0.9, 1), hit(c, 0.8, 2)],
    })
    by = {x.passage.id: x for x in cands}
    assert by["b"].score == pytest.approx(1 / 62 + 1 / 61)
    assert by["a"].score == pytest.approx(1 / 61)
    assert by["b"].reason == "hybrid" and by["a"].reason == "lexical" and by["c"].reason == "semantic"
    assert by["b"].signals["lexicalRank"] == 2 and by["b"].signals["semanticRank"] == 1


def test_lift_reorders_by_the_boosted_score_and_renumbers_ranks():
    a, b, c = psg("a"), psg("b"), psg("c")
    hits = [hit(a, 10.0, 1), hit(b, 6.0, 2), hit(c, 5.0, 3)]
    # b: 6 * (1 + 3 * 0.5) = 15 > a: 10; c: 5 * (1 + 3 * 0.2) = 8
    lifted = ranking.lift(hits, {PassageRef.of(b).key: 0.5, PassageRef.of(c).key: 0.2}, 3.0)
    assert [(h.passage.id, h.rank) for h in lifted] == [("b", 1), ("a", 2), ("c", 3)]
    assert [h.score for h in lifted] == [pytest.approx(15.0), 10.0, pytest.approx(8.0)]
    assert [(h.rank, h.score) for h in hits] == [(1, 10.0), (2, 6.0), (3, 5.0)]  # the list given is as it was
    # equal boosted scores keep their order; no match or no boost: the list as it was
    tied = [hit(a, 4.0, 1), hit(b, 2.0, 2)]
    assert [h.passage.id for h in ranking.lift(tied, {PassageRef.of(b).key: 1 / 3}, 3.0)] == ["a", "b"]
    assert ranking.lift(hits, {}, 3.0) == hits and ranking.lift(hits, {PassageRef.of(b).key: 1.0}, 0.0) == hits


def test_a_lifted_lexical_list_fuses_by_its_new_ranks():
    a, b, s = psg("a"), psg("b"), psg("s")
    lexical = ranking.lift([hit(a, 10.0, 1), hit(b, 6.0, 2)], {PassageRef.of(b).key: 1.0}, 3.0)
    by = {x.passage.id: x for x in ranking.fuse({"lexical": lexical, "semantic": [hit(s, 0.9, 1)]})}
    assert by["b"].rrf == pytest.approx(1 / 61) and by["a"].rrf == pytest.approx(1 / 62)


def test_blend_reference():
    a, b, c, d = psg("a"), psg("b"), psg("c"), psg("d")
    lexical = [hit(a, 8.0, 1), hit(b, 4.0, 2)]  # not full (limit 3): a passage it lacks matched nothing
    semantic = [hit(b, 0.8, 1), hit(c, 0.6, 2), hit(b, 0.5, 3)]  # full (limit 3); b twice: its better score
    got = ranking.blend({"lexical": lexical, "semantic": semantic}, {"lexical": 0.25, "semantic": 0.75},
                        {"lexical": 3, "semantic": 3})
    key = {x.id: PassageRef.of(x).key for x in (a, b, c, d)}
    assert got == {
        key["a"]: pytest.approx(0.25 * 1.0 + 0.75 * 0.5 / 0.8),  # semantic missed it: the lowest it holds
        key["b"]: pytest.approx(0.25 * 0.5 + 0.75 * 1.0),
        key["c"]: pytest.approx(0.25 * 0.0 + 0.75 * 0.6 / 0.8),
    }


def test_a_list_without_a_positive_score_adds_nothing_to_a_blend():
    a, b = psg("a"), psg("b")
    got = ranking.blend({"lexical": [hit(a, 2.0, 1)], "semantic": [hit(b, -0.1, 1), hit(a, -0.3, 2)]},
                        {"lexical": 0.5, "semantic": 0.5}, {})
    assert got == {PassageRef.of(a).key: pytest.approx(0.5), PassageRef.of(b).key: 0.0}


def test_a_blend_lets_a_strong_score_beat_a_rank():
    a, b, c = psg("a", weight=2.0), psg("b"), psg("c")
    lists = {"lexical": [hit(a, 10.0, 1), hit(b, 9.5, 2)], "semantic": [hit(c, 0.9, 1), hit(b, 0.88, 2)]}
    by_rank = {x.passage.id: x for x in ranking.fuse(lists)}
    assert by_rank["b"].score > by_rank["c"].score and by_rank["b"].score > by_rank["a"].score / 2
    blended = {x.passage.id: x for x in ranking.fuse(lists, shares={"lexical": 0.5, "semantic": 0.5},
                                                      limits={"lexical": 2, "semantic": 2})}
    # b: 0.5 * 0.95 + 0.5 * 0.88 / 0.9; a (weight 2): 2 * (0.5 * 1 + 0.5 * 0.88 / 0.9)
    assert blended["b"].score == pytest.approx(0.5 * 0.95 + 0.5 * 0.88 / 0.9)
    assert blended["a"].score == pytest.approx(2 * (0.5 + 0.5 * 0.88 / 0.9))
    assert blended["b"].signals["blendScore"] == pytest.approx(blended["b"].score, abs=1e-6)
    assert blended["b"].rrf == pytest.approx(1 / 62 + 1 / 62) and blended["b"].reason == "hybrid"
    # one list alone is its own scores, shares or not
    alone = ranking.fuse({"lexical": lists["lexical"], "semantic": []}, shares={"lexical": 0.5, "semantic": 0.5})
    assert [x.score for x in alone] == [pytest.approx(20.0), pytest.approx(9.5)]


def test_together_reference():
    terms = analysis.terms("credit card fees")  # ["credit", "card", "fee"]: two neighbouring pairs
    assert ranking.together("Credit card fees are listed below.", terms, 25) == 1.0
    # "credit card" together, "card ... fees" 40 characters apart: one pair of two
    text = "Pay by credit card. " + "x" * 20 + " The fees are listed below."
    assert ranking.together(text, terms, 25) == 0.5
    assert ranking.together(text, terms, 60) == 1.0
    assert ranking.together("fees for a card", terms, 25) == 0.5  # either order; "credit" is missing
    assert ranking.together("credit card", ["credit"], 25) == 0.0  # one term: no pair
    # by stem, not by prefix: "warranties" is the term "warranti"
    assert ranking.together("Warranties and delivery", analysis.terms("warranty delivery"), 25) == 1.0


def test_ties_break_by_priority_then_recency():
    now = 10_000_000.0
    old, new = now - 40 * 86400, now - 86400
    cands = ranking.fuse({"lexical": [
        hit(psg("low-old", priority=0, indexed_at=old), 2.0, 1),
        hit(psg("low-new", priority=0, indexed_at=new), 2.0, 2),
        hit(psg("high-old", priority=5, indexed_at=old), 2.0, 3),
        hit(psg("best", priority=-100, indexed_at=old), 2.5, 4),
    ]})
    priorities = {key64(c.passage.source_id): c.passage.priority for c in cands}
    ordered = ranking.order(cands, priorities=priorities, now=now, recency_seconds=30 * 86400)
    assert [c.passage.id for c in ordered] == ["best", "high-old", "low-new", "low-old"]


def test_priority_never_beats_a_better_match():
    cands = ranking.fuse({"lexical": [hit(psg("vip", priority=100), 3.0, 2), hit(psg("good"), 3.5, 1)]})
    priorities = {key64("s-vip"): 100}
    assert [c.passage.id for c in ranking.order(cands, priorities=priorities, now=0, recency_seconds=1)] == [
        "good", "vip"]


def test_collapse_drops_neighbours_of_better_fragments():
    order = [psg("d1-3", doc="d1", ordinal=3), psg("d1-4", doc="d1", ordinal=4), psg("d2-4", doc="d2", ordinal=4),
             psg("d1-7", doc="d1", ordinal=7), psg("d1-2", doc="d1", ordinal=2), psg("d1-5", doc="d1", ordinal=5),
             psg("d1-6", doc="d1", ordinal=6)]
    kept = ranking.collapse([ranking.Candidate(PassageRef.of(p), 1.0, "lexical", hits=[hit(p, 1.0, 1)])
                             for p in order])
    # 4 and 2 neighbour kept 3; 6 neighbours kept 7; 5 neighbours only dropped 4 and 6, so it stays
    assert [c.passage.id for c in kept] == ["d1-3", "d2-4", "d1-7", "d1-5"]


def test_excerpt_short_passage_is_whole():
    p = psg("a", crumb="P › S", text="P › S\n\nshort body")
    assert ranking.excerpt(p, ["short"], 800) == "P › S\n\nshort body"


def test_excerpt_window_holds_the_match_and_respects_the_limit():
    filler = " ".join(f"Filler sentence number {i}." for i in range(200))
    body = filler + " The unicorn appears here. " + filler
    p = psg("a", crumb="P › S", text="P › S\n\n" + body)
    out = ranking.excerpt(p, ["unicorn"], 800)
    assert len(out) <= 800
    assert out.startswith("P › S\n\n…")
    assert "unicorn" in out
    # the window starts at the sentence holding the match, not mid-word
    assert out.split("…", 1)[1].startswith(("The unicorn", "Filler"))


def test_excerpt_prefers_the_window_with_most_distinct_terms():
    body = ("alpha " * 50) + ("filler " * 300) + "alpha beta gamma " + ("filler " * 300)
    p = psg("a", crumb="C", text="C\n\n" + body)
    out = ranking.excerpt(p, ["alpha", "beta", "gamma"], 400)
    assert "beta gamma" in out and len(out) <= 400


def test_best_window_reference():
    # reference: try every match as a start, count distinct terms inside
    import random

    rng = random.Random(3)
    for _ in range(200):
        matches = sorted((rng.randrange(2000), rng.choice("abcdef")) for _ in range(rng.randrange(0, 30)))
        width = rng.randrange(50, 600)
        expected_best = max((len({t for p, t in matches if s <= p < s + width}) for s, _ in matches), default=0)
        start = ranking.best_window(matches, width)
        got = len({t for p, t in matches if start <= p < start + width})
        assert got == expected_best


def test_term_positions_match_word_starts_case_insensitively():
    text = "Withdrawals need confirmations; reconfirm later"
    assert ranking.term_positions(text, ["withdraw", "confirm"]) == [(0, "withdraw"), (17, "confirm")]
    assert ranking.term_positions(text, []) == []


def test_window_start_equals_the_full_scan():
    # the shortcut (every term's first word-start inside one window) against listing every match
    import random

    rng = random.Random(11)
    words = ["withdraw", "withdrawal", "with", "monero", "xmr", "Fee", "fees", "confirm", "reconfirm", "a", "—",
             "İstanbul", "ǅemal", "x1", "1x"]
    for _ in range(3_000):
        text = " ".join(rng.choice(words) + rng.choice(["", ".", ",", "\n", "-"]) for _ in range(rng.randrange(0, 120)))
        terms = [t.lower() for t in rng.sample(words, rng.randrange(0, 5))] + rng.choice([[], [""]])
        width = rng.randrange(1, 400)
        assert ranking.window_start(text, terms, width) == ranking.best_window(ranking.term_positions(text, terms),
                                                                              width), (text, terms, width)


def test_ranked_is_fuse_order_collapse_taken_one_by_one():
    import random

    rng = random.Random(5)

    def view(c: ranking.Candidate) -> tuple:
        return (c.ref, c.score, c.reason, c.ranks, c.raw, c.rrf, c.recent, c.signals, [id(h) for h in c.hits])

    for _ in range(400):
        def hits(n: int) -> list[Hit]:
            out = []
            for rank in range(1, n + 1):
                # few documents, ordinals and scores: neighbours, ties and repeats are common
                ref = PassageRef(key=rng.randrange(40), source_key=rng.randrange(3), doc_key=rng.randrange(4),
                                 ordinal=rng.randrange(6), weight=rng.choice([0.5, 1.0, 2.0]),
                                 indexed_at=rng.choice([0.0, 990.0]))
                out.append(Hit(ref, rng.choice([1.0, 2.0, 3.5]), rank))
            return out

        lists = {"lexical": hits(rng.randrange(0, 30)),
                 "semantic": hits(rng.randrange(0, 3)) if rng.random() < .3 else []}
        if rng.random() < 0.7:  # mostly a single list of distinct passages, the path built lazily
            seen: set[int] = set()
            lists["lexical"] = [h for h in lists["lexical"] if not (h.ref.key in seen or seen.add(h.ref.key))]
        kw = {"priorities": {0: 0, 1: 5, 2: -1}, "now": 1000.0, "recency_seconds": 60.0}
        want = ranking.collapse(ranking.order(ranking.fuse(lists), **kw))
        assert [view(c) for c in ranking.ranked(lists, **kw)] == [view(c) for c in want]


def test_terms_are_found_by_stem_not_by_prefix():
    # Snowball stems that are not prefixes of their words: warranty -> warranti, hoping -> hope
    text = "Our warranty policy covers delivery. We are hoping to help; Policies differ."
    terms = analysis.terms("warranty policy delivery hoping")
    assert terms == ["warranti", "polici", "deliveri", "hope"]
    found = ranking.term_positions(text, terms)
    assert [(text[i:i + 8], t) for i, t in found] == [
        ("warranty", "warranti"), ("policy c", "polici"), ("delivery", "deliveri"), ("hoping t", "hope"),
        ("Policies", "polici")]
    # a prefix that is another word is not a match: "pay" is not in "payment", "hope" not in "hopeless"
    assert ranking.term_positions("payment and hopeless", ["pay", "hope"]) == []


def test_camel_case_parts_are_words():
    text = "Set startWithVideoMuted or HTTPServer."
    found = ranking.term_positions(text, analysis.terms("video muted server"))
    assert [(text[i:i + 5], t) for i, t in found] == [("Video", "video"), ("Muted", "mute"), ("Serve", "server")]


def test_a_long_passage_window_holds_a_term_whose_stem_is_not_a_prefix():
    filler = " ".join(f"Filler sentence number {i}." for i in range(200))
    p = psg("a", crumb="P", text="P\n\n" + filler + " The tapestry hangs in the hall. " + filler)
    out = ranking.excerpt(p, analysis.terms("tapestry"), 800)
    assert "tapestry" in out and len(out) <= 800


def test_together_counts_only_words_and_only_the_first_occurrences():
    terms = analysis.terms("card fees")
    # "cardinal" holds the key of "card" but is another word: no pair beside "fees"
    assert ranking.together("cardinal fees", terms, 25) == 0.0
    assert ranking.together("Cards: fees", terms, 25) == 1.0
    # the only "card" near "fees" is the 33rd: each term counts its first 32 occurrences
    far = "card " + "x " * 40
    text = far * ranking.NEAR_OCCURRENCES + "card fees"
    assert ranking.together(text, terms, 25) == 0.0
    assert ranking.together(far * (ranking.NEAR_OCCURRENCES - 1) + "card fees", terms, 25) == 1.0
