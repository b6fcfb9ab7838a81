"""A warm helper process for the vector half of `brain find`.

A fresh `brain find` would pay ~100 ms for numpy and ~300 ms to build the ONNX session before its
first query, every time. The first hybrid find starts this worker in the background (and answers
in-process meanwhile); later finds send it the query over a local socket and get the nearest units
back, so the find process itself never imports numpy or the model. The worker holds the model and
the vectors, embeds units that changed since the last reindex, and exits after some idle minutes.
Results are the same with or without it: both call `semantic.search`.

A find never waits on it for long: the worker listens before it loads the model and embeds in a
thread, so it answers at once, with the neighbours or with `busy` (the find then answers from
keywords and says so). It acknowledges each request before working on it; one that has not done
so DEADLINE after the connect (stopped, wedged) is killed by the pid it recorded and replaced, and
a live one slower than ANSWER_SECONDS (a machine under load) leaves that find to keywords.

Transport, shaped to carry whole commands later: one request and one reply per connection, each
one line of JSON, bounded in size and in the time it may take to arrive. A Unix socket (loopback
TCP where the platform has none) in a folder that must belong to this user and be closed to others
(0700): `$XDG_RUNTIME_DIR/brain`, else the state dir's `run/`, else, when that path is too long
for a socket, `$TMPDIR/brain-<uid>`; any other folder is refused. Every request carries the
worker's token, a secret it writes with its pid (and port) to a 0600 file beside the socket; a
request without it gets no answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from brain import __version__, config

if TYPE_CHECKING:
    import sqlite3

    from brain.embed import Embedder

PROTOCOL = 1
IDLE_SECONDS = 600.0
CONNECT_TIMEOUT = 0.1
DEADLINE = 0.3  # seconds after the connect; a worker that has not acknowledged is replaced
ANSWER_SECONDS = 2.0  # after the connect; a live worker slower than this leaves keywords alone
READ_SECONDS = 1.0  # the worker's limit on the time one request may take to arrive
REQUEST_MAX = 64 * 1024  # bytes of one request line
REPLY_MAX = 16 * 1024 * 1024  # bytes of one reply line
EMBED_WAIT = 0.1  # a query waits this long for the worker to embed a few changed units
MAX_CLIENTS = 16  # connections served at once; more are closed unanswered
STARTING_SECONDS = 30.0  # a worker not listening this long after its spawn is not waited for
FAILED_BACKOFF = 600.0  # after a worker failed to start, do not respawn for this long
INLINE_EMBED_MAX = 64  # units a find embeds itself; more is left to the worker or a reindex
SOCKET_PATH_MAX = 100  # sun_path holds 104 bytes on macOS, 108 on Linux
_UNIX = hasattr(socket, "AF_UNIX")


@dataclass(frozen=True)
class Answer:
    """What asking the worker came to: its neighbours, or what the find does instead."""

    hits: list[tuple[int, float]] | None = None
    inline: bool = True  # without hits: compute them in this process (False: keywords only)
    note: str = ""  # one line for stderr
    background: bool = True  # a worker runs or is starting, and will embed what is missing


# --- where the worker lives ----------------------------------------------------------------------


def run_dir() -> Path:
    """The folder for the worker's socket and files: `$XDG_RUNTIME_DIR/brain`, else the state
    dir's `run/`, else (a path too long for a Unix socket) `$TMPDIR/brain-<uid>`."""
    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_absolute():
        candidates.append(Path(runtime) / "brain")
    candidates.append(config.state_dir() / "run")
    if not _UNIX:
        return candidates[0]
    import tempfile

    candidates.append(Path(tempfile.gettempdir()) / f"brain-{os.getuid()}")
    for folder in candidates:
        if len(os.fsencode(folder / "worker-0123456789abcdef.sock")) <= SOCKET_PATH_MAX:
            return folder
    return candidates[-1]


