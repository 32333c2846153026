"""The shape of the code: no import cycles, rag never imports ui, stages layered (import-linter
contracts in pyproject.toml), and importing the package loads no heavy SDK (no work at import)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("chromadb", "torch", "gradio", "sentence_transformers", "llama_cpp", "matplotlib")


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(module: str) -> None:
        index[module] = low[module] = counter[0]
        counter[0] += 1
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.find_modules_directly_imported_by(module)):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles_and_rag_never_imports_ui() -> None:
    graph = grimp.build_graph("rag", "ui")
    assert _cycles(graph) == []
    rag_to_ui = [
        (m, o)
        for m in graph.modules
        if m.startswith("rag")
        for o in graph.find_modules_directly_imported_by(m)
        if o.startswith("ui")
    ]
    assert rag_to_ui == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="a")
    graph.add_import(importer="b", imported="c")
    assert _cycles(graph) == [["a", "b"]]


def test_import_linter_contracts_hold() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "broken" not in done.stdout.split("Contracts:")[-1].replace("0 broken", "")


def test_importing_every_module_loads_no_heavy_sdk() -> None:
    modules = sorted(grimp.build_graph("rag", "ui").modules)
    modules = [m for m in modules if m not in ("ui.app", "rag.cli.__main__")]  # ui.app is gradio
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
