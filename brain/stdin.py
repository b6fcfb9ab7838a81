"""The one reader of a hook's stdin (brain.hook_event's, prime's and the thin client's for the
worker): bounded in bytes and in time, never blocking past either."""

from __future__ import annotations

import os
import time

HOOK_WAIT_S = 0.2  # a hook's stdin is read until this much silence (the agent wrote it first)
STDIN_MAX = 1_000_000  # bytes of a hook's event
PRIME_STDIN_MAX = 4 * 1024 * 1024  # bytes of prime's event: a prompt with big pastes is cut

_KEPT: list[bytes] = []  # this process's stdin (fd 0), read whole already (keep)


def keep(data: bytes) -> None:
    """stdin (fd 0) read whole: the next read_stdin of fd 0 returns `data` (the thin client read
    prime's event to send it with the request, and the worker did not run the command)."""
    _KEPT[:] = [data]


def read_stdin(
    fd: int, limit: int = STDIN_MAX, wait: float = HOOK_WAIT_S, until: float | None = None
) -> tuple[bytes, bool]:
    """What stdin holds, the one reader of every hook's stdin (brain.hook_event's, prime's and
    the thin client's for the worker): until it closes, `limit` bytes, `wait` seconds of silence
    or the monotonic time `until`; and False when the read stopped at `until` with stdin still
    open (prime then prints nothing), True otherwise. Never blocks past those, never raises."""
    if _KEPT and fd == 0:  # the thin client read it for a worker that then did not run it
        return _KEPT.pop()[:limit], True
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
