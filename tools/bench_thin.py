#!/usr/bin/env python3
"""The thin client's speed: fresh-process `brain find` and `brain pack` answered by a warm worker,
the cold first find with the model, and the same commands with no worker (BRAIN_WORKER=0).

    .venv/bin/python tools/bench_thin.py [--reps 11] [--cold 5] [--runs 1] [--quick] [--check]
                                         [--json]

Each figure is the median of --reps fresh processes (the cold first find: of --cold, each from no
worker running), also given as a ratio to `python -c pass` of the same interpreter, timed in the
same run (floor runs interleaved with the others). The commands
run from a throwaway venv that sees this checkout and its dependencies the way a wheel install
does (no editable-install finder, which costs every start ~20 ms), through bin/brain (the script
brain installs on POSIX), pip's script for an entry point (which imports `re` first), and
`python -P -m brain` (what the git and agent hooks run). A find cycles through four queries (the
worker keeps their vectors after the first), and once through queries never asked before.
The bench starts its workers in a private XDG_RUNTIME_DIR and stops each by the pid it recorded.
Targets (issue 16): warm find (keyword, hybrid), cached pack and warm prime <= 3x the floor; cold
first find with the model <= 1 s; no change to any result. Issue 29 asks <= 2x for the four
start-up figures, keyword find, warm hybrid find, cached pack and warm prime; keyword find and
cached pack are there, warm prime at 1.9-2.0x (its watchdog without `threading`, the hook's
event sent with the request) and warm hybrid find not yet (1.9-2.1x), so those two ceilings
(START_MAX) stay where they can hold: `--check` exits 1 when a figure is above its ceiling or an
answer differs. A shared machine's load
inflates every figure, the floor's too, but not evenly: `--runs N` times everything N times and
keeps each figure's best median (the run with the least interference), and `--quick` times only
those four (no cold finds, no figures without a worker).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_hybrid import private_env, stop_workers  # noqa: E402  (tools/, beside this script)

from brain import thin  # noqa: E402  (the checkout's, for FORWARD)

QUERIES = [
    "why are git hooks skipped when committing from python",
    "people paid double when the card processor was sluggish",
    "k8s upgrade",
    "which computer do I use for my job",
]
# pip's console-script template (pip/_internal/operations/install/wheel.py via distlib), what an
# entry point would install; bin/brain is what brain installs on POSIX.
PIP_SHIM = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from brain.thin import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""
# Queries never asked before, for the figure the worker's kept query vectors cannot help.
NEW_QUERIES = [json.loads(line)["query"] for line in (ROOT / "testdata" / "golden.jsonl").open()]
# The start-up figures of issue 29 and their ceilings, as multiples of `python -c pass` (the
# issue's goal is 2.0 for all four; warm hybrid find is not there yet, warm prime at 1.9-2.0x
# has too little margin under load for 2.0)
START_MAX = {
    "warm_find_keyword": 2.0,
    "warm_find_hybrid": 2.5,
    "cached_pack": 2.0,
    "warm_prime": 2.5,
}
# When the load average is above the machine's cores (CI's own test workers beside this bench:
# load 4 on 2 cores measured keyword find at 2.16x that is 1.63x quiet), the ceilings widen by
# this much: a figure there says how busy the machine was more than what brain costs.
LOADED = 1.25


def ceilings(load: float) -> dict[str, float]:
    """START_MAX, widened by LOADED on a machine busier than its cores."""
    factor = LOADED if load > (os.cpu_count() or 1) else 1.0
    return {k: round(most * factor, 3) for k, most in START_MAX.items()}


def timed(cmd: list[str], env: dict[str, str], stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd,
        env=env,
        input=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start


def output(cmd: list[str], env: dict[str, str], stdin: bytes | None = None) -> tuple[int, bytes]:
    proc = subprocess.run(cmd, env=env, input=stdin, capture_output=True, check=False)
    return proc.returncode, proc.stdout


def venv(tmp: Path) -> Path:
    """A venv whose site-packages reaches this checkout and the dev venv's packages by a .pth."""
    target = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    python = target / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]
    Path(site, "brain-bench.pth").write_text(f"{ROOT}\n{deps}\n", encoding="utf-8")
    script = target / "bin" / "brain"  # as pip installs bin/brain: `#!python` made absolute
    text = (ROOT / "bin" / "brain").read_text(encoding="utf-8")
    script.write_text(text.replace("#!python", f"#!{python}", 1), encoding="utf-8")
    shim = target / "bin" / "brain-pip-shim"
    shim.write_text(PIP_SHIM.format(python=python), encoding="utf-8")
    for path in (script, shim):
        path.chmod(0o755)
    return target


