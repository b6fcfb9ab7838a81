"""Writing files so that a reader never sees half of one, and never outside the folder they
belong to.

The rule for symbolic links, everywhere in brain: a link is followed only when it resolves inside
the folder it is in (the vault; the repository for `brain export`). The walk skips one that
resolves outside with a line saying so (`outside`), and every writer refuses it (`confine`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from brain.errors import BrainError
from brain.text import printable


def resolved(path: Path) -> Path:
    """`path` with every link resolved (a loop resolves to where it gives up, never raises)."""
    return Path(os.path.realpath(path))


def outside(path: Path, root: Path) -> Path | None:
    """Where `path` leads when a link takes it out of `root` (or nowhere: a loop); else None."""
    target = resolved(path)
    if target.is_relative_to(resolved(root)):
        return None
    return target


def read_regular(path: Path) -> bytes:
    """A file's bytes, refusing anything but a regular file (through links): a pipe nobody writes
    to would block the read for ever, a device such as /dev/zero never end. Opened without
    blocking, so a pipe is refused before it is waited on. An OSError, as any read's."""
    import errno

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            why = "not a regular file (a pipe, a socket or a device)"
            raise OSError(errno.EINVAL, why, str(path))
        return fh.read()


def confine(path: Path, root: Path, what: str = "the vault") -> Path:
    """`path` with its links resolved, or a BrainError when they lead out of `root`."""
    target = outside(path, root)
    if target is None:
        return resolved(path)
    raise BrainError(
        f"{printable(str(path))} is a symbolic link to {printable(str(target))}, outside {what} "
        f"{printable(str(root))}: brain does not follow it",
        f"replace the link with a copy of its file, or point it inside {what}, and try again",
    )


def write_atomic(
    path: Path, data: str | bytes, mode: int | None = None, *, root: Path | None = None
) -> None:
    """Write `path` through a temp file in the same folder and `os.replace` (never half-written).

    A symlinked file (a dotfiles manager's link) is written through: its target is replaced, the
    link stays. With `root` (the vault, the repository) a link that leads out of it is refused.
    """
    import tempfile

    target = resolved(path) if root is None else confine(path, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(mode)
        Path(tmp).replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise


class Held:
    """An exclusive lock on a file, held until `close()` (or until the process exits)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def close(self) -> None:
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):
            _unlock(self._fd)
        os.close(self._fd)
        self._fd = -1


def hold(path: Path, wait: float | None = 0.0) -> Held | None:
    """An exclusive lock on `path` (created 0600 if missing) across processes, held until the
    result is closed; None when another process still holds it after `wait` seconds (`wait` None:
    wait until it is free). The one lock brain takes: the worker's start and the inbox, tend and
    sync locks alike. An OSError when the file cannot be opened."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    end = time.monotonic() + (wait or 0.0)
    while True:
        try:
            _lock(fd, block=wait is None)
        except OSError:
            if time.monotonic() < end:
                time.sleep(0.05)
                continue
            os.close(fd)
            return None
        return Held(fd)


@contextlib.contextmanager
def locked(path: Path, wait: float | None = None) -> Iterator[bool]:
    """`hold` for a block: yields whether the lock was got. With `wait` None it waits until the
    lock is free; otherwise it gives up after `wait` seconds and yields False."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        held = hold(path, wait)
    except OSError as exc:
        raise BrainError(
            f"cannot create the lock file {path}: {exc.strerror}",
            "make the state dir writable, or point XDG_STATE_HOME at a writable folder",
        ) from exc
    try:
        yield held is not None
    finally:
        if held is not None:
            held.close()


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int, *, block: bool) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK if block else msvcrt.LK_NBLCK, 1)  # LK_LOCK: 10 s

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int, *, block: bool) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX if block else fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