def _base(vault: Path) -> Path:
    from brain.semantic import embed_settings

    provider, options = embed_settings()
    key = json.dumps([str(vault), provider, options, __version__], sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return run_dir() / f"worker-{digest}"


def check_dir(folder: Path) -> str:
    """'' when `folder` (created 0700 if missing) is a folder of this user's that no one else can
    enter; else why not, in words. Another user's folder there could read every query and forge
    the answers."""
    try:
        try:
            st = folder.lstat()
        except FileNotFoundError:
            folder.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                folder.mkdir(mode=0o700)
                folder.chmod(0o700)  # whatever the umask
            st = folder.lstat()
    except OSError as exc:
        return f"cannot create {folder}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{folder} is not a folder"
    if _UNIX:
        if st.st_uid != os.getuid():
            return f"{folder} belongs to another user (uid {st.st_uid})"
        if stat.S_IMODE(st.st_mode) != 0o700:
            return f"{folder} has mode {stat.S_IMODE(st.st_mode):o}, not 700"
    return ""


def _suffix(base: Path, suffix: str) -> Path:
    return base.with_name(base.name + suffix)


def _record(base: Path) -> dict[str, Any] | None:
    """The running worker's pid, token and port, as it wrote them when it started listening."""
    try:
        doc = json.loads(_suffix(base, ".json").read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("token"), str):
        return None
    return doc


# --- framing: one bounded line of JSON each way --------------------------------------------------


def send_line(sock: socket.socket, doc: dict[str, Any]) -> None:
    sock.sendall(json.dumps(doc).encode("utf-8") + b"\n")


class LineReader:
    """Reads JSON objects, one per line, from a socket: ValueError for a line longer than its
    limit or not an object, TimeoutError past the deadline, ConnectionError if the peer left."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()

    def read(self, limit: int, deadline: float) -> dict[str, Any]:
        scanned = 0
        while (end := self.buf.find(b"\n", scanned)) < 0:
            if len(self.buf) > limit:
                raise ValueError(f"a line longer than {limit} bytes")
            scanned = len(self.buf)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no complete line in time")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the peer closed the connection")
            self.buf += chunk
        if end > limit:
            raise ValueError(f"a line longer than {limit} bytes")
        line = bytes(self.buf[:end])
        del self.buf[: end + 1]
        doc = json.loads(line)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        return doc


# --- the find's side -----------------------------------------------------------------------------


def ask(vault: Path, text: str, k: int, answer_seconds: float = ANSWER_SECONDS) -> Answer:
    """The worker's nearest units for `text`, or what to do without them. Starts a worker when
    none runs and replaces one that does not acknowledge within DEADLINE; a live one gets
    `answer_seconds` after the connect to answer (`brain prime` has less time than `find`)."""
    base = _base(vault)
    why = check_dir(base.parent)
    if why:
        note = f"no background worker: {why}; remove it or set XDG_RUNTIME_DIR to a private folder"
        return Answer(note=note, background=False)
    record = _record(base)
    if record is None:
        return _absent(vault, base)
    try:
        sock = _connect(base, record)
    except (OSError, ValueError, TypeError):
        return _absent(vault, base)
    with sock:
        request = {"protocol": PROTOCOL, "token": record["token"], "op": "neighbours"}
        request |= {"vault": str(vault), "text": text, "k": k}
        lines = LineReader(sock)
        connected = time.monotonic()
        try:
            sock.settimeout(DEADLINE)
            send_line(sock, request)
            lines.read(REPLY_MAX, connected + DEADLINE)  # the acknowledgement: it is alive
        except TimeoutError:
            _replace(vault, base, record, sock)
            note = f"the background worker did not answer within {DEADLINE:g} s; started a new one"
            return Answer(inline=False, note=f"keyword results for now: {note}")
        except (OSError, ValueError):
            return Answer()  # it hung up (a stale token) or said nothing usable
        try:
            reply = lines.read(REPLY_MAX, connected + answer_seconds)
        except TimeoutError:
            note = "keyword results for now: the background worker is slow to answer"
            return Answer(inline=False, note=note)
        except (OSError, ValueError):
            return Answer()
    hits, busy = reply.get("hits"), reply.get("busy")
    if isinstance(hits, list):
        try:
            return Answer(hits=[(int(uid), float(cos)) for uid, cos in hits])
        except (TypeError, ValueError):
            return Answer()
    if isinstance(busy, str):
        return Answer(inline=False, note=f"keyword results for now: {busy}")
    return Answer()


def _connect(base: Path, record: dict[str, Any]) -> socket.socket:
    if _UNIX:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(_suffix(base, ".sock")))
        except OSError:
            sock.close()
            raise
        return sock
    return socket.create_connection(("127.0.0.1", int(record["port"])), timeout=CONNECT_TIMEOUT)


def _absent(vault: Path, base: Path) -> Answer:
    """No worker answers: wait for one that is starting, say (once) why the last one could not
    start, or start one and answer in this process meanwhile."""
    log = _suffix(base, ".log")
    lock = _lock(base)
    if lock is None:  # a worker process holds it but is not listening yet
        with contextlib.suppress(OSError):
            if time.time() - log.stat().st_mtime < STARTING_SECONDS:
                note = "keyword results for now: the background worker is starting"
                return Answer(inline=False, note=note)
        return Answer()  # wedged before it listened: answer without it
    lock.close()
    reason = _failure(log, _suffix(base, ".failed"))
    if reason:
        minutes = FAILED_BACKOFF / 60
        note = f"the background worker failed: {reason} (next try in {minutes:g} minutes)"
        return Answer(note=note, background=False)
    return Answer(background=spawn(vault, base))


def _failure(log: Path, failed: Path) -> str:
    """The last line an exited worker wrote on stderr (its log), or ''. The log then becomes the
    `failed` marker, so the reason is said once and the back-off starts now."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    said = [line.strip() for line in lines if line.strip()]
    if not said:
        return ""
    with contextlib.suppress(OSError):
        log.replace(failed)
    reason = said[-1].removeprefix("brain: ")
    return "".join(ch if ch.isprintable() else "?" for ch in reason)[:300]


def _replace(vault: Path, base: Path, record: dict[str, Any], sock: socket.socket) -> None:
    """Kill the worker that did not answer (by the pid it recorded, when the socket's peer is that
    very process) and start another."""
    import signal

    pid = record.get("pid")
    if isinstance(pid, int) and pid > 0 and pid != os.getpid() and _peer_is(sock, pid):
        with contextlib.suppress(OSError):
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))  # a stopped one too
    spawn(vault, base)


