#!/usr/bin/env python3
"""Cold-start import time of each Lambda handler, measured in fresh interpreters.

Each run starts a new ``python`` process that imports ``functions.<name>.handler`` — the
Powertools setup and the module-level composition root (``build_aws_services``: boto3
session, DynamoDB/S3/Step Functions clients, the SigV4 OpenSearch client, Bedrock where the
function embeds) — with an environment like the stack's but pointing nowhere: clients are
created, never called, so nothing touches the network. The time is wall clock from just
before the import to just after it (interpreter start-up excluded: Lambda pays that before
the handler module anyway); the median of ``--runs`` runs is reported, with the asset sizes
from ``build/assets/manifest.json`` when ``make assets`` (or ``--core-only``) wrote one.

    python bench/coldstart.py [--runs 5] [--importtime ingest]

``--importtime NAME`` also prints the slowest modules of one handler (``python -X importtime``).
The target is <= 400 ms per handler on the build machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
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
    "POWERTOOLS_SERVICE_NAME": "kb",
    "POWERTOOLS_METRICS_NAMESPACE": "kb",
    "LOG_LEVEL": "INFO",
}

PROBE = (
    "import importlib, sys, time\n"
    "t = time.perf_counter()\n"
    "importlib.import_module(sys.argv[1])\n"
    "print((time.perf_counter() - t) * 1000.0)\n"
)


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "KB_", "POWERTOOLS_"))}
    env.update(ENV)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "layers" / "core" / "src"), str(REPO)])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(name: str, runs: int) -> list[float]:
    module = f"functions.{name}.handler"
    times = []
    for _ in range(runs + 1):  # the first run warms the bytecode cache, as a deployed layer is
        out = subprocess.run([sys.executable, "-c", PROBE, module], env=child_env(), cwd=REPO,
                             capture_output=True, text=True, timeout=120, check=False)
        if out.returncode != 0:
            raise SystemExit(f"importing {module} failed:\n{out.stderr[-2000:]}")
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return times[1:]


def import_profile(name: str, top: int = 15) -> list[tuple[float, str]]:
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import functions.{name}.handler"],
                         env=child_env(), cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, module = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(cumulative) / 1000.0, module))
    return sorted(rows, reverse=True)[:top]


def asset_sizes() -> dict[str, int]:
    manifest = REPO / "build" / "assets" / "manifest.json"
    if not manifest.exists():
        return {}
    data = json.loads(manifest.read_text())
    sizes = data.get("bytes", {})
    return {str(k): int(v) for k, v in sizes.items()} if isinstance(sizes, dict) else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="measured runs per handler (median reported)")
    parser.add_argument("--importtime", choices=FUNCTIONS, help="also list the slowest imports of one handler")
    args = parser.parse_args(argv)

    sizes = asset_sizes()
    layers = sizes.get("layers/core", 0) + sizes.get("layers/third_party", 0)
    print(f"{'handler':12} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'function':>10} {'+layers':>10}  target")
    over = 0
    for name in FUNCTIONS:
        times = measure(name, max(1, args.runs))
        median = statistics.median(times)
        over += median > TARGET_MS
        fn = sizes.get(f"functions/{name}")
        fn_text = f"{fn / 1e3:8.1f}KB" if fn is not None else f"{'-':>10}"
        total = f"{(fn + layers) / 1e6:8.1f}MB" if fn is not None and layers else f"{'-':>10}"
        verdict = "ok" if median <= TARGET_MS else f"over {TARGET_MS:.0f} ms"
        print(f"{name:12} {median:10.0f} {min(times):8.0f} {max(times):8.0f} {fn_text} {total}  {verdict}")
    if sizes:
        print(f"\nlayers: core {sizes.get('layers/core', 0) / 1e6:.2f} MB, third-party "
              f"{sizes.get('layers/third_party', 0) / 1e6:.2f} MB (unzipped)")
    else:
        print("\n(no build/assets/manifest.json: run `make assets` for asset sizes)")
    if args.importtime:
        print(f"\nslowest imports of {args.importtime} (cumulative ms):")
        for ms, module in import_profile(args.importtime):
            print(f"{ms:8.1f}  {module}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
