"""transcripts.db: the turns of every enabled agent, ingested incrementally.

A turn is keyed by its agent's own id, so a session resumed into a new file inserts nothing twice.
A file is either wholly ingested up to its last complete line, or not at all: files are written
whole, several to a transaction (up to BATCH_FILES or BATCH_BYTES), with their offsets; a crash
rolls back the batch and the next sync reads those files again. Files are read and parsed outside
the transaction, in a worker thread a few files ahead of the writer; one that cannot be read is
skipped with a count and never aborts a batch. Append-only JSONL resumes from the byte offset
where the last read stopped (checked against the bytes just before it, so a rewritten file is read
again from the start).

Search indexes three columns per turn (FTS5, porter unicode61 remove_diacritics 2): the turn's
`body`, a `context` of its neighbouring turns and its session's `title`. Chat turns are short
("yes, last Saturday"); the neighbours carry what they are about. FTS5 automerge is 8 (default 4):
fewer segment merges while ingesting, for slightly slower queries (more segments to read).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from brain.errors import BrainError
from brain.index import transaction
from brain.recall.adapters import Adapter, Chunk, FileState, Turn, registry

SCHEMA_VERSION = 1
NEIGHBOURS = 2  # turns either side whose text goes into a turn's context column
NEIGHBOUR_CHARS = 300  # of each neighbour's body
PROGRESS_BYTES = 32 << 20  # a sync with this much to read shows a progress bar at a terminal
# Files are written several to a transaction (each file whole: a crash rolls back the batch,
# whose offsets were not committed either, so the next sync reads those files again).
BATCH_FILES = 50
BATCH_BYTES = 32 << 20
READ_AHEAD_FILES = 8  # files parsed ahead of the writer, at most
READ_AHEAD_BYTES = 64 << 20
SOURCES_FILE = "recall-sources"

Progress = Callable[[int, int], None]

_SCHEMA = """
CREATE TABLE files(
    path TEXT PRIMARY KEY, agent TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
    offset INTEGER NOT NULL, tail TEXT NOT NULL, state TEXT NOT NULL
);
CREATE TABLE sessions(
    agent TEXT NOT NULL, session TEXT NOT NULL, title TEXT NOT NULL, cwd TEXT NOT NULL,
    PRIMARY KEY(agent, session)
);
CREATE TABLE turns(
    id INTEGER PRIMARY KEY, agent TEXT NOT NULL, tid TEXT NOT NULL, session TEXT NOT NULL,
    ts TEXT NOT NULL, role TEXT NOT NULL, cwd TEXT NOT NULL, UNIQUE(tid, agent)
);
CREATE INDEX turns_session ON turns(agent, session, ts);
CREATE VIRTUAL TABLE fts USING fts5(
    body, context, title, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO fts(fts, rank) VALUES('automerge', 8);
"""


def db_path() -> Path:
    from brain.config import state_dir

    return state_dir() / "transcripts.db"


def sources_path() -> Path:
    from brain.config import config_dir

    return config_dir() / SOURCES_FILE


# -- opt-in ----------------------------------------------------------------------------------


def enabled() -> list[str]:
    """The agents the user opted in, one name a line in the config dir (not the vault)."""
    try:
        text = sources_path().read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise BrainError(
            f"cannot read {sources_path()}: {exc.strerror}", "fix its permissions or delete it"
        ) from exc
    known = registry()
    return [n for n in dict.fromkeys(line.strip() for line in text.splitlines()) if n in known]


def adapter(name: str) -> Adapter:
    known = registry()
    if name not in known:
        raise BrainError(f"no transcript adapter named {name!r}", f"use one of {', '.join(known)}")
    return known[name]


def set_enabled(name: str, on: bool) -> list[str]:
    adapter(name)
    names = [n for n in enabled() if n != name] + ([name] if on else [])
    path = sources_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    tmp.replace(path)
    return names


# -- the database ----------------------------------------------------------------------------


def connect(path: Path | None = None) -> sqlite3.Connection:
    """Open transcripts.db, creating it (or rebuilding it from nothing on a schema change)."""
    path = path or db_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=10, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 10000")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            conn.close()
            if version:  # another schema: the transcripts are still on disk, read them again
                path.unlink()
            conn = sqlite3.connect(path, timeout=10, isolation_level=None)
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MB: FTS5 segment merges on a big sync
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA wal_autocheckpoint = 10000")  # fewer disk syncs on a long sync
    except sqlite3.DatabaseError as exc:
        raise BrainError(
            f"{path}: {exc}", "delete it; `brain recall --sync` reads the transcripts again"
        ) from exc
    except OSError as exc:
        raise BrainError(f"cannot open {path}: {exc.strerror}", "check the state dir") from exc
    return conn


def forget(conn: sqlite3.Connection, agent: str) -> int:
    """Delete every turn, session and file record of one agent; returns the turns deleted."""
    with transaction(conn):
        ids = [r[0] for r in conn.execute("SELECT id FROM turns WHERE agent = ?", (agent,))]
        conn.executemany("DELETE FROM fts WHERE rowid = ?", ((i,) for i in ids))
        conn.execute("DELETE FROM turns WHERE agent = ?", (agent,))
        conn.execute("DELETE FROM sessions WHERE agent = ?", (agent,))
        conn.execute("DELETE FROM files WHERE agent = ?", (agent,))
    return len(ids)


# -- ingestion -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyncReport:
    agents: tuple[str, ...]
    full: bool
    files: int  # transcripts found
    read: int  # of those, read this time (new or changed)
    turns: int  # turns added
    skipped: int  # malformed lines, undecodable bytes, vanished files
    bytes: int  # bytes read
    ms: float


def _tail(data: bytes, end: int) -> str:
    return hashlib.sha1(data[max(0, end - 256) : end], usedforsecurity=False).hexdigest()


def sync(
    conn: sqlite3.Connection,
    agents: list[str],
    *,
    full: bool = False,
    progress: Progress | None = None,
) -> SyncReport:
    """Bring transcripts.db up to date with the transcripts on disk of these agents."""
    start = time.perf_counter()
    known = {row[0]: row[1:] for row in conn.execute("SELECT path, size, mtime FROM files")}
    todo: list[tuple[Adapter, Path, int, int]] = []
    found = skipped = 0
    for name in agents:
        ad = adapter(name)
        for path in ad.files():
            try:
                st = path.stat()
            except OSError:
                skipped += 1
                continue
            found += 1
            key = str(path)
            if full or known.get(key) != (st.st_size, st.st_mtime_ns):
                todo.append((ad, path, st.st_size, st.st_mtime_ns))
    total = sum(t[2] for t in todo)
    report = progress if progress is not None and total >= PROGRESS_BYTES else None
    saved = {row[0]: row[1:] for row in conn.execute("SELECT path, offset, tail, state FROM files")}
    added = nbytes = 0
    batch: list[tuple[Adapter, Path, _Read]] = []
    pending = 0

    def flush() -> None:
        nonlocal added, skipped, nbytes, pending
        with transaction(conn):
            done = [_write(conn, ad, path, got, full=full) for ad, path, got in batch]
        for n, bad, size in done:
            added += n
            skipped += bad
            nbytes += size
        batch.clear()
        pending = 0
        if report:
            report(nbytes, total)

    for ad, path, got in _read_ahead(todo, saved, full):
        if got is None:  # gone since it was listed (FileNotFoundError), or unreadable
            skipped += 1
            continue
        batch.append((ad, path, got))
        pending += len(got.data) - got.start
        if len(batch) >= BATCH_FILES or pending >= BATCH_BYTES:
            flush()
    if batch:
        flush()
    ms = round((time.perf_counter() - start) * 1000, 1)
    return SyncReport(tuple(agents), full, found, len(todo), added, skipped, nbytes, ms)


def _read_ahead(
    todo: list[tuple[Adapter, Path, int, int]],
    saved: dict[str, tuple[int, str, str]],
    full: bool,
) -> Iterator[tuple[Adapter, Path, _Read | None]]:
    """Read and parse the files in a worker thread a few files ahead of the writer: parsing holds
    the GIL, SQLite (tokenizing, writing pages) releases it, so the two overlap on two cores.
    Yields None for a file that could not be read."""

    def one(ad: Adapter, path: Path) -> _Read | None:
        try:
            return _read(ad, path, saved.get(str(path)), full)
        except OSError:
            return None

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-read") as pool:
        window: deque[tuple[Adapter, Path, int, Future[_Read | None]]] = deque()
        ahead = 0
        for ad, path, size, _mtime in todo:
            window.append((ad, path, size, pool.submit(one, ad, path)))
            ahead += size
            while window and (len(window) > READ_AHEAD_FILES or ahead > READ_AHEAD_BYTES):
                ad0, path0, size0, fut = window.popleft()
                ahead -= size0
                yield ad0, path0, fut.result()
        while window:
            ad0, path0, _size0, fut = window.popleft()
            yield ad0, path0, fut.result()


@dataclass(frozen=True)
class _Read:
    st: os.stat_result
    data: bytes
    start: int
    chunk: Chunk


def _saved(conn: sqlite3.Connection, path: Path) -> tuple[int, str, str] | None:
    row = conn.execute("SELECT offset, tail, state FROM files WHERE path = ?", (str(path),))
    return row.fetchone()  # type: ignore[no-any-return]


def _read(ad: Adapter, path: Path, row: tuple[int, str, str] | None, full: bool) -> _Read:
    """Read one transcript and parse it from where the last read stopped (no database use)."""
    with path.open("rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    start, state = 0, FileState()
    if row and ad.append_only and not full:
        offset, tail, saved = row
        if 0 < offset <= len(data) and _tail(data, offset) == tail:
            start = offset
            state = FileState(**json.loads(saved))
    return _Read(st, data, start, ad.read(path, data, start, state))


def ingest_file(
    conn: sqlite3.Connection, ad: Adapter, path: Path, *, full: bool = False
) -> tuple[int, int, int]:
    """Read one transcript (from where the last read stopped, when its format allows) and store
    its new turns in one transaction. Returns (turns added, lines skipped, bytes read)."""
    got = _read(ad, path, _saved(conn, path), full)
    with transaction(conn):
        return _write(conn, ad, path, got, full=full)


def _write(
    conn: sqlite3.Connection, ad: Adapter, path: Path, got: _Read, *, full: bool
) -> tuple[int, int, int]:
    """Store what one read of a transcript found (the caller holds the transaction)."""
    st, data, start, chunk = got.st, got.data, got.start, got.chunk
    added = 0
    if chunk.titled:
        added = _store(conn, ad, chunk.turns, chunk.state, full=full)
        end = chunk.end
    else:
        end = 0  # not a conversation (yet): read it whole again when it changes
    st_state = json.dumps(
        {
            "session": chunk.state.session,
            "title": chunk.state.title,
            "cwd": chunk.state.cwd,
            "extra": chunk.state.extra,
        }
    )
    conn.execute(
        "INSERT OR REPLACE INTO files(path, agent, size, mtime, offset, tail, state)"
        " VALUES (?,?,?,?,?,?,?)",
        (str(path), ad.name, st.st_size, st.st_mtime_ns, end, _tail(data, end), st_state),
    )
    return added, chunk.skipped, len(data) - start


def _store(
    conn: sqlite3.Connection, ad: Adapter, turns: list[Turn], state: FileState, *, full: bool
) -> int:
    """Insert the turns this file adds and index them with their neighbours as context.

    Bulk-shaped: the turns already stored are looked up in batches, the new ones get the rowids
    SQLite would give them (max + 1, ...) and are written with executemany."""
    fresh: dict[int, Turn] = {}
    changed: set[int] = set()
    sessions: dict[str, str] = {}
    stored: dict[str, int] = {}
    ids = list(dict.fromkeys(t.id for t in turns))
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        sql = f"SELECT tid, id FROM turns WHERE agent = ? AND tid IN ({marks})"  # noqa: S608
        stored.update(conn.execute(sql, [ad.name, *part]))
    next_id = (conn.execute("SELECT max(id) FROM turns").fetchone()[0] or 0) + 1
    rows: list[tuple[int, str, str, str, str, str, str]] = []
    seen: set[str] = set()
    for turn in turns:
        sessions.setdefault(turn.session, "")
        if turn.id in seen:  # twice in one file: the first one stands
            continue
        seen.add(turn.id)
        rid = stored.get(turn.id)
        if rid is None:
            rows.append((next_id, ad.name, turn.id, turn.session, turn.ts, turn.role, state.cwd))
            fresh[next_id] = turn
            next_id += 1
        elif not ad.append_only:  # a rewritten document may have edited a turn in place
            (body,) = conn.execute("SELECT body FROM fts WHERE rowid = ?", (rid,)).fetchone()
            if body != turn.body:
                conn.execute("DELETE FROM fts WHERE rowid = ?", (rid,))
                fresh[rid] = turn
                changed.add(rid)
    conn.executemany(
        "INSERT INTO turns(id, agent, tid, session, ts, role, cwd) VALUES (?,?,?,?,?,?,?)", rows
    )
    if not state.session and turns:
        state.session = turns[0].session
    sessions.setdefault(state.session, "")
    for session in sessions:
        old = conn.execute(
            "SELECT title FROM sessions WHERE agent = ? AND session = ?", (ad.name, session)
        ).fetchone()
        if old is None or old != (state.title,):
            conn.execute(
                "INSERT OR REPLACE INTO sessions(agent, session, title, cwd) VALUES (?,?,?,?)",
                (ad.name, session, state.title, state.cwd),
            )
        retitled = full or (old is not None and old[0] != state.title)
        _index(conn, ad.name, session, state.title, fresh, retitled)
    return len(fresh) - len(changed)


def _index(
    conn: sqlite3.Connection,
    agent: str,
    session: str,
    title: str,
    fresh: dict[int, Turn],
    retitled: bool,
) -> None:
    order = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM turns WHERE agent = ? AND session = ? ORDER BY ts, id", (agent, session)
        )
    ]
    size = len(order)
    mine = [i for i, rid in enumerate(order) if rid in fresh]
    if not mine and not retitled:
        return
    touched: range | list[int]
    need: range | set[int]
    if retitled:
        touched = need = range(size)
    else:
        touched_set = {
            j for i in mine for j in range(max(0, i - NEIGHBOURS), min(size, i + NEIGHBOURS + 1))
        }
        need = {
            j
            for i in touched_set
            for j in range(max(0, i - NEIGHBOURS), min(size, i + NEIGHBOURS + 1))
        }
        touched = sorted(touched_set)
    bodies: dict[int, str] = {rid: t.body for rid, t in fresh.items()}
    missing = [order[j] for j in need if order[j] not in bodies]
    for start in range(0, len(missing), 500):
        part = missing[start : start + 500]
        marks = ",".join("?" * len(part))
        sql = f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})"  # noqa: S608 - placeholders
        bodies.update(conn.execute(sql, part))
    clipped = {j: bodies.get(order[j], "")[:NEIGHBOUR_CHARS] for j in need}
    inserts: list[tuple[int, str, str, str]] = []
    updates: list[tuple[str, str, int]] = []
    for i in touched:
        rid = order[i]
        context = "\n".join(
            [clipped[j] for j in range(max(0, i - NEIGHBOURS), i)]
            + [clipped[j] for j in range(i + 1, min(size, i + NEIGHBOURS + 1))]
        )
        if rid in fresh:
            inserts.append((rid, bodies[rid], context, title))
        else:
            updates.append((context, title, rid))
    conn.executemany("INSERT INTO fts(rowid, body, context, title) VALUES (?,?,?,?)", inserts)
    conn.executemany("UPDATE fts SET context = ?, title = ? WHERE rowid = ?", updates)
