"""The disposable SQLite index of a vault: FTS5 over every unit, rebuilt from Markdown at will.

Nothing here is precious. A missing, stale-schema or corrupt index is rebuilt by whoever needs it;
an incremental sync re-parses only files whose bytes changed and runs in one transaction, so a
killed process leaves the previous state behind, never half of a new one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain import database
from brain import vault as vaultmod
from brain.config import (
    CORE_FILES,
    INBOX,
    SYNONYMS,
    VAULT_CONFIG,
    index_path,
    review_mode,
    review_override,
)
from brain.errors import BrainError
from brain.vocab import ALIAS_SEP, cjk_split

if TYPE_CHECKING:
    from brain import supersede

# 4: units hold their text with credentials masked (vault.parse); CJK bigrams in fts and names;
# notes dated from git history (`dates`); `shadows`. 5: lines the guard flags are defused.
# 6: credentials said in prose ("the password is X") are masked too: units are re-read; vectors of
# bullets with no aliases are made again (they were embedded as `handle (): fact`).
# 7: ... and when a hard wrap puts a line break between the key name and its value; a file whose
# name holds one is skipped; a bullet with one in an alias is read (the mask's "(20)" broke it).
# 8: the guard defuses look-alike letters (fullwidth, mathematical, Cherokee in a Latin word) and
# stacked combining marks too. 9: `shadows` read headings, names in any order and durations in
# any unit (brain/supersede.py): the relation is computed again. 10: the histories of the files
# bullets and notes name, and each unit's drift (brain/drift.py). 11: a credential spelt in
# fullwidth or mathematical letters is masked (brain.secrets.folded), not served spelt as escapes.
# 12: a file cited with its line (`repo:path:42`, brain.claims.EXPLICIT) names the file for drift.
SCHEMA_VERSION = 12

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    problems TEXT NOT NULL DEFAULT ''
);
CREATE TABLE units(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, line INTEGER NOT NULL, kind TEXT NOT NULL,
    handle TEXT NOT NULL, aliases TEXT NOT NULL, text TEXT NOT NULL, section TEXT NOT NULL,
    source TEXT NOT NULL, date TEXT NOT NULL, raw TEXT NOT NULL,
    vhash TEXT NOT NULL  -- hash of the text a vector stands for (see embed_text)
);
CREATE INDEX units_path ON units(path);
CREATE INDEX units_vhash ON units(vhash);
CREATE TABLE vectors(hash TEXT PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE synonyms(term TEXT NOT NULL, expansion TEXT NOT NULL);
CREATE INDEX synonyms_term ON synonyms(term);
CREATE VIRTUAL TABLE fts USING fts5(
    handle, aliases, body, context, near, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- Handles and aliases again, unstemmed: a prefix such as `renova` must reach `renovate`, whose
-- stem `renov` is shorter than the prefix.
CREATE VIRTUAL TABLE names USING fts5(handle, aliases, tokenize = 'unicode61 remove_diacritics 2');
-- When each note last changed in git (see brain/note_dates.py); read by `brain reindex` only.
CREATE TABLE dates(path TEXT PRIMARY KEY, date TEXT NOT NULL);
-- A note's paragraph that a newer bullet corrects (see brain/supersede.py).
CREATE TABLE shadows(
    note INTEGER NOT NULL, bullet INTEGER NOT NULL, weight REAL NOT NULL,
    PRIMARY KEY (note, bullet)
) WITHOUT ROWID;
CREATE INDEX shadows_bullet ON shadows(bullet);
-- Facts that know when their code moved (see brain/drift.py); read by `brain reindex` only: each
-- repository read up to `head`, what its commits touched, and each unit's answer by its key.
CREATE TABLE drift_repos(
    id INTEGER PRIMARY KEY, root TEXT NOT NULL UNIQUE, head TEXT NOT NULL, floor TEXT NOT NULL,
    bounded INTEGER NOT NULL
);
CREATE TABLE drift_commits(
    id INTEGER PRIMARY KEY, repo INTEGER NOT NULL, sha TEXT NOT NULL, at INTEGER NOT NULL,
    day TEXT NOT NULL
);
CREATE TABLE drift_touches(
    path TEXT NOT NULL, commit_id INTEGER NOT NULL, PRIMARY KEY (path, commit_id)
) WITHOUT ROWID;
CREATE TABLE drift_moves(commit_id INTEGER NOT NULL, old TEXT NOT NULL, new TEXT NOT NULL);
CREATE TABLE drift(
    key TEXT PRIMARY KEY, commit_count INTEGER NOT NULL, last_date TEXT NOT NULL,
    at_least INTEGER NOT NULL
) WITHOUT ROWID;
-- A note's front matter `code:` list, one entry a line (read when the note is).
CREATE TABLE drift_files(path TEXT PRIMARY KEY, files TEXT NOT NULL);
"""


