"""`brain find`: the facts and notes that answer a question."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from brain import index, search, stale
from brain.errors import UsageError

DEFAULT_LIMIT = 10
DEFAULT_BUDGET = 2400  # bytes of output: about 600 tokens, ten terse hits
MODES = ("hybrid", "keyword", "vector")


@dataclass(frozen=True)
class FindResult:
    query: str
    hits: tuple[search.Hit, ...]
    mode: str  # what actually ran: a hybrid find whose model cannot load runs as keyword
    built: str  # the index build the answer came from


def find(vault: Path, query: str, *, limit: int = DEFAULT_LIMIT, mode: str = "") -> FindResult:
    """Ranked hits for `query`. `mode` defaults to hybrid when an embedder is configured. A note's
    paragraph that a newer bullet corrects is served below that bullet, marked (brain/stale.py);
    of near-duplicate units only the newer is served (search.distinct)."""
    if limit < 1:
        raise UsageError("--limit must be at least 1", "pass e.g. --limit 10")
    if mode and mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", f"use one of {', '.join(MODES)}")
    conn = index.open_index(vault)
    try:
        return find_in(conn, vault, query, limit=limit, mode=mode)
    finally:
        conn.close()


def find_in(
    conn: sqlite3.Connection, vault: Path, query: str, *, limit: int = DEFAULT_LIMIT, mode: str = ""
) -> FindResult:
    """`find` on an open index (a caller asking many queries opens it once)."""
    parsed = search.read_query(conn, query)
    if not parsed.terms:
        raise UsageError(
            f"the query {query!r} has no words to search for",
            "ask with words, e.g. brain find 'libgit2 hooks'",
        )
    if mode != "keyword":
        vector = neighbours(vault, conn, query)
        if vector is not None:
            if mode == "vector":
                hits = search.distinct(search.vector_rank(conn, vector), limit)
                hits = stale.serve(conn, hits, limit)
                return FindResult(query, tuple(hits), "vector", index.built(conn))
            hits = search.distinct(search.hybrid_rank(conn, parsed, vector), limit)
            hits = stale.serve(conn, hits, limit)
            return FindResult(query, tuple(hits), "hybrid", index.built(conn))
    hits = stale.serve(conn, search.keyword_search(conn, parsed, limit), limit)
    return FindResult(query, tuple(hits), "keyword", index.built(conn))


def neighbours(vault: Path, conn: sqlite3.Connection, text: str) -> list[tuple[int, float]] | None:
    """The vector half: from the warm worker when one runs, else in-process. None means keyword
    only (no embedder configured, or the model cannot load: a warning said so)."""
    from brain import semantic

    provider, _ = semantic.embed_settings()
    if provider == "none":
        return None
    from brain import worker_client

    text = search.vector_query(conn, text)

    background = os.environ.get("BRAIN_WORKER", "1") != "0"
    if background:
        answer = worker_client.ask(vault, text, search.VECTOR_DEPTH)
        if answer.note:
            semantic.warn(answer.note)
        if answer.hits is not None:
            return answer.hits
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
        return semantic.search(conn, embedder, text, search.VECTOR_DEPTH, str(vault))
    except EmbedError as exc:
        semantic.warn(f"keyword results only: {exc}")
        return None
