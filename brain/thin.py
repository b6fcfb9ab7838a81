"""The thin client: `brain` as agents and hooks call it, answered by the warm worker.

A fresh `brain find` spends most of its time importing (typing, dataclasses, re, brain's modules)
and checking the vault before any work. For the commands in FORWARD this module, which imports only
builtin modules (`_socket`, `marshal`, `select`) and the package's helpers (brain/wire.py: the
wire's limits, the worker's name; brain/stdin.py, brain/deadline.py, brain/xdg.py), finds the
vault's worker (brain/worker.py), sends it the command as it stands (argv, cwd, the environment,
which of stdin/stdout/stderr are terminals) and writes back what the worker's run of the very same
code wrote to stdout and stderr, in order, and exits with its code. stdin goes over only when the
command reads it (the worker asks).

Anything else runs in this process as before (`brain.cli.main`): another command, no worker (one is
started for next time), a worker that does not acknowledge within DEADLINE (it is replaced), is busy
with another command, or declines (arguments only Typer handles). The output is the same either
way; tests/test_thin.py compares the two byte for byte. The worker is found by a name made of the
vault, BRAIN_EMBED, brain.yaml's size and time, the installation and brain's version (worker_name),
so a change of settings reaches a new worker.
"""

from __future__ import annotations

import os
import sys
import time

from brain.deadline import STARTED, prime_deadline, process_gate, process_gate_made
from brain.settings import current
from brain.stdin import PRIME_STDIN_MAX, keep, read_stdin
from brain.wire import (
    CONNECT_TIMEOUT,
    DEADLINE,
    PAYLOAD_MAX,
    PROTOCOL,
    SILENCE,
    run_dir,
    worker_name,
)
from brain.xdg import xdg_dir

# The commands the worker runs; adding one is one entry (its fast path must be in brain.cli).
FORWARD = ("find", "pack", "prime", "reindex")
REPLY_MAX = 64 * 1024 * 1024  # bytes of one command's output


def guess_vault(args: list[str]) -> str | None:
    """The vault the command names (`--vault`), else BRAIN_VAULT, else the recorded one, as an
    absolute path; None when that takes more than a glance (the worker checks it anyway)."""
    raw = None
    it = iter(args[1:])
    for arg in it:
        if arg == "--":
            break
        if arg == "--vault":
            raw = next(it, None)
        elif arg.startswith("--vault="):
            raw = arg[8:]
    if not raw:
        raw = current().vault or None
    if not raw:
        config = xdg_dir("config")
        if config is None:
            return None
        try:
            with open(os.path.join(config, "vault"), encoding="utf-8") as fh:
                raw = fh.read().strip()
        except (OSError, ValueError):
            return None
    if not raw:
        return None
    return os.path.realpath(os.path.expanduser(raw))


def _private(folder: str) -> bool | None:
    """Whether `folder` is this user's and closed to others (0700), as brain.worker_client.check_dir
    demands: another user's folder could read the commands and forge the answers. None when it
    does not exist (yet: the first worker makes it)."""
    import stat

    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
    )


