#!/usr/bin/env python3
"""What a long query costs: `brain find`, `brain recall` and `brain prime` with a pasted wall of
text (a Python traceback, a log, a Markdown file, distinct random words) of 10 to 15,000 words.

    .venv/bin/python tools/bench_query.py [--reps 5] [--sizes 10,100,1000,15000] [--kinds ...]
        [--commands find,recall,prime] [--hybrid] [--json]

Each figure is the median of --reps fresh processes (`python -P -m brain`, no worker:
BRAIN_WORKER=0, keyword search: BRAIN_EMBED=none) on the fixture vault, recall on the fixture
transcripts (testdata/transcripts/claude), prime with the hook's JSON on stdin. Beside each: its
ratio to the same command's 10-word query of the same text, and to `python -c pass`, both timed
in the same run (floor runs interleaved with the others). `--hybrid` times `find` answered by a
warm worker with the ONNX model too (the bench stops its worker by the pid it recorded). A
query's words are given as arguments, one line each (an argument holds 128 KB at most).
Target (issue: bounded cost of a long query): 15,000 words within 2x of 10 words.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_hybrid import private_env, stop_workers  # noqa: E402  (tools/, beside this script)

KINDS = ("traceback", "log", "markdown", "random")
TRACEBACK_MODULES = (
    "argparse json.decoder email.message http.client logging subprocess asyncio.base_events"
    " sqlite3 urllib.request pathlib typing dataclasses inspect tarfile zipfile configparser"
    " unittest.case tokenize ast csv shutil tempfile socket pickle difflib textwrap functools"
).split()


def traceback_text() -> str:
    """A long Python traceback: a frame (file, line, function, source line) per function of some
    standard modules, ending in the error."""
    lines = ["Traceback (most recent call last):"]
    for name in TRACEBACK_MODULES:
        module = importlib.import_module(name)
        source = inspect.getsource(module).splitlines()
        for i, line in enumerate(source[:-2]):
            m = re.match(r"\s*def (\w+)", line)
            if m:
                body = source[i + 2].strip() or source[i + 1].strip()
                lines.append(f'  File "{module.__file__}", line {i + 3}, in {m.group(1)}')
                lines.append(f"    {body}")
    lines.append("sqlite3.OperationalError: database is locked")
    return "\n".join(lines)


def log_text() -> str:
    """A service's log: timestamps, levels, loggers, ids, paths and messages (seeded)."""
    rng = random.Random(11)  # noqa: S311 - a fixed text, not a secret
    loggers = "api.http worker.queue db.pool auth.session billing.invoice cache.redis".split()
    messages = [
        "request {id} GET /v1/accounts/{n}/invoices took {ms} ms status 200",
        "retrying job {id} attempt {n} after timeout connecting to 10.0.{n}.{ms}",
        "pool exhausted: {n} of {n} connections busy, waiting {ms} ms",
        "session {id} expired for user {n}; refreshing token",
        "cache miss for key invoice:{id} ({ms} bytes fetched)",
        "webhook delivery {id} failed: connection reset by peer",
        "slow query {ms} ms: SELECT * FROM ledger WHERE account_id = {n}",
    ]
    lines = []
    for k in range(3000):
        level = rng.choice(["INFO"] * 6 + ["WARN", "ERROR", "DEBUG"])
        text = rng.choice(messages).format(
            id=f"{rng.getrandbits(48):012x}", n=rng.randint(1, 999), ms=rng.randint(1, 9000)
        )
        stamp = (
            f"2026-11-{1 + k // 1000:02d}T{k // 60 % 24:02d}:{k % 60:02d}:{rng.randint(0, 59):02d}Z"
        )
        lines.append(f"{stamp} {level} {rng.choice(loggers)}: {text}")
    return "\n".join(lines)


def markdown_text() -> str:
    return (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")


def random_text() -> str:
    """Distinct words: the embedding tokenizer's whole words, shuffled (seeded)."""
    vocab = json.loads((ROOT / "brain" / "data" / "tokenizer.json").read_bytes())["model"]["vocab"]
    pool = sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) > 2)
    random.Random(7).shuffle(pool)  # noqa: S311 - a fixed text, not a secret
    return " ".join(pool)


TEXTS: dict[str, Callable[[], str]] = {
    "traceback": traceback_text,
    "log": log_text,
    "markdown": markdown_text,
    "random": random_text,
}


def first_words(text: str, n: int) -> str:
    """`text` (repeated when shorter) up to its n-th word, its lines kept."""
    out: list[str] = []
    count = 0
    while count < n:
        for line in text.splitlines():
            ws = line.split()[: n - count]
            out.append(" ".join(ws))
            count += len(ws)
            if count == n:
                break
    return "\n".join(out)


