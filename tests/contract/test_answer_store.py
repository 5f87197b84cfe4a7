"""StateStore contract for answer time: live tables replaced at once, gaps listed by bot,
audience and time, and gone once expired. Runs against SQLite and DynamoDB (moto)."""

from __future__ import annotations

from knowledge.model import GapRecord

NOW = 1_800_000_000.0
DAY = 24 * 3600.0


def gap(gid: str, *, bot: str = "b1", audience: str = "customer", at: float = NOW, ttl: float = 90 * DAY,
        topic: str | None = "fees", outcome: str = "nothing_found") -> GapRecord:
    return GapRecord(id=gid, bot=bot, audience=audience, question=f"question {gid}", outcome=outcome, topic=topic,
                     created_at=at, expires_at=at + ttl)


def test_live_tables_round_trip_and_replace_whole(state_store):
    assert state_store.get_live_tables("b1", "live1") == {}
    rows = [{"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "fixedFee": 0.0005, "percentageFee": 1.25,
             "processingTime": "up to 30 minutes — ünïcode", "enabled": True},
            {"area": "withdrawal", "name": "Bank", "minAmount": 10, "enabled": False}]
    state_store.put_live_table("b1", "live1", "withdrawals", rows)
    state_store.put_live_table("b1", "live1", "deposits", [{"area": "deposit", "name": "Card"}])
    assert state_store.get_live_tables("b1", "live1") == {"deposits": [{"area": "deposit", "name": "Card"}],
                                                          "withdrawals": rows}
    # a put replaces the table: no row of the old version survives
    state_store.put_live_table("b1", "live1", "withdrawals", [{"area": "withdrawal", "name": "SEPA"}])
    assert state_store.get_live_tables("b1", "live1")["withdrawals"] == [{"area": "withdrawal", "name": "SEPA"}]
    state_store.put_live_table("b1", "live1", "withdrawals", [])
    assert state_store.get_live_tables("b1", "live1")["withdrawals"] == []


def test_live_tables_are_per_bot_and_per_source(state_store):
    state_store.put_live_table("b1", "live1", "t", [{"name": "a"}])
    state_store.put_live_table("b1", "live10", "t", [{"name": "prefix neighbour"}])
    state_store.put_live_table("b2", "live1", "t", [{"name": "other bot"}])
    assert state_store.get_live_tables("b1", "live1") == {"t": [{"name": "a"}]}
    assert state_store.get_live_tables("b1", "live10") == {"t": [{"name": "prefix neighbour"}]}
    assert state_store.get_live_tables("b2", "live1") == {"t": [{"name": "other bot"}]}
    assert state_store.get_live_tables("b3", "live1") == {}


def test_gaps_listed_by_bot_audience_and_time(state_store):
    state_store.put_gap(gap("g1", at=NOW - 5 * DAY))
    state_store.put_gap(gap("g2", at=NOW - 1 * DAY, audience="operator", topic=None, outcome="below_floor"))
    state_store.put_gap(gap("g3", at=NOW - 2 * DAY))
    state_store.put_gap(gap("g4", bot="b2", at=NOW - 1 * DAY))

    customer = state_store.list_gaps("b1", "customer", since=NOW - 30 * DAY, now=NOW)
    assert [g.id for g in customer] == ["g1", "g3"]  # oldest first, other audience and bot left out
    assert customer[0] == gap("g1", at=NOW - 5 * DAY)  # every field round-trips

    everyone = state_store.list_gaps("b1", None, since=NOW - 30 * DAY, now=NOW)
    assert [g.id for g in everyone] == ["g1", "g3", "g2"]
    assert everyone[-1].topic is None and everyone[-1].outcome == "below_floor"

    recent = state_store.list_gaps("b1", "customer", since=NOW - 3 * DAY, now=NOW)
    assert [g.id for g in recent] == ["g3"]
    assert [g.id for g in state_store.list_gaps("b1", None, since=NOW - 3 * DAY, now=NOW)] == ["g3", "g2"]
    assert state_store.list_gaps("b9", None, since=0.0, now=NOW) == []


def test_expired_gaps_are_never_listed(state_store):
    state_store.put_gap(gap("old", at=NOW - 91 * DAY))  # kept 90 days: expired a day ago
    state_store.put_gap(gap("short", at=NOW - 2 * DAY, ttl=1.8 * DAY))  # a bot keeping gaps under two days
    state_store.put_gap(gap("kept", at=NOW - 89 * DAY))
    assert [g.id for g in state_store.list_gaps("b1", "customer", since=0.0, now=NOW)] == ["kept"]
    assert [g.id for g in state_store.list_gaps("b1", None, since=0.0, now=NOW)] == ["kept"]
    # read as of earlier, the short-lived one was still there
    assert [g.id for g in state_store.list_gaps("b1", None, since=0.0, now=NOW - 0.5 * DAY)] == ["kept", "short"]


def test_gaps_in_the_same_millisecond_are_all_kept(state_store):
    for i in range(3):
        state_store.put_gap(gap(f"same{i}", at=NOW))
    assert [g.id for g in state_store.list_gaps("b1", "customer", since=NOW, now=NOW)] == ["same0", "same1", "same2"]


def test_a_gap_put_later_is_built_once_and_listed(state_store):
    built = []

    def make() -> GapRecord:
        built.append(1)
        return gap("later", at=NOW - DAY)

    state_store.put_gap_later(make)
    state_store.put_gap(gap("now", at=NOW - 2 * DAY))
    assert [g.id for g in state_store.list_gaps("b1", "customer", since=0.0, now=NOW)] == ["now", "later"]
    assert [g.question for g in state_store.list_gaps("b1", None, since=NOW - DAY, now=NOW)] == ["question later"]
    assert built == [1]


def test_deleting_a_sources_live_tables_removes_them_all_and_nothing_else(state_store):
    for table in ("deposits", "withdrawals"):
        state_store.put_live_table("b1", "live1", table, [{"area": "deposit", "name": table}])
    state_store.put_live_table("b1", "live10", "t", [{"name": "prefix neighbour"}])
    state_store.put_live_table("b2", "live1", "t", [{"name": "other bot"}])
    assert state_store.delete_live_tables("b1", "live1") == 2
    assert state_store.get_live_tables("b1", "live1") == {}
    assert state_store.get_live_tables("b1", "live10") == {"t": [{"name": "prefix neighbour"}]}
    assert state_store.get_live_tables("b2", "live1") == {"t": [{"name": "other bot"}]}
    assert state_store.delete_live_tables("b1", "live1") == 0


def test_answer_settings_round_trip_with_the_bot(state_store):
    from knowledge.model import BotSettings

    answer = {"gate": False, "gapRetentionDays": 30, "topics": {"fees": {"extraStrong": ["toll", "gas*"], "weak": []}},
              "context": ["parcel*"]}
    state_store.put_bot(BotSettings(bot="b1", floor=0.4, answer=answer))
    stored = state_store.get_bot("b1")
    assert (stored.answer, stored.floor) == (answer, 0.4)
    assert isinstance(stored.answer["gapRetentionDays"], int)
    assert state_store.retrieval_view("b1")[0].answer == answer
    state_store.put_bot(BotSettings(bot="b1"))
    assert state_store.get_bot("b1").answer is None
    assert state_store.get_bot("b2").answer is None
