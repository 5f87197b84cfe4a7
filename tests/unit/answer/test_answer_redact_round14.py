"""Redaction round 14: what one message of a ticket tells of another (a date given in reply to a
question of a date of birth; a user name or key found once, removed where it recurs), a
signature's name line whose family name is a dictionary word, and names after a Chinese role
or before a Chinese greeting, and after the Vietnamese "bạn"."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import asked_in, find_spans
from knowledge.answer.tickets import redact_ticket


def _names(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_spans(text, speaker="customer", known_words=set())
            if s.kind == "person_name"]


@pytest.mark.parametrize(("question", "reply", "date"), [
    ("Please also confirm your date of birth as registered.", "It is 2 June 1979. I did the selfie now.",
     "2 June 1979"),
    ("¿Nos indica su fecha de nacimiento y la dirección registrada?", "23/08/1991, Av. Insurgentes Sur 1457.",
     "23/08/1991"),
    ("What's your DOB?", "12.03.88", "12.03.88"),
    ("Could you tell me your birthday?", "march third nineteen seventy one", "march third nineteen seventy one"),
])
def test_a_date_in_reply_to_a_question_of_a_date_of_birth_is_one(question: str, reply: str, date: str) -> None:
    _, answered = redact_ticket([question, reply], speakers=["agent", "customer"])
    assert answered.text.count("[date_of_birth]") == 1
    assert date not in answered.text


@pytest.mark.parametrize("reply", [
    "It is 2 June 1979.",  # nobody asked: a date alone is no birth date
])
def test_a_date_no_one_asked_about_stays(reply: str) -> None:
    _, answered = redact_ticket(["Thanks for waiting, the withdrawal is queued.", reply],
                                speakers=["agent", "customer"])
    assert answered.text == reply


def test_a_date_of_this_year_in_reply_to_a_birth_question_is_an_event() -> None:
    _, answered = redact_ticket(["Please confirm your date of birth.", "I did the selfie on 14/03/2026 already."],
                                speakers=["agent", "customer"])
    assert "14/03/2026" in answered.text


def test_only_the_other_side_asks_and_only_its_last_message() -> None:
    texts = ["Title", "What is your date of birth?", "1990-04-02", "Thanks, verified.", "Sent 2001-01-01 too",
             "my birthday is in May"]
    who: list[str | None] = [None, "agent", "customer", "agent", "customer", "customer"]
    asked = asked_in(texts, who)
    assert asked == [frozenset(), frozenset(), {"date_of_birth"}, frozenset(), frozenset(), frozenset()]


def test_a_user_name_found_once_is_removed_where_it_recurs() -> None:
    first, second = redact_ticket([
        "User akosinski (adam.kosinski@vistula-software.pl) tried:\n  docker login harbor.local -u akosinski -p x",
        "Ask akosinski to use the CLI secret.",
    ], speakers=["customer", "agent"])
    assert "akosinski" not in first.text and "akosinski" not in second.text
    assert second.text == "Ask [username] to use the CLI secret."
    assert second.counts == {"username": 1}


def test_a_recurring_value_that_is_a_word_stays_a_word() -> None:
    first, second = redact_ticket(["my username: support", "Open the support page."],
                                  speakers=["customer", "agent"])
    assert "[username]" in first.text
    assert second.text == "Open the support page."


@pytest.mark.parametrize(("text", "name"), [
    ("Brenda Castellano, Office Manager", "Brenda Castellano"),
    ("Thanks,\nBrenda Castellano\n(773) 555-0142", "Brenda Castellano"),
    ("Regards\nDeborah Baker | IT", "Deborah Baker"),
])
def test_a_signature_line_takes_a_family_name_that_is_a_word(text: str, name: str) -> None:
    assert name in _names(text)


@pytest.mark.parametrize("text", [
    "Grace Period, see the docs",  # a given name that is a word opens no name line
    "Kevin Support Team",
])
def test_a_line_of_words_is_no_name_line(text: str) -> None:
    assert not any(" " in n for n in _names(text))


@pytest.mark.parametrize(("text", "name"), [
    ("你好，我是运维刘洋，电话139 2087 5514。", "刘洋"),
    ("我是华信云的刘洋。", "刘洋"),
    ("刘洋您好，内网环境需要设置 skip_update。", "刘洋"),
    ("Chào bạn Hà, CoinVault chỉ nhận token trên Ethereum.", "Hà"),
])
def test_names_after_a_role_and_before_a_greeting(text: str, name: str) -> None:
    assert _names(text) == [name]


@pytest.mark.parametrize("text", ["各位您好，系统今晚维护。", "Chào bạn, mình gửi nhầm mạng."])
def test_a_greeting_without_a_name(text: str) -> None:
    assert _names(text) == []


def test_a_name_introduced_after_a_role_is_removed_from_the_agents_greeting() -> None:
    _, _, reply = redact_ticket(["Trivy", "我是运维刘洋，电话139 2087 5514。", "好的，请刘洋设置 offline_scan。"],
                                speakers=[None, "customer", "agent"])
    assert reply.text == "好的，请[person_name]设置 offline_scan。"
