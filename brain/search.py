"""Keyword retrieval over the index, with brain's ranking rules.

Ranking, in order of strength:
1. a query that is a bullet's handle or alias outright returns that bullet first, with only the
   hits scoring within EXACT_RATIO of it;
2. hits that match more of the query's terms rank higher (a term counts as matched through a
   synonym too);
3. among equal coverage, a term matched in a handle or alias outranks one matched in a body
   (query terms of 3+ characters also match as prefixes of handle and alias words, through the
   unstemmed `names` table; prose and bodies match whole words, stemmed);
4. BM25 orders the rest (a prose unit's neighbouring lines count, weighted low); equal scores
   go to the newer unit.

Hybrid search (`hybrid_rank`) fuses this list with the vector neighbours; see the constants
below it.

User text never reaches FTS5 MATCH: it is folded and split into words here, and each word is
quoted, so `c++`, `NOT`, `tags:ops` or a lone `"` are plain words.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import unicodedata
from dataclasses import dataclass
from typing import Any

from brain.index import ALIAS_SEP, cjk_terms, lone_cjk

EXACT_RATIO = 0.85
PREFIX_MIN = 3
CANDIDATES = 500  # BM25 shortlist that the ranking rules reorder

_WORD = re.compile(r"[^\W_]+")
# Words that carry no topic; dropped from a query unless nothing else is left.
STOPWORDS = frozenset(
    """a about an and any are as at be been but by can could did do does for from had has have he
    her hers him his how i if in into is it its me my of on or our she should so than that the
    their them then there these they this to us was we were what when where which who whom whose
    why will with would you your""".split()
)


def fold(text: str) -> str:
    """Lower-case and strip diacritics as the index's tokenizer does (`Ödeme` → `odeme`)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def terms_of(text: str) -> list[str]:
    """`words`, with each run of Chinese or Japanese split as the index splits it (bigrams)."""
    return [t for w in words(text) for t in cjk_terms(w)]


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
    match: tuple[str, ...]  # which signals found it: "exact", "handle", "keyword", "semantic"
    covered: float = 0.0  # share of the query's terms the keyword half found in it
    superseded_by: str = ""  # handle of a newer bullet that says otherwise (brain/stale.py)


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[str, ...]  # topic words of the query, folded
    groups: tuple[tuple[tuple[str, ...], ...], ...]  # per term: alternatives, each a word sequence
    phrase: str  # the whole query folded to words, for the exact-handle rule


def parse_query(text: str, synonyms: dict[str, list[str]]) -> Query:
    all_words = terms_of(text)
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


def _alternatives(group: tuple[tuple[str, ...], ...], *, prefix: bool) -> list[str]:
    out = []
    for alt in group:
        phrase = '"' + " ".join(alt) + '"'
        wide = (prefix and len(alt) == 1 and len(alt[0]) >= PREFIX_MIN) or lone_cjk(alt)
        out.append(phrase + " *" if wide else phrase)
    return out


def _name_expression(group: tuple[tuple[str, ...], ...]) -> str:
    """A term as a handle/alias word or word prefix (the unstemmed `names` table)."""
    return " OR ".join(_alternatives(group, prefix=True))


def _group_expression(group: tuple[tuple[str, ...], ...]) -> str:
    """A term or one of its synonyms, anywhere (the stemmed `fts` table)."""
    return " OR ".join(_alternatives(group, prefix=False))


def _own_expression(group: tuple[tuple[str, ...], ...]) -> str:
    """The term in the unit's own words: its neighbours help find it, but do not vouch for it."""
    return "{handle aliases body context} : (" + _group_expression(group) + ")"


def match_expression(query: Query) -> str:
    """An FTS5 expression built only from quoted, tokenized words: safe for any user input."""
    return " OR ".join(f"({_group_expression(g)})" for g in query.groups)


_COLUMNS = (
    "u.id, u.path, u.line, u.kind, u.handle, u.aliases, u.text, u.section, u.source, u.date, u.raw"
)


# Rank inside FTS5 first, then join the shortlist: joining every match before the cut is slower.
_KEYWORD_SQL = (  # only constants are formatted in
    "WITH top AS (SELECT rowid AS id, bm25(fts, 10.0, 8.0, 1.0, 0.5, 0.3) AS rank FROM fts"  # noqa: S608
    " WHERE fts MATCH ? ORDER BY rank LIMIT ?)"
    f" SELECT {_COLUMNS}, top.rank FROM top JOIN units u ON u.id = top.id"
    " ORDER BY top.rank"
)
_MATCH_SQL = "SELECT rowid FROM fts WHERE fts MATCH ?"
_COUNT_SQL = "SELECT count(*) FROM fts WHERE fts MATCH ?"
_NAMES_SQL = "SELECT rowid FROM names WHERE names MATCH ?"


