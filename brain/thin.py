"""The thin client: `brain` as agents and hooks call it, answered by the warm worker.

A fresh `brain find` spends most of its time importing (typing, dataclasses, re, brain's modules)
and checking the vault before any work. For the commands in FORWARD this module, which imports only
builtin modules (`_socket`, `marshal`, `select`), finds the vault's worker (brain/worker.py), sends
it the command as it stands (argv, cwd, the environment, which of stdin/stdout/stderr are
terminals) and writes back what the worker's run of the very same code wrote to stdout and stderr,
in order, and exits with its code. stdin goes over only when the command reads it (the worker asks).

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

STARTED = time.monotonic()  # prime's deadline counts from here (brain.cli's too: the same clock)

# The commands the worker runs; adding one is one entry (its fast path must be in brain.cli).
FORWARD = ("find", "pack", "prime", "reindex")

PROTOCOL = 1
CONNECT_TIMEOUT = 0.1
DEADLINE = 0.3  # seconds after the connect for the worker's acknowledgement
SILENCE = 10.0  # a worker running a command sends a heartbeat every HEARTBEAT seconds
HEARTBEAT = 1.0
HOOK_WAIT_S = 0.2  # a hook's stdin is read until this much silence (the agent wrote it first)
STDIN_MAX = 1_000_000  # bytes of a hook's event
PRIME_STDIN_MAX = 4 * 1024 * 1024  # bytes of prime's event: a prompt with big pastes is cut
PRIME_DEADLINE = 1.0  # seconds from the start; `BRAIN_PRIME_DEADLINE` overrides
PAYLOAD_MAX = 4 * 1024 * 1024  # bytes of one command request (argv and environment)
REPLY_MAX = 64 * 1024 * 1024  # bytes of one command's output
SOCKET_PATH_MAX = 100  # sun_path holds 104 bytes on macOS, 108 on Linux

# Linux's XDG base directories: (variable, default under HOME) per kind.
XDG = {
    "config": ("XDG_CONFIG_HOME", ".config"),
    "state": ("XDG_STATE_HOME", ".local/state"),
    "data": ("XDG_DATA_HOME", ".local/share"),
}


def xdg_dir(kind: str) -> str | None:
    """brain's folder of `kind` by the XDG rules on Linux; None elsewhere (platformdirs decides,
    in brain.config)."""
    if sys.platform != "linux" or "ANDROID_DATA" in os.environ:
        return None
    var, default = XDG[kind]
    base = os.environ.get(var, "")
    if os.path.isabs(base):
        return os.path.join(base, "brain")
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return os.path.join(home, default, "brain")
    return None


def _fnv(data: bytes) -> str:
    """A 64-bit FNV-1a digest in hex: names a worker without importing hashlib (a name that
    collides only makes the worker decline: it checks the vault it is asked about)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def worker_name(vault: str) -> str:
    """`worker-<digest>`: one worker per vault, embedding settings (BRAIN_EMBED, brain.yaml as it
    was when the worker started), installation (sys.prefix: `python` and `python3` of one venv
    are one) and brain version."""
    from brain import __version__

    config = xdg_dir("config")
    stamp = ""
    if config is not None:
        try:
            st = os.stat(os.path.join(config, "brain.yaml"))
            stamp = f"{st.st_mtime_ns}:{st.st_size}"
        except OSError:
            stamp = "-"
    parts = (vault, os.environ.get("BRAIN_EMBED", "").strip(), stamp, sys.prefix, __version__)
    return "worker-" + _fnv("\0".join(parts).encode("utf-8", "surrogateescape"))


def run_dirs() -> list[str]:
    """Where a worker's socket may live, in order: `$XDG_RUNTIME_DIR/brain`, the state dir's
    `run/`; brain.worker.run_dir adds `$TMPDIR/brain-<uid>` and picks the first short enough."""
    folders = []
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        folders.append(os.path.join(runtime, "brain"))
    state = xdg_dir("state")
    if state is not None:
        folders.append(os.path.join(state, "run"))
    return folders


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
        raw = os.environ.get("BRAIN_VAULT") or None
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