def _peer_is(sock: socket.socket, pid: int) -> bool:
    """Whether the process listening on `sock` is `pid` of this user, where the system can tell
    (Linux); elsewhere the record, in a folder only this user can write, is trusted."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None or sock.family != getattr(socket, "AF_UNIX", None):
        return True
    import struct

    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return False
    peer, uid, _gid = struct.unpack("3i", raw)
    return bool(peer == pid and uid == os.getuid())


def spawn(vault: Path, base: Path | None = None) -> bool:
    """Start a worker for `vault` in the background (its stderr kept in a log, so that a start
    that fails can say why). False when the back-off after a failure holds it back."""
    base = base or _base(vault)
    with contextlib.suppress(OSError):
        if time.time() - _suffix(base, ".failed").stat().st_mtime < FAILED_BACKOFF:
            return False
    import subprocess  # only here: a find that reaches a live worker never pays for it

    try:
        log = os.open(_suffix(base, ".log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return False
    try:
        subprocess.Popen(
            config.python_command("brain.worker", str(vault)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    finally:
        os.close(log)
    return True


# --- the worker's side ---------------------------------------------------------------------------


def _lock(base: Path, wait: float = 0.0) -> Any:
    """An exclusive lock so that two finds starting workers at once end with one worker; `wait`
    seconds for one that is exiting (just killed) to let go."""
    handle = _suffix(base, ".lock").open("a+")
    deadline = time.monotonic() + wait
    while True:
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if time.monotonic() >= deadline:
                handle.close()
                return None
            time.sleep(0.05)
            continue
        return handle


def stop_all(vaults: Iterable[Path] = ()) -> list[int]:
    """Stop this user's workers (those of `vaults`, and any in the run folder): each by the pid
    it recorded, and only while it still holds its lock, so a pid the system has reused is never
    hit."""
    import signal

    folders = {run_dir()}
    for vault in vaults:
        with contextlib.suppress(Exception):  # a broken brain.yaml must not stop an uninstall
            folders.add(_base(vault).parent)
    stopped = []
    for folder in sorted(folders):
        for lock_file in sorted(folder.glob("worker-*.lock")):
            base = lock_file.with_name(lock_file.name.removesuffix(".lock"))
            free = _lock(base)
            if free is not None:  # nobody holds it: no worker behind this file
                free.close()
                continue
            record = _record(base)
            pid = record.get("pid") if record else None
            if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
                continue
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
                stopped.append(pid)
    return stopped


def _listen(base: Path) -> tuple[socket.socket, int]:
    if _UNIX:
        path = _suffix(base, ".sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        path.chmod(0o600)
        server.listen(MAX_CLIENTS)
        return server, 0
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(MAX_CLIENTS)
    return server, int(server.getsockname()[1])


def _write_record(base: Path, doc: dict[str, Any]) -> None:
    """Write the record 0600 from the first byte, then move it into place in one step."""
    tmp = _suffix(base, ".json.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(doc))
    tmp.replace(_suffix(base, ".json"))


class _Worker:
    """Serves queries on the main thread (one short thread per connection) while a background
    thread loads the model and embeds whatever the index's newest build lacks."""

    def __init__(self, vault: Path, token: str) -> None:
        import threading

        self.vault, self.token = vault, token
        self.embedder: Embedder | None = None
        self.ready = ""  # the index build whose units all have vectors
        self.progress = (0, 0)  # (done, total) of the embedding under way
        self.failed: str | None = None  # why the background thread stopped
        self.cond = threading.Condition()
        self.wake = threading.Event()
        self.query = threading.Lock()
        self.clients = 0  # connections being served
        self.embedding = True  # loading the model or embedding: not idle
        self.last = time.monotonic()
        self.thread: threading.Thread = threading.Thread(target=self._background, daemon=True)

    def run(self, server: socket.socket, idle: float) -> int:
        import threading

        self.thread.start()
        server.settimeout(max(0.05, min(1.0, idle)))
        while True:
            try:
                client, _ = server.accept()
            except TimeoutError:
                if self.failed is not None:
                    if self.failed:
                        sys.stderr.write(f"brain: {self.failed}\n")
                    return 1
                with self.cond:
                    quiet = not self.clients and not self.embedding
                    if quiet and time.monotonic() - self.last >= idle:
                        return 0
                continue
            except OSError:  # out of descriptors, say: let the connections in hand finish
                time.sleep(0.1)
                continue
            with self.cond:
                self.last = time.monotonic()
                full = self.clients >= MAX_CLIENTS
                self.clients += not full
            if full:
                client.close()
                continue
            threading.Thread(target=self._serve_one, args=(client,), daemon=True).start()

    def _serve_one(self, client: socket.socket) -> None:
        import hmac

        try:
            with client:
                try:
                    deadline = time.monotonic() + READ_SECONDS
                    request = LineReader(client).read(REQUEST_MAX, deadline)
                except (OSError, ValueError):
                    return  # too slow, too long or not JSON: no answer
                token = request.get("token")
                if not isinstance(token, str) or not hmac.compare_digest(
                    token.encode("utf-8", "replace"), self.token.encode("utf-8")
                ):
                    return  # not from this user's brain: no answer at all
                client.settimeout(READ_SECONDS)
                send_line(client, {"ack": PROTOCOL})  # alive, whatever the answer costs
                try:
                    reply = self.handle(request)
                except Exception as exc:  # one bad request must not kill the worker
                    reply = {"error": f"{type(exc).__name__}: {exc}"}
                send_line(client, reply)
        except OSError:
            return  # the find gave up waiting
        finally:
            with self.cond:
                self.clients -= 1
                self.last = time.monotonic()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        from brain import index, semantic

        if request.get("protocol") != PROTOCOL:
            return {"error": f"protocol {request.get('protocol')!r} is not {PROTOCOL}"}
        op = request.get("op")
        if op != "neighbours":
            return {"error": f"unknown op {op!r}"}
        if request.get("vault") != str(self.vault):
            return {"error": "this worker serves another vault"}
        text, k = str(request["text"]), int(request["k"])
        if not 1 <= k <= 10_000:
            return {"error": f"k={k} is not between 1 and 10000"}
        conn = index.connect(self.vault)
        try:
            busy = self._wait_ready(index.built(conn))
            if busy:
                return {"busy": busy}
            with self.query:
                # One read snapshot: the build checked is the build whose vectors are searched.
                conn.execute("BEGIN")
                if index.built(conn) != self.ready or self.embedder is None:
                    return {"busy": "the vault is being embedded in the background"}
                hits = semantic.search(conn, self.embedder, text, k, str(self.vault))
                conn.execute("COMMIT")
                return {"hits": hits}
        finally:
            conn.close()

    def _wait_ready(self, built: str) -> str:
        """'' once every unit of `built` has a vector (waiting up to EMBED_WAIT for a few new
        ones); else what the worker is busy with."""
        with self.cond:
            if self.failed is not None:
                return "the background worker stopped"
            if self.embedder is None:
                return "the embedding model is loading in the background"
            if self.ready != built:
                self.wake.set()
                self.cond.wait_for(lambda: self.ready == built, timeout=EMBED_WAIT)
            if self.ready == built:
                return ""
            done, total = self.progress
            counts = f" ({done} of {total} texts)" if total else ""
            return f"the vault is being embedded in the background{counts}"

    def _background(self) -> None:
        from brain import index, semantic

        try:
            embedder = semantic.load()
            if embedder is None:
                self._fail("")  # semantic.load said why on stderr
                return
            with self.cond:
                self.embedder = embedder
            conn: sqlite3.Connection = index.open_index(self.vault)
            while True:
                self.wake.clear()
                try:
                    built = index.built(conn)
                    semantic.update(conn, embedder, self._progress)
                    # Load the vectors and run the model once now, not in a find's deadline.
                    semantic.search(conn, embedder, "warm up", 1, str(self.vault))
                finally:
                    conn.close()
                with self.cond:
                    self.ready, self.progress, self.embedding = built, (0, 0), False
                    self.cond.notify_all()
                self.wake.wait()
                self.embedding = True
                conn = index.connect(self.vault)  # reopened: a rebuild may have replaced it
        except Exception as exc:
            self._fail(f"{type(exc).__name__}: {exc}")

    def _progress(self, done: int, total: int) -> None:
        self.progress = (done, total)

    def _fail(self, why: str) -> None:
        with self.cond:
            self.failed = why
            self.cond.notify_all()