def _tty(stream: object) -> int:
    """1 a terminal, 0 not, -1 no such stream (closed)."""
    try:
        return int(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return -1


def _record(path: str) -> tuple[str, int] | None:
    """The token and pid in a worker's record (`{"protocol": 1, "pid": 123, "port": 0, "token":
    "<hex>"}`), read without the json module."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(4096).decode("ascii")
    except (OSError, ValueError):
        return None
    token = text.partition('"token": "')[2].partition('"')[0]
    pid = text.partition('"pid": ')[2].partition(",")[0]
    if not token.isalnum() or not pid.isdigit():
        return None
    return token, int(pid)


class _Gone(Exception):
    """The worker did not answer usably: run the command in this process."""


def _connect(base: str) -> tuple[object, str, int]:
    import _socket

    record = _record(base + ".json")
    if record is None:
        raise _Gone("absent")
    token, pid = record
    family = getattr(_socket, "AF_UNIX", None)
    if family is None:  # Windows: its worker listens on loopback TCP; commands run in-process
        raise _Gone("no unix socket")
    sock = _socket.socket(family, _socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(base + ".sock")
    except OSError:
        sock.close()
        raise _Gone("absent") from None
    return sock, token, pid


class _Lines:
    """Reads lines and exact byte counts from the worker, each before a deadline."""

    def __init__(self, sock: object) -> None:
        self.sock = sock
        self.buf = b""

    def _more(self, until: float) -> None:
        left = until - time.monotonic()
        if left <= 0:
            raise _Gone("timeout")
        self.sock.settimeout(left)  # type: ignore[attr-defined]
        try:
            chunk = self.sock.recv(262144)  # type: ignore[attr-defined]
        except TimeoutError:
            raise _Gone("timeout") from None
        except OSError:
            raise _Gone("closed") from None
        if not chunk:
            raise _Gone("closed")
        self.buf += chunk

    def line(self, until: float) -> bytes:
        while (end := self.buf.find(b"\n")) < 0:
            if len(self.buf) > 4096:
                raise _Gone("garbled")
            self._more(until)
        line, self.buf = self.buf[:end], self.buf[end + 1 :]
        return line

    def exact(self, n: int, until: float) -> bytes:
        while len(self.buf) < n:
            self._more(until)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def _payload(args: list[str], stdin: bytes | None = None) -> bytes:
    """The command as the worker needs it to run it as this process would (marshal), with
    `stdin` when it was read already. `spent`: the seconds since STARTED, from which the worker
    counts prime's deadline."""
    import marshal

    env = dict(os.environ)
    ttys = (_tty(sys.stdin), _tty(sys.stdout), _tty(sys.stderr))
    if ttys[1] == 1 and "COLUMNS" not in env:  # rich sizes a listing to the terminal
        for fd in (0, 1, 2):
            try:
                columns, rows = os.get_terminal_size(fd)
            except OSError:
                continue
            env.setdefault("COLUMNS", str(columns))
            env.setdefault("LINES", str(rows))
            break
    streams = (sys.stdin, sys.stdout, sys.stderr)
    encodings = tuple(getattr(s, "encoding", None) or "utf-8" for s in streams)
    try:
        cwd = os.getcwd()
    except OSError:
        raise _Gone("no cwd") from None
    doc: dict[str, object] = {"argv": args, "env": env, "cwd": cwd, "tty": ttys, "enc": encodings}
    doc["spent"] = time.monotonic() - STARTED
    if stdin is not None:
        doc["stdin"] = stdin
    payload = marshal.dumps(doc)
    if len(payload) > PAYLOAD_MAX + len(stdin or b""):
        raise _Gone("too big")
    return payload


def forward(args: list[str], base: str) -> tuple[int, list[tuple[int, bytes]]]:
    """Run `args` in the worker at `base`: its exit code and its output as (fd, bytes) chunks in
    the order written. _Gone when the command is to run here instead: the worker did not run it
    (absent, busy, declined) or stopped answering ("hung", with its pid: to be replaced); or, for
    prime, "late": its deadline passed (reading stdin or waiting), so it prints nothing and the
    worker's answer, when it comes, goes nowhere."""
    import marshal

    limit = prime_deadline() if args[0] == "prime" else float("inf")
    stdin_tty = _tty(sys.stdin)
    sock, token, pid = _connect(base)
    try:
        payload = _payload(args, _event(args, stdin_tty, limit))
        head = (
            f'{{"protocol": {PROTOCOL}, "token": "{token}", "op": "run", "size": {len(payload)}}}'
        )
        connected = time.monotonic()
        sock.settimeout(DEADLINE)  # type: ignore[attr-defined]
        try:
            sock.sendall(head.encode("ascii") + b"\n" + payload)  # type: ignore[attr-defined]
        except OSError:
            raise _Gone("closed") from None
        lines = _Lines(sock)
        if not lines.line(min(connected + DEADLINE, limit)).startswith(b'{"ack": '):
            raise _Gone("garbled")
        while True:
            line = lines.line(min(time.monotonic() + SILENCE, limit))
            if not line:
                continue  # a heartbeat: the command is still running
            if line.startswith(b'{"stdin": '):
                data = _stdin_for(args[0], stdin_tty, limit)
                try:
                    sock.sendall(b"%d\n" % len(data) + data)  # type: ignore[attr-defined]
                except OSError:
                    raise _Gone("closed") from None
                continue
            if not line.startswith(b'{"done": '):
                raise _Gone("declined")  # busy, another vault, Typer's arguments
            size = int(line[9:-1]) if line[9:-1].isdigit() else -1
            if not 0 <= size <= REPLY_MAX:
                raise _Gone("garbled")
            # marshal: the peer is this user's worker, behind a token, in a folder only this user
            # can enter (_private); json would cost this process 10 ms of imports (re).
            data = lines.exact(size, min(time.monotonic() + SILENCE, limit))
            try:
                code, chunks = marshal.loads(data)  # noqa: S302
                return int(code), [(int(fd), bytes(out)) for fd, out in chunks]
            except (ValueError, TypeError, EOFError):
                raise _Gone("garbled") from None
    except _Gone as gone:
        if gone.args[0] == "timeout" and time.monotonic() >= limit:
            raise _Gone("late") from None
        if gone.args[0] == "timeout":  # no acknowledgement, or silent mid-command: wedged
            raise _Gone("hung", pid) from None
        raise
    finally:
        sock.close()  # type: ignore[attr-defined]


def _reads_event(args: list[str]) -> bool:
    """Whether this prime reads the hook's event from stdin whatever else happens: no prompt as
    TEXT and only the options that cannot fail before it reads (a bad --budget stops it first,
    and a prompt as TEXT leaves stdin unread, which may never close)."""
    if args[0] != "prime":
        return False
    it = iter(args[1:])
    for arg in it:
        name, eq, value = arg.partition("=")
        if arg == "--json":
            continue
        if name not in ("--vault", "--budget"):
            return False
        if not eq:
            value = next(it, "")
        if not value or (name == "--budget" and not (value.isdigit() and int(value) > 0)):
            return False
    return True


def _event(args: list[str], tty: int, limit: float) -> bytes | None:
    """Prime's event from stdin, read now to go with the request (the worker would ask for it:
    one round trip more) and kept for this process's own run should the worker not run it; None
    when the command may not read stdin."""
    if tty != 0 or not _reads_event(args):
        return None
    data = _stdin_for("prime", 0, limit)
    keep(data)
    return data


def _stdin_for(command: str, tty: int, limit: float) -> bytes:
    """stdin for the worker's command, read as the command would read it in this process: a hook
    event until HOOK_WAIT_S of silence; prime's until it closes, or _Gone("late") at `limit`."""
    if tty != 0:
        return b""
    if command != "prime":
        return read_stdin(sys.stdin.fileno())[0]
    data, whole = read_stdin(sys.stdin.fileno(), PRIME_STDIN_MAX, float("inf"), limit)
    if not whole:
        raise _Gone("late")
    return data


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


INTERRUPTED = "brain: interrupted\n"  # a Ctrl-C's one line, wherever it lands (exit 130)


def main() -> None:
    """The console script's and `python -m brain`'s entry point. A Ctrl-C before brain.cli's
    handler is in place (while it loads) or after it (the worker's start) ends as one there."""
    try:
        _main()
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED)
        sys.exit(130)


