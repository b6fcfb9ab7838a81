"""Which notes a newer bullet corrects: the shadow relation, computed at index time.

A paragraph of a note *retells* a bullet when one sentence of it, or the heading it stands under,
names the bullet's subject (its handle or one alias, as a run of telling words in any order: "the
window for refunds" names `refund window`) and shares at least one more telling word with the
bullet (two for a one-word name). It says something *else* when its specifics differ from the
bullet's fact:

- a quantity of the same kind with another value: `90 days` where the bullet says `180 days`
  (numbers are compared by the telling word on either side of them, so `Postgres 14` meets
  `Postgres 15` and `90 days` meets `180 days`, while `3 people` never meets `180 days`; a
  duration meets a duration in any unit, `two weeks` against `30 days`);
- where no quantity meets another, other names: `Bob` where the bullet says `Alice`
  (capitalised words inside a sentence; the paragraph says none of the bullet's).

A paragraph from a note dated before the bullet that retells it and says something else is
*shadowed* by it. The relation is stored in the index (`shadows`), recomputed for the paragraphs
and bullets a sync touched; brain/superseded.py serves it.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from brain.config import CORE_FILES
from brain.vault import Unit
from brain.vocab import ALIAS_SEP, STOPWORDS, cjk_terms, fold, fts_phrase, words

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
HEADING = -1  # where a name stands when the paragraph's heading holds it: the whole paragraph
_TOKEN = re.compile(r"\d+(?:[.,:/]\d+)+|[^\W_]+|%")
_NAME = re.compile(r"[^\W\d_][^\W_]*")
REACH = 2  # tokens on each side of a number where the word that says what it counts may stand


def stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def telling(text: str) -> list[str]:
    """The words of `text` that say something, folded and stemmed (as `stem`), in order."""
    return [
        w[:-1] if len(w) > 3 and w[-1] == "s" and w[-2] != "s" else w
        for w in words(text)
        if w not in STOPWORDS
    ]


_DIGITS = re.compile(r"\d+")
_LETTER = re.compile(r"[^\W\d_]")
Quantity = tuple[str, tuple[str, ...], tuple[str, ...]]  # value, its digit groups, its kinds


# A duration meets a duration in any unit (`two weeks` against `30 days`): its length in seconds is
# one more kind of it. A month counts 30 days, a year 365.
_UNITS = {
    "second": 1,
    "sec": 1,
    "minute": 60,
    "min": 60,
    "hour": 3600,
    "hr": 3600,
    "hrs": 3600,
    "day": 86400,
    "week": 604800,
    "month": 2592000,
    "year": 31536000,
}
_SUFFIXES = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, **_UNITS}  # `15m`, `30d`
_SUFFIXED = re.compile(r"(\d+(?:\.\d+)?)([a-z]+)")
_RATE = frozenset({"every", "each", "per"})  # `every 6 hours` says how often, not how long
# Numbers spelled out, read only before a unit of time ("two weeks", "ninety days").
_NUMBER_WORDS = {
    word: n
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
        " fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}


def _spelled(tokens: list[str], i: int) -> str:
    """tokens[i] as digits when it is a number in words followed by a unit of time, else ""."""
    n = _NUMBER_WORDS.get(fold(tokens[i]))
    if n is None or i + 1 == len(tokens) or stem(fold(tokens[i + 1])) not in _UNITS:
        return ""
    return str(n)


def _scale(tokens: list[str], i: int) -> int:
    """Seconds in the unit of time the number tokens[i] counts (`30 days`, `15m`); 0 when it
    counts none, or says how often (`every 6 hours`)."""
    if i and fold(tokens[i - 1]) in _RATE:
        return 0
    suffixed = _SUFFIXED.fullmatch(fold(tokens[i]))
    if suffixed:
        return _SUFFIXES.get(suffixed[2], 0)
    return _UNITS.get(stem(fold(tokens[i + 1])), 0) if i + 1 < len(tokens) else 0


def measures(text: str) -> list[Quantity]:
    """The numbers of `text`, each with what it counts: the telling word on either side of it
    (`from 90 to 180 days`: a number followed by another counts what that one counts). A word
    with digits in it (`30s`, `v14`, `pg13`) is its own kind (`#s`, `v#`, `pg#`); a duration is
    also of the kind `duration`, by its length in seconds (`_UNITS`)."""
    tokens = _TOKEN.findall(text)
    kinds: dict[int, tuple[str, ...]] = {}
    values: dict[int, tuple[str, tuple[str, ...]]] = {}
    scales: dict[int, int] = {}
    for i in reversed(range(len(tokens))):  # right to left: a range's end is read first
        token = tokens[i]
        groups = tuple(_DIGITS.findall(token))
        if not groups:
            token = _spelled(tokens, i)
            if not token:
                continue
            groups = (token,)
        scales[i] = _scale(tokens, i)
        if _LETTER.search(token):
            values[i] = (".".join(groups), groups)
            kinds[i] = (_DIGITS.sub("#", fold(token)),)
            continue
        values[i] = (token.replace(",", ""), groups)
        before, after = _near(tokens, i, -1), _near(tokens, i, 1)
        found = [before] if isinstance(before, str) and before else []
        if isinstance(after, int):
            found += kinds.get(after, ())  # a range or a list: what the next number counts
            scales[i] = scales[i] or scales.get(after, 0)
        elif after:
            found.append(after)
        kinds[i] = tuple(dict.fromkeys(found))
    durations = []
    for i, scale in sorted(scales.items()):
        if not scale:
            continue
        try:
            durations.append((str(round(float(values[i][0]) * scale)), values[i][1], ("duration",)))
        except ValueError:  # `1.2.3 days`, `10:00 hours`
            continue
    return [(*values[i], kinds[i]) for i in sorted(values)] + durations


def by_kind(found: Iterable[Quantity], skip: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """{kind: values}; numbers made only of the words in `skip` (a handle such as `brain 1.0`)
    are the subject, not specifics."""
    skip = set(skip)
    kinds: dict[str, set[str]] = {}
    for value, groups, where in found:
        if all(g in skip for g in groups):
            continue
        for kind in where:
            kinds.setdefault(kind, set()).add(value)
    return {k: frozenset(v) for k, v in kinds.items()}


def quantities(text: str, skip: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """The numbers of `text` by what they count: {telling word next to it: {values}}."""
    return by_kind(measures(text), skip)


def _near(tokens: list[str], i: int, step: int) -> str | int:
    """The nearest telling word within REACH tokens of tokens[i], in one direction; the index of
    a number met first; "" when there is neither."""
    for j in range(i + step, i + step * (REACH + 1), step):
        if not 0 <= j < len(tokens):
            return ""
        piece = tokens[j]
        if piece == "%":
            return "%"
        if _DIGITS.search(piece):
            return j
        word = fold(piece)
        if word not in STOPWORDS:
            return stem(word)
    return ""


_NAME_TOKEN = re.compile(r"[^\W_]+|[.!?]")


def proper_names(sentences: list[str]) -> frozenset[str]:
    """Capitalised words inside a sentence (not a unit after a number, not a stopword): people,
    products, places."""
    found = set()
    for sentence in sentences:
        start, after_number = True, False
        for piece in _NAME_TOKEN.findall(sentence):
            if piece in ".!?":
                start = True
                continue
            if not start and not after_number and piece[0].isupper():
                word = fold(piece)
                if word not in STOPWORDS:
                    found.add(stem(word))
            start, after_number = False, bool(_DIGITS.search(piece))
    return frozenset(found)


# A number (in digits, or in words before a unit of time), or a capital after the first word.
_MAYBE = re.compile(
    r"\d|\w\W+[A-Z]|\b(?:" + "|".join(_NUMBER_WORDS) + r")\W+(?:" + "|".join(_UNITS) + ")",
    re.IGNORECASE,
)


@dataclass
class _Bullet:
    id: int
    handle: str
    date: str
    names: list[tuple[str, ...]]  # telling words of the handle and of each alias
    text: str
    _bag: set[str] | None = None
    _specifics: tuple[dict[str, frozenset[str]], frozenset[str]] | None = None

    def bag(self) -> set[str]:
        """Its telling words (handle, aliases, fact), read only for a bullet some note names."""
        if self._bag is None:
            self._bag = {w for name in self.names for w in name if not w.isdigit()}
            self._bag.update(w for w in telling(self.text) if not w.isdigit())
        return self._bag

    def specifics(self) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        """Its fact's quantities and names (what its subject's words are not)."""
        if self._specifics is None:
            subject = {w for name in self.names for w in name}
            if _MAYBE.search(self.text):
                self._specifics = (
                    quantities(self.text, subject),
                    proper_names([self.text]) - subject,
                )
            else:
                self._specifics = ({}, frozenset())
        return self._specifics


def _bullet(row: tuple[Any, ...]) -> _Bullet:
    uid, handle, aliases, text, date = row
    names = []
    for name in (handle, *str(aliases).split(ALIAS_SEP)):
        seq = tuple(dict.fromkeys(telling(name)))
        if seq and seq not in names:
            names.append(seq)
    return _Bullet(uid, handle, date, names, text)


@dataclass
class Note:
    """A note's paragraph, split once: its sentences, their telling words and their numbers."""

    id: int
    date: str
    sentences: list[str]
    seqs: list[list[str]]  # telling words of each sentence, in order
    sets: list[set[str]]
    heading: list[str]  # telling words of the heading it stands under (its file's title, or name)
    _measures: dict[int, list[Quantity]] = dataclasses.field(default_factory=dict)

    def measures(self, k: int) -> list[Quantity]:
        if k not in self._measures:
            self._measures[k] = measures(self.sentences[k])
        return self._measures[k]


