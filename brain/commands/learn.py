"""`brain learn`: the words people search with, turned into aliases.

From the usage log: a query that keeps reaching a bullet (the first hit of an answer where
something stands out: a weak answer's first line vouches for nothing) only through the bullet's
body or its vector, never its handle or aliases, says how people name that bullet. Its telling
words that the handle and aliases lack are proposed as an alias. Aliases no logged query ever
used are listed (they cost nothing, but say nothing either). `--apply` writes the proposed aliases:
a line edit of each bullet, cheap to undo.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brain import usage
from brain.config import CORE_FILES
from brain.text import plural
from brain.vault import parse_head
from brain.vocab import STOPWORDS, words

LOOKUPS_MIN = 2  # lookups that reached the bullet by its body before an alias is proposed
SESSIONS_MIN = 3  # sessions that asked so before `brain tend` applies it without asking
QUERIES_MAX = 200  # the most frequent distinct queries re-asked (each is a find)
SINCE_DAYS = 90
if TYPE_CHECKING:
    from brain.vault import Unit

ALIAS_WORDS = 4  # an alias is a few words, not a sentence


@dataclass(frozen=True)
class AliasProposal:
    path: str
    line: int
    handle: str
    alias: str
    lookups: int  # logged lookups that reached the bullet by its body or vector only
    session_count: int  # distinct sessions among them
    queries: tuple[str, ...]  # the queries, most frequent first (at most three)


@dataclass(frozen=True)
class UnusedAlias:
    path: str
    line: int
    handle: str
    alias: str


@dataclass(frozen=True)
class LearnResult:
    vault: str
    lookups: int  # logged finds read
    query_count: int  # distinct queries asked again
    proposed: tuple[AliasProposal, ...]
    unused: tuple[UnusedAlias, ...]
    applied: tuple[str, ...]  # with --apply: "path:line alias"
    stopped: str | None  # why the run stopped before asking every query


def _telling(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]


def _session(ev: usage.Event) -> str:
    """A lookup's session: the agent's, else the caller and the day (a person at a terminal)."""
    if ev.session:
        return ev.session
    return f"{ev.caller}@{dt.date.fromtimestamp(ev.ts).isoformat()}"


Reached = dict[tuple[str, int, str], dict[str, list[usage.Event]]]


def learn(
    vault: Path,
    *,
    apply: bool = False,
    mode: str = "",
    log: Path | None = None,
    deadline: float | None = None,
    unused: bool = True,
) -> LearnResult:
    """Aliases to propose (and with `apply`, written); with `unused`, the aliases no logged query
    used (the sweep, which does not list them, skips reading every bullet for them)."""
    from brain import index
    from brain.commands.verify import bullets
    from brain.semantic import warnings_once

    events = _logged(vault, log)
    asked: dict[str, list[usage.Event]] = {}
    for e in events:
        key = " ".join(_telling(e.query))
        if key:
            asked.setdefault(key, []).append(e)
    ranked = sorted(asked.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:QUERIES_MAX]
    conn = index.open_index(vault)
    try:
        with warnings_once():  # each query is asked again: the index's state is said once
            reached, done, stopped = _ask(vault, conn, ranked, mode, deadline)
        rows = bullets(conn) if unused and events else []
    finally:
        conn.close()
    proposed = _proposals(reached)
    unheard = _unused(rows, events) if rows else []
    applied: tuple[str, ...] = ()
    if apply and proposed:
        applied = tuple(add_aliases(vault, proposed))
    return LearnResult(
        str(vault), len(events), done, tuple(proposed), tuple(unheard), applied, stopped or None
    )


def _logged(vault: Path, log: Path | None) -> list[usage.Event]:
    """The vault's logged finds of the last SINCE_DAYS days."""
    conn = usage.connect(log)
    try:
        since = time.time() - SINCE_DAYS * 86400
        return [
            e
            for e in usage.events(conn, since)
            if e.command == "find" and e.vault == usage.vault_key(vault)
        ]
    finally:
        conn.close()


