"""conftest's `brain(...)`: the entry point run in the test's process answers as a fresh process
does, and leaves the test's process as it found it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, brain, brain_process, needs_process

V = str(FIXTURE_VAULT)
EVENT = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "cwd": V})


@pytest.mark.parametrize(
    ("args", "env", "input"),
    [
        (("find", "--vault", V, "libgit2 hooks"), {}, None),
        (("find", "--vault", V, "--json", "pygit2"), {}, None),
        (("find", "--vault", V, "ocelot"), {}, None),  # no match: exit 1
        (("find", "--vault", V, "--limit", "many", "x"), {}, None),  # usage error: exit 2
        (("lint", "--vault", V), {}, None),
        (("--help",), {"COLUMNS": "80"}, None),
        (("pack", "--vault", V), {"CLAUDECODE": "1"}, EVENT),  # the hook's event on stdin
    ],
)
def test_in_process_answers_as_a_process_does(
    args: tuple[str, ...], env: dict[str, str], input: str | None
) -> None:
    assert brain(*args, env=env, input=input) == brain_process(*args, env=env, input=input)


def test_the_test_s_process_is_left_as_it_was(tmp_path: Path) -> None:
    before = (
        dict(os.environ),
        Path.cwd(),
        list(sys.argv),
        (sys.stdin, sys.stdout, sys.stderr),
        {name: id(mod) for name, mod in sys.modules.items() if name.startswith("brain")},
    )
    run = brain("find", "--vault", V, "pygit2", env={"BRAIN_CALLER": "codex"}, cwd=tmp_path)
    assert run.code == 0, run
    after = (
        dict(os.environ),
        Path.cwd(),
        list(sys.argv),
        (sys.stdin, sys.stdout, sys.stderr),
        {name: id(mod) for name, mod in sys.modules.items() if name.startswith("brain")},
    )
    assert after == before


def test_each_call_imports_brain_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the test (or an earlier call) left in brain's modules is not seen, as in a process."""
    from brain.commands import find

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the test's patched module was used")

    monkeypatch.setattr(find, "find", boom)
    run = brain("find", "--vault", V, "pygit2")
    assert run.code == 0, run
    assert run.out.startswith("AI/")


def test_what_needs_a_process_gets_one() -> None:
    assert needs_process(("prime", "x"), {"BRAIN_WORKER": "0"})  # its deadline ends the process
    assert needs_process(("find", "x"), {"BRAIN_WORKER": "1"})  # a worker outlives the call
    assert needs_process(("find", "x"), {"BRAIN_WORKER": "0", "PYTHONPATH": "/nowhere"})
    assert not needs_process(("find", "x"), {"BRAIN_WORKER": "0"})