def stop_quietly(run: Path) -> None:
    """stop_workers, then until each has exited: a worker still tearing itself down would take
    CPU from the cold find timed next."""
    pids = []
    for record in run.glob("worker-*.json"):
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            pids.append(int(json.loads(record.read_bytes())["pid"]))
    stop_workers(run)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def wait_served(cmd: list[str], env: dict[str, str], run: Path) -> None:
    """Until a worker listens and answers without a keyword-only note (the model is warm)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if list(run.glob("worker-*.sock")):
            proc = subprocess.run(cmd, env=env, capture_output=True, check=False)
            if b"keyword results for now" not in proc.stderr:
                return
        time.sleep(0.2)
    raise SystemExit("no worker answered within 120 s")


def main() -> int:  # noqa: PLR0915 - one bench, read top to bottom
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=11)
    parser.add_argument("--cold", type=int, default=5, help="cold first finds, each from no worker")
    parser.add_argument("--runs", type=int, default=1, help="time each figure N times: the best")
    parser.add_argument("--quick", action="store_true", help="only the four start-up figures")
    parser.add_argument("--check", action="store_true", help="exit 1 above START_MAX")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    reps = max(9, args.reps)
    cold_reps = max(1, args.cold)
    runs = max(1, args.runs)

    tmp = Path(tempfile.mkdtemp(prefix="brain-bench-thin-"))
    env = private_env(tmp)
    env.pop("PYTHONPATH", None)
    (tmp / "run").mkdir(mode=0o700)
    run_dir = tmp / "run" / "brain"
    vault = tmp / "vault"
    shutil.copytree(ROOT / "testdata" / "vault", vault)
    repo = tmp / "payments"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    event = json.dumps(
        {"hook_event_name": "SessionStart", "session_id": "bench", "cwd": str(repo)}
    ).encode()
    v = str(vault)
    figures: dict[str, float] = {}
    ratios: dict[str, float] = {}  # each figure over the floor timed beside it, its best run
    floor: list[float] = []
    cold: list[float] = []
    checks: list[str] = []
    try:
        target = venv(tmp)
        python = str(target / "bin" / "python")
        script = [str(target / "bin" / "brain")]
        shim = [str(target / "bin" / "brain-pip-shim")]
        module = [python, "-P", "-m", "brain"]
        keyword = {**env, "BRAIN_EMBED": "none"}
        alone = {**env, "BRAIN_WORKER": "0"}
        subprocess.run(
            [*module, "reindex", "--full", "--vault", v, "--json"],
            env=alone,
            capture_output=True,
            check=True,
        )

        def sample(
            name: str,
            cmd: list[str],
            e: dict[str, str],
            stdin: bytes | None = None,
            queries: list[str] = QUERIES,
        ) -> None:
            """`cmd` --reps times (a find: with the next query each time), the floor between;
            --runs times over, keeping the run whose median is the least multiple of its floor."""
            for _ in range(runs):
                times, beside = [], []
                for i in range(reps):
                    c = [*cmd, queries[i % len(queries)]] if "find" in cmd else cmd
                    times.append(timed(c, e, stdin))
                    beside.append(timed([python, "-c", "pass"], env))
                floor.extend(beside)
                ratio = statistics.median(times) / statistics.median(beside)
                if ratio < ratios.get(name, float("inf")):
                    figures[name], ratios[name] = statistics.median(times), ratio

        def same(name: str, cmd: list[str], e: dict[str, str], stdin: bytes | None = None) -> None:
            """The worker's answer is the in-process one (the results do not change). In-process
            here is brain.cli's own run, which for prime asks the running worker for the vector
            half (with BRAIN_WORKER=0 prime answers by keywords alone, by design)."""
            # prime's deadline far off: a loaded machine made the in-process run (brain.cli and
            # all its imports) miss the 1 s one and answer nothing, which is no result's change
            e = {**e, "BRAIN_PRIME_DEADLINE": "30"}
            served = output(cmd, e, stdin)
            run_here = [python, "-c", "import sys; from brain import cli; cli.main(sys.argv[1:])"]
            mine = output([*run_here, *cmd[1:]], e, stdin)
            checks.append(f"{name}: {'same' if served == mine else 'DIFFERENT'}")

        find = ["find", "--vault", v]
        # cold: no worker, the index embedded; the first find loads the model (and starts one
        # once it has answered). --cold times, each from no worker, the worker warm in between.
        for i in range(0 if args.quick else cold_reps):
            stop_quietly(run_dir)
            cold.append(timed([*script, *find, QUERIES[i % len(QUERIES)]], env))
            wait_served([*script, *find, QUERIES[1]], env, run_dir)
        if cold:
            figures["cold_first_find_hybrid"] = statistics.median(cold)
        stop_quietly(run_dir)
        cold_answer = output([*script, *find, QUERIES[0]], env)
        wait_served([*script, *find, QUERIES[1]], env, run_dir)
        warm_answer = output([*script, *find, QUERIES[0]], env)
        checks.append(f"cold hybrid find: {'same' if cold_answer == warm_answer else 'DIFFERENT'}")

        sample("warm_find_hybrid", [*script, *find], env)
        if not args.quick:
            sample("warm_find_hybrid_new_queries", [*script, *find], env, queries=NEW_QUERIES)
            sample("warm_find_hybrid_pip_shim", [*shim, *find], env)
            sample("warm_find_hybrid_python_m", [*module, *find], env)
        sample("cached_pack", [*script, "pack", "payments", "--vault", v], env)
        if not args.quick:
            sample("cached_pack_hook", [*script, "pack", "--vault", v], env, event)
        same("hybrid find", [*script, *find, QUERIES[1]], env)
        same("pack", [*script, "pack", "payments", "--vault", v], env)
        same("pack hook", [*script, "pack", "--vault", v], env, event)
        if "prime" in thin.FORWARD:
            prompt = json.dumps(
                {"hook_event_name": "UserPromptSubmit", "prompt": QUERIES[1], "cwd": str(repo)}
            ).encode()
            sample("warm_prime", [*script, "prime", "--vault", v], env, prompt)
            same("prime", [*script, "prime", "--vault", v], env, prompt)

        subprocess.run([*script, *find, "warm"], env=keyword, capture_output=True, check=False)
        wait_served([*script, *find, QUERIES[1]], keyword, run_dir)
        sample("warm_find_keyword", [*script, *find], keyword)
        same("keyword find", [*script, *find, QUERIES[0]], keyword)
        if args.quick:
            return report(args, figures, ratios, floor, cold, checks, reps)
        sample("warm_find_keyword_python_m", [*module, *find], keyword)
        stop_workers(run_dir)

        sample("no_worker_find_keyword", [*script, *find], {**keyword, "BRAIN_WORKER": "0"})
        sample("no_worker_find_hybrid", [*script, *find], alone)
        sample("no_worker_cached_pack", [*script, "pack", "payments", "--vault", v], alone)
        if "prime" in thin.FORWARD:
            sample("no_worker_prime", [*script, "prime", "--vault", v], alone, prompt)
        sample("import_re", [python, "-c", "import re"], env)
    finally:
        stop_workers(run_dir)
        shutil.rmtree(tmp, ignore_errors=True)
    return report(args, figures, ratios, floor, cold, checks, reps)


def report(
    args: argparse.Namespace,
    figures: dict[str, float],
    ratios: dict[str, float],
    floor: list[float],
    cold: list[float],
    checks: list[str],
    reps: int,
) -> int:
    """Print the figures; with --check, 1 when a start-up figure is above its START_MAX or an
    answer differs."""
    base = statistics.median(floor)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
    most = ceilings(load)
    over = [k for k, bar in most.items() if ratios.get(k, 0.0) > bar]
    failed = args.check and (over or any("DIFFERENT" in c for c in checks))
    if args.json:
        doc = {"floor_ms": round(base * 1000, 1), "load": round(load, 2), "checks": checks}
        doc["ceilings"] = most
        doc["cold_runs_ms"] = [round(t * 1000, 1) for t in cold]
        for key, value in figures.items():
            doc[f"{key}_ms"] = round(value * 1000, 1)
            doc[f"{key}_x"] = round(ratios.get(key, value / base), 2)
        print(json.dumps(doc))
        return 1 if failed else 0
    runs = f", the best of {args.runs} runs" if args.runs > 1 else ""
    print(f"fresh processes on the fixture vault, medians of {reps}{runs}; load average {load:.2f}")
    print(f"  python -c pass (floor)            {base * 1000:8.1f} ms")
    for key, value in figures.items():
        print(f"  {key:33s} {value * 1000:8.1f} ms  {ratios.get(key, value / base):5.2f}x")
    if cold:
        print(f"  cold first finds: {', '.join(f'{t * 1000:.0f}' for t in cold)} ms")
    print("  " + "; ".join(checks))
    print("  targets: warm find and cached pack <= 3x the floor, cold first find <= 1000 ms;")
    bars = ", ".join(f"{k} <= {bar:g}x" for k, bar in most.items())
    busy = f" (widened {LOADED:g}x: load above {os.cpu_count()} cores)" if most != START_MAX else ""
    print(f"  {bars}{busy} (issue 29: all 2x)" + (f"; above: {', '.join(over)}" if over else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
