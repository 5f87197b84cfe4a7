"""Embedded ingest alone: packs of NFCorpus-like text through ``install_pack`` + ``reindex`` (the
whole refresh, until every passage is searchable), wall and CPU seconds.

    python bench/ingest.py [--passages 20000] [--tree PATH] [--rounds 3]

``--tree`` times the core library of another checkout (an unpacked ``git archive`` of an
earlier commit, say) with this script's corpus, so two versions can take turns in one run:
``--tree A --tree B`` alternates them ``--rounds`` times, each round in a fresh process. CPU
seconds (every thread of the process) move less than wall seconds on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(tree: Path, passages: int, data: Path) -> dict[str, float]:
    sys.path.insert(0, str(ROOT / "bench"))
    import lexical  # this checkout's corpus builder

    sys.path.insert(0, str(tree / "layers" / "core" / "src"))
    for name in [m for m in sys.modules if m == "knowledge" or m.startswith("knowledge.")]:
        del sys.modules[name]
    import knowledge
    from knowledge.refresh.packsync import install_pack
    from knowledge.refresh.reindex import reindex
    from knowledge.wiring import LocalSettings, build_local_services

    assert Path(knowledge.__file__).is_relative_to(tree), knowledge.__file__
    seed, _questions, _what = lexical.load_seed(data)
    with tempfile.TemporaryDirectory(prefix="kb-bench-ingest-") as work:
        packs = lexical.write_packs(lexical.make_passages(seed, passages), Path(work) / "packs")
        services = build_local_services(LocalSettings(data_dir=Path(work) / "data"))
        wall, cpu = time.perf_counter(), time.process_time()
        for pack in packs:
            install_pack(services, pack)
        report = reindex(services, "bench")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    indexed = sum(o.passages for o in report.outcomes)
    return {"passages": indexed, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--tree", type=Path, action="append", help="checkout whose core library is timed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "nfcorpus")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    if args.one:
        print(json.dumps(one(trees[0], args.passages, args.data)))
        return 0
    results: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:  # each in a fresh process: the two libraries never share one
            out = subprocess.run([sys.executable, __file__, "--one", "--tree", str(tree), "--passages",
                                  str(args.passages), "--data", str(args.data)],
                                 check=True, capture_output=True, text=True).stdout
            results[tree].append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'tree':<40}{'passages':>10}{'wall s (each round)':>28}{'cpu s (each round)':>28}")
    for tree, runs in results.items():
        walls = " ".join(f"{r['wall_s']:.1f}" for r in runs)
        cpus = " ".join(f"{r['cpu_s']:.1f}" for r in runs)
        print(f"{str(tree)[-40:]:<40}{int(runs[0]['passages']):>10}{walls:>28}{cpus:>28}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
