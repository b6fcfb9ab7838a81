"""transcripts.db: the turns of every enabled agent, ingested incrementally.

A turn is keyed by its agent's own id, so a session resumed into a new file inserts nothing twice.
A file is either wholly ingested up to its last complete line, or not at all: files are written
whole, several to a transaction (up to BATCH_FILES or BATCH_BYTES), with their offsets; a crash
rolls back the batch and the next sync reads those files again. Files are read and parsed outside
the transaction, in a worker thread a few files ahead of the writer; one that cannot be read is
skipped with a count and never aborts a batch. Append-only JSONL resumes from the byte offset
where the last read stopped (checked against the bytes just before it, so a rewritten file is read
again from the start).

Search indexes two columns per turn (FTS5, porter unicode61 remove_diacritics 2): the turn's
`body` and its session's `title`, so each turn's text is tokenized once. A turn's `pos` is its
session's id times 2**32 plus its place in the session (in the order of time): a query brings in
the words of the turns around a match at pos - 1, pos + 1, ... (see brain.recall.search). Rows
reach FTS5 in rowid order (a lower rowid makes it write out its pending terms as one more
segment). FTS5 automerge is 8 (default 4): fewer segment merges while ingesting, for slightly
slower queries (more segments to read).
"""

from __future__ import annotations

import functools
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
from typing import cast

from brain import database
from brain.errors import BrainError
from brain.index import transaction
from brain.recall import SOURCES, SYNC, enable_command
from brain.recall.adapters import Adapter, Chunk, FileState, Turn, Virtual
from brain.recall.adapters.known import registry
from brain.text import has_surrogates

SCHEMA_VERSION = 3  # 2: no context column; neighbours at query time through turns.pos; 3: calls
SPAN = 1 << 32  # turns.pos of a session's turns: its id * SPAN + 0, 1, 2, ...
PROGRESS_BYTES = 32 << 20  # a sync with this much to read shows a progress bar at a terminal
# Files are written several to a transaction (each file whole: a crash rolls back the batch,
# whose offsets were not committed either, so the next sync reads those files again).
BATCH_FILES = 50
BATCH_BYTES = 32 << 20
READ_AHEAD_FILES = 8  # files parsed ahead of the writer, at most
READ_AHEAD_BYTES = 64 << 20
# Bytes read of one transcript at a time: a longer one (a session of months, or a sparse or
# runaway file of gigabytes) is read in pieces of this, each resuming where the last stopped,
# so memory stays bounded whatever size a file another program wrote has.
READ_MAX = 256 << 20
SOURCES_FILE = "recall-sources"

Progress = Callable[[int, int], None]