def _by_ids(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    marks = ",".join("?" * len(ids))
    sql = f"SELECT {_COLUMNS} FROM units u WHERE u.id IN ({marks})"  # noqa: S608 - placeholders
    return {row[0]: row for row in conn.execute(sql, ids)}


def _hit(row: tuple[Any, ...], score: float, match: tuple[str, ...], covered: float) -> Hit:
    uid, path, line, kind, handle, aliases, text, section, source, date, raw = row[:11]
    return Hit(
        uid,
        path,
        line,
        kind,
        handle,
        tuple(a for a in aliases.split(ALIAS_SEP) if a),
        text,
        section,
        source,
        date,
        raw,
        round(score, 4),
        match,
        covered,
    )


def _order(hits: list[Hit]) -> None:
    hits.sort(
        key=lambda h: ("exact" not in h.match, -h.score, _newest_first(h.date), h.path, h.line)
    )


def _matching(conn: sqlite3.Connection, expression: str, ids: set[int]) -> tuple[set[int], int]:
    """Which of `ids` match `expression`, and how many units match it in all. FTS5 itself
    decides, so stemming, diacritics and prefixes count exactly as they do in the index. (One
    MATCH and a set intersection: an `IN (...)` list would make SQLite re-run the match per id.)"""
    every = [row[0] for row in conn.execute(_MATCH_SQL, (expression,))]
    return ids.intersection(every), len(every)


def _names(handle: str, aliases: str) -> set[str]:
    return {" ".join(terms_of(n)) for n in (handle, *aliases.split(ALIAS_SEP)) if n}


@dataclass(frozen=True)
class Ranked:
    hits: list[Hit]
    known: float  # share of the query's terms that some unit of the vault holds
    # Per query term: the candidates holding it, and how many units of the vault hold it (its
    # document frequency), for callers that weigh the terms (`brain prime`).
    found: tuple[frozenset[int], ...] = ()
    df: tuple[int, ...] = ()


def keyword_rank(conn: sqlite3.Connection, query: Query) -> Ranked:
    """Every keyword candidate, ranked by the rules above (exact-handle hits first)."""
    if not query.groups:
        return Ranked([], 0.0)
    # One snapshot for all three queries: a concurrent rebuild renumbers unit ids, and ids read
    # before it would be matched against the new index after it.
    conn.execute("SAVEPOINT keyword_rank")
    try:
        rows = conn.execute(_KEYWORD_SQL, (match_expression(query), CANDIDATES)).fetchall()
        named = [
            {r[0] for r in conn.execute(_NAMES_SQL, (_name_expression(g),))} for g in query.groups
        ]
        ids = {row[0] for row in rows}
        # Bullets reached only through a handle prefix join the candidates with no BM25 weight.
        extra = sorted(set().union(*named) - ids)[:CANDIDATES]
        rows += [(*row, 0.0) for row in _by_ids(conn, extra).values()]
        ids.update(extra)
        matched = [_matching(conn, _own_expression(g), ids) for g in query.groups]
    finally:
        conn.execute("RELEASE keyword_rank")
    anywhere = [found | (named[k] & ids) for k, (found, _) in enumerate(matched)]
    known = sum(df > 0 or bool(named[k]) for k, (_, df) in enumerate(matched)) / len(matched)
    hits: list[Hit] = []
    for row in rows:
        uid, handle, aliases = row[0], row[4], row[5]
        covered = sum(uid in found for found in anywhere)
        in_name = sum(uid in found for found in named)
        if not covered:
            continue
        strength = -row[11]
        score = 2 * covered + in_name + strength / (1 + strength)
        match = []
        if handle and query.phrase in _names(handle, aliases):
            match.append("exact")
        if in_name:
            match.append("handle")
        match.append("keyword")
        hits.append(_hit(row, score, tuple(match), covered / len(query.groups)))
    _order(hits)
    dfs = tuple(df for _, df in matched)
    return Ranked(hits, known, tuple(frozenset(f) for f in anywhere), dfs)


def exact_cut(hits: list[Hit]) -> list[Hit] | None:
    """Under the exact-handle rule: the exact bullets and their near ties; else None."""
    exact = [h for h in hits if "exact" in h.match]
    if not exact:
        return None
    bar = EXACT_RATIO * max(h.score for h in exact)
    return [h for h in hits if "exact" in h.match or h.score >= bar]


def keyword_search(conn: sqlite3.Connection, query: Query, limit: int) -> list[Hit]:
    """Ranked keyword hits, at most `limit` (fewer under the exact-handle rule)."""
    hits = keyword_rank(conn, query).hits
    cut = exact_cut(hits)
    return (hits if cut is None else cut)[:limit]


# Hybrid fusion. Reciprocal rank fusion (k = 60) of the keyword list and the vector list, with
# keyword hits weighted by the share of the query's terms they contain: plain RRF lets a keyword
# hit on one common word outvote the vector list (measured: R@5 fell from .80 to .40 on
# paraphrases).
RRF_K = 60
VECTOR_WEIGHT = 1.0
VECTOR_DEPTH = 100  # vector candidates considered
# A hit is *vouched for* when the keyword half found it and the vault holds at least half the
# query's terms (a question mostly in words the vault has never seen is about something it does
# not hold), or when its cosine stands out from the crowd: its margin over the median of the top
# ten cosines (relative, never an absolute cosine, so the bar carries across models and vaults).
# Calibrated with tools/eval on testdata/golden.jsonl: 88% of the unanswerable queries come back
# empty. The share of known terms rather than the share in one hit: a long conversational
# question rarely has half its words in the one line that answers it (LoCoMo: 11 of 197
# questions came back empty under a per-hit "half the terms" rule, 1 under this one).
KNOWN = 0.5
MARGIN_ALONE = 0.12  # a hit the keyword half did not find at all
MARGIN_PARTIAL = 0.08  # a keyword hit on a query mostly of words the vault does not hold


def hybrid_rank(
    conn: sqlite3.Connection,
    query: Query,
    vector: list[tuple[int, float]],
    ranked: Ranked | None = None,
) -> list[Hit]:
    """Fuse the keyword ranking (`ranked`, when the caller has it already) with the vector
    neighbours.

    A query that nothing vouches for comes back empty: the vault cannot answer it. Otherwise the
    fused list is returned, less the vector-only hits that do not stand out.
    """
    ranked = keyword_rank(conn, query) if ranked is None else ranked
    keyword = ranked.hits
    cut = exact_cut(keyword)
    if cut is not None:
        return cut
    cosine = dict(vector)
    top = sorted((c for _, c in vector[:10]), reverse=True)
    median = top[len(top) // 2] if top else 0.0
    fused: dict[int, float] = {}
    by_id: dict[int, Hit] = {}
    for rank, h in enumerate(keyword):
        fused[h.id] = h.covered / (RRF_K + rank + 1)  # all the terms: full weight; half: half
        by_id[h.id] = h
    for rank, (uid, _) in enumerate(vector[:VECTOR_DEPTH]):
        fused[uid] = fused.get(uid, 0.0) + VECTOR_WEIGHT / (RRF_K + rank + 1)
    for uid, row in _by_ids(conn, [uid for uid in fused if uid not in by_id]).items():
        by_id[uid] = _hit(row, 0.0, (), 0.0)
    vouched: set[int] = set()
    out: list[Hit] = []
    for uid, score in fused.items():
        found = by_id.get(uid)
        if found is None:
            continue  # a vector of a unit that a concurrent reindex has just removed
        margin = cosine[uid] - median if uid in cosine else -1.0
        bar = MARGIN_ALONE if found.covered == 0 else MARGIN_PARTIAL
        if (found.covered and ranked.known >= KNOWN) or margin >= bar:
            vouched.add(uid)
        if found.covered == 0 and uid not in vouched:
            continue  # a vector-only hit is kept only when it stands out
        match = found.match + (("semantic",) if uid in cosine else ())
        out.append(dataclasses.replace(found, score=round(score * 1000, 4), match=match))
    if not vouched:
        return []
    out.sort(key=lambda h: (-h.score, _newest_first(h.date), h.path, h.line))
    return out


COMMON = 0.4  # a word in more than this share of units hardly tells one from another


def vector_query(conn: sqlite3.Connection, text: str) -> str:
    """The query as the vector half should see it: without the words most of the vault shares.

    In a vault of one person's conversations most lines name the speakers, and a question that
    names them too is pulled by the names toward lines that say nothing else; BM25 gives such
    words little weight already (their IDF falls toward zero as they near half the units).
    Measured with tools/eval: LoCoMo vector recall@5 45.5 -> 51.9, golden hybrid MRR .89 -> .90.
    A query made only of such words is kept whole.
    """
    total = conn.execute("SELECT count(*) FROM units").fetchone()[0]
    if total < 20:  # too few units for a share to mean anything
        return text
    kept = []
    for token in text.split():
        ws = words(token)
        if not (ws and all(_share(conn, w, total) > COMMON for w in ws)):
            kept.append(token)
    return " ".join(kept) if kept else text


def _share(conn: sqlite3.Connection, word: str, total: int) -> float:
    """The share of units whose own words (not their neighbours') include `word`."""
    expression = '{handle aliases body} : "' + word + '"'
    return float(conn.execute(_COUNT_SQL, (expression,)).fetchone()[0]) / total


def vector_rank(conn: sqlite3.Connection, vector: list[tuple[int, float]]) -> list[Hit]:
    """The vector list alone, as hits (for evaluation)."""
    rows = _by_ids(conn, [uid for uid, _ in vector])
    return [_hit(rows[uid], cos, ("semantic",), 0.0) for uid, cos in vector if uid in rows]


def _newest_first(date: str) -> str:
    # Undated units sort after dated ones of the same score; a date sorts descending.
    return "".join(chr(0x7F - ord(c)) for c in date) if date else "\x7f"
