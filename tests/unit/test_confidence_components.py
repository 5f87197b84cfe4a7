"""The confidence's components, each against a small reference computation, and the logistic
combination: monotone in each weighted component, absent components drop out."""

from __future__ import annotations

import math

import pytest

from knowledge import analysis
from knowledge.retrieve import confidence as conf


def test_coverage_counts_known_terms_inside_one_span_by_idf():
    idf = {"warranti": 2.0, "polici": 1.0, "deliveri": 1.0, "zzz": None}
    terms = analysis.terms("warranty policy delivery")
    assert conf.coverage("Our warranty policy covers delivery.", terms, idf) == pytest.approx(1.0)
    far = "Our warranty is fine. " + "x " * 400 + "policy and delivery"
    assert conf.coverage(far, terms, idf) == pytest.approx(2.0 / 4.0)  # the best span holds warranty only
    # a term the corpus never saw is not counted here (the unseen component speaks for it)
    assert conf.coverage("warranty", ["warranti", "zzz"], idf) == pytest.approx(1.0)
    assert conf.coverage("text", ["zzz"], idf) is None


def test_strength_is_the_share_of_the_most_the_known_words_could_score():
    idf = {"a": 2.0, "b": 1.0, "zzz": None}
    assert conf.strength(3.3, ["a", "b", "zzz"], idf) == pytest.approx(3.3 / (2.2 * 3.0))
    assert conf.strength(100.0, ["a"], idf) == 1.0
    assert conf.strength(None, ["a"], idf) is None
    assert conf.strength(1.0, ["zzz"], idf) is None


def test_focus_compares_the_best_page_with_the_fifth():
    assert conf.focus([(1, 10.0), (1, 9.0), (2, 8.0), (3, 7.0), (4, 6.0), (5, 5.0), (6, 1.0)]) == pytest.approx(0.5)
    assert conf.focus([(1, 4.0), (2, 3.0)]) == 1.0  # fewer than five pages matched
    assert conf.focus([]) is None


def test_unseen_weighs_missing_terms_like_the_rarest_known():
    idf = {"a": 1.0, "b": 3.0, "x": None}
    assert conf.unseen(["a", "b", "x"], idf, rarest=4.0) == pytest.approx(4.0 / 8.0)
    assert conf.unseen(["a", "a"], idf, rarest=4.0) == 0.0
    assert conf.unseen(["x"], idf, rarest=4.0) == 1.0
    assert conf.unseen([], idf, rarest=4.0) is None


def test_rare_looks_for_the_rarest_known_words_anywhere_in_the_excerpt():
    idf = {"warranti": 3.0, "polici": 2.0, "deliveri": 1.0, "zzz": None}
    terms = analysis.terms("warranty policy delivery zzz")
    assert conf.rare("Our warranty policy.", terms, idf) == pytest.approx(1.0)  # delivery is not among the 2
    assert conf.rare("The policy covers delivery.", terms, idf) == pytest.approx(2.0 / 5.0)
    assert conf.rare("text", ["zzz"], idf) is None


def test_missing_is_the_most_telling_known_word_the_excerpt_lacks():
    idf = {"warranti": 3.0, "polici": 2.0, "deliveri": 1.0, "zzz": None}
    terms = analysis.terms("warranty policy delivery zzz")
    assert conf.missing("Our warranty policy covers delivery.", terms, idf, rarest=4.0) == 0.0
    assert conf.missing("The policy covers delivery.", terms, idf, rarest=4.0) == pytest.approx(3.0 / 4.0)
    assert conf.missing("nothing", terms, idf, rarest=2.0) == 1.0  # capped
    assert conf.missing("text", ["zzz"], idf, rarest=4.0) is None


def test_title_is_the_share_of_the_known_words_in_the_title_fields():
    idf = {"warranti": 3.0, "polici": 1.0, "zzz": None}
    assert conf.title({"warranti", "other"}, ["warranti", "polici", "zzz"], idf) == pytest.approx(3.0 / 4.0)
    assert conf.title(set(), ["warranti"], idf) == 0.0
    assert conf.title({"zzz"}, ["zzz"], idf) is None


def test_depth_is_focus_against_a_deeper_rank():
    pages = [(i, 10.0 - i) for i in range(10)]
    assert conf.focus(pages, depth=conf.DEPTH) == pytest.approx(1 - 1.0 / 10.0)
    assert conf.focus(pages[:9], depth=conf.DEPTH) == 1.0


#: the components that are evidence against an answer (every other one is evidence for it)
AGAINST = {"unseen", "missing"}


