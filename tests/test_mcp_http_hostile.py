"""`brain mcp --http` against clients that never finish a request: idle and slow connections
(slowloris) from anyone who can reach the port, no token needed. The server must keep serving
the clients that do send a request, and never run out of file descriptors and die. A real
server process (tests/test_mcp_http.py's), its descriptors bounded as macOS bounds them (256)."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_mcp_http
from test_mcp_http import Served, _post

from brain.mcp_server import HEADER_SECONDS

MACOS_FILES = 256  # macOS's default soft limit of open files (`ulimit -n`)


@contextlib.contextmanager
def served_small(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """tests/test_mcp_http.py's server, started with at most MACOS_FILES open files."""
    real = subprocess.Popen

    def bounded(*args: Any, **kw: Any) -> Any:
        files = (MACOS_FILES, MACOS_FILES)
        kw["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, files)
        return real(*args, **kw)

    monkeypatch.setattr(test_mcp_http.subprocess, "Popen", bounded)
    with test_mcp_http.served(vault) as server:
        monkeypatch.setattr(test_mcp_http.subprocess, "Popen", real)
        yield server


def _open(port: int, n: int, start: bytes = b"") -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if start:
            s.sendall(start)
        out.append(s)
    return out


def _closed(s: socket.socket) -> bool:
    """Whether the server closed `s` (its end reads as EOF or reset)."""
    s.settimeout(0.05)
    try:
        return s.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_idle_connections_beyond_the_server_s_files_never_stop_it(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More idle connections than the server may open files: each newcomer that is no request
    yet pushes out the oldest such connection, so a client that sends one is answered, and the
    server lives on."""
    with served_small(vault, monkeypatch) as server:
        good = {"Host": f"127.0.0.1:{server.port}", "Authorization": f"Bearer {server.token}"}
        idle = _open(server.port, MACOS_FILES + 50)
        try:
            status, _ = _post(server.port, good)
            assert status == 200
            assert server.proc.poll() is None, server.stderr
            assert any(_closed(s) for s in idle)
        finally:
            for s in idle:
                s.close()
        assert _post(server.port, good)[0] == 200
        assert "internal error" not in server.stderr
        assert "Traceback" not in server.stderr


def test_a_request_s_headers_sent_too_slowly_are_cut_off(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection whose request's headers do not arrive within HEADER_SECONDS is closed, a
    byte at a time or none at all; a session's open event stream is not (it is a request)."""
    with served_small(vault, monkeypatch) as server:
        good = {"Host": f"127.0.0.1:{server.port}", "Authorization": f"Bearer {server.token}"}
        slow = _open(server.port, 3, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        silent = _open(server.port, 3)
        end = time.monotonic() + HEADER_SECONDS + 10
        while time.monotonic() < end and not all(map(_closed, slow + silent)):
            for s in slow:
                with contextlib.suppress(OSError):
                    s.sendall(b"X")  # a byte now and then: no request ever completes
            time.sleep(1)
        try:
            assert all(map(_closed, slow + silent))
        finally:
            for s in slow + silent:
                s.close()
        assert _post(server.port, good)[0] == 200
