#!/usr/bin/env python3
"""What facts that know when their code moved cost (brain/drift.py): `brain reindex` and `brain
find` in fresh processes, as ratios to the same venv's `python -c pass`.

    .venv/bin/python tools/bench_drift.py [--commits 5000] [--bullets 300] [--runs 7]
        [--baseline DIR] [--json]

Builds a repository `bench` of --commits commits (each changing one to three of 400 files, one in
fifty renaming a file) and a vault: the fixture vault plus --bullets bullets each naming a file
of it (`bench:src/f12.py`), dated across the history. Then times, medians of --runs fresh
processes (BRAIN_EMBED=none, no worker, a state dir of its own):

- the first `brain reindex` that reads the history (once: what a new repository costs),
- `brain reindex` with nothing new (the post-commit hook's everyday case, for the code side),
- `brain reindex` after one new commit (its own diff),
- `brain find --json` of a bullet that names code (a find reads one cached row per hit),
- with --baseline DIR (a checkout of brain without drift, e.g. a worktree of main), the same find
  run from that checkout's code (its own state dir): find must not get slower.
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
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = 400
QUERY = "bench fact 7 about its code"


def make_repo(path: Path, commits: int) -> None:
    """`commits` commits over 2025, newest last, each changing one to three files."""
    import pygit2

    repo = pygit2.init_repository(str(path), initial_head="main")
    names = [f"src/f{n}.py" for n in range(FILES)]
    blobs = {name: repo.create_blob(f"{name} 0\n".encode()) for name in names}
    start = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    step = 365 * 86400 / max(commits, 1)
    parents: list[pygit2.Oid] = []
    for i in range(commits):
        for k in range(1 + i % 3):
            name = names[(i * 7 + k * 13) % FILES]
            blobs[name] = repo.create_blob(f"{name} {i}\n".encode())
        if i % 50 == 49:  # a rename: the old name's content under a new name
            old = names[i % FILES]
            new = f"src/moved{i}.py"
            blobs[new] = blobs.pop(old)
            names[i % FILES] = new
        tree = _tree(repo, blobs)
        who = pygit2.Signature("Bench", "bench@example.invalid", int(start + i * step), 0)
        parents = [repo.create_commit("refs/heads/main", who, who, f"c{i}", tree, parents)]
    repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)


def _tree(repo: object, blobs: dict[str, object]) -> object:
    import pygit2

    src = repo.TreeBuilder()  # type: ignore[attr-defined]
    for name, blob in blobs.items():
        src.insert(name.removeprefix("src/"), blob, pygit2.enums.FileMode.BLOB)
    top = repo.TreeBuilder()  # type: ignore[attr-defined]
    top.insert("src", src.write(), pygit2.enums.FileMode.TREE)
    return top.write()


def make_vault(path: Path, bullets: int) -> None:
    shutil.copytree(ROOT / "testdata" / "vault", path)
    lines = [
        f"- **bench fact {n}** — bench fact {n} about its code — `bench:src/f{n % FILES}.py` —"
        f" 2025-{1 + n % 12:02d}-15"
        for n in range(bullets)
    ]
    memory = path / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8") + "\n## Bench\n\n" + "\n".join(lines) + "\n",
        encoding="utf-8",
    )
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "vault")


def git(repo: Path, *args: str) -> None:
    argv = ["git", "-C", str(repo), "-c", "gc.auto=0", "-c", "maintenance.auto=false", *args]
    subprocess.run(argv, check=True, capture_output=True)


def env_for(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_", "GIT_", "XDG_"))}
    return {
        **keep,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "BRAIN_EMBED": "none",
        "BRAIN_WORKER": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--bullets", type=int, default=300)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", type=Path, help="a checkout of brain without drift")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    py = sys.executable
    # a git of the user's may still be packing in the background: what it leaves is left
    with tempfile.TemporaryDirectory(prefix="bench-drift-", ignore_cleanup_errors=True) as tmp:
        base = Path(tmp)
        code, vault = base / "bench", base / "vault"
        t0 = time.perf_counter()
        make_repo(code, args.commits)
        make_vault(vault, args.bullets)
        made = time.perf_counter() - t0
        env = env_for(base / "home")
        env["PYTHONPATH"] = str(ROOT)
        brain = [py, "-m", "brain"]
        old = env_for(base / "home-baseline")
        old["PYTHONPATH"] = str(args.baseline.resolve()) if args.baseline else ""
        reindex = [*brain, "reindex", "--vault", str(vault)]
        find = [*brain, "find", "--vault", str(vault), "--json", QUERY]
        subprocess.run(reindex, env=env, cwd=vault, check=True, capture_output=True)
        first = timed(reindex, env, code)  # reads `bench`: brain runs in it
        if args.baseline:
            subprocess.run(reindex, env=old, cwd=code, check=True, capture_output=True)
        # interleaved, so that a loaded machine weighs on each alike
        runs: dict[str, list[float]] = {}
        for _ in range(args.runs):
            steps = [("floor", [py, "-c", "pass"], env), ("reindex_nothing_new", reindex, env)]
            steps.append(("find", find, env))
            if args.baseline:
                steps += [
                    ("baseline_reindex_nothing_new", reindex, old),
                    ("baseline_find", find, old),
                ]
            for name, argv, e in steps:
                runs.setdefault(name, []).append(timed(argv, e, code))
        one = []
        for n in range(args.runs):
            (code / "src" / "f7.py").write_text(f"edit {n}\n", encoding="utf-8")
            git(code, "commit", "-q", "-am", f"edit {n}")
            one.append(timed(reindex, env, code))
        got = subprocess.run(find, env=env, cwd=code, capture_output=True, check=True)
        doc = json.loads(got.stdout)
        served = doc["hits"][0]["code_changed"] if doc["hits"] else None
        ms = {k: round(statistics.median(v), 1) for k, v in runs.items()}
        floor = ms.pop("floor")
        out: dict[str, object] = {
            "commits": args.commits,
            "bullets": args.bullets,
            "made_s": round(made, 1),
            "floor_ms": floor,
            "reindex_first_ms": round(first, 1),
            "reindex_one_commit_ms": round(statistics.median(one), 1),
            **{f"{k}_ms": v for k, v in ms.items()},
            "served": served,
        }
    if args.json:
        print(json.dumps(out))
        return 0
    ratio = {
        k: round(float(v) / floor, 2)  # type: ignore[arg-type]
        for k, v in out.items()
        if k.endswith("_ms") and k != "floor_ms"
    }
    print(f"{args.commits} commits, {args.bullets} bullets naming code (made in {made:.1f} s)")
    print(f"python -c pass: {floor} ms")
    for k, r in ratio.items():
        print(f"{k:28} {out[k]:>8} ms  {r:>5}x the floor")
    print(f"find served: {served}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
