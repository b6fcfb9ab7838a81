"""The page `brain desk` opens the browser on: a file readable by its owner only that sends the
browser on to the desk's tokened URL.

A browser started with the URL on its command line shows the token to every local user (`ps`,
/proc/PID/cmdline), and with it anyone could read the desk and approve proposals. So, as Jupyter
does (jupyter_server/serverapp.py: `use_redirect_file`, the `jpserver-PID-open.html` file in its
runtime dir), the browser gets the path of a file created 0600 in brain's state dir (0700) whose
meta refresh carries the token; the file is removed when the desk stops, and a desk that was
killed leaves its file to the next one to remove.
"""

from __future__ import annotations

import contextlib
import html
import os
import threading
from collections.abc import Callable
from pathlib import Path

from brain.config import state_dir
from brain.errors import BrainError

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url={url}">
<title>brain desk</title>
</head>
<body><p>Opening <a href="{url}" rel="noreferrer">brain desk</a>…</p></body>
</html>
"""


def folder() -> Path:
    return state_dir() / "desk"


def _sweep(where: Path) -> None:
    """Remove the pages of desks that are gone (killed before they could remove their own)."""
    if os.name != "posix":
        return  # on Windows os.kill(pid, 0) ends the process rather than probing it
    for page in where.glob("desk-*.html"):
        pid = page.stem.removeprefix("desk-")
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:  # no such process: its desk is gone
            with contextlib.suppress(OSError):
                page.unlink()
        except OSError:
            continue  # alive


def write(url: str) -> Path:
    """This desk's page, readable by its owner only from the moment it exists, leading to `url`."""
    where = folder()
    page = where / f"desk-{os.getpid()}.html"
    try:
        where.mkdir(mode=0o700, exist_ok=True)
        if where.stat().st_mode & 0o077:
            where.chmod(0o700)
        _sweep(where)
        with contextlib.suppress(FileNotFoundError):
            page.unlink()  # a dead desk's under this pid: never write through what is there
        fd = os.open(
            page, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(PAGE.format(url=html.escape(url, quote=True)))
    except OSError as exc:
        remove(page)
        raise BrainError(
            f"cannot write the desk's start page in {where}: {exc.strerror}",
            "make brain's state folder writable, or set XDG_STATE_HOME to one that is",
        ) from None
    return page


def remove(page: Path) -> None:
    with contextlib.suppress(OSError):
        page.unlink()


def open_browser(page: Path, failed: Callable[[], object]) -> None:
    """Open `page` in the user's browser (webbrowser: $BROWSER, else the desktop's) from a
    thread, as Jupyter does: a browser command that waits until the browser closes never holds
    up the server; `failed` runs when no browser could be started."""

    def run() -> None:
        import webbrowser

        try:
            opened = webbrowser.open(page.as_uri())
        except webbrowser.Error:
            opened = False
        if not opened:
            failed()

    threading.Thread(target=run, name="brain-desk-browser", daemon=True).start()
