"""`brain log`: the lookups that missed and still miss — the writing backlog.

Every find is logged with how sure its answer was (brain.usage: `evidence`). A miss is a find
where nothing stood out, whatever weak lines it showed (in a row logged before brain kept that, a
find that returned nothing); a prime that logs itself as judged is read the same way. A missed
query is a backlog item only while it still misses, so each distinct one is asked again against
the index as it is now, in the mode `brain find` would use now (hybrid when an embedder is
configured, else keyword): a query a later edit answered (something stands out now) is set aside.
What remains, grouped by query text (case and spacing folded), is what to write bullets or
`AI/synonyms.tsv` rows for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from brain import usage
from brain.commands.ledger import where
from brain.errors import BrainError
from brain.when import since_at

# The rows read: finds, and primes that say how sure they were (a prime's hint row does not).
LOOKUPS = "(command = 'find' OR (command = 'prime' AND evidence != ''))"


@dataclass(frozen=True)
class Miss:
    query: str  # the latest spelling of the query, credentials masked
    count: int  # times it was asked and found nothing
    last_date: str  # YYYY-MM-DD, local, of the latest miss
    callers: tuple[str, ...]  # who asked it, most often first


@dataclass(frozen=True)
class Answered:
    query: str
    count: int
    last_date: str
    hit_count: int  # the hits of its answer now (something stands out)


@dataclass(frozen=True)
class CallerMisses:
    caller: str
    misses: int  # open misses this caller asked


@dataclass(frozen=True)
class LogResult:
    vault: str
    since_at: str | None  # where --since starts (brain.when.at), None without it
    mode: str | None  # the find mode the misses were asked again in (None: none asked)
    lookups: int  # finds (and judged primes) logged in scope
    misses: int  # of them, those where nothing stood out
    open: tuple[Miss, ...]
    answered: tuple[Answered, ...]
    callers: tuple[CallerMisses, ...]


@dataclass
class _Group:
    query: str
    last: float = 0.0
    callers: dict[str, int] = field(default_factory=dict)


def _key(query: str) -> str:
    return " ".join(query.casefold().split())


def log(vault: Path, *, since: str = "", log_path: Path | None = None) -> LogResult:
    from brain.semantic import warnings_once

    with warnings_once():  # each miss is asked again: the index's state is said once, not each
        return _log(vault, since, log_path)


def _log(vault: Path, since: str, log_path: Path | None) -> LogResult:
    from brain.commands.find import find
    from brain.secrets import redact

    clause, params = where(vault, since, "")
    clause += f" AND {LOOKUPS}"
    conn = usage.connect(log_path)
    try:
        lookups, misses = conn.execute(
            f"SELECT count(*), coalesce(sum({usage.MISS_SQL}), 0) FROM events WHERE {clause}",  # noqa: S608
            params,
        ).fetchone()
        rows = conn.execute(
            "SELECT query, caller, count(*), max(ts) FROM events"  # noqa: S608 - constants only
            f" WHERE {clause} AND {usage.MISS_SQL} GROUP BY query, caller",
            params,
        ).fetchall()
    finally:
        conn.close()
    groups: dict[str, _Group] = {}
    for query, caller, count, last in rows:
        g = groups.setdefault(_key(query), _Group(query))
        if last > g.last:
            g.query, g.last = query, float(last)
        g.callers[caller] = g.callers.get(caller, 0) + int(count)
    open_: list[Miss] = []
    answered: list[Answered] = []
    asked: dict[str, int] = {}
    mode: str | None = None
    for g in groups.values():
        count = sum(g.callers.values())
        last = time.strftime("%Y-%m-%d", time.localtime(g.last))
        try:
            found = find(vault, g.query)
        except BrainError:  # a query with no words to search for can never be answered
            found = None
        if found is not None:
            mode = found.mode
            if found.evidence == usage.STRONG:
                answered.append(Answered(redact(g.query), count, last, len(found.hits)))
                continue
        ranked = sorted(g.callers.items(), key=lambda kv: (-kv[1], kv[0]))
        # Asked again as logged (the state dir is yours alone), shown as `brain secrets` shows it.
        open_.append(Miss(redact(g.query), count, last, tuple(c for c, _ in ranked)))
        for c, n in ranked:
            asked[c] = asked.get(c, 0) + n
    open_.sort(key=lambda m: (-m.count, _neg(m.last_date), m.query))
    answered.sort(key=lambda m: (-m.count, _neg(m.last_date), m.query))
    by_caller = tuple(
        CallerMisses(c, n) for c, n in sorted(asked.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return LogResult(
        str(vault),
        since_at(since),
        mode,
        int(lookups),
        int(misses),
        tuple(open_),
        tuple(answered),
        by_caller,
    )


def _neg(day: str) -> str:
    """Sorts YYYY-MM-DD newest first inside an ascending sort."""
    return "".join(chr(0x7F - ord(c)) for c in day)
