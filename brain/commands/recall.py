"""`brain recall`: search what was said in the agents' transcripts (not the vault).

Every function returns data and never prints; `brain.present.recall` turns it into
output. A query first brings transcripts.db up to date with the enabled agents' files
(incrementally: only new bytes of changed files are read).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brain.errors import BrainError, UsageError
from brain.recall import SOURCES, enable_command, search, store
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


def need_enabled() -> list[str]:
    """The agents whose transcripts recall reads; a BrainError with the next step when none."""
    names = store.enabled()
    if not names:
        raise BrainError(
            "no transcripts are enabled for recall",
            f"opt in with `{enable_command('claude')}`; `{SOURCES}` lists the agents",
        )
    return names


def sync(*, full: bool = False, progress: Progress | None = None) -> SyncReport:
    names = need_enabled()
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
    names = need_enabled()
    if agent:
        store.adapter(agent)
        if agent not in names:
            raise BrainError(
                f"{agent} transcripts are not enabled", f"run `{enable_command(agent)}`"
            )
    # Stored text has its undecodable bytes as U+FFFD (see adapters.loads): so do the filters.
    folder = repair(str(Path(cwd).expanduser().absolute())) if cwd else ""
    filters = search.Filters(
        agent=agent,
        since=parse_since(since).utc if since else "",
        cwd=folder,
        exclude_session=repair(exclude_session),
        agents=tuple(names),
    )
    conn = store.connect()
    try:
        report = store.sync(conn, names, progress=progress)
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
