"""`brain recall`: search what was said in the agents' transcripts (not the vault).

Every function returns data and never prints; `brain.present.recall` turns it into
output. A query first brings transcripts.db up to date with the enabled agents' files
(incrementally: only new bytes of changed files are read).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from brain.errors import BrainError, UsageError
from brain.recall import enable_command, search, store
from brain.recall.search import Hit
from brain.recall.store import Progress, SyncReport
from brain.text import repair
from brain.when import parse_since

DEFAULT_LIMIT = 10
MAX_LIMIT = 1000


@dataclass(frozen=True)
class RecallResult:
    query: str
    count: int
    hits: tuple[Hit, ...]
    sync: SyncReport


@dataclass(frozen=True)
class FullTurn:
    """One turn whole; as a recall hit, what the transcript lacks is None."""

    id: str
    agent: str
    session: str
    title: str | None
    role: str
    at: str | None
    cwd: str | None
    body: str


@dataclass(frozen=True)
class Source:
    name: str
    label: str
    enabled: bool
    root: str
    exists: bool
    turn_count: int


@dataclass(frozen=True)
class Toggle:
    agent: str
    enabled: bool
    sources: tuple[str, ...]  # every enabled agent after the change
    removed_count: int  # turns deleted from transcripts.db (on --disable)


def mode_of(
    text: str,
    full: str | None = None,
    sync: bool = False,
    sources: bool = False,
    enable: str | None = None,
    disable: str | None = None,
) -> str:
    """The one mode asked for (QUERY, --full, --sync, --sources, --enable, --disable); a usage
    error for none or several (the CLI and the MCP tool alike)."""
    modes = [
        name
        for name, on in (
            ("QUERY", bool(text)),
            ("--full", full is not None),
            ("--sync", sync),
            ("--sources", sources),
            ("--enable", enable is not None),
            ("--disable", disable is not None),
        )
        if on
    ]
    if len(modes) != 1:
        what = " and ".join(modes) if modes else "nothing to do"
        raise UsageError(
            "brain recall takes one of QUERY, full ID, sync, sources, enable NAME, disable NAME "
            f"({what})",
            "see `brain recall --help`",
        )
    return modes[0]


def sync(*, full: bool = False, progress: Progress | None = None) -> SyncReport:
    names = store.need_enabled()
    conn = store.connect()
    try:
        return store.sync(conn, names, full=full, progress=progress)
    finally:
        conn.close()


def recall(
    query: str,
    *,
    limit: int = DEFAULT_LIMIT,
    since: str = "",
    agent: str = "",
    cwd: str = "",
    exclude_session: str = "",
    progress: Progress | None = None,
) -> RecallResult:
    """The turns that best match `query`, after an incremental sync of the enabled agents."""
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be 1 to {MAX_LIMIT}", "pass e.g. --limit 20")
    words = search.terms(query)
    if not words:
        raise UsageError("the query has no words to search for", "ask in plain words")
    filters = _filters(agent, since, cwd, exclude_session)
    conn = store.connect()
    try:
        report = store.sync(conn, list(filters.agents), progress=progress)
        words = search.focus(conn, words)
        found = search.hits(conn, words, search.ranked(conn, words, filters, limit))
    finally:
        conn.close()
    return RecallResult(query, len(found), tuple(found), report)


def full(turn_id: str) -> FullTurn:
    """One turn in full, by its id or a unique prefix of it (as printed in a listing)."""
    key = turn_id.strip()
    if not key:
        raise UsageError(
            "`brain recall full` needs a turn id", "copy one from a `brain recall` listing"
        )
    conn = store.connect()
    try:
        rows = conn.execute(
            "SELECT t.id, t.tid, t.agent, t.session, coalesce(s.title, ''), t.role, t.ts, t.cwd"
            " FROM turns t LEFT JOIN sessions s ON s.agent = t.agent AND s.session = t.session"
            " WHERE t.tid >= ? AND t.tid < ? LIMIT 2",
            (key, key + "\U0010ffff"),
        ).fetchall()
        exact = [r for r in rows if r[1] == key]
        rows = exact or rows
        if not rows:
            session = conn.execute(
                "SELECT agent, session FROM sessions WHERE session >= ? AND session < ? LIMIT 1",
                (key, key + "\U0010ffff"),
            ).fetchone()
            if session:  # the id `brain recall sessions` leads its lines with, without a query
                raise BrainError(
                    f"{key!r} is a session ({session[0]} {session[1]}), not a turn",
                    f"`brain recall sessions WORDS` leads each session with its best turn's id;"
                    f" or search it: `brain recall WORDS --agent {session[0]}`",
                )
            raise BrainError(f"no turn {key!r} in transcripts.db", "run `brain recall QUERY` first")
        if len(rows) > 1:
            raise UsageError(f"{key!r} names more than one turn", "give more of the id")
        rowid, tid, agent, session, title, role, ts, cwd = rows[0]
        body = conn.execute("SELECT body FROM fts WHERE rowid = ?", (rowid,)).fetchone()
    finally:
        conn.close()
    text = body[0] if body else ""
    return FullTurn(tid, agent, session, title or None, role, ts or None, cwd or None, text)


def sources() -> list[Source]:
    from brain.recall.adapters.known import registry

    on = store.enabled()
    counts: dict[str, int] = {}
    if store.db_path().exists():
        conn = store.connect()
        try:
            counts = dict(conn.execute("SELECT agent, count(*) FROM turns GROUP BY agent"))
        finally:
            conn.close()
    out = []
    for name, ad in registry().items():
        root = ad.root()
        out.append(
            Source(name, ad.label, name in on, str(root), root.is_dir(), counts.get(name, 0))
        )
    return out


def toggle(name: str, on: bool) -> Toggle:
    names = store.set_enabled(name, on)
    removed = 0
    if not on and store.db_path().exists():
        conn = store.connect()
        try:
            removed = store.forget(conn, name)
        finally:
            conn.close()
    return Toggle(name, on, tuple(names), removed)


# --- recall sessions: the sessions, not their turns ----------------------------------------------

SESSIONS_LIMIT = 20


@dataclass(frozen=True)
class Session:
    """One session: what it was, where and when, and with a query its best turn (the id
    `recall full` takes). What the transcript lacks is None."""

    agent: str
    session: str  # the agent's own id (what `claude --resume` or `codex resume` takes)
    title: str | None
    cwd: str | None
    start_at: str | None  # its first turn (UTC ISO)
    end_at: str | None  # its last
    turn_count: int
    turn: str | None  # with a query: the id of its best turn
    score: float | None  # with a query: that turn's score
    # the shortest start of `turn` no other turn shares, for the text listing
    short: str = field(default="", compare=False, metadata={"json": False})


@dataclass(frozen=True)
class SessionsResult:
    query: str | None  # None: the newest sessions, not a search
    count: int
    sessions: tuple[Session, ...]


def sessions(
    query: str = "",
    *,
    limit: int = SESSIONS_LIMIT,
    since: str = "",
    agent: str = "",
    cwd: str = "",
    exclude_session: str = "",
    progress: Progress | None = None,
) -> SessionsResult:
    """The sessions whose turns match `query` (best first, each once, by its best turn), or
    without one the newest sessions, after the incremental sync a search makes."""
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be 1 to {MAX_LIMIT}", "pass e.g. --limit 20")
    words = search.terms(query) if query else []
    if query and not words:
        raise UsageError("the query has no words to search for", "ask in plain words")
    filters = _filters(agent, since, cwd, exclude_session)
    conn = store.connect()
    try:
        store.sync(conn, list(filters.agents), progress=progress)
        if words:
            words = search.focus(conn, words)
            best: dict[tuple[str, str], tuple[int, float]] = {}
            for rowid, score in search.ranked(conn, words, filters, MAX_LIMIT):
                row = conn.execute("SELECT agent, session FROM turns WHERE id = ?", (rowid,))
                key = tuple(row.fetchone())
                if key not in best:
                    best[key] = (rowid, score)
                    if len(best) == limit:
                        break
            found = [_session(conn, a, s, best[(a, s)]) for a, s in best]
        else:
            where, args = search.filtered(filters)
            keys = conn.execute(
                "SELECT t.agent, t.session FROM turns t WHERE 1"  # noqa: S608
                f"{where} GROUP BY t.agent, t.session ORDER BY max(t.ts) DESC LIMIT ?",
                [*args, limit],
            ).fetchall()
            found = [_session(conn, a, s, None) for a, s in keys]
    finally:
        conn.close()
    return SessionsResult(query or None, len(found), tuple(found))


def _filters(agent: str, since: str, cwd: str, exclude_session: str) -> search.Filters:
    """The filters of a search, checked as `recall` checks them (the agent enabled)."""
    names = store.need_enabled()
    if agent:
        store.adapter(agent)
        if agent not in names:
            raise BrainError(
                f"{agent} transcripts are not enabled", f"run `{enable_command(agent)}`"
            )
    # Stored text has its undecodable bytes as U+FFFD (see adapters.loads): so do the filters.
    folder = repair(str(Path(cwd).expanduser().absolute())) if cwd else ""
    return search.Filters(
        agent=agent,
        since=parse_since(since).utc if since else "",
        cwd=folder,
        exclude_session=repair(exclude_session),
        agents=tuple(names),
    )


def _session(
    conn: sqlite3.Connection, agent: str, session: str, best: tuple[int, float] | None
) -> Session:
    """A session's facts from its turns (all of them, whatever filtered the listing)."""
    title, cwd, start, end, n = conn.execute(
        "SELECT nullif(s.title, ''), coalesce(nullif(s.cwd, ''), max(t.cwd), ''), min(t.ts),"
        " max(t.ts), count(*) FROM turns t LEFT JOIN sessions s"
        " ON s.agent = t.agent AND s.session = t.session WHERE t.agent = ? AND t.session = ?",
        (agent, session),
    ).fetchone()
    turn = score = None
    short = ""
    if best is not None:
        turn = conn.execute("SELECT tid FROM turns WHERE id = ?", (best[0],)).fetchone()[0]
        score, short = round(best[1], 4), search.short_id(conn, turn)
    return Session(
        agent, session, title, cwd or None, start or None, end or None, n, turn, score, short
    )
