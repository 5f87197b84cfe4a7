#!/usr/bin/env python3
"""Build the Lambda asset folders the CDK stack points at, without Docker.

Layout produced under ``--out`` (default ``build/assets``)::

    layers/core/python/knowledge/...        the core library, copied
    layers/third_party/python/...           pip-installed for Lambda (arm64, CPython 3.12)
    functions/<name>/handler.py ...         copies of functions/<name>/

``--core-only`` copies the core layer and the functions and writes an empty third-party layer
(a marker file only), so tests can synthesise the stack in seconds without network access. An
existing full third-party layer in the output folder is left alone in that mode.

The full build asks pip for Lambda-platform wheels (``--platform manylinux*_aarch64
--only-binary=:all: --python-version 3.12 --implementation cp``) and then prunes what no handler
imports: boto3/botocore/s3transfer (the runtime provides them), grpc and protobuf, bundled test
suites, ``__pycache__`` and pip's console scripts.

It then compiles the bytecode of every asset (core layer, third-party layer, functions) with a
CPython 3.12 — the Lambda runtime's version — found on ``PATH`` as ``python3.12`` or given with
``--bytecode-python``. Lambda unpacks layers and code read-only, so a module shipped without a
matching ``.pyc`` is compiled from source at every cold start, and that costs more than the
import itself. The ``.pyc`` files are ``unchecked-hash`` ones: valid whatever the timestamps the
zip round trip leaves on the sources. Without such an interpreter the build says so and ships
sources only (``"bytecode": null`` in the manifest). ``--core-only`` never compiles.

``manifest.json`` records each asset's size unzipped (``bytes``) and as a deflated zip
(``zippedBytes``, what is uploaded; the CDK's own zip is within a few percent of it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORE_SRC = REPO / "layers" / "core" / "src" / "knowledge"
FUNCTIONS_SRC = REPO / "functions"

#: every Lambda function of the stack; each has functions/<name>/handler.py with handler(event, context)
FUNCTION_NAMES: tuple[str, ...] = ("ingest", "crawl", "retrieve", "admin_api", "authorizer", "scheduler")

#: project dependencies the Lambda layer does not ship (in the runtime already). tantivy is
#: shipped: its English analyser is the rescue model's on AWS too, and OpenSearchIndex's
#: fallback when a domain refuses ``_analyze`` (about 17 MB unzipped on arm64)
LAYER_EXCLUDED_REQUIREMENTS = frozenset({"boto3"})

#: top-level names removed from the third-party layer after pip: provided by the runtime or unused
PRUNED_TOP_LEVEL = (
    "boto3",
    "botocore",
    "s3transfer",
    "grpc",
    "grpcio",
    "google",
    "protobuf",
    # generated gRPC/protobuf client that opensearch-py depends on but never imports
    "opensearch",
    "opensearch_protobufs",
    "bin",
)
#: directory names removed anywhere inside the third-party layer (``testing`` modules such as
#: ``numpy.testing`` are importable API and stay)
PRUNED_DIR_NAMES = frozenset({"__pycache__", "tests"})

LAMBDA_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_34_aarch64")
LAMBDA_PYTHON = "3.12"
#: hard limit for a function plus its layers, unzipped
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024

MARKER = "README.kb-layer"
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache", ".mypy_cache")


class BuildError(RuntimeError):
    """The assets could not be built as asked."""


def layer_requirements(pyproject: Path = REPO / "pyproject.toml") -> list[str]:
    """Runtime requirements of the Lambda layer, taken from pyproject.toml so versions live once."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    project = data["project"]
    raw: list[str] = list(project.get("dependencies", []))
    raw += list(project.get("optional-dependencies", {}).get("aws", []))
    keep: list[str] = []
    for req in raw:
        name = _requirement_name(req)
        if name in LAYER_EXCLUDED_REQUIREMENTS:
            continue
        keep.append(req)
    return keep


def _requirement_name(req: str) -> str:
    name = req
    for stop in "[<>=!~; ":
        name = name.split(stop, 1)[0]
    return name.strip().lower().replace("_", "-")


