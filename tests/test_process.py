"""One way to start a detached process (brain.process, issue 29 item 4): every background start
(worker, sync, daily sweep, reindex, release check) detaches the same way, on Windows too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from brain import autosync, notice, process, run, worker_client
from brain.commands import tend

WINDOWS_FLAGS = 0x00000008 | 0x00000200  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP


def _starts(vault: Path) -> dict[str, Callable[[], object]]:
    """Each of brain's background starts, as its caller makes it."""
    base = worker_client.base_of(vault)
    assert worker_client.check_dir(base.parent) == ""  # the worker's folder, made
    return {
        "worker": lambda: worker_client.spawn(vault, base),
        "sync": lambda: autosync._spawn(vault, "push"),
        "tend": lambda: tend.background(vault),
        "notice": notice._spawn_check,
        "reindex": lambda: run._index_ready(vault),
    }


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, argv: list[str], **kwargs: Any) -> object:
        self.calls.append({"argv": argv, **kwargs})
        return object()


@pytest.mark.parametrize("name", ["worker", "sync", "tend", "notice", "reindex"])
@pytest.mark.parametrize("platform", ["win32", "linux"])
def test_every_background_start_detaches_as_its_system_needs(
    vault: Path, monkeypatch: pytest.MonkeyPatch, name: str, platform: str
) -> None:
    """On Windows, start_new_session is ignored: the flags detach the child from the console
    and from the caller's Ctrl-C; on POSIX a session of its own. The worker and prime's
    reindex relied on start_new_session alone."""
    recorder = _Recorder()
    monkeypatch.setattr(subprocess, "Popen", recorder)
    monkeypatch.setattr(sys, "platform", platform)
    _starts(vault)[name]()
    monkeypatch.undo()
    assert len(recorder.calls) == 1, recorder.calls
    call = recorder.calls[0]
    if platform == "win32":
        assert call.get("creationflags", 0) & WINDOWS_FLAGS == WINDOWS_FLAGS
        assert not call.get("start_new_session")
    else:
        assert call.get("start_new_session") is True
        assert not call.get("creationflags")
    assert call["stdin"] == subprocess.DEVNULL
    assert call["close_fds"] is True


CHILD = """
import os, sys, time
open(sys.argv[1], "w").write(f"{os.getpid()} {os.getsid(0)} {os.getpgid(0)}")
time.sleep(60)
"""

PARENT = """
import sys
from brain.process import start_detached
ok = start_detached([sys.executable, "-c", sys.argv[1], sys.argv[2]])
print("started" if ok else "failed", flush=True)
import time
time.sleep(60)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and sessions: POSIX")
def test_a_detached_child_outlives_its_parents_process_group(tmp_path: Path) -> None:
    """A hook's process group is killed when the agent stops it: the child started detached is in
    a session (and group) of its own and goes on."""
    said = tmp_path / "child"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, CHILD, str(said)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the parent's own group, to kill it as a terminal would
    )
    child = 0
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not said.exists() or not said.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child, sid, pgid = map(int, said.read_text().split())
        assert sid == child == pgid  # a session and group of its own
        assert pgid != os.getpgid(parent.pid)
        os.killpg(os.getpgid(parent.pid), signal.SIGKILL)
        parent.wait(timeout=10)
        time.sleep(0.2)
        os.kill(child, 0)  # still alive: ProcessLookupError otherwise
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child:
            os.kill(child, signal.SIGKILL)


def test_a_start_that_cannot_happen_is_false_not_an_error(tmp_path: Path) -> None:
    assert process.start_detached([str(tmp_path / "no-such-program")]) is False
