"""`brain howto TERMS`: the shell commands that did a task last time, from the transcripts.

Ranked with recall's own scoring: the turns that match TERMS (brain.recall.search.ranked, with
their neighbours' words and their session's title) lend their score to the shell commands run
just after them or just before them; a command that holds TERMS' words itself scores up to twice
as much. A hit's `score` is that over its most, 0 to 1: the share of the task's weight the turns
around it hold, all of it when the command holds every word of TERMS, half when it holds none.
Commands that only look (ls, cat, grep, git status ...) are left out, as are, unless `--all`,
those that failed or whose end is unknown. Near-identical commands (the same command
give or take a flag or a path, in any session) are one hit: the last one that worked.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from brain.commands.propose import ProposeResult
from brain.errors import UsageError
from brain.recall import past, search, store
from brain.recall.store import SyncReport
from brain.vocab import SEP

DEFAULT_LIMIT = 5
MAX_LIMIT = 100
TURNS = 300  # best turns whose commands are candidates
AFTER = 0.8  # weight of the turn after a command (the agent's report of it)
PREFIX = 4  # a query word and a command word match when they share this many first letters


@dataclass(frozen=True)
class HowtoHit:
    command: str  # credentials masked
    ok: bool | None
    code: int | None
    at: str | None  # None: the transcript did not date it
    cwd: str | None  # None: the agent keeps no folder
    agent: str
    session: str
    title: str | None  # None: the session has no title
    turn: str | None  # the recall id of the turn before it (`brain recall full ID`)
    score: float
    runs: int  # near-identical commands folded into this one
    output: str | None  # a snippet of what it printed (why it failed; None: nothing printed)


@dataclass(frozen=True)
class HowtoResult:
    query: str
    count: int
    hits: tuple[HowtoHit, ...]
    proposal: ProposeResult | None
    sync: SyncReport


def howto(
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    failed: bool = False,
    since: str = "",
    agent: str = "",
    cwd: str = "",
    propose_to: Path | None = None,
    to: str | None = None,
) -> HowtoResult:
    """The commands that did what `query` asks, best first; with `propose_to` (a vault) the best
    one is queued in its inbox as a bullet (once per command)."""
    from brain.when import parse_since

    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be 1 to {MAX_LIMIT}", "pass e.g. --limit 10")
    words = search.terms(query)
    if not words:
        raise UsageError("the task has no words to search for", "say it in plain words")
    names, _ = past.enabled_agents(agent)
    filters = search.Filters(
        agent=agent,
        since=parse_since(since).utc if since else "",
        cwd=str(Path(cwd).expanduser().absolute()) if cwd else "",
        agents=tuple(names),
    )
    conn = store.connect()
    try:
        report = store.sync(conn, names)
        hits = rank(conn, query, filters, limit=limit, failed=failed)
    finally:
        conn.close()
    proposal = None
    if propose_to is not None and hits:
        proposal = _propose(propose_to, query, next((h for h in hits if h.ok), None), to)
    return HowtoResult(query, len(hits), tuple(hits), proposal, report)


def rank(
    conn: sqlite3.Connection, query: str, filters: search.Filters, *, limit: int, failed: bool
) -> list[HowtoHit]:
    """The best commands for a task in an up-to-date transcripts.db (no sync here)."""
    words = search.focus(conn, search.terms(query))
    scored = search.ranked(conn, words, filters, TURNS)
    by_pos: dict[int, float] = {}
    sessions: dict[tuple[str, str], str] = {}
    for rowid, score in scored:
        row = conn.execute(
            "SELECT t.pos, t.agent, t.session, coalesce(s.title, '') FROM turns t"
            " LEFT JOIN sessions s ON s.agent = t.agent AND s.session = t.session"
            " WHERE t.id = ?",
            (rowid,),
        ).fetchone()
        if row:
            by_pos[row[0]] = score
            sessions[(row[1], row[2])] = row[3]
    candidates: list[tuple[float, past.CallRow, str]] = []
    for (agent, session), title in sessions.items():
        where = "c.agent = ? AND c.session = ? AND c.kind = 'shell'"
        for call in past.call_rows(conn, where, [agent, session]):
            if call.pos is None or past.looks_only(call.text):
                continue
            if filters.since and call.ts < filters.since:
                continue
            if not failed and call.ok is not True:
                continue
            near = max(by_pos.get(call.pos, 0.0), AFTER * by_pos.get(call.pos + 1, 0.0))
            if near <= 0:
                continue
            score = near * (1 + _share(words, call.text)) / 2  # 0 to 1, as `near` is
            candidates.append((score, call, title))
    return _fold(candidates, limit)


def _share(words: list[str], command: str) -> float:
    """The share of the query's words the command holds (by their first PREFIX letters)."""
    from brain.vocab import words as folded

    held = folded(command)
    heads = {w[:PREFIX] for w in held}

    def holds(word: str) -> bool:  # by its first letters, or inside a word (lint, eslint)
        return word[:PREFIX] in heads or (len(word) >= PREFIX and any(word in w for w in held))

    return sum(1 for w in words if holds(w)) / len(words) if words else 0.0


def _fold(candidates: list[tuple[float, past.CallRow, str]], limit: int) -> list[HowtoHit]:
    """Near-identical commands as one hit (the newest that worked stands for them), best first:
    the same command in any session, or, within a session, one command tried again give or
    take an option or a path (across sessions those are often different tasks: `vitest run -u`
    updates snapshots, `vitest run src/checkout` runs some tests)."""
    candidates.sort(key=lambda c: (-c[0], c[1].ts))
    groups: list[list[tuple[float, past.CallRow, str]]] = []
    for cand in candidates:
        call = cand[1]
        for group in groups:
            head = group[0][1]
            if head.ok != call.ok:
                continue
            if past.normal(head.text) == past.normal(call.text) or (
                (head.agent, head.session) == (call.agent, call.session)
                and past.same(head.text, call.text)
            ):
                group.append(cand)
                break
        else:
            groups.append([cand])
    hits = []
    for group in groups:
        score = group[0][0]
        _, call, title = max(group, key=lambda c: c[1].ts)  # the last one run
        hits.append(
            HowtoHit(
                past.masked(call.text),
                call.ok,
                call.code,
                call.ts or None,
                call.cwd or None,
                call.agent,
                call.session,
                title or None,
                call.turn or None,
                round(score, 4),
                len(group),
                past.one_line(call.output) or None,
            )
        )
    hits.sort(key=lambda h: (-h.score, _newest(h.at)))
    return hits[:limit]


def _newest(ts: str | None) -> str:
    """A sort key putting newer times first."""
    return "".join(chr(0x10FFFF - ord(c)) for c in ts or "")


def _propose(vault: Path, query: str, best: HowtoHit | None, to: str | None) -> ProposeResult:
    from brain.commands.propose import first_words, propose_many

    if best is None:
        raise UsageError("no command that worked to propose", "drop --all, or try other words")
    key = f"howto/{best.agent}/{best.session}/{best.turn or ''}/{past.normal(best.command)}"
    project = past.project_of(best.cwd)
    handle = first_words(query, 6) or "howto"
    where = f" in {project}" if project else ""
    line = f"{handle}{SEP}`{' '.join(best.command.split())}`{where}"
    source = f"{best.agent} session {best.session[:8]}"
    if key in past.proposed(vault):
        return ProposeResult(
            str(vault), line, to.upper() if to else None, "remembered", None, None, None, None
        )
    (result,) = propose_many(vault, [(line, source)], to=to)
    if result.action != "refused":
        past.remember(vault, [key])
    return result