def _fresh_dir(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def build_core_layer(out: Path) -> Path:
    """Copy the ``knowledge`` package to ``<out>/layers/core/python/knowledge``."""
    if not (CORE_SRC / "__init__.py").is_file():
        raise BuildError(f"core package not found at {CORE_SRC}")
    python_dir = _fresh_dir(out / "layers" / "core" / "python")
    shutil.copytree(CORE_SRC, python_dir / "knowledge", ignore=COPY_IGNORE)
    return python_dir.parent


def _placeholder_handler(name: str) -> str:
    return (
        f'"""Placeholder written by build_lambda_assets.py: functions/{name}/ did not exist."""\n\n\n'
        "def handler(event, context):  # pragma: no cover - never deployed on purpose\n"
        f'    raise RuntimeError("functions/{name} was missing when the assets were built")\n'
    )


def build_functions(out: Path, names: Iterable[str], *, allow_missing: bool) -> dict[str, Path]:
    """Copy each ``functions/<name>/`` into ``<out>/functions/<name>/``."""
    built: dict[str, Path] = {}
    for name in names:
        src = FUNCTIONS_SRC / name
        dest = out / "functions" / name
        if dest.exists():
            shutil.rmtree(dest)
        if (src / "handler.py").is_file():
            shutil.copytree(src, dest, ignore=COPY_IGNORE)
        elif allow_missing:
            dest.mkdir(parents=True)
            (dest / "handler.py").write_text(_placeholder_handler(name), encoding="utf-8")
            print(f"warning: functions/{name}/handler.py missing; wrote a placeholder", file=sys.stderr)
        else:
            raise BuildError(f"functions/{name}/handler.py does not exist (use --allow-missing-functions)")
        built[name] = dest
    return built


def write_placeholder_third_party(out: Path) -> Path:
    """An empty-but-valid layer: a ``python/`` folder holding only a marker file."""
    layer = out / "layers" / "third_party"
    python_dir = layer / "python"
    if python_dir.is_dir() and not (python_dir / MARKER).exists() and any(python_dir.iterdir()):
        print("third-party layer: keeping the existing full build", file=sys.stderr)
        return layer
    _fresh_dir(python_dir)
    (python_dir / MARKER).write_text(
        "placeholder third-party layer written by build_lambda_assets.py --core-only;\n"
        "run `make assets` (build_lambda_assets.py without --core-only) before deploying.\n",
        encoding="utf-8",
    )
    return layer


def is_placeholder_layer(layer_dir: Path) -> bool:
    """True when ``layer_dir`` holds the --core-only placeholder, not a real third-party build."""
    return (layer_dir / "python" / MARKER).exists()


def pip_install_command(target: Path, requirements: Sequence[str]) -> list[str]:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(target)]
    for platform in LAMBDA_PLATFORMS:
        cmd += ["--platform", platform]
    cmd += [
        "--only-binary=:all:",
        "--python-version",
        LAMBDA_PYTHON,
        "--implementation",
        "cp",
        "--upgrade",
    ]
    return [*cmd, *requirements]