_SCHEMA = """
CREATE TABLE files(
    path TEXT PRIMARY KEY, agent TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
    offset INTEGER NOT NULL, tail TEXT NOT NULL, state TEXT NOT NULL
);
CREATE TABLE sessions(
    id INTEGER PRIMARY KEY, agent TEXT NOT NULL, session TEXT NOT NULL, title TEXT NOT NULL,
    cwd TEXT NOT NULL, UNIQUE(agent, session)
);
CREATE TABLE turns(
    id INTEGER PRIMARY KEY, agent TEXT NOT NULL, tid TEXT NOT NULL, session TEXT NOT NULL,
    pos INTEGER NOT NULL, ts TEXT NOT NULL, role TEXT NOT NULL, cwd TEXT NOT NULL,
    UNIQUE(tid, agent)
);
CREATE INDEX turns_pos ON turns(pos);
CREATE INDEX turns_ts ON turns(ts);
CREATE TABLE calls(
    id INTEGER PRIMARY KEY, agent TEXT NOT NULL, cid TEXT NOT NULL, n INTEGER NOT NULL,
    session TEXT NOT NULL, turn TEXT NOT NULL, ts TEXT NOT NULL, cwd TEXT NOT NULL,
    kind TEXT NOT NULL, tool TEXT NOT NULL, text TEXT NOT NULL,
    ok INTEGER, code INTEGER, output TEXT NOT NULL DEFAULT '',
    UNIQUE(agent, cid, n)
);
CREATE INDEX calls_ts ON calls(ts);
CREATE INDEX calls_session ON calls(agent, session);
CREATE VIRTUAL TABLE fts USING fts5(
    body, title, tokenize = 'porter unicode61 remove_diacritics 2'
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


def need_enabled() -> list[str]:
    """The agents whose transcripts recall reads; a BrainError with the next step when none."""
    names = enabled()
    if not names:
        raise BrainError(
            "no transcripts are enabled for recall",
            f"opt in with `{enable_command('claude')}`; `{SOURCES}` lists the agents",
        )
    return names


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
        conn = database.connect(path)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            conn.close()
            if version:  # another schema: the transcripts are still on disk, read them again
                for stale in (path, *(path.with_name(path.name + x) for x in ("-wal", "-shm"))):
                    stale.unlink(missing_ok=True)
            conn = database.connect(path)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MB: FTS5 segment merges on a big sync
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA wal_autocheckpoint = 10000")  # fewer disk syncs on a long sync
    except sqlite3.DatabaseError as exc:
        raise BrainError(
            f"{path}: {exc}", f"delete it; `{SYNC}` reads the transcripts again"
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
        conn.execute("DELETE FROM calls WHERE agent = ?", (agent,))
        conn.execute("DELETE FROM files WHERE agent = ?", (agent,))
    return len(ids)


# -- ingestion -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyncReport:
    agents: tuple[str, ...]
    full: bool
    file_count: int  # transcripts found
    read: int  # of those, read this time (new or changed)
    turn_count: int  # turns added
    skipped_count: int  # malformed lines, undecodable bytes, vanished files
    bytes: int  # bytes read
    ms: float


# The bytes before a stored offset whose hash tells the file is the one read (not rewritten):
# a resumed read starts this far before the offset.
TAIL_BYTES = 256


def _tail(data: bytes, end: int) -> str:
    return hashlib.sha1(data[max(0, end - TAIL_BYTES) : end], usedforsecurity=False).hexdigest()


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
            if has_surrogates(str(path)):  # a name that is not UTF-8: SQLite cannot key it
                skipped += 1
                continue
            try:
                size, mtime = _signature(ad, path)
            except OSError:
                skipped += 1
                continue
            found += 1
            key = str(path)
            if full or known.get(key) != (size, mtime):
                todo.append((ad, path, size, mtime))
    total, listed = sum(t[2] for t in todo), len(todo)
    report = progress if progress is not None and total >= PROGRESS_BYTES else None
    saved = _offsets(conn)
    added = nbytes = 0
    batch: list[tuple[Adapter, Path, _Read]] = []
    pending = 0

    def flush() -> None:
        nonlocal added, skipped, nbytes, pending
        with transaction(conn):
            done = [_write(conn, ad, path, got) for ad, path, got in batch]
        for n, bad, size in done:
            added += n
            skipped += bad
            nbytes += size
        batch.clear()
        pending = 0
        if report:
            report(nbytes, total)

    while todo:
        more: list[tuple[Adapter, Path, int, int]] = []  # read to READ_MAX: the rest next
        for ad, path, got in _read_ahead(todo, saved, full):
            if got is None:  # gone since it was listed (FileNotFoundError), or unreadable
                skipped += 1
                continue
            batch.append((ad, path, got))
            pending += got.size
            if got.more:
                more.append((ad, path, got.size, 0))
            if len(batch) >= BATCH_FILES or pending >= BATCH_BYTES:
                flush()
        if batch:
            flush()
        # each piece is committed with its offset: the next resumes from it
        todo, full, saved = more, False, _offsets(conn) if more else saved
    ms = round((time.perf_counter() - start) * 1000, 1)
    return SyncReport(tuple(agents), full, found, listed, added, skipped, nbytes, ms)


def _offsets(conn: sqlite3.Connection) -> dict[str, tuple[int, str, str]]:
    """Where each transcript's last read stopped: path -> (offset, tail, state)."""
    rows = conn.execute("SELECT path, offset, tail, state FROM files")
    return {row[0]: row[1:] for row in rows}


