"""The usage log: one row per lookup, kept in the state dir (unlike the index, not disposable).

Ledger, log and doctor read it back. Logging must never break the command it records. Beside
each lookup of a known session it keeps which units it printed (`served`), so that `brain prime`
never gives a session the same bullet twice, whoever gave it first (pack, find, MCP, prime).
A find's row says how sure its answer was (`evidence`): one where nothing stood out is a miss,
whatever weak lines it showed (`brain log`, `learn`, doctor's advice read it so).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from pathlib import Path

from brain import database
from brain.config import usage_log_path
from brain.errors import BrainError

LOG_VERSION = 3  # 2: the `served` table and the session index; 3: `evidence`

# How sure a find's answer was (brain.search.answer); "" in rows of other commands and of a log
# older than version 3, where a miss is a find that returned nothing.
STRONG, WEAK, NONE = "strong", "weak", "none"
MISSED = (WEAK, NONE)


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
    evidence: str = ""


COLUMNS = ("ts", "command", "caller", "session", "query", "entries", "bytes", "vault", "evidence")
_DEFAULTS = {"ts": "0.0", "entries": "0", "bytes": "0"}  # the rest default to ''
_CREATE = (
    # `evidence` has a default: a brain of log version 2 writes its rows without it.
    "CREATE TABLE IF NOT EXISTS events(ts REAL NOT NULL, command TEXT NOT NULL,"
    " caller TEXT NOT NULL, session TEXT NOT NULL, query TEXT NOT NULL, entries INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL, vault TEXT NOT NULL, evidence TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX IF NOT EXISTS events_ts ON events(ts)",
    "CREATE INDEX IF NOT EXISTS events_session ON events(session)",
    # A unit printed to a session: `unit_key` of a bullet or a note's paragraph.
    "CREATE TABLE IF NOT EXISTS served(ts REAL NOT NULL, session TEXT NOT NULL,"
    " vault TEXT NOT NULL, unit TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS served_session ON served(session, vault)",
)

_INSERT = f"INSERT INTO events({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"  # noqa: S608
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM events WHERE ts >= ? ORDER BY ts"  # noqa: S608


def connect(path: Path | None = None) -> sqlite3.Connection:
    """The log, created, migrated from an older version, or set aside and started again when it
    is not a database at all: reading or writing the log is never fatal."""
    path = path or usage_log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return _open(path)
        except sqlite3.DatabaseError:
            _set_aside(path)
            return _open(path)
    except (OSError, sqlite3.Error) as exc:  # the state dir is a file, or the log a folder
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise BrainError(
            f"cannot open the usage log {path}: {why}",
            "make the state dir writable, or point XDG_STATE_HOME at a writable folder",
        ) from exc


def _open(path: Path) -> sqlite3.Connection:
    conn = database.connect(path)
    try:
        # A usage row lost to a power cut costs nothing; a disk sync on every find costs ~10 ms.
        conn.execute("PRAGMA synchronous = OFF")
        if conn.execute("PRAGMA user_version").fetchone()[0] != LOG_VERSION:
            conn.execute("PRAGMA journal_mode = WAL")
            _migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")')]


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a log of another version to this one, keeping every row it can.

    A log whose columns are the start of this version's (version 2: no `evidence`) gets the
    others, empty. Version 0 is a log no brain stamped (or an unknown shape): its rows are copied
    column by column into the current table (a missing column gets its default) and the old
    table is dropped; rows that cannot be copied stay behind in a table named after the old
    version. A log from a newer brain whose table has every column this one needs is used as it
    is.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        cols = _columns(conn, "events")
        if version == LOG_VERSION or (version > LOG_VERSION and set(COLUMNS) <= set(cols)):
            conn.execute("COMMIT")
            return
        if cols and list(COLUMNS[: len(cols)]) == cols and len(cols) < len(COLUMNS):
            # A log of an older brain, whose columns are a start of this one's: add the others.
            for c in COLUMNS[len(cols) :]:  # constants; `evidence` is the one so far
                conn.execute(f"ALTER TABLE events ADD COLUMN {c} TEXT NOT NULL DEFAULT ''")
            for sql in _CREATE:
                conn.execute(sql)
        elif cols and cols[: len(COLUMNS)] != list(COLUMNS):
            old = f"events_v{version}"
            n = 1
            while _columns(conn, old):
                n += 1
                old = f"events_v{version}_{n}"
            conn.execute(f'ALTER TABLE events RENAME TO "{old}"')
            conn.execute("DROP INDEX IF EXISTS events_ts")
            conn.execute("DROP INDEX IF EXISTS events_session")
            for sql in _CREATE:
                conn.execute(sql)
            picks = ", ".join(
                f'coalesce("{c}", {_default(c)})' if c in cols else _default(c) for c in COLUMNS
            )
            conn.execute("SAVEPOINT copy")
            try:
                names = ", ".join(COLUMNS)  # constants; `old` is a table name of ours
                conn.execute(f'INSERT INTO events({names}) SELECT {picks} FROM "{old}"')  # noqa: S608
                conn.execute(f'DROP TABLE "{old}"')
                conn.execute("RELEASE copy")
            except sqlite3.DatabaseError:
                conn.execute("ROLLBACK TO copy")
                conn.execute("RELEASE copy")
        else:
            for sql in _CREATE:
                conn.execute(sql)
        conn.execute(f"PRAGMA user_version = {LOG_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _default(column: str) -> str:
    return _DEFAULTS.get(column, "''")


def _set_aside(path: Path) -> None:
    """Move a file that is not a usage log out of the way (kept beside it for a person to see)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for suffix in ("", "-wal", "-shm", "-journal"):
        src = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            src.replace(path.with_name(f"{path.name}.unreadable-{stamp}{suffix}"))


