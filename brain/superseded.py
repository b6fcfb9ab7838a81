"""Serving what a newer bullet corrects: a note's paragraph is never served as current.

The index holds the shadow relation (brain/supersede.py computes it when the index is built): a
paragraph of a note dated before a bullet that retells it with other specifics. `brain find`
serves such a paragraph just below that bullet, marked with its handle (`superseded_by`); `brain
prime`, which nobody asked, serves the bullet in its place (`current`); `brain pack` marks the
newest handoff; `brain doctor` lists the notes. Kept light: a find imports it.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterable
from typing import Any

from brain.search import Hit
from brain.vocab import split_aliases

# --- serving -------------------------------------------------------------------------------------


def newer(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, tuple[int, str]]:
    """For each of `ids` that a newer bullet shadows: (that bullet's id, its handle), the
    strongest (then newest) when there are several."""
    ids = list(ids)
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT s.note, s.bullet, b.handle FROM shadows s JOIN units b ON b.id = s.bullet"  # noqa: S608
        f" WHERE s.note IN ({marks}) ORDER BY s.weight DESC, b.date DESC, b.id",
        ids,
    ).fetchall()
    out: dict[int, tuple[int, str]] = {}
    for note, bullet, handle in rows:
        out.setdefault(note, (bullet, handle))
    return out


def newer_than_file(conn: sqlite3.Connection, path: str) -> tuple[str, ...]:
    """Handles of the newer bullets that shadow some paragraph of the note at `path`, the
    strongest first."""
    rows = conn.execute(
        "SELECT b.handle FROM shadows s JOIN units p ON p.id = s.note"
        " JOIN units b ON b.id = s.bullet WHERE p.path = ?"
        " GROUP BY b.id ORDER BY max(s.weight) DESC, b.date DESC, b.handle",
        (path,),
    ).fetchall()
    return tuple(r[0] for r in rows)


_HIT_SQL = (
    "SELECT id, path, line, kind, handle, aliases, text, section, source, date, raw FROM units"
    " WHERE id IN "
)


def serve(conn: sqlite3.Connection, hits: list[Hit], limit: int) -> list[Hit]:
    """`hits` with every shadowed paragraph marked (`superseded_by`) and moved just below its
    newer bullet; a bullet that is not among the hits is brought in above the first paragraph it
    shadows (match `newer`). At most `limit` hits."""
    shadowed = newer(conn, (h.id for h in hits if h.kind == "prose"))
    if not shadowed:
        return hits[:limit]
    present = {h.id for h in hits}
    wanted = sorted({b for b, _ in shadowed.values()} - present)
    extra: dict[int, tuple[Any, ...]] = {}
    if wanted:
        marks = ",".join("?" * len(wanted))
        extra = {r[0]: r for r in conn.execute(_HIT_SQL + f"({marks})", wanted)}
    out: list[Hit] = []
    served: set[int] = set()
    waiting: dict[int, list[Hit]] = {}
    for found in hits:
        h = found
        if h.id in shadowed:
            bullet, handle = shadowed[h.id]
            h = dataclasses.replace(h, superseded_by=handle)
            if bullet in present and bullet not in served:
                waiting.setdefault(bullet, []).append(h)  # the bullet comes later: wait for it
                continue
            if bullet not in served and bullet in extra:
                out.append(_hit(extra[bullet], h.score))
                served.add(bullet)
        out.append(h)
        served.add(h.id)
        out += waiting.pop(h.id, [])
    return out[:limit]


def current(conn: sqlite3.Connection, hits: list[Hit], limit: int) -> list[Hit]:
    """`hits` with every shadowed paragraph replaced by the newer bullet that corrects it (once,
    where the first of them stood): what is served unasked holds no older retelling, even
    marked. At most `limit` hits."""
    served = serve(conn, hits, len(hits) * 2)  # each paragraph may bring its bullet in
    return [h for h in served if not h.superseded_by][:limit]


def _hit(row: tuple[Any, ...], score: float) -> Hit:
    uid, path, line, kind, handle, aliases, text, section, source, date, raw = row
    names = split_aliases(str(aliases))
    return Hit(
        uid, path, line, kind, handle, names, text, section, source, date, raw, score, ("newer",)
    )