def note(uid: int, text: str, date: str, section: str = "") -> Note:
    """A paragraph, split; `section` is its heading breadcrumb (`Title > Section`)."""
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    seqs = [telling(s) for s in sentences]
    heading = telling(section.rsplit(" > ", 1)[-1])
    return Note(uid, date, sentences, seqs, [set(seq) for seq in seqs], heading)


def judge(p: Note, b: _Bullet, named: dict[tuple[str, ...], list[int]]) -> float:
    """How strongly a note's paragraph is shadowed by bullet `b`, whose names stand in the
    paragraph's sentences `named` ({name: sentence numbers, HEADING for its heading}): the share
    of the bullet's telling words in those sentences; 0.0 when it is not shadowed."""
    if not (p.date and b.date and p.date < b.date):
        return 0.0
    best = 0.0
    for name, named_at in named.items():
        at = named_at
        if HEADING in at:  # "## Payout limit" over "Up to 5,000 EUR a day.": all of it is about it
            at = list(range(len(p.sentences)))
        elif not any(_DIGITS.search(p.sentences[k]) for k in at) and at[-1] + 1 < len(p.sentences):
            at = [*at, at[-1] + 1]  # "... the refund window. It is 90 days."
        said = p.sets[at[0]] if len(at) == 1 else set().union(*(p.sets[k] for k in at))
        bag = b.bag()
        shared = bag & said
        # A one-word name ("refunds") is named in passing more often than a phrase is.
        if len(shared.difference(name)) < (2 if len(name) == 1 else 1):
            continue
        quantity, names = b.specifics()
        if not quantity and not names:
            return 0.0  # the bullet has no specifics a paragraph could contradict
        theirs = by_kind((q for k in at for q in p.measures(k)), name)
        region = [p.sentences[k] for k in at]
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
    "SELECT id, text, date, section FROM units WHERE kind = 'prose' AND date != ''"  # noqa: S608
    " AND path NOT IN (" + ",".join("?" * len(CORE_FILES)) + ")"
)


