"""The shape of the package (issue #13, "Done when"): no module over 600 lines (the evaluation
package's under 400), every module placed in a layer, nothing imports a module of a higher layer,
and no import cycles -- module-level and lazy (in-function) imports alike, parsed with ``ast``.

A new module fails :func:`test_every_module_has_a_layer` until it is added to :data:`LAYERS`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "predictor"

MAX_LINES = 600
MAX_LINES_EVALUATION = 400

#: Layer names, bottom up: a module may import modules of its own layer or of lower ones.
LAYER_NAMES = (
    "foundation",  # 0: enums, tables, small helpers; import nothing of the package above them
    "data and shapes",  # 1: the sweep format, the backend contract, shape arithmetic, tree IR, code generation
    "kernels, tables and exports",  # 2: kernel emission, grids, scoring tables, fitting, exports
    "pickers and backends",  # 3: selection, baselines, the CUDA backend, the dispatcher
    "drivers",  # 4: collector, GPU evaluation, trainer, leave-one-network-out, transfer, torch integration
    "evaluation",  # 5: the offline evaluation package
    "entry points",  # 6: the package facade and thin command entry points
)

#: Module (dotted, relative to ``predictor``; ``__init__`` is the package itself) -> layer index.
LAYERS: dict[str, int] = {
    # 0 foundation
    "config": 0, "kernel_enums": 0, "summary": 0, "model_key": 0, "targets": 0, "cli": 0, "resources": 0, "layouts": 0, "partition": 0, "timing": 0,
    "shipped": 0, "report_header": 0,
    # 1 data and shapes
    "schema": 1, "backend": 1, "features": 1, "tree_ir": 1, "codegen": 1,
    # 2 kernels, tables and exports
    "emit": 2, "space": 2, "portfolio": 2, "cv_folds": 2, "fitting": 2, "leaf_candidates": 2, "neighbours": 2, "cost_teacher": 2, "shapes": 2, "layers": 2, "export_py": 2, "route": 2,
    "export_cpp": 2, "dispatch_text": 2,
    # 3 pickers and backends
    "selector": 3, "baselines": 3, "cuda_backend": 3, "dispatcher": 3,
    # 4 drivers
    "collect": 4, "collect_multi": 4, "gpu_eval": 4, "train": 4, "lono": 4, "route_lono": 4, "transfer": 4, "torch_conv": 4,
    # 5 evaluation
    "evaluation": 5, "evaluation.data": 5, "evaluation.picks": 5, "evaluation.metrics": 5, "evaluation.nested": 5,
    "evaluation.plots": 5, "evaluation.report": 5, "evaluation.driver": 5, "evaluation.cli": 5, "holdout": 5,
    "results": 5,
    # 6 entry points
    "evaluate": 6, "__init__": 6,
}

#: Registered modules that may be absent (none: the issue #13 branches that added targets, codegen and
#: backend are merged, and torch_conv is on main).
PLANNED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line`` (``lazy``: inside a function)."""

    source: str
    target: str
    line: int
    lazy: bool


