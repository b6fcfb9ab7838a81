"""A file read only when it is a regular one: the one reader of brain's own settings files and the
vault's (brain.files re-exports it). Builtin modules only, so brain.settings, below every other
module, may read with it (an import of brain.files there closed a cycle through brain.text)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

NOT_REGULAR = "not a regular file (a pipe, a socket or a device)"  # one wording, every reader


def read_regular(path: Path) -> bytes:
    """A file's bytes, refusing anything but a regular file (through links): a pipe nobody writes
    to would block the read for ever, a device such as /dev/zero never end. Opened without
    blocking, so a pipe is refused before it is waited on. An OSError, as any read's."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        return fh.read()