@dataclass
class SyncReport:
    """What a sync did; `problems` are the vault's lint-worthy findings, never fatal here."""

    full: bool = False
    files: int = 0
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    units: int = 0
    bullets: int = 0
    built: str = ""
    problems: list[vaultmod.Problem] = field(default_factory=list)


def _connect(path: Path) -> sqlite3.Connection:
    return database.connect(path)


def _stamp() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ensure_state_dir(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BrainError(
            f"cannot create the index folder {path.parent}: {exc.strerror}",
            "make it writable, or point XDG_STATE_HOME at a writable folder",
        ) from exc
    if not os.access(path.parent, os.W_OK):
        raise BrainError(
            f"the index folder {path.parent} is not writable",
            "make it writable, or point XDG_STATE_HOME at a writable folder",
        )


def _healthy(conn: sqlite3.Connection) -> bool:
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            return False
        conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()
    except sqlite3.DatabaseError:
        return False
    return True


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction taken up front (IMMEDIATE): a concurrent writer waits on the busy
    timeout here rather than failing halfway through."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _stat(vault: Path, rel: str) -> tuple[int, int] | None:
    try:
        st = (vault / rel).stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


# Read for the review mode, not counted among the vault's files in a reindex's report.
_UNLISTED = (INBOX, VAULT_CONFIG)


def _tracked(vault: Path) -> vaultmod.Walk:
    """The files to index, and the ones the walk skipped (links out of the vault, bad names).
    The inbox and the vault's config are read too: in review mode `after` the proposals answer
    finds, and a change of mode must reach the index."""
    from brain.files import outside

    found = vaultmod.indexed(vault)
    extra = [
        rel for rel in _UNLISTED if (vault / rel).is_file() and outside(vault / rel, vault) is None
    ]
    if extra:
        found.files = sorted([*found.files, *extra])
    return found


def embed_text(u: vaultmod.Unit) -> str:
    """What a unit's vector stands for: a bullet's handle, aliases and fact; prose in context."""
    if u.kind == "bullet":
        names = f"{u.handle} ({', '.join(u.aliases)})" if u.aliases else u.handle
        return f"{names}: {u.text}"
    return f"{u.section}: {u.text}" if u.section else u.text


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


NEAR = 2  # prose units on each side whose words also find a unit (weighted low)
NEAR_CHARS = 300


def _neighbours(units: list[vaultmod.Unit], i: int) -> str:
    """The text around a prose unit: a short line of a log or a chat is found through what
    surrounds it, as a reader would find it."""
    if units[i].kind != "prose":
        return ""
    lo, hi = max(0, i - NEAR), min(len(units), i + NEAR + 1)
    return " ".join(
        units[k].text[:NEAR_CHARS] for k in range(lo, hi) if k != i and units[k].kind == "prose"
    )


def _insert_units(conn: sqlite3.Connection, units: list[vaultmod.Unit]) -> range:
    """Insert one file's units; ids are assigned here so that all three tables take one batch."""
    first = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM units").fetchone()[0]
    ids = range(first, first + len(units))
    conn.executemany(
        "INSERT INTO units(id, path, line, kind, handle, aliases, text, section, source, date,"
        " raw, vhash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                uid,
                u.path,
                u.line,
                u.kind,
                u.handle,
                ALIAS_SEP.join(u.aliases),
                u.text,
                u.section,
                u.source,
                u.date,
                u.raw,
                text_hash(embed_text(u)),
            )
            for uid, u in zip(ids, units, strict=True)
        ],
    )
    conn.executemany(
        "INSERT INTO fts(rowid, handle, aliases, body, context, near) VALUES (?,?,?,?,?,?)",
        [
            (
                uid,
                cjk_split(u.handle),
                cjk_split(" ; ".join(u.aliases)),
                cjk_split(u.text),
                cjk_split(u.section if u.kind == "prose" else f"{u.section} {u.source}"),
                cjk_split(_neighbours(units, i)),
            )
            for i, (uid, u) in enumerate(zip(ids, units, strict=True))
        ],
    )
    conn.executemany(
        "INSERT INTO names(rowid, handle, aliases) VALUES (?,?,?)",
        [
            (uid, cjk_split(u.handle), cjk_split(" ; ".join(u.aliases)))
            for uid, u in zip(ids, units, strict=True)
            if u.kind == "bullet"
        ],
    )
    return ids


