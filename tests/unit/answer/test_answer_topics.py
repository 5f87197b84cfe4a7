from __future__ import annotations

import pytest

from knowledge.answer.topics import TopicClassifier, classify, normalise
from knowledge.errors import InvalidInput


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("What is the fee for a BTC withdrawal?", "fees"),
        ("Do you charge for card deposits?", "fees"),
        ("Are commissions taken on trades?", "fees"),
        ("What's the minimum deposit?", "limits"),
        ("How much can I withdraw per day?", "limits"),
        ("Is there a cap on bank transfers?", "limits"),
        ("How long do withdrawals take?", "processing_time"),
        ("My deposit is still pending", "processing_time"),
        ("How many business days for a SEPA payout?", "processing_time"),
    ],
)
def test_default_terms_classify_money_questions(question: str, topic: str) -> None:
    assert classify(question) == topic


@pytest.mark.parametrize(
    "question",
    [
        "How do I charge my phone?",  # weak term, no money movement
        "What is the maximum file size for attachments?",
        "How long is the verification code valid?",
        "Is there a character limit for my username?",
        "How do I enable two-factor authentication?",
        "",
    ],
)
def test_weak_terms_without_money_context_classify_nothing(question: str) -> None:
    assert classify(question) is None


def test_inflections_and_prefix_terms() -> None:
    clf = TopicClassifier.from_settings(None)
    assert clf.classify("Why was I charged when withdrawing?") == "fees"  # charged + withdraw*
    assert clf.classify("Why am I being CHARGED?") is None  # weak term alone
    assert clf.classify("commissions?") == "fees"  # commission* covers the plural


def test_strong_outweighs_weak_and_ties_go_to_the_earlier_topic() -> None:
    clf = TopicClassifier.from_settings(None)
    # fee (strong, 2) beats "how long" (weak, 1)
    assert clf.classify("How long until the withdrawal fee is refunded?") == "fees"
    # one strong term each: fees comes first in TOPICS
    assert clf.classify("withdrawal fee and processing time") == "fees"
    assert clf.scores("withdrawal fee and processing time")["processing_time"] == 2


def test_extra_terms_add_and_replace_terms_replace() -> None:
    extra = TopicClassifier.from_settings({"topics": {"fees": {"extraStrong": ["rake"]}}})
    assert extra.classify("what rake do you take on poker?") == "fees"
    assert extra.classify("What is the fee?") == "fees"  # defaults kept
    replaced = TopicClassifier.from_settings({"topics": {"fees": {"strong": ["gebühr*"], "weak": []}}})
    assert replaced.classify("What is the fee?") is None
    assert replaced.classify("Welche Gebühren gibt es?") == "fees"


def test_context_can_be_replaced() -> None:
    clf = TopicClassifier.from_settings({"context": ["spin*"]})
    assert clf.classify("when will my free spins arrive") == "processing_time"
    assert clf.classify("when will my withdrawal arrive") is None  # withdraw* is gone; both terms are weak


def test_evidence_terms() -> None:
    clf = TopicClassifier.from_settings(None)
    assert clf.speaks_of("Withdrawals are processed within 24 hours.", "processing_time")
    assert not clf.speaks_of("Withdrawals go to your bank.", "processing_time")
    assert clf.speaks_of("A 1.5% commission applies.", "fees")
    assert not clf.speaks_of("anything", "weather")


def test_normalise_keeps_hyphenated_words_and_currency_signs() -> None:
    assert normalise("Fee-free top-up of $5, isn’t it?") == ["fee-free", "top-up", "of", "$", "5", "isn't", "it"]


@pytest.mark.parametrize(
    ("settings", "code"),
    [
        ({"colour": 1}, "unknown_field"),
        ({"topics": {"weather": {}}}, "unknown_field"),
        ({"topics": {"fees": {"strongest": []}}}, "unknown_field"),
        ({"topics": {"fees": {"strong": "fee"}}}, "invalid_topic_settings"),
        ({"topics": {"fees": {"strong": [""]}}}, "invalid_topic_settings"),
        ({"topics": {"fees": {"extraWeak": [7]}}}, "invalid_topic_settings"),
        ({"topics": ["fees"]}, "invalid_topic_settings"),
        ({"context": ["x" * 81]}, "invalid_topic_settings"),
    ],
)
def test_malformed_settings_have_stable_codes(settings: dict, code: str) -> None:
    with pytest.raises(InvalidInput) as err:
        TopicClassifier.from_settings(settings)
    assert err.value.code == code


def test_the_indexed_term_lookup_agrees_with_the_word_by_word_scan():
    """Every question is checked against every term through a set index; it must find
    exactly what scanning the words finds, prefixes and multi-word terms included."""
    from knowledge.answer.topics import _Index

    classifier = TopicClassifier.from_settings({"extraContext": ["top up*", "cash out"]})
    texts = [
        "How long until my XMR withdrawal arrives?", "what's the min. deposit for USDT (TRC-20)?",
        "Withdrawals take up to 3 business days", "is there a fee to cash out or top-up?",
        "feeless transfers", "processing times vary: minutes to hours", "my limit", "", "f",
        "topping up my card costs 2 %", "the within-day cap on ATM withdrawals",
    ]
    terms = [t for rule in classifier.rules.values() for t in (*rule.strong, *rule.weak, *rule.evidence)]
    terms += list(classifier.context)
    hits = 0
    for text in texts:
        words = normalise(text)
        index = _Index(words)
        for term in terms:
            assert term.found_in(words, index) == term.found_in(words), (text, term)
            hits += term.found_in(words)
    assert hits > 20  # the texts exercise matching terms, not only misses


def test_scores_count_every_matching_term_as_the_term_by_term_sum_does():
    """``scores`` looks one-word terms up from the question's words; it must give what summing
    ``found_in`` over every term gives, a term listed twice counting twice."""
    classifier = TopicClassifier.from_settings({
        "extraContext": ["top up*", "cash out", "withdraw*"],  # "withdraw*" is a default too: twice
        "topics": {"fees": {"extraStrong": ["fee", "charg*", "per cent"], "extraWeak": ["cost*"]}},
    })
    texts = [
        "How long until my XMR withdrawal arrives?", "what's the min. deposit for USDT (TRC-20)?",
        "Withdrawals take up to 3 business days", "is there a fee to cash out or top-up?",
        "what fee do you charge, and how many per cent, to withdraw", "fee fee fee charges", "",
        "topping up my card costs 2 %", "the within-day cap on ATM withdrawals", "cost of a deposit",
    ]
    for text in texts:
        words = normalise(text)
        context = any(t.found_in(words) for t in classifier.context)
        want = {topic: 2 * sum(t.found_in(words) for t in rule.strong)
                + (sum(t.found_in(words) for t in rule.weak) if context else 0)
                for topic, rule in classifier.rules.items()}
        assert classifier.scores(text) == want, text
    assert classifier.scores("what fee do you charge, and how many per cent, to withdraw")["fees"] >= 8