def _main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["prime"] and "--help" not in args and "-h" not in args:
        process_gate()  # the deadline is watched from here on: whatever follows, it is kept
    after: tuple[str, str, int] | None = None
    if args[:1] and args[0] in FORWARD and current().worker:
        vault = guess_vault(args)
        if vault is not None:
            code, after = _try(args, vault)
            if code is not None:
                sys.exit(code)
    from brain.cli import main as in_process

    status: str | int | None = None
    try:
        in_process(args)
    except SystemExit as done:
        status = done.code
    finally:
        if after is not None:  # once answered (a hybrid find may have seen to the worker itself)
            from brain import worker_client

            if after[0] == "start":
                worker_client.start(after[1])
            else:
                worker_client.replace(after[1], after[2])
    leave(status)


def leave(code: str | int | None) -> None:
    """sys.exit(code); but once numpy is loaded (a model ran here), os._exit after flushing: the
    interpreter's teardown of onnxruntime's session and numpy, object by object, cost a cold
    find ~130 ms of its ~900 on 2 busy cores, in a process that has written and closed all it
    had. Only in a process started for this command (not brain's entry point called in another
    program's, as the tests do) with nothing that could wait for the teardown: no other thread,
    no atexit callback (coverage's, say)."""
    args = sys.argv[1:]
    if (
        "numpy" in sys.modules
        and not isinstance(code, str)
        and args
        and sys.orig_argv[-len(args) :] == args
    ):
        import atexit
        import threading

        if threading.active_count() == 1 and not atexit._ncallbacks():
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):
                pass  # sys.exit says no more, or the same: it flushes again
            else:
                os._exit(code or 0)
    sys.exit(code)


def _try(args: list[str], vault: str) -> tuple[int | None, tuple[str, str, int] | None]:
    """The command's exit code once the worker ran it and its output is written, or None when it
    must run here; then also what to do about the worker once it has: start one where none runs
    (("start", vault, 0)), replace a wedged one (("replace", vault, pid))."""
    folder = run_dir()
    if folder is None:  # no folder short enough: brain.worker_client says why when it starts one
        return None, None
    base = os.path.join(folder, worker_name(vault))
    private = _private(folder)
    if private is False:
        return None, None  # brain.worker says why, and refuses it too
    try:
        if private is None:
            raise _Gone("absent")
        code, chunks = forward(args, base)
    except _Gone as gone:
        if gone.args[0] == "late":  # prime past its deadline: nothing rather than late
            return 0, None
        if gone.args[0] == "hung":
            return None, ("replace", vault, gone.args[1])
        ours = gone.args[0] == "absent" and os.path.isdir(os.path.join(vault, "AI"))
        return None, ("start", vault, 0) if ours else None
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED)
        return 130, None
    gate = process_gate_made() if args[0] == "prime" else None
    if gate is not None:  # the answer whole, or (past the deadline) nothing: as run_prime's emit
        gate.lock.acquire()
    try:
        for fd, data in chunks:
            _write(fd, data)
    except BrokenPipeError:  # the reader went away (`brain find x | head -1`), as cli.main
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        code = 0
    finally:
        if gate is not None:
            gate.lock.release()
    if code in (0, 1) and _tty(sys.stderr) == 1 and not current().no_update:
        from brain.cli import update_notice

        update_notice(args)
    return code, None
