"""Facts that know when their code moved: how many commits touched the files a bullet or a note
names after its date, and the date of the last.

What a unit names (`refs`):
- the relative and absolute paths `brain verify` reads (brain/claims.py), resolved in the
  repositories the unit names by folder name (in its words or section; a note's folders too,
  `projects/payments/...`); a unit that names no repository names no file by a relative path
  (as verify: `src/retry.py` alone could be any repository's);
- an explicit `REPO:PATH` in a code span of a bullet's fact or source
  (`` `payments:src/retry.py` ``), REPO a known repository's folder name: the way to name a file
  whatever the words say;
- a note's front matter `code:` list (`code: payments:src/retry.py, payments:src/pool.py`, or
  one `- ENTRY` a line below it), which holds for every paragraph of the note.
A path inside the vault is not code and is left out; a path ending in `/` (or a folder on disk)
counts every file under it.

The repositories known (`known`): the vault's, those recall's sessions ran in (as verify), the
one `brain reindex` runs in, and every one read before while its folder is there.

Histories are read with pygit2 (brain.gitutil.read_log) by `brain reindex` only, incrementally:
the commit each repository was read up to is kept, a new commit costs its own diff, a rewritten
history (the old head no longer an ancestor) is read again from scratch, and a first read stops
at the oldest date any unit naming that repository has, and at MAX_COMMITS. What each commit
touched is cached in the index (drift_commits, drift_touches, drift_moves), the answer per unit
in `drift`, keyed by the unit's content (`key`): a find, pack or prime reads that table and never
walks history. A commit counts when it is no merge and its committer date is after the unit's
date (the day itself is left out: the fact may have been written after that day's commits); a
renamed file is followed to its new name, a deleted file's deletion counts.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brain.search import Hit
    from brain.vault import Unit

MAX_COMMITS = 5000  # per repository: a first read of a huge history stops here (`at_least`)


@dataclass(frozen=True)
class Drift:
    """`code_changed` in find's, pack's and prime's JSON."""

    commit_count: int  # commits that touched the files after the unit's date
    last_date: str  # the committer date of the last of them
    at_least: bool  # the history read stops after the unit's date (MAX_COMMITS): more may have

    def line(self) -> str:
        """The one line find, pack and prime show."""
        n = f"{'at least ' if self.at_least else ''}{self.commit_count}"
        commits = "commit" if self.commit_count == 1 else "commits"
        return f"code changed since: {n} {commits}, last {self.last_date}"


def key(path: str, section: str | None, handle: str, text: str, date: str) -> str:
    """A unit's key in the `drift` table: what find's hits, pack's bullets and the index's units
    all hold (a unit's line number is not: a line added above moves it)."""
    said = "\x1f".join((path, section or "", handle, text, date))
    return hashlib.blake2b(said.encode("utf-8"), digest_size=12).hexdigest()


def lookup(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, Drift]:
    """The cached drift of each of `keys` that has any (a find's few hits: one query)."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    try:
        rows = conn.execute(
            f"SELECT key, commit_count, last_date, at_least FROM drift WHERE key IN ({marks})",  # noqa: S608
            wanted,
        ).fetchall()
    except sqlite3.OperationalError:  # an index of an older schema, read before its rebuild
        return {}
    return {k: Drift(n, last, bool(more)) for k, n, last, more in rows}


def mark(conn: sqlite3.Connection, hits: list[Hit]) -> list[Hit]:
    """`hits` with the drift of each that has any (`code_changed`)."""
    import dataclasses

    keys = [key(h.path, h.section, h.handle, h.text, h.date) for h in hits]
    found = lookup(conn, keys)
    if not found:
        return hits
    return [
        dataclasses.replace(h, code_changed=found[k]) if k in found else h
        for h, k in zip(hits, keys, strict=True)
    ]


# --- what a unit names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    root: Path
    path: str  # relative to root, '/'-separated
    folder: bool  # every file under it


def refs(
    row: Unit, repos: dict[str, Path], listed: tuple[str, ...] = (), vault: Path | None = None
) -> set[Ref]:
    """The files of the known repositories (`repos`, folded folder name -> root) that `row`
    names: see the module's docstring."""
    from brain.claims import EXPLICIT, SPAN, claims_of, named_repos
    from brain.vocab import fold

    out: set[Ref] = set()
    said = f"{row.text} {row.source}"
    explicit = [m.group(1).strip() for m in SPAN.finditer(said)] if "`" in said else []
    loose: list[str] = []
    for entry in [*explicit, *listed]:
        m = EXPLICIT.match(entry)
        if m and fold(m.group(1)) in repos and ".." not in m.group(2).split("/"):
            out.add(_ref(repos[fold(m.group(1))], m.group(2)))
        elif entry in listed and m is None:
            loose.append(entry)
    paths = [t for kind, t in claims_of(row) if kind == "path" and not EXPLICIT.match(t)]
    tokens = paths + loose
    if not tokens:
        return _outside(out, vault)
    # a note's folders name its project too (`projects/payments/...`)
    where = row._replace(section=f"{row.section} {row.path}") if row.kind == "prose" else row
    named = named_repos(where, repos)
    for token in tokens:
        if token.startswith(("/", "~/")):
            target = os.path.expanduser(token.rstrip("/"))  # noqa: PTH111
            for root in repos.values():
                if target.startswith(f"{root}{os.sep}"):
                    rel = Path(target).relative_to(root).as_posix()
                    out.add(_ref(root, rel + ("/" if token.endswith("/") else "")))
            continue
        rel = token.removeprefix("./")
        if rel.startswith(("../", "AI/")) or rel in (".", ""):
            continue
        out |= {_ref(root, rel) for root in named}
    return _outside(out, vault)


