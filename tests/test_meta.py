"""The tests themselves: each checks something, none stops a process by its name, every marker is
registered. Read from the source (ast), so a new test file is held to it without a word here."""

from __future__ import annotations

import ast
import re
import tomllib

from conftest import ROOT

TESTS = ROOT / "tests"
# `pkill -f brain` stops every user's brain, not the one a test started: stop it by its pid
BY_NAME = re.compile(r"\b(?:pkill|killall|pgrep)\b|\bkill\b.*\s-f\b")
CHECKS = {"raises", "warns", "deprecated_call", "fail", "fails", "skip", "xfail", "exit"}


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_fixture(func: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in func.decorator_list)


def checking(source: str, known: frozenset[str] = frozenset()) -> set[str]:
    """The functions in `source` that check something: an assert, pytest.raises (or warns, fail,
    skip), an assert_* call, or a call of a function that checks something (of `source`, or one
    of `known`), however deep."""
    funcs = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
    found = set(known)
    while more := {
        f.name
        for f in funcs
        if f.name not in found
        and any(
            isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and _checks(_name(n), found))
            for n in ast.walk(f)
        )
    }:
        found |= more
    return found


def _checks(name: str, found: set[str]) -> bool:
    return name in CHECKS or name.startswith("assert") or name in found


def silent_tests(source: str, known: frozenset[str] = frozenset()) -> list[str]:
    """The test functions in `source` that check nothing."""
    found = checking(source, known)
    return [
        n.name
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.FunctionDef)
        and n.name.startswith("test")
        and not _is_fixture(n)
        and n.name not in found
    ]


def test_every_test_checks_something() -> None:
    shared = frozenset(checking((TESTS / "conftest.py").read_text(encoding="utf-8")))
    silent = {
        path.name: names
        for path in sorted(TESTS.glob("test_*.py"))
        if (names := silent_tests(path.read_text(encoding="utf-8"), shared))
    }
    assert silent == {}


def test_a_test_that_checks_nothing_is_found() -> None:
    source = """
def helper(x):
    assert x

def indirect(x):
    helper(x)

def test_direct(): assert 1
def test_raises():
    with pytest.raises(ValueError): int("x")
def test_numpy(): np.testing.assert_array_equal(a, b)
def test_through_helpers(): indirect(1)
def test_nothing(): int("1")
def test_calls_a_silent_helper(): print("x")
"""
    assert silent_tests(source) == ["test_nothing", "test_calls_a_silent_helper"]


def test_no_test_stops_a_process_by_name() -> None:
    found = [
        f"{path.name}:{node.lineno}: {node.value}"
        for path in sorted(TESTS.glob("*.py"))
        if path.name != "test_meta.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if BY_NAME.search(node.value)
    ]
    assert found == []


def test_the_name_pattern_finds_kills_by_name() -> None:
    for line in ("pkill -f brain.worker", "killall python", "kill $(pgrep brain)"):
        assert BY_NAME.search(line), line
    for line in ("kill -TERM 1234", "os.kill(pid)", "skill", "killed"):
        assert not BY_NAME.search(line), line


def test_markers_are_strict_and_slow_is_one() -> None:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    options = ini["ini_options"]
    assert "--strict-markers" in options["addopts"]  # a misspelt `slow` would not be skipped
    assert any(line.startswith("slow:") for line in options["markers"])
