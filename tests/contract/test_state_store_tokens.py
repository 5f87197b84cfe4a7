"""StateStore contract for tokens (listing, revocation, expiry, last use) and the secrets in a
bot's settings: every adapter must pass this suite unchanged."""

from __future__ import annotations

import hashlib
import os
import stat

import pytest

from knowledge.model import BotSettings, Token

NOW = 1_800_000_000.0


def token(n: int, bot: str = "b1", **kw) -> Token:
    return Token(token_hash=hashlib.sha256(f"secret-{n}".encode()).hexdigest(), bot=bot,
                 scopes=kw.pop("scopes", ("knowledge:read",)), created_at=kw.pop("created_at", NOW + n), **kw)


def test_tokens_are_listed_per_bot_oldest_first_with_their_fields(state_store):
    state_store.put_token(token(2, expires_at=NOW + 3600))
    state_store.put_token(token(1, scopes=("knowledge:read", "knowledge:admin")))
    state_store.put_token(token(3, bot="b2"))
    listed = state_store.list_tokens("b1")
    assert [t.token_hash for t in listed] == [token(1).token_hash, token(2).token_hash]
    assert listed[0].scopes == ("knowledge:read", "knowledge:admin")
    assert (listed[0].expires_at, listed[1].expires_at) == (None, NOW + 3600)
    assert state_store.get_token(token(2).token_hash).expires_at == NOW + 3600
    assert [t.bot for t in state_store.list_tokens("b2")] == ["b2"]
    assert state_store.list_tokens("b3") == []


def test_a_revoked_token_is_gone_at_once_and_only_for_its_bot(state_store):
    state_store.put_token(token(1))
    state_store.put_token(token(2))
    victim = token(1)
    assert state_store.delete_token("b2", victim.id) is False  # another bot cannot revoke it
    assert state_store.get_token(victim.token_hash) is not None
    assert state_store.delete_token("b1", victim.id) is True
    assert state_store.get_token(victim.token_hash) is None
    assert [t.id for t in state_store.list_tokens("b1")] == [token(2).id]
    assert state_store.delete_token("b1", victim.id) is False


@pytest.mark.parametrize("token_id", ["", "%", "_" * 16, "0" * 15, "0" * 17, "%%%%%%%%%%%%%%%%"])
def test_revoking_by_a_pattern_revokes_nothing(state_store, token_id):
    state_store.put_token(token(1))
    assert state_store.delete_token("b1", token_id) is False
    assert len(state_store.list_tokens("b1")) == 1


def test_last_use_is_recorded_and_never_revives_a_revoked_token(state_store):
    t = token(1)
    state_store.put_token(t)
    assert state_store.get_token(t.token_hash).last_used_at is None
    state_store.touch_token(t.token_hash, NOW + 50)
    assert state_store.get_token(t.token_hash).last_used_at == NOW + 50
    assert state_store.list_tokens("b1")[0].last_used_at == NOW + 50
    state_store.delete_token("b1", t.id)
    state_store.touch_token(t.token_hash, NOW + 60)
    assert state_store.get_token(t.token_hash) is None


def test_settings_keep_their_secrets_round_trip(state_store):
    settings = BotSettings(bot="b1", embedder="openai",
                           embedder_options={"baseUrl": "https://llm.example", "apiKey": "sk-1", "model": "m"},
                           upstream={"url": "https://kb.example", "bot": "x", "token": "kb_up"})
    state_store.put_bot(settings)
    got = state_store.get_bot("b1")
    assert got.embedder_options == settings.embedder_options and got.upstream == settings.upstream
    got.embedder_options.pop("apiKey")
    got.upstream = None
    state_store.put_bot(got)
    again = state_store.get_bot("b1")
    assert again.embedder_options == {"baseUrl": "https://llm.example", "model": "m"} and again.upstream is None


def test_sqlite_keeps_secrets_out_of_the_database_in_a_0600_file(tmp_path):
    from knowledge.adapters.local.sqlite_state import SqliteStateStore

    store = SqliteStateStore(tmp_path / "state.db")
    store.put_bot(BotSettings(bot="b1", embedder_options={"apiKey": "sk-very-secret"},
                              upstream={"url": "https://kb.example", "token": "kb_upstream_secret"}))
    secrets = tmp_path / "secrets.json"
    assert stat.S_IMODE(os.stat(secrets).st_mode) == 0o600
    assert b"sk-very-secret" in secrets.read_bytes()
    for path in tmp_path.glob("state*.db*"):
        assert b"sk-very-secret" not in path.read_bytes() and b"kb_upstream_secret" not in path.read_bytes()
    # another process reading the same folder sees them
    other = SqliteStateStore(tmp_path / "state.db")
    assert other.get_bot("b1").embedder_options["apiKey"] == "sk-very-secret"
    assert other.get_bot("b1").upstream["token"] == "kb_upstream_secret"


def test_sqlite_adds_the_new_token_columns_to_an_older_database(tmp_path):
    import sqlite3

    from knowledge.adapters.local.sqlite_state import SqliteStateStore

    old = sqlite3.connect(tmp_path / "state.db")
    old.execute("CREATE TABLE tokens (token_hash TEXT PRIMARY KEY, bot TEXT NOT NULL, scopes TEXT NOT NULL, "
                "created_at REAL NOT NULL)")
    old.execute("INSERT INTO tokens VALUES (?, 'b1', 'knowledge:read', ?)", (token(1).token_hash, NOW))
    old.commit()
    old.close()
    store = SqliteStateStore(tmp_path / "state.db")
    [kept] = store.list_tokens("b1")
    assert (kept.token_hash, kept.expires_at, kept.last_used_at) == (token(1).token_hash, None, None)
    store.touch_token(kept.token_hash, NOW + 5)
    assert store.get_token(kept.token_hash).last_used_at == NOW + 5
