from __future__ import annotations

import pytest

from knowledge.answer.gate import SETTLING_TYPES, gate, gate_enabled


def ex(rank: int, source_type: str, text: str, title: str = "") -> dict:
    return {"rank": rank, "sourceType": source_type, "text": text, "title": title}


PACK = ex(1, "pack", "Withdrawal fees are 0.5% on every method.")
ARTICLE_FEES = ex(2, "article", "Our withdrawal fee is 1 EUR.")
ARTICLE_OTHER = ex(2, "article", "Withdrawals go to the card you deposited with.")


def test_unclassified_questions_have_no_gate() -> None:
    assert gate(None, [PACK]) is None


def test_documentation_never_settles_it() -> None:
    result = gate("fees", [PACK, ex(2, "website", "fee 2%"), ex(3, "file", "fees")])
    assert result is not None and result["passed"] is False and result["topic"] == "fees"
    assert "documentation pages never settle it" in result["reason"]


def test_an_operator_excerpt_that_speaks_of_the_topic_passes() -> None:
    result = gate("fees", [PACK, ARTICLE_FEES])
    assert result == {"topic": "fees", "passed": True,
                      "reason": "excerpt 2 is operator-authored (article) and speaks of fees"}


def test_an_operator_excerpt_on_something_else_does_not() -> None:
    result = gate("fees", [PACK, ARTICLE_OTHER])
    assert result is not None and result["passed"] is False
    assert "none of the operator-authored excerpts served speaks of fees" in result["reason"]


@pytest.mark.parametrize("source_type", sorted(SETTLING_TYPES))
def test_every_operator_authored_type_can_settle(source_type: str) -> None:
    result = gate("processing_time", [ex(1, source_type, "Withdrawals take up to 24 hours.")])
    assert result is not None and result["passed"] is True


def test_live_excerpts_always_settle_their_topic() -> None:
    assert gate("limits", [ex(4, "live", "Withdrawal: limits as configured by the operator.")])["passed"]


def test_topic_words_must_match_the_topic() -> None:
    assert gate("limits", [ARTICLE_FEES])["passed"] is False  # a fee article does not settle a limit
    assert gate("limits", [ex(1, "fact", "", title="Minimum deposit")])["passed"] is True  # the title counts


def test_switch() -> None:
    off = gate("fees", [PACK], enabled=False)
    assert off == {"topic": "fees", "passed": True, "reason": "the topic gate is switched off for this bot"}
    assert gate_enabled(None) and gate_enabled({}) and gate_enabled({"gate": True})
    assert not gate_enabled({"gate": False})
