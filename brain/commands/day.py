"""`brain day [DATE]` and `brain week`: what was worked on, by repository, from the transcripts.

A day is a local calendar day. The week view is the same, day by day, for the days from
`--since` (default 7d: today and the six days before it) to today. Commits are read once per
repository for the whole window.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date, datetime

from brain.errors import UsageError
from brain.recall import activity, past, store
from brain.recall.activity import CommitRow, Place, RepoDay
from brain.recall.store import SyncReport
from brain.when import parse_since

DEFAULT_WEEK = "7d"
MAX_DAYS = 366


@dataclass(frozen=True)
class DayResult:
    date: str  # YYYY-MM-DD, local
    session_count: int
    turn_count: int
    file_count: int
    commit_count: int
    repos: tuple[RepoDay, ...]


@dataclass(frozen=True)
class WeekResult:
    first_date: str  # YYYY-MM-DD, local
    last_date: str
    project: str | None  # --project, None without it
    session_count: int
    turn_count: int
    file_count: int
    commit_count: int
    days: tuple[DayResult, ...]


@dataclass(frozen=True)
class Activity:
    """What `day` and `week` return: the days, and the sync that preceded them."""

    week: WeekResult
    sync: SyncReport


class _Reader:
    """One connection, and the folder and history caches shared by the days of a window."""

    def __init__(
        self, conn: sqlite3.Connection, agents: tuple[str, ...], git: bool, window: tuple[str, str]
    ) -> None:
        self.conn = conn
        self.agents = agents
        self.git = git
        self.window = window
        self.places: dict[str, Place] = {}
        self.histories: dict[str, tuple[list[CommitRow], str | None]] = {}

    def day(self, when: date, project: str) -> DayResult:
        start, end = past.utc_bounds(when, when)
        repos = activity.gather(
            self.conn,
            start,
            end,
            self.agents,
            git=self.git,
            project=project,
            cache=self.places,
            history_cache=self.histories,
            commit_window=self.window,
        )
        return DayResult(
            when.isoformat(),
            sum(len(r.sessions) for r in repos),
            sum(s.turn_count for r in repos for s in r.sessions),
            sum(len(r.files) for r in repos),
            sum(len(r.commits) for r in repos),
            tuple(repos),
        )


def activity_in(
    first: date, last: date, *, git: bool = True, project: str = "", agent: str = ""
) -> Activity:
    """The days from `first` to `last` (local), after an incremental sync of the enabled agents."""
    if last < first:
        raise UsageError(f"{first} is after {last}", "pick an earlier --since")
    if (last - first).days >= MAX_DAYS:
        raise UsageError(f"at most {MAX_DAYS} days at a time", "pass a shorter --since")
    names, agents = past.enabled_agents(agent)
    conn = store.connect()
    try:
        report = store.sync(conn, names)
        reader = _Reader(conn, agents, git, past.utc_bounds(first, last))
        found = tuple(reader.day(d, project) for d in activity.days(first, last))
    finally:
        conn.close()
    week = WeekResult(
        first.isoformat(),
        last.isoformat(),
        project or None,
        sum(d.session_count for d in found),
        sum(d.turn_count for d in found),
        sum(d.file_count for d in found),
        sum(d.commit_count for d in found),
        found,
    )
    return Activity(week, report)


def day(text: str = "", *, git: bool = True, project: str = "", agent: str = "") -> DayResult:
    """One day (`YYYY-MM-DD`, `today`, `yesterday`; default today)."""
    when = past.local_day(text)
    return activity_in(when, when, git=git, project=project, agent=agent).week.days[0]


def week(
    since: str = DEFAULT_WEEK, *, git: bool = True, project: str = "", agent: str = ""
) -> WeekResult:
    today = datetime.now().astimezone().date()
    first = parse_since(since or DEFAULT_WEEK).first_day(today)
    return activity_in(first, today, git=git, project=project, agent=agent).week
