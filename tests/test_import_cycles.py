"""No import cycles in brain/: the layers import downwards (vault -> index -> search -> commands ->
presenters -> CLI, MCP, hooks). Every module is parsed with `ast`; module-level and function-level
imports both count (a function-level import is a cycle put off, not removed), imports under
`if TYPE_CHECKING:` do not (annotations only, never run)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

BRAIN = Path(__file__).parents[1] / "brain"


def module_name(path: Path, root: Path = BRAIN) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                yield from _imports(child)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def import_graph(root: Path = BRAIN) -> dict[str, set[str]]:
    """module -> the brain modules it imports (`from brain import x` names module brain.x when
    there is one, else the package)."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
                ]
            deps.update(t for t in map(known, targets) if t and t.startswith("brain"))
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan), as the path
    `a -> b -> ... -> a`, shortest from the component's first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_shortest_cycle(graph, component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _shortest_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & component):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def test_brain_has_no_import_cycles() -> None:
    """None at all: no edge is tolerated."""
    found = [" -> ".join(c) for c in cycles(import_graph())]
    assert not found, "import cycles in brain/:\n" + "\n".join(found)


def test_the_check_finds_a_cycle_and_names_it(tmp_path: Path) -> None:
    """The checker itself: a function-level import closing a loop counts, a TYPE_CHECKING one
    does not."""
    pkg = tmp_path / "brain"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from brain import b\n")
    (pkg / "b.py").write_text("def f():\n    from brain.c import x\n")
    (pkg / "c.py").write_text("import brain.a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from brain import a\n"
    )
    (pkg / "e.py").write_text("from . import d\n")
    graph = import_graph(pkg)
    assert cycles(graph) == [["brain.a", "brain.b", "brain.c", "brain.a"]]
    assert graph["brain.d"] == set()
    assert graph["brain.e"] == {"brain.d"}


@pytest.mark.parametrize(
    ("layer", "above"),
    [
        ("brain.commands", ("brain.present", "brain.app", "brain.cli", "brain.run", "brain.mcp")),
        ("brain.present", ("brain.app", "brain.cli", "brain.run", "brain.mcp_server")),
    ],
)
def test_layers_import_downwards(layer: str, above: tuple[str, ...]) -> None:
    """Commands return results and never present them; presenters never parse or serve."""
    graph = import_graph()
    wrong = sorted(
        f"{m} -> {d}"
        for m, deps in graph.items()
        if m.startswith(layer)
        for d in deps
        if d.startswith(above)
    )
    assert not wrong, wrong