def _read_ahead(
    todo: list[tuple[Adapter, Path, int, int]],
    saved: dict[str, tuple[int, str, str]],
    full: bool,
) -> Iterator[tuple[Adapter, Path, _Read | None]]:
    """Read and parse the files in a worker thread a few files ahead of the writer. Reading a
    file overlaps with the writer's SQLite work (both release the GIL); parsing hardly does, as
    the writer takes the GIL back for every row it binds (measured: no faster than reading
    in line once rows reach FTS5 in rowid order). Yields None for a file that could not be
    read."""

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


@functools.cache
def _virtual(kind: type) -> bool:
    """Whether an adapter class loads its own sessions (asked once: a runtime Protocol check
    costs 30 µs, twice a file on every sync)."""
    return issubclass(kind, Virtual)


def _signature(ad: Adapter, path: Path) -> tuple[int, int]:
    """(size, mtime_ns) of a transcript, or what the adapter has stand for them."""
    if _virtual(type(ad)):
        return cast("Virtual", ad).signature(path)
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _load(ad: Adapter, path: Path, base: int = 0) -> tuple[tuple[int, int], bytes]:
    """A transcript's signature (as read with it) and its bytes from `base`, READ_MAX at most
    (past the end of the file: none)."""
    if _virtual(type(ad)):
        own = cast("Virtual", ad)
        return own.signature(path), own.load(path)[base:]
    with path.open("rb") as fh:
        st = os.fstat(fh.fileno())
        fh.seek(base)
        return (st.st_size, st.st_mtime_ns), fh.read(READ_MAX)


@dataclass(frozen=True)
class _Read:
    st: tuple[int, int]  # the (size, mtime_ns) stored, to tell the next change
    size: int  # bytes read (from `start`)
    end: int  # the offset stored: where the next read starts (0: read it whole again)
    tail: str  # hash of the bytes just before `end`
    chunk: Chunk
    more: bool = False  # read to READ_MAX and moved on: the file's rest is to read now


def _saved(conn: sqlite3.Connection, path: Path) -> tuple[int, str, str] | None:
    row = conn.execute("SELECT offset, tail, state FROM files WHERE path = ?", (str(path),))
    return row.fetchone()  # type: ignore[no-any-return]


def _read(ad: Adapter, path: Path, row: tuple[int, str, str] | None, full: bool) -> _Read:
    """Read one transcript and parse it from where the last read stopped (no database use):
    only the bytes from there on (and the TAIL_BYTES before, to tell that the file is the same), at
    most READ_MAX of them."""
    start, state, base = 0, FileState(), 0
    if row and not full and row[0] > 0:  # an offset of 0 (a document read whole) never resumes
        base = max(0, row[0] - TAIL_BYTES)
    st, data = _load(ad, path, base)
    if row and not full and row[0] > 0:
        offset, tail, saved = row
        if 0 < offset - base <= len(data) and _tail(data, offset - base) == tail:
            start = offset - base
            state = FileState(**json.loads(saved))
        elif base:  # rewritten since: read again from its start
            base = 0
            st, data = _load(ad, path)
    chunk = ad.read(path, data, start, state)
    end = base + chunk.end if chunk.titled and chunk.end else 0  # 0: not a conversation (yet)
    # A piece cut at READ_MAX that got somewhere is followed by the next (its size stored as
    # what was read, so a sync stopped in between reads on next time); one that got nowhere (a
    # line longer than READ_MAX, a document that size) waits until the file changes.
    more = base + len(data) < st[0] and end > base + start
    if more:
        st = (base + len(data), st[1])
    tail = _tail(data, end - base) if end else _tail(data, 0)
    return _Read(st, len(data) - start, end, tail, chunk, more)


