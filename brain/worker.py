"""The worker: a warm process per vault for the vector half of `brain find` and for the commands
the thin client forwards (brain/thin.py).

A fresh `brain find` would pay ~100 ms for numpy and ~300 ms to build the ONNX session before its
first query, every time. The first hybrid find starts this worker in the background (and answers
in-process meanwhile); later finds send it the query over a local socket and get the nearest units
back, so the find process itself never imports numpy or the model. The worker holds the model and
the vectors, embeds units that changed since the last reindex, and exits after some idle minutes.
Results are the same with or without it: both call `semantic.search`.

This module is the worker's side: serving, the file-system watch, running forwarded commands.
Finding, asking, starting and stopping a worker from outside is brain/worker_client.py's, which
this module imports and nothing it serves imports back.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from brain import worker_client
from brain.deadline import prime_seconds
from brain.settings import Settings, using
from brain.stdin import PRIME_STDIN_MAX
from brain.text import plural, say
from brain.wire import HEARTBEAT, PAYLOAD_MAX, PROTOCOL, SILENCE
from brain.worker_client import (
    UNIX,
    LineReader,
    base_of,
    check_dir,
    send_line,
    take_lock,
    with_suffix,
)

if TYPE_CHECKING:
    import ctypes
    import sqlite3

    from brain.embed import Embedder

IDLE_SECONDS = 600.0
READ_SECONDS = 1.0  # the worker's limit on the time one request may take to arrive
REQUEST_MAX = 64 * 1024  # bytes of one request line
EMBED_WAIT = 0.1  # a query waits this long for the worker to embed a few changed units
MAX_CLIENTS = 16  # connections served at once; more are closed unanswered
COMMAND_WAIT = 1.0  # a forwarded command waits this long for the one before it (else in-process)
QUERIES_KEPT = 256  # query vectors the worker keeps (_Remembered)


# --- the worker's socket and record --------------------------------------------------------------


def _listen(base: Path) -> tuple[socket.socket, int]:
    if UNIX:
        path = with_suffix(base, ".sock")
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
    tmp = with_suffix(base, ".json.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(doc))
    tmp.replace(with_suffix(base, ".json"))


# --- freshness: a file-system watch instead of a walk per command ---------------------------------

# inotify(7): any change to a file's content, times or name, or to a folder's entries
_IN_EVENTS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
_IN_NONBLOCK_CLOEXEC = 0o4000 | 0o2000000


class _Watch:
    """Tells index.open_index that a vault has not changed since index.is_stale last found the
    index fresh, so that a command skips the walk and the stat of every file: inotify on every
    folder the index walks (Linux). Any event, a new folder, an overflowed queue or a failure means
    one full check, as a fresh process makes; elsewhere every check is the full one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fds: dict[Path, int] = {}  # vault -> inotify descriptor (-1: cannot watch)
        self.clean: set[Path] = set()  # vaults found fresh with no event since
        self.libc: ctypes.CDLL | None = None

    def stale(self, conn: sqlite3.Connection, vault: Path) -> bool:
        from brain import index

        with self.lock:
            if self._quiet(vault):
                return False
            stale = index.is_stale(conn, vault)
            if not stale and self.fds.get(vault, -1) >= 0:
                self.clean.add(vault)
            return stale

    def _quiet(self, vault: Path) -> bool:
        """No event since the vault was found fresh; pending events are drained (and new folders
        watched) whatever the answer."""
        fd = self.fds.get(vault)
        if fd is None:
            fd = self.fds[vault] = self._start(vault)
            return False
        if fd < 0:
            return False
        moved = False
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self._stop(vault)
                return False
            moved = True
        if moved:
            self.clean.discard(vault)
            if not self._add_folders(vault, fd):
                self._stop(vault)
            return False
        return vault in self.clean

    def _start(self, vault: Path) -> int:
        if sys.platform != "linux":
            return -1
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(_IN_NONBLOCK_CLOEXEC))
        except (OSError, AttributeError):
            return -1
        if fd < 0:
            return -1
        self.libc = libc
        if not self._add_folders(vault, fd):
            os.close(fd)
            return -1
        return fd

    def _add_folders(self, vault: Path, fd: int) -> bool:
        """Watch the vault and every folder the index walks (not hidden, not a link); False when
        the system refuses one (the watch limit): then the full check is made every time."""
        libc = self.libc
        if libc is None:
            return False
        stack = [str(vault)]
        while stack:
            folder = stack.pop()
            if libc.inotify_add_watch(fd, os.fsencode(folder), _IN_EVENTS) < 0:
                return False
            with contextlib.suppress(OSError), os.scandir(folder) as it:
                for entry in it:
                    hidden = entry.name.startswith(".")
                    if not hidden and entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        return True

    def _stop(self, vault: Path) -> None:
        fd = self.fds.get(vault, -1)
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds[vault] = -1
        self.clean.discard(vault)


