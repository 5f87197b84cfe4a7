"""Redaction round 15, street addresses of multi-line address blocks: a Polish street with its
flat ("lok. 4") over its postcode line, a Czech street with no street word ("Korunní 2569/108")
over a postcode and a numbered district ("101 00 Praha 10"), a Brazilian town, state and CEP line,
a Dutch unit after the house number, a Japanese building line with its floor, and a Korean address
with its postcode in brackets and its floor; and the ordinary text beside those shapes that stays."""

from __future__ import annotations

import pytest

from knowledge.answer.redact import find_spans, redact


def _streets(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_spans(text, known_words=set()) if s.kind == "street_address"]


def _nothing_found(text: str) -> bool:
    return find_spans(text, known_words=set()) == []


@pytest.mark.parametrize(("text", "address"), [
    ("Faktura na:\nJan Kowalski\nul. Długa 27 lok. 4\n80-827 Gdańsk\nNIP 5213456789",
     "ul. Długa 27 lok. 4\n80-827 Gdańsk"),
    ("Faktura na:\nJan Kowalski\nul. Długa 27 m. 4\n80-827 Gdańsk\nDziękuję", "ul. Długa 27 m. 4\n80-827 Gdańsk"),
    ("Faktura na:\nJan Kowalski\nul. Długa 27/4\n80-827 Gdańsk\nDziękuję", "ul. Długa 27/4\n80-827 Gdańsk"),
])
def test_a_polish_street_with_its_flat_takes_the_postcode_line_under_it(text: str, address: str) -> None:
    assert _streets(text) == [address]


def test_a_polish_address_block_is_removed_whole() -> None:
    text = "Faktura na:\nJan Kowalski\nul. Długa 27 lok. 4\n80-827 Gdańsk\nDziękuję"
    assert "Długa" not in redact(text).text and "lok. 4" not in redact(text).text
    assert "Gdańsk" not in redact(text).text


@pytest.mark.parametrize("text", [
    "Please check invoice 27/4 from 80-827 orders last month.",
    "Gdańsk office: room 27, 4th floor, open 8-16.",
])
def test_a_polish_address_s_numbers_in_a_sentence_remove_nothing(text: str) -> None:
    assert _nothing_found(text)


@pytest.mark.parametrize(("text", "address"), [
    ("Adresa:\nACME s.r.o.\nKorunní 2569/108\n101 00 Praha 10\nIČO 27074358", "Korunní 2569/108\n101 00 Praha 10"),
    ("Fakturační údaje:\nKorunní 2569/108, byt 4\n101 00 Praha 10\n", "Korunní 2569/108, byt 4\n101 00 Praha 10"),
    ("Doručte prosím na:\nNa Příkopě 12\n110 00 Praha 1\nDíky", "Na Příkopě 12\n110 00 Praha 1"),
])
def test_a_czech_street_without_a_street_word_over_its_postcode_and_district(text: str, address: str) -> None:
    assert _streets(text) == [address]


@pytest.mark.parametrize("text", [
    "The bug is in version 2569/108 of the runner.",
    "Praha 10 office hours are 9:00 to 17:00.",
    "Ticket 2569/108 was reassigned to the Praha 10 team.",
    "Kubernetes 1\n2024 Berlin",  # a year and a town under a name and a number: a conference, no postcode
    "Ticket ABC 45\n80-827 Gdańsk",  # an acronym among the words: no street's name
])
def test_a_name_and_a_number_without_a_postcode_line_remove_nothing(text: str) -> None:
    assert _streets(text) == []


@pytest.mark.parametrize(("text", "address"), [
    ("Endereço:\nAv. Ipiranga 6681\nPorto Alegre - RS, 90570-080\nObrigado",
     "Av. Ipiranga 6681\nPorto Alegre - RS, 90570-080"),
    ("Entregar em:\nRua Augusta 1500, apto 52\nSão Paulo/SP, 01310-100\n",
     "Rua Augusta 1500, apto 52\nSão Paulo/SP, 01310-100"),
])
def test_a_brazilian_town_state_and_cep_line_goes_with_the_street_above(text: str, address: str) -> None:
    assert _streets(text) == [address]


