"""Ranking turns: BM25 word by word over the turn and the turns around it, saturating.

Chat turns are short ("yes, last Saturday!"); the turns around one carry what it is about. The
index holds each turn's own words (`body`) and its session's `title` (bm25 column weights
WEIGHTS); the neighbours are brought in at query time, word by word:

- each query word is looked up alone: FTS5's bm25 for the word in a turn, divided by the word's
  IDF, is how strongly the turn holds it (`u`, a saturated, length-normalised term frequency);
- within a turn's window the word weighs `x = u(turn) + NEAR[0] * u(each turn 1 away) +
  NEAR[1] * u(each turn 2 away)` (its session's turns in time order: `pos` in the turns table);
- the turn scores `IDF * x * (K + 1) / (x + K)` for the word, summed over the words: a word
  said again in the window adds less than another word of the query.

A hit's `score` is that sum over its most, `(K + 1) * sum(IDF)`: the share of the query's weight
its window holds, 0 to 1 (a word only a neighbour holds counts for less). The order is the same;
what changes is that it means something on a small corpus too, where every word is in half the
turns and FTS5's IDF is nothing (`recall --json` gave every hit 0.0).

So a turn is found when it, or the turns around it, hold the query's words; a turn whose own
words match nothing can be surfaced by its neighbours. Only a word's best CANDIDATES turns are
spread to their neighbours (a word in more turns than that has a low IDF). A word in half the
turns or more has no IDF (FTS5 floors it): it is dropped from a query that has other words, and
alone its newest turns come back. Filters that may exclude many turns (agent, date, folder)
apply inside each word's query, before its limit; all of them (with the enabled agents and the
current session) apply to every turn returned.

User text never reaches FTS5 MATCH: it is folded and split into words here and each word is
quoted, so `c++`, `NOT`, `body:x` or a lone `"` are plain words.
"""

from __future__ import annotations

import math
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field, replace

from brain.vocab import TURN_STOPWORDS, fts_phrase, telling
from brain.vocab import words as folded_words

# Measured on LoCoMo conversation 0 (tools/eval_recall), from the middle of a flat region: for K
# 0.5-2, NEAR (0.3, 0.2)-(0.6, 0.4) and a title weight 0.3-0.5, recall@5/10/25/50 stays within
# 66-71 / 76-80 / 85.6-87.4 / 91-93 (69.0 / 79.7 / 85.9 / 92.0 here).
WEIGHTS = (1.0, 0.3)  # bm25 column weights of (body, title)
NEAR = (0.5, 0.3)  # how much of a word a turn takes from the turns 1 and 2 away in its session
K = 1.0  # saturation of a word within a window
CANDIDATES = 1000  # best turns per query word spread to their neighbours
IDF_FLOOR = 1e-6  # FTS5's IDF for a word in half the turns or more
SNIPPET_TOKENS = 14
SHORT_ID = 8  # turn ids are shown by their first characters, more where another shares them


def terms(text: str) -> list[str]:
    """The query's topic words, folded; all its words when every one is a stopword."""
    all_words = folded_words(text)
    kept = [w for w in all_words if w not in TURN_STOPWORDS] or all_words
    return list(dict.fromkeys(kept))


def focus(conn: sqlite3.Connection, words: list[str]) -> list[str]:
    """The words of a long query worth searching: brain.vocab.MAX_TERMS at most, the ones that
    tell most (brain.vocab.telling, counted in turns): a pasted log costs what a question does."""
    kept = telling(words, lambda k: _turns_holding(conn, match_expression([words[k]])))
    return [words[k] for k in kept]


def _turns_holding(conn: sqlite3.Connection, expr: str) -> int:
    return int(conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)).fetchone()[0])


def match_expression(words: list[str]) -> str:
    """An FTS5 expression made only of quoted words: safe for any user input."""
    return " OR ".join(fts_phrase((w,)) for w in words)


@dataclass(frozen=True)
class Filters:
    agent: str = ""
    since: str = ""  # ISO date or datetime; turns at or after it
    cwd: str = ""  # a folder; turns in it or below it
    exclude_session: str = ""
    agents: tuple[str, ...] = ()  # only these (the enabled ones)


