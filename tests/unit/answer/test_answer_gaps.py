from __future__ import annotations

import pytest

from knowledge.answer.gaps import cluster_gaps, cluster_indices, content_words, new_gap, outcome_of, retention_of
from knowledge.model import GapRecord

NOW = 1_800_000_000.0
DAY = 86_400.0


def gap(q: str, at: float, outcome: str = "nothing_found", topic: str | None = None,
        audience: str = "customer") -> GapRecord:
    return GapRecord(id=f"{at}-{q}", bot="b", audience=audience, question=q, outcome=outcome, topic=topic,
                     created_at=at, expires_at=at + 90 * DAY)


def test_near_identical_phrasings_merge_and_distinct_questions_do_not() -> None:
    texts = ["How do I reset my password?", "reset password", "password reset please", "I forgot my password",
             "What is the fee to withdraw bitcoin?", "bitcoin withdrawal fee?", "ETH withdrawal fee?",
             "fee for withdrawing eth"]
    groups = cluster_indices(texts)
    assert [0, 1, 2] in groups or [0, 1, 2, 3] in groups
    assert any({4, 5} <= set(g) for g in groups)
    assert any({6, 7} <= set(g) for g in groups)
    together = next(g for g in groups if 4 in g)
    assert 6 not in together  # the bitcoin fee and the ether fee stay apart: the rare words decide


def test_shorthand_is_spelled_out_and_stop_words_dropped() -> None:
    assert content_words("What's the min BTC withdrawal?") == ["minimum", "bitcoin", "withdraw"]


def test_vectors_decide_when_given() -> None:
    texts = ["close my account", "delete my profile", "card declined"]
    vectors = [[1.0, 0.0], [0.95, 0.1], [0.0, 1.0]]
    assert cluster_indices(texts, vectors) == [[0, 1], [2]]
    assert cluster_indices(texts) == [[0], [1], [2]]  # no shared words
    with pytest.raises(ValueError):
        cluster_indices(texts, vectors[:2])


def test_cluster_records_most_frequent_first() -> None:
    gaps = [
        gap("reset password", NOW - 5 * DAY),
        gap("card declined", NOW - 4 * DAY, outcome="below_floor"),
        gap("How do I reset my password?", NOW - 3 * DAY, outcome="below_floor"),
        gap("reset password", NOW - 1 * DAY),
        gap("What is the withdrawal fee?", NOW - 2 * DAY, outcome="gated", topic="fees"),
    ] + [gap(f"reset password {i}", NOW - 2 * DAY) for i in range(5)]
    clusters = cluster_gaps(gaps)
    first = clusters[0]
    assert first["count"] == 8
    assert first["representative"] == "reset password"  # the most frequent phrasing
    assert first["firstSeen"] == NOW - 5 * DAY and first["lastSeen"] == NOW - 1 * DAY
    assert len(first["examples"]) == 5 and first["examples"][0] == "reset password"  # newest first, distinct
    assert first["outcomes"] == {"below_floor": 1, "nothing_found": 7}
    rest = {c["representative"]: c for c in clusters[1:]}
    assert rest["What is the withdrawal fee?"]["topic"] == "fees"
    assert rest["What is the withdrawal fee?"]["outcomes"] == {"gated": 1}
    # ties on count: the most recent first
    assert [c["representative"] for c in clusters[1:]] == ["What is the withdrawal fee?", "card declined"]


@pytest.mark.parametrize(
    ("response", "outcome"),
    [
        ({"excerpts": [], "confidence": 0.0, "floor": 0.35}, "nothing_found"),
        ({"excerpts": [{}], "confidence": 0.2, "floor": 0.35}, "below_floor"),
        ({"excerpts": [{}], "confidence": 0.9, "floor": 0.35, "gate": {"passed": False}}, "gated"),
        ({"excerpts": [{}], "confidence": 0.2, "floor": 0.35, "gate": {"passed": False}}, "gated"),
        ({"excerpts": [{}], "confidence": 0.9, "floor": 0.35, "gate": {"passed": True}}, None),
        ({"excerpts": [{}], "confidence": 0.9, "floor": 0.35, "gate": None}, None),
    ],
)
def test_outcomes(response: dict, outcome: str | None) -> None:
    assert outcome_of(response) == outcome


def test_new_gap_redacts_the_question_and_sets_retention() -> None:
    g = new_gap("b", "customer", "my card 4111 1111 1111 1111 was charged, mail a@b.co", "below_floor", "fees", NOW)
    assert g.question == "my card [card] was charged, mail [email]"
    assert g.expires_at == NOW + 90 * DAY and g.topic == "fees"
    short = new_gap("b", "customer", "q", "gated", None, NOW, retention_seconds=DAY)
    assert short.expires_at == NOW + DAY
    assert new_gap("b", "customer", "q", "gated", None, NOW).id != new_gap("b", "customer", "q", "gated", None, NOW).id
    with pytest.raises(ValueError):
        new_gap("b", "customer", "q", "answered", None, NOW)


def test_a_gap_question_is_read_as_its_askers_own_message() -> None:
    # no personal word of a listed language beside the amount: the asker's money all the same;
    # a limit they ask about stays
    for audience in ("customer", "operator"):
        g = new_gap("b", audience, "Η ανάληψη 3.200 € δεν έφτασε ακόμα", "below_floor", None, NOW)
        assert g.question == "Η ανάληψη [amount] δεν έφτασε ακόμα"
    g = new_gap("b", "customer", "is the daily limit 10,000 USD for verified accounts?", "below_floor", "limits", NOW)
    assert "10,000 USD" in g.question


def test_retention_setting() -> None:
    assert retention_of(None) == 90 * DAY
    assert retention_of({"gapRetentionDays": 30}) == 30 * DAY
    assert retention_of({"gapRetentionDays": 0}) == 90 * DAY
    assert retention_of({"gapRetentionDays": True}) == 90 * DAY