Key = tuple[str, str, str, str, str, str]  # a unit by its content: kind, handle, aliases, text,
# date and section (a paragraph's heading can name what it retells)


@dataclass
class Kept:
    """A file's units by content, and the shadows they were part of, before it is re-read."""

    ids: dict[Key, list[int]]
    rows: list[tuple[int, int, float]]


def keep(conn: sqlite3.Connection, rel: str) -> Kept:
    ids: dict[Key, list[int]] = {}
    for uid, kind, handle, aliases, text, date, section in conn.execute(
        "SELECT id, kind, handle, aliases, text, date, section FROM units WHERE path = ?"
        " ORDER BY id",
        (rel,),
    ):
        ids.setdefault((kind, handle, aliases, text, date, section), []).append(uid)
    rows = conn.execute(
        "SELECT note, bullet, weight FROM shadows"
        " WHERE note IN (SELECT id FROM units WHERE path = ?)"
        " UNION ALL SELECT note, bullet, weight FROM shadows"
        " WHERE bullet IN (SELECT id FROM units WHERE path = ?)",
        (rel, rel),
    ).fetchall()
    return Kept(ids, rows)


def restore(
    conn: sqlite3.Connection, kept: Kept, units: list[Unit], ids: Iterable[int]
) -> set[int]:
    """Give the re-read file's unchanged units their shadows back (a file's units get new ids
    when it is re-read; only what changed needs judging again). The ids that do need it."""
    old = {uid for group in kept.ids.values() for uid in group}
    moved: dict[int, int] = {}
    fresh: set[int] = set()
    for u, uid in zip(units, ids, strict=True):
        key = (u.kind, u.handle, ALIAS_SEP.join(u.aliases), u.text, u.date, u.section)
        group = kept.ids.get(key)
        if group:
            moved[group.pop(0)] = uid
        else:
            fresh.add(uid)
    rows = []
    for note, bullet, weight in kept.rows:
        n = moved.get(note) if note in old else note
        b = moved.get(bullet) if bullet in old else bullet
        if n is not None and b is not None:
            rows.append((n, b, weight))
    conn.executemany("INSERT OR REPLACE INTO shadows(note, bullet, weight) VALUES (?,?,?)", rows)
    return fresh


