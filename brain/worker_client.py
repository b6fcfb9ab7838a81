"""The worker from outside (brain/worker.py is the worker itself): where it lives, asking it for
the vector half of a find, and starting, replacing and stopping it. Imported by find, prime,
install (stop_all) and the thin client once it has answered; it imports nothing that runs a
command, so it closes no import cycle.

A find never waits on the worker for long: the worker listens before it loads the model and
embeds in a thread, so it answers at once, with the neighbours or with `busy` (the find then
answers from keywords and says so). It acknowledges each request before working on it; one that
has not done so DEADLINE after the connect (stopped, wedged) is killed by the pid it recorded and
replaced, and a live one slower than ANSWER_SECONDS (a machine under load) leaves that find to
keywords.

Transport: one request and one reply per connection, each one line of JSON, bounded in size and
in the time it may take to arrive. A Unix socket (loopback TCP where the platform has none) in a
folder that must belong to this user and be closed to others (0700): `$XDG_RUNTIME_DIR/brain`,
else the state dir's `run/`, else, when that path is too long for a socket, `$TMPDIR/brain-<uid>`;
any other folder is refused. Every request carries the worker's token, a secret it writes with its
pid (and port) to a 0600 file beside the socket; a request without it gets no answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import config, files
from brain.settings import current
from brain.wire import CONNECT_TIMEOUT, DEADLINE, PROTOCOL, run_dirs, worker_name
from brain.wire import run_dir as pick_run_dir

ANSWER_SECONDS = 2.0  # after the connect; a live worker slower than this leaves keywords alone
REPLY_MAX = 16 * 1024 * 1024  # bytes of one reply line
STARTING_SECONDS = 30.0  # a worker not listening this long after its spawn is not waited for
FAILED_BACKOFF = 600.0  # after a worker failed to start, do not respawn for this long
INLINE_EMBED_MAX = 64  # units a find embeds itself; more is left to the worker or a reindex
UNIX = hasattr(socket, "AF_UNIX")

# In the worker process: its files' base and its handler of requests, so that a command it runs
# asks it directly rather than over its own socket (brain.worker.serve sets this).
serving: tuple[Path, Callable[[dict[str, Any]], dict[str, Any]]] | None = None


@dataclass(frozen=True)
class Answer:
    """What asking the worker came to: its neighbours, or what the find does instead."""

    hits: list[tuple[int, float]] | None = None
    general: float | None = None  # search.Near.general
    inline: bool = True  # without hits: compute them in this process (False: keywords only)
    note: str = ""  # one line for stderr
    background: bool = True  # a worker runs or is starting, and will embed what is missing


# --- where the worker lives ----------------------------------------------------------------------


def run_dir() -> Path:
    """The folder for the worker's socket and files: the first of brain.wire.run_dirs() short enough
    for a Unix socket (the thin client picks by the same rule), else the last (the worker then
    fails to bind and says why). Windows has no Unix socket: `$XDG_RUNTIME_DIR/brain` or the
    state dir's `run/`."""
    if not UNIX:
        runtime = current().env.get("XDG_RUNTIME_DIR", "")
        if runtime and Path(runtime).is_absolute():
            return Path(runtime) / "brain"
        return config.state_dir() / "run"
    return Path(pick_run_dir() or run_dirs()[-1])


def base_of(vault: Path) -> Path:
    """The worker's files, less their suffix: named by brain.wire.worker_name, as the thin client
    names them without importing anything else."""
    return run_dir() / worker_name(str(vault))


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
    if UNIX:
        if st.st_uid != os.getuid():
            return f"{folder} belongs to another user (uid {st.st_uid})"
        if stat.S_IMODE(st.st_mode) != 0o700:
            return f"{folder} has mode {stat.S_IMODE(st.st_mode):o}, not 700"
    return ""


def with_suffix(base: Path, suffix: str) -> Path:
    return base.with_name(base.name + suffix)


