"""Small helpers written once (issue 29, item 9): `plural`, `noun` and `read_json_dict` are
defined in one module each and imported from there alone, and a value made once per process is
made with `functools.cache`, not a module-level list filled on first use (`_X = []`, then
`if not _X: _X.append(...)` and `_X[0]`). Every module of brain/ is read with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BRAIN = Path(__file__).parents[1] / "brain"
HOME = {"plural": "brain.text", "noun": "brain.text", "read_json_dict": "brain.files"}
# The thin client's helpers take nothing but builtin modules (tests/test_imports.py): functools
# is not one, so the prime gate the thin client makes first thing is kept in a list there.
BUILTINS_ONLY = {"brain.deadline"}


def modules(root: Path = BRAIN) -> dict[str, ast.Module]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def misplaced_helpers(trees: dict[str, ast.Module]) -> list[str]:
    """Every definition of a shared helper outside its module, and every import of one from
    elsewhere (a re-export is a second way to reach it)."""
    wrong = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in HOME:
                if HOME[node.name] != name:
                    wrong.append(f"{name} defines {node.name}")
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in HOME and node.module != HOME[alias.name]:
                        wrong.append(f"{name} imports {alias.name} from {node.module}")
    return sorted(wrong)


def list_singletons(trees: dict[str, ast.Module]) -> list[str]:
    """Module-level names bound to `[]` that a function appends to and reads as `NAME[0]`."""
    found = []
    for name, tree in trees.items():
        empty = set()
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and isinstance(value, ast.List) and not value.elts:
                empty.add(target.id)
        appended, first = set(), set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Name)
            ):
                appended.add(node.func.value.id)
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == 0
            ):
                first.add(node.value.id)
        found += [f"{name}.{v}" for v in sorted(empty & appended & first)]
    return found


def test_each_helper_is_written_once_and_imported_from_its_module() -> None:
    trees = modules()
    assert {"brain.text", "brain.files"} <= set(trees)
    assert misplaced_helpers(trees) == []


def test_a_value_made_once_per_process_is_made_with_functools_cache() -> None:
    wrong = [m for m in list_singletons(modules()) if m.rpartition(".")[0] not in BUILTINS_ONLY]
    assert wrong == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from brain.present import plural\n", "imports plural from brain.present"),
        ("def noun(n, w):\n    return w\n", "defines noun"),
        ("def f():\n    from brain.edits import read_json_dict\n", "imports read_json_dict"),
    ],
)
def test_the_helper_check_finds_a_second_way(tmp_path: Path, source: str, found: str) -> None:
    pkg = tmp_path / "brain"
    pkg.mkdir()
    (pkg / "text.py").write_text("def plural(n, w):\n    return w\n")
    (pkg / "odd.py").write_text(source)
    assert [w for w in misplaced_helpers(modules(pkg)) if found in w] != []


def test_the_singleton_check_finds_a_list_filled_on_first_use(tmp_path: Path) -> None:
    pkg = tmp_path / "brain"
    pkg.mkdir()
    (pkg / "odd.py").write_text(
        "_MODEL: list[dict] = []\n"
        "def model():\n    if not _MODEL:\n        _MODEL.append({})\n    return _MODEL[0]\n"
        "_SEEN = []\ndef seen(x):\n    _SEEN.append(x)\n"  # a list that grows: no singleton
    )
    assert list_singletons(modules(pkg)) == ["brain.odd._MODEL"]
