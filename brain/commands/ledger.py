"""`brain ledger`: the usage log read back as cost, and as what the index saved.

A token is four bytes of output, a part of one counted whole (brain.vocab.tokens, as for every
budget). The alternative an agent has without an index is to read the
three core files whole for each lookup, so every logged lookup that served something saved the
core files' size now (in tokens) less what it returned. A lookup that served nothing (a pack or
a find that printed nothing, or only an empty JSON answer) saved nothing: the agent still has to
look elsewhere. Everything is aggregated in SQL: a log of 100,000 lookups is read in one pass per
grouping.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import usage
from brain.config import CORE_FILES
from brain.text import repair
from brain.vocab import tokens
from brain.when import at_epoch, parse_since, since_at


@dataclass(frozen=True)
class CallerRow:
    caller: str
    lookups: int
    tokens: int
    saved: int


@dataclass(frozen=True)
class SessionRow:
    session: str | None  # None: lookups made outside any session
    caller: str
    lookups: int
    tokens: int
    saved: int
    last_at: str  # the session's last lookup (brain.when.at)


@dataclass(frozen=True)
class DayRow:
    date: str
    lookups: int
    tokens: int
    saved: int


@dataclass(frozen=True)
class Ledger:
    vault: str
    since_at: str | None  # where --since starts (brain.when.at), None without it
    caller: str | None  # the --caller filter
    core_tokens: int  # one read of the three core files, now
    lookups: int
    tokens: int  # tokens returned
    saved: int  # tokens not read against reading the core files whole for every lookup that
    # served something
    callers: tuple[CallerRow, ...]
    sessions: tuple[SessionRow, ...]
    days: tuple[DayRow, ...]


def core_tokens(vault: Path) -> int:
    size = 0
    for rel in CORE_FILES:
        try:
            size += (vault / rel).stat().st_size
        except OSError:
            continue
    return tokens(size)


def where(vault: Path, since: str, caller: str) -> tuple[str, list[object]]:
    """The WHERE clause (constants only) and its parameters for the log rows in scope."""
    # Without --since every row is in scope: `+ts` keeps SQLite from walking the ts index row by
    # row (ten times slower than a table scan on 100,000 rows).
    clause = "vault = ? AND ts >= ?" if since else "vault = ? AND +ts >= ?"
    params: list[object] = [usage.vault_key(vault), parse_since(since).epoch if since else 0.0]
    if caller:
        clause += " AND caller = ?"
        params.append(repair(caller))  # --caller from argv may hold bytes that are not UTF-8
    return clause, params


def ledger(vault: Path, *, since: str = "", caller: str = "", log: Path | None = None) -> Ledger:
    clause, params = where(vault, since, caller)
    core = core_tokens(vault)
    conn = usage.connect(log)
    try:
        return _read(conn, clause, params, vault, since, caller, core)
    finally:
        conn.close()


# Per group: lookups, bytes returned, lookups that served something and the bytes they returned.
_SUMS = (
    "count(*), coalesce(sum(bytes), 0), coalesce(sum(entries > 0), 0),"
    " coalesce(sum(CASE WHEN entries > 0 THEN bytes ELSE 0 END), 0)"
)


def _group(
    conn: sqlite3.Connection, keys: str, clause: str, params: list[object], order: str
) -> list[tuple[Any, ...]]:
    # Only constant SQL fragments are formatted in; values travel as parameters.
    sql = (
        f"SELECT {keys}, {_SUMS}, max(ts) FROM events"  # noqa: S608
        f" WHERE {clause} GROUP BY {keys} ORDER BY {order}"
    )
    return conn.execute(sql, params).fetchall()


def _read(
    conn: sqlite3.Connection,
    clause: str,
    params: list[object],
    vault: Path,
    since: str,
    caller: str,
    core: int,
) -> Ledger:
    def saved(served: int, nbytes: int) -> int:
        """What `served` lookups that returned `nbytes` saved (the others saved nothing)."""
        return served * core - tokens(nbytes)

    total = conn.execute(
        f"SELECT {_SUMS} FROM events WHERE {clause}",  # noqa: S608
        params,
    ).fetchone()
    callers = tuple(
        CallerRow(str(who), n, tokens(b), saved(sn, sb))
        for who, n, b, sn, sb, _ in _group(conn, "caller", clause, params, "count(*) DESC, caller")
    )
    sessions = tuple(
        SessionRow(
            str(sid) if sid else None,
            str(who),
            n,
            tokens(b),
            saved(sn, sb),
            at_epoch(float(last)),
        )
        for sid, who, n, b, sn, sb, last in _group(
            conn, "session, caller", clause, params, "max(ts) DESC, session, caller"
        )
    )
    days = tuple(
        DayRow(str(day), n, tokens(b), saved(sn, sb))
        for day, n, b, sn, sb, _ in _group(
            conn, f"date(ts + {_utc_offset()}, 'unixepoch')", clause, params, "1"
        )
    )
    n, b, sn, sb = (int(v) for v in total)
    return Ledger(
        str(vault),
        since_at(since),
        caller or None,
        core,
        n,
        tokens(b),
        saved(sn, sb),
        callers,
        sessions,
        days,
    )


@dataclass(frozen=True)
class QueryRow:
    query: str  # as last asked (case and spacing folded for grouping), credentials masked
    lookups: int
    tokens: int
    last_at: str  # the latest (brain.when.at)


def top_queries(
    vault: Path, *, since: str = "", caller: str = "", limit: int = 20, log: Path | None = None
) -> tuple[QueryRow, ...]:
    """The queries asked most often in scope (the desk's ledger page lists them)."""
    from brain.secrets import redact

    clause, params = where(vault, since, caller)
    conn = usage.connect(log)
    try:
        rows = conn.execute(
            "SELECT lower(trim(query)), count(*), coalesce(sum(bytes), 0), max(ts) FROM events"  # noqa: S608
            f" WHERE {clause} AND query != '' GROUP BY 1 ORDER BY 2 DESC, 4 DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
    finally:
        conn.close()
    return tuple(
        QueryRow(redact(str(q)), int(n), tokens(int(b)), at_epoch(float(last)))
        for q, n, b, last in rows
    )


def _utc_offset() -> int:
    """Seconds east of UTC now: days are local days (a DST change shifts its night by an hour;
    SQLite's 'localtime' modifier is exact but doubles the cost of the query)."""
    return int(time.localtime().tm_gmtoff)


def minute(at: str) -> str:
    """An instant as a person reads it in a table: `YYYY-MM-DD HH:MM`, local."""
    return at[:16].replace("T", " ")


# --- text ----------------------------------------------------------------------------------------
