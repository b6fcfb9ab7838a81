"""brain: a local-first memory for coding agents.

The package also holds what brain needs before it knows which command it runs, shared by the thin
client (brain/thin.py), the worker (brain/worker.py, brain/worker_client.py) and the commands run
in-process: the clock prime's deadline counts from and its watchdog (threading, imported by prime
alone), brain's folders by the XDG rules, the one reader of a hook's
stdin, and the worker's name and the limits of its wire. Here rather than in a module of their
own because every process imports the package anyway: `brain find` answered by the worker imports
brain, brain.thin and the settings it reads (brain.settings) and nothing more of
brain's (tests/test_imports.py), and a module more would cost each call a file to find and load.
Builtin modules only (`os`, `sys`, `time`), and of brain's only brain.settings, inside the
functions that read a variable: every module may import these, and they close no import cycle
(tests/test_import_cycles.py).
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # typing's own is an import the thin client would pay for; mypy reads it
if TYPE_CHECKING:
    from collections.abc import Mapping

__version__ = "0.1.0"

# onnxruntime writes a device id under ~/.cache unless this is set before its first import;
# setting it here covers every path that might load the model.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def _process_start() -> float:
    """When this process started, on time.monotonic's clock: prime's deadline counts from here.

    On Linux the kernel's own record (proc(5): field 22 of /proc/self/stat, `starttime`, in clock
    ticks after boot, against CLOCK_BOOTTIME), so the interpreter's start-up counts too: under
    load it took a prime up to 2 s before brain was even imported. Elsewhere, or in a process
    that imported brain long after it started (a test runner, a server), the first import."""
    now = time.monotonic()
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()  # the name may hold spaces
            ticks = int(fields[19])
            since = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
            if 0 <= since < 60:
                return now - since
        except (OSError, ValueError, IndexError, AttributeError):
            pass
    return now


STARTED = _process_start()  # prime's deadline counts from here

PROTOCOL = 1
CONNECT_TIMEOUT = 0.1
DEADLINE = 0.3  # seconds after the connect; a worker that has not acknowledged is replaced
SILENCE = 10.0  # a worker running a command sends a heartbeat every HEARTBEAT seconds
HEARTBEAT = 1.0
HOOK_WAIT_S = 0.2  # a hook's stdin is read until this much silence (the agent wrote it first)
STDIN_MAX = 1_000_000  # bytes of a hook's event
PRIME_STDIN_MAX = 4 * 1024 * 1024  # bytes of prime's event: a prompt with big pastes is cut
PRIME_DEADLINE = 1.0  # seconds from the start; `BRAIN_PRIME_DEADLINE` overrides
PAYLOAD_MAX = 4 * 1024 * 1024  # bytes of one forwarded command (argv and environment)
SOCKET_PATH_MAX = 100  # sun_path holds 104 bytes on macOS, 108 on Linux

# Linux's XDG base directories: (variable, default under HOME) per kind.
XDG = {
    "config": ("XDG_CONFIG_HOME", ".config"),
    "state": ("XDG_STATE_HOME", ".local/state"),
    "data": ("XDG_DATA_HOME", ".local/share"),
}


def xdg_dir(kind: str, env: Mapping[str, str] | None = None) -> str | None:
    """brain's folder of `kind` by the variables of `env` (the process's by default; a command the
    worker runs passes its own): for the state, BRAIN_STATE when it names a folder by its full
    path (`~` read as home; brain.config.state_dir refuses another), on every system; else by
    the XDG rules on Linux; None elsewhere (platformdirs decides, in brain.config)."""
    from brain.settings import Settings, current

    said = current() if env is None else Settings(env, "/")
    if kind == "state":
        own = os.path.expanduser(said.state)
        if os.path.isabs(own):
            return own
    if sys.platform != "linux" or "ANDROID_DATA" in said.env:
        return None
    var, default = XDG[kind]
    base = said.env.get(var, "")
    if os.path.isabs(base):
        return os.path.join(base, "brain")
    home = said.env.get("HOME", "")
    if os.path.isabs(home):
        return os.path.join(home, default, "brain")
    return None


def prime_seconds() -> float:
    """How long after its start `brain prime` must have answered, or given up (a bad
    BRAIN_PRIME_DEADLINE is set aside: prime serves the prompt within the default)."""
    from brain.settings import current

    return current().prime_seconds(PRIME_DEADLINE)[0]


def prime_deadline() -> float:
    """When `brain prime` in this process must have answered, or given up (time.monotonic)."""
    return STARTED + prime_seconds()


PRIME_GRACE = 0.1  # seconds output (and its log row) may take: none starts later than this
PRIME_TICK = 0.05  # seconds between the watchdog's looks at the clock


class Gate:
    """The prime deadline. In a process of its own (`watchdog`), a watchdog thread ends the
    process (exit 0) by `deadline`, after output already being written (PRIME_GRACE at most): a
    thread, not a signal, as a hung socket or SQLite's busy wait would hold a signal handler
    back. A thread that sleeps until the deadline wakes when the system gets round to it: on a
    loaded machine (50 primes at once on 2 busy cores) 0.37 s late. So it wakes every PRIME_TICK,
    keeps the most it was woken late (`late`), and leaves that much before the deadline; no
    output starts closer to the deadline than that and PRIME_GRACE (`open`). In the worker (no
    watchdog: it would end the worker) the thin client stops waiting at the deadline, and what
    the command writes after it goes nowhere."""

    def __init__(self, deadline: float, *, watchdog: bool = True) -> None:
        import threading

        self.lock = threading.Lock()
        self.deadline = deadline
        self.late = 0.0
        if watchdog:
            threading.Thread(target=self._watch, name="prime-deadline", daemon=True).start()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def open(self) -> bool:
        """Whether output may start now (the caller holds `lock`): it has PRIME_GRACE to be
        written before the watchdog leaves."""
        return self.left() > self.late + PRIME_GRACE

    def _watch(self) -> None:
        while True:
            now = time.monotonic()
            leave = self.deadline - self.late
            if now >= leave:
                break
            wake = min(now + PRIME_TICK, leave)
            time.sleep(wake - now)
            self.late = max(self.late, time.monotonic() - wake)
        self.lock.acquire(timeout=PRIME_GRACE)  # output under way is finished, not cut
        sys.stdout.flush()
        os._exit(0)


_GATE: list[Gate] = []  # this process's own prime gate, once made


def process_gate() -> Gate:
    """Prime's deadline in a process of its own, with its watchdog: made once, first thing (the
    thin client makes it before it imports anything more: brain.cli and the command's modules
    took seconds on a loaded machine, all before the deadline was watched)."""
    if not _GATE:
        _GATE.append(Gate(prime_deadline()))
    return _GATE[0]


def process_gate_made() -> Gate | None:
    """This process's prime gate, if it was made."""
    return _GATE[0] if _GATE else None


