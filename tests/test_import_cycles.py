"""No import cycles in brain/, and the layers import downwards (vault -> index -> search -> commands
-> presenters -> CLI, MCP, hooks): the core never imports a front end. Every module is parsed with
`ast`; module-level and function-level imports both count (a function-level import is a cycle put
off, not removed). For cycles, imports under `if TYPE_CHECKING:` do not (annotations only, never
run); for the layers they do (a type the core needs belongs in the core)."""

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


def _imports(tree: ast.AST, typing: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth; those under `if TYPE_CHECKING:` with `typing`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node) and not typing:
            for child in node.orelse:
                yield from _imports(child)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node, typing)


def import_graph(root: Path = BRAIN, *, typing: bool = False) -> dict[str, set[str]]:
    """module -> the brain modules it imports (`from brain import x` names module brain.x when
    there is one, else the package); with `typing`, those under `if TYPE_CHECKING:` too."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), typing):
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


# The front ends: what parses, serves or presents. Nothing else in brain imports them.
FRONT_ENDS = ("app", "cli", "run", "answers", "mcp_server", "thin", "worker", "__main__")
FRONT_PACKAGES = ("commands", "present", "desk")


def front_end(module: str) -> bool:
    name = module.removeprefix("brain.")
    return name in FRONT_ENDS or name.split(".")[0] in FRONT_PACKAGES


def reaching_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a front end by a module that is none, as `module -> front end`."""
    return sorted(
        f"{m} -> {d}" for m, deps in graph.items() if not front_end(m) for d in deps if front_end(d)
    )


def test_the_core_never_imports_a_front_end() -> None:
    """Every module of the package, with no exemption: what the core needs from a command, a
    presenter or an entry point moves down into the core."""
    graph = import_graph(typing=True)
    assert len(graph) > 100  # the whole package was read
    wrong = reaching_up(graph)
    assert not wrong, "the core imports a front end:\n" + "\n".join(wrong)


def test_the_layer_check_finds_every_kind_of_import(tmp_path: Path) -> None:
    """The checker itself: a lazy import inside a function, `from brain import x`, a relative
    import, `import brain.x` and one under TYPE_CHECKING all count; front ends among themselves
    do not."""
    pkg = tmp_path / "brain"
    (pkg / "commands").mkdir(parents=True)
    (pkg / "recall").mkdir()
    for name in ("__init__", "commands/__init__", "recall/__init__"):
        (pkg / f"{name}.py").write_text("")
    (pkg / "commands" / "find.py").write_text("from brain import index\n")
    (pkg / "run.py").write_text("from brain.commands import find\n")
    (pkg / "cli.py").write_text("from brain import run\n")
    (pkg / "index.py").write_text("def f():\n    from brain.commands.find import x\n")
    (pkg / "gitsync.py").write_text("from brain import run\n")
    (pkg / "recall" / "past.py").write_text("from ..commands import find\n")
    (pkg / "usage.py").write_text("import brain.cli\n")
    (pkg / "health.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from brain.commands import find\n"
    )
    assert reaching_up(import_graph(pkg, typing=True)) == [
        "brain.gitsync -> brain.run",
        "brain.health -> brain.commands.find",
        "brain.index -> brain.commands.find",
        "brain.recall.past -> brain.commands.find",
        "brain.usage -> brain.cli",
    ]


def pygit2_users(root: Path = BRAIN) -> set[str]:
    """The modules that import pygit2, at any depth."""
    users = set()
    for path in sorted(root.rglob("*.py")):
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), typing=True):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "pygit2" for n in names):
                users.add(module_name(path, root))
    return users


def test_git_is_touched_through_gitutil_alone() -> None:
    """brain.gitutil is where brain touches git: the git CLI, and pygit2, which no other module
    imports (lint, verify, `brain day --git`, the notes' dates, the secrets scans of commits and
    the sync's replay all call it)."""
    assert pygit2_users() == {"brain.gitutil"}