def read_stdin(
    fd: int, limit: int = STDIN_MAX, wait: float = HOOK_WAIT_S, until: float | None = None
) -> tuple[bytes, bool]:
    """What stdin holds, the one reader of every hook's stdin (brain.hook_event's, prime's and
    this client's for the worker): until it closes, `limit` bytes, `wait` seconds of silence or
    the monotonic time `until`; and False when the read stopped at `until` with stdin still open
    (prime then prints nothing), True otherwise. Never blocks past those, never raises."""
    data = b""
    try:
        if os.name != "posix":  # no select on Windows pipes: the agents close stdin after the event
            return os.read(fd, limit), True
        import select

        while len(data) < limit:
            left = wait if until is None else min(wait, until - time.monotonic())
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                return data, until is None or time.monotonic() < until
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    except (OSError, ValueError):
        pass
    return data, True


def env_number(name: str, default: float) -> float:
    """A number from the environment, or `default` when it is unset or not a positive number."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


def _private(folder: str) -> bool | None:
    """Whether `folder` is this user's and closed to others (0700), as brain.worker.check_dir
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


def _payload(args: list[str]) -> tuple[bytes, int]:
    """The command as the worker needs it to run it as this process would (marshal), and whether
    stdin is a terminal (1), not (0), or closed (-1). `spent`: the seconds since STARTED, from
    which the worker counts prime's deadline."""
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
    payload = marshal.dumps(doc)
    if len(payload) > PAYLOAD_MAX:
        raise _Gone("too big")
    return payload, ttys[0]


def prime_seconds() -> float:
    """How long after its start `brain prime` must have answered, or given up."""
    return env_number("BRAIN_PRIME_DEADLINE", PRIME_DEADLINE)


def prime_deadline() -> float:
    """When `brain prime` in this process must have answered, or given up (time.monotonic)."""
    return STARTED + prime_seconds()


def forward(args: list[str], base: str) -> tuple[int, list[tuple[int, bytes]]]:
    """Run `args` in the worker at `base`: its exit code and its output as (fd, bytes) chunks in
    the order written. _Gone when the command is to run here instead: the worker did not run it
    (absent, busy, declined) or stopped answering ("hung", with its pid: to be replaced); or, for
    prime, "late": its deadline passed (reading stdin or waiting), so it prints nothing and the
    worker's answer, when it comes, goes nowhere."""
    import marshal

    limit = prime_deadline() if args[0] == "prime" else float("inf")
    payload, stdin_tty = _payload(args)
    sock, token, pid = _connect(base)
    try:
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


def main() -> None:
    """The console script's and `python -m brain`'s entry point."""
    args = sys.argv[1:]
    after: tuple[str, str, int] | None = None
    if args[:1] and args[0] in FORWARD and os.environ.get("BRAIN_WORKER", "1") != "0":
        vault = guess_vault(args)
        if vault is not None:
            code, after = _try(args, vault)
            if code is not None:
                sys.exit(code)
    from brain.cli import main as in_process

    try:
        in_process(args)
    finally:
        if after is not None:  # once answered (a hybrid find may have seen to the worker itself)
            from brain import worker

            if after[0] == "start":
                worker.start(after[1])
            else:
                worker.replace(after[1], after[2])


def _try(args: list[str], vault: str) -> tuple[int | None, tuple[str, str, int] | None]:
    """The command's exit code once the worker ran it and its output is written, or None when it
    must run here; then also what to do about the worker once it has: start one where none runs
    (("start", vault, 0)), replace a wedged one (("replace", vault, pid))."""
    name = worker_name(vault)
    for folder in run_dirs():
        base = os.path.join(folder, name)
        if len(os.fsencode(base)) + 5 <= SOCKET_PATH_MAX:
            break
    else:
        return None, None  # a long path: brain.worker picks the folder (and says why it cannot)
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
        sys.stderr.write("brain: interrupted\n")
        return 130, None
    try:
        for fd, data in chunks:
            _write(fd, data)
    except BrokenPipeError:  # the reader went away (`brain find x | head -1`), as cli.main
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        code = 0
    if code in (0, 1) and _tty(sys.stderr) == 1 and not os.environ.get("BRAIN_NO_UPDATE"):
        from brain.cli import _update_notice

        _update_notice(args)
    return code, None