@pytest.mark.parametrize("text", [
    "O pedido saiu de Porto Alegre - RS hoje de manhã.",
    "Version 6681\nPorto Alegre - RS, team lead",
])
def test_a_brazilian_town_and_state_without_an_address_remove_nothing(text: str) -> None:
    assert _streets(text) == []


@pytest.mark.parametrize(("text", "address"), [
    ("Adres:\nStationsplein 45, unit 3.12\n3511 ED Utrecht\nMet vriendelijke groet",
     "Stationsplein 45, unit 3.12\n3511 ED Utrecht"),
    ("Factuuradres:\nKeizersgracht 123, suite 4\n1015 CJ Amsterdam\n", "Keizersgracht 123, suite 4\n1015 CJ Amsterdam"),
])
def test_a_dutch_unit_after_the_house_number_is_inside_the_address(text: str, address: str) -> None:
    assert _streets(text) == [address]


@pytest.mark.parametrize("text", [
    "We finished unit 3.12 of the course yesterday.",
    "Chapter 45, unit 3.12\nSummary",
    "Build 45, unit 3.12\n3511 ED Utrecht",  # no street's name before the unit
])
def test_a_unit_number_without_a_street_removes_nothing(text: str) -> None:
    assert _streets(text) == []


@pytest.mark.parametrize(("text", "address"), [
    ("住所:\n〒532-0011\n大阪府大阪市淀川区西中島5-14-10\n新大阪セントラルビル 9階\nよろしくお願いします",
     "〒532-0011\n大阪府大阪市淀川区西中島5-14-10\n新大阪セントラルビル 9階"),
    ("〒150-0002\n東京都渋谷区渋谷2-21-1\n渋谷ヒカリエ 12F\n", "〒150-0002\n東京都渋谷区渋谷2-21-1\n渋谷ヒカリエ 12F"),
    ("上海市浦东新区世纪大道100号\n金茂大厦 15楼1502室\n谢谢", "上海市浦东新区世纪大道100号\n金茂大厦 15楼1502室"),
])
def test_the_building_line_under_a_japanese_or_chinese_address_is_part_of_it(text: str, address: str) -> None:
    assert _streets(text) == [address]


@pytest.mark.parametrize("text", [
    "会議室は9階です。",
    "新大阪セントラルビルの9階で会いましょう。",
])
def test_a_japanese_sentence_naming_a_floor_removes_nothing(text: str) -> None:
    assert _nothing_found(text)


@pytest.mark.parametrize(("text", "address"), [
    ("大阪府大阪市淀川区西中島5-14-10\n受付は9階です", "大阪府大阪市淀川区西中島5-14-10"),
    ("上海市浦东新区世纪大道100号\n我在5楼", "上海市浦东新区世纪大道100号"),
])
def test_a_sentence_under_an_address_is_no_building_line(text: str, address: str) -> None:
    assert _streets(text) == [address]


@pytest.mark.parametrize(("text", "address"), [
    ("주소: (03922) 서울특별시 마포구 월드컵북로58길 9, 5층\n감사합니다",
     "(03922) 서울특별시 마포구 월드컵북로58길 9, 5층"),
    ("주소: (03922) 서울특별시 마포구 월드컵북로58길 9, 5층 (상암동)\n감사합니다",
     "(03922) 서울특별시 마포구 월드컵북로58길 9, 5층 (상암동)"),
])
def test_a_korean_address_takes_its_bracketed_postcode_and_its_floor(text: str, address: str) -> None:
    assert _streets(text) == [address]


def test_a_korean_count_after_an_address_is_no_floor() -> None:
    text = "서울특별시 마포구 월드컵북로58길 9, 5명이 참석합니다"
    assert _streets(text) == ["서울특별시 마포구 월드컵북로58길 9"]


@pytest.mark.parametrize("text", [
    "5층 회의실에서 9시에 만나요.",
    "(03922) 오류 코드가 다시 나타났습니다",
])
def test_a_korean_floor_or_bracketed_number_alone_removes_nothing(text: str) -> None:
    assert _nothing_found(text)
