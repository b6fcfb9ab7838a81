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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from brain.errors import BrainError
from brain.regular import NOT_REGULAR
from brain.text import printable


def resolved(path: Path) -> Path:
    """`path` with every link resolved (a loop resolves to where it gives up). An OSError only
    when a link keeps changing under it (realpath's readlink finds a folder where lstat saw a
    link): it is asked again first."""
    for _ in range(4):
        with contextlib.suppress(OSError):
            return Path(os.path.realpath(path))
    return Path(os.path.realpath(path))


def outside(path: Path, root: Path) -> Path | None:
    """Where `path` leads when a link takes it out of `root` (or nowhere: a loop); else None."""
    target = resolved(path)
    if target.is_relative_to(resolved(root)):
        return None
    return target


def read_json_dict(path: Path) -> dict[str, Any]:
    """The JSON object a state or record file holds; {} when it is missing, unreadable, not JSON
    or not an object (each is brain's own file: what cannot be read is started again)."""
    import json

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


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


class Changed(Exception):
    """The file no longer holds what the caller read: `now` is what it holds (None: absent)."""

    def __init__(self, now: bytes | None) -> None:
        super().__init__("changed since it was read")
        self.now = now


# Linux's renameat2 flags (linux/fs.h): swap two names atomically, or rename only onto nothing.
_EXCHANGE, _NOREPLACE = 2, 1
_DIR_FD = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd


