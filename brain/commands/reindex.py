"""`brain reindex` (alias `sync`): bring the disposable index up to date with the Markdown."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from brain import drift, index
from brain.semantic import Progress


@dataclass(frozen=True)
class ReindexResult:
    vault: str
    full: bool
    file_count: int
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    unit_count: int
    bullet_count: int
    problem_count: int
    built_at: str
    model: str | None  # the embedding model of the vectors, None for keyword only
    embedded: int  # units embedded by this run (unchanged ones keep their vectors)
    ms: float


def reindex(vault: Path, *, full: bool = False, progress: Progress | None = None) -> ReindexResult:
    from brain import semantic

    start = time.perf_counter()
    # Only here (and at install) is git history read for the notes' dates: the post-commit hook
    # runs this after every commit, and a find never walks history.
    report = index.rebuild(vault, history=True) if full else index.sync(vault, history=True)
    drift.update(vault)  # the code the bullets name: histories read since the last reindex
    model: str | None = None
    embedded = 0
    embedder = semantic.load()
    if embedder is not None:
        from brain.embed import EmbedError

        conn = index.connect(vault)
        try:
            embedded = semantic.update(conn, embedder, progress)
            model = embedder.model_id
        except EmbedError as exc:
            semantic.warn(f"the index has keywords only for now: {exc}")
        finally:
            conn.close()
    return ReindexResult(
        str(vault),
        report.full,
        report.files,
        tuple(report.changed),
        tuple(report.removed),
        report.units,
        report.bullets,
        len(report.problems),
        report.built,
        model,
        embedded,
        round((time.perf_counter() - start) * 1000, 1),
    )