# --- commands the thin client forwards -----------------------------------------------------------


class _Job:
    """One forwarded command, as checked: argv, environment, cwd, which of stdin, stdout and stderr
    are terminals (1), not (0) or closed (-1), and their encodings."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: str,
        tty: tuple[int, int, int],
        enc: tuple[str, str, str],
        started: float,
        stdin: bytes | None = None,
    ) -> None:
        self.argv, self.tty, self.enc = argv, tty, enc
        self.stdin = stdin  # sent with the request (prime's event), else asked for when read
        # The client's environment and folder, passed down to the command as its settings: the
        # worker's own (os.environ, its cwd), which every other request reads, never change.
        self.settings = Settings(env, cwd)
        self.started = started  # the client's start on this clock: prime's deadline counts from it


def _job(doc: object) -> _Job | None:
    """The request as a _Job, or None when any part has the wrong type or an unknown codec."""
    import codecs

    received = time.monotonic()
    if not isinstance(doc, dict):
        return None
    spent = doc.get("spent")  # seconds since the client started: prime's deadline counts them
    if not isinstance(spent, float) or not 0.0 <= spent < float("inf"):
        spent = 0.0
    argv, env, cwd, tty, enc = (doc.get(k) for k in ("argv", "env", "cwd", "tty", "enc"))
    strings = (list, tuple)
    if not isinstance(argv, strings) or not all(isinstance(a, str) for a in argv) or not argv:
        return None
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        return None
    if not isinstance(cwd, str) or not Path(cwd).is_absolute():
        return None
    if not isinstance(tty, strings) or len(tty) != 3 or any(t not in (-1, 0, 1) for t in tty):
        return None
    if not isinstance(enc, strings) or len(enc) != 3 or not all(isinstance(e, str) for e in enc):
        return None
    try:
        for name in enc:
            codecs.lookup(name)
    except LookupError:
        return None
    stdin = doc.get("stdin")
    if stdin is not None and (not isinstance(stdin, bytes) or len(stdin) > PRIME_STDIN_MAX):
        return None
    ttys, encs = (tty[0], tty[1], tty[2]), (enc[0], enc[1], enc[2])
    return _Job(list(argv), dict(env), cwd, ttys, encs, received - spent, stdin)


class _Sink(io.RawIOBase):
    """A command's stdout or stderr: each write kept as (fd, bytes), in the order written, so the
    client replays them interleaved as they were."""

    def __init__(self, chunks: list[tuple[int, bytes]], fd: int, tty: bool) -> None:
        super().__init__()
        self.chunks, self.fd, self.tty = chunks, fd, tty

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.chunks.append((self.fd, bytes(data)))
        return len(data)

    def isatty(self) -> bool:
        return self.tty


class _Stdin:
    """A command's stdin: a terminal or not as the client's is; its bytes are fetched from the
    client only when the command reads them, into a pipe (so that select and os.read work too)."""

    def __init__(self, fetch: Any, tty: bool, encoding: str) -> None:
        self.fetch, self.tty, self.encoding = fetch, tty, encoding
        self.file: io.TextIOWrapper | None = None

    def isatty(self) -> bool:
        return self.tty

    def _open(self) -> io.TextIOWrapper:
        if self.file is None:
            data: bytes = self.fetch()
            read, write = os.pipe()
            # What fits in the pipe (a hook's event, 64 KiB on Linux) is written now; a thread
            # feeds only the rest: starting one cost each warm prime ~1 ms.
            os.set_blocking(write, False)
            try:
                sent = os.write(write, data) if data else 0
            except BlockingIOError:
                sent = 0
            os.set_blocking(write, True)
            rest = data[sent:]
            if rest:

                def feed() -> None:
                    with contextlib.suppress(OSError), os.fdopen(write, "wb") as out:
                        out.write(rest)

                threading.Thread(target=feed, daemon=True).start()
            else:
                os.close(write)
            self.file = os.fdopen(read, encoding=self.encoding)
        return self.file

    def fileno(self) -> int:
        return self._open().fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._open(), name)

    def close(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.close()
            self.file = None


class _Local:
    """sys.stdin/stdout/stderr of the worker: the command's own streams in the thread running a
    command, the worker's elsewhere (the embedding thread's warnings go to its log)."""

    def __init__(self, name: str, default: Any) -> None:
        self._name, self._default = name, default

    def _current(self) -> Any:
        return getattr(_STREAMS, self._name, self._default)

    def write(self, text: str) -> int:
        return int(self._current().write(text))

    def flush(self) -> None:
        self._current().flush()

    def isatty(self) -> bool:
        return bool(self._current().isatty())

    def fileno(self) -> int:
        return int(self._current().fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current(), name)


def _install_streams() -> None:
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, name, _Local(name, getattr(sys, name)))


_STREAMS = threading.local()


class _Command:
    """Runs one forwarded command in this thread as brain.cli would in a fresh process: with the
    client's argv, environment, cwd and streams (a heartbeat line every HEARTBEAT seconds
    tells the client it is still running)."""

    def __init__(self, client: socket.socket, lines: LineReader, job: _Job) -> None:
        self.client, self.lines, self.job = client, lines, job
        self.later: list[Callable[[], None]] = []  # calls deferred until after the answer
        self.sending = threading.Lock()
        self.done = threading.Event()

    def _beat(self) -> None:
        while not self.done.wait(HEARTBEAT):
            with self.sending, contextlib.suppress(OSError):
                self.client.sendall(b"\n")

    def _stdin(self) -> bytes:
        """The client's stdin, asked for now that the command reads it; empty when the client
        left (prime past its deadline): the command's answer then goes nowhere."""
        if self.job.stdin is not None:
            return self.job.stdin
        try:
            with self.sending:
                self.client.sendall(b'{"stdin": 1}\n')
            deadline = time.monotonic() + 30.0
            size = self.lines.number(deadline)
            if not 0 <= size <= PRIME_STDIN_MAX:
                return b""
            return self.lines.exact(size, deadline)
        except (OSError, ValueError):
            return b""

    def run(self) -> tuple[int, list[tuple[int, bytes]]] | None:
        """(exit code, output chunks), or None when the arguments need Typer."""
        from brain import cli

        job = self.job
        chunks: list[tuple[int, bytes]] = []
        sinks: list[Any] = [_Sink(chunks, 1, job.tty[1] == 1), _Sink(chunks, 2, job.tty[2] == 1)]
        out = io.TextIOWrapper(
            sinks[0],
            encoding=job.enc[1],
            errors="backslashreplace",
            write_through=True,
        )
        err = io.TextIOWrapper(
            sinks[1],
            encoding=job.enc[2],
            errors="backslashreplace",
            write_through=True,
        )
        stdin = _Stdin(self._stdin, job.tty[0] == 1, job.enc[0]) if job.tty[0] >= 0 else None
        beat = threading.Thread(target=self._beat, daemon=True)
        beat.start()
        try:
            with using(job.settings):
                _STREAMS.stdin, _STREAMS.stdout, _STREAMS.stderr = stdin, out, err
                _STREAMS.later, _STREAMS.started = self.later, job.started
                try:
                    code = cli.execute(job.argv, typer=False, settings=job.settings)
                except cli.NotFast:
                    return None
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                out.flush()
                err.flush()
                return code, chunks
        except (OSError, ValueError):
            return None  # the client runs it itself
        finally:
            self.done.set()
            with self.sending:  # no heartbeat after this point
                pass
            for name in ("stdin", "stdout", "stderr", "later", "started"):
                with contextlib.suppress(AttributeError):
                    delattr(_STREAMS, name)
            if stdin is not None:
                stdin.close()

    def finish(self) -> None:
        """What the command left for after its answer (the usage log's row), as the client."""
        with contextlib.suppress(OSError, ValueError), using(self.job.settings):
            for call in self.later:
                call()