def _delete_path(conn: sqlite3.Connection, rel: str) -> None:
    for role in ("note", "bullet"):  # two statements: an OR would not use the indexes
        conn.execute(
            f"DELETE FROM shadows WHERE {role} IN (SELECT id FROM units WHERE path = ?)",  # noqa: S608
            (rel,),
        )
    conn.execute("DELETE FROM fts WHERE rowid IN (SELECT id FROM units WHERE path = ?)", (rel,))
    conn.execute("DELETE FROM names WHERE rowid IN (SELECT id FROM units WHERE path = ?)", (rel,))
    conn.execute("DELETE FROM units WHERE path = ?", (rel,))
    conn.execute("DELETE FROM files WHERE path = ?", (rel,))
    conn.execute("DELETE FROM drift_files WHERE path = ?", (rel,))


def _readable(vault: Path, rel: str, report: SyncReport) -> tuple[int, int] | None:
    """`rel`'s size and mtime when the index should read it; None when it vanished, or when it
    is over vault.NOTE_MAX (said in `report`)."""
    st = _stat(vault, rel)
    if st is not None and st[0] > vaultmod.NOTE_MAX:
        report.problems.append(vaultmod.too_big(rel, st[0]))
        return None
    return st


def _sync(conn: sqlite3.Connection, vault: Path, *, full: bool, history: bool) -> SyncReport:
    from brain import supersede

    report = SyncReport(full=full)
    known = {
        row[0]: (row[1], row[2], row[3], row[4])
        for row in conn.execute("SELECT path, hash, size, mtime_ns, problems FROM files")
    }
    walked = _tracked(vault)
    present = walked.files
    report.problems += walked.skipped
    report.files = sum(rel not in _UNLISTED for rel in present)
    redated = _read_history(conn, vault, present) if history else set()
    review = _review(conn, vault, known)
    dates = dict(conn.execute("SELECT path, date FROM dates").fetchall())
    today = dt.date.today().isoformat()
    notes: set[int] = set()  # paragraphs of notes that are new or newly dated
    bullets: set[int] = set()  # bullets that are new or changed
    seen: set[str] = set()
    for rel in present:
        st = _readable(vault, rel, report)
        if st is None:
            continue  # vanished between the walk and now, or too big: treated as deleted below
        seen.add(rel)
        old = known.get(rel)
        if old and (old[1], old[2]) == st:
            report.problems += _decode_problems(old[3])
            continue
        try:
            data = (vault / rel).read_bytes()
        except OSError as exc:
            report.problems.append(vaultmod.Problem(rel, None, f"cannot read it ({exc.strerror})"))
            continue
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if old and old[0] == digest:
            conn.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (*st, rel))
            report.problems += _decode_problems(old[3])
            continue
        if rel not in _UNLISTED:
            report.changed.append(rel)
        kept = supersede.keep(conn, rel) if old else None
        if old:
            _delete_path(conn, rel)
        if rel in (SYNONYMS, INBOX, VAULT_CONFIG):
            problems = _read_special(conn, rel, data, review)
        else:
            parsed = _parse(conn, rel, data)
            units = _dated(parsed.units, note_date(rel, dates, today))
            _sort_new(conn, rel, units, _insert_units(conn, units), kept, notes, bullets)
            problems = parsed.problems
        report.problems += problems
        conn.execute(
            "INSERT INTO files(path, hash, size, mtime_ns, problems) VALUES (?,?,?,?,?)",
            (rel, digest, *st, _encode_problems(problems)),
        )
    for rel in sorted((redated & seen) - set(report.changed)):
        notes |= _redate(conn, rel, note_date(rel, dates, today))
    _remove(conn, sorted(set(known) - seen), report)
    supersede.refresh(conn, None if full else notes, bullets)
    _stamp_build(conn, vault, report)
    return report


