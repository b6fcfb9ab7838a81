#!/usr/bin/env python3
"""Benchmark `brain pack`: a cached pack in a fresh process, and an uncached pack on a 10k vault.

    .venv/bin/python tools/bench_pack.py [--reps N] [--json]

Every figure is the wall time of `[sys.executable, "-m", "brain", "pack", ...]` in a fresh process
(start-up and imports included), as a SessionStart hook pays it. Medians, each beside `python -c
pass` timed in the same run, interleaved with the samples, as a ratio. Targets: cached pack <= 5x
the floor; uncached pack on the generated 10,000-bullet vault <= 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # tools/ is not a package

from genvault import generate  # noqa: E402

_SCRUB = ("BRAIN_", "CLAUDE", "XDG_", "CODEX_", "GEMINI_CLI", "CURSOR_AGENT")
_SCRUB_PYTHON = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONPROFILEIMPORTTIME")

CACHED_MAX_RATIO = 5.0
UNCACHED_MAX_S = 1.0


def isolated_env(home: Path, pycache: Path) -> dict[str, str]:
    """Nothing of the user's brain, HOME or XDG dirs (as tools/bench does)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(_SCRUB) and k not in _SCRUB_PYTHON
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local/state"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        BRAIN_EMBED="none",
        BRAIN_NO_UPDATE="1",
        BRAIN_WORKER="0",  # pack in its own process; tools/bench_thin.py times it with a worker
        PYTHONPYCACHEPREFIX=str(pycache),
    )
    return env


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(
            f"bench_pack: {' '.join(argv[1:])} exited {proc.returncode}: {proc.stderr.strip()}"
        )
    return elapsed, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="brain-bench-pack-") as tmp:
        home = Path(tmp) / "home"
        env = isolated_env(home, Path(tmp) / "pycache")
        gen = generate(Path(tmp) / "vault", bullets=10_000, notes=500, seed=1)
        project = sorted(p.name for p in (gen.root / "projects").iterdir())[0]
        fixture = ROOT / "testdata" / "vault"
        cached = [py, "-m", "brain", "pack", "--vault", str(fixture), "payments"]
        big = [py, "-m", "brain", "pack", "--vault", str(gen.root), "--json", project]
        timed(cached, env, ROOT)  # builds the fixture's index and the cache, compiles bytecode
        timed([*big, "--fresh"], env, ROOT)  # builds the big vault's index
        floor: list[float] = []
        warm: list[float] = []
        cold: list[float] = []
        cold_inproc: list[int] = []
        for _ in range(args.reps):
            floor.append(timed([py, "-c", "pass"], env, ROOT)[0])
            elapsed, _ = timed(cached, env, ROOT)
            warm.append(elapsed)
            floor.append(timed([py, "-c", "pass"], env, ROOT)[0])
            elapsed, out = timed([*big, "--fresh"], env, ROOT)
            doc = json.loads(out)
            if doc["cached"] or not doc["text"]:
                sys.exit(f"bench_pack: the 10k pack was cached or empty: {doc}")
            cold.append(elapsed)
            cold_inproc.append(len(doc["text"].encode()))
        f, w, c = (statistics.median(x) for x in (floor, warm, cold))
        result = {
            "floor_s": round(f, 4),
            "cached_s": round(w, 4),
            "cached_ratio": round(w / f, 2),
            "cached_target": f"<= {CACHED_MAX_RATIO:g}x",
            "cached_ok": w / f <= CACHED_MAX_RATIO,
            "uncached_10k_s": round(c, 4),
            "uncached_10k_ratio": round(c / f, 2),
            "uncached_target": f"<= {UNCACHED_MAX_S:g} s",
            "uncached_ok": c <= UNCACHED_MAX_S,
            "pack_bytes_10k": statistics.median(cold_inproc),
            "reps": args.reps,
            "project_10k": project,
        }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"python -c pass (floor)       {f * 1000:8.1f} ms")
        print(
            f"pack, cached (fixture)       {w * 1000:8.1f} ms  {w / f:5.2f}x floor  "
            f"target {result['cached_target']}  {'ok' if result['cached_ok'] else 'MISSED'}"
        )
        print(
            f"pack --fresh (10k bullets)   {c * 1000:8.1f} ms  {c / f:5.2f}x floor  "
            f"target {result['uncached_target']}  {'ok' if result['uncached_ok'] else 'MISSED'}"
        )
    return 0 if result["cached_ok"] and result["uncached_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
