#!/usr/bin/env python3
"""Benchmark `brain tend` on a generated vault of 10,000 bullets and 500 notes.

    .venv/bin/python tools/bench_tend.py [--runs 3] [--bullets 10000] [--notes 500]

The generated vault is made a git repository (one commit), every tenth bullet is given claims
verify reads (a path that exists, one that does not, a command in a code span, a commit hash),
some handles are given twice, and the usage log gets 2,000 finds over 200 queries from 30
sessions. Each figure is the wall time of a fresh `brain` process (interpreter start-up and
imports included), median of `--runs`:

- `tend --dry-run`: the whole sweep (verify, learn with the vector half when a model is
  configured, doctor's findings), writing nothing;
- `tend --daily`: the hooks' quiet sweep (its stamp removed before each run), which must stay
  under 2 s: it stops early and says so in the state dir's logs/tend.log rather than overrun;

then what the sweep proposes on testdata/vault, and why each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # tools/ is not a package

from genvault import generate  # noqa: E402

SEP = " — "


def brain(env: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "brain", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    return time.perf_counter() - start, proc


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def plant_claims(vault: Path) -> int:
    """Give every tenth bullet claims, and every 500th a twin handle; returns bullets changed."""
    exists = vault / "AI" / "MEMORY.md"
    changed = 0
    for rel in ("AI/MEMORY.md", "AI/LEARNINGS.md", "AI/TUNINGS.md"):
        path = vault / rel
        out = []
        n = 0
        for raw in path.read_text(encoding="utf-8").split("\n"):
            line = raw
            if line.startswith("- **"):
                n += 1
                if n % 10 == 0:
                    head, sep, rest = line.partition(SEP)
                    if n % 100 == 0:  # every claim fails: a drop
                        claims = f"run `nosuchtool-{n} build` from {vault}/gone-{n}.txt; "
                    else:  # passes, with one that cannot be checked (another machine's path)
                        claims = (
                            f"run `git status` in {exists}, not /Users/bob/gone-{n}/run.sh, "
                            f"fixed in {n:07x}ab; "
                        )
                    line = f"{head}{sep}{claims}{rest}"
                    changed += 1
                if n % 500 == 0:
                    out.append(line)
                    line = line.replace(" — ", " — an older copy: ", 1)
            out.append(line)
        path.write_text("\n".join(out), encoding="utf-8")
    return changed


def fill_log(env: dict[str, str], vault: Path, handles: tuple[str, ...]) -> None:
    """2,000 logged finds over 200 queries from 30 sessions, written straight to usage.sqlite."""
    code = (
        "import sys, random\n"
        "from pathlib import Path\n"
        "from brain import usage\n"
        "vault = Path(sys.argv[1]); words = sys.argv[2:]\n"
        "rng = random.Random(7)\n"
        "queries = [' '.join(rng.sample(words, 2)) for _ in range(200)]\n"
        "conn = usage.connect()\n"
        "rows = []\n"
        "for i in range(2000):\n"
        "    rows.append((1e9 + i, 'find', 'claude-code', f's{rng.randrange(30)}',"
        " queries[min(int(rng.paretovariate(1.2)) - 1, 199)], 1, 100, usage.vault_key(vault)))\n"
        "import time\n"
        "rows = [(time.time() - 86400 + i,) + r[1:] for i, r in enumerate(rows)]\n"
        "conn.executemany('INSERT INTO events VALUES (?,?,?,?,?,?,?,?)', rows)\n"
        "conn.close()\n"
    )
    words = sorted({w for h in handles[:400] for w in h.split()})
    subprocess.run([sys.executable, "-c", code, str(vault), *words], env=env, check=True)


def daily_sweep(env: dict[str, str], vault: Path, work: Path, runs: int) -> str:
    """The daily sweep's wall time, its stamp removed before each run."""
    stamp_dir = work / "state" / "brain" / "tend"
    daily = []
    inbox = vault / "AI" / "INBOX.md"
    pristine = inbox.read_bytes()
    for _ in range(runs):
        for stamp in stamp_dir.glob("*.daily"):
            stamp.unlink()
        for seen in stamp_dir.glob("*.proposed"):
            seen.unlink()
        inbox.write_bytes(pristine)
        secs, proc = brain(env, "tend", "--daily", "--vault", str(vault))
        assert proc.returncode == 0, proc
        assert not proc.stdout, proc
        daily.append(secs)
    log = (work / "state" / "brain" / "logs" / "tend.log").read_text().strip().splitlines()
    shown = ", ".join(f"{s:.2f}" for s in daily)
    return (
        f"tend --daily: median {statistics.median(daily):.2f} s (runs {shown});"
        f" last log line: {log[-1].split(' ', 1)[1]}"
    )


def fixture(env: dict[str, str], work: Path) -> str:
    """What the sweep proposes on testdata/vault, and why each."""
    fixture = work / "fixture"
    shutil.copytree(ROOT / "testdata" / "vault", fixture)
    secs, proc = brain(env, "tend", "--dry-run", "--json", "--vault", str(fixture))
    fdoc = json.loads(proc.stdout)
    lines = [f"testdata/vault: {len(fdoc['proposed'])} items ({secs:.2f} s)"]
    lines += [f"  {p['op']}: {p['summary']}\n    why: {p['why']}" for p in fdoc["proposed"]]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bullets", type=int, default=10_000)
    ap.add_argument("--notes", type=int, default=500)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-tend-"))
    try:
        env = {
            **os.environ,
            "XDG_STATE_HOME": str(work / "state"),
            "XDG_CONFIG_HOME": str(work / "config"),
            "BRAIN_NO_UPDATE": "1",
            "BRAIN_EMBED": os.environ.get("BRAIN_EMBED", "none"),
            "BRAIN_WORKER": "0",  # tend asks no worker; its reindex would leave one running
        }
        vault = work / "vault"
        info = generate(vault, bullets=args.bullets, notes=args.notes)
        planted = plant_claims(vault)
        git(vault, "init", "-q", "-b", "main")
        git(vault, "add", "-A")
        git(vault, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "-m", "vault")
        fill_log(env, vault, info.handles)
        secs, proc = brain(env, "reindex", "--vault", str(vault))
        print(
            f"vault: {info.bullets} bullets, {info.notes} notes, {planted} with claims;"
            f" first reindex {secs:.2f} s (BRAIN_EMBED={env['BRAIN_EMBED']})"
        )
        dry = []
        doc: dict[str, object] = {}
        for _ in range(args.runs):
            secs, proc = brain(env, "tend", "--dry-run", "--json", "--vault", str(vault))
            assert proc.returncode == 0, proc.stderr
            dry.append(secs)
            doc = json.loads(proc.stdout)
        proposed = doc["proposed"]
        assert isinstance(proposed, list)
        ops: dict[str, int] = {}
        for p in proposed:
            ops[p["op"]] = ops.get(p["op"], 0) + 1
        runs = ", ".join(f"{s:.2f}" for s in dry)
        stopped = doc["stopped"] or "not stopped"
        print(
            f"tend --dry-run: median {statistics.median(dry):.2f} s (runs {runs});"
            f" in-process {doc['ms']} ms; {len(proposed)} items {ops}, {stopped}"
        )
        print(daily_sweep(env, vault, work, args.runs))
        floor = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append(time.perf_counter() - start)
        print(f"python -c pass: median {statistics.median(floor):.3f} s (the machine's floor)")
        print(fixture(env, work))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