def _prime_gate() -> Any:
    """Prime's deadline for a command this worker runs: counted from its client's start, and
    with no watchdog (a process's own would end the worker); the client stops waiting at it."""
    from brain.deadline import Gate

    started = getattr(_STREAMS, "started", time.monotonic())
    return Gate(started + prime_seconds(), watchdog=False)


def _defer_usage() -> None:
    """In the worker, a command's usage row is written after its answer is sent: the row is
    the same, and the client does not wait on the log's SQLite connection and write."""
    from brain import usage

    record = usage.record

    def later(*args: Any, **kwargs: Any) -> None:
        queue = getattr(_STREAMS, "later", None)
        if queue is None:
            record(*args, **kwargs)
        else:
            queue.append(functools.partial(record, *args, **kwargs))

    usage.record = later


class _Worker:
    """Serves queries on the main thread (one short thread per connection) while a background
    thread loads the model and embeds whatever the index's newest build lacks."""

    def __init__(self, vault: Path, token: str, base: Path | None = None) -> None:
        self.vault, self.token = vault, token
        self.base = base or base_of(vault)
        self.command = threading.Lock()  # one command at a time: they share modules' state
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
        self.thread.start()
        server.settimeout(max(0.05, min(1.0, idle)))
        while True:
            try:
                client, _ = server.accept()
            except TimeoutError:
                if self.failed is not None:
                    if self.failed:
                        say(self.failed)
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
                lines = LineReader(client)
                try:
                    deadline = time.monotonic() + READ_SECONDS
                    request = lines.read(REQUEST_MAX, deadline)
                except (OSError, ValueError):
                    return  # too slow, too long or not JSON: no answer
                token = request.get("token")
                if not isinstance(token, str) or not hmac.compare_digest(
                    token.encode("utf-8", "replace"), self.token.encode("utf-8")
                ):
                    return  # not from this user's brain: no answer at all
                client.settimeout(READ_SECONDS)
                send_line(client, {"ack": PROTOCOL})  # alive, whatever the answer costs
                if request.get("op") == "run" and request.get("protocol") == PROTOCOL:
                    self._run(client, lines, request)
                    return
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
                near = semantic.nearest(conn, self.embedder, text, k, str(self.vault))
                conn.execute("COMMIT")
                return {"hits": near.hits, "general": near.general}
        finally:
            conn.close()

    def _run(self, client: socket.socket, lines: LineReader, request: dict[str, Any]) -> None:
        """Run a command the thin client forwarded (brain/thin.py) and send back its exit code
        and output; a line that declines when it is not this worker's to run."""
        import marshal

        size = request.get("size")
        if not isinstance(size, int) or not 0 <= size <= PAYLOAD_MAX + PRIME_STDIN_MAX:
            return
        try:
            # marshal only past the token check: the sender is this user's brain (thin.py)
            payload = lines.exact(size, time.monotonic() + READ_SECONDS)
            job = _job(marshal.loads(payload))  # noqa: S302
        except (OSError, ValueError, EOFError, TypeError):
            return
        if job is None:
            client.sendall(b'{"decline": "a malformed request"}\n')
            return
        if not self.command.acquire(timeout=COMMAND_WAIT):
            client.sendall(b'{"busy": "another command is running"}\n')
            return
        command = _Command(client, lines, job)
        try:
            outcome = command.run()
            if outcome is None:
                client.sendall(b'{"decline": "not for the fast path"}\n')
                return
            blob = marshal.dumps(outcome)
            client.settimeout(SILENCE)
            client.sendall(b'{"done": %d}\n' % len(blob) + blob)
        finally:
            command.finish()
            self.command.release()

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
            counts = f" ({done} of {plural(total, 'text')})" if total else ""
            return f"the vault is being embedded in the background{counts}"

    def _background(self) -> None:
        from brain import index, semantic
        from brain.embed import release_memory

        try:
            if semantic.embed_settings()[0] == "none":  # keyword-only: commands, no model
                with self.cond:
                    self.embedding = False
                return
            loaded = semantic.load()
            if loaded is None:
                self._fail("")  # semantic.load said why on stderr
                return
            fold = getattr(loaded, "fold_weights", None)  # onnx: queries cost a third from now on
            if fold is not None:
                fold()
            embedder: Embedder = _Remembered(loaded)
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
                    release_memory()  # what loading and embedding freed: the worker stays
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