def test_every_fitted_weight_reads_as_its_component_means():
    models = [conf.WEIGHTS, *(weights for _, weights in conf.EMBEDDER_MODELS.values())]
    for weights in models:
        for name, weight in weights.items():
            assert (weight < 0) == (name in AGAINST), name


def test_score_is_the_fitted_logistic_and_monotone():
    base = dict(coverage=0.8, strength=0.5, focus=0.6, unseen=0.0, title=0.3, rare=0.5, depth=0.7, reach=0.5,
                missing=0.2, wig=0.3, matched=0.4, known=0.5)
    c = conf.Components(**base)
    z = conf.INTERCEPT + sum(w * getattr(c, name) for name, w in conf.WEIGHTS.items())
    assert conf.score(c) == pytest.approx(1 / (1 + math.exp(-z)))
    assert 0.0 < conf.score(c) < 1.0
    for component in conf.WEIGHTS:  # each weighted component moves the score the way its meaning says
        moved = conf.score(conf.Components(**{**base, component: base[component] + 0.1}))
        assert moved < conf.score(c) if component in AGAINST else moved > conf.score(c)
    unseen = {"unseen": 0.3, "reach": conf.known_share(base["strength"], 0.3)}  # the share reach leaves it
    assert conf.score(conf.Components(**{**base, **unseen})) < conf.score(c)  # an unseen word weighs against
    assert conf.score(conf.Components()) == 0.0  # no lexical evidence at all


def test_absent_components_drop_out(monkeypatch):
    base = conf.Components(coverage=0.8, strength=0.5, focus=0.6, unseen=0.0)
    with_embedder = conf.Components(coverage=0.8, strength=0.5, focus=0.6, unseen=0.0, agreement=0.4, rescue=0.7)
    assert conf.score(with_embedder) == conf.score(base)  # not fitted yet: shown, no effect
    monkeypatch.setattr(conf, "OPTIONAL", {"agreement": (2.0, 0.2), "rescue": (0.0, 0.0), "reranker": (0.0, 0.0)})
    assert conf.score(with_embedder) > conf.score(base)  # a fitted weight counts when the component is there
    assert conf.score(base) == conf.score(conf.Components(coverage=0.8, strength=0.5, focus=0.6, unseen=0.0))


def test_agreement():
    assert conf.agreement([1, 2, 2, 3, 4, 5], [5, 9, 1, 8, 7]) == pytest.approx(2 / 5)
    assert conf.agreement([1], []) is None


def test_nearness_is_the_top_excerpts_cosine_or_at_most_the_lists_lowest():
    assert conf.nearness(0.62, [0.7, 0.62, 0.4]) == pytest.approx(0.62)
    assert conf.nearness(None, [0.7, 0.62, 0.4]) == pytest.approx(0.4)  # beyond the semantic list
    assert conf.nearness(1.0000002, [1.0000002]) == 1.0
    assert conf.nearness(0.5, []) is None


def test_distinct_is_how_far_the_best_page_stands_above_the_fifth_in_meaning():
    pages = [(1, 0.8), (1, 0.75), (2, 0.6), (3, 0.55), (4, 0.5), (5, 0.45), (6, 0.2)]
    assert conf.distinct(pages) == pytest.approx(0.8 - 0.45)  # a page counts once, at its best
    assert conf.distinct([(1, 0.8), (2, 0.3)]) == 0.0  # fewer than five pages: no evidence either way
    assert conf.distinct([]) is None


def test_the_embedder_model_rises_with_each_semantic_component():
    name = "local-minilm-l6-v2-384"
    base = dict(coverage=0.5, strength=0.5, focus=0.3, unseen=0.0, title=0.3, rare=0.5, depth=0.5, reach=0.5,
                missing=0.2, wig=0.3, matched=0.4, known=0.5, agreement=0.4, similarity=0.5, nearness=0.5,
                distinct=0.15, concord=0.5, sentence=0.5, grounded=0.5,
                softcov=0.6)
    ref = conf.score(conf.Components(**base), name)
    semantic = [n for n in conf.EMBEDDER_MODELS[name][1] if n in conf.SEMANTIC]
    assert semantic
    for component in semantic:
        assert conf.score(conf.Components(**{**base, component: base[component] + 0.1}), name) > ref
    # an unseen word weighs against an answer with an embedder too (through reach and grounded)
    unseen = {**base, "unseen": 0.3, "reach": conf.known_share(0.5, 0.3), "grounded": conf.known_share(0.5, 0.3)}
    assert conf.score(conf.Components(**unseen), name) < ref


