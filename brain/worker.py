"""A warm helper process for the vector half of `brain find`.

A fresh `brain find` would pay ~100 ms for numpy and ~300 ms to build the ONNX session before its
first query, every time. The first hybrid find starts this worker in the background (and answers
in-process meanwhile); later finds send it the query over a local socket and get the nearest units
back, so the find process itself never imports numpy or the model. The worker holds the model and
the vectors, embeds units that changed since the last reindex, and exits after some idle minutes.
Results are the same with or without it: both call `semantic.search`.

Transport: a Unix socket in the state dir; where the platform has none (Windows), loopback TCP
with a random token, the address kept in a file only this user can read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from brain import __version__, config

IDLE_SECONDS = 600.0
CONNECT_TIMEOUT = 0.25
REPLY_TIMEOUT = 5.0
FAILED_BACKOFF = 600.0  # after a worker failed to load the model, do not respawn for this long
INLINE_EMBED_MAX = 64  # units a find embeds itself; more is left to the worker or a reindex
_UNIX = hasattr(socket, "AF_UNIX")


def _base(vault: Path) -> Path:
    from brain.semantic import embed_settings

    provider, options = embed_settings()
    key = json.dumps([str(vault), provider, options, __version__], sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    folder = config.state_dir() / "run"
    path = folder / f"worker-{digest}"
    if _UNIX and len(str(path)) + 5 > 100:  # sun_path is ~104 bytes on some systems
        import tempfile

        folder = Path(tempfile.gettempdir()) / f"brain-{os.getuid()}"
        path = folder / f"worker-{digest}"
    return path


def _ensure(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        folder.chmod(0o700)


def _send(sock: socket.socket, doc: dict[str, Any]) -> None:
    sock.sendall(json.dumps(doc).encode("utf-8") + b"\n")


def _recv(sock: socket.socket) -> dict[str, Any]:
    buf = bytearray()
    while not buf.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("worker closed the connection")
        buf += chunk
    doc = json.loads(buf)
    if not isinstance(doc, dict):
        raise ValueError("bad reply")
    return doc


def _connect(base: Path) -> tuple[socket.socket, str]:
    if _UNIX:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(base.with_suffix(".sock")))
        except OSError:
            sock.close()
            raise
        return sock, ""
    port, token = base.with_suffix(".addr").read_text(encoding="utf-8").split()
    sock = socket.create_connection(("127.0.0.1", int(port)), timeout=CONNECT_TIMEOUT)
    return sock, token


def ask(vault: Path, text: str, k: int) -> list[tuple[int, float]] | None:
    """The worker's answer, or None when there is no worker (one is started for next time)."""
    base = _base(vault)
    try:
        sock, token = _connect(base)
    except (OSError, ValueError):
        spawn(vault, base)
        return None
    try:
        sock.settimeout(REPLY_TIMEOUT)
        _send(sock, {"token": token, "vault": str(vault), "text": text, "k": k})
        reply = _recv(sock)
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    hits = reply.get("hits")
    if not isinstance(hits, list):
        return None
    return [(int(uid), float(cos)) for uid, cos in hits]


def spawn(vault: Path, base: Path | None = None) -> None:
    base = base or _base(vault)
    failed = base.with_suffix(".failed")
    with contextlib.suppress(OSError):
        if time.time() - failed.stat().st_mtime < FAILED_BACKOFF:
            return
    import subprocess  # only here: a find that reaches a live worker never pays for it

    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "brain.worker", str(vault)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )


def _listen(base: Path) -> tuple[socket.socket, str]:
    if _UNIX:
        path = base.with_suffix(".sock")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # stale: we hold the lock, so no live worker owns it
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        path.chmod(0o600)
        server.listen(16)
        return server, ""
    import secrets

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    token = secrets.token_hex(16)
    addr = base.with_suffix(".addr")
    tmp = addr.with_suffix(".tmp")
    tmp.write_text(f"{server.getsockname()[1]} {token}", encoding="utf-8")
    tmp.replace(addr)
    return server, token


def _lock(base: Path) -> Any:
    """An exclusive lock so that two finds starting workers at once end with one worker."""
    handle = base.with_suffix(".lock").open("a+")
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def stop_all(vaults: Iterable[Path] = ()) -> list[int]:
    """Stop this user's workers (those of `vaults`, and any in the state dir): each by the pid it
    wrote, and only while it still holds its lock, so a pid the system has reused is never hit."""
    folders = {config.state_dir() / "run"}
    for vault in vaults:
        with contextlib.suppress(Exception):  # a broken brain.yaml must not stop an uninstall
            folders.add(_base(vault).parent)
    stopped = []
    for folder in sorted(folders):
        for lock_file in sorted(folder.glob("worker-*.lock")):
            base = lock_file.with_suffix("")
            free = _lock(base)
            if free is not None:  # nobody holds it: no worker behind this file
                free.close()
                continue
            try:
                pid = int(base.with_suffix(".pid").read_text(encoding="utf-8"))
                os.kill(pid, signal.SIGTERM)
            except (OSError, ValueError):
                continue
            stopped.append(pid)
    return stopped


def serve(vault: Path, idle: float = IDLE_SECONDS) -> int:
    from brain import index, semantic

    base = _base(vault)
    _ensure(base.parent)
    lock = _lock(base)
    if lock is None:
        return 0  # another worker serves this vault
    base.with_suffix(".pid").write_text(f"{os.getpid()}\n", encoding="utf-8")  # for `stop_all`
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # clean up the socket on the way out
    embedder = semantic.load()
    if embedder is None:
        base.with_suffix(".failed").write_text("model did not load\n", encoding="utf-8")
        return 1
    with contextlib.suppress(FileNotFoundError):
        base.with_suffix(".failed").unlink()
    conn = index.open_index(vault)
    server, token = _listen(base)
    server.settimeout(idle)
    try:
        semantic.update(conn, embedder)
        seen = index.built(conn)
        while True:
            try:
                client, _ = server.accept()
            except TimeoutError:
                return 0
            with client:
                try:
                    client.settimeout(REPLY_TIMEOUT)
                    request = _recv(client)
                    if request.get("token", "") != token:
                        continue
                    # The find that asks has just brought the index up to date; reopen it in case
                    # a rebuild replaced the file, and embed what changed once per new build.
                    conn.close()
                    conn = index.connect(vault)
                    if index.built(conn) != seen:
                        semantic.update(conn, embedder)
                        seen = index.built(conn)
                    hits = semantic.search(
                        conn, embedder, str(request["text"]), int(request["k"]), str(vault)
                    )
                    _send(client, {"hits": hits})
                except Exception as exc:  # one bad request must not kill the worker
                    with contextlib.suppress(OSError):
                        _send(client, {"error": str(exc)})
    finally:
        server.close()
        for suffix in (".sock", ".addr", ".pid"):
            with contextlib.suppress(FileNotFoundError):
                base.with_suffix(suffix).unlink()
        conn.close()


if __name__ == "__main__":
    idle = float(os.environ.get("BRAIN_WORKER_IDLE", IDLE_SECONDS))
    sys.exit(serve(Path(sys.argv[1]), idle))
