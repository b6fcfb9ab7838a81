"""The cold first find: the worker it starts waits for its answer, and a process that loaded numpy
leaves without the interpreter's teardown (brain.thin.leave)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from brain import index, run, worker_client

# brain's entry point as the console script runs it, in a process that has numpy loaded (as a
# hybrid find has) and an object whose finaliser says when the interpreter tears itself down.
ENTRY = """
import os, sys, threading, time
import numpy
class Torn:
    def __del__(self):
        os.write(2, b"torn down\\n")
torn = Torn()
if os.environ.get("TEST_THREAD"):  # still running when the command is done
    threading.Thread(target=time.sleep, args=(0.3,)).start()
from brain.thin import main
main()
"""

# brain's entry point called inside another program (as tests/conftest.py's in-process runner
# does, with pytest's own command line): the program goes on after the command.
EMBEDDED = """
import os, sys
import numpy
from brain.thin import main
sys.argv = ["brain", "find", "--vault", os.environ["TEST_VAULT"], "libgit2", "hooks"]
try:
    main()
except SystemExit as done:
    print("still here, code", done.code)
"""


def python(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def entry(
    vault: Path, *args: str, code: str = ENTRY, **env: str
) -> subprocess.CompletedProcess[str]:
    """`brain find --vault VAULT ARGS` run by `code` as a process's program."""
    return python("-c", code, "find", "--vault", str(vault), *args, **env)


def test_a_cold_find_starts_the_worker_once_it_has_answered(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Started at once, the worker loaded its model beside the find's own on the same cores."""
    index.sync(vault)  # keywords only: the find answers at once and leaves embedding to the worker
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "1")
    written_before: list[tuple[str, str]] = []

    def spawn(where: Path, base: Path | None = None) -> bool:
        written_before.append(capsys.readouterr())
        return True

    monkeypatch.setattr(worker_client, "spawn", spawn)
    assert run.run_find(["libgit2", "hooks"], vault=str(vault)) == 0
    assert len(written_before) == 1
    out, err = written_before[0]
    assert out.startswith("AI/LEARNINGS.md:7 libgit2")
    assert err == "brain: keyword results for now: the vault is being embedded in the background\n"


def test_a_worker_that_failed_lately_is_not_started_after_the_find_either(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    index.sync(vault)
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "1")
    base = worker_client.base_of(vault)
    base.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    worker_client.with_suffix(base, ".failed").write_text("brain: no model\n", encoding="utf-8")
    assert run.run_find(["libgit2", "hooks"], vault=str(vault)) == 0
    assert not worker_client.with_suffix(base, ".log").exists()  # nothing was spawned
    assert capsys.readouterr().err == (
        "brain: keyword results for now: run `brain reindex` to embed the vault\n"
    )


def test_a_process_with_numpy_loaded_leaves_without_the_teardown(vault: Path) -> None:
    index.sync(vault)
    for query in (["libgit2", "hooks"], ["--json", "zzqx"]):  # a hit (exit 0) and none (exit 1)
        plain = entry(vault, *query, code="from brain.thin import main; main()")
        done = entry(vault, *query)
        assert (done.returncode, done.stdout, done.stderr) == (
            plain.returncode,
            plain.stdout,
            plain.stderr,
        )
        assert done.returncode == (0 if query[0] == "libgit2" else 1)
        assert done.stdout  # written in full before the process left


def test_a_thread_still_running_gets_the_usual_exit(vault: Path) -> None:
    index.sync(vault)
    done = entry(vault, "libgit2", "hooks", TEST_THREAD="1")
    assert done.returncode == 0
    assert done.stdout.startswith("AI/LEARNINGS.md:7 libgit2")
    assert done.stderr == "torn down\n"


def test_brain_inside_another_program_returns_to_it(vault: Path, tmp_path: Path) -> None:
    index.sync(vault)
    program = tmp_path / "program.py"
    program.write_text(EMBEDDED, encoding="utf-8")
    done = python(str(program), TEST_VAULT=str(vault))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("AI/LEARNINGS.md:7 libgit2")
    assert done.stdout.endswith("still here, code 0\n")