def test_concord_is_one_over_the_rank_of_the_word_lists_best_page_in_the_semantic_list():
    assert conf.concord([7, 3], [7, 7, 2]) == 1.0  # both lists put page 7 first
    assert conf.concord([2, 7], [7, 7, 9, 2]) == pytest.approx(1 / 3)  # pages, not passages: 7, 9, 2
    assert conf.concord([4], [7, 9]) == 0.0  # beyond the semantic list
    assert conf.concord([], [7]) is None and conf.concord([7], []) is None


def test_components_json_rounds_and_keeps_absent_ones():
    out = conf.Components(coverage=1 / 3, unseen=0.0).as_json()
    assert out == {"coverage": 0.3333, "strength": None, "focus": None, "unseen": 0.0, "agreement": None,
                   "similarity": None, "rescue": None, "reranker": None, "rare": None, "missing": None,
                   "title": None, "depth": None, "nearness": None, "distinct": None,
                   "concord": None, "nqc": None, "wig": None, "sentcov": None, "sentence": None,
                   "reach": None, "grounded": None, "softcov": None, "matched": None,
                   "known": None}


def test_an_embedder_with_a_fitted_model_decides_with_its_semantic_components():
    name = "local-minilm-l6-v2-384"
    intercept, weights = conf.EMBEDDER_MODELS[name]
    words = dict(coverage=0.5, strength=0.5, focus=0.3, unseen=0.0, title=0.3, rare=0.5, depth=0.5, reach=0.5,
                 missing=0.2, wig=0.3, matched=0.4, known=0.5)
    lexical = conf.Components(**words)
    close = conf.Components(**words, agreement=0.6, similarity=0.7, nearness=0.7, distinct=0.3, concord=1.0,
                            sentence=0.7, grounded=0.7, softcov=0.8)
    far = conf.Components(**words, agreement=0.6, similarity=0.1, nearness=0.1, distinct=0.02, concord=0.0,
                          sentence=0.1, grounded=0.1, softcov=0.4)
    z = intercept + sum(w * getattr(close, n) for n, w in weights.items())
    assert conf.score(close, name) == pytest.approx(1 / (1 + math.exp(-z)))
    assert conf.score(close, name) > conf.score(far, name)  # nearer text in meaning: more confident
    assert conf.score(far, name) < 0.35 <= conf.score(close, name)
    # without the semantic components, or from an embedder no model was fitted for (hashing,
    # a remote one), the lexical model decides: they are shown but drop out
    assert conf.score(lexical, name) == conf.score(lexical)
    assert conf.score(close, "hashing-384") == conf.score(close) == conf.score(lexical)
    assert conf.score(close, None) == conf.score(lexical)



def test_an_embedder_model_missing_one_of_its_semantic_components_leaves_the_decision_to_the_lexical_model(
        monkeypatch):
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {"e": (-3.0, {"reach": 2.0, "similarity": 1.0, "sentence": 4.0})})
    words = dict(coverage=0.5, strength=0.5, focus=0.3, unseen=0.0, title=0.3, depth=0.5, reach=0.5)
    embedded = conf.Components(**words, similarity=0.7, sentence=0.6)
    assert conf.score(embedded, "e") == pytest.approx(1 / (1 + math.exp(3.0 - 1.0 - 0.7 - 2.4)))
    # the sentences could not be embedded: the lexical model decides, not the embedder's without them
    unembedded = conf.Components(**words, similarity=0.7)
    assert conf.score(unembedded, "e") == conf.score(conf.Components(**words)) != conf.score(embedded, "e")


def test_nqc_is_the_spread_of_the_best_scores_over_the_most_the_words_could_score():
    idf = {"a": 2.0, "b": 3.0, "zzz": None}  # most: 2.2 * 5 = 11
    scores = [9.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]  # the 11th is beyond the depth of 10
    assert conf.nqc(scores, ["a", "b", "zzz"], idf) == pytest.approx(2.4 / 11.0)  # std of 9 and nine 1s
    assert conf.nqc([5.0] * 10, ["a", "b"], idf) == 0.0  # a flat list points nowhere
    assert conf.nqc([4.0], ["a"], idf, depth=2) == pytest.approx(2.0 / 4.4)  # a missing score counts 0
    assert conf.nqc([], ["a"], idf) is None and conf.nqc([1.0], ["zzz"], idf) is None


