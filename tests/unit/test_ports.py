"""Every method the core calls on a port is declared on its Protocol (``knowledge.ports``), so
mypy checks each call and a new adapter knows everything it must implement. The calls are read
from the source: ``services.state.x(...)``, ``self.services.index.x(...)``,
``services.require_workflow().x(...)`` and names bound to a port (``state = services.state``),
unless the function narrows the name to a concrete class with ``isinstance``."""

from __future__ import annotations

import ast
from pathlib import Path

from knowledge import ports

CORE = Path(ports.__file__).parent
PORTS = {"state": ports.StateStore, "index": ports.SearchIndex, "workflow": ports.Workflow,
         "blobs": ports.BlobStore}


def declared(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")} | set(
        getattr(protocol, "__annotations__", {}))


def is_services(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "services") or (
        isinstance(node, ast.Attribute) and node.attr == "services")


def port_of(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The port an expression denotes, if any."""
    if isinstance(node, ast.Attribute) and node.attr in PORTS and is_services(node.value):
        return node.attr
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "require_workflow" and is_services(node.func.value)):
        return "workflow"
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    return None


def port_calls(tree: ast.Module) -> list[tuple[str, str, int]]:
    """(port, method, line) for every method call on a port in one module."""
    calls: list[tuple[str, str, int]] = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        bound: dict[str, str] = {}
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign):
                pairs: list[tuple[ast.expr, ast.expr]] = []
                for target in node.targets:
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                        pairs += zip(target.elts, node.value.elts, strict=False)
                    else:
                        pairs.append((target, node.value))
                for target, value in pairs:
                    port = port_of(value, {})
                    if isinstance(target, ast.Name) and port is not None:
                        bound[target.id] = port
        for node in ast.walk(scope):  # ``isinstance(workflow, InProcessWorkflow)``: a concrete type now
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                    and node.args and isinstance(node.args[0], ast.Name)):
                bound.pop(node.args[0].id, None)
        for node in ast.walk(scope):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                port = port_of(node.func.value, bound)
                if port is not None:
                    calls.append((port, node.func.attr, node.lineno))
    return calls


def core_modules() -> list[Path]:
    return [p for p in sorted(CORE.rglob("*.py")) if "adapters" not in p.relative_to(CORE).parts]


def test_the_scan_finds_calls_through_services_and_through_bound_names() -> None:
    tree = ast.parse(
        "def f(services):\n"
        "    state, clock = services.state, services.clock\n"
        "    state.get_source('b', 's')\n"
        "    services.index.search_lexical()\n"
        "    services.require_workflow().start_refresh('b', 's')\n"
        "    clock.now()\n"
        "def g(services):\n"
        "    workflow = services.workflow\n"
        "    if isinstance(workflow, InProcessWorkflow):\n"
        "        workflow.start()\n"
    )
    assert sorted((port, method) for port, method, _ in port_calls(tree)) == [
        ("index", "search_lexical"), ("state", "get_source"), ("workflow", "start_refresh")]


def test_every_port_method_the_core_calls_is_on_its_protocol() -> None:
    seen: set[tuple[str, str]] = set()
    missing: list[str] = []
    for path in core_modules():
        for port, method, line in port_calls(ast.parse(path.read_text(encoding="utf-8"))):
            seen.add((port, method))
            if method not in declared(PORTS[port]):
                missing.append(f"{path.relative_to(CORE)}:{line}: {port}.{method}")
    assert not missing, "calls to methods the Protocols lack:\n" + "\n".join(missing)
    # the scan reads the real code: each port is called from the core
    assert {port for port, _ in seen} == set(PORTS)
