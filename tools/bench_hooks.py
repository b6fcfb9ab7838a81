#!/usr/bin/env python3
"""What brain's git hooks cost, on a copy of testdata/vault: `python tools/bench_hooks.py`.

1. `brain reindex` after a one-bullet change: what the post-commit hook runs in the background.
2. `git commit` of a one-bullet change without hooks, and with brain's hooks installed; the
   difference is the pre-commit hook's overhead (post-commit detaches), compared with running
   `brain lint --staged` and `brain secrets --staged` directly.

Everything runs in a temp HOME with XDG dirs inside it; medians of N runs (default 9).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "testdata" / "vault"


def environment(home: Path, embed: str = "none") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "BRAIN_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Bench",
        GIT_AUTHOR_EMAIL="bench@example.invalid",
        GIT_COMMITTER_NAME="Bench",
        GIT_COMMITTER_EMAIL="bench@example.invalid",
        BRAIN_EMBED=embed,
        BRAIN_NO_UPDATE="1",
        # Each command in its own process, as these benches measure: a worker would also outlive
        # the bench (the hooks' background reindex starts one after any stop at the end).
        BRAIN_WORKER="0",
    )
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    """Wall seconds of one command, which must succeed."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def new_vault(parent: Path, name: str, env: dict[str, str]) -> Path:
    vault = parent / name
    shutil.copytree(FIXTURE, vault)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fixture"]):
        subprocess.run(["git", "-C", str(vault), *args], env=env, check=True)
    return vault


def add_bullet(vault: Path, i: int) -> None:
    with (vault / "AI" / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write(f"- **bench fact {i}** — the bench wrote fact number {i} — bench — 2026-01-01\n")


def wait_for_reindex(log: Path, before: float, timeout: float = 30) -> None:
    """Let the previous commit's background reindex finish before timing the next commit."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if log.stat().st_mtime > before and "Index" in log.read_text(encoding="utf-8"):
                return
        except OSError:
            pass
        time.sleep(0.05)


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=9, help="runs per figure (median reported)")
    parser.add_argument(
        "--embed", default="none", help="embedding provider for the reindex (onnx: the default)"
    )
    args = parser.parse_args()
    brain = [sys.executable, "-P", "-m", "brain"]
    # ignore_cleanup_errors: the last commit's background `tend --daily` may still be writing
    with tempfile.TemporaryDirectory(
        prefix="brain-bench-hooks-", ignore_cleanup_errors=True
    ) as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = environment(home, args.embed)

        # 1. post-commit's work: reindex after a one-bullet change
        vault = new_vault(Path(tmp), "reindex", env)
        run([*brain, "reindex", "--vault", str(vault)], env)
        reindex = []
        for i in range(args.n):
            add_bullet(vault, i)
            reindex.append(run([*brain, "reindex", "--vault", str(vault)], env))

        # 2a. git commit without hooks
        plain = new_vault(Path(tmp), "plain", env)
        bare = []
        for i in range(args.n):
            add_bullet(plain, i)
            subprocess.run(["git", "-C", str(plain), "add", "-A"], env=env, check=True)
            bare.append(run(["git", "-C", str(plain), "commit", "-q", "-m", f"b{i}"], env))

        # 2b. git commit with brain's hooks, and the checks run directly on the same change
        hooked = new_vault(Path(tmp), "hooked", env)
        subprocess.run(
            [*brain, "install", str(hooked), "--json"], env=env, check=True, capture_output=True
        )
        log = next((home / ".local" / "state" / "brain" / "logs").glob("*"), None)
        with_hooks, lint, secrets = [], [], []
        for i in range(args.n):
            add_bullet(hooked, i)
            subprocess.run(["git", "-C", str(hooked), "add", "-A"], env=env, check=True)
            lint.append(run([*brain, "lint", "--staged", "--vault", str(hooked)], env))
            secrets.append(run([*brain, "secrets", "--staged", "--vault", str(hooked)], env))
            before = time.time()
            with_hooks.append(run(["git", "-C", str(hooked), "commit", "-q", "-m", f"h{i}"], env))
            log = log or next((home / ".local" / "state" / "brain" / "logs").glob("*"), None)
            if log is not None:
                wait_for_reindex(log, before)

    overhead = statistics.median(with_hooks) - statistics.median(bare)
    direct = statistics.median(lint) + statistics.median(secrets)
    print(f"runs per figure: {args.n} (median, min); fixture: {FIXTURE.relative_to(ROOT)}")
    print(f"brain reindex after a one-bullet change (post-commit, detached): {ms(reindex)}")
    print(f"git commit without hooks:                   {ms(bare)}")
    print(f"git commit with brain's hooks:              {ms(with_hooks)}")
    print(f"  overhead of the hooks:                    {overhead * 1000:.0f} ms")
    print(f"brain lint --staged, run directly:          {ms(lint)}")
    print(f"brain secrets --staged, run directly:       {ms(secrets)}")
    print(f"  lint + secrets:                           {direct * 1000:.0f} ms")
    print(f"  hook overhead beyond the two checks:      {(overhead - direct) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