def test_wig_is_the_best_scores_mean_above_an_average_passage():
    n = 100
    df = 10  # idf = log(1 + (n - df + 0.5) / (df + 0.5))
    idf = {"a": math.log(1 + (n - df + 0.5) / (df + 0.5)), "zzz": None}
    most = 2.2 * idf["a"]
    average = idf["a"] * df / n  # a passage holds "a" one time in ten, scoring its IDF
    assert conf.wig([6.0, 4.0], ["a", "zzz"], idf, n, depth=2) == pytest.approx((5.0 - average) / most)
    assert conf.wig([6.0], ["a"], idf, n, depth=2) == pytest.approx((3.0 - average) / most)
    assert conf.wig([], ["a"], idf, n) is None and conf.wig([1.0], ["zzz"], idf, n) is None


def test_sentences_split_at_ends_lines_and_list_items_and_join_short_pieces():
    text = ("## Deposits\nBitcoin deposits need three confirmations. After that, the balance updates!\n"
            "- Minimum: 0.0001 BTC\n- Fees: none at all\n\nMonero takes ten confirmations (about 20 minutes).")
    assert conf.sentences(text) == [
        "Deposits Bitcoin deposits need three confirmations.",  # the heading reads with its sentence
        "After that, the balance updates!",
        "Minimum: 0.0001 BTC Fees: none at all",
        "Monero takes ten confirmations (about 20 minutes).",
    ]
    assert conf.sentences(text, limit=2) == conf.sentences(text)[:2]
    assert conf.sentences("short") == ["short"] and conf.sentences("") == []


def test_sentence_coverage_is_the_share_held_by_the_single_best_sentence():
    idf = {"refund": 3.0, "fee": 1.0, "zzz": None}
    terms = analysis.terms("refund fee zzz")
    apart = "A refund is sent within five working days. A fee is charged for every withdrawal."
    together = "No fee is charged on a refund, whatever the amount."
    assert conf.sentence_coverage([apart], terms, idf) == pytest.approx(3.0 / 4.0)  # the two words never meet
    assert conf.sentence_coverage([apart, together], terms, idf) == 1.0  # any of the first excerpts
    assert conf.sentence_coverage(["nothing here at all, not one word."], terms, idf) == 0.0
    assert conf.sentence_coverage([apart], ["zzz"], idf) is None
    assert conf.sentence_coverage([], terms, idf) is None


def test_best_cosine():
    assert conf.best_cosine([1.0, 0.0], [[0.0, 2.0], [3.0, 3.0]]) == pytest.approx(math.sqrt(0.5))
    assert conf.best_cosine([1.0, 0.0], [[0.0, 0.0]]) is None and conf.best_cosine([1.0, 0.0], []) is None


def test_sentences_are_embedded_only_for_a_model_that_weighs_them(monkeypatch):
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {"a": (0.0, {"similarity": 1.0, "sentence": 2.0}),
                                                  "b": (0.0, {"similarity": 1.0})})
    assert conf.wants_sentences("a") and not conf.wants_sentences("b") and not conf.wants_sentences(None)
    monkeypatch.setattr(conf, "WEIGHTS", {**conf.WEIGHTS, "sentcov": 1.0})  # the lexical model weighs one
    assert conf.wants_sentences("b") and conf.wants_sentences(None)


def test_reach_and_grounded_count_only_the_share_of_the_question_the_corpus_knows():
    idf = {"a": 2.0, "x": None}
    strength = conf.strength(4.4, ["a", "x"], idf)  # the known word scores all it could
    unseen = conf.unseen(["a", "x"], idf, rarest=6.0)  # the unknown word weighs 6 of 8
    assert strength == 1.0 and conf.known_share(strength, unseen) == pytest.approx(0.25)
    assert conf.known_share(0.7, 0.0) == pytest.approx(0.7)  # every word known: the value itself
    assert conf.known_share(None, 0.5) is None and conf.known_share(0.5, None) is None


def test_known_counts_the_weight_of_the_words_the_corpus_knows_not_their_share():
    idf = {"withdraw": 2.0, "limit": 3.0, "daili": 2.5, "yesterday": None, "3pm": None}
    # a long question told in the customer's words: two unseen words halve no evidence
    long = ["withdraw", "yesterday", "3pm", "daili", "limit", "limit"]
    assert conf.known(long, idf, rarest=2.5) == pytest.approx(7.5 / (conf.UNITS * 2.5))
    assert conf.known(long, idf, rarest=2.5) == conf.known(["withdraw", "daili", "limit"], idf, rarest=2.5)
    # a short look-alike: one known word, one the corpus never saw, says little
    assert conf.known(["withdraw", "dogecoin"], idf, rarest=2.5) == pytest.approx(2.0 / (conf.UNITS * 2.5))
    assert conf.known(["withdraw", "limit", "daili"] * 2, idf, rarest=1.0) == 1.0  # capped
    assert conf.known([], idf, rarest=2.5) is None and conf.known(["a"], idf, rarest=0.0) is None


