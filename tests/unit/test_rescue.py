"""Corpus-learned rescue (issue 5, reference 000 "Words the customer did not use").

Every corpus here is generated (seeded). The usual shape: a dozen topics with their own
words, each passage drawing several words from its topic plus a couple of "noise" words
that appear all over the corpus without any topic, plus a word in every passage.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np
import pytest

import knowledge.retrieve.rescue as rescue_mod
from knowledge.errors import BackendError
from knowledge.retrieve.rescue import (
    MAX_DF_SHARE,
    MIN_DF,
    MIN_PASSAGES,
    MIN_TERMS,
    SIMILARITY_FLOOR,
    RescueModel,
)

pytestmark = pytest.mark.timeout(120)

Passage = tuple[int, str, str]


def analyze(text: str) -> list[str]:
    return text.lower().split()


def anyone(_key: int) -> bool:
    return True


TOPICS = 12
TOPIC_WORDS = 10


def topic_word(topic: int, j: int) -> str:
    return f"t{topic}w{j}"


def make_corpus(
    n: int = 240,
    *,
    seed: int = 1,
    bridge: dict[str, tuple[int, str]] | None = None,
    visibility: Callable[[int], str] = lambda i: "operator" if (i // TOPICS) % 2 else "public",
) -> tuple[list[Passage], dict[int, int]]:
    """``n`` passages over TOPICS topics; returns the passages and key -> topic.

    ``bridge`` maps an extra word to (topic, visibility): the word is added to the first
    four passages of that topic and visibility, and appears nowhere else.
    """
    rng = random.Random(seed)
    passages: list[Passage] = []
    topic_of: dict[int, int] = {}
    placed: dict[str, int] = {}
    for i in range(n):
        topic = i % TOPICS
        vis = visibility(i)
        words = [topic_word(topic, rng.randrange(TOPIC_WORDS)) for _ in range(8)]
        words += [f"noise{rng.randrange(300)}" for _ in range(3)]
        words.append("every")  # in all passages: far above the 18% cap
        if i % 10 < 3:
            words.append("often")  # in 30% of passages, across all topics: above the cap
        for word, (b_topic, b_vis) in (bridge or {}).items():
            if topic == b_topic and vis == b_vis and placed.get(word, 0) < 4:
                words.append(word)
                placed[word] = placed.get(word, 0) + 1
        key = 10_000 + i * 37
        passages.append((key, vis, " ".join(words)))
        topic_of[key] = topic
    return passages, topic_of


def term_listed_model(monkeypatch: pytest.MonkeyPatch, seed: int) -> tuple[RescueModel, list[Passage]]:
    """A model over 600 generated passages that answers from per-term lists of 40 (the large-
    corpus search, forced on a small corpus), and its passages."""
    monkeypatch.setattr(rescue_mod, "_EXACT_SCAN_MAX", 0)
    monkeypatch.setattr(rescue_mod, "_TERM_LIST", 40)
    passages, _ = make_corpus(600, seed=seed)
    return RescueModel.build(passages, analyze), passages


def texts(passages: Sequence[Passage]) -> dict[int, str]:
    return {k: t for k, _, t in passages}


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Passage], dict[int, int], RescueModel]:
    passages, topic_of = make_corpus(bridge={"cash": (3, "public")})
    return passages, topic_of, RescueModel.build(passages, analyze)


# -- the bridge ------------------------------------------------------------------------------


def test_learns_a_vocabulary_bridge_from_co_occurrence() -> None:
    # "cash" only ever appears beside topic-3 words, in four passages. Word matching finds
    # those four; the rescue brings a topic-3 passage that never says "cash".
    passages, topic_of = make_corpus(bridge={"cash": (3, "public")})
    model = RescueModel.build(passages, analyze)
    body = texts(passages)
    lexical = [k for k in body if "cash" in body[k].split()]
    assert len(lexical) == 4
    found = model.rescue(["cash"], lexical, anyone)
    assert found is not None
    key, similarity = found
    assert topic_of[key] == 3
    assert "cash" not in body[key].split()
    assert similarity >= SIMILARITY_FLOOR

    # the same word taught beside topic 7 instead leads to topic 7: it is what the corpus
    # shows, not the word itself
    passages7, topic_of7 = make_corpus(bridge={"cash": (7, "public")})
    body7 = texts(passages7)
    found7 = RescueModel.build(passages7, analyze).rescue(
        ["cash"], [k for k in body7 if "cash" in body7[k].split()], anyone
    )
    assert found7 is not None and topic_of7[found7[0]] == 7


def test_cash_out_rescues_a_withdraw_passage_that_lexical_ranked_low() -> None:
    # a realistic shape with the index's own analyser: the withdrawal pages say "withdraw",
    # a few of them also say "cash out"; the deposit pages are what word matching returns.
    from knowledge.adapters.local.tantivy_index import build_analyzer

    rng = random.Random(7)
    money_out = ["withdraw", "withdrawal", "payout", "wallet", "address", "confirm", "network", "fee"]
    money_in = ["deposit", "incoming", "credited", "confirmations", "address", "wallet", "topup", "fund"]
    passages: list[Passage] = []
    for i in range(400):
        kind = i % 10
        if kind == 0:
            words = rng.sample(money_out, 5) + (["cash", "out"] if i % 40 == 0 else [])
        elif kind == 1:
            words = [*rng.sample(money_in, 5), "out"]
        else:
            words = [f"topic{kind}word{rng.randrange(12)}" for _ in range(6)]
        words += [f"misc{rng.randrange(500)}" for _ in range(4)] + ["the", "your", "out"] * (i % 2)
        passages.append((i + 1, "public", " ".join(words)))
    an = build_analyzer().analyze
    model = RescueModel.build(passages, an)
    assert model.enabled
    body = {k: set(an(t)) for k, _, t in passages}
    query = an("How do I cash out my monero")
    # word matching ranked deposit pages (they share "out") ahead of everything else
    lexical = [k for k in body if "deposit" in body[k]][:5] + [k for k in body if "cash" in body[k]]
    found = model.rescue(query, lexical, anyone)
    assert found is not None
    assert "withdraw" in body[found[0]]
    assert found[0] not in lexical[:5]


# -- what it may return ----------------------------------------------------------------------


def test_no_rescue_when_word_matching_found_nothing(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, _, model = corpus
    assert model.rescue(["cash"], [passages[0][0]], anyone) is not None
    assert model.rescue(["cash"], [], anyone) is None
    assert model.rescue(["cash"], (), anyone) is None


def test_at_most_one_passage(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, topic_of, model = corpus
    query = [topic_word(5, j) for j in range(3)]
    # many passages of topic 5 are above the floor: still exactly one (key, score) comes back
    many_above = [k for k in topic_of if topic_of[k] == 5]
    assert len(many_above) > 5
    found = model.rescue(query, [passages[0][0]], anyone)
    assert found is not None
    key, score = found
    assert isinstance(key, int) and isinstance(score, float)
    assert topic_of[key] == 5


def test_similarity_floor_respected(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, _, model = corpus
    # known terms, one from each of many topics: similar to everything a little, to nothing much
    scattered = [topic_word(t, 0) for t in range(TOPICS)]
    lexical = [passages[0][0]]
    assert model.rescue(scattered, lexical, anyone) is None
    low = model.rescue(scattered, lexical, anyone, floor=0.05)
    assert low is not None and low[1] < SIMILARITY_FLOOR
    # and a focused question clears it
    focused = model.rescue([topic_word(2, 1), topic_word(2, 4)], lexical, anyone)
    assert focused is not None and focused[1] >= SIMILARITY_FLOOR


def test_unknown_terms_rescue_nothing(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, _, model = corpus
    assert model.rescue(["neverseen", "nowhere"], [passages[0][0]], anyone, floor=-1.0) is None


def test_never_a_passage_already_in_the_lexical_top_five(
    corpus: tuple[list[Passage], dict[int, int], RescueModel],
) -> None:
    passages, _, model = corpus
    query = [topic_word(4, 2), topic_word(4, 6)]
    other = passages[1][0]
    first = model.rescue(query, [other], anyone)
    assert first is not None
    best = first[0]
    # the best match sits in the lexical top five: something else comes back
    for rank in range(5):
        lexical = [other] * rank + [best] + [other] * (4 - rank)
        again = model.rescue(query, lexical, anyone)
        assert again is not None and again[0] != best
    # found by word matching at rank six: it may be rescued (the caller de-duplicates)
    assert model.rescue(query, [other] * 5 + [best], anyone) == first
    # with a wider top it is excluded again
    widened = model.rescue(query, [other] * 5 + [best], anyone, top=6)
    assert widened is not None and widened[0] != best


def test_only_passages_the_audience_allows(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, topic_of, model = corpus
    query = [topic_word(6, 0), topic_word(6, 3)]
    lexical = [passages[0][0]]
    best = model.rescue(query, lexical, anyone)
    assert best is not None
    best_vis = model.visibility(best[0])
    assert best_vis in ("public", "operator")

    def customer(key: int) -> bool:
        return model.visibility(key) != "operator"

    def operator_only(key: int) -> bool:
        return model.visibility(key) == "operator"

    # whichever audience the best match belongs to, the other audience gets the next allowed
    other_side = operator_only if best_vis == "public" else customer
    nxt = model.rescue(query, lexical, other_side)
    assert nxt is not None and nxt[0] != best[0]
    assert other_side(nxt[0]) and topic_of[nxt[0]] == 6
    assert nxt[1] <= best[1]
    # the best a customer may see, when the best overall is an operator passage
    as_customer = model.rescue(query, lexical, customer)
    assert as_customer is not None and model.visibility(as_customer[0]) == "public"
    # an audience that may see none of it gets nothing
    assert model.rescue(query, lexical, lambda _k: False) is None


def test_learns_from_both_audiences_returns_the_askers() -> None:
    # "cash" is taught only by operator pages of topic 3; a customer asking in those words
    # is given a customer page of topic 3.
    passages, topic_of = make_corpus(bridge={"cash": (3, "operator")})
    body = texts(passages)
    vis = {k: v for k, v, _ in passages}
    assert {vis[k] for k in body if "cash" in body[k].split()} == {"operator"}
    model = RescueModel.build(passages, analyze)

    def customer(key: int) -> bool:
        return vis[key] == "public"

    found = model.rescue(["cash"], [passages[0][0]], customer)
    assert found is not None
    assert vis[found[0]] == "public" and topic_of[found[0]] == 3
    # a space learnt from the customer half alone has never seen the word
    customer_only = RescueModel.build([p for p in passages if p[1] == "public"], analyze)
    assert customer_only.enabled
    assert customer_only.rescue(["cash"], [passages[0][0]], customer) is None


# -- when it is off, and which terms count ---------------------------------------------------


def pair_corpus(n_passages: int, n_terms: int) -> list[Passage]:
    """Term j occurs in exactly two passages (j and j+1, cyclically), so every term is
    usable and there are exactly ``n_terms`` of them."""
    words: list[list[str]] = [[] for _ in range(n_passages)]
    for j in range(n_terms):
        words[j % n_passages].append(f"term{j}")
        words[(j + 1) % n_passages].append(f"term{j}")
    return [(i, "public", " ".join(w)) for i, w in enumerate(words)]


def test_off_below_the_minimum_passages() -> None:
    assert MIN_PASSAGES == 50
    small = RescueModel.build(pair_corpus(MIN_PASSAGES - 1, 300), analyze)
    assert not small.enabled
    assert small.stats["passages"] == 49 and small.stats["dims"] == 0
    assert small.rescue(["term3"], [0], anyone, floor=-1.0) is None
    enough = RescueModel.build(pair_corpus(MIN_PASSAGES, 300), analyze)
    assert enough.enabled
    assert enough.rescue(["term3"], [0], anyone, floor=-1.0) is not None


def test_off_below_the_minimum_usable_terms() -> None:
    assert MIN_TERMS == 100
    few = RescueModel.build(pair_corpus(60, MIN_TERMS - 1), analyze)
    assert not few.enabled and few.stats["terms"] == 99
    assert few.rescue(["term3"], [0], anyone, floor=-1.0) is None
    enough = RescueModel.build(pair_corpus(60, MIN_TERMS), analyze)
    assert enough.enabled and enough.stats["terms"] == 100


def test_term_document_frequency_bounds() -> None:
    assert MAX_DF_SHARE == 0.18 and MIN_DF == 2
    base = pair_corpus(100, 200)
    extra = {
        "over": range(19),  # 19% of passages: excluded
        "edge": range(18),  # exactly 18%: kept
        "single": range(1),  # one passage: excluded
        "pair": range(2),  # two passages: kept
        "everywhere": range(100),
    }
    passages = [
        (k, v, t + " " + " ".join(w for w, where in extra.items() if k in where)) for k, v, t in base
    ]
    model = RescueModel.build(passages, analyze)
    assert model.stats["terms"] == 200 + 2
    for term in ("over", "single", "everywhere"):
        assert model.rescue([term], [99], anyone, floor=-1.0) is None, term
    for term in ("edge", "pair"):
        assert model.rescue([term], [99], anyone, floor=-1.0) is not None, term


def test_a_word_in_every_passage_creates_no_similarity(
    corpus: tuple[list[Passage], dict[int, int], RescueModel],
) -> None:
    passages, topic_of, model = corpus
    lexical = [passages[0][0]]
    # "every" is in all passages: as a question it knows nothing
    assert model.rescue(["every"], lexical, anyone, floor=-1.0) is None
    # added to a topic question it changes nothing
    query = [topic_word(8, 1), topic_word(8, 5)]
    assert model.rescue([*query, "every", "every"], lexical, anyone) == model.rescue(query, lexical, anyone)
    # "often" (30% of passages, every topic) is excluded too; with the cap lifted it would
    # be a known term pulling passages of unrelated topics together
    assert model.rescue(["often"], lexical, anyone, floor=-1.0) is None
    lifted = make_corpus(bridge={"cash": (3, "public")})[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rescue_mod, "MAX_DF_SHARE", 0.5)
        loose = RescueModel.build(lifted, analyze)
    assert loose.stats["terms"] == model.stats["terms"] + 1
    spread = set()
    excluded: list[int] = [passages[0][0]]
    for _ in range(5):
        hit = loose.rescue(["often"], excluded[-5:] or lexical, anyone, floor=-1.0)
        assert hit is not None
        spread.add(topic_of[hit[0]])
        excluded.append(hit[0])
    assert len(spread) > 1


# -- bookkeeping -----------------------------------------------------------------------------


def test_visibility_is_stored_per_key(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, _, model = corpus
    for key, vis, _ in passages[:20]:
        assert model.visibility(key) == vis
    assert model.visibility(1) is None
    # one dimension per eight passages, below the requested 128
    assert model.stats == {"passages": len(passages), "terms": model.stats["terms"], "dims": len(passages) // 8}
    assert model.stats["terms"] >= MIN_TERMS


def test_bytes_round_trip(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    passages, _, model = corpus
    data = model.to_bytes()
    again = RescueModel.from_bytes(data)
    assert again.enabled and again.stats == model.stats
    queries = [[topic_word(t, t % TOPICS), topic_word(t, 9)] for t in range(TOPICS)] + [["cash"]]
    for query in queries:
        for allowed in (anyone, lambda k: again.visibility(k) == "public"):
            assert again.rescue(query, [passages[0][0]], allowed) == model.rescue(query, [passages[0][0]], allowed)
    for key, vis, _ in passages:
        assert again.visibility(key) == vis
    off = RescueModel.from_bytes(RescueModel.build(pair_corpus(30, 300), analyze).to_bytes())
    assert not off.enabled and off.stats == {"passages": 30, "terms": 300, "dims": 0}
    assert off.rescue(["term1"], [0], anyone, floor=-1.0) is None


def test_damaged_bytes_raise_backend_error(corpus: tuple[list[Passage], dict[int, int], RescueModel]) -> None:
    data = corpus[2].to_bytes()
    for bad in (b"", b"not a model", data[: len(data) // 2]):
        with pytest.raises(BackendError) as err:
            RescueModel.from_bytes(bad)
        assert err.value.code == "internal_error"
    # a blob holding a pickled object is refused, not unpickled
    import io

    buf = io.BytesIO()
    np.savez(buf, header=np.array([object()], dtype=object))
    with pytest.raises(BackendError):
        RescueModel.from_bytes(buf.getvalue())


def test_deterministic() -> None:
    passages, _ = make_corpus(seed=3)
    a = RescueModel.build(passages, analyze)
    b = RescueModel.build(iter(passages), analyze)
    assert np.array_equal(a._passage_vectors, b._passage_vectors)
    assert np.array_equal(a._term_vectors, b._term_vectors)
    for t in range(TOPICS):
        query = [topic_word(t, 1), topic_word(t, 2)]
        first = a.rescue(query, [passages[0][0]], anyone)
        assert first is not None
        assert first == a.rescue(query, [passages[0][0]], anyone) == b.rescue(query, [passages[0][0]], anyone)
    # the seed is what varies the random projection
    c = RescueModel.build(passages, analyze, seed=1)
    assert not np.array_equal(a._passage_vectors, c._passage_vectors)


def test_duplicate_keys_are_refused() -> None:
    passages = pair_corpus(60, 200)
    with pytest.raises(ValueError):
        RescueModel.build([*passages, passages[3]], analyze)


def test_large_corpus_two_stage_search_agrees_with_the_exact_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # the per-term lists used above _EXACT_SCAN_MAX passages, forced on a small corpus
    passages, topic_of = make_corpus(600, seed=5)
    exact = RescueModel.build(passages, analyze)
    monkeypatch.setattr(rescue_mod, "_EXACT_SCAN_MAX", 0)
    monkeypatch.setattr(rescue_mod, "_TERM_LIST", 40)
    monkeypatch.setattr(rescue_mod, "_TERM_BLOCK_CELLS", 7 * 600)  # blocks of 7 terms when learning the lists
    staged = RescueModel.from_bytes(exact.to_bytes())
    assert staged._term_lists is not None and exact._term_lists is None
    assert staged._term_lists.shape == (len(staged._terms), 40)
    lexical = [passages[0][0]]
    far = {k for k, _, _ in passages[-60:]}

    def far_only(key: int) -> bool:
        return key in far

    agree = fell_back = 0
    for t in range(TOPICS):
        query = [topic_word(t, 0), topic_word(t, 7)]
        probe = staged.probe(query)
        assert probe is not None and probe.pool is not None
        assert probe.pool.size <= 2 * 40  # only the terms' lists are scored, at most whole
        want = exact.rescue(query, lexical, anyone)
        got = staged.rescue(query, lexical, anyone)
        assert got is not None and topic_of[got[0]] == t
        agree += want is not None and got[0] == want[0]
        # probing apart (before the lexical list is known) then picking gives the same
        assert staged.pick(probe, lexical, anyone) == got
        # an audience that refuses everything in the pool falls back to the full scan
        fallback = staged.rescue(query, lexical, far_only)
        full = exact.rescue(query, lexical, far_only)
        assert (fallback is None) == (full is None)
        if fallback is not None and full is not None:
            assert fallback[0] == full[0] and fallback[1] == pytest.approx(full[1], abs=1e-5)
            fell_back += 1
    assert agree >= TOPICS - 1
    assert fell_back >= TOPICS // 2
    # the lists are stored: a reloaded model scores the same pool and answers the same
    again = RescueModel.from_bytes(staged.to_bytes())
    assert again._term_lists is not None and np.array_equal(again._term_lists, staged._term_lists)
    assert again.rescue([topic_word(3, 0)], lexical, anyone) == staged.rescue([topic_word(3, 0)], lexical, anyone)


def test_term_lists_hold_each_terms_nearest_passages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rescue_mod, "_EXACT_SCAN_MAX", 0)
    monkeypatch.setattr(rescue_mod, "_TERM_LIST", 16)
    passages, _ = make_corpus(400, seed=9)
    model = RescueModel.build(passages, analyze)
    lists = model._term_lists
    assert lists is not None
    vectors = model._passage_vectors
    for row in range(0, len(model._terms), 17):
        direction = model._term_vectors[row] / np.linalg.norm(model._term_vectors[row])
        sims = vectors @ direction
        kept = np.sort(sims[lists[row]])
        # nothing left out is more similar than the least similar passage kept
        assert np.sort(sims)[-16:] == pytest.approx(kept, abs=1e-5)
    # a damaged list (a position out of range) is relearned on load, not trusted
    blob = model.to_bytes()
    import io
    with np.load(io.BytesIO(blob)) as z:
        arrays = {name: z[name] for name in z.files}
    arrays["term_lists"] = np.full_like(arrays["term_lists"], 10_000)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    reloaded = RescueModel.from_bytes(buf.getvalue())
    assert reloaded._term_lists is not None and np.array_equal(reloaded._term_lists, lists)


def test_word_by_word_analysis_matches_the_index_analyser() -> None:
    # the build analyses each distinct whitespace-separated word once; that is only right if
    # the lexical index's analyser never joins tokens across whitespace
    from knowledge.adapters.local.tantivy_index import build_analyzer

    analyzer = build_analyzer()
    rng = random.Random(3)
    alphabet = [*"abcXYZ019 \t\n.,;:'\"-_/()[]{}!?@#", "é", "ß", "ﬁ", "İ", "\u0301", "\u00a0", "中", "\u2028"]
    texts = ["Withdrawals aren't instant: they're queued (usually ~30 min).", "e-mail re-sent; ＡＢＣ full-width"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80))) for _ in range(300)]
    for text in texts:
        by_word = [term for word in text.split() for term in analyzer.analyze(word)]
        assert by_word == analyzer.analyze(text), text


def recording_analyzer() -> tuple[list[str], Callable[[str], list[str]]]:
    """The test analyser, and the list of every text it was asked to analyse."""
    seen: list[str] = []

    def recorded(text: str) -> list[str]:
        seen.append(text)
        return analyze(text)

    return seen, recorded


def test_model_vocabulary_is_the_analysers_terms() -> None:
    passages, _ = make_corpus(240, seed=2)
    seen, spying = recording_analyzer()
    model = RescueModel.build(passages, spying)
    distinct_words = {w for _, _, text in passages for w in text.split()}
    assert len(seen) == len(distinct_words)  # each distinct word analysed exactly once
    assert set(model._terms) <= {t for w in distinct_words for t in analyze(w)}


def test_a_corpus_of_endless_distinct_words_keeps_the_memo_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rescue_mod, "_MEMO_WORDS", 10)
    passages, _ = make_corpus(240, seed=2)
    calls, counting = recording_analyzer()
    bounded = RescueModel.build(passages, counting)
    words = [w for _, _, text in passages for w in text.split()]
    assert len(calls) > len(set(words))  # past the bound, words are analysed again, not stored
    free = RescueModel.build(passages, analyze)
    assert bounded._terms == free._terms
    assert np.array_equal(bounded._passage_vectors, free._passage_vectors)


def test_the_bound_on_passages_outside_the_pool_holds_and_spares_the_full_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No passage outside a question's pool scores above the bound (so skipping the full
    scan below the floor is exact), and the bound is tight enough to skip it in practice."""
    model, passages = term_listed_model(monkeypatch, seed=11)
    rng = random.Random(3)
    vocabulary = [topic_word(t, w) for t in range(TOPICS) for w in range(TOPIC_WORDS)]
    below_floor = 0
    for _ in range(200):
        query = rng.sample(vocabulary, rng.randint(1, 4)) * rng.randint(1, 2)
        probe = model.probe(query)
        assert probe is not None and probe.pool is not None
        outside = np.setdiff1d(np.arange(len(passages)), probe.pool)
        best_outside = float((model._passage_vectors[outside] @ probe.q).max())
        assert best_outside <= probe.bound
        below_floor += probe.bound < rescue_mod.SIMILARITY_FLOOR
    assert below_floor >= 100