def _ask(
    vault: Path,
    conn: sqlite3.Connection,
    ranked: list[tuple[str, list[usage.Event]]],
    mode: str,
    deadline: float | None,
) -> tuple[Reached, int, str]:
    """Ask each frequent query again: the bullet it reaches first, when by body or vector only,
    with the query's words its names lack. Returns those, the queries asked, why it stopped."""
    from brain.commands.find import find_in
    from brain.errors import BrainError
    from brain.secrets import scan_line

    reached: Reached = {}
    done = 0
    for key, evs in ranked:
        if len(evs) < LOOKUPS_MIN:
            break  # ranked by count: the rest are rarer
        if any(scan_line(e.query) for e in evs):
            continue  # a credential pasted into a query must never become an alias (folded, unseen)
        if deadline is not None and time.monotonic() > deadline:
            asked = plural(len(ranked), "query", "queries")
            return reached, done, f"out of time after {done} of {asked}"
        done += 1
        try:
            found = find_in(conn, vault, evs[-1].query, mode=mode)
        except BrainError:
            continue
        top = found.hits[0] if found.hits and found.evidence == usage.STRONG else None
        if top is None or top.kind != "bullet" or top.path not in CORE_FILES:
            continue
        if "exact" in top.match or "handle" in top.match:
            continue
        named = set(_telling(" ".join((top.handle, *top.aliases))))
        new = [w for w in _telling(key) if w not in named][:ALIAS_WORDS]
        if not new:
            continue
        alias = " ".join(dict.fromkeys(new))
        reached.setdefault((top.path, top.line, top.handle), {}).setdefault(alias, []).extend(evs)
    return reached, done, ""


def unfit_alias(alias: str, *, tuning: bool) -> bool:
    """An alias made of query words that the guard or strict lint flags (`maxconns explicitly
    disregard previous`): never proposed, never written, by learn or by tend."""
    from brain import guard

    return bool(guard.check(alias) or guard.strict(alias, tuning=tuning))


def _proposals(reached: Reached) -> list[AliasProposal]:
    proposed = []
    for (path, line, handle), by_alias in reached.items():
        for alias, evs in by_alias.items():
            if len(evs) < LOOKUPS_MIN or unfit_alias(alias, tuning=path == CORE_FILES[2]):
                continue
            counts: dict[str, int] = {}
            for e in evs:
                counts[e.query] = counts.get(e.query, 0) + 1
            top_q = tuple(q for q, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:3])
            sessions = len({_session(e) for e in evs})
            proposed.append(AliasProposal(path, line, handle, alias, len(evs), sessions, top_q))
    proposed.sort(key=lambda p: (-p.session_count, -p.lookups, p.path, p.line))
    return proposed


def _unused(rows: list[Unit], events: list[usage.Event]) -> list[UnusedAlias]:
    """Aliases whose words never all stood in one logged query."""
    holders: dict[str, set[int]] = {}
    for k, e in enumerate(events):
        for w in set(words(e.query)):
            holders.setdefault(w, set()).add(k)
    out = []
    for r in rows:
        for alias in r.aliases:
            ws = words(alias)
            if not ws:
                continue
            found = set.intersection(*(holders.get(w, set()) for w in ws))
            if not found:
                out.append(UnusedAlias(r.path, r.line, r.handle, alias))
    return out


def with_alias(line: str, handle: str, alias: str) -> str:
    """A bullet's line with one more alias: added to its `(aliases: ...)`, or a new one after
    the handle. The rest of the line is kept byte for byte."""
    head = f"**{handle}**"
    at = line.find(head)
    if at < 0:
        return line
    end = at + len(head)
    if line[end:].startswith(" (aliases: "):
        close = line.index(")", end)
        return f"{line[:close]}, {alias}{line[close:]}"
    return f"{line[:end]} (aliases: {alias}){line[end:]}"


def add_aliases(vault: Path, proposals: list[AliasProposal]) -> list[str]:
    """Write each alias into its bullet (a line edit); a bullet that moved or changed since the
    log was read is left alone. Returns `path:line alias`."""
    from brain.edits import edit_lines

    def edit(p: AliasProposal) -> Callable[[str], str | None]:
        def one(line: str) -> str | None:
            try:
                handle, aliases, _ = parse_head(line)
            except ValueError:
                return None
            if handle != p.handle or p.alias in aliases:
                return None
            return with_alias(line, handle, p.alias)

        return one

    done = set(edit_lines(vault, [(p.path, p.line, edit(p)) for p in proposals]))
    return [f"{p.path}:{p.line} {p.alias}" for p in proposals if (p.path, p.line) in done]
