from __future__ import annotations

import re

import pytest

from knowledge.answer import live
from knowledge.answer.live import LiveRow, compose, parse_rows, validate_table
from knowledge.errors import BackendError, InvalidInput
from knowledge.model import Source

BTC = {"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "network": "Bitcoin", "fixedFee": 0.0005,
       "percentageFee": 0.5, "minAmount": 0.001, "maxAmount": 5, "processingTime": "up to 30 minutes"}
ETH = {"area": "withdrawal", "name": "Ether", "code": "ETH", "fixedFee": "0.004 ETH", "minAmount": 0.01}
SEPA = {"area": "withdrawal", "name": "SEPA transfer", "code": "EUR", "percentageFee": "1%",
        "processingTime": "1-3 business days"}
CARD = {"area": "deposit", "name": "Card", "percentageFee": 2.5, "minAmount": 10, "processingTime": ""}
OFF = {"area": "withdrawal", "name": "Retired coin", "code": "OLD", "fixedFee": 1, "enabled": False}


def run(question: str, topic: str | None, tables: dict | None, **kw):
    return compose(question, topic, tables, source_id="live1", title="Payment methods", **kw)


# -- rows -----------------------------------------------------------------------------------


def test_rows_parse_with_defaults() -> None:
    (row,) = parse_rows([{"area": "plan", "name": "Pro"}])
    assert row.enabled is True and row.code is None and row.fixedFee is None