def test_a_pool_refused_whole_gives_what_the_exact_scan_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the bound deciding whether the full scan runs, picking stays exact."""
    model, passages = term_listed_model(monkeypatch, seed=5)
    lexical = [passages[0][0]]
    rng = random.Random(8)
    vocabulary = [topic_word(t, w) for t in range(TOPICS) for w in range(TOPIC_WORDS)]
    for _ in range(60):
        query = rng.sample(vocabulary, rng.randint(1, 3))
        probe = model.probe(query)
        assert probe is not None and probe.pool is not None
        pool = {int(model._keys[i]) for i in probe.pool}

        def outside(key: int, pool: set[int] = pool) -> bool:
            return key not in pool

        assert model.pick(probe, lexical, outside) == model.rescue(query, lexical, outside, exact=True)


def test_term_lists_are_each_terms_best_passages_best_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rescue_mod, "_EXACT_SCAN_MAX", 0)
    monkeypatch.setattr(rescue_mod, "_TERM_LIST", 40)
    monkeypatch.setattr(rescue_mod, "_TERM_BLOCK_CELLS", 5 * 600)  # several blocks of terms
    passages, _ = make_corpus(600, seed=2)
    model = RescueModel.build(passages, analyze)
    lists, scores = model._term_lists, model._term_scores
    assert lists is not None and scores is not None
    every = model._term_vectors @ model._passage_vectors.T  # (terms, passages)
    for t in range(len(model._terms)):
        assert np.allclose(scores[t], every[t, lists[t]], atol=1e-5)  # the scores are the term's own
        assert (np.diff(scores[t]) <= 0).all()  # best first
        assert len(set(lists[t].tolist())) == 40
        # nothing left out scores above the last one kept (ties aside)
        assert np.delete(every[t], lists[t]).max() <= scores[t, -1] + 1e-5


def test_reading_the_lists_only_as_deep_as_the_floor_needs_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe cut short of the lists' end finds, for any audience, what a scan of every
    passage finds; and it is cut short for most questions."""
    model, passages = term_listed_model(monkeypatch, seed=9)
    keys = [k for k, _, _ in passages]
    vocabulary = [topic_word(t, w) for t in range(TOPICS) for w in range(TOPIC_WORDS)]
    rng = random.Random(4)
    cut = 0
    for _ in range(150):
        query = rng.sample(vocabulary, rng.randint(1, 4))
        probe = model.probe(query)
        assert probe is not None and probe.pool is not None
        if probe.pool.size == len(probe.rows) * 40:
            continue  # read whole: the older two-stage search, tested above
        cut += 1
        assert probe.bound < SIMILARITY_FLOOR
        refused = set(rng.sample(keys, rng.randrange(0, 500)))
        lexical = rng.sample(keys, 5)

        def allowed(key: int, refused: set[int] = refused) -> bool:
            return key not in refused

        assert model.pick(probe, lexical, allowed) == model.rescue(query, lexical, allowed, exact=True)
    assert cut >= 75


