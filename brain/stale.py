"""Notes that a newer bullet corrects: the shadow relation, computed at index time.

A paragraph of a note *retells* a bullet when one sentence of it names the bullet's subject (its
handle or one alias, as a phrase of telling words) and shares at least one more telling word with
the bullet (two for a one-word name). It says something *else* when its specifics differ from the
bullet's fact:

- a quantity of the same kind with another value: `90 days` where the bullet says `180 days`
  (numbers are compared by the telling word on either side of them, so `Postgres 14` meets
  `Postgres 15` and `90 days` meets `180 days`, while `3 people` never meets `180 days`);
- where no quantity meets another, other names: `Bob` where the bullet says `Alice`
  (capitalised words inside a sentence; the paragraph says none of the bullet's).

A paragraph from a note dated before the bullet that retells it and says something else is
*shadowed* by it: `brain find` serves it below the bullet, marked as older, and `brain doctor`
lists the note. The relation is stored in the index (`shadows`), recomputed for the paragraphs and
bullets a sync touched, so a find only looks it up.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from brain.config import CORE_FILES
from brain.index import ALIAS_SEP
from brain.search import STOPWORDS, Hit, fold, words

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_TOKEN = re.compile(r"\d+(?:[.,:/]\d+)+|[^\W_]+|%")
_NAME = re.compile(r"[^\W\d_][^\W_]*")
REACH = 2  # tokens on each side of a number where the word that says what it counts may stand


def stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def telling(text: str) -> list[str]:
    """The words of `text` that say something, folded and stemmed, in order."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def quantities(text: str, skip: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """The numbers of `text` by what they count: {telling word next to it: {values}}.

    A word with digits in it (`30s`, `v14`, `pg13`) is its own kind (`#s`, `v#`, `pg#`).
    Numbers made only of the words in `skip` (a handle such as `brain 1.0`) are not specifics.
    """
    tokens = _TOKEN.findall(text)
    skip = set(skip)
    found: dict[str, set[str]] = {}
    for i, token in enumerate(tokens):
        if not any(c.isdigit() for c in token):
            continue
        groups = re.findall(r"\d+", token)
        if all(g in skip for g in groups):
            continue
        if token.isdigit() or not re.search(r"[^\W\d_]", token):
            value = token.replace(",", "")
            kinds = [k for k in (_near(tokens, i, -1), _near(tokens, i, 1)) if k]
        else:
            value = ".".join(groups)
            kinds = [re.sub(r"\d+", "#", fold(token))]
        for kind in kinds:
            found.setdefault(kind, set()).add(value)
    return {k: frozenset(v) for k, v in found.items()}


def _near(tokens: list[str], i: int, step: int) -> str:
    """The nearest telling word within REACH tokens of tokens[i], in one direction."""
    for j in range(i + step, i + step * (REACH + 1), step):
        if not 0 <= j < len(tokens):
            return ""
        piece = tokens[j]
        if piece == "%":
            return "%"
        if any(c.isdigit() for c in piece):
            return ""
        word = fold(piece)
        if word not in STOPWORDS:
            return stem(word)
    return ""


def proper_names(sentences: list[str]) -> frozenset[str]:
    """Capitalised words that do not start a sentence: people, products, places."""
    found = set()
    for sentence in sentences:
        for k, m in enumerate(_NAME.finditer(sentence)):
            word = m.group()
            if k and word[0].isupper():
                found.add(stem(fold(word)))
    return frozenset(found)


@dataclass
class _Bullet:
    id: int
    handle: str
    date: str
    names: list[tuple[str, ...]]  # telling words of the handle and of each alias
    text: str
    _facts: tuple[set[str], dict[str, frozenset[str]], frozenset[str]] | None = None

    def facts(self) -> tuple[set[str], dict[str, frozenset[str]], frozenset[str]]:
        """Its telling words (handle, aliases, fact), its quantities and its names; parsed only
        for a bullet some note names."""
        if self._facts is None:
            subject = {w for name in self.names for w in name}
            bag = {w for w in subject if not w.isdigit()}
            bag.update(w for w in telling(self.text) if not w.isdigit())
            self._facts = (
                bag,
                quantities(self.text, subject),
                proper_names([self.text]) - subject,
            )
        return self._facts


def _bullet(row: tuple[Any, ...]) -> _Bullet:
    uid, handle, aliases, text, date = row
    names = []
    for name in (handle, *str(aliases).split(ALIAS_SEP)):
        seq = tuple(dict.fromkeys(telling(name)))
        if seq and seq not in names:
            names.append(seq)
    return _Bullet(uid, handle, date, names, text)


def _names_in(seq: list[str], name: tuple[str, ...]) -> bool:
    """Whether `name` stands in `seq` as a phrase (stopwords between its words do not count)."""
    n = len(name)
    return any(tuple(seq[i : i + n]) == name for i in range(len(seq) - n + 1))


def judge(text: str, date: str, b: _Bullet) -> float:
    """How strongly a note's paragraph (`text`, dated `date`) is shadowed by bullet `b`: the share
    of the bullet's telling words in the sentences that name it; 0.0 when it is not."""
    if not (date and b.date and date < b.date):
        return 0.0
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    seqs = [telling(s) for s in sentences]
    best = 0.0
    for name in b.names:
        at = [k for k, seq in enumerate(seqs) if _names_in(seq, name)]
        if not at:
            continue
        bag, quantity, names = b.facts()
        region = [sentences[k] for k in at]
        said = {w for k in at for w in seqs[k]}
        theirs = quantities(" ".join(region), name)
        if not theirs and at[-1] + 1 < len(sentences):  # "... the refund window. It is 90 days."
            region.append(sentences[at[-1] + 1])
            said.update(seqs[at[-1] + 1])
            theirs = quantities(" ".join(region), name)
        shared = bag & said
        # A one-word name ("refunds") is named in passing more often than a phrase is.
        if len(shared - set(name)) < (2 if len(name) == 1 else 1):
            continue
        if _differ(quantity, theirs, names, proper_names(region) - set(name), said, bag):
            best = max(best, round(len(shared) / len(bag), 3))
    return best


