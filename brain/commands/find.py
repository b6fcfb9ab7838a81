"""`brain find`: the facts and notes that answer a question."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brain import index, search
from brain.errors import UsageError

DEFAULT_LIMIT = 10
DEFAULT_BUDGET = 2400  # bytes of output: about 600 tokens, ten terse hits


@dataclass(frozen=True)
class FindResult:
    query: str
    hits: tuple[search.Hit, ...]
    built: str  # the index build the answer came from


def find(vault: Path, query: str, *, limit: int = DEFAULT_LIMIT) -> FindResult:
    if limit < 1:
        raise UsageError("--limit must be at least 1", "pass e.g. --limit 10")
    conn = index.open_index(vault)
    try:
        parsed = search.parse_query(query, search.load_synonyms(conn))
        if not parsed.terms:
            raise UsageError(
                f"the query {query!r} has no words to search for",
                "ask with words, e.g. brain find 'libgit2 hooks'",
            )
        hits = search.keyword_search(conn, parsed, limit)
        return FindResult(query, tuple(hits), index.built(conn))
    finally:
        conn.close()
