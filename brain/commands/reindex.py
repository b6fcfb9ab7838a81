"""`brain reindex` (alias `sync`): bring the disposable index up to date with the Markdown."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

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
    done = semantic.reindex(vault, full=full, progress=progress)
    report = done.report
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
        done.model,
        done.embedded,
        round((time.perf_counter() - start) * 1000, 1),
    )