def _ref(root: Path, rel: str) -> Ref:
    clean = rel.strip("/")
    try:
        folder = rel.endswith("/") or (root / clean).is_dir()
    except OSError:  # a name longer than the file system holds (ENAMETOOLONG): no folder
        folder = False
    return Ref(root, clean, folder)


def _outside(found: set[Ref], vault: Path | None) -> set[Ref]:
    """`found` less the paths inside the vault (its notes are not code)."""
    if vault is None:
        return found
    here = str(vault.resolve())
    return {
        r
        for r in found
        if not (f"{r.root}{os.sep}{r.path}".startswith(f"{here}{os.sep}") or not r.path)
    }


# --- reading histories (brain reindex) ----------------------------------------------------------


def repositories(vault: Path) -> dict[str, Path]:
    """The repositories here, by folder name (folded): the vault's and the folders recall's
    sessions ran in (walked up to their repository). Recall off or unreadable: the vault's
    alone."""
    from brain.gitutil import repo_root
    from brain.vocab import fold

    found: dict[str, Path] = {}
    root = repo_root(vault)
    if root is not None:
        found[fold(root.name)] = root
    try:
        from brain.recall import store

        if not store.enabled() or not store.db_path().exists():
            return found
        conn = store.connect()
        try:
            cwds = [r[0] for r in conn.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd != ''")]
        finally:
            conn.close()
    except Exception:
        return found
    seen: set[Path] = set()
    for cwd in cwds:
        folder = Path(cwd)
        if not folder.is_dir():
            continue
        repo = repo_root(folder)
        if repo is not None and repo not in seen:
            seen.add(repo)
            found.setdefault(fold(repo.name), repo)
    return found


def read_before(vault: Path) -> list[Path]:
    """The repositories drift has read for this vault (the index's), the one read last first,
    those whose folder is still a repository: what verify checks in besides its own (no write,
    no walk)."""
    from brain import index
    from brain.config import index_path

    if not index_path(vault, make=False).exists():
        return []
    try:
        conn = index.connect(vault)
        try:
            rows = conn.execute("SELECT root FROM drift_repos ORDER BY id DESC").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:  # an index of another schema, or being rebuilt: none read
        return []
    return [Path(r[0]) for r in rows if (Path(r[0]) / ".git").exists()]


def in_reach(vault: Path, cwd: Path | None, read: Sequence[Path]) -> dict[str, Path]:
    """The repositories names resolve in, by folder name, for drift and verify alike: the
    vault's and recall's sessions' (`repositories`), the one `cwd` is in, then those read before
    (`read`, the one read last first: of two clones of one name, a clone made afresh names it)."""
    from brain.gitutil import repo_root
    from brain.vocab import fold

    found = repositories(vault)
    here = repo_root(cwd) if cwd is not None else None
    if here is not None:
        found.setdefault(fold(here.name), here)
    for root in read:
        found.setdefault(fold(root.name), root)
    return found


def known(conn: sqlite3.Connection, vault: Path, cwd: Path | None) -> dict[str, Path]:
    """The repositories drift resolves names in (`in_reach`); those read before that are gone
    are forgotten, and every one is recorded."""
    read: list[Path] = []
    # newest first, as read_before; unordered, SQLite walked the roots' index (path order)
    for rid, root in conn.execute("SELECT id, root FROM drift_repos ORDER BY id DESC").fetchall():
        if (Path(root) / ".git").exists():
            read.append(Path(root))
        else:
            _forget(conn, rid)
    found = in_reach(vault, cwd, read)
    for root in found.values():
        conn.execute(
            "INSERT OR IGNORE INTO drift_repos(root, head, floor, bounded) VALUES (?, '', '', 0)",
            (str(root),),
        )
    return found


def _forget(conn: sqlite3.Connection, rid: int) -> None:
    _clear(conn, rid)
    conn.execute("DELETE FROM drift_repos WHERE id = ?", (rid,))


def _clear(conn: sqlite3.Connection, rid: int) -> None:
    for table in ("drift_touches", "drift_moves"):
        conn.execute(
            f"DELETE FROM {table} WHERE commit_id IN (SELECT id FROM drift_commits WHERE repo = ?)",  # noqa: S608
            (rid,),
        )
    conn.execute("DELETE FROM drift_commits WHERE repo = ?", (rid,))


_UNITS_SQL = """
SELECT path, line, kind, text, section, handle, aliases, source, date, raw FROM units
WHERE date != '' AND path != 'AI/INBOX.md'
  AND (instr(text, '/') OR instr(text, '`') OR instr(source, '`')
       OR path IN (SELECT path FROM drift_files))
"""


@dataclass(frozen=True)
class Refreshed:
    """What a refresh did (for `tools/bench_drift.py` and the tests)."""

    repositories: int  # repositories read
    commits: int  # commits whose diff was read
    units: int  # units that name code
    drifted: int  # units whose code changed since
    changed: bool  # the drift table differs from before


def update(vault: Path) -> Refreshed:
    """`brain reindex`'s part (after the index's sync): the histories and every unit's drift, in
    one write transaction, as run in the current folder (the repository brain runs in)."""
    from brain import index
    from brain.settings import current

    # the command's folder, not the process's: the warm worker runs a forwarded `brain reindex`
    # in its own folder, with the caller's in its settings (brain/worker.py)
    here = Path(current().cwd)
    conn = index.connect(vault)
    try:
        with index.transaction(conn):
            done = refresh(conn, vault, here)
            if done.changed:
                index.restamp(conn)  # a pack cached against the build is made again
        return done
    finally:
        conn.close()


def refresh(conn: sqlite3.Connection, vault: Path, cwd: Path | None = None) -> Refreshed:
    """Bring the cached histories up to date and compute every unit's drift again (inside the
    caller's transaction)."""
    from brain.vault import Unit
    from brain.vocab import split_aliases

    repos = known(conn, vault, cwd)
    listed = {
        p: tuple(f.split("\n"))
        for p, f in conn.execute("SELECT path, files FROM drift_files").fetchall()
    }
    units = conn.execute(_UNITS_SQL).fetchall()
    said = _signature(units, repos, listed)
    if _unchanged(conn, said):
        return Refreshed(0, 0, 0, 0, changed=False)
    named: list[tuple[str, str, set[Ref]]] = []
    for path, line, kind, text, section, handle, aliases, source, date, raw in units:
        row = Unit(
            path, line, kind, text, section, handle, split_aliases(aliases), source, date, raw
        )
        found = refs(row, repos, listed.get(path, ()) if kind == "prose" else (), vault)
        if found:
            named.append((key(path, section, handle, text, date), date, found))
    floors: dict[Path, str] = {}
    for _, date, found in named:
        for r in found:
            floors[r.root] = min(date, floors.get(r.root, date))
    ids: dict[Path, tuple[int, str]] = {}
    commits = 0
    for root, floor in sorted(floors.items()):
        got = _read(conn, root, floor)
        if got is not None:
            ids[root], read = got
            commits += read
    before = set(conn.execute("SELECT key, commit_count, last_date, at_least FROM drift"))
    rows = set()
    moves = _moves(conn)
    for unit_key, date, found in named:
        d = _drift(conn, ids, moves, found, date)
        if d is not None:
            rows.add((unit_key, d.commit_count, d.last_date, int(d.at_least)))
    if rows != before:
        conn.execute("DELETE FROM drift")
        conn.executemany(
            "INSERT OR REPLACE INTO drift(key, commit_count, last_date, at_least)"
            " VALUES (?, ?, ?, ?)",
            sorted(rows),
        )
    heads = dict(conn.execute("SELECT root, head FROM drift_repos").fetchall())
    state = {"said": said, "heads": {str(r): heads.get(str(r), "") for r in sorted(floors)}}
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('drift', ?)", (json.dumps(state),)
    )
    return Refreshed(len(ids), commits, len(named), len(rows), rows != before)


