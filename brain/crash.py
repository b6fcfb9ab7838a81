"""The last line of defence: a short crash report in the state dir instead of a traceback."""

from __future__ import annotations

import contextlib
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


LOG_MAX = 256 * 1024  # bytes of one log in logs/; past it the log moves to NAME.log.1
HOOKS_LOG = "hooks"  # logs/hooks.log: a line per run of pack, prime and settle


def hook_run(hook: str, harness: str, session: str, what: str) -> str:
    """The hooks' log line of one run: which hook, for which program and session (its first
    8 characters), and what came of it (what it served, or why nothing)."""
    return f"{hook} {harness or '-'} session={session[:8] or '-'}: {what}"


def log_line(name: str, exc: BaseException) -> str:
    """One line for `exc` in the state dir's `logs/<name>.log` (a hook's errors: prime, pack and
    settle never tell the agent, whose hook must not fail); returns the line. Never raises."""
    return log_text(name, f"{type(exc).__name__}: {exc}")


def log_text(name: str, text: str) -> str:
    """`text` as one stamped line in the state dir's `logs/<name>.log`; returns the line. A log
    past LOG_MAX moves to `<name>.log.1` (the one before is dropped): the hooks log at every
    prompt and stop, and a log read to debug one must not grow for ever. Never raises."""
    try:
        from brain.text import sanitized

        line = sanitized(text)
    except Exception:
        line = text.split(":", 1)[0]
    try:
        from brain.config import state_dir

        folder = state_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.log"
        with contextlib.suppress(OSError):
            if path.stat().st_size >= LOG_MAX:
                path.replace(path.with_name(f"{name}.log.1"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
    except Exception:  # noqa: S110 - the log is a courtesy; the hook stays out of the way
        pass
    return line
