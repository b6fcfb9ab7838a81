"""`brain find`: the facts and notes that answer a question."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from brain import drift, index, search, superseded
from brain.errors import UsageError
from brain.settings import current

DEFAULT_LIMIT = 10
DEFAULT_BUDGET = 2400  # bytes of output: about 600 tokens, ten terse hits
MODES = ("hybrid", "keyword", "vector")


@dataclass(frozen=True)
class FindResult:
    query: str
    hits: tuple[search.Hit, ...]
    mode: str  # what actually ran: a hybrid find whose model cannot load runs as keyword
    built: str  # the index build the answer came from
    evidence: str = search.STRONG  # how sure the answer is: strong, weak or none (search.answer)
    cut_count: int = 0  # ranked hits the cut left out (0 under --limit or --all: nothing cut)
    ranked: bool = False  # the ranked list without the cut (--limit, --all)


def find(
    vault: Path, query: str, *, limit: int | None = None, mode: str = "", ranked: bool = False
) -> FindResult:
    """The answer to `query`: what stands out of the ranked hits (search.answer), with how sure
    it is. With `limit` (or `ranked`: DEFAULT_LIMIT) the ranked list instead, uncut, as the
    ranking benchmarks read it; its `evidence` is still the answer's. `mode` defaults to hybrid
    when an embedder is configured. A note's paragraph that a newer bullet corrects is served
    below that bullet, marked (brain/superseded.py); of near-duplicate units only the newer is
    served (search.distinct)."""
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1", "pass e.g. --limit 10")
    if mode and mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", f"use one of {', '.join(MODES)}")
    conn = index.open_index(vault)
    try:
        return find_in(conn, vault, query, limit=limit, mode=mode, ranked=ranked)
    finally:
        conn.close()


def find_in(
    conn: sqlite3.Connection,
    vault: Path,
    query: str,
    *,
    limit: int | None = None,
    mode: str = "",
    ranked: bool = False,
) -> FindResult:
    """`find` on an open index (a caller asking many queries opens it once)."""
    parsed = search.read_query(conn, query)
    if not parsed.terms:
        raise UsageError(
            f"the query {query!r} has no words to search for",
            "ask with words, e.g. brain find 'libgit2 hooks'",
        )
    keyword = search.keyword_rank(conn, parsed)
    near = neighbours(vault, conn, query) if mode != "keyword" else None
    vector = None if near is None else near.hits
    ran = "keyword" if vector is None else mode or "hybrid"
    exact = search.exact_cut(keyword.hits) is not None
    if vector is None:
        listed = search.keyword_hits(keyword, parsed)
    elif ran == "vector":
        listed, exact = search.vector_rank(conn, vector), False
    else:
        listed = search.hybrid_rank(conn, parsed, vector, keyword)
    uncut = ranked or limit is not None
    width = DEFAULT_LIMIT if limit is None else limit
    listed = search.distinct(listed, max(width, search.ANSWER_DEPTH))
    judge = search.Judge(parsed, keyword, vector, None if near is None else near.general)
    floor = 0.0 if vector is None else None  # a keyword score of nothing held is 0
    answer = search.answer(listed, judge, exact=exact, floor=floor)
    if uncut:
        hits = drift.mark(conn, superseded.serve(conn, listed[:width], width))
        return FindResult(query, tuple(hits), ran, index.built(conn), answer.evidence, 0, True)
    # A paragraph kept brings in the newer bullet that corrects it: room for one each.
    hits = drift.mark(conn, superseded.serve(conn, answer.hits, 2 * len(answer.hits)))
    return FindResult(query, tuple(hits), ran, index.built(conn), answer.evidence, answer.left_out)


def neighbours(vault: Path, conn: sqlite3.Connection, text: str) -> search.Near | None:
    """The vector half: from the warm worker when one runs, else in-process. None means keyword
    only (no embedder configured, or the model cannot load: a warning said so)."""
    from brain import semantic

    provider, _ = semantic.embed_settings()
    if provider == "none":
        return None
    from brain import worker_client

    text = search.vector_query(conn, text)

    background = current().worker
    if background:
        answer = worker_client.ask(vault, text, search.VECTOR_DEPTH)
        if answer.note:
            semantic.warn(answer.note)
        if answer.hits is not None:
            return search.Near(answer.hits, answer.general)
        if not answer.inline:
            return None  # the worker is busy or was replaced: keywords now, not a model load
        background = answer.background
    not_yet = (
        "keyword results for now: the vault is being embedded in the background"
        if background
        else "keyword results for now: run `brain reindex` to embed the vault"
    )
    if (
        background
        and not semantic.index_model(conn)
        and semantic.missing(conn, "") > worker_client.INLINE_EMBED_MAX
    ):
        # Nothing embedded yet and a worker on its way: loading the model here cannot help. With
        # no worker the load goes on, so that a model that cannot load says why in one line.
        semantic.warn(not_yet)
        return None
    embedder = semantic.load()
    if embedder is None:
        return None
    from brain.embed import EmbedError

    try:
        stale = semantic.missing(conn, embedder.model_id)
        if 0 < stale <= worker_client.INLINE_EMBED_MAX:
            semantic.update(conn, embedder)
        elif stale and semantic.index_model(conn) != embedder.model_id:
            # Vectors of another model are not comparable; the worker started above re-embeds.
            semantic.warn(not_yet)
            return None
        return semantic.nearest(conn, embedder, text, search.VECTOR_DEPTH, str(vault))
    except EmbedError as exc:
        semantic.warn(f"keyword results only: {exc}")
        return None
