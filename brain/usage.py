"""The usage log: one row per lookup, kept in the state dir (unlike the index, not disposable).

Ledger, log and doctor read it back. Logging must never break the command it records.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from dataclasses import astuple, dataclass
from pathlib import Path

from brain.config import usage_log_path

LOG_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events(
    ts REAL NOT NULL, command TEXT NOT NULL, caller TEXT NOT NULL, session TEXT NOT NULL,
    query TEXT NOT NULL, entries INTEGER NOT NULL, bytes INTEGER NOT NULL, vault TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_ts ON events(ts);
"""


@dataclass(frozen=True)
class Event:
    ts: float
    command: str
    caller: str
    session: str
    query: str
    entries: int
    bytes: int
    vault: str


def connect(path: Path | None = None) -> sqlite3.Connection:
    path = path or usage_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    # A usage row lost to a power cut costs nothing; a disk sync on every find costs ~10 ms.
    conn.execute("PRAGMA synchronous = OFF")
    if conn.execute("PRAGMA user_version").fetchone()[0] != LOG_VERSION:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(_SCHEMA)
        conn.execute(f"PRAGMA user_version = {LOG_VERSION}")
    return conn


def record(
    command: str, caller: str, session: str, query: str, entries: int, nbytes: int, vault: Path
) -> None:
    event = Event(time.time(), command, caller, session, query, entries, nbytes, str(vault))
    with contextlib.suppress(OSError, sqlite3.Error):
        conn = connect()
        try:
            conn.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?)", astuple(event))
        finally:
            conn.close()


def events(conn: sqlite3.Connection, since: float = 0.0) -> list[Event]:
    rows = conn.execute("SELECT * FROM events WHERE ts >= ? ORDER BY ts", (since,)).fetchall()
    return [Event(*row) for row in rows]
