"""scripts/build_lambda_assets.py: the Docker-free asset build the stack points at."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from infra.functions import FUNCTION_NAMES, AssetsError, check_assets
from tests.infra.conftest import REPO


def test_function_lists_agree(build_script: ModuleType) -> None:
    assert tuple(build_script.FUNCTION_NAMES) == FUNCTION_NAMES


def test_core_only_build_copies_core_and_writes_placeholders(
    build_script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    functions = tmp_path / "functions"
    (functions / "retrieve").mkdir(parents=True)
    (functions / "retrieve" / "handler.py").write_text("def handler(event, context):\n    return 1\n")
    (functions / "retrieve" / "__pycache__").mkdir()
    (functions / "retrieve" / "__pycache__" / "handler.cpython-312.pyc").write_bytes(b"junk")
    monkeypatch.setattr(build_script, "FUNCTIONS_SRC", functions)
    out = tmp_path / "assets"

    manifest = build_script.build(out, core_only=True, allow_missing_functions=True)

    core = out / "layers" / "core" / "python" / "knowledge"
    assert (core / "__init__.py").is_file() and (core / "settings.py").is_file()
    assert not list(core.rglob("__pycache__"))
    copied = out / "functions" / "retrieve"
    assert (copied / "handler.py").read_text().endswith("return 1\n")
    assert not (copied / "__pycache__").exists()
    placeholder = (out / "functions" / "crawl" / "handler.py").read_text()
    assert "functions/crawl" in placeholder and "raise RuntimeError" in placeholder
    third = out / "layers" / "third_party" / "python"
    assert [p.name for p in third.iterdir()] == [build_script.MARKER]
    assert manifest["thirdPartyPlaceholder"] is True
    assert json.loads((out / "manifest.json").read_text())["coreOnly"] is True


def test_missing_function_is_an_error_unless_allowed(
    build_script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_script, "FUNCTIONS_SRC", tmp_path / "nothing")
    with pytest.raises(build_script.BuildError, match=r"functions/ingest/handler\.py"):
        build_script.build(tmp_path / "out", core_only=True, allow_missing_functions=False)
    assert build_script.main(["--out", str(tmp_path / "out2"), "--core-only"]) == 1


def test_core_only_keeps_an_existing_full_third_party_layer(build_script: ModuleType, tmp_path: Path) -> None:
    python_dir = tmp_path / "layers" / "third_party" / "python"
    (python_dir / "markdown_it").mkdir(parents=True)
    (python_dir / "markdown_it" / "__init__.py").write_text("")
    build_script.write_placeholder_third_party(tmp_path)
    assert (python_dir / "markdown_it" / "__init__.py").exists()
    assert not (python_dir / build_script.MARKER).exists()


def test_placeholder_replaces_an_empty_layer(build_script: ModuleType, tmp_path: Path) -> None:
    layer = build_script.write_placeholder_third_party(tmp_path)
    assert build_script.is_placeholder_layer(layer)


def test_prune_drops_unused_and_test_code_but_keeps_runtime_modules(build_script: ModuleType, tmp_path: Path) -> None:
    files = [
        "grpc/__init__.py",
        "grpcio-1.70.0.dist-info/METADATA",
        "google/protobuf/__init__.py",
        "protobuf-5.29.0.dist-info/METADATA",
        "opensearch/protobufs/__init__.py",
        "boto3/__init__.py",
        "botocore/data/big.json",
        "bin/normalizer",
        "numpy/__init__.py",
        "numpy/testing/__init__.py",
        "numpy/_core/tests/test_big.py",
        "opensearchpy/__init__.py",
        "opensearchpy/__pycache__/client.cpython-312.pyc",
        "lxml/etree.py",
        "lxml/tests/test_x.py",
    ]
    for rel in files:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x" * 10)

    removed = build_script.prune(tmp_path)

    left = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert left == {"numpy/__init__.py", "numpy/testing/__init__.py", "opensearchpy/__init__.py", "lxml/etree.py"}
    assert removed == 10 * (len(files) - len(left))


def test_layer_requirements_come_from_pyproject(build_script: ModuleType, tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        "[project]\n"
        'dependencies = ["tantivy>=0.25", "numpy>=1.26", "pypdf[crypto]>=5.0"]\n'
        "[project.optional-dependencies]\n"
        'aws = ["boto3>=1.34", "aws-lambda-powertools[tracer]>=3.0", "opensearch-py>=2.4"]\n'
    )
    assert build_script.layer_requirements(pyproject) == [
        "tantivy>=0.25",
        "numpy>=1.26",
        "pypdf[crypto]>=5.0",
        "aws-lambda-powertools[tracer]>=3.0",
        "opensearch-py>=2.4",
    ]


def test_real_layer_requirements_ship_tantivy_but_not_boto3(build_script: ModuleType) -> None:
    names = {build_script._requirement_name(r) for r in build_script.layer_requirements()}
    assert "boto3" not in names  # in the Lambda runtime
    # the rescue's analyser (both modes) and the search index's _analyze fallback import it
    assert {"tantivy", "aws-lambda-powertools", "opensearch-py", "requests-aws4auth", "numpy", "lxml"} <= names


def test_the_layer_ships_wrapt_below_2(build_script: ModuleType) -> None:
    # the X-Ray SDK imports wrapt unpinned; wrapt 2 imports asyncio and importlib.metadata at
    # import, most of 0.1 s of each cold start: the layer resolves with the pin of pyproject.toml
    from packaging.requirements import Requirement

    pins = [Requirement(r).specifier for r in build_script.layer_requirements()
            if build_script._requirement_name(r) == "wrapt"]
    assert pins and all("1.17.3" in pin and "2.0.0" not in pin and "2.5.2" not in pin for pin in pins)


def test_pip_command_targets_lambda_arm64_cpython_312_binaries(build_script: ModuleType, tmp_path: Path) -> None:
    cmd = build_script.pip_install_command(tmp_path, ["numpy>=1.26"])
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert "--only-binary=:all:" in cmd
    assert cmd[cmd.index("--python-version") + 1] == "3.12"
    assert cmd[cmd.index("--implementation") + 1] == "cp"
    platforms = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--platform"]
    assert "manylinux2014_aarch64" in platforms and all(p.endswith("_aarch64") for p in platforms)
    assert cmd[cmd.index("--target") + 1] == str(tmp_path)
    assert cmd[-1] == "numpy>=1.26"


def test_bytecode_is_compiled_beside_the_sources_without_timestamp_checks(
    build_script: ModuleType, tmp_path: Path
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("VALUE = 41 + 1\n")
    (package / "template.py").write_text("def broken(:\n")  # not Python: stays source only

    assert build_script.compile_bytecode(tmp_path, sys.executable) == 2

    pyc = Path(importlib.util.cache_from_source(str(package / "mod.py")))
    assert pyc.is_file()
    flags = int.from_bytes(pyc.read_bytes()[4:8], "little")
    assert flags == 0b01  # hash-based, source never checked: immune to the zip's timestamps
    assert not Path(importlib.util.cache_from_source(str(package / "template.py"))).exists()


def test_bytecode_interpreter_must_match_the_lambda_runtime(
    build_script: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert build_script.python_version(sys.executable) == here
    assert build_script.python_version("/nonexistent/python") is None
    monkeypatch.setattr(build_script, "LAMBDA_PYTHON", here)
    assert build_script.bytecode_python() == sys.executable
    assert build_script.bytecode_python(sys.executable) == sys.executable
    monkeypatch.setattr(build_script, "LAMBDA_PYTHON", "2.7")
    with pytest.raises(build_script.BuildError, match=r"the Lambda runtime is 2\.7"):
        build_script.bytecode_python(sys.executable)
    monkeypatch.setattr(build_script.shutil, "which", lambda name: None)
    monkeypatch.setenv("HOME", str(tmp_path))  # no pyenv versions there
    assert build_script.bytecode_python() is None
    fake = tmp_path / ".pyenv" / "versions" / "2.7.18" / "bin" / "python2.7"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} -c \"print('2.7')\"\n")
    fake.chmod(0o755)
    assert build_script.bytecode_python() == str(fake)


def test_manifest_reports_every_asset_unzipped_and_zipped(
    build_script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    functions = tmp_path / "functions"
    (functions / "retrieve").mkdir(parents=True)
    (functions / "retrieve" / "handler.py").write_text("def handler(event, context):\n    return 1\n" * 200)
    monkeypatch.setattr(build_script, "FUNCTIONS_SRC", functions)

    manifest = build_script.build(tmp_path / "assets", core_only=True, functions=["retrieve"])

    assert manifest["bytecode"] is None  # --core-only never compiles
    unzipped, zipped = manifest["bytes"], manifest["zippedBytes"]
    assert set(unzipped) == set(zipped) == {"layers/core", "layers/third_party", "functions/retrieve"}
    assert all(size > 0 for size in zipped.values())
    # repetitive source deflates well; the zip is smaller than the files it holds
    assert zipped["functions/retrieve"] < unzipped["functions/retrieve"] / 5
    assert zipped["layers/core"] < unzipped["layers/core"]


# --- deployability: the launcher cdk.json runs, and assets that would deploy broken functions -----

LAUNCHER = REPO / "scripts" / "cdk-app.sh"


def test_cdk_json_runs_app_through_the_launcher() -> None:
    assert json.loads((REPO / "cdk.json").read_text())["app"] == "sh scripts/cdk-app.sh"


def _launcher_copy(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    copy = tmp_path / "scripts" / "cdk-app.sh"
    copy.write_text(LAUNCHER.read_text())
    (tmp_path / "app.py").write_text("")
    return copy


def _fake_python(path: Path, label: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{label} $*"\n')
    path.chmod(0o755)
    return path


def _run(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("KB_PYTHON", "VIRTUAL_ENV", "CDK_CONTEXT_JSON")}
    return subprocess.run(cmd, env={**base, **env}, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_launcher_prefers_kb_python_then_the_repo_venv_then_the_active_one(tmp_path: Path) -> None:
    launcher = _launcher_copy(tmp_path)
    active = _fake_python(tmp_path / "active" / "bin" / "python", "active")
    out = _run(["sh", str(launcher), "x"], {"VIRTUAL_ENV": str(tmp_path / "active")})
    assert out.returncode == 0 and out.stdout.strip() == f"active {tmp_path}/app.py x"
    _fake_python(tmp_path / ".venv" / "bin" / "python", "venv")
    out = _run(["sh", str(launcher)], {"VIRTUAL_ENV": str(tmp_path / "active")})
    assert out.stdout.strip() == f"venv {tmp_path}/app.py"
    chosen = _fake_python(tmp_path / "chosen", "chosen")
    out = _run(["sh", str(launcher)], {"KB_PYTHON": str(chosen), "VIRTUAL_ENV": str(active.parent.parent)})
    assert out.stdout.strip() == f"chosen {tmp_path}/app.py"


def test_launcher_without_an_interpreter_says_so_in_one_line(tmp_path: Path) -> None:
    launcher = _launcher_copy(tmp_path)
    out = _run(["sh", str(launcher)], {})
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "make assets" in out.stderr
    out = _run(["sh", str(launcher)], {"KB_PYTHON": str(tmp_path / "nope")})
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "KB_PYTHON" in out.stderr


def test_synthesis_from_placeholder_assets_fails_in_one_line(build_script: ModuleType, tmp_path: Path) -> None:
    assets = tmp_path / "assets"
    build_script.build(assets, core_only=True, allow_missing_functions=True)
    out = _run(["sh", str(LAUNCHER)], {"KB_PYTHON": sys.executable,
                                       "CDK_CONTEXT_JSON": json.dumps({"kb:assetsDir": str(assets)})}, cwd=REPO)
    assert out.returncode == 1, out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("kb: Lambda assets in ") and "--core-only placeholder" in out.stderr
    assert "make assets" in out.stderr


def _full_assets(build_script: ModuleType, root: Path) -> Path:
    build_script.build(root, core_only=True, allow_missing_functions=True)
    third = root / "layers" / "third_party" / "python"
    (third / build_script.MARKER).unlink()
    (third / "markdown_it").mkdir()
    (third / "markdown_it" / "__init__.py").write_text("")
    for name in FUNCTION_NAMES:
        (root / "functions" / name / "handler.py").write_text("def handler(event, context):\n    return None\n")
    return root


def test_check_assets_accepts_a_full_build_and_refuses_broken_ones(build_script: ModuleType, tmp_path: Path) -> None:
    assets = _full_assets(build_script, tmp_path / "a")
    assert check_assets(assets, allow_placeholders=False) is False

    (assets / "functions" / "crawl" / "handler.py").write_text(build_script._placeholder_handler("crawl"))
    with pytest.raises(AssetsError, match=r"functions/crawl is a placeholder"):
        check_assets(assets, allow_placeholders=False)
    assert check_assets(assets, allow_placeholders=True) is True

    shutil.rmtree(assets / "layers" / "third_party" / "python" / "markdown_it")
    with pytest.raises(AssetsError, match=r"third-party Lambda layer .* is empty"):
        check_assets(assets, allow_placeholders=True)  # an empty layer is never allowed

    (assets / "functions" / "ingest" / "handler.py").unlink()
    with pytest.raises(AssetsError, match=r"functions/ingest/handler\.py"):
        check_assets(assets, allow_placeholders=True)
    with pytest.raises(AssetsError, match=r"no Lambda assets at"):
        check_assets(tmp_path / "missing", allow_placeholders=True)
