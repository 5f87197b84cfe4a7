"""The one analysis both engines share: identifiers whole and in parts, a real stop list,
Snowball stemming; the embedded index analyses exactly like :func:`analysis.terms`."""

from __future__ import annotations

import pytest

from knowledge import analysis
from knowledge.adapters.local.tantivy_index import TantivySearchIndex


@pytest.mark.parametrize(("text", "expanded"), [
    ("plain words only", "plain words only"),
    ("Set startWithVideoMuted now", "Set startWithVideoMuted start With Video Muted now"),
    ("SEND_ENDPOINT_TEXT_MESSAGE.", "SEND_ENDPOINT_TEXT_MESSAGE SENDENDPOINTTEXTMESSAGE."),
    ("config.maxRetries", "config.maxRetries configmaxRetries max Retries"),
    ("an e-mail, sign-in", "an e-mail, sign-in"),  # hyphenated words: the word split alone
    ("HTTPServer URLs APIs", "HTTPServer HTTP Server URLs APIs"),
    ("on 2024-01-01 at 1.5", "on 2024-01-01 at 1.5"),  # no letter: not an identifier
    ("max_retryCount", "max_retryCount maxretryCount retry Count"),
])
def test_expand(text, expanded):
    assert analysis.expand(text) == expanded


def test_the_stop_list_is_a_real_english_list():
    assert 150 <= len(analysis.STOP_SET) <= 180
    # everyday question words, and the pieces the word split makes of contractions
    for word in ("i", "my", "how", "do", "can", "t", "you", "your", "don", "s", "would", "could", "the"):
        assert word in analysis.STOP_SET
    for word in ("account", "fee", "withdraw", "password"):
        assert word not in analysis.STOP_SET
    assert analysis.terms("How can I do it? I can't, you don't") == []


def test_terms_keep_identifiers_whole_and_split():
    assert analysis.terms("Is SEND_ENDPOINT_TEXT_MESSAGE or startWithVideoMuted set?") == [
        "send", "endpoint", "text", "messag", "sendendpointtextmessag", "startwithvideomut", "start", "video",
        "mute", "set"]


def test_long_tokens_are_dropped():
    assert analysis.terms("a" * 39 + " ok " + "b" * 40) == ["a" * 39, "ok"]


def test_the_embedded_index_analyses_like_the_module(tmp_path):
    index = TantivySearchIndex(tmp_path)
    for text in ("Can I get my warranty policy delivery?", "startWithVideoMuted and max_retries", "x" * 3000):
        assert index.analyze(text) == analysis.terms(text)


def test_stem():
    assert [analysis.stem(w) for w in ("Warranty", "policies", "hoping", "tapestry")] == [
        "warranti", "polici", "hope", "tapestri"]


def test_a_question_naming_an_identifier_finds_it_first(tmp_path):
    import dataclasses

    from knowledge.model import Passage

    index = TantivySearchIndex(tmp_path)
    base = Passage(id="x", bot="b1", source_id="s1", document_id="d", generation=1, ordinal=0, title="T",
                   path="p.md", breadcrumb="", text="", visibility="public")
    texts = {
        "option": "Set startWithVideoMuted to true in the config.",
        "prose": "You can start the call with video muted from the menu, then start again with video.",
        "constant": "The event SEND_ENDPOINT_TEXT_MESSAGE carries the text.",
        "words": "Send a text message to the endpoint; the message text is sent as is.",
    }
    index.write("b1", [dataclasses.replace(base, id=k, document_id=k, text=v) for k, v in texts.items()])

    def ranked(q):
        hits = index.search_lexical("b1", "customer", q, visibilities=("public",), source_gens=["s1:1"])
        index.hydrate("b1", hits)
        return [h.passage.id for h in hits]

    assert ranked("startWithVideoMuted")[0] == "option"
    assert set(ranked("video muted")) == {"option", "prose"}  # the parts still match
    assert ranked("SEND_ENDPOINT_TEXT_MESSAGE")[0] == "constant"
    assert set(ranked("text message endpoint")) == {"constant", "words"}


def test_everyday_words_weigh_less_than_the_documentation_s_words():
    common = analysis.common_stems()
    assert len(common) > 700  # the lorem list's ~970 words, stop words left out
    for word in ("get", "keep", "back", "want", "put", "still"):
        assert analysis.weight(analysis.stem(word)) == analysis.COMMON_WEIGHT
    for word in ("monero", "withdraw", "replication", "robot", "webhook", "slashing"):
        assert analysis.weight(analysis.stem(word)) == 1.0


def test_the_everyday_word_list_is_read_as_data(tmp_path):
    module = tmp_path / "lorem.py"
    module.write_text('class Provider:\n    """doc"""\n    word_list = (\n        "a",\n        "back",\n    )\n')
    assert analysis._common_words(module) == ("a", "back")
    module.write_text("x = 1\n")
    with pytest.raises(ValueError):
        analysis._common_words(module)


def test_weighted_words_split_the_question_as_the_engine_does():
    full, common = analysis.weighted_words("Where do I get my robot's secret back? startWithVideoMuted")
    assert common == ["get", "back", "start"]
    assert full == ["robot", "secret", "startwithvideomuted", "video", "muted"]  # stop words are never searched
    # each word is one term of the engine's analysis, weighed as analysis.weight weighs it
    for word in common:
        assert [analysis.weight(t) for t in analysis.terms(word)] == [analysis.COMMON_WEIGHT]
    for word in full:
        assert all(analysis.weight(t) == 1.0 for t in analysis.terms(word))


def test_the_search_weighs_an_everyday_word_less(tmp_path):
    # "get" three times against "replication" once, each word in one passage (the same IDF):
    # at full weight the repeated word wins; weighed as an everyday word it does not
    import dataclasses

    from knowledge.model import Passage

    index = TantivySearchIndex(tmp_path)
    base = Passage(id="x", bot="b1", source_id="s1", document_id="d", generation=1, ordinal=0, title="T",
                   path="p.md", breadcrumb="", text="", visibility="public")
    texts = {"everyday": "get started, get going, get set", "topic": "replication rules copy images"}
    index.write("b1", [dataclasses.replace(base, id=k, document_id=k, text=v) for k, v in texts.items()])
    hits = index.search_lexical("b1", "customer", "get replication", visibilities=("public",), source_gens=["s1:1"])
    index.hydrate("b1", hits)
    assert [h.passage.id for h in hits] == ["topic", "everyday"]
    get, replication = (hits[1].score, hits[0].score)
    alone = index.search_lexical("b1", "customer", "get", visibilities=("public",), source_gens=["s1:1"])
    assert alone[0].score == pytest.approx(get)  # the weight is the search's, not the list's
    assert get > replication * analysis.COMMON_WEIGHT  # unweighted, "get" would be first
    # beside a semantic list the retrieval asks without the weights: every word alike
    hits = index.search_lexical("b1", "customer", "get replication", visibilities=("public",), source_gens=["s1:1"],
                                weighted=False)
    index.hydrate("b1", hits)
    assert [h.passage.id for h in hits] == ["everyday", "topic"]
