"""Retrieval quality on NFCorpus: lexical vs semantic vs hybrid vs lexical + rescue, one run.

    python bench/quality.py [--data ../shared/data/nfcorpus] [--embedder local|hashing] [--queries N]

NFCorpus (3,162 medical abstracts, 323 test questions, graded relevance 2/1) is read from
../shared/data at run time — never copied into the repository. Its text was lower-cased
with stop-words removed by its authors, so absolute figures are below published BEIR ones;
the point is comparing the lists with each other in one run. Every abstract becomes one
CUSTOMER page of a pack and goes through the whole kb refresh (chunking, embedding,
tantivy); every question goes through ``retrieve()`` with parts of the pipeline switched
off. nDCG@10 uses the graded relevance; recall@10 counts any relevant document.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "layers" / "core" / "src"))

from knowledge.evaluation import score_case  # noqa: E402
from knowledge.refresh import rescue_build  # noqa: E402
from knowledge.refresh.packsync import install_pack  # noqa: E402
from knowledge.refresh.reindex import reindex  # noqa: E402
from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve  # noqa: E402
from knowledge.settings import LocalSettings  # noqa: E402
from knowledge.wiring import build_local_services  # noqa: E402

MODES = {
    "lexical (BM25)": RetrievalOptions(semantic=False, rescue=False, upstream=False),
    "lexical + rescue": RetrievalOptions(semantic=False, rescue=True, upstream=False),
    "semantic": RetrievalOptions(lexical=False, rescue=False, upstream=False),
    "hybrid": RetrievalOptions(rescue=False, upstream=False),
    "hybrid + rescue": RetrievalOptions(rescue=True, upstream=False),
}


def load(data: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str], dict[str, dict[str, float]]]:
    docs = {}
    with (data / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            docs[obj["_id"]] = (obj.get("title") or "", obj.get("text") or "")
    queries = {}
    with (data / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            queries[obj["_id"]] = obj["text"]
    qrels: dict[str, dict[str, float]] = {}
    with (data / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter="\t"):
            if len(row) < 3 or not row[2].strip().isdigit():
                continue  # header
            if int(row[2]) > 0 and row[1] in docs:
                qrels.setdefault(row[0], {})[f"help/{row[1]}.md"] = float(row[2])
    return docs, queries, qrels


def pack(docs: dict[str, tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for doc_id, (title, text) in docs.items():
            body = f"---\naudience: CUSTOMER\ntitle: {doc_id}\n---\n{title}\n\n{text}\n"
            gz.write((json.dumps({"path": f"help/{doc_id}.md", "title": doc_id, "body": body}) + "\n").encode())
    return buf.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "nfcorpus"))
    parser.add_argument("--embedder", default="local", help="local (MiniLM, needs make local-embeddings) or hashing")
    parser.add_argument("--queries", type=int, default=0, help="only the first N questions (0 = all)")
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "corpus.jsonl").exists():
        print(f"NFCorpus not found at {data}; nothing to measure", file=sys.stderr)
        return 2
    if args.embedder == "local":  # embed each text once across runs (bench/embedding_cache.py)
        sys.path.insert(0, str(ROOT / "bench"))
        import embedding_cache

        print(f"embedding cache: {embedding_cache.install()}", file=sys.stderr)
    docs, queries, qrels = load(data)
    items = [(qid, queries[qid]) for qid in queries if qid in qrels]
    if args.queries:
        items = items[: args.queries]
    with tempfile.TemporaryDirectory(prefix="kb-quality-") as tmp:
        services = build_local_services(LocalSettings(data_dir=Path(tmp) / "kb", embedder=args.embedder))
        path = Path(tmp) / "nfcorpus.ndjson.gz"
        path.write_bytes(pack(docs))
        t0 = time.perf_counter()
        install_pack(services, path)
        report = reindex(services, "bench")
        services.index.compact("bench")  # as kb ingest does after its summary
        rescue_build.rebuild_if_stale(services, "bench")
        passages = sum(o.passages for o in report.outcomes)
        if not passages:
            print(f"indexing failed: {report.as_dict()['results']}", file=sys.stderr)
            return 1
        print(f"indexed {len(docs)} abstracts as {passages} passages with embedder {args.embedder!r} "
              f"in {time.perf_counter() - t0:.0f} s; {len(items)} questions with judgements", flush=True)
        rows = []
        for name, options in MODES.items():
            cases, times = [], []
            for qid, text in items:
                t1 = time.perf_counter()
                res = retrieve(services, RetrievalRequest("bench", text[:16_000], "customer"), record=False,
                               options=options)
                times.append(time.perf_counter() - t1)
                cases.append(score_case(text, qrels[qid], res["excerpts"], k=10))
            ndcg = sum(c.ndcg for c in cases) / len(cases)
            recall = sum(c.recall for c in cases) / len(cases)
            p50 = sorted(times)[len(times) // 2] * 1000
            rows.append((name, ndcg, recall, p50))
    print(f"\n{'list':<20}{'nDCG@10':>10}{'recall@10':>11}{'p50 ms':>9}")
    for name, ndcg, recall, p50 in rows:
        print(f"{name:<20}{ndcg:>10.4f}{recall:>11.4f}{p50:>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