def read_stdin(
    fd: int, limit: int = STDIN_MAX, wait: float = HOOK_WAIT_S, until: float | None = None
) -> tuple[bytes, bool]:
    """What stdin holds, the one reader of every hook's stdin (brain.hook_event's, prime's and
    the thin client's for the worker): until it closes, `limit` bytes, `wait` seconds of silence
    or the monotonic time `until`; and False when the read stopped at `until` with stdin still
    open (prime then prints nothing), True otherwise. Never blocks past those, never raises."""
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


# --- the worker's name and folder ----------------------------------------------------------------


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
    config = xdg_dir("config")
    stamp = ""
    if config is not None:
        try:
            st = os.stat(os.path.join(config, "brain.yaml"))
            stamp = f"{st.st_mtime_ns}:{st.st_size}"
        except OSError:
            stamp = "-"
    from brain.settings import current

    parts = (vault, current().embed, stamp, sys.prefix, __version__)
    return "worker-" + _fnv("\0".join(parts).encode("utf-8", "surrogateescape"))


def run_dirs() -> list[str]:
    """Where a worker's socket may live, in order: `$XDG_RUNTIME_DIR/brain`, the state dir's
    `run/` (Linux), and on Unix `$TMPDIR/brain-<uid>` (else /tmp), whose path is short enough for
    a socket where a long HOME makes the state dir's too long. The thin client and the worker
    both pick from this one list (run_dir), so they never look in two places."""
    from brain.settings import current

    env = current().env
    folders = []
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime):
        folders.append(os.path.join(runtime, "brain"))
    state = xdg_dir("state", env)
    if state is not None:
        folders.append(os.path.join(state, "run"))
    if hasattr(os, "getuid"):
        temp = [env.get(var, "") for var in ("TMPDIR", "TEMP", "TMP")]
        # check_dir refuses it unless it is ours and 0700, as tempfile.mkdtemp would make it
        folder = next((path for path in temp if os.path.isabs(path)), "/tmp")  # noqa: S108
        folders.append(os.path.join(folder, f"brain-{os.getuid()}"))
    return folders


def run_dir() -> str | None:
    """The first of run_dirs() where a worker's socket path fits sun_path; None when none does
    (brain.worker_client then says why no worker can start)."""
    sample = "worker-" + "0" * 16 + ".sock"  # every worker's name is this long
    for folder in run_dirs():
        if len(os.fsencode(os.path.join(folder, sample))) <= SOCKET_PATH_MAX:
            return folder
    return None
