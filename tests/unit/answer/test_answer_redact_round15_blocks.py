"""Redaction round 15e: an address block read upwards from its postcode line (Irish, Welsh,
Scottish Gaelic, Swedish and Norwegian streets whose names hold no street word the rules know),
postcodes whose shape with its space names a country alone (British, Irish Eircodes) with the towns
before them, an e-mail address whose last dot was typed as a comma, and digits glued to a handle by
an underscore; and the ordinary text beside those shapes that stays."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(s.kind, text[s.start : s.end]) for s in find_spans(text, known_words=set())]


def _streets(text: str) -> list[str]:
    return [value for kind, value in _kinds(text) if kind == "street_address"]


@pytest.mark.parametrize(("text", "address"), [
    ("Send it to:\nBóthar na Trá 14\nBallincollig, Co. Cork P31 FX27\nthanks",
     "Bóthar na Trá 14\nBallincollig, Co. Cork P31 FX27"),
    ("Postal: Storgatan 14 B, 3 tr\n903 26 Umeå", "Storgatan 14 B, 3 tr\n903 26 Umeå"),
    ("Postboks 214 Sentrum\n0103 Oslo", "Postboks 214 Sentrum\n0103 Oslo"),
    ("Taigh na Mara, 7 Shore Street\nPortree IV51 9DE", "Taigh na Mara, 7 Shore Street\nPortree IV51 9DE"),
    ("Lindenweg 3\n34346 Bad Münder", "Lindenweg 3\n34346 Bad Münder"),
])
def test_the_lines_above_a_postcode_line_that_a_street_takes_go_with_it(text: str, address: str) -> None:
    assert _streets(text) == [address]


@pytest.mark.parametrize(("text", "address"), [
    ("I live at 19 Heol y Nant, Whitchurch, Cardiff CF14 1JX", "19 Heol y Nant, Whitchurch, Cardiff CF14 1JX"),
    ("it is 4 Sràid na h-Eaglaise, Stornoway, Isle of Lewis HS1 2DQ now",
     "4 Sràid na h-Eaglaise, Stornoway, Isle of Lewis HS1 2DQ"),
])
def test_a_street_named_with_particles_before_its_postcode_is_one_address(text: str, address: str) -> None:
    assert _streets(text) == [address]


def test_a_postcode_whose_shape_names_its_country_is_removed_with_its_towns() -> None:
    text = "the card goes to Dublin 7, D07 N2X4 and the letter to BT9 6AD"
    assert _streets(text) == ["Dublin 7, D07 N2X4", "BT9 6AD"]


@pytest.mark.parametrize("text", [
    "We released 2024 Berlin edition\nVersion 2\n2024 Berlin",
    "Ticket 4521 Update\n1200 Users",
    "Upgrade to Harbor 2 and restart\n8080 Port",
    "the H2O sensor logged 2GB of data",
])
def test_numbers_and_capitalised_words_that_are_no_address_stay(text: str) -> None:
    assert _streets(text) == []


def test_an_email_whose_last_dot_is_a_comma_is_removed_whole() -> None:
    assert _kinds("my email hyunwoo.choi@haneul-soft,kr thanks") == [("email", "hyunwoo.choi@haneul-soft,kr")]
    # a list of addresses split by commas stays two addresses, and a comma before a word is no domain's
    assert _kinds("mails: ana@mail.com,leo@mail.com") == [("email", "ana@mail.com"), ("email", "leo@mail.com")]
    assert [k for k, _ in _kinds("write to x@y,and then wait")] == []


@pytest.mark.parametrize("text", ["my user id is u_30077215", "login is u_30077215"])
def test_digits_glued_to_a_handle_by_an_underscore_are_the_handle_not_a_telephone(text: str) -> None:
    assert _kinds(text) == [("username", "u_30077215")]