def modules(package: Path) -> dict[str, Path]:
    """Every module of ``package``: dotted name relative to it (``__init__`` for the package itself,
    ``sub`` for a sub-package's ``__init__.py``) -> file."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts) or "__init__"] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """A dotted name relative to the package -> the module it denotes (None: not of the package)."""
    if name == "":
        return "__init__"
    return name if name in known else None


def import_edges(package: Path) -> list[Edge]:
    """Every import of a module of ``package`` by another (``import``, ``from ... import``, relative or
    absolute, at module level or inside functions)."""
    known = modules(package)
    top = package.name
    edges = []
    for name, path in known.items():
        is_pkg = path.name == "__init__.py"
        here = [] if name == "__init__" else name.split(".")
        base = here if is_pkg else here[:-1]  # the package a relative import starts from
        tree = ast.parse(path.read_text(), filename=str(path))
        lazy_lines = {n.lineno for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == top or a.name.startswith(top + "."):
                        targets.append(_resolve(a.name[len(top) + 1:], known))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                    mod = ".".join(anchor + (node.module.split(".") if node.module else []))
                elif node.module and (node.module == top or node.module.startswith(top + ".")):
                    mod = node.module[len(top) + 1:]
                else:
                    continue
                for a in node.names:  # ``from pkg import submodule`` imports the submodule
                    sub = f"{mod}.{a.name}" if mod else a.name
                    targets.append(_resolve(sub, known) or _resolve(mod, known))
            for t in targets:
                if t is not None and t != name:
                    edges.append(Edge(name, t, node.lineno, node.lineno in lazy_lines))
    return edges


def upward_imports(edges: list[Edge], layers: dict[str, int]) -> list[str]:
    """One line per import of a module of a higher layer."""
    return [f"predictor.{e.source} (layer {layers[e.source]} {LAYER_NAMES[layers[e.source]]!r}) imports "
            f"predictor.{e.target} (layer {layers[e.target]} {LAYER_NAMES[layers[e.target]]!r}) at line {e.line}"
            f"{' (lazy)' if e.lazy else ''}"
            for e in edges if e.source in layers and e.target in layers and layers[e.target] > layers[e.source]]


def import_cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components with more than one module (each one holds a cycle)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# --------------------------------------------------------------------------- the package
def test_no_module_over_600_lines() -> None:
    long = {name: n for name, p in modules(PACKAGE).items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them): {long}"


def test_evaluation_modules_under_400_lines() -> None:
    mods = {name: p for name, p in modules(PACKAGE).items() if name.split(".")[0] == "evaluation"}
    assert len(mods) >= 5
    long = {name: n for name, p in mods.items() if (n := len(p.read_text().splitlines())) > MAX_LINES_EVALUATION}
    assert not long, f"evaluation modules over {MAX_LINES_EVALUATION} lines: {long}"


def test_every_module_has_a_layer() -> None:
    unplaced = [name for name in modules(PACKAGE) if name not in LAYERS]
    assert not unplaced, (f"predictor module(s) {unplaced} in no layer: add each to LAYERS in tests/test_structure.py, "
                          f"at or above the layers of what it imports, at or below those of its importers "
                          f"(layers bottom up: {', '.join(LAYER_NAMES)})")


def test_no_stale_layer_entries() -> None:
    stale = sorted(set(LAYERS) - set(modules(PACKAGE)) - PLANNED)
    assert not stale, f"LAYERS in tests/test_structure.py names modules that do not exist: {stale}"


def test_nothing_imports_upward() -> None:
    bad = upward_imports(import_edges(PACKAGE), LAYERS)
    assert not bad, "imports of a higher layer:\n" + "\n".join(bad)


def test_no_import_cycles() -> None:
    cycles = import_cycles(import_edges(PACKAGE))
    assert not cycles, f"import cycles (module-level and lazy imports) between: {cycles}"


def test_the_import_graph_sees_the_known_imports() -> None:
    edges = {(e.source, e.target, e.lazy) for e in import_edges(PACKAGE)}
    assert ("evaluation.nested", "train", False) in edges  # from .. import train
    assert ("evaluation.driver", "evaluation.report", False) in edges  # from .report import ...
    assert ("evaluate", "evaluation.cli", False) in edges  # from .evaluation.cli import ...
    assert ("train", "dispatcher", True) in edges  # lazy, inside train_shipped
    assert ("selector", "resources", False) in edges  # from predictor import resources
    assert ("__init__", "selector", False) in edges


def test_pyproject_lists_every_subpackage() -> None:
    tomllib = pytest.importorskip("tomllib")
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    subs = sorted(f"predictor.{'.'.join(p.parent.relative_to(PACKAGE).parts)}"
                  for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)
    assert subs and set(subs) <= set(packages), f"add {sorted(set(subs) - set(packages))} to pyproject's packages"


# --------------------------------------------------------------------------- the checker itself
def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "pkg"
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return pkg


def test_checker_finds_upward_lazy_and_relative_imports(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "__init__.py": "from .low import x\n",
        "low.py": "import os\n\ndef f():\n    from .high import y  # upward, lazy\n",
        "high.py": "from pkg import low\nfrom . import sub\n",
        "sub/__init__.py": "",
        "sub/a.py": "from .. import low\nfrom ..sub import b\nimport pkg.high\n",
        "sub/b.py": "from ..low import x\n",
    })
    edges = {(e.source, e.target, e.lazy) for e in import_edges(pkg)}
    assert edges == {("__init__", "low", False), ("low", "high", True), ("high", "low", False),
                     ("high", "sub", False), ("sub.a", "low", False), ("sub.a", "sub.b", False),
                     ("sub.a", "high", False), ("sub.b", "low", False)}
    layers = {"__init__": 2, "low": 0, "high": 1, "sub": 1, "sub.a": 1, "sub.b": 0}
    bad = upward_imports(import_edges(pkg), layers)
    assert len(bad) == 1 and bad[0].startswith("predictor.low (layer 0") and "(lazy)" in bad[0]
    assert import_cycles(import_edges(pkg)) == [["high", "low"]]


def test_checker_accepts_a_layered_package(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {"__init__.py": "", "a.py": "", "b.py": "from .a import x\n",
                            "c.py": "def f():\n    from . import b\n"})
    edges = import_edges(pkg)
    assert len(edges) == 2
    assert upward_imports(edges, {"__init__": 0, "a": 0, "b": 1, "c": 1}) == []
    assert import_cycles(edges) == []