def _signature(units: list[Any], repos: dict[str, Path], listed: dict[str, tuple[str, ...]]) -> str:
    """What the drift of every unit is computed from, besides the histories: the units that may
    name code, the repositories known, the notes' front matter lists."""
    h = hashlib.blake2b(digest_size=16)
    for row in sorted(units):
        h.update(repr(row).encode("utf-8", "surrogatepass"))
    h.update(repr(sorted((k, str(v)) for k, v in repos.items())).encode())
    h.update(repr(sorted(listed.items())).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _unchanged(conn: sqlite3.Connection, said: str) -> bool:
    """Whether the last refresh was computed from the same units and repositories, and no
    repository it read has a new HEAD (read from the files git keeps it in: no pygit2). A HEAD
    that cannot be told that way is a change."""
    from brain.gitutil import head_hint

    row = conn.execute("SELECT value FROM meta WHERE key = 'drift'").fetchone()
    try:
        state = json.loads(row[0]) if row else {}
    except ValueError:
        return False
    if state.get("said") != said:
        return False
    heads = state.get("heads", {})
    return all(bool(head) and head_hint(Path(root)) == head for root, head in heads.items())


def _read(conn: sqlite3.Connection, root: Path, floor: str) -> tuple[tuple[int, str], int] | None:
    """Read `root`'s commits since the last read into the cache: ((its id, the floor its
    history reaches when bounded), commits read); None when it holds no readable history."""
    from brain.gitutil import read_log

    rid, head, was_floor, bounded = conn.execute(
        "SELECT id, head, floor, bounded FROM drift_repos WHERE root = ?", (str(root),)
    ).fetchone()
    # a unit dated before the floor a date-stopped read reached needs the older commits too
    seen = "" if (was_floor and not bounded and floor < was_floor) else head
    log = read_log(root, seen, since_day=floor, max_commits=MAX_COMMITS)
    if log is None:
        _clear(conn, rid)
        conn.execute(
            "UPDATE drift_repos SET head = '', floor = '', bounded = 0 WHERE id = ?", (rid,)
        )
        return None
    if log.full:
        _clear(conn, rid)
        was_floor, bounded = log.floor, log.bounded
    for change in reversed(log.changes):  # oldest first: ids grow with time
        cid = conn.execute(
            "INSERT INTO drift_commits(repo, sha, at, day) VALUES (?, ?, ?, ?)",
            (rid, change.sha, change.at, change.day),
        ).lastrowid
        conn.executemany(
            "INSERT OR IGNORE INTO drift_touches(path, commit_id) VALUES (?, ?)",
            [(p, cid) for p in change.paths],
        )
        conn.executemany(
            "INSERT INTO drift_moves(commit_id, old, new) VALUES (?, ?, ?)",
            [(cid, old, new) for old, new in change.moves],
        )
    conn.execute(
        "UPDATE drift_repos SET head = ?, floor = ?, bounded = ? WHERE id = ?",
        (log.head, was_floor, int(bounded), rid),
    )
    return (rid, was_floor if bounded else ""), len(log.changes)


def _drift(
    conn: sqlite3.Connection,
    ids: dict[Path, tuple[int, str]],
    moves: Moves,
    found: set[Ref],
    date: str,
) -> Drift | None:
    """The commits after `date` that touched what `found` names (a renamed file followed)."""
    seen: dict[int, str] = {}
    short = False
    for ref in found:
        if ref.root not in ids:
            continue
        rid, bound = ids[ref.root]
        short = short or (bool(bound) and bound > date)
        if ref.folder:
            rows = conn.execute(
                "SELECT c.id, c.day FROM drift_touches t JOIN drift_commits c ON c.id = t.commit_id"
                " WHERE t.path >= ? AND t.path < ? AND c.repo = ? AND c.day > ?",
                (f"{ref.path}/", f"{ref.path}0", rid, date),
            ).fetchall()
        else:
            names = _lineage(moves, rid, ref.path, date)
            marks = ",".join("?" * len(names))
            rows = conn.execute(
                "SELECT c.id, c.day FROM drift_touches t JOIN drift_commits c ON c.id = t.commit_id"  # noqa: S608
                f" WHERE t.path IN ({marks}) AND c.repo = ? AND c.day > ?",
                (*names, rid, date),
            ).fetchall()
        seen.update(rows)
    if not seen:
        return None
    return Drift(len(seen), max(seen.values()), short)


Moves = dict[int, list[tuple[str, str, str]]]  # repository id -> (day, old, new), oldest first


def _moves(conn: sqlite3.Connection) -> Moves:
    out: Moves = {}
    for rid, day, old, new in conn.execute(
        "SELECT c.repo, c.day, m.old, m.new FROM drift_moves m"
        " JOIN drift_commits c ON c.id = m.commit_id ORDER BY c.id"
    ):
        out.setdefault(rid, []).append((day, old, new))
    return out


def _lineage(moves: Moves, rid: int, path: str, date: str) -> list[str]:
    """`path` and the names it was renamed to after `date`, in the order of the renames."""
    names = [path]
    for day, old, new in moves.get(rid, ()):
        if day > date and old in names and new not in names:
            names.append(new)
    return names
