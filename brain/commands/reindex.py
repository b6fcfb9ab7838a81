"""`brain reindex` (alias `sync`): bring the disposable index up to date with the Markdown."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from brain import index


@dataclass(frozen=True)
class ReindexResult:
    vault: str
    full: bool
    files: int
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    units: int
    bullets: int
    problems: int
    built: str
    ms: float


def reindex(vault: Path, *, full: bool = False) -> ReindexResult:
    start = time.perf_counter()
    report = index.rebuild(vault) if full else index.sync(vault)
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
        round((time.perf_counter() - start) * 1000, 1),
    )