def ingest_file(
    conn: sqlite3.Connection, ad: Adapter, path: Path, *, full: bool = False
) -> tuple[int, int, int]:
    """Read one transcript (from where the last read stopped, when its format allows) and store
    its new turns in one transaction. Returns (turns added, lines skipped, bytes read)."""
    got = _read(ad, path, _saved(conn, path), full)
    with transaction(conn):
        return _write(conn, ad, path, got)


def _write(conn: sqlite3.Connection, ad: Adapter, path: Path, got: _Read) -> tuple[int, int, int]:
    """Store what one read of a transcript found (the caller holds the transaction)."""
    chunk = got.chunk
    added = _store(conn, ad, chunk) if chunk.titled else 0
    if chunk.titled:
        _store_calls(conn, ad.name, chunk)
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
        (str(path), ad.name, *got.st, got.end, got.tail, st_state),
    )
    return added, chunk.skipped, got.size


def _store(conn: sqlite3.Connection, ad: Adapter, chunk: Chunk) -> int:
    """Insert the turns this file adds, each with its place in its session, and index them.
    Returns how many were new."""
    turns, state = chunk.turns, chunk.state
    fresh, edited = _sort_out(conn, ad, turns, chunk.rewrites)
    if not state.session and turns:
        state.session = turns[0].session
    fresh.setdefault(state.session, [])
    rows: list[tuple[int, str, str, str, int, str, str, str]] = []
    texts: list[tuple[int, str, str]] = []
    late: list[int] = []  # sessions given a turn older than one already stored
    for session, new in fresh.items():
        old = conn.execute(
            "SELECT id, title FROM sessions WHERE agent = ? AND session = ?", (ad.name, session)
        ).fetchone()
        if old is None:
            cur = conn.execute(
                "INSERT INTO sessions(agent, session, title, cwd) VALUES (?,?,?,?)",
                (ad.name, session, state.title, state.cwd),
            )
            sid = int(cur.lastrowid or 0)  # an INSERT into a rowid table always sets it
        else:
            sid = old[0]
            if old[1] != state.title:  # every turn of the session carries its title
                conn.execute(
                    "UPDATE sessions SET title = ?, cwd = ? WHERE id = ?",
                    (state.title, state.cwd, sid),
                )
                _retitle(conn, sid, state.title)
        if not new:
            continue
        last = conn.execute(
            "SELECT pos, ts FROM turns WHERE pos BETWEEN ? AND ? ORDER BY pos DESC LIMIT 1",
            (sid * SPAN, sid * SPAN + SPAN - 1),
        ).fetchone()
        pos, after = (last[0] + 1, last[1]) if last else (sid * SPAN, "")
        new.sort(key=lambda it: (it[1].ts, it[0]))
        for rid, t in new:
            rows.append((rid, ad.name, t.id, session, pos, t.ts, t.role, state.cwd))
            texts.append((rid, t.body, state.title))
            pos += 1
        if new[0][1].ts < after:  # earlier than a turn already stored: renumber the session
            late.append(sid)
    conn.executemany("DELETE FROM fts WHERE rowid = ?", [(rid,) for rid, _ in edited])
    conn.executemany(
        "INSERT INTO turns(id, agent, tid, session, pos, ts, role, cwd) VALUES (?,?,?,?,?,?,?,?)",
        rows,
    )
    # In rowid order: FTS5 writes its pending terms out as a new segment whenever a rowid is
    # lower than the last one, and a sync would then leave thousands of tiny segments to merge.
    texts.sort()
    texts[:0] = sorted((rid, t.body, state.title) for rid, t in edited)
    conn.executemany("INSERT INTO fts(rowid, body, title) VALUES (?,?,?)", texts)
    for sid in late:
        order = conn.execute(
            "SELECT id FROM turns WHERE pos BETWEEN ? AND ? ORDER BY ts, id",
            (sid * SPAN, sid * SPAN + SPAN - 1),
        ).fetchall()
        renumbered = [(sid * SPAN + i, rid) for i, (rid,) in enumerate(order)]
        conn.executemany("UPDATE turns SET pos = ? WHERE id = ?", renumbered)
    return len(rows)


