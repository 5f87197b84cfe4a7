#!/usr/bin/env python3
"""Cold-start import time of each Lambda handler, measured in fresh interpreters.

Each run starts a new ``python`` process that imports ``functions.<name>.handler`` — the
Powertools setup and the module-level composition root (``build_aws_services``: boto3
session and the clients the function uses on most invocations) — with an environment like
the one Lambda gives the function but pointing nowhere: clients are created, never called,
so nothing touches the network. The time is wall clock from just before the import to just
after it (interpreter start-up excluded: Lambda pays that before the handler module anyway);
the median of ``--runs`` runs is reported (the verdict is on it; the runs of every handler and
of the reference are interleaved, round by round, so a change of the machine's load during
the measurement reaches all rows alike), with the median CPU time of
the importing process next to it — the steadier figure on a machine other jobs share — and
the asset sizes from ``build/assets/manifest.json`` when ``make assets`` (or ``--core-only``)
wrote one.

The environment includes what the Lambda runtime sets (``LAMBDA_TASK_ROOT``,
``AWS_LAMBDA_FUNCTION_NAME``, ``AWS_XRAY_DAEMON_ADDRESS``...), because two libraries decide
what to do at import from it: the Powertools Tracer is enabled (and patches the modules it
traces) only inside Lambda, and the X-Ray SDK builds its centralized-sampling poller — two
botocore clients, about 0.25 s here — only outside Lambda. ``--outside-lambda`` leaves those
variables out, for comparison with figures taken that way.

Bytecode is warm (an unmeasured first run writes it): the deployed assets ship theirs, since
``build_lambda_assets.py`` compiles them for Python 3.12. Assets built without it would add
the compilation of every imported layer module to each cold start, several hundred ms here.

What a function defers is not hidden: the components ``build_aws_services`` left to first use
(``knowledge.wiring.Lazy``, listed in ``SERVICES.caches["aws.deferred"]``) are created in the
same process right after the import and timed. That is the extra cost of the first
invocation that needs each of them (once per environment); ``+deferred`` is the sum, i.e.
the worst case of a first invocation that needs all of them, and the last column names them.
``opensearch-py`` is the client the search index creates for its first management call or
write (queries go as plain signed HTTP, ``knowledge.adapters.aws.search_http``).
Each function only defers what most of its invocations never touch (its ``EAGER`` tuple;
``tests/functional/test_handlers.py`` checks the usual invocations leave the rest uncreated).

    python bench/coldstart.py [--runs 5] [--importtime ingest] [--outside-lambda] [--instructions] [--json]

``--json`` prints one JSON document instead of the table: per handler the median import and
CPU milliseconds, their ratio to the reference row of the same run (``importRatio``,
``cpuRatio``) and whether the import is within ``MAX_RATIO`` (1.5) of it; the exit status is 1
when a handler is not.

``--importtime NAME`` also prints the slowest modules of one handler (``python -X importtime``).
``--instructions`` also counts the CPU instructions of each import (valgrind's cachegrind, when
installed; about 20 s per handler): unlike the times, the count hardly moves with the load of a
shared machine, so it is the figure to compare two versions of the code by (same interpreter,
same libraries). It is the importing process's count less that of an interpreter that imports
nothing, and leaves the deferred components out, like the import column.
The target is <= 400 ms per handler on the build machine. A reference row measured the same
way in the same run, botocore imported and one DynamoDB client created (what any function that
reads its state pays before our code runs), shows how much of each figure is ours.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FUNCTIONS = ("ingest", "crawl", "retrieve", "admin_api", "authorizer", "scheduler")
TARGET_MS = 400.0

#: the environment the stack gives every function, with endpoints that are never contacted
ENV = {
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_SESSION_TOKEN": "bench",
    "AWS_EC2_METADATA_DISABLED": "true",
    "KB_TABLE_NAME": "kb-bench",
    "KB_DUE_INDEX_NAME": "due",
    "KB_BUCKET_NAME": "kb-bench",
    "KB_SEARCH_ENDPOINT": "https://search.invalid",
    "KB_INDEX_PREFIX": "kb",
    "KB_SEARCH_REPLICAS": "0",
    "KB_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:kb-refresh",
    "KB_EMBEDDER": "bedrock",
    "KB_BEDROCK_MODEL_ID": "amazon.titan-embed-text-v2:0",
    "KB_SECRETS_PREFIX": "kb-bench/bots",
    "POWERTOOLS_SERVICE_NAME": "kb",
    "POWERTOOLS_METRICS_NAMESPACE": "kb",
    "LOG_LEVEL": "INFO",
}

#: what the Lambda runtime adds for every function (the X-Ray daemon address is never contacted
#: at import; the SDK writes its ``/tmp/.aws-xray/initialized`` marker, as it does in Lambda)
LAMBDA_ENV = {
    "LAMBDA_TASK_ROOT": str(REPO),
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
    "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000",
    "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR",
}

#: key of ``Services.caches`` listing the deferred components (``knowledge.wiring.DEFERRED``)
DEFERRED = "aws.deferred"

#: the reference row: what any function that reads its state pays before any code of ours runs
#: (botocore imported, one DynamoDB client created; no Powertools, no tracing, no OpenSearch)
FLOOR = "reference: botocore + DynamoDB client"
FLOOR_CODE = (
    "import botocore.session\n"
    "botocore.session.get_session().create_client('dynamodb', region_name='us-east-1')\n"
)

PROBE = (
    "import importlib, json, sys, time, types\n"
    "t, c = time.perf_counter(), time.process_time()\n"
    "if sys.argv[1] == '-floor':\n"
    "    module = types.SimpleNamespace()\n"
    "    exec(sys.argv[3])\n"
    "else:\n"
    "    module = importlib.import_module(sys.argv[1])\n"
    "cold, cpu = (time.perf_counter() - t) * 1000.0, (time.process_time() - c) * 1000.0\n"
    "holders = getattr(getattr(module, 'SERVICES', None), 'caches', {}).get(sys.argv[2], {})\n"
    "deferred = {}\n"
    "for name, holder in holders.items():\n"
    "    t = time.perf_counter()\n"
    "    holder.get()\n"
    "    deferred[name] = (time.perf_counter() - t) * 1000.0\n"
    "index = getattr(getattr(module, 'SERVICES', None), 'index', None)\n"
    "client = getattr(index, 'client', None) if index is not None else None\n"
    "if client is not None and getattr(client, '_full', 0) is None:  # search_http.QueryClient\n"
    "    t = time.perf_counter()\n"
    "    client.full\n"
    "    deferred['opensearch-py'] = (time.perf_counter() - t) * 1000.0\n"
    "print(json.dumps({'import': cold, 'cpu': cpu, 'deferred': deferred}))\n"
)


@dataclass
class Figures:
    imports: list[float] = field(default_factory=list)  # ms per run, wall clock
    cpu: list[float] = field(default_factory=list)  # ms per run, CPU time of the process
    deferred: list[dict[str, float]] = field(default_factory=list)  # ms per component per run

    @property
    def deferred_total(self) -> list[float]:
        return [sum(run.values()) for run in self.deferred]


def child_env(name: str, *, lambda_env: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "KB_", "POWERTOOLS_", "LAMBDA_", "_X_AMZN"))}
    env.update(ENV)
    if lambda_env:
        env.update(LAMBDA_ENV)
        env["AWS_LAMBDA_FUNCTION_NAME"] = f"kb-{name}"
        env["_HANDLER"] = "handler.handler"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "layers" / "core" / "src"), str(REPO)])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _probe(name: str, *, lambda_env: bool) -> dict[str, object]:
    """One fresh interpreter importing ``functions.<name>.handler`` (or the reference)."""
    module = "-floor" if name == FLOOR else f"functions.{name}.handler"
    out = subprocess.run([sys.executable, "-c", PROBE, module, DEFERRED, FLOOR_CODE], cwd=REPO,
                         env=child_env(name, lambda_env=lambda_env), capture_output=True, text=True,
                         timeout=120, check=False)
    if out.returncode != 0:
        raise SystemExit(f"importing {module} failed:\n{out.stderr[-2000:]}")
    data: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def rounds(names: list[str], runs: int) -> list[list[str]]:
    """The order of the measured runs: ``runs`` rounds, each running every name once, the
    order turned by one each round, so a change of the machine's load during the measurement
    reaches every row (the reference too) alike instead of the rows measured last."""
    return [names[r % len(names):] + names[:r % len(names)] for r in range(runs)]


def measure_all(names: list[str], runs: int, *, lambda_env: bool = True) -> dict[str, Figures]:
    """The figures of each name (a handler or ``FLOOR``), their runs interleaved (``rounds``)."""
    figures = {name: Figures() for name in names}
    # an unmeasured first run of each warms the bytecode cache: the deployed layers ship theirs
    for name in names:
        _probe(name, lambda_env=lambda_env)
    for order in rounds(names, runs):
        for name in order:
            data = _probe(name, lambda_env=lambda_env)
            figures[name].imports.append(float(data["import"]))  # type: ignore[arg-type]
            figures[name].cpu.append(float(data["cpu"]))  # type: ignore[arg-type]
            deferred = data["deferred"]
            assert isinstance(deferred, dict)
            figures[name].deferred.append({str(k): float(v) for k, v in deferred.items()})
    return figures


def import_profile(name: str, top: int = 15, *, lambda_env: bool = True) -> list[tuple[float, str]]:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import functions.{name}.handler"],
                         env=child_env(name, lambda_env=lambda_env), cwd=REPO, capture_output=True, text=True,
                         timeout=120, check=False)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, module = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(cumulative) / 1000.0, module))
    return sorted(rows, reverse=True)[:top]


def instructions(name: str, *, lambda_env: bool = True) -> float | None:
    """Millions of instructions the import of ``functions.<name>.handler`` executes (valgrind
    cachegrind, bytecode warm), or ``None`` without valgrind."""
    if shutil.which("valgrind") is None:
        return None

    def count(code: str) -> int:
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                                  f"--cachegrind-out-file={Path(tmp) / 'cg.out'}", sys.executable, "-c", code],
                                 cwd=REPO, env=child_env(name, lambda_env=lambda_env), capture_output=True, text=True,
                                 timeout=600, check=False)
        found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
        if out.returncode != 0 or found is None:
            raise SystemExit(f"counting the instructions of {name} failed:\n{out.stderr[-2000:]}")
        return int(found.group(1).replace(",", ""))

    prelude = "import importlib, json, sys, time"
    work = (f"{prelude}\n{FLOOR_CODE}" if name == FLOOR
            else f"{prelude}; importlib.import_module('functions.{name}.handler')")
    return (count(work) - count(prelude)) / 1e6


def asset_sizes() -> tuple[dict[str, int], dict[str, int]]:
    """(unzipped, zipped) bytes per asset from the manifest of ``build_lambda_assets.py``."""
    manifest = REPO / "build" / "assets" / "manifest.json"
    if not manifest.exists():
        return {}, {}
    data = json.loads(manifest.read_text())

    def table(key: str) -> dict[str, int]:
        sizes = data.get(key, {})
        return {str(k): int(v) for k, v in sizes.items()} if isinstance(sizes, dict) else {}

    return table("bytes"), table("zippedBytes")


def _kb(size: int | None) -> str:
    return f"{size / 1e3:11.1f}" if size is not None else f"{'-':>11}"


def print_sizes(unzipped: dict[str, int], zipped: dict[str, int]) -> None:
    if not unzipped:
        print("\n(no build/assets/manifest.json: run `make assets` for asset sizes)")
        return
    print(f"\n{'asset':24} {'unzipped KB':>11} {'zipped KB':>11}")
    for name in sorted(unzipped, key=lambda n: (not n.startswith("layers/"), n)):
        print(f"{name:24} {_kb(unzipped[name])} {_kb(zipped.get(name))}")

    def deployed(sizes: dict[str, int]) -> int | None:
        # what Lambda unpacks for the biggest function: its code plus both layers
        if not sizes:
            return None
        functions = [size for name, size in sizes.items() if name.startswith("functions/")]
        return max(functions, default=0) + sum(size for name, size in sizes.items() if name.startswith("layers/"))

    print(f"{'largest function+layers':24} {_kb(deployed(unzipped))} {_kb(deployed(zipped))}")


#: a handler's import may cost at most this multiple of the same-run reference (``--json``)
MAX_RATIO = 1.5


def json_report(rows: list[dict[str, object]], floor: Figures, lambda_env: bool) -> dict[str, object]:
    """The ``--json`` document: the reference row, then each handler against it."""
    ref_import, ref_cpu = statistics.median(floor.imports), statistics.median(floor.cpu)
    for row in rows:
        row["importRatio"] = round(float(row["importMs"]) / ref_import, 2)  # type: ignore[arg-type]
        row["cpuRatio"] = round(float(row["cpuMs"]) / ref_cpu, 2)  # type: ignore[arg-type]
        row["withinRatio"] = float(row["importRatio"]) <= MAX_RATIO  # type: ignore[arg-type]
    return {
        "insideLambdaEnvironment": lambda_env,
        "maxRatio": MAX_RATIO,
        "reference": {"name": FLOOR, "importMs": round(ref_import, 1), "cpuMs": round(ref_cpu, 1)},
        "handlers": rows,
        "allWithinRatio": all(bool(row["withinRatio"]) for row in rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="measured runs per handler (median reported)")
    parser.add_argument("--importtime", choices=FUNCTIONS, help="also list the slowest imports of one handler")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each import's CPU instructions (valgrind; steady on a shared machine)")
    parser.add_argument("--outside-lambda", action="store_true",
                        help="leave out the variables the Lambda runtime sets (tracing off, X-Ray sampling poller on)")
    parser.add_argument("--json", action="store_true",
                        help=f"print one JSON document (ratios to the reference; exit 1 above {MAX_RATIO}x)")
    args = parser.parse_args(argv)
    lambda_env = not args.outside_lambda
    measured = measure_all([*FUNCTIONS, FLOOR], max(1, args.runs), lambda_env=lambda_env)
    if args.json:
        rows: list[dict[str, object]] = []
        for name in FUNCTIONS:
            figures = measured[name]
            rows.append({"name": name, "importMs": round(statistics.median(figures.imports), 1),
                         "cpuMs": round(statistics.median(figures.cpu), 1),
                         "deferredMs": round(statistics.median(figures.deferred_total), 1)})
        report = json_report(rows, measured[FLOOR], lambda_env)
        print(json.dumps(report, indent=2))
        return 0 if report["allWithinRatio"] else 1

    print(f"{'handler':12} {'import ms':>10} {'min':>6} {'max':>6} {'cpu ms':>7} {'+deferred':>10}  {'target':14} "
          + (f"{'M instr':>8}  " if args.instructions else "") + "deferred to first use (ms)")
    over = 0
    for name in FUNCTIONS:
        figures = measured[name]
        median = statistics.median(figures.imports)
        over += median > TARGET_MS
        later = statistics.median(figures.deferred_total)
        names = ", ".join(f"{component} {statistics.median(run.get(component, 0.0) for run in figures.deferred):.0f}"
                          for component in (figures.deferred[0] if figures.deferred else {}))
        verdict = "ok" if median <= TARGET_MS else f"over {TARGET_MS:.0f} ms"
        counted = ""
        if args.instructions:
            millions = instructions(name, lambda_env=lambda_env)
            counted = f"{millions:8.0f}  " if millions is not None else f"{'-':>8}  "
        print(f"{name:12} {median:10.0f} {min(figures.imports):6.0f} {max(figures.imports):6.0f} "
              f"{statistics.median(figures.cpu):7.0f} {later:10.0f}  "
              f"{verdict:14} {counted}{names or '-'}", flush=True)
    floor = measured[FLOOR]
    floor_counted = ""
    if args.instructions:
        millions = instructions(FLOOR, lambda_env=lambda_env)
        floor_counted = f", {millions:.0f} M instr" if millions is not None else ""
    print(f"{FLOOR}: {statistics.median(floor.imports):.0f} ms (min {min(floor.imports):.0f}, "
          f"max {max(floor.imports):.0f}, cpu {statistics.median(floor.cpu):.0f}{floor_counted}): the part of "
          "every figure above that no code of ours can remove, measured in this run")
    if not lambda_env:
        print("\n(--outside-lambda: Powertools tracing disabled, X-Ray sampling poller built)")
    print_sizes(*asset_sizes())
    if args.importtime:
        print(f"\nslowest imports of {args.importtime} (cumulative ms):")
        for ms, module in import_profile(args.importtime, lambda_env=lambda_env):
            print(f"{ms:8.1f}  {module}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
