"""The last line of defence: a short crash report in the state dir instead of a traceback."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence


def crash_report(exc: BaseException, args: Sequence[str] | None = None) -> str:
    """Write the traceback to a new file in the state dir's `crashes/`; returns its path. Never
    raises: it runs when something already went wrong, and argv or the error may hold bytes
    that are not UTF-8 (escaped here). Each report gets its own file, even two in one second."""
    try:
        import traceback

        from brain.config import state_dir

        argv = sys.argv[1:] if args is None else args
        body = "argv: " + " ".join(argv) + "\n" + "".join(traceback.format_exception(exc))
        data = body.encode("utf-8", "backslashreplace")
        folder = state_dir() / "crashes"
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("crash-%Y%m%d-%H%M%S")
        for n in range(1, 1000):
            path = folder / (f"{stamp}.txt" if n == 1 else f"{stamp}-{n}.txt")
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return str(path)
    except Exception:  # noqa: S110 - the report is a courtesy; the error line is still printed
        pass
    return "(the crash report could not be written)"


def log_line(name: str, exc: BaseException) -> str:
    """One line for `exc` in the state dir's `logs/<name>.log` (a hook's errors: prime, pack and
    settle never tell the agent, whose hook must not fail); returns the line. Never raises."""
    try:
        from brain.text import sanitized

        line = sanitized(f"{type(exc).__name__}: {exc}")
    except Exception:
        line = type(exc).__name__
    try:
        from brain.config import state_dir

        folder = state_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except Exception:  # noqa: S110 - the log is a courtesy; the hook stays out of the way
        pass
    return line
