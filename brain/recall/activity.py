"""What was worked on, by repository, in a window of local days: sessions, files written, commits.

Sessions are grouped by the repository they ran in: their folder walked up to the nearest `.git`.
A session that names no folder (a Gemini CLI chat in an older hash-named project dir) takes the
folder of the first file it wrote by an absolute path, else it is listed under no folder. A folder
that no longer exists is listed with a note and no commits, never walked up (its parent may be an
unrelated repository). Commits are read with pygit2 from every local branch of each repository,
by committer time, at most MAX_COMMITS per repository and window.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from brain.recall import past

MAX_COMMITS = 200  # per repository and window
SLACK = 86400  # seconds: a walk by time stops this far past the window (clock skew, rebases)


@dataclass(frozen=True)
class SessionRow:
    agent: str
    session: str
    title: str | None  # None when the agent keeps none
    start_at: str  # its first turn in the window (UTC ISO)
    end_at: str  # its last
    turn_count: int  # in the window


@dataclass(frozen=True)
class FileRow:
    path: str  # relative to the repository when inside it, else as the agent wrote it
    writes: int
    last_at: str


@dataclass(frozen=True)
class CommitRow:
    sha: str
    at: str  # committer time, UTC ISO
    author: str
    summary: str


@dataclass(frozen=True)
class RepoDay:
    repo: str | None  # the repository's folder, else the folder the sessions ran in (None: none)
    project: str | None  # the name it goes by (the folder's name; None with no folder)
    git: bool  # commits were read from it
    note: str | None  # why they were not, when they were not (None when nothing to say)
    sessions: tuple[SessionRow, ...]
    files: tuple[FileRow, ...]
    commits: tuple[CommitRow, ...]


@dataclass(frozen=True)
class Place:
    repo: str | None
    project: str | None
    is_git: bool
    note: str | None


def place(cwd: str, cache: dict[str, Place]) -> Place:
    """Where a session ran: its repository, or why it has none (cached per folder)."""
    if cwd in cache:
        return cache[cwd]
    from brain.gitutil import repo_root

    if not cwd:
        got = Place(None, None, False, "the agent keeps no folder")
    else:
        folder = Path(cwd)
        try:
            exists = folder.is_dir()
        except OSError:
            exists = False
        if not exists:
            got = Place(cwd, folder.name, False, "no longer exists; commits skipped")
        else:
            root = repo_root(folder)
            if root is None:
                got = Place(cwd, folder.name, False, "not a git repository")
            else:
                got = Place(str(root), root.name, True, None)
    cache[cwd] = got
    return got


def commits(repo: str, start: str, end: str) -> tuple[list[CommitRow], str | None]:
    """The commits on the repository's local branches whose committer time is in [start, end)
    (UTC ISO), newest first; and a note when they could not be read."""
    from brain import gitutil

    found, note = gitutil.commits_between(
        repo, _epoch(start), _epoch(end), slack=SLACK, most=MAX_COMMITS
    )
    rows = [
        CommitRow(sha, past.iso_z(datetime.fromtimestamp(when, UTC)), author, summary)
        for sha, when, author, summary in found
    ]
    return rows, note


def _epoch(ts: str) -> int:
    return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp())


def sessions_in(
    conn: sqlite3.Connection, start: str, end: str, agents: tuple[str, ...]
) -> list[tuple[SessionRow, str]]:
    """The sessions with turns in [start, end), each with its folder."""
    marks = ",".join("?" * len(agents))
    rows = conn.execute(
        "SELECT t.agent, t.session, nullif(s.title, ''), min(t.ts), max(t.ts), count(*),"  # noqa: S608
        " coalesce(nullif(s.cwd, ''), max(t.cwd), '')"
        " FROM turns t LEFT JOIN sessions s ON s.agent = t.agent AND s.session = t.session"
        f" WHERE t.ts >= ? AND t.ts < ? AND t.agent IN ({marks})"
        " GROUP BY t.agent, t.session ORDER BY min(t.ts)",
        [start, end, *agents],
    ).fetchall()
    return [(SessionRow(*row[:6]), row[6]) for row in rows]


def writes_in(
    conn: sqlite3.Connection, start: str, end: str, agents: tuple[str, ...]
) -> dict[tuple[str, str], list[tuple[str, int, str]]]:
    """Files written in [start, end) (calls that did not fail), by (agent, session)."""
    marks = ",".join("?" * len(agents))
    out: dict[tuple[str, str], list[tuple[str, int, str]]] = defaultdict(list)
    for agent, session, path, n, last in conn.execute(
        "SELECT agent, session, text, count(*), max(ts) FROM calls"  # noqa: S608
        f" WHERE kind = 'write' AND ts >= ? AND ts < ? AND +agent IN ({marks})"  # by time
        " AND (ok IS NULL OR ok = 1) GROUP BY agent, session, text",
        [start, end, *agents],
    ):
        out[(agent, session)].append((path, n, last))
    return out


def _folder_of(paths: list[tuple[str, int, str]]) -> str:
    """For a session that names no folder: the folder of the first absolute path it wrote."""
    for path, _, _ in paths:
        if path.startswith("/"):
            return str(Path(path).parent)
    return ""


def gather(
    conn: sqlite3.Connection,
    start: str,
    end: str,
    agents: tuple[str, ...],
    *,
    git: bool,
    project: str = "",
    cache: dict[str, Place] | None = None,
    history_cache: dict[str, tuple[list[CommitRow], str | None]] | None = None,
    commit_window: tuple[str, str] | None = None,
) -> list[RepoDay]:
    """The repositories worked on in [start, end), busiest first (most turns). Commits are read
    once per repository for `commit_window` (a week: read once, shown day by day) and cached."""
    cache = {} if cache is None else cache
    history_cache = {} if history_cache is None else history_cache
    writes = writes_in(conn, start, end, agents)
    grouped: dict[str | None, list[SessionRow]] = defaultdict(list)
    places: dict[str | None, Place] = {}
    files: dict[str | None, dict[str, list[int | str]]] = defaultdict(dict)
    for row, cwd in sessions_in(conn, start, end, agents):
        wrote = writes.get((row.agent, row.session), [])
        where = place(cwd or _folder_of(wrote), cache)
        if where.repo and not cwd:  # an inferred folder: its repository, if it has one
            where = where if where.is_git else place("", cache)
        if project and (where.project or "").lower() != project.lower():
            continue
        grouped[where.repo].append(row)
        places[where.repo] = where
        for path, n, last in wrote:
            shown = _relative(path, where.repo)
            seen = files[where.repo].setdefault(shown, [0, ""])
            seen[0] = int(seen[0]) + n
            seen[1] = max(str(seen[1]), last)
    out = []
    for repo, rows in grouped.items():
        where = places[repo]
        found: list[CommitRow] = []
        note = where.note
        if where.is_git and git and repo is not None:
            if repo not in history_cache:
                history_cache[repo] = commits(repo, *(commit_window or (start, end)))
            got, note = history_cache[repo]
            found = [c for c in got if start <= c.at < end]
        elif where.is_git:
            note = None
        file_rows = sorted(
            (FileRow(p, int(v[0]), str(v[1])) for p, v in files[repo].items()),
            key=lambda f: (-f.writes, f.path),
        )
        out.append(
            RepoDay(
                repo,
                where.project,
                where.is_git and git,
                note,
                tuple(rows),
                tuple(file_rows),
                tuple(found),
            )
        )
    out.sort(key=lambda r: (-sum(s.turn_count for s in r.sessions), r.repo or ""))
    return out


def _relative(path: str, repo: str | None) -> str:
    if repo and path.startswith(repo.rstrip("/") + "/"):
        return path[len(repo.rstrip("/")) + 1 :]
    return path


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]