def prune(python_dir: Path) -> int:
    """Remove what no handler imports. Returns the number of bytes removed."""
    removed = 0
    for name in PRUNED_TOP_LEVEL:
        for path in python_dir.glob(name):
            removed += _remove(path)
        for path in python_dir.glob(f"{name}-*.dist-info"):
            removed += _remove(path)
    for path in sorted(python_dir.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and path.name in PRUNED_DIR_NAMES:
            removed += _remove(path)
    for path in python_dir.rglob("*.py[co]"):
        removed += _remove(path)
    return removed


def _remove(path: Path) -> int:
    if not path.exists():
        return 0
    size = tree_size(path)
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    return size


def build_third_party_layer(out: Path, requirements: Sequence[str]) -> Path:
    layer = out / "layers" / "third_party"
    python_dir = _fresh_dir(layer / "python")
    cmd = pip_install_command(python_dir, requirements)
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    freed = prune(python_dir)
    print(f"third-party layer: pruned {freed / 1e6:.1f} MB", file=sys.stderr)
    return layer


def tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def zipped_size(path: Path) -> int:
    """Bytes of ``path``'s files as one deflated zip, the way an asset is uploaded."""
    with tempfile.TemporaryFile() as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                archive.write(file, file.relative_to(path).as_posix())
        return tmp.seek(0, 2)


def python_version(python: str) -> str | None:
    """``"3.12"`` for a CPython 3.12 interpreter at ``python``; None if it does not run."""
    try:
        out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def bytecode_python(explicit: str | None = None) -> str | None:
    """An interpreter of the Lambda runtime's version (``LAMBDA_PYTHON``) to compile with:
    ``explicit`` if given (an error if it is another version), else this one, ``python3.12``
    on ``PATH`` or one installed by pyenv; None when there is none."""
    if explicit:
        version = python_version(explicit)
        if version != LAMBDA_PYTHON:
            raise BuildError(f"{explicit} is Python {version or '?'}, the Lambda runtime is {LAMBDA_PYTHON}")
        return explicit
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{LAMBDA_PYTHON}.*/bin/python{LAMBDA_PYTHON}"), reverse=True)
    for candidate in (sys.executable, shutil.which(f"python{LAMBDA_PYTHON}"), *map(str, pyenv)):
        if candidate and python_version(candidate) == LAMBDA_PYTHON:
            return candidate
    return None


def compile_bytecode(path: Path, python: str) -> int:
    """Compile every module under ``path`` to ``unchecked-hash`` bytecode beside it; returns
    the number of ``.pyc`` files. A file that does not compile (a template, a Python 2
    fixture) is left as source and reported."""
    cmd = [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        failed = [line for line in out.stdout.splitlines() if line.startswith("***")]
        print(f"warning: {len(failed)} file(s) under {path} did not compile; shipped as source", file=sys.stderr)
    return sum(1 for _ in path.rglob("*.pyc"))


def build(
    out: Path,
    *,
    core_only: bool,
    allow_missing_functions: bool = False,
    functions: Sequence[str] = FUNCTION_NAMES,
    bytecode_with: str | None = None,
) -> dict[str, object]:
    """Build every asset; returns the manifest also written to ``<out>/manifest.json``."""
    out.mkdir(parents=True, exist_ok=True)
    python = None if core_only else bytecode_python(bytecode_with)
    core = build_core_layer(out)
    fns = build_functions(out, functions, allow_missing=allow_missing_functions)
    third = write_placeholder_third_party(out) if core_only else build_third_party_layer(out, layer_requirements())
    assets = {"layers/core": core, "layers/third_party": third, **{f"functions/{n}": p for n, p in fns.items()}}
    bytecode: dict[str, object] | None = None
    if python is not None:
        compiled = sum(compile_bytecode(path, python) for path in assets.values())
        bytecode = {"python": LAMBDA_PYTHON, "files": compiled, "invalidation": "unchecked-hash"}
    elif not core_only:
        print(f"warning: no Python {LAMBDA_PYTHON} to compile bytecode with (--bytecode-python): every cold "
              "start will compile the layers from source", file=sys.stderr)
    layers_size = tree_size(core) + tree_size(third)
    sizes = {name: tree_size(path) for name, path in fns.items()}
    for name, size in sizes.items():
        if size + layers_size > LAMBDA_UNZIPPED_LIMIT:
            raise BuildError(f"{name}: function + layers exceed Lambda's 250 MB unzipped limit")
    manifest: dict[str, object] = {
        "coreOnly": core_only,
        "thirdPartyPlaceholder": is_placeholder_layer(third),
        "bytecode": bytecode,
        "bytes": {name: tree_size(path) for name, path in assets.items()},
        "zippedBytes": {name: zipped_size(path) for name, path in assets.items()},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", type=Path, default=REPO / "build" / "assets", help="output folder")
    parser.add_argument("--core-only", action="store_true", help="skip pip; placeholder third-party layer")
    parser.add_argument("--bytecode-python", metavar="PYTHON",
                        help=f"Python {LAMBDA_PYTHON} compiling the bytecode (default: python{LAMBDA_PYTHON} on PATH)")
    parser.add_argument(
        "--allow-missing-functions",
        action="store_true",
        help="write a placeholder handler for a function folder that does not exist yet",
    )
    args = parser.parse_args(argv)
    try:
        manifest = build(args.out, core_only=args.core_only, allow_missing_functions=args.allow_missing_functions,
                         bytecode_with=args.bytecode_python)
    except (BuildError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sizes, zipped = manifest["bytes"], manifest["zippedBytes"]
    assert isinstance(sizes, dict) and isinstance(zipped, dict)
    print(f"{'asset':24} {'unzipped KB':>12} {'zipped KB':>12}")
    for name, size in sizes.items():
        print(f"{name:24} {size / 1e3:12.1f} {zipped[name] / 1e3:12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
