"""Whether a change to the retrieval path left every answer as it was.

    python bench/answers_unchanged.py --out FILE [--passages 20000] [--store DIR]
    python bench/answers_unchanged.py --against FILE [--store DIR]

Asks the NFCorpus questions of ``bench/lexical.py`` over its corpus (``--passages`` word windows
of the real abstracts), and the support and vocabulary-mismatch questions over the example packs
and the Harbor docs (``bench/confidence.py``'s corpora). The corpora are built into ``--store``
on first use and read from there by later runs: two builds differ (generation ids, hence passage
keys and tie-breaks, and the rescue model's randomized SVD), so before and after must read the
same folder. Every question is recorded as the API records it (retrieval record,
gap). Writes, per question, everything a caller sees except the retrieval id: each excerpt
(text, scores, signals), the confidence and its components, ``wouldAnswer``, the topic and gate;
then the gaps recorded (question as stored, outcome, topic). ``--against`` compares with a file
written before the change and exits 1, listing the first differences, when anything moved.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT))

import lexical  # noqa: E402
from confidence import build_corpora  # noqa: E402

from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

SETS = (ROOT / "support_questions.jsonl", ROOT / "vocab_mismatch_questions.jsonl")


def answer(services: Any, bot: str, q: str, audience: str, options: RetrievalOptions) -> dict[str, Any]:
    res = retrieve(services, RetrievalRequest(bot, q, audience), options=options)
    res.pop("retrievalId")
    return res


def gaps(services: Any, bot: str, since: float = 0.0) -> list[list[Any]]:
    found = services.state.list_gaps(bot, None, since=since, now=services.clock.now() + 1)
    return sorted([g.audience, g.question, g.outcome, g.topic] for g in found)


def collect(store: Path, passages: int, options: RetrievalOptions) -> dict[str, Any]:
    out: dict[str, Any] = {}
    seed, queries, _ = lexical.load_seed(ROOT.parent.parent / "shared" / "data" / "nfcorpus")
    if not (store / "kb-lexical").is_dir():
        store.mkdir(parents=True, exist_ok=True)
        packs = lexical.write_packs(lexical.make_passages(seed, passages), store / "packs")
        lexical.bench_kb(packs, [], store)[0]["close"]()
    services = build_local_services(LocalSettings(data_dir=store / "kb-lexical"))
    start = services.clock.now()  # the folder holds the gaps of earlier runs too
    out["nfcorpus"] = [answer(services, "bench", q[:16_000], "customer", options) for q in queries]
    out["nfcorpus gaps"] = gaps(services, "bench", since=start)
    services.state.close()
    if not (store / "packs-kb").is_dir():
        for s in build_corpora(store, "none").values():
            s.state.close()
    corpora = {name: build_local_services(LocalSettings(data_dir=kb))
               for name in ("packs", "harbor") if (kb := store / f"{name}-kb").is_dir()}
    start = max(s.clock.now() for s in corpora.values())
    for path in SETS:
        items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        out[path.name] = [answer(corpora[i["corpus"]], "default", i["query"], i["audience"], options)
                          for i in items if i["corpus"] in corpora]
    out["support gaps"] = {name: gaps(s, "default", since=start) for name, s in corpora.items()}
    for s in corpora.values():
        s.state.close()
    return out


def differences(old: Any, new: Any, where: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        found = [f"{where}.{k}: only in one" for k in sorted(set(old) ^ set(new))]
        for k in sorted(set(old) & set(new)):
            found += differences(old[k], new[k], f"{where}.{k}")
        return found
    if isinstance(old, list) and isinstance(new, list):
        found = [f"{where}: {len(old)} items, now {len(new)}"] if len(old) != len(new) else []
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            found += differences(a, b, f"{where}[{i}]")
        return found
    return [] if old == new else [f"{where}: {old!r} -> {new!r}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--against", type=Path)
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "kb-answers-unchanged",
                        help="where the corpora are built on first use and read again by later runs")
    parser.add_argument("--rescue", action="store_true", help="ask with the rescue switched on")
    args = parser.parse_args()
    options = RetrievalOptions(rescue=args.rescue)
    got = json.loads(json.dumps(collect(args.store, args.passages, options)))
    if args.out:
        args.out.write_text(json.dumps(got, indent=0, sort_keys=True))
    if args.against:
        diff = differences(json.loads(args.against.read_text()), got)
        for line in diff[:40]:
            print(line)
        answers = sum(len(v) for k, v in got.items() if isinstance(v, list) and "gaps" not in k)
        print(f"{answers} answers compared: {len(diff)} differences")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
