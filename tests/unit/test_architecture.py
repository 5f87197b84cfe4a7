"""The dependency rules of the core library (DESIGN.md §2), read from the source itself:
no import cycle among its modules (deferred imports and all), and no driven adapter importing
a use case. A new import that breaks either rule fails here, naming the modules."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "src"
#: packages of use cases and entry points, which driven adapters must never import
DRIVING = ("knowledge.refresh", "knowledge.retrieve", "knowledge.lifecycle", "knowledge.api", "knowledge.entry",
           "knowledge.answer", "knowledge.embedded", "knowledge.wiring")
DRIVEN = ("knowledge.adapters",)


def modules() -> dict[str, Path]:
    found = {}
    for path in (CORE / "knowledge").rglob("*.py"):
        parts = list(path.relative_to(CORE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module of the package ``name`` imports, at any depth of the file (functions too),
    except under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            node.body = []
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_reader_sees_deferred_imports_and_cycles() -> None:
    # the checker itself: a cycle through a deferred import is one
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    known = modules()
    assert "knowledge.refresh.finish" in imports_of("knowledge.refresh.pipeline",
                                                   known["knowledge.refresh.pipeline"], known)


def test_the_core_has_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_driven_adapters_import_no_use_case_or_entry_point() -> None:
    bad = {
        name: sorted(t for t in targets if t.startswith(DRIVING))
        for name, targets in graph().items()
        if name.startswith(DRIVEN) and any(t.startswith(DRIVING) for t in targets)
    }
    assert bad == {}


FUNCTIONS = CORE.parents[2] / "functions"
#: what only the composition root (``knowledge.wiring``) may build: SDK clients and adapters
BUILT_BY_THE_ROOT = ("boto3", "botocore", "knowledge.adapters")


def test_handlers_build_no_client_or_adapter_of_their_own() -> None:
    """Handlers stay thin: every client and adapter comes from the composition root, created
    once per process; a handler importing the SDK or an adapter (deferred imports too) fails."""
    handlers = sorted(FUNCTIONS.glob("*/handler.py"))
    assert len(handlers) >= 6
    bad = {}
    for path in handlers:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.add(node.module or "")
        prefixes = tuple(f"{root}." for root in BUILT_BY_THE_ROOT)
        hits = sorted(m for m in found if m in BUILT_BY_THE_ROOT or m.startswith(prefixes))
        if hits:
            bad[path.parent.name] = hits
    assert bad == {}