def read_record(base: Path) -> dict[str, Any] | None:
    """The running worker's pid, token and port, as it wrote them when it started listening."""
    try:
        doc = json.loads(with_suffix(base, ".json").read_bytes())
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

    def _more(self, deadline: float, late: str, size: int = 65536) -> None:
        """Receive what the peer sent next; TimeoutError (saying `late`) past the deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(late)
        self.sock.settimeout(left)
        chunk = self.sock.recv(size)
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        self.buf += chunk

    def read(self, limit: int, deadline: float) -> dict[str, Any]:
        scanned = 0
        while (end := self.buf.find(b"\n", scanned)) < 0:
            if len(self.buf) > limit:
                raise ValueError(f"a line longer than {limit} bytes")
            scanned = len(self.buf)
            self._more(deadline, "no complete line in time")
        if end > limit:
            raise ValueError(f"a line longer than {limit} bytes")
        line = bytes(self.buf[:end])
        del self.buf[: end + 1]
        doc = json.loads(line)
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        return doc

    def exact(self, n: int, deadline: float) -> bytes:
        """The next `n` bytes, as they follow a line."""
        while len(self.buf) < n:
            self._more(deadline, "not all the bytes in time", max(65536, n - len(self.buf)))
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def number(self, deadline: float) -> int:
        """A line that holds a decimal count (the thin client's length prefix)."""
        while (end := self.buf.find(b"\n")) < 0:
            if len(self.buf) > 32:
                raise ValueError("not a count")
            self._more(deadline, "no count in time")
        text = bytes(self.buf[:end])
        del self.buf[: end + 1]
        return int(text)


# --- the find's side -----------------------------------------------------------------------------


def ask(vault: Path, text: str, k: int, answer_seconds: float = ANSWER_SECONDS) -> Answer:
    """The worker's nearest units for `text`, or what to do without them. Starts a worker when
    none runs and replaces one that does not acknowledge within DEADLINE; a live one gets
    `answer_seconds` after the connect to answer (`brain prime` has less time than `find`)."""
    base = base_of(vault)
    request = {"protocol": PROTOCOL, "op": "neighbours", "vault": str(vault), "text": text, "k": k}
    if serving is not None and serving[0] == base:  # a command this worker runs: no socket
        return _answer(serving[1](request))
    why = check_dir(base.parent)
    if why:
        note = f"no background worker: {why}; remove it or set XDG_RUNTIME_DIR to a private folder"
        return Answer(note=note, background=False)
    record = read_record(base)
    if record is None:
        return _absent(vault, base)
    try:
        sock = _connect(base, record)
    except (OSError, ValueError, TypeError):
        return _absent(vault, base)
    with sock:
        request["token"] = record["token"]
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
    return _answer(reply)


def _answer(reply: dict[str, Any]) -> Answer:
    hits, busy, general = reply.get("hits"), reply.get("busy"), reply.get("general")
    if isinstance(hits, list):
        try:
            near = [(int(uid), float(cos)) for uid, cos in hits]
            return Answer(hits=near, general=None if general is None else float(general))
        except (TypeError, ValueError):
            return Answer()
    if isinstance(busy, str):
        return Answer(inline=False, note=f"keyword results for now: {busy}")
    return Answer()


def _connect(base: Path, record: dict[str, Any]) -> socket.socket:
    if UNIX:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(with_suffix(base, ".sock")))
        except OSError:
            sock.close()
            raise
        return sock
    return socket.create_connection(("127.0.0.1", int(record["port"])), timeout=CONNECT_TIMEOUT)


def _absent(vault: Path, base: Path) -> Answer:
    """No worker answers: wait for one that is starting, say (once) why the last one could not
    start, or start one and answer in this process meanwhile."""
    log = with_suffix(base, ".log")
    lock = take_lock(base)
    if lock is None:  # a worker process holds it but is not listening yet
        with contextlib.suppress(OSError):
            if time.time() - log.stat().st_mtime < STARTING_SECONDS:
                note = "keyword results for now: the background worker is starting"
                return Answer(inline=False, note=note)
        return Answer()  # wedged before it listened: answer without it
    lock.close()
    reason = _failure(log, with_suffix(base, ".failed"))
    if reason:
        minutes = FAILED_BACKOFF / 60
        note = f"the background worker failed: {reason} (next try in {minutes:g} minutes)"
        return Answer(note=note, background=False)
    if _held:  # a command's own: started when it has answered (starts_held)
        if _backing_off(base):
            return Answer(background=False)
        if (vault, base) not in _held[-1]:
            _held[-1].append((vault, base))
        return Answer()
    return Answer(background=spawn(vault, base))


