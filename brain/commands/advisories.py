"""What in the vault wants attention: doctor's advisories, which never fail a run.

- bullets the logged lookups keep returning (the most frequent logged queries that were not
  misses are asked again and the bullets in the first `TOP` hits of their answers counted, when
  something stands out in them): a project file or a gate should carry them;
- older dated notes that name what a newer bullet names (its handle or an alias, as a phrase of two
  or more words and ten or more characters), which an agent might quote over the bullet; a line
  that cites the bullet (`**handle**`, `M#handle` or its `path:line`) does not count;
- near-duplicate bullets: cosine between the bullets' stored vectors, else word overlap;
- notes a newer bullet corrects (the index's shadow relation, brain/superseded.py), by file,
  heaviest first; a note that cites the bullet is marked as history and not listed;
- what `brain tend` would act on: bullets whose claims failed here, handles shared by several
  bullets, bullets served just before a person corrected the agent.

The health checks (pass or fail, with their fixes) are brain.health; `brain doctor` runs both.
`brain tend`'s daily sweep imports this module alone for `superseded`, so it stays light: the
checks' imports are not paid there.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain import config, index, usage
from brain.errors import BrainError
from brain.vault import Unit
from brain.vocab import STOPWORDS, handle_key, split_aliases, words

TOP = 3  # hits of a frequent query that count as returned
FREQUENT_MIN = 5  # lookups that returned a bullet before doctor suggests carrying it
FREQUENT_QUERIES = 100  # most frequent logged queries asked again
PHRASE_WORDS, PHRASE_CHARS = 2, 10
# Calibrated on testdata/vault (tests/test_doctor.py): its four known duplicate pairs score
# .625-.716 by cosine (all-MiniLM-L6-v2) and .20-.25 by word overlap; with the nearest-neighbour and
# cross-file rules below, .62 lets one other pair through and .20 two.
COSINE_MIN = 0.62
JACCARD_MIN = 0.20
CORE_LETTER = {"AI/MEMORY.md": "M", "AI/LEARNINGS.md": "L", "AI/TUNINGS.md": "T"}


@dataclass(frozen=True)
class Frequent:
    handle: str
    path: str
    line: int
    count: int  # logged lookups whose first TOP hits hold it
    queries: tuple[str, ...]  # the most frequent of them, at most three


@dataclass(frozen=True)
class OlderNote:
    path: str
    line: int  # first line that names the bullet
    date: str
    mentions: int
    phrase: str
    bullet_locator: str  # path:line of the bullet
    handle: str
    bullet_date: str


@dataclass(frozen=True)
class Duplicate:
    handles: tuple[str, str]
    locators: tuple[str, str]
    score: float
    method: str  # "cosine" | "jaccard"


@dataclass(frozen=True)
class Newer:
    handle: str  # cited as M#handle for a core file
    locator: str  # path:line
    date: str


@dataclass(frozen=True)
class Superseded:
    path: str
    date: str
    line: int  # the first paragraph a newer bullet corrects
    paragraphs: int
    weight: float  # the paragraphs' shadow weights added up: the order of the list
    bullets: tuple[Newer, ...]


@dataclass(frozen=True)
class FailedClaim:
    path: str
    line: int
    handle: str
    date: str
    failures: tuple[str, ...]  # "kind text: detail" of each claim that failed
    claim_count: int  # claims the bullet makes that this machine reads


@dataclass(frozen=True)
class SameHandle:
    handle: str
    locators: tuple[str, ...]  # path:line, newest first
    dates: tuple[str, ...]


@dataclass(frozen=True)
class Corrected:
    handle: str
    path: str
    line: int
    corrections: int  # corrections that followed a lookup serving it
    session_count: int
    said: tuple[str, ...]  # what the person said, at most two


@dataclass(frozen=True)
class Advice:
    """Every advisory, in the order doctor lists them."""

    frequent: tuple[Frequent, ...] = ()
    older_notes: tuple[OlderNote, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()
    superseded: tuple[Superseded, ...] = ()
    failed_claims: tuple[FailedClaim, ...] = ()
    duplicate_handles: tuple[SameHandle, ...] = ()
    corrected: tuple[Corrected, ...] = ()


def cite(path: str, handle: str) -> str:
    letter = CORE_LETTER.get(path)
    return f"{letter}#{handle}" if letter else handle


def advise(vault: Path, log: Path | None = None) -> Advice:
    """Every advisory for `vault`; none for a folder with neither an index nor an AI/ folder."""
    if not (config.index_path(vault).exists() or (vault / "AI").is_dir()):
        return Advice()
    conn = index.open_index(vault)
    try:
        bullets = _bullets(conn)
        older = tuple(older_notes(conn, bullets))
        dupes = tuple(duplicates(conn, bullets))
        stale = tuple(superseded(conn))
        kept = keeping(vault, conn, log)
    finally:
        conn.close()
    return Advice(
        tuple(frequent_bullets(vault, log)),
        older,
        dupes,
        stale,
        kept.failed_claims,
        kept.duplicate_handles,
        kept.corrected,
    )


@dataclass(frozen=True)
class Kept:
    """What `brain tend` would act on, as doctor lists it."""

    failed_claims: tuple[FailedClaim, ...] = ()
    duplicate_handles: tuple[SameHandle, ...] = ()
    corrected: tuple[Corrected, ...] = ()


def keeping(vault: Path, conn: sqlite3.Connection, log: Path | None = None) -> Kept:
    from brain.commands import verify

    rows = verify.bullets(conn)
    failed = []
    for c in verify.check_rows(rows, verify.context(vault))[0]:
        bad = tuple(f"{x.kind} {x.text}: {x.detail}" for x in c.claims if x.status == verify.FAILED)
        if bad:
            failed.append(FailedClaim(c.path, c.line, c.handle, c.date, bad, len(c.claims)))
    failed.sort(key=lambda f: (-len(f.failures), f.path, f.line))
    groups: dict[str, list[Unit]] = {}
    for r in rows:
        groups.setdefault(handle_key(r.handle), []).append(r)
    same = []
    for group in groups.values():
        if len(group) > 1:
            rs = sorted(group, key=lambda r: (r.date, r.path, -r.line), reverse=True)
            same.append(
                SameHandle(
                    rs[0].handle,
                    tuple(f"{r.path}:{r.line}" for r in rs),
                    tuple(r.date for r in rs),
                )
            )
    same.sort(key=lambda g: (-len(g.locators), g.handle))
    return Kept(tuple(failed), tuple(same), tuple(corrected(vault, log)))


CORRECTION_WINDOW = 600.0  # seconds before a correction in which a lookup counts as serving it
CORRECTION_DAYS = 30
CORRECTION_QUERIES = 200  # lookups asked again at most


def corrected(vault: Path, log: Path | None = None) -> list[Corrected]:
    """Bullets a lookup served (its first TOP hits) in the ten minutes before a person corrected
    the agent in that session (recall's corrections): perhaps what misled it. Recall off: []."""
    try:
        from brain.recall import lessons, past, store

        names = store.enabled()
        if not names or not store.db_path().exists():
            return []
        since = dt.datetime.now(dt.UTC) - dt.timedelta(days=CORRECTION_DAYS)
        rconn = store.connect()
        try:
            window = past.Window(since=since.strftime("%Y-%m-%dT%H:%M:%S"), agents=tuple(names))
            moments = lessons.corrections_in(rconn, window)
        finally:
            rconn.close()
    except (BrainError, OSError, sqlite3.Error):
        return []
    if not moments:
        return []
    by_session: dict[str, list[tuple[float, str]]] = {}
    for m in moments:
        try:
            when = dt.datetime.fromisoformat(m.at or "").timestamp()
        except ValueError:
            continue
        by_session.setdefault(m.session, []).append((when, m.lesson))
    conn = usage.connect(log)
    try:
        events = [
            e
            for e in usage.events(conn, since.timestamp() - CORRECTION_WINDOW)
            if e.command == "find"
            and e.vault == usage.vault_key(vault)
            and e.session in by_session
            and e.entries > 0  # it served something
        ]
    finally:
        conn.close()
    return _served_before(vault, events, by_session)


def _served_before(
    vault: Path, events: list[usage.Event], by_session: dict[str, list[tuple[float, str]]]
) -> list[Corrected]:
    from brain.commands.find import find

    found: dict[tuple[str, int], dict[str, Any]] = {}
    asked: dict[str, list[Any]] = {}
    for e in events[-CORRECTION_QUERIES:]:
        after = [
            (t, said) for t, said in by_session[e.session] if 0 <= t - e.ts <= CORRECTION_WINDOW
        ]
        if not after:
            continue
        if e.query not in asked:
            try:
                asked[e.query] = list(find(vault, e.query, mode="keyword").hits)
            except BrainError:
                asked[e.query] = []
        for h in asked[e.query][:TOP]:
            if h.kind != "bullet":
                continue
            entry = found.setdefault(
                (h.path, h.line), {"handle": h.handle, "n": 0, "sessions": set(), "said": []}
            )
            entry["n"] += len(after)
            entry["sessions"].add(e.session)
            for _, said in after:
                if said not in entry["said"]:
                    entry["said"].append(said)
    out = [
        Corrected(e["handle"], p, ln, e["n"], len(e["sessions"]), tuple(e["said"][:2]))
        for (p, ln), e in found.items()
    ]
    out.sort(key=lambda c: (-c.corrections, c.path, c.line))
    return out


@dataclass(frozen=True)
class _Bullet:
    id: int
    path: str
    line: int
    handle: str
    aliases: tuple[str, ...]
    text: str
    date: str
    vhash: str


def _bullets(conn: sqlite3.Connection) -> list[_Bullet]:
    rows = conn.execute(
        "SELECT id, path, line, handle, aliases, text, date, vhash FROM units"
        " WHERE kind = 'bullet' AND path != 'AI/INBOX.md' ORDER BY path, line"
    ).fetchall()
    return [
        _Bullet(
            r[0],
            r[1],
            r[2],
            r[3],
            split_aliases(r[4]),
            r[5],
            r[6],
            r[7],
        )
        for r in rows
    ]


def frequent_bullets(vault: Path, log: Path | None = None) -> list[Frequent]:
    """Bullets in the first TOP hits of the logged lookups' answers, FREQUENT_MIN times or more
    (the queries that reached them shown with credentials masked). A miss returned nothing that
    stood out, and a query whose answer is weak now reaches nothing: neither counts."""
    from brain.semantic import warnings_once

    with warnings_once():  # each query is asked again: the index's state is said once
        return _frequent_bullets(vault, log)


def _frequent_bullets(vault: Path, log: Path | None) -> list[Frequent]:
    from brain.commands.find import find
    from brain.secrets import redact

    conn = usage.connect(log)
    try:
        rows = conn.execute(
            "SELECT query, count(*) FROM events WHERE vault = ? AND command = 'find'"  # noqa: S608
            f" AND NOT {usage.MISS_SQL} GROUP BY query ORDER BY count(*) DESC, query LIMIT ?",
            (usage.vault_key(vault), FREQUENT_QUERIES),
        ).fetchall()
    finally:
        conn.close()
    counts: dict[tuple[str, int], int] = {}
    asked: dict[tuple[str, int], list[tuple[int, str]]] = {}
    handles: dict[tuple[str, int], str] = {}
    for query, n in rows:
        try:
            answer = find(vault, query)
        except BrainError:
            continue
        if answer.evidence != usage.STRONG:
            continue
        for h in answer.hits[:TOP]:
            if h.kind != "bullet":
                continue
            key = (h.path, h.line)
            counts[key] = counts.get(key, 0) + n
            asked.setdefault(key, []).append((n, query))
            handles[key] = h.handle
    found = [
        Frequent(
            handles[key],
            key[0],
            key[1],
            n,
            tuple(redact(q) for _, q in sorted(asked[key], key=lambda x: (-x[0], x[1]))[:3]),
        )
        for key, n in counts.items()
        if n >= FREQUENT_MIN
    ]
    found.sort(key=lambda f: (-f.count, f.path, f.line))
    return found


def _names(b: _Bullet) -> list[tuple[str, tuple[str, ...]]]:
    """The bullet's handle and aliases that are long enough to be a telling phrase."""
    out = []
    for name in (b.handle, *b.aliases):
        seq = tuple(words(name))
        if (
            len(seq) >= PHRASE_WORDS
            and len(name.strip()) >= PHRASE_CHARS
            and (name, seq) not in out
        ):
            out.append((name, seq))
    return out


def older_notes(conn: sqlite3.Connection, bullets: list[_Bullet]) -> list[OlderNote]:
    """Dated prose, older than a bullet, that names the bullet without citing it."""
    starts: dict[str, list[tuple[_Bullet, str, tuple[str, ...]]]] = {}
    for b in bullets:
        if not b.date:
            continue
        for name, seq in _names(b):
            starts.setdefault(seq[0], []).append((b, name, seq))
    if not starts:
        return []
    found: dict[tuple[str, int], dict[str, Any]] = {}
    rows = conn.execute(
        "SELECT path, line, date, raw FROM units WHERE kind = 'prose' AND date != ''"
        " AND path NOT LIKE 'AI/%' ORDER BY path, line"
    )
    for path, start, date, raw in rows:
        lines = raw.split("\n")
        seq_words: list[tuple[str, int]] = [
            (w, k) for k, text in enumerate(lines) for w in words(text)
        ]
        tokens = [w for w, _ in seq_words]
        for i, word in enumerate(tokens):
            for b, name, seq in starts.get(word, ()):
                if date >= b.date or tuple(tokens[i : i + len(seq)]) != seq:
                    continue
                first, last = seq_words[i][1], seq_words[i + len(seq) - 1][1]
                if any(_cites(lines[k], b) for k in range(first, last + 1)):
                    continue
                key = (path, b.id)
                entry = found.setdefault(
                    key,
                    {
                        "line": start + first,
                        "date": date,
                        "at": set(),
                        "phrase": name,
                        "bullet": b,
                    },
                )
                entry["at"].add((start, i))  # the handle and an alias at one place: one mention
    notes = [
        OlderNote(
            path,
            e["line"],
            e["date"],
            len(e["at"]),
            e["phrase"],
            f"{e['bullet'].path}:{e['bullet'].line}",
            e["bullet"].handle,
            e["bullet"].date,
        )
        for (path, _), e in found.items()
    ]
    notes.sort(key=lambda n: (-n.mentions, n.date, n.path, n.line))
    return notes


def _cites(line: str, b: _Bullet) -> bool:
    folded = " ".join(line.casefold().split())
    handle = " ".join(b.handle.casefold().split())
    return (
        f"**{handle}**" in folded
        or f"#{handle}" in folded
        or f"{b.path}:{b.line}".casefold() in folded
    )


def superseded(conn: sqlite3.Connection) -> list[Superseded]:
    """Notes whose paragraphs a newer bullet corrects, heaviest first. A note that cites the
    bullet anywhere (`**handle**`, `M#handle`, its path:line) keeps it as history: not listed."""
    rows = conn.execute(
        "SELECT p.path, p.date, p.line, p.id, s.weight, b.id, b.path, b.line, b.handle, b.date"
        " FROM shadows s JOIN units p ON p.id = s.note JOIN units b ON b.id = s.bullet"
        " ORDER BY p.path, p.line, s.weight DESC"
    ).fetchall()
    lines: dict[str, list[str]] = {}
    found: dict[str, dict[str, Any]] = {}
    for path, date, line, note, weight, bid, bpath, bline, handle, bdate in rows:
        if path not in lines:
            lines[path] = [
                x
                for (raw,) in conn.execute("SELECT raw FROM units WHERE path = ?", (path,))
                for x in raw.split("\n")
            ]
        b = _Bullet(bid, bpath, bline, handle, (), "", bdate, "")
        if any(_cites(x, b) for x in lines[path]):
            continue
        entry = found.setdefault(path, {"date": date, "line": line, "notes": {}, "bullets": {}})
        entry["notes"].setdefault(note, weight)  # a paragraph counts once, by its strongest
        entry["bullets"].setdefault(bid, Newer(cite(bpath, handle), f"{bpath}:{bline}", bdate))
    out = [
        Superseded(
            path,
            e["date"],
            e["line"],
            len(e["notes"]),
            round(sum(e["notes"].values()), 3),
            tuple(e["bullets"].values()),
        )
        for path, e in found.items()
    ]
    out.sort(key=lambda n: (-n.weight, n.path))
    return out


def duplicates(conn: sqlite3.Connection, bullets: list[_Bullet]) -> list[Duplicate]:
    """Pairs of bullets in different core files, with different handles, that say the same thing.

    A pair counts when one of the two is the other's nearest bullet and their similarity reaches
    the bar. Within one file an author sees the neighbours; across files (a learning restated as a
    tuning) they drift apart unseen. On the fixture this finds the four known pairs and one more
    (cosine), or the four and two more (word overlap).
    """
    vectors = dict(conn.execute("SELECT hash, vec FROM vectors").fetchall())
    if len(bullets) > 1 and all(b.vhash in vectors for b in bullets):
        model = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        found = _cosine_neighbours(bullets, vectors, model[0] if model else "")
        return _pairs(bullets, found, COSINE_MIN, "cosine")
    return _pairs(bullets, _jaccard_neighbours(bullets), JACCARD_MIN, "jaccard")


Neighbours = tuple[list[int], dict[tuple[int, int], float]]  # nearest per bullet, scores >= bar


def _pairs(bullets: list[_Bullet], found: Neighbours, bar: float, method: str) -> list[Duplicate]:
    nearest, scores = found
    out = []
    for (i, j), score in scores.items():
        a, b = bullets[i], bullets[j]
        if score < bar or a.path == b.path or (nearest[i] != j and nearest[j] != i):
            continue
        if handle_key(a.handle) == handle_key(b.handle):
            continue  # one handle twice is lint's business
        out.append(
            Duplicate(
                (cite(a.path, a.handle), cite(b.path, b.handle)),
                (f"{a.path}:{a.line}", f"{b.path}:{b.line}"),
                round(score, 3),
                method,
            )
        )
    out.sort(key=lambda d: (-d.score, d.locators))
    return out


def _cosine_neighbours(bullets: list[_Bullet], vectors: dict[str, bytes], model: str) -> Neighbours:
    import numpy as np

    from brain.semantic import stretch

    m = np.stack([np.frombuffer(vectors[b.vhash], dtype=np.float32) for b in bullets])
    nearest: list[int] = []
    scores: dict[tuple[int, int], float] = {}
    block = 1024  # a 10,000-bullet vault never holds the whole square matrix
    for start in range(0, len(m), block):
        sims = stretch(m[start : start + block] @ m.T, model)  # on MiniLM's scale
        rows = np.arange(sims.shape[0])
        sims[rows, rows + start] = -1.0
        nearest += sims.argmax(axis=1).tolist()
        for r, c in zip(*np.nonzero(sims >= min(COSINE_MIN, JACCARD_MIN)), strict=True):
            i, j = int(r) + start, int(c)
            if i < j:
                scores[(i, j)] = float(sims[r, c])
    return nearest, scores


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _bag(b: _Bullet) -> set[str]:
    text = " ".join((b.handle, *b.aliases, b.text))
    return {_stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1}


def _jaccard_neighbours(bullets: list[_Bullet]) -> Neighbours:
    bags = [_bag(b) for b in bullets]
    holders: dict[str, list[int]] = {}
    for i, bag in enumerate(bags):
        for w in bag:
            holders.setdefault(w, []).append(i)
    # A word in every twentieth bullet says nothing of which bullet repeats another; skipping it
    # also bounds the pairs walked (far below brain.vocab.COMMON, a share for search).
    crowded = max(50, len(bullets) // 20)
    nearest = [-1] * len(bullets)
    best = [0.0] * len(bullets)
    scores: dict[tuple[int, int], float] = {}
    for i, bag in enumerate(bags):
        shared: dict[int, int] = {}
        for w in bag:
            ids = holders[w]
            if len(ids) <= crowded:
                for j in ids:
                    if j != i:
                        shared[j] = shared.get(j, 0) + 1
        for j, inter in shared.items():
            score = inter / len(bag | bags[j])
            if score > best[i]:
                best[i], nearest[i] = score, j
            if i < j and score >= JACCARD_MIN:
                scores[(i, j)] = score
    return nearest, scores