def timed(cmd: list[str], env: dict[str, str], stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return time.perf_counter() - start


def main() -> int:  # noqa: PLR0915 - one bench, read top to bottom
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--sizes", default="10,100,1000,15000")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--commands", default="find,recall,prime", help="which to time")
    parser.add_argument("--hybrid", action="store_true", help="find with a warm worker too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = args.kinds.split(",")
    commands = args.commands.split(",")

    tmp = Path(tempfile.mkdtemp(prefix="brain-bench-query-"))
    env = private_env(tmp)
    env["PYTHONPATH"] = str(ROOT)  # the checkout this bench is in, whatever pip installed
    (tmp / "run").mkdir(mode=0o700)
    run_dir = tmp / "run" / "brain"  # where the worker listens (brain.wire.run_dir)
    env.update(
        BRAIN_EMBED="none",
        BRAIN_WORKER="0",
        CLAUDE_CONFIG_DIR=str(ROOT / "testdata" / "transcripts" / "claude"),
    )
    vault = tmp / "vault"
    shutil.copytree(ROOT / "testdata" / "vault", vault)
    brain = [sys.executable, "-P", "-m", "brain"]
    floor: list[float] = []
    figures: dict[str, dict[str, dict[int, float]]] = {}
    try:
        for cmd in (["reindex", "--vault", str(vault)], ["recall", "--enable", "claude"]):
            subprocess.run([*brain, *cmd], env=env, capture_output=True, check=True)
        subprocess.run([*brain, "recall", "sync"], env=env, capture_output=True, check=False)
        hybrid = {**env, "BRAIN_EMBED": "onnx", "BRAIN_WORKER": "1"}
        if args.hybrid:
            from bench_thin import wait_served

            subprocess.run(
                [*brain, "reindex", "--full", "--vault", str(vault)],
                env={**hybrid, "BRAIN_WORKER": "0"},
                capture_output=True,
                check=True,
            )
            warm = [*brain, "find", "--vault", str(vault), "warm up"]
            subprocess.run(warm, env=hybrid, capture_output=True, check=False)  # starts a worker
            wait_served(warm, hybrid, run_dir)

        def sample(
            name: str,
            kind: str,
            n: int,
            cmd: list[str],
            e: dict[str, str],
            stdin: bytes | None = None,
            fresh: int = 0,
        ) -> None:
            """`cmd` --reps times, the floor between. With `fresh`, a word of its own each time
            at that place (the query's start: the vector half reads its first words only)."""
            times = []
            for _ in range(args.reps):
                c = [*cmd[:fresh], f"q{len(floor)}", *cmd[fresh:]] if fresh else cmd  # unique
                times.append(timed(c, e, stdin))
                floor.append(timed([sys.executable, "-c", "pass"], env))
            figures.setdefault(name, {}).setdefault(kind, {})[n] = statistics.median(times)

        for kind in kinds:
            whole = TEXTS[kind]()
            for n in sizes:
                text = first_words(whole, n)
                lines = [line for line in text.splitlines() if line.strip()]
                find = [*brain, "find", "--vault", str(vault)]
                if "find" in commands:
                    sample("find", kind, n, [*find, *lines], env)
                if "recall" in commands:
                    sample("recall", kind, n, [*brain, "recall", *lines], env)
                if "prime" in commands:
                    event = {"hook_event_name": "UserPromptSubmit", "prompt": text}
                    prime = [*brain, "prime", "--vault", str(vault)]
                    sample("prime", kind, n, prime, env, json.dumps(event).encode())
                if args.hybrid:  # a query of its own each time: the worker keeps their vectors
                    sample("find_hybrid", kind, n, [*find, *lines], hybrid, fresh=len(find))
    finally:
        stop_workers(run_dir)
        shutil.rmtree(tmp, ignore_errors=True)

    base = statistics.median(floor)
    if args.json:
        print(json.dumps({"floor": base, "figures": figures}, indent=2))
        return 0
    print(f"floor (python -c pass): {base * 1000:.0f} ms; load average {os.getloadavg()[0]:.1f}")
    for name, by_kind in figures.items():
        for kind, by_size in by_kind.items():
            first = by_size[min(by_size)]
            cells = [
                f"{n:>6} words {t * 1000:5.0f} ms {t / first:4.2f}x ({t / base:4.1f}x floor)"
                for n, t in by_size.items()
            ]
            print(f"{name:12} {kind:10} " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