class _Remembered:
    """The worker's embedder, keeping the vectors of the last QUERIES_KEPT queries it embedded:
    an agent asks the same again (a retry, the same question from another session), and a
    query's vector is the same bits every time, so the answer is too."""

    def __init__(self, embedder: Embedder) -> None:
        self.inner = embedder
        self.kept: dict[str, Any] = {}  # query -> its (1, dim) vectors, oldest first
        self.lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> Any:
        if not query or len(texts) != 1:
            return self.inner.embed(texts, batch_size=batch_size, query=query)
        with self.lock:
            vectors = self.kept.pop(texts[0], None)
        if vectors is None:
            vectors = self.inner.embed(texts, batch_size=batch_size, query=True)
            vectors.flags.writeable = False  # shared by every later ask of the same query
        with self.lock:
            self.kept[texts[0]] = vectors
            while len(self.kept) > QUERIES_KEPT:
                del self.kept[next(iter(self.kept))]
        return vectors


def serve(vault: Path, idle: float = IDLE_SECONDS) -> int:
    """Run the worker for `vault` until it has been idle for `idle` seconds."""
    import secrets

    base = base_of(vault)
    why = check_dir(base.parent)
    if why:
        say(why)
        return 1
    lock = take_lock(base, wait=2.0)
    if lock is None:
        return 0  # another worker serves this vault
    import signal

    if threading.current_thread() is threading.main_thread():  # `kill PID` cleans up too
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    code = 1
    try:
        for suffix in (".sock", ".json"):  # stale: we hold the lock, so no live worker owns them
            with contextlib.suppress(FileNotFoundError):
                with_suffix(base, suffix).unlink()
        server, port = _listen(base)
        worker = _Worker(vault, secrets.token_hex(16), base)
        worker_client.serving = (base, worker.handle)
        _install_streams()
        _defer_usage()
        from brain import run as runmod

        runmod.prime_gate = _prime_gate
        from brain import index

        index.stale_check = _Watch().stale
        record = {
            "protocol": PROTOCOL,
            "pid": os.getpid(),
            "port": port,
            "token": worker.token,
        }
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
                with_suffix(base, suffix).unlink()
        lock.close()


def main(argv: list[str]) -> NoReturn:
    from brain.settings import current

    idle, why = current().worker_idle(IDLE_SECONDS)
    if why:  # on stderr, the worker's log; a bad value must not keep the worker from serving
        say(why)
    try:
        code = serve(Path(argv[0]), idle)
    except SystemExit as exc:  # SIGTERM
        code = exc.code if isinstance(exc.code, int) else 0
    sys.stderr.flush()
    # No interpreter shutdown: it would stop the embedding thread inside the ONNX runtime, which
    # aborts ("terminate called without an active exception") and reads as a failure.
    os._exit(code)


if __name__ == "__main__":
    # Run as brain.worker, not as __main__: one copy of the module's state (_STREAMS, which every
    # command's output goes through) should anything the worker runs import brain.worker.
    import importlib

    importlib.import_module("brain.worker").main(sys.argv[1:])
