"""What the embedded search's boundary clauses (bot, visibility, live generations) cost.

    python bench/boundary.py [--passages 100000] [--sources 10] [--rounds 3]

One partition of the real adapter (``TantivySearchIndex``), written from the same NFCorpus
word windows as ``bench/lexical.py`` in ``--sources`` sources and compacted, is asked
NFCorpus's test questions (``search_lexical``: top 50 with the six fast-field columns) three
ways, taking turns within each round:

- key ranges: the clauses as the adapter builds them (``_PartitionIndex.boundary``);
- term clauses: the previous encoding, a term query on ``bot`` and an OR of term queries on
  ``visibility`` and on ``source_gen``, each non-scoring;
- no clauses: the question's words alone (not a valid search: the reference the other two
  are compared with).

Every variant must return the same hits for every question; the script stops if not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core" / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import tantivy  # noqa: E402
from lexical import load_seed, make_passages  # noqa: E402

from knowledge.adapters.local.tantivy_index import TantivySearchIndex  # noqa: E402
from knowledge.model import Passage  # noqa: E402


def term_clauses(index: TantivySearchIndex, bot: str, visibilities, source_gens) -> list:
    q, must, schema = tantivy.Query, tantivy.Occur.Must, index.schema

    def any_of(field: str, values) -> tantivy.Query:
        terms = [q.term_query(schema, field, v) for v in dict.fromkeys(values)]
        return terms[0] if len(terms) == 1 else q.boolean_query([(tantivy.Occur.Should, t) for t in terms])

    return [(must, q.const_score_query(q.term_query(schema, "bot", bot), 0.0)),
            (must, q.const_score_query(any_of("visibility", visibilities), 0.0)),
            (must, q.const_score_query(any_of("source_gen", source_gens), 0.0))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--sources", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "nfcorpus"))
    args = parser.parse_args()

    seed, queries, origin = load_seed(Path(args.data))
    texts = make_passages(seed, args.passages)
    print(f"corpus: {len(texts)} passages in {args.sources} sources, built from {origin}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kb-boundary-") as tmp:
        index = TantivySearchIndex(tmp)
        passages = [Passage(id=f"p{i}", bot="bench", source_id=f"s{i % args.sources}", document_id=f"d{i}",
                            generation=3, ordinal=0, title="T", path=f"p{i}.md", breadcrumb="T", text=text,
                            visibility="agent" if i % 4 == 0 else "public") for i, text in enumerate(texts)]
        index.write("bench", passages)
        index.compact("bench", force=True)
        gens = [f"s{k}:3" for k in range(args.sources)]
        vis = ("public", "agent")
        keyed = index._filters
        variants = {
            "key ranges": keyed,
            "term clauses": lambda _part, _searcher, bot, v, g: term_clauses(index, bot, v, g),
            "no clauses": lambda *_: [],
        }

        def ask(q: str) -> list[int]:
            return [h.ref.key for h in index.search_lexical("bench", "customer", q, visibilities=vis,
                                                            source_gens=gens)]

        answers: dict[str, list[list[int]]] = {}
        p50s: dict[str, list[float]] = {name: [] for name in variants}
        for name, filters in variants.items():
            index._filters = filters  # type: ignore[method-assign]
            answers[name] = [ask(q) for q in queries]
        if any(a != answers["key ranges"] for a in answers.values()):
            print("the variants disagree on some question's hits")
            return 1
        for _ in range(args.rounds):
            for name, filters in variants.items():
                index._filters = filters  # type: ignore[method-assign]
                times = []
                for q in queries:
                    t0 = time.perf_counter()
                    ask(q)
                    times.append((time.perf_counter() - t0) * 1e3)
                p50s[name].append(statistics.median(times))
        index._filters = keyed  # type: ignore[method-assign]
    base = statistics.median(p50s["no clauses"])
    print(f"\n{'variant':<16}{'p50 ms':>9}   per round")
    for name, rounds in p50s.items():
        p50 = statistics.median(rounds)
        print(f"{name:<16}{p50:>9.3f}   {', '.join(f'{x:.3f}' for x in rounds)}   ({p50 / base:.2f}x no clauses)")
    print(f"same hits for all {len(queries)} questions in every variant")
    return 0


if __name__ == "__main__":
    sys.exit(main())