@dataclass(frozen=True)
class Hit:
    """A turn that matches: the one type for a recall hit, from the search to `recall --json`
    (its fields are the JSON keys, in order; docs/json.md). A value the transcript does not
    have (a session with no title, an agent that keeps no folder, an undated turn) is None."""

    id: str
    session: str
    title: str | None
    role: str
    at: str | None
    cwd: str | None
    snippet: str
    score: float
    agent: str
    # the shortest start of `id` no other turn shares (at least SHORT_ID), which --full takes:
    # for the text listing, not a JSON key (present.data leaves out a field marked json=False)
    short: str = field(default="", compare=False, metadata={"json": False})


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
    weights: tuple[float, float] = WEIGHTS,
    near: tuple[float, ...] = NEAR,
) -> list[tuple[int, float]]:
    """(rowid, score) of the best `limit` turns, best first; a score is the share of the
    query's weight the turn's window holds (0 to 1, see the module's docstring)."""
    # The turns indexed, for IDF (a count would read them all; ids are dense but for agents
    # forgotten, which only nudges every IDF up a little).
    total = conn.execute("SELECT max(id) FROM turns").fetchone()[0] or 0
    idfs: list[tuple[str, float]] = []
    for word in words:
        expr = match_expression([word])
        found = _turns_holding(conn, expr)
        if found:  # the IDF as FTS5's bm25 has it
            idfs.append((expr, max(math.log((total - found + 0.5) / (found + 0.5)), IDF_FLOOR)))
    if any(idf > IDF_FLOOR for _, idf in idfs):  # a word in most turns adds nothing then
        idfs = [(expr, idf) for expr, idf in idfs if idf > IDF_FLOOR]
    # The filters that may exclude many turns apply before each word's limit; all of them apply
    # to the turns returned.
    where, args = _where(filters)
    narrow, narrow_args = _where(replace(filters, agents=(), exclude_session=""))
    w = ", ".join(f"{float(x):.4f}" for x in weights)
    scores: dict[int, float] = defaultdict(float)
    for expr, idf in idfs:
        held: dict[int, float] = defaultdict(float)
        if idf > IDF_FLOOR:
            for pos, s in conn.execute(_best_sql(w, narrow, "s DESC"), [expr, *narrow_args]):
                u = s / idf
                held[pos] += u
                for d, share in enumerate(near, 1):
                    held[pos - d] += share * u
                    held[pos + d] += share * u
        else:  # no IDF to rank by (a word in most turns, alone): its newest turns, as they are
            for pos, _ in conn.execute(
                _best_sql(w, narrow, "fts.rowid DESC"), [expr, *narrow_args]
            ):
                held[pos] = 1.0
        for pos, x in held.items():
            scores[pos] += idf * x * (K + 1) / (x + K)
    most = (K + 1) * sum(idf for _, idf in idfs) or 1.0  # every word held without bound
    turn = f"SELECT t.id FROM turns t WHERE t.pos = ?{where}"  # noqa: S608
    out: list[tuple[int, float]] = []
    for pos, score in sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0])):  # ties: newest
        row = conn.execute(turn, [pos, *args]).fetchone()
        if row is not None:  # a turn (not past either end of its session) that passes the filters
            out.append((int(row[0]), score / most))
            if len(out) == limit:
                break
    return out


def _best_sql(weights: str, narrow: str, order: str) -> str:
    """A word's best CANDIDATES turns as (pos, -bm25); only constants are formatted in."""
    best = f"ORDER BY {order} LIMIT {CANDIDATES}"
    if narrow:  # filters that may exclude many turns: applied before the limit
        return (
            f"SELECT t.pos, -bm25(fts, {weights}) AS s FROM fts"  # noqa: S608
            f" JOIN turns t ON t.id = fts.rowid WHERE fts MATCH ?{narrow} {best}"
        )
    return (  # the turns table is read for the best only
        f"SELECT t.pos, b.s FROM (SELECT fts.rowid AS id, -bm25(fts, {weights}) AS s"  # noqa: S608
        f" FROM fts WHERE fts MATCH ? {best}) b JOIN turns t ON t.id = b.id"
    )


def hits(conn: sqlite3.Connection, words: list[str], scored: list[tuple[int, float]]) -> list[Hit]:
    """The rows behind ranked ids, with a snippet of each turn's body around the match (its
    start when only its neighbours matched)."""
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
        if snip is None:
            body = conn.execute("SELECT body FROM fts WHERE rowid = ?", (rowid,)).fetchone()
            head = (body[0] if body else "").split()
            snip = (" ".join(head[:SNIPPET_TOKENS]) + ("…" if len(head) > SNIPPET_TOKENS else ""),)
        text = " ".join(snip[0].split())
        tid, agent, session, title, role, ts, cwd = row
        out.append(
            Hit(
                tid,
                session,
                title or None,
                role,
                ts or None,
                cwd or None,
                text,
                round(score, 4),
                agent,
                short_id(conn, tid),
            )
        )
    return out


def short_id(conn: sqlite3.Connection, tid: str) -> str:
    """The shortest start of a turn id (SHORT_ID characters at least) that no other turn's id
    starts with, as git shortens a hash: one character past what it shares with the ids just
    before and after it in sorted order (two lookups in the tid index). `--full` takes it."""
    shared = 0
    for sql in (
        "SELECT tid FROM turns WHERE tid < ? ORDER BY tid DESC LIMIT 1",
        "SELECT tid FROM turns WHERE tid > ? ORDER BY tid LIMIT 1",
    ):
        row = conn.execute(sql, (tid,)).fetchone()
        if row is not None:
            other: str = row[0]
            n = next((i for i, (a, b) in enumerate(zip(tid, other, strict=False)) if a != b), None)
            shared = max(shared, min(len(tid), len(other)) if n is None else n)
    return tid[: max(SHORT_ID, shared + 1)]


def rank(
    conn: sqlite3.Connection,
    query: str,
    filters: Filters,
    limit: int,
    weights: tuple[float, float] = WEIGHTS,
    near: tuple[float, ...] = NEAR,
) -> list[int]:
    """Rowids of the best `limit` turns for a query, best first."""
    return [r for r, _ in ranked(conn, terms(query), filters, limit, weights, near)]


def filtered(f: Filters) -> tuple[str, list[object]]:
    """`f` as SQL over the turns table `t` (` AND ...` clauses) and their arguments: what
    `brain recall sessions` filters a listing of sessions by, as a search filters turns."""
    return _where(f)