def _parse(conn: sqlite3.Connection, rel: str, data: bytes) -> vaultmod.Parsed:
    """A file's units; a note's front matter `code:` list (brain/drift.py) is kept for `brain
    reindex`."""
    parsed = vaultmod.parse(rel, data)
    if rel in CORE_FILES or not data.startswith(b"---"):
        return parsed
    from brain.claims import front_matter

    listed = front_matter(data)
    if listed:
        conn.execute(
            "INSERT OR REPLACE INTO drift_files(path, files) VALUES (?, ?)",
            (rel, "\n".join(listed)),
        )
    return parsed


def _review(conn: sqlite3.Connection, vault: Path, known: dict[str, tuple[Any, ...]]) -> str:
    """The vault's review mode; when it changed since the last sync the inbox is read again.
    Stored as `after` or `after env` (BRAIN_REVIEW decided it: see review_moved)."""
    review = review_mode(vault)
    row = conn.execute("SELECT value FROM meta WHERE key = 'review'").fetchone()
    stored = row[0] if row else "before"
    if stored.split()[0] != review:
        known.pop(INBOX, None)
        _delete_path(conn, INBOX)
    said = f"{review} env" if review_override() else review
    if stored != said:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('review', ?)", (said,))
    return review


def review_moved(conn: sqlite3.Connection, vault: Path) -> bool:
    """Whether the review mode differs from the one the index was synced with while no file
    changed: BRAIN_REVIEW is set now, or was then. A change of AI/config.yaml is a change of a
    file, so without the variable nothing is read here (a find pays nothing for it)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'review'").fetchone()
    stored = row[0] if row else "before"
    if review_override() is None and not stored.endswith(" env"):
        return False
    return stored.split()[0] != review_mode(vault)


def _read_special(
    conn: sqlite3.Connection, rel: str, data: bytes, review: str
) -> list[vaultmod.Problem]:
    """The synonyms table; the inbox's proposals as bullets in review mode `after` (credentials
    masked as in every other file; judged by no shadow: not yet facts); the config (read before)."""
    if rel == SYNONYMS:
        return _load_synonyms(conn, data)
    if rel == INBOX and review == "after":
        from brain.secrets import redact

        text, _ = vaultmod.decode(data, INBOX)
        _insert_units(conn, vaultmod.parse_inbox(redact(text), INBOX))
    return []  # the inbox lists its own problems (`brain inbox`)


def _remove(conn: sqlite3.Connection, gone: list[str], report: SyncReport) -> None:
    """Forget the files that are no longer in the vault."""
    for rel in gone:
        _delete_path(conn, rel)
        if rel == SYNONYMS:
            conn.execute("DELETE FROM synonyms")
        if rel not in _UNLISTED:
            report.removed.append(rel)


def _sort_new(
    conn: sqlite3.Connection,
    rel: str,
    units: list[vaultmod.Unit],
    ids: range,
    kept: supersede.Kept | None,
    notes: set[int],
    bullets: set[int],
) -> None:
    """File the ids of new or changed units as bullets or as notes' paragraphs, for the shadow
    relation to judge again; unchanged units of a re-read file get their shadows back."""
    from brain import supersede

    fresh = supersede.restore(conn, kept, units, ids) if kept else set(ids)
    for uid, u in zip(ids, units, strict=True):
        if uid not in fresh:
            continue
        if u.kind == "bullet":
            bullets.add(uid)
        elif rel not in CORE_FILES:
            notes.add(uid)


def _stamp_build(conn: sqlite3.Connection, vault: Path, report: SyncReport) -> None:
    from brain.text import repair  # a vault folder whose name is not UTF-8

    report.built = _stamp()
    counts = conn.execute(
        "SELECT count(*), coalesce(sum(kind = 'bullet'), 0) FROM units"
    ).fetchone()
    report.units, report.bullets = counts
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [("built", report.built), ("vault", repair(str(vault))), ("units", str(report.units))],
    )


def _load_synonyms(conn: sqlite3.Connection, data: bytes) -> list[vaultmod.Problem]:
    text, problems = vaultmod.decode(data, SYNONYMS)
    table, more = vaultmod.parse_synonyms(text, SYNONYMS)
    conn.execute("DELETE FROM synonyms")
    conn.executemany(
        "INSERT INTO synonyms(term, expansion) VALUES (?, ?)",
        [(term, exp) for term, exps in table.items() for exp in exps],
    )
    return problems + more


def note_date(rel: str, dates: dict[str, str], today: str) -> str:
    """A note's date: from its file name, else when git last saw it change, else "".

    A file name dated after today does not say when the note was written (a typo, or a plan):
    it would outrank every bullet as the newest, so git's date is taken instead. The core files'
    paragraphs are not notes and stay undated.
    """
    if rel in CORE_FILES:
        return ""
    named = vaultmod.file_date(rel)
    if named and named <= today:
        return named
    return dates.get(rel, "")


def _dated(units: list[vaultmod.Unit], date: str) -> list[vaultmod.Unit]:
    return [u._replace(date=date) if u.kind == "prose" and u.date != date else u for u in units]


def _redate(conn: sqlite3.Connection, rel: str, date: str) -> set[int]:
    """Give an unchanged note the date git now has for it; its paragraphs, if that changed."""
    ids = {
        row[0]
        for row in conn.execute(
            "SELECT id FROM units WHERE path = ? AND kind = 'prose' AND date != ?", (rel, date)
        )
    }
    if ids:
        conn.execute("UPDATE units SET date = ? WHERE path = ? AND kind = 'prose'", (date, rel))
        conn.execute(
            "DELETE FROM shadows WHERE note IN (SELECT id FROM units WHERE path = ?)", (rel,)
        )
    return ids


def _read_history(conn: sqlite3.Connection, vault: Path, present: list[str]) -> set[str]:
    """Bring the cached git dates up to date; the paths whose date changed."""
    from brain import note_dates

    row = conn.execute("SELECT value FROM meta WHERE key = 'git_head'").fetchone()
    found = note_dates.read(
        vault, [p for p in present if p not in CORE_FILES], row[0] if row else ""
    )
    if found is None:
        return set()
    old = dict(conn.execute("SELECT path, date FROM dates").fetchall())
    new = found.dates if found.full else {**old, **found.dates}
    if found.full:
        conn.execute("DELETE FROM dates")
    conn.executemany(
        "INSERT OR REPLACE INTO dates(path, date) VALUES (?, ?)",
        [(p, d) for p, d in new.items() if old.get(p) != d or found.full],
    )
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('git_head', ?)", (found.head,))
    return {p for p in set(old) | set(new) if old.get(p) != new.get(p)}


def _encode_problems(problems: list[vaultmod.Problem]) -> str:
    return "\n".join(f"{p.line or 0}\t{p.path}\t{p.message}" for p in problems)  # 0: None


def _decode_problems(text: str) -> list[vaultmod.Problem]:
    out = []
    for row in text.split("\n"):
        if row:
            line, path, message = row.split("\t", 2)
            out.append(vaultmod.Problem(path, int(line) or None, message))
    return out


def _create(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def rebuild(vault: Path, *, history: bool = False) -> SyncReport:
    """Build a new index from nothing in a temp file, then swap it in atomically. `history`
    reads the git dates of notes (else the old index's are kept)."""
    path = index_path(vault)
    _ensure_state_dir(path)
    for stale in path.parent.glob(f"{path.name}.tmp-*"):
        if _abandoned(stale):  # left behind by a killed rebuild, not one running right now
            with contextlib.suppress(OSError):
                stale.unlink()
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    conn = _connect(tmp)
    try:
        conn.execute("PRAGMA journal_mode = OFF")  # a temp file: a crash just leaves it behind
        conn.execute("PRAGMA synchronous = OFF")
        _create(conn)
        _carry_dates(conn, path)
        with transaction(conn):
            report = _sync(conn, vault, full=True, history=history)
        _carry_vectors(conn, path)
        conn.close()
        _swap(tmp, path)
    finally:
        conn.close()
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return report


STALE_TMP_SECONDS = 3600  # no rebuild takes this long; a pid can be reused, an hour cannot


def _abandoned(tmp: Path) -> bool:
    """Whether a rebuild's temp file belongs to no running rebuild.

    Another process may be rebuilding the same index right now (two finds on a fresh vault, a
    `reindex --full` beside a find); deleting its temp file would make it install an empty index.
    """
    try:
        if time.time() - tmp.stat().st_mtime > STALE_TMP_SECONDS:
            return True
        pid = int(tmp.name.rsplit("-", 1)[1])
    except (OSError, ValueError):
        return True
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return False  # os.kill(pid, 0) is no liveness probe on Windows; the age rule covers it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, owned by someone else
    return False


@contextlib.contextmanager
def _old(conn: sqlite3.Connection, old: Path) -> Iterator[bool]:
    """The previous index attached as `old` (False when there is none worth reading)."""
    if not old.exists():
        yield False
        return
    try:
        conn.execute("ATTACH DATABASE ? AS old", (str(old),))
    except sqlite3.DatabaseError:
        yield False
        return
    try:
        yield True
    finally:
        conn.execute("DETACH DATABASE old")


_CARRY_SQL = (
    "INSERT OR IGNORE INTO vectors(hash, vec) SELECT hash, vec FROM old.vectors"
    " WHERE hash IN (SELECT vhash FROM units)"
)
# before schema 6, a bullet with no aliases was embedded as `handle (): fact`: it is made again
_CARRY_BEFORE_6_SQL = (
    "INSERT OR IGNORE INTO vectors(hash, vec) SELECT hash, vec FROM old.vectors"
    " WHERE hash IN (SELECT vhash FROM units WHERE NOT (kind = 'bullet' AND aliases = ''))"
)


def _carry_vectors(conn: sqlite3.Connection, old: Path) -> None:
    """Keep the old index's vectors that still match a unit: a full rebuild re-reads the Markdown,
    but re-embedding unchanged text would cost minutes on a large vault for nothing."""
    with _old(conn, old) as attached:
        if not attached:
            return
        try:
            model = conn.execute("SELECT value FROM old.meta WHERE key = 'model'").fetchone()
            version = conn.execute("PRAGMA old.user_version").fetchone()[0]
            if model:
                with transaction(conn):
                    conn.execute("INSERT INTO meta(key, value) VALUES ('model', ?)", (model[0],))
                    conn.execute(_CARRY_SQL if version >= 6 else _CARRY_BEFORE_6_SQL)
        except sqlite3.DatabaseError:
            pass  # an unreadable old index has nothing worth keeping


# What `brain reindex` read of the repositories' histories, and each unit's drift (brain/drift.py)
_DRIFT_CARRIED = ("drift_repos", "drift_commits", "drift_touches", "drift_moves", "drift")


def _carry_dates(conn: sqlite3.Connection, old: Path) -> None:
    """Keep the git dates and histories the old index read: a rebuild on the find path never
    walks history. The histories are carried from an index of this schema only (an older one
    has none, or of another shape)."""
    with _old(conn, old) as attached:
        if not attached:
            return
        try:
            same = conn.execute("PRAGMA old.user_version").fetchone()[0] == SCHEMA_VERSION
            with transaction(conn):
                conn.execute("INSERT INTO dates(path, date) SELECT path, date FROM old.dates")
                for table in _DRIFT_CARRIED if same else ():
                    conn.execute(f"INSERT INTO {table} SELECT * FROM old.{table}")  # noqa: S608
                conn.execute(
                    "INSERT INTO meta(key, value) SELECT key, value FROM old.meta"
                    " WHERE key = 'git_head'"
                )
        except sqlite3.DatabaseError:
            pass  # an older schema, or unreadable: the next `brain reindex` reads history


def _swap(tmp: Path, path: Path) -> None:
    """Install `tmp` as the index at `path`.

    A live WAL database cannot simply be renamed over: its -wal and -shm files would be replayed
    onto the new file. SQLite's backup API copies the new pages into the live database in one write
    transaction instead, which readers see atomically. Only a missing or unreadable index is
    replaced by rename, after its leftover journal files are removed.
    """
    if path.exists():
        live = _connect(path)
        try:
            if _healthy(live):
                src = database.connect(tmp)
                try:
                    src.backup(live)
                finally:
                    src.close()
                live.execute("PRAGMA journal_mode = WAL")
                return
        except sqlite3.DatabaseError:
            pass
        finally:
            live.close()
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()
    tmp.replace(path)
    conn = _connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()


def sync(vault: Path, *, history: bool = False) -> SyncReport:
    """Bring the index up to date incrementally, rebuilding it when it is missing or unusable.
    `history` also reads the commits since the last read for the notes' dates."""
    path = index_path(vault)
    _ensure_state_dir(path)
    if not path.exists():
        return rebuild(vault, history=history)
    conn = _connect(path)
    try:
        if not _healthy(conn):
            conn.close()
            return rebuild(vault, history=history)
        with transaction(conn):
            return _sync(conn, vault, full=False, history=history)
    except sqlite3.DatabaseError:
        conn.close()
        return rebuild(vault, history=history)
    finally:
        conn.close()


def is_stale(conn: sqlite3.Connection, vault: Path) -> bool:
    """Whether any file changed since the last sync, judged by size and mtime alone (cheap)."""
    known = {
        row[0]: (row[1], row[2]) for row in conn.execute("SELECT path, size, mtime_ns FROM files")
    }
    present = _tracked(vault).files
    if len(present) != len(known):
        return True
    return any(known.get(rel) != _stat(vault, rel) for rel in present)


# How open_index tells whether the vault changed since the last sync: `is_stale`, or in the worker
# (brain/worker.py) `is_stale` behind a file-system watch that skips it while nothing moved.
stale_check: Callable[[sqlite3.Connection, Path], bool] = is_stale


def open_index(vault: Path) -> sqlite3.Connection:
    """A read connection to an index that reflects the vault as it is on disk now."""
    path = index_path(vault)
    for _ in range(2):
        if not path.exists():
            sync(vault)
        conn = _connect(path)
        try:
            if _healthy(conn) and not stale_check(conn, vault) and not review_moved(conn, vault):
                return conn
        except sqlite3.DatabaseError:
            pass
        conn.close()
        sync(vault)
    return _connect(path)


def usable(vault: Path) -> bool:
    """Whether the vault's index exists and is of this schema: what `open_index` can bring up
    to date quickly, rather than rebuild from nothing."""
    path = index_path(vault)
    if not path.exists():
        return False
    try:
        conn = _connect(path)
    except sqlite3.DatabaseError:
        return False
    try:
        return _healthy(conn)
    finally:
        conn.close()


def connect(vault: Path) -> sqlite3.Connection:
    """A connection to the vault's index as it is (see open_index for one that is up to date)."""
    return _connect(index_path(vault))


def restamp(conn: sqlite3.Connection) -> None:
    """A new build stamp: what the index serves changed with no file (brain/drift.py), and what
    is cached against the build (pack's) must be made again."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('built', ?)", (_stamp(),))


def built(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()
    return str(row[0]) if row else ""
