#!/usr/bin/env python3
"""Benchmark `brain day`, `brain week`, `brain lessons` and `brain howto` over the recall corpus.

    .venv/bin/python tools/bench_history.py [--turns 1000000] [--commits 3000] [--json]

Generates the recall benchmark's Claude Code transcripts (tools/bench_recall.py: sessions of 200
turns, a shell command or a file edit every fourth turn, one command in eight failing), run in a
real git repository holding --commits commits spread over the corpus's year; ingests them; then
times each command as a person runs it (with the incremental sync that precedes it, a no-op
here), five runs each, and prints medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
RUNS = 5

from bench_recall import TURNS_PER_SESSION, generate, isolate, show  # noqa: E402 - tools/ is on the path above


def make_repo(path: Path, commits: int) -> None:
    """A repository whose commits are spread evenly over 2025 (the corpus's dates)."""
    import pygit2

    repo = pygit2.init_repository(str(path), initial_head="main")
    start = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    step = 365 * 86400 / max(commits, 1)
    parents: list[pygit2.Oid] = []
    for i in range(commits):
        blob = repo.create_blob(f"change {i}\n".encode())
        builder = repo.TreeBuilder()
        builder.insert("file.txt", blob, pygit2.enums.FileMode.BLOB)
        tree = builder.write()
        who = pygit2.Signature("Bench", "bench@example.invalid", int(start + i * step), 0)
        oid = repo.create_commit("refs/heads/main", who, who, f"commit {i}", tree, parents)
        parents = [oid]


def median_ms(fn: Callable[[], object]) -> float:
    runs = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(runs), 1)


def corpus_day(index: int) -> date:
    """The date bench_recall.generate gives the sessions of day `index`."""
    return date(2025, 1 + index // 28 % 12, 1 + index % 28)


def read_days(first: date, last: date) -> int:
    """The days' reading alone (no sync before it): transcripts.db and the repository."""
    from brain.commands.day import _Reader
    from brain.recall import activity, past, store

    conn = store.connect()
    try:
        reader = _Reader(conn, ("claude",), True, past.utc_bounds(first, last))
        return sum(reader.day(d, "").turns for d in activity.days(first, last))
    finally:
        conn.close()


def noop_sync() -> None:
    from brain.recall import store

    conn = store.connect()
    try:
        store.sync(conn, ["claude"])
    finally:
        conn.close()


def lessons_in(first: date, last: date) -> int:
    """`brain lessons` over these days: its sync, then both kinds of moment (the command itself
    reads from --since to now; the corpus's weeks are in the past)."""
    from brain.recall import lessons, past, store

    conn = store.connect()
    try:
        store.sync(conn, ["claude"])
        window = past.Window(*past.utc_bounds(first, last), agents=("claude",))
        return len(lessons.corrections_in(conn, window) + lessons.retries_in(conn, window))
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brain-bench-history-") as tmp:
        base = Path(tmp)
        isolate(base)
        os.environ["TZ"] = "UTC"  # the corpus's days are UTC days
        time.tzset()

        repo = base / "proj"
        t0 = time.perf_counter()
        make_repo(repo, args.commits)
        size, _ = generate(base / "claude", args.turns, cwd=str(repo))
        gen_s = time.perf_counter() - t0

        from brain.commands import day as daymod
        from brain.commands import howto as howtomod
        from brain.recall import store

        store.set_enabled("claude", True)
        conn = store.connect()
        t0 = time.perf_counter()
        report = store.sync(conn, ["claude"])
        ingest_s = time.perf_counter() - t0
        calls = conn.execute("SELECT count(*) FROM calls").fetchone()[0]
        conn.close()
        # Days of the corpus (a session a day, through 336 days of 2025 over and over: at 1M
        # turns, about 15 sessions and 3,000 turns a day): one mid-year, whose commits are
        # reached by walking past 2,000 newer ones, and the last, as `brain day` is mostly run.
        days = min(args.turns // TURNS_PER_SESSION, 336)
        one, last = corpus_day(min(72, days - 1)), corpus_day(days - 1)
        week = (one - timedelta(days=6), one)
        result = {
            "turns": report.turns,
            "calls": calls,
            "commits": args.commits,
            "mb": round(size / 1e6, 1),
            "generate_s": round(gen_s, 1),
            "ingest_s": round(ingest_s, 1),
            "ingest_mb_s": round(size / 1e6 / ingest_s, 1),
            "day_ms": median_ms(lambda: daymod.activity_in(one, one)),
            "day_no_git_ms": median_ms(lambda: daymod.activity_in(one, one, git=False)),
            "week_ms": median_ms(lambda: daymod.activity_in(*week)),
            "week_no_git_ms": median_ms(lambda: daymod.activity_in(*week, git=False)),
            "week_query_ms": median_ms(lambda: read_days(*week)),
            "noop_sync_ms": median_ms(noop_sync),
            "last_day_ms": median_ms(lambda: daymod.activity_in(last, last)),
            "last_week_ms": median_ms(lambda: daymod.activity_in(last - timedelta(days=6), last)),
            "lessons_week_ms": median_ms(lambda: lessons_in(*week)),
            "howto_ms": median_ms(lambda: howtomod.howto("webhook timeout retry")),
        }
        sample = daymod.activity_in(*week).week
        result["week_sessions"] = sample.sessions
        result["week_turns"] = sample.turns
        result["week_commits"] = sample.commits
    show(result, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
