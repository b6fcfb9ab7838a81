"""Once per session: a mark in the state dir per session of an agent, for a hook that must act
once (settle asks once; pack answers one moment once though VS Code runs it from two configs and
every matcher group).

A mark is an empty file named by a hash of the session id under `<state dir>/<kind>/`, made
atomically (O_EXCL), so that of two hooks racing only one acts. Marks not touched for KEEP_DAYS
are forgotten. Hot path: standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

KEEP_DAYS = 30  # a session's mark is forgotten after this long


def folder(kind: str) -> Path:
    from brain.config import state_dir

    return state_dir() / kind


def path(kind: str, session: str) -> Path:
    return folder(kind) / hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:32]


def made(kind: str, session: str) -> bool:
    return path(kind, session).exists()


def make(kind: str, session: str, fresh_for: float | None = None) -> bool:
    """Mark the session; False when it was marked already (another hook got there first). With
    `fresh_for`, a mark older than that many seconds is an earlier moment's: it is renewed and
    this one counts as first."""
    where = path(kind, session)
    where.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        if fresh_for is None:
            return False
        try:
            if time.time() - where.stat().st_mtime < fresh_for:
                return False
            os.utime(where)
        except OSError:
            return False
        return True
    prune(where.parent)
    return True


def prune(where: Path) -> None:
    """Forget the sessions not seen for KEEP_DAYS (their marks and what was kept beside them)."""
    cutoff = time.time() - KEEP_DAYS * 86400
    with contextlib.suppress(OSError):
        for old in where.iterdir():
            if old.stat().st_mtime < cutoff:
                old.unlink()