def test_a_probe_cannot_pick_below_the_floor_it_was_cut_for(monkeypatch: pytest.MonkeyPatch) -> None:
    model, passages = term_listed_model(monkeypatch, seed=9)
    lexical = [passages[0][0]]
    probe = model.probe([topic_word(1, 1), topic_word(1, 2)])
    assert probe is not None and probe.bound < SIMILARITY_FLOOR  # cut short of the lists' end
    with pytest.raises(ValueError):
        model.pick(probe, lexical, anyone, floor=SIMILARITY_FLOOR - 0.1)
    # a higher floor is fine: everything above it is above the probe's
    for floor in (SIMILARITY_FLOOR, 0.7, 0.8, 0.9):
        want = model.rescue([topic_word(1, 1), topic_word(1, 2)], lexical, anyone, floor=floor, exact=True)
        assert model.pick(probe, lexical, anyone, floor=floor) == want


def test_stored_lists_out_of_order_are_learned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    model, _ = term_listed_model(monkeypatch, seed=9)
    assert model._term_lists is not None and model._term_scores is not None
    good_lists, good_scores = model._term_lists.copy(), model._term_scores.copy()
    model._term_scores = good_scores[:, ::-1].copy()  # worst first: the bound would be wrong
    model._term_lists = good_lists[:, ::-1].copy()
    again = RescueModel.from_bytes(model.to_bytes())
    assert again._term_lists is not None and again._term_scores is not None
    assert np.array_equal(again._term_scores, good_scores)
    assert np.array_equal(np.sort(again._term_lists, axis=1), np.sort(good_lists, axis=1))
