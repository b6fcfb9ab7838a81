"""Keyword retrieval over the index, with brain's ranking rules.

Ranking, in order of strength:
1. a query that is a bullet's handle or alias outright returns that bullet first, with only the
   hits scoring within EXACT_RATIO of it;
2. hits that match more of the query's terms rank higher (a term counts as matched through a
   synonym too);
3. among equal coverage, a term matched in a handle or alias outranks one matched in a body
   (query terms of 3+ characters also match as prefixes of handle and alias words; prose and
   bodies keep exact terms);
4. BM25 orders the rest; equal scores go to the newer unit.

User text never reaches FTS5 MATCH: it is folded and split into words here, and each word is
quoted, so `c++`, `NOT`, `tags:ops` or a lone `"` are plain words.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from dataclasses import dataclass

from brain.index import ALIAS_SEP

EXACT_RATIO = 0.85
PREFIX_MIN = 3
CANDIDATES = 500  # BM25 shortlist that the ranking rules reorder

_WORD = re.compile(r"[^\W_]+")
# Words that carry no topic; dropped from a query unless nothing else is left.
STOPWORDS = frozenset(
    """a about an and any are as at be been but by can could did do does for from had has have
    how i if in into is it its me my of on or our should so than that the their them then there
    these they this to was we were what when where which who why will with would you your""".split()
)


def fold(text: str) -> str:
    """Lower-case and strip diacritics as the index's tokenizer does (`Ödeme` → `odeme`)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


@dataclass(frozen=True)
class Hit:
    id: int
    path: str
    line: int
    kind: str
    handle: str
    aliases: tuple[str, ...]
    text: str
    section: str
    source: str
    date: str
    raw: str
    score: float
    match: tuple[str, ...]  # which signals found it: "exact", "handle", "keyword"


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[str, ...]  # topic words of the query, folded
    groups: tuple[tuple[tuple[str, ...], ...], ...]  # per term: alternatives, each a word sequence
    phrase: str  # the whole query folded to words, for the exact-handle rule


def parse_query(text: str, synonyms: dict[str, list[str]]) -> Query:
    all_words = words(text)
    terms = [w for w in all_words if w not in STOPWORDS] or all_words
    terms = list(dict.fromkeys(terms))
    groups = []
    for term in terms:
        alts: list[tuple[str, ...]] = [(term,)]
        for expansion in synonyms.get(term, []):
            seq = tuple(words(expansion))
            if seq and seq not in alts:
                alts.append(seq)
        groups.append(tuple(alts))
    return Query(text, tuple(terms), tuple(groups), " ".join(all_words))


def load_synonyms(conn: sqlite3.Connection) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for term, expansion in conn.execute("SELECT term, expansion FROM synonyms"):
        table.setdefault(" ".join(words(term)), []).append(expansion)
    return table


def match_expression(query: Query) -> str:
    """An FTS5 expression built only from quoted, tokenized words: safe for any user input."""
    parts = []
    for group in query.groups:
        for alt in group:
            phrase = '"' + " ".join(alt) + '"'
            parts.append(phrase)
            if len(alt) == 1 and len(alt[0]) >= PREFIX_MIN:
                parts.append("{handle aliases} : " + phrase + " *")
    return " OR ".join(parts)


def _contains(tokens: list[str], alt: tuple[str, ...], *, prefix: bool) -> bool:
    if len(alt) == 1:
        word = alt[0]
        if prefix and len(word) >= PREFIX_MIN:
            return any(t.startswith(word) for t in tokens)
        return word in tokens
    n = len(alt)
    return any(tuple(tokens[i : i + n]) == alt for i in range(len(tokens) - n + 1))


def _name_tokens(handle: str, aliases: tuple[str, ...]) -> list[list[str]]:
    return [words(handle), *(words(a) for a in aliases)]


def keyword_search(conn: sqlite3.Connection, query: Query, limit: int) -> list[Hit]:
    """Ranked keyword hits, at most `limit` (fewer under the exact-handle rule)."""
    if not query.groups:
        return []
    rows = conn.execute(
        "SELECT u.id, u.path, u.line, u.kind, u.handle, u.aliases, u.text, u.section, u.source,"
        " u.date, u.raw, bm25(fts, 10.0, 8.0, 1.0, 0.5) FROM fts JOIN units u ON u.id = fts.rowid"
        " WHERE fts MATCH ? ORDER BY bm25(fts, 10.0, 8.0, 1.0, 0.5) LIMIT ?",
        (match_expression(query), CANDIDATES),
    ).fetchall()
    hits: list[Hit] = []
    exact_ids: set[int] = set()
    for row in rows:
        uid, path, line, kind, handle, aliases_s, text, section, source, date, raw, bm25 = row
        aliases = tuple(a for a in aliases_s.split(ALIAS_SEP) if a)
        names = _name_tokens(handle, aliases) if handle else []
        body = words(f"{text} {section} {source}")
        covered = in_name = 0
        for group in query.groups:
            named = any(_contains(n, alt, prefix=True) for n in names for alt in group)
            if named or any(_contains(body, alt, prefix=False) for alt in group):
                covered += 1
            in_name += named
        if not covered:
            continue
        strength = -bm25
        score = 2 * covered + in_name + strength / (1 + strength)
        match = []
        if handle and any(" ".join(n) == query.phrase for n in names):
            exact_ids.add(uid)
            match.append("exact")
        if in_name:
            match.append("handle")
        match.append("keyword")
        hits.append(
            Hit(
                uid,
                path,
                line,
                kind,
                handle,
                aliases,
                text,
                section,
                source,
                date,
                raw,
                round(score, 4),
                tuple(match),
            )
        )
    hits.sort(
        key=lambda h: (h.id not in exact_ids, -h.score, _newest_first(h.date), h.path, h.line)
    )
    if exact_ids:
        bar = EXACT_RATIO * max(h.score for h in hits if h.id in exact_ids)
        hits = [h for h in hits if h.id in exact_ids or h.score >= bar]
    return hits[:limit]


def _newest_first(date: str) -> str:
    # Undated units sort after dated ones of the same score; a date sorts descending.
    return "".join(chr(0x7F - ord(c)) for c in date) if date else "\x7f"