def test_matched_counts_the_weight_of_the_words_the_excerpt_holds_not_their_share():
    idf = {"withdraw": 2.0, "limit": 3.0, "daili": 2.5, "yesterday": None}
    excerpt = "Limits reset daily at midnight UTC."
    long = analysis.terms("I withdrew a big amount yesterday and it says I hit my daily withdraw limit")
    told = analysis.terms("yesterday my daily withdraw limit")
    short = analysis.terms("daily withdraw limit")
    assert len(set(long)) > conf.UNITS == len(set(told)) == 4
    # past UNITS words, the words the answer has no reason to hold take nothing from the evidence it holds
    assert conf.matched(excerpt, long, idf, rarest=2.5) == conf.matched(excerpt, told, idf, rarest=2.5)
    assert conf.matched(excerpt, long, idf, rarest=2.5) == pytest.approx(5.5 / (4 * 2.5))  # "withdraw" is not there
    # a short question is counted in its own words: three words, two of them held
    assert conf.matched(excerpt, short, idf, rarest=2.5) == pytest.approx(5.5 / (3 * 2.5))
    # one rare word, fully held, is all a one-word question can hold; one never seen holds nothing
    assert conf.matched(excerpt, ["daili"], idf, rarest=2.5) == 1.0
    assert conf.matched(excerpt, ["limit", "yesterday"], idf, rarest=3.0) == pytest.approx(0.5)
    assert conf.matched("Deposits.", short, idf, rarest=2.5) == 0.0
    assert conf.matched(excerpt, ["limit", "daili"], idf, rarest=1.0) == 1.0  # capped
    assert conf.matched(excerpt, [], idf, rarest=2.5) is None


def test_soft_coverage_matches_each_question_word_with_its_closest_excerpt_piece():
    from knowledge.model import TokenVectors

    # question "reset my pin code": pieces "reset", "pin", "co", "##de" (two pieces, one word)
    question = TokenVectors(spans=[(0, 5), (9, 12), (13, 15), (15, 17)],
                            vectors=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.6, 0.8], [0.0, 0.6, 0.8]])
    covered = TokenVectors(spans=[(0, 4), (5, 9)], vectors=[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    words = [(0, 5, 2.0), (9, 12, 1.0), (13, 17, 1.0)]  # "my" is a stop word: not among them
    # reset and pin are matched exactly; code (its pieces' mean) has cosine 0.6 with "pin"
    assert conf.soft_coverage(words, question, covered) == pytest.approx((2.0 + 1.0 + 0.6) / 4.0)
    # an excerpt missing the concept the question turns on: that word's best match is 0
    uncovered = TokenVectors(spans=[(0, 4)], vectors=[[0.0, 1.0, 0.0]])
    assert conf.soft_coverage(words, question, uncovered) == pytest.approx((0.0 + 1.0 + 0.6) / 4.0)
    # the weights say how much each word counts; nothing to match: None
    assert conf.soft_coverage([(0, 5, 1.0)], question, uncovered) == pytest.approx(0.0)
    assert conf.soft_coverage([], question, covered) is None
    assert conf.soft_coverage(words, question, TokenVectors(spans=[], vectors=[])) is None


def test_content_words_leave_stop_words_and_punctuation_out():
    words = conf.content_words("Can I reset my PIN?", analysis.terms)
    assert [(a, b) for a, b, _ in words] == [(6, 11), (15, 18)]
    assert [t for _, _, t in words] == analysis.terms("reset PIN")


def test_softcov_is_weighed_only_by_the_model_of_an_embedder_that_fitted_it(monkeypatch):
    monkeypatch.setattr(conf, "EMBEDDER_MODELS", {"e": (-1.0, {"similarity": 1.0, "softcov": 2.0}),
                                                  "f": (-1.0, {"similarity": 1.0})})
    assert conf.wants_tokens("e") and not conf.wants_tokens("f") and not conf.wants_tokens(None)
    c = conf.Components(coverage=0.5, similarity=0.5, softcov=0.9)
    assert conf.score(c, "e") == pytest.approx(1 / (1 + math.exp(-(-1.0 + 0.5 + 1.8))))
    # without it (an embedder without piece vectors, or a failed pass) the lexical model decides
    lexical = conf.score(conf.Components(coverage=0.5, similarity=0.5), None)
    assert conf.score(conf.Components(coverage=0.5, similarity=0.5), "e") == pytest.approx(lexical)
