"""Are fee, limit and timing questions gated or grounded as the rules say?

    python bench/answer_gate.py [--show]

Builds a bot in a temporary folder (real SQLite file and tantivy index): a documentation pack
that talks about fees, limits and timings, a live source with a table of payment methods, and
one operator article. Each question of ``bench/answer/gate.jsonl`` carries what the rules
should give: ``grounded`` (the gate passes, a live or operator excerpt settles it), ``gated``
(documentation only, or live rows that hold nothing for it), or ``none`` (no topic: no gate, no
live passage). The questions were written from the rules, before the first run."""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
from pathlib import Path

from knowledge.answer import service
from knowledge.model import Source
from knowledge.refresh.packsync import install_pack
from knowledge.refresh.pipeline import Refresher
from knowledge.refresh.reindex import reindex
from knowledge.retrieve.service import RetrievalRequest, retrieve
from knowledge.settings import MAX_EXCERPTS, LocalSettings
from knowledge.wiring import build_local_services

HERE = Path(__file__).parent
BOT = "default"

DOCS = [
    ("help/withdrawals.md", "# Withdrawals\n\nWithdrawal fees and limits depend on the method and may change. "
     "Bank withdrawals usually take a few business days; crypto withdrawals are faster."),
    ("help/deposits.md", "# Deposits\n\nDeposit by card, bank transfer or crypto. A minimum deposit applies and "
     "card deposits may carry a fee."),
    ("help/plans.md", "# Plans\n\nThe Pro plan costs more than Starter and has higher limits."),
    ("help/security.md", "# Security\n\nTurn on two-factor authentication and reset your password regularly."),
]
ROWS = [
    {"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "fixedFee": 0.0005, "minAmount": 0.001,
     "processingTime": "up to 1 hour"},
    {"area": "withdrawal", "name": "Ether", "code": "ETH", "fixedFee": 0.004, "minAmount": 0.01},
    {"area": "withdrawal", "name": "SEPA transfer", "code": "EUR", "percentageFee": 0.5,
     "processingTime": "1-2 business days"},
    {"area": "deposit", "name": "Card", "percentageFee": 2.5, "minAmount": 10, "maxAmount": 5000},
    {"area": "withdrawal", "name": "Retired coin", "code": "OLD", "fixedFee": 1, "enabled": False},
]
ARTICLE = ("Plan prices", "The Pro plan costs 29 EUR a month and Starter costs 9 EUR a month.")


def build(folder: Path):
    services = build_local_services(LocalSettings(data_dir=folder / "data"))
    pack = folder / "wallet.ndjson.gz"
    lines = [json.dumps({"path": p, "title": b.splitlines()[0][2:], "body": f"---\naudience: CUSTOMER\n---\n{b}"})
             for p, b in DOCS]
    pack.write_bytes(gzip.compress("\n".join(lines).encode()))
    install_pack(services, pack)
    reindex(services, BOT)
    services.state.put_source(Source(id="art", bot=BOT, type="article", name=ARTICLE[0], visibility="public",
                                     config={"title": ARTICLE[0], "body": ARTICLE[1], "state": "published"}))
    assert Refresher(services).refresh(BOT, "art").status == "indexed"
    services.state.put_source(Source(id="live", bot=BOT, type="live", name="Payment methods", visibility="agent",
                                     status="ready"))
    service.replace_live_table(services, BOT, "methods", {"rows": ROWS})
    return services


def ask(services, q: str) -> dict:
    at = service.prepare(services, BOT, q, "customer")
    response = retrieve(services, RetrievalRequest(BOT, q, "customer", None), record=False)
    response["excerpts"] = at.add_live(response["excerpts"], MAX_EXCERPTS)
    return at.finish(response, record_gap=False)


def verdict(response: dict) -> str:
    gate = response.get("gate")
    if gate is None:
        return "none"
    return "grounded" if gate["passed"] else "gated"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--path", default=str(HERE / "answer" / "gate.jsonl"))
    args = parser.parse_args()
    rows = [json.loads(line) for line in Path(args.path).read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        services = build(Path(tmp))
        right = 0
        for row in rows:
            res = ask(services, row["q"])
            got = verdict(res)
            right += got == row["expect"]
            if args.show or got != row["expect"]:
                live = [e["text"].splitlines()[0] for e in res["excerpts"] if e["sourceType"] == "live"]
                print(f"{'ok ' if got == row['expect'] else 'BAD'} want {row['expect']:<8} got {got:<8} "
                      f"topic {res['topic']!s:<15} {row['q']}  live={live}")
    print(f"{right}/{len(rows)} questions gated or grounded as the rules say")


if __name__ == "__main__":
    main()
