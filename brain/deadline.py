"""Prime's deadline: the clock it counts from (this process's start) and the watchdog that ends a
prime of its own process by then (a `_thread` thread: `threading` would cost the thin client's
warm prime 3 ms of imports, functools and collections, about a third of what it adds to the
interpreter's own start)."""

from __future__ import annotations

import _thread
import os
import sys
import time


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

PRIME_DEADLINE = 1.0  # seconds from the start; `BRAIN_PRIME_DEADLINE` overrides


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
        self.lock = _thread.allocate_lock()  # what threading.Lock is
        self.deadline = deadline
        self.late = 0.0
        if watchdog:  # daemonic as a `_thread` thread: the interpreter's exit does not wait on it
            _thread.start_new_thread(self._watch, ())

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