@pytest.mark.parametrize(
    ("row", "code"),
    [
        ({"area": "deposit", "name": "Card", "colour": "red"}, "unknown_field"),
        ({"area": "deposit", "name": "Card", "fee": 1}, "unknown_field"),
        ({"area": "deposit"}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "code": "btc"}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "code": "TOOLONGX"}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "code": "B"}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "enabled": "yes"}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "fixedFee": True}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "fixedFee": float("nan")}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "minAmount": ""}, "invalid_live_row"),
        ({"area": "deposit", "name": "Card", "processingTime": 5}, "invalid_live_row"),
        ({"area": "", "name": "Card"}, "invalid_live_row"),
        ("not a row", "invalid_live_row"),
    ],
)
def test_malformed_rows_have_stable_codes(row: object, code: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_rows([BTC, row])
    assert err.value.code == code
    assert err.value.details["row"] == 1


@pytest.mark.parametrize(
    ("table", "body", "code"),
    [
        ("Withdrawals", {"rows": []}, "invalid_live_table"),
        ("with/drawals", {"rows": []}, "invalid_live_table"),
        ("w", {"rows": {}}, "invalid_live_table"),
        ("w", [], "invalid_live_table"),
        ("w", {"rows": [], "extra": 1}, "unknown_field"),
        ("w", {"rows": [{"area": "a", "name": "n"}] * 501}, "invalid_live_table"),
        ("w", {"rows": [{"area": "a" * 60, "name": "n" * 120, "network": "w" * 60, "processingTime": "t" * 200,
                         "fixedFee": "f" * 60, "minAmount": "m" * 60, "maxAmount": "x" * 60}] * 500},
         "invalid_live_table"),  # over 256 KB
    ],
)
def test_table_bodies_have_stable_codes(table: str, body: object, code: str) -> None:
    with pytest.raises(InvalidInput) as err:
        validate_table(table, body)
    assert err.value.code == code


def test_validate_table_returns_storable_rows() -> None:
    assert validate_table("withdrawals", {"rows": [BTC, OFF]}) == [{**BTC, "enabled": True}, OFF]


# -- composition rules ----------------------------------------------------------------------


def test_only_classified_questions_get_passages() -> None:
    tables = {"methods": [BTC]}
    assert run("how do I reset my password", None, tables) == []
    assert run("anything", "weather", tables) == []
    assert len(run("withdrawal fee?", "fees", tables)) == 1


def test_only_enabled_rows_are_read() -> None:
    (p,) = run("withdrawal fee OLD?", "fees", {"methods": [BTC, OFF]})
    assert "Retired coin" not in p.text and "Bitcoin" in p.text


def test_one_passage_per_area_with_ids() -> None:
    passages = run("fees?", "fees", {"methods": [BTC, CARD, ETH]})
    assert [p.area for p in passages] == ["withdrawal", "deposit"]
    assert {p.document_id for p in passages} == {live.document_id("live1", "methods")}
    assert len({p.fragment_id for p in passages}) == 2
    again = run("fees?", "fees", {"methods": [BTC, CARD, ETH]})
    assert [p.fragment_id for p in again] == [p.fragment_id for p in passages]  # stable
    changed = run("fees?", "fees", {"methods": [{**BTC, "fixedFee": 0.0006}, CARD, ETH]})
    assert changed[0].fragment_id != passages[0].fragment_id and changed[1].fragment_id == passages[1].fragment_id
    other_table = run("fees?", "fees", {"a": [BTC], "b": [CARD]})
    assert other_table[0].document_id != other_table[1].document_id


def test_excerpt_shape() -> None:
    (p,) = run("fees?", "fees", {"methods": [BTC]})
    e = p.excerpt(3)
    assert e["sourceType"] == "live" and e["reason"] == "live" and e["rank"] == 3
    assert (e["sourceId"], e["documentId"], e["fragmentId"]) == ("live1", p.document_id, p.fragment_id)
    assert e["signals"]["weight"] == 1.3


def test_derives_nothing() -> None:
    (p,) = run("What is the fee to withdraw 2 BTC?", "fees", {"methods": [BTC]})
    assert "fixed fee 0.0005" in p.text and "percentage fee 0.5%" in p.text
    assert "minimum amount 0.001" in p.text and "maximum amount 5" in p.text
    # no computed fee for the amount asked about (0.0005 + 0.5% of 2 = 0.0105)
    assert "0.0105" not in p.text and "0.01" not in re.sub(r"0\.001\b", "", p.text)
    (q,) = run("fees ETH and EUR", "fees", {"methods": [ETH, SEPA]})
    assert "fixed fee 0.004 ETH" in q.text and "percentage fee 1%" in q.text and "1%%" not in q.text
    assert "e-" not in live.render_row(LiveRow(area="a", name="n", fixedFee=0.00001))  # no exponent notation


def test_invents_no_timings() -> None:
    passages = run("how long does a withdrawal take", "processing_time", {"methods": [BTC, ETH, SEPA, CARD]})
    (p,) = passages  # the card row's empty processingTime and the ether row without one ground nothing
    assert "processing time: up to 30 minutes" in p.text and "processing time: 1-3 business days" in p.text
    assert "Ether" not in p.text and "Card" not in p.text
    assert run("how long", "processing_time", {"methods": [ETH, CARD]}) == []


def test_topic_picks_rows_with_a_value_for_it() -> None:
    (p,) = run("limits?", "limits", {"methods": [BTC, SEPA]})
    assert "Bitcoin" in p.text and "SEPA" not in p.text


def test_bounded_and_says_so() -> None:
    rows = [{"area": "withdrawal", "name": f"Coin {i}", "fixedFee": i} for i in range(11)]
    (p,) = run("fees", "fees", {"methods": rows}, full_list="https://example.com/fees")
    assert p.text.count("\n- ") == 8 and "Coin 7" in p.text and "Coin 8" not in p.text
    assert "partial list (8 of 11)" in p.text and "https://example.com/fees" in p.text
    assert p.url == "https://example.com/fees"
    (labelled,) = run("fees", "fees", {"methods": rows}, full_list="Settings › Payment methods")
    assert "The full list: Settings › Payment methods." in labelled.text and labelled.url is None
    (short,) = run("fees", "fees", {"methods": rows[:8]}, full_list="https://example.com/fees")
    assert "partial" not in short.text


def test_codes_only_when_named() -> None:
    tables = {"methods": [BTC, ETH, SEPA]}
    (p,) = run("What is the fee for BTC?", "fees", tables)
    assert "Bitcoin" in p.text and "Ether" not in p.text and "SEPA" not in p.text
    (both,) = run("fees for BTC or ETH", "fees", tables)
    assert "Bitcoin" in both.text and "Ether" in both.text and "SEPA" not in both.text
    (unknown,) = run("What is the fee for XMR?", "fees", tables)  # a code no row has narrows nothing
    assert all(n in unknown.text for n in ("Bitcoin", "Ether", "SEPA"))
    (lower,) = run("what is the fee for btc", "fees", tables)  # only an uppercase code is a code
    assert "Ether" in lower.text
    (word,) = run("FEES for ETHER", "fees", tables)  # part of a longer word is no code
    assert "Bitcoin" in word.text


def test_a_named_code_that_exists_only_in_disabled_rows_narrows_nothing() -> None:
    (p,) = run("fee for OLD", "fees", {"methods": [BTC, OFF]})
    assert "Bitcoin" in p.text


@pytest.mark.parametrize(
    ("tables", "kw"),
    [
        (None, {}),
        ({}, {}),
        ({"methods": [BTC]}, {"required": ("methods", "deposits")}),  # a missing table
        ({"methods": [BTC], "deposits": [CARD, {"area": "deposit"}]}, {}),  # one malformed row anywhere
        ({"methods": [BTC], "deposits": [{**CARD, "surprise": 1}]}, {}),
        ({"methods": "not rows"}, {}),
    ],
)
def test_fails_closed(tables, kw) -> None:
    assert run("fees", "fees", tables, **kw) == []


class Reader:
    def __init__(self, result=None, error: BaseException | None = None):
        self.result, self.error = result, error

    def read(self, source):
        if self.error is not None:
            raise self.error
        return self.result


def source(**kw) -> Source:
    kw.setdefault("config", {})
    kw.setdefault("status", "ready")
    return Source(id="live1", bot="b1", type="live", name="Payment methods", **kw)


@pytest.mark.parametrize("error", [TimeoutError("slow"), OSError("refused"), BackendError("down"), ValueError("json")])
def test_reader_failures_fail_closed(error: BaseException) -> None:
    assert live.source_passages(Reader(error=error), source(), "fees", "fees") == []


def test_source_passages_use_the_config() -> None:
    reader = Reader({"methods": [BTC]})
    assert len(live.source_passages(reader, source(), "fees", "fees")) == 1
    assert live.source_passages(reader, source(config={"tables": ["methods", "deposits"]}), "fees", "fees") == []
    assert live.source_passages(reader, source(status="disabled"), "fees", "fees") == []
    assert live.source_passages(reader, source(config={"tables": "methods"}), "fees", "fees") == []
    rows = [{"area": "withdrawal", "name": f"Coin {i}", "fixedFee": i} for i in range(9)]
    (p,) = live.source_passages(Reader({"m": rows}), source(config={"fullList": "https://x.test/all"}), "fees",
                                "fees")
    assert "https://x.test/all" in p.text


def test_areas_only_when_named() -> None:
    tables = {"methods": [BTC, SEPA, CARD, {**CARD, "name": "Bank", "processingTime": "same day"}]}
    (deposit,) = run("How long does a card deposit take?", "processing_time", tables)
    assert deposit.area == "deposit" and "same day" in deposit.text and "30 minutes" not in deposit.text
    # a deposit area without timings grounds nothing, and the withdrawal timings are not offered instead
    assert run("How long does a deposit take?", "processing_time", {"methods": [BTC, CARD]}) == []
    both = run("fees for deposits and withdrawals", "fees", tables)
    assert {p.area for p in both} == {"withdrawal", "deposit"}
    unnamed = run("what fees do you charge", "fees", tables)
    assert {p.area for p in unnamed} == {"withdrawal", "deposit"}
    assert live.named_areas("I deposited twice", [LiveRow(area="deposit", name="x")]) == {"deposit"}
    assert live.named_areas("what about plans", [LiveRow(area="Bank transfer", name="x")]) == set()


def test_the_weight_and_type_the_service_fuses_with_are_the_live_ones() -> None:
    from knowledge.answer import service

    assert (service.LIVE_WEIGHT, service.SOURCE_TYPE) == (live.LIVE_WEIGHT, live.SOURCE_TYPE)