@contextlib.contextmanager
def _folder(
    root: Path, rel: str, *, create: bool, follow: bool = True
) -> Iterator[tuple[int | None, str]]:
    """(an open descriptor of the folder holding `root/rel`, the file's name in it).

    The path is resolved first (a link that stays inside `root` is followed, as everywhere in
    brain; one that leads out is refused), then each folder from the resolved root down is opened
    with O_NOFOLLOW: a folder swapped for a link after the check cannot send the write elsewhere,
    it fails here with one line. Where the platform has no `dir_fd` (Windows) the descriptor is
    None and the checked path is used. Without `follow`, a link at `rel` itself is the file
    (its folders are still resolved)."""
    base = resolved(root)
    try:
        # resolved once: a second look may see another folder
        target = resolved(root / rel) if follow else resolved((root / rel).parent) / Path(rel).name
    except OSError:  # a link that became a folder between realpath's lstat and its readlink
        target = Path("/")
    if not target.is_relative_to(base):
        with contextlib.suppress(OSError):
            confine(root / rel, root)  # the one line that says where the link leads
        raise BrainError(
            f"{printable(str(root / rel))} changed while brain was writing it; nothing was written",
            "try again",
        )
    parts = target.relative_to(base).parts
    if not parts:
        raise BrainError(f"{printable(str(root / rel))} is not a file", "name a file in it")
    if not _DIR_FD:  # pragma: no cover - exercised on Windows only
        if create:
            target.parent.mkdir(parents=True, exist_ok=True)
        yield None, str(target)
        return
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(base, flags)
    try:
        for i, name in enumerate(parts[:-1]):
            try:
                nxt = os.open(name, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                nxt = os.open(name, flags, dir_fd=fd)
            except OSError as exc:  # ELOOP, ENOTDIR: swapped for a link or a file since the check
                where = Path(base, *parts[: i + 1])
                raise BrainError(
                    f"{printable(str(where))} changed into a link or a file while brain was "
                    f"writing {printable(rel)}; nothing was written",
                    f"check what replaced {printable(str(where))}, then try again",
                ) from exc
            os.close(fd)
            fd = nxt
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _read_at(fd: int | None, name: str) -> tuple[bytes | None, os.stat_result | None]:
    """A file's bytes and stat, opened without following a link; (None, None) when absent."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(name, flags, dir_fd=fd) if fd is not None else os.open(name, flags)
    except FileNotFoundError:
        return None, None
    with os.fdopen(handle, "rb") as fh:
        st = os.fstat(handle)
        if not stat.S_ISREG(st.st_mode):
            import errno

            raise OSError(errno.EINVAL, NOT_REGULAR, name)
        return fh.read(), st


def read_in(root: Path, rel: str) -> bytes | None:
    """The bytes of `root/rel` (None when it does not exist), read as `replace` would see them."""
    try:
        with _folder(root, rel, create=False) as (fd, name):
            return _read_at(fd, name)[0]
    except FileNotFoundError:  # its folder does not exist either
        return None


def relink(root: Path, rel: str, target: str | None) -> None:
    """Make `root/rel` a symbolic link to `target` (None: remove it), replacing whatever link is
    there, never following it; its folders made, inside `root`, as for `replace`."""
    with _folder(root, rel, create=target is not None, follow=False) as (fd, name):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)
        if target is not None:
            os.symlink(target, name, dir_fd=fd)


Merge = Callable[[bytes, bytes, bytes], bytes]  # (base, one side, the other): both; ValueError


def replace(
    root: Path,
    rel: str,
    data: bytes | None,
    *,
    was: bytes | None,
    mode: int | None = None,
    merge: Merge | None = None,
) -> None:
    """Set `root/rel` to `data` (None: delete it), only if it still holds `was` (None: it did not
    exist); otherwise raise `Changed` with what it holds now, and leave it as it is.

    Compare, then replace, atomically where the system allows: on Linux the new file is swapped
    in with renameat2(RENAME_EXCHANGE) and what it displaced is compared after the swap, once no
    writer holds it: a write that landed between the check and the swap is appended, merged in
    with `merge`, or swapped back, never lost; a new file is put
    in place only where no file is (RENAME_NOREPLACE, or a hard link elsewhere). A file with
    other hard links is written through in place, so the links stay one file. A reader never
    sees half a file, and nothing is written outside `root` (see `_folder`)."""
    try:
        with _folder(root, rel, create=data is not None) as (fd, name):
            _replace_at(fd, name, data, was, mode, merge)
    except FileNotFoundError:
        if was is not None:
            raise Changed(None) from None
        if data is not None:
            raise


def _replace_at(
    fd: int | None,
    name: str,
    data: bytes | None,
    was: bytes | None,
    mode: int | None,
    merge: Merge | None,
) -> None:
    now, st = _read_at(fd, name)
    if now != was:
        raise Changed(now)
    if data is None:
        if now is not None:
            _remove(fd, name, was)
        return
    if st is not None and st.st_nlink > 1:
        _write_through(fd, name, data, was)
        return
    if mode is None:
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
    tmp = _temp(fd, name, data, mode)
    try:
        if now is None:
            _put_new(fd, tmp, name)
        else:
            _swap_in(fd, tmp, name, data, was, merge)
    finally:
        with contextlib.suppress(OSError):
            _unlink(fd, tmp)
    _sync_folder(fd)


def _temp(fd: int | None, name: str, data: bytes, mode: int) -> str:
    import secrets

    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_BINARY", 0)
    handle = os.open(tmp, flags, 0o600, dir_fd=fd) if fd is not None else os.open(tmp, flags, 0o600)
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
            fh.flush()
            if hasattr(os, "fchmod"):  # not on Windows, where a file has no such mode
                os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            _unlink(fd, tmp)
        raise
    return tmp


def _renameat2(fd: int | None, src: str, dst: str, flags: int) -> bool:
    """renameat2(2) within one folder; False where the system or file system has none."""
    if fd is None or not sys.platform.startswith("linux"):
        return False
    import ctypes
    import errno

    libc = ctypes.CDLL(None, use_errno=True)
    call = getattr(libc, "renameat2", None)
    if call is None:  # pragma: no cover - a libc older than glibc 2.28
        return False
    if call(fd, os.fsencode(src), fd, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # pragma: no cover - old kernel, odd fs
        return False
    raise OSError(err, os.strerror(err), dst)


def rename_new(root: Path, rel: str, name: str) -> bool:
    """Rename `root/rel` (a file, a link or a folder) to `name` in its own folder, only where
    nothing has that name: False when something does (made meanwhile), and nothing moved."""
    import errno

    with _folder(root, rel, create=False, follow=False) as (fd, old):
        try:
            if _renameat2(fd, old, name, _NOREPLACE):
                return True
        except FileExistsError:
            return False
        # no renameat2 here: look, then rename (a folder never replaces a non-empty one)
        dest = name if fd is not None else str(Path(old).with_name(name))
        try:
            os.lstat(dest, dir_fd=fd)
            return False
        except FileNotFoundError:
            pass
        try:
            _rename(fd, old, dest)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                return False
            raise
        return True


def _rename(fd: int | None, src: str, dst: str) -> None:
    if fd is None:  # pragma: no cover - exercised on Windows only
        Path(src).replace(dst)
    else:
        os.rename(src, dst, src_dir_fd=fd, dst_dir_fd=fd)


def _unlink(fd: int | None, name: str) -> None:
    if fd is None:  # pragma: no cover - exercised on Windows only
        Path(name).unlink()
    else:
        os.unlink(name, dir_fd=fd)


def _put_new(fd: int | None, tmp: str, name: str) -> None:
    """`tmp` becomes `name` only where no file is: a file that appeared meanwhile is kept."""
    import errno

    try:
        if _renameat2(fd, tmp, name, _NOREPLACE):
            return
        if fd is None:  # pragma: no cover - Windows: rename never replaces there
            Path(tmp).rename(name)
        else:
            os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            raise
        raise Changed(_read_at(fd, name)[0]) from None


def _swap_in(
    fd: int | None, tmp: str, name: str, data: bytes, was: bytes | None, merge: Merge | None
) -> None:
    """Swap `tmp` in for `name`, then look at what it displaced once nobody writes to it: what
    was written between the check and the swap is kept (appended lines appended to the new
    text, another change merged with `merge`); when it cannot be, the displaced file goes back
    and Changed is raised."""
    if not _renameat2(fd, tmp, name, _EXCHANGE):
        now = _read_at(fd, name)[0]  # no atomic swap here: check once more, as late as can be
        if now != was:
            raise Changed(now)
        _rename(fd, tmp, name)
        return
    late = _settled(fd, tmp)
    if late == was or late is None:
        return
    if was is not None and late.startswith(was) and data[-1:] in (b"", b"\n"):
        # Lines appended between the check and the swap (a person, an agent typing at the end
        # of the file) are appended to the new text: a fast writer cannot starve the replace.
        _append(fd, name, late[len(was) :])
        return
    for _ in range(20 if merge else 0):
        now = _read_at(fd, name)[0]
        if now is None or merge is None:
            break
        try:
            both = merge(was or b"", late, now)
            _replace_at(fd, name, both, now, None, None)
        except Changed:
            continue
        except ValueError:  # binary: the late version goes back
            break
        return
    _renameat2(fd, tmp, name, _EXCHANGE)
    ours = _settled(fd, tmp) or b""
    if ours != data:  # written into while it was in place: appended lines go on, else it stays
        if not ours.startswith(data):
            _rename(fd, tmp, f"{name}.kept-{os.getpid()}")
            raise Changed(late)
        _append(fd, name, ours[len(data) :])
    raise Changed(late)


def _settled(fd: int | None, name: str) -> bytes | None:
    """A displaced file's bytes once no process holds it open for writing: a writer that opened
    it before the swap (a shell's `>>` between its open and its write) may still be writing into
    it. On Linux a read lease is granted only when no such writer is left (fcntl(2),
    F_SETLEASE); elsewhere it is read at once."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        handle = os.open(name, flags, dir_fd=fd) if fd is not None else os.open(name, flags)
    except FileNotFoundError:
        return None
    with os.fdopen(handle, "rb") as fh:
        leased = _lease(handle, 2.0)
        try:
            return fh.read()
        finally:
            if leased:
                _unlease(handle)


def _append(fd: int | None, name: str, extra: bytes) -> None:
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_BINARY", 0)
    handle = os.open(name, flags, dir_fd=fd) if fd is not None else os.open(name, flags)
    with os.fdopen(handle, "ab") as out:
        out.write(extra)
        out.flush()
        os.fsync(out.fileno())


def _remove(fd: int | None, name: str, was: bytes | None) -> None:
    """Delete `name` only if it holds `was`: it is moved aside first, then compared."""
    import secrets

    aside = f".{name}.{secrets.token_hex(4)}.del"
    _rename(fd, name, aside)
    held = _settled(fd, aside)
    if held == was:
        _unlink(fd, aside)
        return
    try:
        _put_new(fd, aside, name)
    finally:
        with contextlib.suppress(OSError):
            _unlink(fd, aside)
    raise Changed(held)


def _write_through(fd: int | None, name: str, data: bytes, was: bytes | None) -> None:
    """Rewrite a file with other hard links in place: replacing it would split the links."""
    flags = os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_BINARY", 0)
    handle = os.open(name, flags, dir_fd=fd) if fd is not None else os.open(name, flags)
    with os.fdopen(handle, "r+b") as fh:
        now = fh.read()
        if now != was:
            raise Changed(now)
        fh.seek(0)
        fh.write(data)
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())


def _sync_folder(fd: int | None) -> None:
    """The rename itself survives a power cut only once the folder is on disk."""
    if fd is not None:
        with contextlib.suppress(OSError):
            os.fsync(fd)


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

    def _lease(fd: int, wait: float) -> bool:
        return False

    def _unlease(fd: int) -> None:
        return

else:
    import fcntl

    def _lock(fd: int, *, block: bool) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX if block else fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _lease(fd: int, wait: float) -> bool:
        """A read lease on `fd`, granted only once no process holds the file open for writing
        (Linux, fcntl(2) F_SETLEASE); False where there are no leases or `wait` ran out."""
        lease = getattr(fcntl, "F_SETLEASE", None)
        if lease is None:  # pragma: no cover - macOS and the BSDs have no leases
            return False
        end = time.monotonic() + wait
        while True:
            try:
                fcntl.fcntl(fd, lease, fcntl.F_RDLCK)
            except OSError:
                if time.monotonic() >= end:
                    return False
                time.sleep(0.001)
                continue
            return True

    def _unlease(fd: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
