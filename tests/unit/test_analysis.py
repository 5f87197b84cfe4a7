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
