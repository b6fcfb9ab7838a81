"""The worker serves a request without swapping process-wide state (issue 29, item 7): a forwarded
command runs with its client's environment and folder passed down as its settings, while the
worker's own environment and folder, which a vector request reads, never change."""

from __future__ import annotations

import json
import marshal
import os
import socket
import time
from pathlib import Path

import pytest
from conftest import brain
from test_thin import start
from test_worker import _kill, stop_workers

from brain import worker_client
from brain.wire import PROTOCOL


def _open(vault: Path) -> tuple[socket.socket, str]:
    base = worker_client.base_of(vault)
    record = worker_client.read_record(base)
    assert record is not None
    sock = worker_client._connect(base, record)
    sock.settimeout(10)
    return sock, str(record["token"])


def _line(sock: socket.socket, pending: bytearray) -> bytes:
    """One line from the worker; heartbeats (empty lines) included."""
    while b"\n" not in pending:
        data = sock.recv(65536)
        assert data, "the worker hung up"
        pending += data
    line, _, rest = bytes(pending).partition(b"\n")
    pending[:] = rest
    return line


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="reads /proc/PID/cwd")
def test_a_vector_request_beside_a_forwarded_command_reads_the_workers_own_state(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forwarded prime with its own BRAIN_STATE and folder waits for its stdin; meanwhile a
    vector request asks the same worker for neighbours. It must read the worker's index (the
    model is loading: keyword-only here), not open an index under the command's state dir, and
    the worker's current folder must stay its own. Swapping os.environ and chdir per command
    failed both: the request made an empty index in the command's state and failed on it."""
    monkeypatch.setenv("BRAIN_WORKER", "1")
    monkeypatch.setenv("BRAIN_WORKER_IDLE", "120")
    assert brain("reindex", "--vault", str(vault)).code == 0  # the worker's own index
    pid = start(vault)
    other_state, elsewhere = tmp_path / "other-state", tmp_path / "elsewhere"
    elsewhere.mkdir()
    own_cwd = Path(f"/proc/{pid}/cwd").readlink()
    env = {**os.environ, "BRAIN_STATE": str(other_state), "XDG_STATE_HOME": str(other_state)}
    try:
        command, token = _open(vault)
        job = {
            "argv": ["prime", "--vault", str(vault)],
            "env": env,
            "cwd": str(elsewhere),
            "tty": (0, 0, 0),
            "enc": ("utf-8", "utf-8", "utf-8"),
            "spent": 0.0,
        }
        payload = marshal.dumps(job)
        head = {"protocol": PROTOCOL, "token": token, "op": "run", "size": len(payload)}
        command.sendall(json.dumps(head).encode() + b"\n" + payload)
        pending = bytearray()
        assert _line(command, pending).startswith(b'{"ack": ')
        while (line := _line(command, pending)) != b'{"stdin": 1}':
            assert line == b"", line  # heartbeats until prime asks for its event
        # prime now runs, blocked on its stdin: ask for neighbours beside it
        ask, _ = _open(vault)
        request = {"protocol": PROTOCOL, "token": token, "op": "neighbours"}
        request |= {"vault": str(vault.resolve()), "text": "libgit2", "k": 3}
        with ask:
            ask.sendall(json.dumps(request).encode() + b"\n")
            got = bytearray()
            assert _line(ask, got).startswith(b'{"ack": ')
            reply = json.loads(_line(ask, got))
        assert Path(f"/proc/{pid}/cwd").readlink() == own_cwd  # no chdir into the client's folder
        assert list(other_state.rglob("*.sqlite")) == [], "read the command's state dir"
        assert "error" not in reply, reply
        assert reply == {"busy": "the embedding model is loading in the background"}
        # no event: prime ends there (with one it would start a reindex under the other state)
        command.sendall(b"0\n")
        deadline = time.monotonic() + 30
        while not (line := _line(command, pending)).startswith(b'{"done": '):
            assert time.monotonic() < deadline
        command.close()
    finally:
        _kill(pid)
        stop_workers(worker_client.base_of(vault))