def _differ(
    ours: dict[str, frozenset[str]],
    theirs: dict[str, frozenset[str]],
    our_names: frozenset[str],
    their_names: frozenset[str],
    said: set[str],
    bag: set[str],
) -> bool:
    """Whether the specifics disagree: a shared kind of quantity whose values differ both ways
    (one side naming more values than the other is not a contradiction); else names: the
    paragraph says none of the bullet's and names others."""
    kinds = ours.keys() & theirs.keys()
    if kinds:
        return any(not ours[k] <= theirs[k] and not theirs[k] <= ours[k] for k in kinds)
    return bool(our_names) and not our_names & said and bool(their_names - bag)


_NOTES_SQL = (  # only placeholders are formatted in
    "SELECT id, text, date FROM units WHERE kind = 'prose' AND date != ''"  # noqa: S608
    " AND path NOT IN (" + ",".join("?" * len(CORE_FILES)) + ")"
)


def refresh(conn: sqlite3.Connection, notes: set[int] | None, bullets: set[int]) -> None:
    """Recompute the shadows of the `notes` paragraphs (None: all of them) against every bullet,
    and of every paragraph against the new `bullets`. Runs inside the sync's transaction."""
    if notes is not None and not notes and not bullets:
        return
    rows = conn.execute(
        "SELECT id, handle, aliases, text, date FROM units WHERE kind = 'bullet' AND date != ''"
    ).fetchall()
    every = [_bullet(r) for r in rows]
    found: list[tuple[int, int, float]] = []
    if notes is None:
        conn.execute("DELETE FROM shadows")
        found += _pairs(conn.execute(_NOTES_SQL, CORE_FILES), every)
    else:
        if notes:
            marks = ",".join("?" * len(notes))
            conn.execute(f"DELETE FROM shadows WHERE note IN ({marks})", list(notes))  # noqa: S608
            found += _pairs(
                conn.execute(f"{_NOTES_SQL} AND id IN ({marks})", [*CORE_FILES, *notes]), every
            )
        if bullets:
            new = [b for b in every if b.id in bullets]
            rest = (r for r in conn.execute(_NOTES_SQL, CORE_FILES) if r[0] not in notes)
            found += _pairs(rest, new)
    conn.executemany("INSERT OR REPLACE INTO shadows(note, bullet, weight) VALUES (?,?,?)", found)


def _pairs(
    notes: Iterable[tuple[int, str, str]], bullets: list[_Bullet]
) -> list[tuple[int, int, float]]:
    by_word: dict[str, list[_Bullet]] = {}
    for b in bullets:
        for w in {name[0] for name in b.names}:
            by_word.setdefault(w, []).append(b)
    if not by_word:
        return []
    out = []
    for uid, text, date in notes:
        have = set(telling(text))
        candidates = {b.id: b for w in have for b in by_word.get(w, ())}
        for b in candidates.values():
            weight = judge(text, date, b)
            if weight:
                out.append((uid, b.id, weight))
    return out


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


def _hit(row: tuple[Any, ...], score: float) -> Hit:
    uid, path, line, kind, handle, aliases, text, section, source, date, raw = row
    names = tuple(a for a in str(aliases).split(ALIAS_SEP) if a)
    return Hit(
        uid, path, line, kind, handle, names, text, section, source, date, raw, score, ("newer",)
    )