_BULLETS_SQL = (  # a proposal answering finds (review mode `after`) is not yet a fact
    "SELECT id, handle, aliases, text, date FROM units WHERE kind = 'bullet' AND date != ''"
    " AND path != 'AI/INBOX.md'"
)


def _marks(ids: Iterable[Any]) -> str:
    return ",".join("?" * len(list(ids)))


TOPIC = 3  # a one-word name in more bullets' names than this is a topic, not one fact's name
MANY = 200  # new bullets beyond which every paragraph is read rather than looked up


def refresh(conn: sqlite3.Connection, notes: set[int] | None, bullets: set[int]) -> None:
    """Recompute the shadows of the `notes` paragraphs (None: all of them) against every bullet,
    and of every paragraph against the new `bullets`. Runs inside the sync's transaction."""
    found: list[tuple[int, int, float]] = []
    if notes is None:
        conn.execute("DELETE FROM shadows")
        every = [_bullet(r) for r in conn.execute(_BULLETS_SQL)]
        spread = Counter(w for b in every for w in {w for name in b.names for w in name})
        _prune(every, spread)
        found += _pairs(conn.execute(_NOTES_SQL, CORE_FILES), every)
    if notes:
        conn.execute(f"DELETE FROM shadows WHERE note IN ({_marks(notes)})", list(notes))  # noqa: S608
        sql = f"{_NOTES_SQL} AND id IN ({_marks(notes)})"
        rows = conn.execute(sql, [*CORE_FILES, *notes]).fetchall()
        found += _pairs(rows, _counted(conn, _named_in(conn, rows)))
    if notes is not None and bullets:
        sql = f"{_BULLETS_SQL} AND id IN ({_marks(bullets)})"
        new = _counted(conn, [_bullet(r) for r in conn.execute(sql, list(bullets))])
        rest = conn.execute(_NOTES_SQL, CORE_FILES) if len(new) > MANY else _naming(conn, new)
        found += _pairs((r for r in rest if r[0] not in notes), new)
    conn.executemany("INSERT OR REPLACE INTO shadows(note, bullet, weight) VALUES (?,?,?)", found)


def _prune(bullets: list[_Bullet], spread: dict[str, int]) -> None:
    """Keep the names that can name one fact: phrases, and words few bullets' names share."""
    for b in bullets:
        b.names = [name for name in b.names if len(name) > 1 or spread.get(name[0], 0) <= TOPIC]


def _surface(word: str) -> str:
    """An FTS5 expression for the words `stem` folds to `word` (itself, or with an s)."""
    phrase = fts_phrase(cjk_terms(word))
    if stem(word + "s") == word:
        return f"({phrase} OR {fts_phrase((word + 's',))})"
    return phrase


