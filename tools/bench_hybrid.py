#!/usr/bin/env python3
"""Hybrid find speed: fresh-process `brain find` with the real ONNX model, with and without the
warm worker, and the embedding throughput of a full reindex.

    .venv/bin/python tools/bench_hybrid.py [--reps 11] [--json]

Every figure is a median, also given as a ratio to `python3 -c pass` timed in the same run.
Targets (issue 3): hybrid find with a warm worker <= 8x the floor; the first call <= 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "why are git hooks skipped when committing from python",
    "people paid double when the card processor was sluggish",
    "k8s upgrade",
    "which computer do I use for my job",
]


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def brain(*args: str) -> list[str]:
    return [sys.executable, "-m", "brain", *args]


def stop_workers(run: Path) -> None:
    """Stop this bench's own workers, by the pid each recorded beside its socket (never by name:
    that would stop every user's workers)."""
    for record in run.glob("worker-*.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            os.kill(int(json.loads(record.read_bytes())["pid"]), signal.SIGTERM)
    deadline = time.monotonic() + 10  # until each has removed its socket: stopped, not asked to
    while list(run.glob("worker-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.05)


def private_env(tmp: Path) -> dict[str, str]:
    """The environment of a bench's brain: every folder (the worker's run folder too) in `tmp`,
    the ONNX model, no update check, no caller or setting of the user's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_", "CLAUDE"))}
    env.update(
        HOME=str(tmp / "home"),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_RUNTIME_DIR=str(tmp / "run"),
        BRAIN_EMBED="onnx",
        BRAIN_NO_UPDATE="1",
        BRAIN_WORKER_IDLE="600",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="brain-bench-hybrid-"))
    env = private_env(tmp)
    vault = tmp / "vault"
    shutil.copytree(ROOT / "testdata" / "vault", vault)
    try:
        reindex = subprocess.run(
            brain("reindex", "--full", "--vault", str(vault), "--json"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        doc = json.loads(reindex.stdout)
        # Throughput from a second run that has to embed everything: a new model id.
        conn_env = {**env, "BRAIN_EMBED": "onnx"}
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sqlite3,sys; from brain import config; from pathlib import Path;"
                "c=sqlite3.connect(config.index_path(Path(sys.argv[1])));"
                'c.execute("DELETE FROM vectors"); c.commit()',
                str(vault),
            ],
            env=conn_env,
            check=True,
        )
        start = time.perf_counter()
        again = subprocess.run(
            brain("reindex", "--vault", str(vault), "--json"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        spent = time.perf_counter() - start
        embedded = json.loads(again.stdout)["embedded"]

        floor = [timed([sys.executable, "-c", "pass"], env) for _ in range(args.reps)]
        stop_workers(tmp / "run" / "brain")
        first = timed(brain("find", "--vault", str(vault), QUERIES[0]), env)  # spawns the worker
        deadline = time.monotonic() + 60
        warm: list[float] = []
        while time.monotonic() < deadline:  # wait until a find is answered by the worker
            t = timed(brain("find", "--vault", str(vault), QUERIES[1]), env)
            if t < first / 2:
                break
            time.sleep(0.5)
        for i in range(args.reps):
            warm.append(timed(brain("find", "--vault", str(vault), QUERIES[i % len(QUERIES)]), env))
            floor.append(timed([sys.executable, "-c", "pass"], env))
        inline_env = {**env, "BRAIN_WORKER": "0"}
        inline = [
            timed(brain("find", "--vault", str(vault), QUERIES[i % len(QUERIES)]), inline_env)
            for i in range(max(5, args.reps // 2))
        ]
        keyword_env = {**env, "BRAIN_EMBED": "none"}
        keyword = [
            timed(brain("find", "--vault", str(vault), QUERIES[i % len(QUERIES)]), keyword_env)
            for i in range(args.reps)
        ]
        stop_workers(tmp / "run" / "brain")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    base = statistics.median(floor)
    figures = {
        "floor_ms": round(base * 1000, 1),
        "first_call_ms": round(first * 1000, 1),
        "hybrid_warm_worker_ms": round(statistics.median(warm) * 1000, 1),
        "hybrid_in_process_ms": round(statistics.median(inline) * 1000, 1),
        "keyword_ms": round(statistics.median(keyword) * 1000, 1),
        "embed_units_per_s": round(embedded / spent, 1),
        "units": doc["units"],
    }
    ratios = {
        k.replace("_ms", "_x"): round(v / figures["floor_ms"], 2)
        for k, v in figures.items()
        if k.endswith("_ms") and k != "floor_ms"
    }
    if args.json:
        print(json.dumps({**figures, **ratios}))
        return 0
    print(f"hybrid find on the fixture vault ({doc['units']} units), medians of {args.reps}")
    print(f"  python -c pass (floor)       {figures['floor_ms']:8.1f} ms")
    for key, label in (
        ("first_call_ms", "first call (starts worker)"),
        ("hybrid_warm_worker_ms", "hybrid, warm worker"),
        ("hybrid_in_process_ms", "hybrid, in-process"),
        ("keyword_ms", "keyword only"),
    ):
        print(f"  {label:28s} {figures[key]:8.1f} ms  {ratios[key.replace('_ms', '_x')]:5.2f}x")
    print(
        f"  embedding throughput         {figures['embed_units_per_s']:8.1f} units/s "
        f"({embedded} units in {spent:.1f} s, process start included)"
    )
    print("  targets: warm hybrid <= 8x floor, first call <= 1000 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
