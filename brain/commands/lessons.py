"""`brain lessons`: the corrections and retries in recent sessions, and proposals made of them.

A moment is proposed at most once per vault, whatever became of the proposal (a person who
dropped it does not want it back): the keys of the moments proposed are remembered in the state
dir (brain.recall.past.proposed), keyed by agent, session and turn (or call).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from brain.errors import BrainError, UsageError
from brain.recall import lessons, past, store
from brain.recall.lessons import Moment
from brain.recall.store import SyncReport
from brain.vocab import SEP

DEFAULT_SINCE = "7d"
KINDS = ("correction", "retry")


@dataclass(frozen=True)
class Proposal:
    key: str  # the moment's key
    action: str  # proposed | queued | known | refused (as `brain propose`) | remembered
    number: int | None  # its number in `brain inbox`, None when nothing was added
    markdown: str | None  # None when it was proposed before (remembered)
    problem: str | None


@dataclass(frozen=True)
class LessonsResult:
    since_at: str  # moments at or after it (brain.when.at)
    count: int
    moments: tuple[Moment, ...]
    proposals: tuple[Proposal, ...]
    sync: SyncReport


def find_lessons(
    *,
    since: str = DEFAULT_SINCE,
    kind: str = "",
    agent: str = "",
    propose_to: Path | None = None,
) -> LessonsResult:
    """The moments since `since` (`7d`, a date), oldest first; with `propose_to` (a vault) each
    one not proposed before is queued in its inbox for LEARNINGS."""
    from brain.when import at, parse_since

    if kind and kind not in KINDS:
        raise UsageError(f"--kind {kind} is not one of {', '.join(KINDS)}", "drop --kind")
    names, agents = past.enabled_agents(agent)
    start = parse_since(since or DEFAULT_SINCE)
    window = past.Window(since=start.utc, agents=agents)
    conn = store.connect()
    try:
        report = store.sync(conn, names)
        found: list[Moment] = []
        if kind in ("", "correction"):
            found += lessons.corrections_in(conn, window)
        if kind in ("", "retry"):
            found += lessons.retries_in(conn, window)
    finally:
        conn.close()
    found.sort(key=lambda m: (m.at or "", m.key))
    made = _propose(propose_to, found) if propose_to is not None else ()
    return LessonsResult(at(start.start), len(found), tuple(found), made, report)


def bullet(moment: Moment) -> tuple[str, str]:
    """(line, source) of a moment's proposal: `handle — what was learnt`, the session as its
    source (its agent, short id and title). The handle is the project's name and a short noun
    phrase (brain.handles): `shop make deploy`, `shop pnpm`."""
    from brain import handles

    project = past.project_of(moment.cwd)
    if moment.kind == "retry":  # the command that worked names it: `make deploy`
        programs = past.programs(moment.worked or "")
        head = handles.from_command(programs[0]) if programs else ""
    else:  # what the person said, as a noun phrase: `pnpm`, not `We use pnpm in`
        head = handles.from_prose(moment.lesson)
    handle = " ".join(p for p in (project, head) if p) or "lesson"
    title = f" ({' '.join(moment.title.replace('—', '-').split())})" if moment.title else ""
    source = f"{moment.agent} session {moment.session[:8]}{title}"
    return f"{handle}{SEP}{moment.lesson.replace(SEP, ' - ')}", source


def _propose(vault: Path, moments: list[Moment]) -> tuple[Proposal, ...]:
    from brain.commands.propose import propose_many

    done = past.proposed(vault)
    fresh = [m for m in moments if m.key not in done]
    results = propose_many(vault, [bullet(m) for m in fresh], to="LEARNINGS") if fresh else []
    past.remember(
        vault, [m.key for m, r in zip(fresh, results, strict=True) if r.action != "refused"]
    )
    made = {m.key: r for m, r in zip(fresh, results, strict=True)}
    out = []
    for m in moments:
        r = made.get(m.key)
        if r is None:
            out.append(Proposal(m.key, "remembered", None, None, None))
        else:
            out.append(Proposal(m.key, r.action, r.number, r.markdown, r.problem))
    return tuple(out)


def corrections(session_id: str, limit: int = 5) -> list[Moment]:
    """This session's latest corrections, oldest first: what the Stop hook's settle message
    quotes. Only the session's own transcript is read first (fast enough for a hook); with
    recall off, transcripts.db unreadable, or a session it does not know, the answer is []."""
    if not session_id or limit < 1:
        return []
    try:
        names = store.enabled()
        conn = store.connect() if names else None
    except BrainError:
        return []
    if conn is None:
        return []
    try:
        for name in names:
            ad = store.adapter(name)
            for path in ad.files():
                if ad.may_hold(path, session_id):
                    store.ingest_file(conn, ad, path)
        window = past.Window(session=session_id, agents=tuple(names))
        found = lessons.corrections_in(conn, window)
    except (OSError, sqlite3.Error):  # a transcript that vanished, a database that broke
        return []
    finally:
        conn.close()
    return found[-limit:]
