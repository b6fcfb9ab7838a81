#!/usr/bin/env python3
"""Benchmark `brain recall`: ingest speed (MB/s of Claude Code JSONL) and query latency.

    .venv/bin/python tools/bench_recall.py [--turns 1000000] [--json]

Generates Claude Code transcripts in a temp dir (sessions of 200 turns: prompts, answers, tool
calls with bulky results, an ai-title), ingests them with the code path of `brain recall`, then
times queries over the whole corpus. Prints medians.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TURNS_PER_SESSION = 200
QUERIES = [
    "webhook timeout retry",
    "why does the migration fail on postgres",
    "flaky snapshot test fonts",
    "rename ledger table",
    "cache invalidation bug in the session store",
    "deploy rollback kubernetes",
    "zyxwvut",
    "the",
]


def vocabulary(rng: random.Random) -> list[str]:
    base = (
        "webhook timeout retry migration postgres snapshot test fonts ledger table cache session "
        "store deploy rollback kubernetes lock inventory checkout payment invoice refactor parser "
        "token budget index search vault bullet hook commit branch merge rebase error stack trace "
        "config yaml json schema sqlite query latency memory thread async await queue worker"
    ).split()
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "pe", "zu", "do", "an", "el", "or"]
    made = {"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(30000)}
    return base + sorted(made)


def sentence(rng: random.Random, vocab: list[str], weights: list[float], n: int) -> str:
    """Words drawn by Zipf's law (rank r has weight 1/r), as content words are in prose."""
    return " ".join(rng.choices(vocab, cum_weights=weights, k=n))


COMMANDS = ["pytest -x tests", "npm test", "make build", "git push", "cargo build --release"]


def generate(
    root: Path, turns: int, seed: int = 7, cwd: str = "/home/dev/proj"
) -> tuple[int, list[str]]:
    """Write the transcripts; return their size and the vocabulary, most frequent word first.
    Every fourth turn runs a shell command (one in eight fails) or edits a file, whose result
    is bulky."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible corpus, not a secret
    vocab = vocabulary(rng)
    rng.shuffle(vocab)  # the bench's topic words land anywhere on the frequency scale
    weights = list(itertools.accumulate(1 / (r + 1) for r in range(len(vocab))))
    folder = root / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True)
    made = 0
    total = 0
    while made < turns:
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines = []
        for i in range(min(TURNS_PER_SESSION, turns - made)):
            role = "user" if i % 2 == 0 else "assistant"
            text = sentence(rng, vocab, weights, rng.randint(8, 60))
            # In order within a session, as an agent writes them: day per session, a minute a turn.
            day = made // TURNS_PER_SESSION
            date = f"2025-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}"
            ts = f"{date}T{i // 60:02d}:{i % 60:02d}:00.000Z"
            content = text if role == "user" else [{"type": "text", "text": text}]
            rec: dict[str, object] = {
                "parentUuid": None,
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": sid,
                "version": "2.0.30",
                "type": role,
                "message": {"role": role, "content": content},
                "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                "timestamp": ts,
            }
            lines.append(json.dumps(rec))
            if role == "assistant" and i % 4 == 1:  # a tool call and its bulky result
                call = {**rec, "uuid": str(uuid.UUID(int=rng.getrandbits(128)))}
                tid = f"toolu_{rng.getrandbits(64):016x}"
                if i % 8 == 1:
                    tool = {"name": "Bash", "input": {"command": rng.choice(COMMANDS)}}
                else:
                    tool = {"name": "Edit", "input": {"file_path": f"{cwd}/src/m{i % 40}.py"}}
                call["message"] = {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tid, **tool}],
                }
                failed = rng.random() < 0.125
                out = {**rec, "type": "user", "uuid": str(uuid.UUID(int=rng.getrandbits(128)))}
                out["message"] = {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tid,
                            "content": ("Exit code 1\n" if failed else "") + text * 8,
                            "is_error": failed,
                        },
                    ],
                }
                lines += [json.dumps(call), json.dumps(out)]
            made += 1
            if i == 1:
                lines.append(
                    json.dumps({"type": "ai-title", "aiTitle": text[:40], "sessionId": sid})
                )
        data = ("\n".join(lines) + "\n").encode()
        (folder / f"{sid}.jsonl").write_bytes(data)
        total += len(data)
    return total, vocab


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brain-bench-recall-") as tmp:
        base = Path(tmp)
        isolate(base)
        t0 = time.perf_counter()
        size, vocab = generate(base / "claude", args.turns)
        gen_s = time.perf_counter() - t0

        from brain.recall import search, store

        conn = store.connect()
        t0 = time.perf_counter()
        report = store.sync(conn, ["claude"])
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = store.sync(conn, ["claude"])
        noop_ms = (time.perf_counter() - t0) * 1000
        assert again.read == 0
        timings: dict[str, float] = {}
        # The worst case: words in many turns (by Zipf's law the first is in about a third).
        common = [vocab[0], f"{vocab[1]} {vocab[4]}", f"{vocab[9]} {vocab[30]} {vocab[100]}"]
        timings_common: dict[str, float] = {}
        for q in QUERIES + common:
            runs = []
            for _ in range(5):
                t0 = time.perf_counter()
                words = search.terms(q)
                search.hits(conn, words, search.ranked(conn, words, search.Filters(), 10))
                runs.append((time.perf_counter() - t0) * 1000)
            (timings_common if q in common else timings)[q] = round(statistics.median(runs), 1)
        result = {
            "turns": report.turns,
            "mb": round(size / 1e6, 1),
            "generate_s": round(gen_s, 1),
            "ingest_s": round(ingest_s, 1),
            "ingest_mb_s": round(size / 1e6 / ingest_s, 1),
            "noop_sync_ms": round(noop_ms, 1),
            "query_ms_median": round(statistics.median(timings.values()), 1),
            "query_ms": timings,
            "common_words_ms_median": round(statistics.median(timings_common.values()), 1),
            "common_words_ms": timings_common,
            "db_mb": round(  # with its write-ahead log, not yet checkpointed into it
                sum(p.stat().st_size for p in store.db_path().parent.glob("transcripts.db*")) / 1e6,
                1,
            ),
        }
    show(result, as_json=args.json)
    return 0


def isolate(base: Path) -> None:
    """brain's state and config dirs, and Claude Code's, in a temp dir."""
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = str(base / var.lower())
    os.environ["CLAUDE_CONFIG_DIR"] = str(base / "claude")


def show(result: dict[str, object], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value}")


if __name__ == "__main__":
    raise SystemExit(main())
