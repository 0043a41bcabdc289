"""The package layout holds: each package is a layer that imports only its own layer and the ones
below it, no module imports itself back through others (no import circle), and no pipeline step
imports another step. Read from the source (every import statement, those inside functions and
``TYPE_CHECKING`` blocks included), not from what a run happens to import."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Lowest first. A module of layer i may import modules of layers 0..i.
LAYERS = (
    "brain_graph.core",
    "brain_graph.stores",
    "brain_graph.embedding",
    "brain_graph.auth",
    "brain_graph.pipeline",
    "brain_graph.browse",
    "brain_graph.nodes",
    "brain_graph.indexing",
    "brain_graph.graphs",
    "brain_graph.serving",
    "brain_graph.cli",
    "brain_graph",  # the package itself: the public API
)


def source_modules() -> dict[str, Path]:
    """Every module of the package by dotted name (``nodes/`` is installed as ``brain_graph.nodes``)."""
    found: dict[str, Path] = {}
    for root, prefix in ((REPO / "brain_graph", "brain_graph"), (REPO / "nodes", "brain_graph.nodes")):
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([prefix, *parts])] = path
    return found


MODULES = source_modules()


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def imported(module: str) -> Iterator[str]:
    """The brain-graph modules ``module`` imports (a name imported from a package is the package, unless
    it is a submodule)."""
    package = module if is_package(module) else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                yield name


GRAPH = {module: sorted(set(imported(module))) for module in MODULES}


def layer(module: str) -> int:
    return next(index for index, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + "."))


def test_every_module_is_in_a_layer() -> None:
    top_level = [m for m in MODULES if m.count(".") == 1 and layer(m) == len(LAYERS) - 1]
    assert top_level == [], "modules directly in brain_graph/ belong in a layer package"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module: str) -> None:
    higher = [target for target in GRAPH[module] if layer(target) > layer(module)]
    assert higher == [], f"{module} (layer {LAYERS[layer(module)]}) imports higher layers"


def test_no_step_imports_another_step() -> None:
    steps = [m for m in MODULES if m.startswith("brain_graph.nodes.")]
    crossing = {step: [t for t in GRAPH[step] if t.startswith("brain_graph.nodes")] for step in steps}
    assert {step: targets for step, targets in crossing.items() if targets} == {}


def test_no_import_circle() -> None:
    """Tarjan's strongly connected components over the module graph: each must be one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in GRAPH[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(MODULES):
        if module not in index:
            visit(module)
    assert circles == []
