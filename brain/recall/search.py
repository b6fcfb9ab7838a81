"""Ranking turns: BM25 over the turn, its neighbours and its session's title.

A turn is scored by FTS5's bm25 over three columns with fixed weights: the turn's own words count
most, its neighbours' (`context`) and its session title's less. Short chat turns ("yes, last
Saturday!") are found through what surrounds them. Filters (agent, date, folder, the current
session) apply inside the query, before the limit.

User text never reaches FTS5 MATCH: it is folded and split into words here and each word is
quoted, so `c++`, `NOT`, `body:x` or a lone `"` are plain words.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from dataclasses import dataclass

# bm25 weights of (body, context, title): measured on LoCoMo conversation 0 (tools/eval_recall).
WEIGHTS = (1.0, 0.3, 0.3)
SNIPPET_TOKENS = 14

_WORD = re.compile(r"[^\W_]+")
STOPWORDS = frozenset(
    """a about after again all also am an and any are as at be been before being but by can could
    did do does doing done for from get got had has have having he her here hers him his how i if
    in into is it its just me my of on or our ours out she should so some than that the their them
    then there these they this those to too us was we were what when where which who whom why will
    with would you your""".split()
)


def fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def terms(text: str) -> list[str]:
    """The query's topic words, folded; all its words when every one is a stopword."""
    all_words = _WORD.findall(fold(text))
    kept = [w for w in all_words if w not in STOPWORDS] or all_words
    return list(dict.fromkeys(kept))


def match_expression(words: list[str]) -> str:
    """An FTS5 expression made only of quoted words: safe for any user input."""
    return " OR ".join('"' + w.replace('"', "") + '"' for w in words)


@dataclass(frozen=True)
class Filters:
    agent: str = ""
    since: str = ""  # ISO date or datetime; turns at or after it
    cwd: str = ""  # a folder; turns in it or below it
    exclude_session: str = ""
    agents: tuple[str, ...] = ()  # only these (the enabled ones)


@dataclass(frozen=True)
class Hit:
    rowid: int
    id: str
    agent: str
    session: str
    title: str
    role: str
    ts: str
    cwd: str
    snippet: str
    score: float


def _where(f: Filters) -> tuple[str, list[object]]:
    clauses: list[str] = []
    args: list[object] = []
    if f.agents:
        clauses.append(f"t.agent IN ({','.join('?' * len(f.agents))})")
        args.extend(f.agents)
    if f.agent:
        clauses.append("t.agent = ?")
        args.append(f.agent)
    if f.since:
        clauses.append("t.ts >= ?")
        args.append(f.since)
    if f.cwd:
        base = f.cwd.rstrip("/") or "/"
        clauses.append("(t.cwd = ? OR substr(t.cwd, 1, ?) = ?)")
        prefix = base if base.endswith("/") else base + "/"
        args.extend([base, len(prefix), prefix])
    if f.exclude_session:
        clauses.append("t.session != ?")
        args.append(f.exclude_session)
    return "".join(f" AND {c}" for c in clauses), args


def ranked(
    conn: sqlite3.Connection,
    words: list[str],
    filters: Filters,
    limit: int,
    weights: tuple[float, float, float] = WEIGHTS,
) -> list[tuple[int, float]]:
    """(rowid, bm25) of the best `limit` turns, best first (bm25: lower is better)."""
    if not words:
        return []
    where, args = _where(filters)
    w = ", ".join(f"{float(x):.4f}" for x in weights)
    sql = (  # only constants and placeholders are formatted in
        f"SELECT fts.rowid, bm25(fts, {w}) AS r FROM fts JOIN turns t ON t.id = fts.rowid"  # noqa: S608
        f" WHERE fts MATCH ?{where} ORDER BY r LIMIT ?"
    )
    return [
        (int(r), float(s)) for r, s in conn.execute(sql, [match_expression(words), *args, limit])
    ]


def hits(conn: sqlite3.Connection, words: list[str], scored: list[tuple[int, float]]) -> list[Hit]:
    """The rows behind ranked ids, with a snippet of each turn's body around the match."""
    expr = match_expression(words)
    out = []
    for rowid, score in scored:
        row = conn.execute(
            "SELECT t.tid, t.agent, t.session, coalesce(s.title, ''), t.role, t.ts, t.cwd"
            " FROM turns t LEFT JOIN sessions s ON s.agent = t.agent AND s.session = t.session"
            " WHERE t.id = ?",
            (rowid,),
        ).fetchone()
        if row is None:
            continue
        snip = conn.execute(
            f"SELECT snippet(fts, 0, '', '', '…', {SNIPPET_TOKENS}) FROM fts"  # noqa: S608
            " WHERE fts MATCH ? AND rowid = ?",
            (expr, rowid),
        ).fetchone()
        text = " ".join((snip[0] if snip else "").split())
        tid, agent, session, title, role, ts, cwd = row
        out.append(Hit(rowid, tid, agent, session, title, role, ts, cwd, text, round(-score, 4)))
    return out


def rank(
    conn: sqlite3.Connection,
    query: str,
    filters: Filters,
    limit: int,
    weights: tuple[float, float, float] = WEIGHTS,
) -> list[int]:
    """Rowids of the best `limit` turns for a query, best first."""
    return [r for r, _ in ranked(conn, terms(query), filters, limit, weights)]