def _sort_out(
    conn: sqlite3.Connection, ad: Adapter, turns: list[Turn], rewrites: bool
) -> tuple[dict[str, list[tuple[int, Turn]]], list[tuple[int, Turn]]]:
    """The turns not stored yet, by session in file order, each with the rowid SQLite would give
    it (max + 1, ...); and those stored with another body (a rewritten document). Bulk-shaped:
    the turns already stored are looked up in batches."""
    stored: dict[str, int] = {}
    ids = list(dict.fromkeys(t.id for t in turns))
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        sql = f"SELECT tid, id FROM turns WHERE agent = ? AND tid IN ({marks})"  # noqa: S608
        stored.update(conn.execute(sql, [ad.name, *part]))
    next_id = (conn.execute("SELECT max(id) FROM turns").fetchone()[0] or 0) + 1
    fresh: dict[str, list[tuple[int, Turn]]] = {}
    edited: list[tuple[int, Turn]] = []
    seen: set[str] = set()
    for turn in turns:
        fresh.setdefault(turn.session, [])
        if turn.id in seen:  # twice in one file: the first one stands
            continue
        seen.add(turn.id)
        rid = stored.get(turn.id)
        if rid is None:
            fresh[turn.session].append((next_id, turn))
            next_id += 1
        elif rewrites:  # an agent that rewrites its messages may have edited this one
            (body,) = conn.execute("SELECT body FROM fts WHERE rowid = ?", (rid,)).fetchone()
            if body != turn.body:
                edited.append((rid, turn))
    return fresh, edited


def _retitle(conn: sqlite3.Connection, sid: int, title: str) -> None:
    ids = conn.execute(
        "SELECT id FROM turns WHERE pos BETWEEN ? AND ?", (sid * SPAN, sid * SPAN + SPAN - 1)
    ).fetchall()
    conn.executemany("UPDATE fts SET title = ? WHERE rowid = ?", [(title, i) for (i,) in ids])


def _store_calls(conn: sqlite3.Connection, agent: str, chunk: Chunk) -> None:
    """Insert the tool calls a read found (once: keyed by the agent's call id), each with its
    outcome when the read holds it too (the usual case), and record how calls stored by an
    earlier read ended."""
    ended: dict[str, tuple[int | None, int | None, str]] = {}
    for o in chunk.outcomes:  # a later report fills in what an earlier one left unknown
        ok, code, output = ended.get(o.id, (None, None, ""))
        ended[o.id] = (
            ok if o.ok is None else int(o.ok),
            code if o.code is None else o.code,
            o.output or output,
        )
    conn.executemany(  # a call read again (a rewritten document) may have ended since
        "INSERT INTO calls(agent, cid, n, session, turn, ts, cwd, kind, tool, text, ok, code,"
        " output) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(agent, cid, n) DO UPDATE SET"
        " ok = coalesce(excluded.ok, ok), code = coalesce(excluded.code, code),"
        " output = CASE WHEN excluded.output = '' THEN output ELSE excluded.output END",
        [
            (
                agent,
                c.id,
                c.n,
                c.session,
                c.turn,
                c.ts,
                c.cwd,
                c.kind,
                c.tool,
                c.text,
                *ended.get(c.id, (None, None, "")),
            )
            for c in chunk.calls
        ],
    )
    here = {c.id for c in chunk.calls}
    conn.executemany(
        "UPDATE calls SET ok = coalesce(?, ok), code = coalesce(?, code),"
        " output = CASE WHEN ? = '' THEN output ELSE ? END WHERE agent = ? AND cid = ?",
        [
            (ok, code, out, out, agent, cid)
            for cid, (ok, code, out) in ended.items()
            if cid not in here
        ],
    )
