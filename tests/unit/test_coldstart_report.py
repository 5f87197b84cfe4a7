"""``bench/coldstart.py --json``: each handler's figures against the same-run reference."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.scripts import load_script

REPO = Path(__file__).resolve().parents[2]


def load() -> ModuleType:
    return load_script("bench/coldstart.py", "coldstart_bench")


def test_ratios_are_to_the_reference_and_the_verdict_is_on_the_import_ratio() -> None:
    bench = load()
    floor = bench.Figures(imports=[400.0, 380.0, 420.0], cpu=[200.0, 200.0, 200.0])
    rows = [{"name": "retrieve", "importMs": 600.0, "cpuMs": 260.0, "deferredMs": 5.0},
            {"name": "ingest", "importMs": 604.0, "cpuMs": 250.0, "deferredMs": 0.0}]
    report = bench.json_report(rows, floor, True)
    assert report["reference"]["importMs"] == 400.0
    retrieve, ingest = report["handlers"]
    assert (retrieve["importRatio"], retrieve["cpuRatio"], retrieve["withinRatio"]) == (1.5, 1.3, True)
    assert (ingest["importRatio"], ingest["withinRatio"]) == (1.51, False)
    assert report["allWithinRatio"] is False and report["maxRatio"] == 1.5


def test_runs_are_interleaved_round_by_round_with_the_order_turned() -> None:
    bench = load()
    names = ["ingest", "retrieve", bench.FLOOR]
    order = bench.rounds(names, 4)
    assert order == [["ingest", "retrieve", bench.FLOOR], ["retrieve", bench.FLOOR, "ingest"],
                     [bench.FLOOR, "ingest", "retrieve"], ["ingest", "retrieve", bench.FLOOR]]
    assert all(sorted(r) == sorted(names) for r in order)