def vault_key(vault: Path) -> str:
    """The vault as the log stores it: its path, with bytes that are not UTF-8 as U+FFFD."""
    from brain.text import repair  # SQLite cannot store an undecodable path as it is

    return repair(str(vault))


def unit_key(path: str, line: int, handle: str) -> str:
    """What identifies a printed unit across commands: a bullet by its file and handle (an edit
    elsewhere in the file moves its line), a note's paragraph by its file and line."""
    from brain.vocab import handle_key

    return f"{path}#{handle_key(handle)}" if handle else f"{path}:{line}"


def record(
    command: str,
    caller: str,
    session: str,
    query: str,
    entries: int,
    nbytes: int,
    vault: Path,
    units: Sequence[str] = (),
    evidence: str = "",
) -> None:
    """Log one lookup; `units` (their `unit_key`s) are what it printed, kept for its session;
    `evidence` how sure its answer was (`STRONG`, `WEAK`, `NONE`; "" where nothing judged it)."""
    from brain.text import repair  # SQLite cannot store what argv holds undecodable

    who = (repair(caller), repair(session))
    event = Event(
        time.time(), command, *who, repair(query), entries, nbytes, vault_key(vault), evidence
    )
    with contextlib.suppress(OSError, sqlite3.Error, BrainError):
        conn = connect()
        try:
            conn.execute("BEGIN")
            conn.execute(_INSERT, astuple(event))
            if session and units:
                rows = [(event.ts, who[1], event.vault, repair(u)) for u in units]
                conn.executemany("INSERT INTO served VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        finally:
            conn.close()


@dataclass(frozen=True)
class SessionSoFar:
    """What one session has been given from one vault."""

    units: frozenset[str]  # unit keys printed by any lookup
    served: bool  # some lookup printed at least one unit
    hinted: bool  # prime printed its line about `brain find` and `brain recall`


HINT_QUERY = "(hint)"  # the query a prime's hint line is logged under


def so_far(session: str, vault: Path, log: Path | None = None) -> SessionSoFar:
    """What `session` was given from `vault` so far; nothing for an unknown session."""
    if not session:
        return SessionSoFar(frozenset(), served=False, hinted=False)
    from brain.text import repair

    key, sid = vault_key(vault), repair(session)
    conn = connect(log)
    try:
        units = frozenset(
            str(r[0])
            for r in conn.execute(
                "SELECT unit FROM served WHERE session = ? AND vault = ?", (sid, key)
            )
        )
        counts = conn.execute(
            "SELECT coalesce(sum(entries > 0), 0),"
            " coalesce(sum(command = 'prime' AND query = ?), 0)"
            " FROM events WHERE session = ? AND vault = ?",
            (HINT_QUERY, sid, key),
        ).fetchone()
    finally:
        conn.close()
    return SessionSoFar(units, served=bool(units) or counts[0] > 0, hinted=counts[1] > 0)


def events(conn: sqlite3.Connection, since: float = 0.0) -> list[Event]:
    rows = conn.execute(_SELECT, (since,)).fetchall()
    return [Event(*row) for row in rows]


# A logged find that is a miss, in SQL over `events`: nothing stood out (whatever weak lines it
# showed), or, in a row older than `evidence`, nothing was returned.
MISS_SQL = "(evidence IN ('weak', 'none') OR (evidence = '' AND entries = 0))"


def missed(event: Event) -> bool:
    """Whether a logged find is a miss (see MISS_SQL)."""
    return event.evidence in MISSED or (not event.evidence and event.entries == 0)