# The workers the commands running in this process would start, innermost last (starts_held).
_held: list[list[tuple[Path, Path]]] = []


@contextlib.contextmanager
def starts_held() -> Iterator[None]:
    """Within: a worker a find would start (none runs) is started as the command ends, once its
    output is flushed. Started at once, the worker loads its model beside the find's own: on 2
    loaded cores (load 8) the cold first find took 1.37 s instead of 0.99."""
    _held.append([])
    try:
        yield
    finally:
        todo = _held.pop()
        try:
            if todo:
                sys.stdout.flush()  # the answer first (a broken pipe goes on to brain.cli)
        finally:
            for vault, base in todo:
                spawn(vault, base)


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


def start(vault: str) -> None:
    """Start a worker for `vault` unless one runs, is starting or failed lately (the thin client
    calls this once it has answered in-process: the next call finds the worker)."""
    with contextlib.suppress(Exception):  # a broken brain.yaml: the command said so already
        path = Path(vault)
        base = base_of(path)
        if check_dir(base.parent):
            return
        with contextlib.suppress(OSError):
            if time.time() - with_suffix(base, ".log").stat().st_mtime < STARTING_SECONDS:
                return  # spawned lately (by this very find, say): it is starting or it failed
        lock = take_lock(base)
        if lock is None:
            return
        lock.close()
        _failure(with_suffix(base, ".log"), with_suffix(base, ".failed"))  # starts the back-off
        spawn(path, base)


def replace(vault: str, pid: int) -> None:
    """Kill the worker `pid` that did not answer the thin client in time, if it is still the
    vault's worker (a find may have replaced it already), and start another."""
    with contextlib.suppress(Exception):
        path = Path(vault)
        base = base_of(path)
        record = read_record(base)
        if record is None or record.get("pid") != pid:
            return
        with _connect(base, record) as sock:
            _replace(path, base, record, sock)


def spawn(vault: Path, base: Path | None = None) -> bool:
    """Start a worker for `vault` in the background (its stderr kept in a log, so that a start
    that fails can say why). False when the back-off after a failure holds it back."""
    base = base or base_of(vault)
    if _backing_off(base):
        return False
    from brain.process import start_detached  # only here: a live worker's find never pays

    try:
        log = os.open(with_suffix(base, ".log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return False
    try:
        return start_detached(config.python_command("brain.worker", str(vault)), stderr=log)
    finally:
        os.close(log)


# --- the lock and stopping workers ---------------------------------------------------------------


def _backing_off(base: Path) -> bool:
    """A worker failed to start lately (FAILED_BACKOFF): none is started until then."""
    try:
        return time.time() - with_suffix(base, ".failed").stat().st_mtime < FAILED_BACKOFF
    except OSError:
        return False


def take_lock(base: Path, wait: float = 0.0) -> files.Held | None:
    """An exclusive lock so that two finds starting workers at once end with one worker; `wait`
    seconds for one that is exiting (just killed) to let go."""
    return files.hold(with_suffix(base, ".lock"), wait)


def stop_all(vaults: Iterable[Path] = ()) -> list[int]:
    """Stop this user's workers (those of `vaults`, and any in the run folder): each by the pid
    it recorded, and only while it still holds its lock, so a pid the system has reused is never
    hit."""
    import signal

    folders = {run_dir()}
    for vault in vaults:
        with contextlib.suppress(Exception):  # a broken brain.yaml must not stop an uninstall
            folders.add(base_of(vault).parent)
    stopped = []
    for folder in sorted(folders):
        for lock_file in sorted(folder.glob("worker-*.lock")):
            base = lock_file.with_name(lock_file.name.removesuffix(".lock"))
            free = take_lock(base)
            if free is not None:  # nobody holds it: no worker behind this file
                free.close()
                continue
            record = read_record(base)
            pid = record.get("pid") if record else None
            if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
                continue
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
                stopped.append(pid)
    return stopped