def _counted(conn: sqlite3.Connection, bullets: list[_Bullet]) -> list[_Bullet]:
    """`_prune` for a few bullets: how many bullets' names share a word, from the names table."""
    single = {name[0] for b in bullets for name in b.names if len(name) == 1}
    spread = {
        w: conn.execute(
            "SELECT count(*) FROM names WHERE names MATCH ?", (_surface(w),)
        ).fetchone()[0]
        for w in single
    }
    _prune(bullets, spread)
    return bullets


NoteRow = tuple[int, str, str, str]  # a dated paragraph: id, text, date, section


def _naming(conn: sqlite3.Connection, bullets: list[_Bullet]) -> list[NoteRow]:
    """The dated paragraphs that hold every word of some name of these bullets, in their text or
    their headings (FTS5 finds them, each word in any form that stems to it: a superset of what
    `_pairs` matches)."""
    found: dict[int, NoteRow] = {}
    for b in bullets:
        for name in b.names:
            expression = "{body context} : (" + " AND ".join(_surface(w) for w in name) + ")"
            for row in conn.execute(
                "SELECT u.id, u.text, u.date, u.section FROM fts JOIN units u ON u.id = fts.rowid"
                " WHERE fts MATCH ? AND u.kind = 'prose' AND u.date != '' AND u.date < ?",
                (expression, b.date),
            ):
                found[row[0]] = row
    notes = {r[0] for r in conn.execute(_NOTES_SQL, CORE_FILES)} if found else set()
    return [row for uid, row in found.items() if uid in notes]


def _prefix(word: str) -> str:
    """An FTS5 expression for the words that start with `word` (a CJK run: its bigrams)."""
    grams = cjk_terms(word)
    return fts_phrase(grams, prefix=grams == [word])


def _named_in(conn: sqlite3.Connection, rows: list[NoteRow]) -> list[_Bullet]:
    """The bullets whose handle or an alias holds a word of these paragraphs or their headings:
    a few changed notes need not load every bullet (the unstemmed `names` table, each word as a
    prefix, a superset of what `_pairs` matches)."""
    have = sorted({w for _, text, _, section in rows for w in telling(f"{section} {text}")})
    ids: set[int] = set()
    for start in range(0, len(have), 200):
        expression = " OR ".join(_prefix(w) for w in have[start : start + 200])
        ids.update(
            r[0] for r in conn.execute("SELECT rowid FROM names WHERE names MATCH ?", (expression,))
        )
    if not ids:
        return []
    sql = f"{_BULLETS_SQL} AND id IN ({_marks(ids)})"
    return [_bullet(r) for r in conn.execute(sql, sorted(ids))]


MAX_NAME = 8  # telling words in a name that is looked for as a run of words


def _pairs(notes: Iterable[NoteRow], bullets: list[_Bullet]) -> list[tuple[int, int, float]]:
    """The shadows among `notes` and `bullets`: the runs of telling words of each sentence, and
    of the heading, are looked up among the bullets' names, in any order (stopwords between a
    name's words do not count: "the window for refunds" names `refund window`), so only a
    bullet a paragraph names is judged."""
    phrases: dict[tuple[str, ...], list[tuple[_Bullet, tuple[str, ...]]]] = {}
    reach: dict[str, int] = {}  # a word of a name -> the longest name holding it
    for b in bullets:
        for name in b.names:
            if len(name) <= MAX_NAME:
                phrases.setdefault(tuple(sorted(name)), []).append((b, name))
                for w in name:
                    reach[w] = max(reach.get(w, 0), len(name))
    if not phrases:
        return []
    out = []
    for uid, text, date, section in notes:
        if not _MAYBE.search(text):
            continue  # no number and no name: nothing in it can contradict a bullet
        p = note(uid, text, date, section)
        named: dict[int, tuple[_Bullet, dict[tuple[str, ...], list[int]]]] = {}
        for k, seq in [(HEADING, p.heading), *enumerate(p.seqs)]:
            for i, first in enumerate(seq):
                for n in range(1, min(reach.get(first, 0), len(seq) - i) + 1):
                    for b, name in phrases.get(tuple(sorted(seq[i : i + n])), ()):
                        if date < b.date:
                            at = named.setdefault(b.id, (b, {}))[1].setdefault(name, [])
                            if not at or at[-1] != k:
                                at.append(k)
        for b, where in named.values():
            weight = judge(p, b, where)
            if weight:
                out.append((uid, b.id, weight))
    return out