def serve(vault: Path, idle: float = IDLE_SECONDS) -> int:
    """Run the worker for `vault` until it has been idle for `idle` seconds."""
    import secrets

    base = _base(vault)
    why = check_dir(base.parent)
    if why:
        sys.stderr.write(f"brain: {why}\n")
        return 1
    lock = _lock(base, wait=2.0)
    if lock is None:
        return 0  # another worker serves this vault
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():  # `kill PID` cleans up too
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    code = 1
    try:
        for suffix in (".sock", ".json"):  # stale: we hold the lock, so no live worker owns them
            with contextlib.suppress(FileNotFoundError):
                _suffix(base, suffix).unlink()
        server, port = _listen(base)
        worker = _Worker(vault, secrets.token_hex(16))
        record = {"protocol": PROTOCOL, "pid": os.getpid(), "port": port, "token": worker.token}
        _write_record(base, record)
        with server:
            code = worker.run(server, idle)
        return code
    except SystemExit:
        code = 0  # stopped on purpose
        raise
    finally:
        cleanup = (".sock", ".json", ".log") if code == 0 else (".sock", ".json")
        for suffix in cleanup:  # a clean exit leaves nothing to report
            with contextlib.suppress(FileNotFoundError):
                _suffix(base, suffix).unlink()
        lock.close()


def main(argv: list[str]) -> NoReturn:
    idle = float(os.environ.get("BRAIN_WORKER_IDLE", IDLE_SECONDS))
    try:
        code = serve(Path(argv[0]), idle)
    except SystemExit as exc:  # SIGTERM
        code = exc.code if isinstance(exc.code, int) else 0
    sys.stderr.flush()
    # No interpreter shutdown: it would stop the embedding thread inside the ONNX runtime, which
    # aborts ("terminate called without an active exception") and reads as a failure.
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
