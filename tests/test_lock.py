"""brain's one file lock (brain.files.hold and its block form `locked`): the worker's start lock
and the inbox, tend and sync locks are the same lock, held across real processes."""

from __future__ import annotations

import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain import files, worker_client
from brain.errors import BrainError

# A child process that takes the lock with `files.locked` (the inbox's, tend's and sync's form),
# says so, and holds it until its stdin closes.
HOLDER = """
import sys
from pathlib import Path
from brain import files
with files.locked(Path(sys.argv[1])) as got:
    print("held" if got else "not held", flush=True)
    sys.stdin.read()
"""


def _holder(path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0


def test_the_worker_lock_and_the_block_lock_exclude_each_other(tmp_path: Path) -> None:
    base = tmp_path / "worker-x"
    proc = _holder(tmp_path / "worker-x.lock")
    try:
        # held by another process: no second worker starts
        assert worker_client.take_lock(base) is None
        start = time.monotonic()
        assert files.hold(tmp_path / "worker-x.lock", wait=0.3) is None
        assert time.monotonic() - start >= 0.3  # it waited before giving up
    finally:
        _release(proc)
    held = worker_client.take_lock(base)
    assert held is not None  # let go when the holder exited
    with files.locked(tmp_path / "worker-x.lock", wait=0) as got:
        assert not got  # and this process's hold excludes the block form too
    held.close()
    held.close()  # a second close is harmless
    with files.locked(tmp_path / "worker-x.lock", wait=0) as got:
        assert got


def test_a_lock_file_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    """The worker's lock file was created 0644 (umask 022) beside the 0600 files of its folder."""
    held = worker_client.take_lock(tmp_path / "worker-y")
    assert held is not None
    held.close()
    assert stat.S_IMODE((tmp_path / "worker-y.lock").stat().st_mode) == 0o600


def test_a_lock_file_that_cannot_be_made_is_one_line_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(BrainError) as caught, files.locked(tmp_path / "file" / "x.lock"):
        pass
    assert "cannot create the lock file" in caught.value.message
    assert "writable" in caught.value.hint
