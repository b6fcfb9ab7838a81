#!/usr/bin/env python3
"""What `brain sync` costs: `python tools/bench_sync.py [--commits 5000] [--runs 5]`.

A bare repository on local disk is the remote; machine a made the vault, machine b cloned it,
each with its own HOME and XDG dirs. The vault has --commits commits of history (default 5,000:
a MEMORY.md of 2,000 bullets, then one note line per commit, written with `git fast-import`).

1. a no-change `brain sync` on b (wall time of the command; the pass's own `ms` beside it);
2. b receiving 1,000 new bullets: in one commit, in 1,000 commits, and in one commit while b has
   a commit of its own to replay on top (brain's line-by-line merge runs);
3. the SessionStart pack hook on b with sync on against the same hook with BRAIN_SYNC=off (what
   the hook pays for the background receive; the fastest runs compared, as load adds noise of
   its own), `brain.autosync.background()` itself, and how long the detached receive pass takes.

Medians of --runs runs. The index is keyword-only (BRAIN_EMBED=none): this measures sync. b's
index is built before the runs, so a receive updates it incrementally (the changed files).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from bench_hooks import environment  # noqa: E402

from brain import shipped  # noqa: E402

FILES = 50  # the notes the history's commits append to


def git(repo: Path, env: dict[str, str], *args: str, data: bytes | None = None) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, input=data, capture_output=True, check=True
    )
    return proc.stdout.decode()


def bullet(tag: str, i: int) -> str:
    return f"- **{tag} fact {i}** — the bench wrote {tag} fact number {i} — bench — 2026-01-01\n"


def blob(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"data %d\n" % len(data) + data + b"\n"


def history(count: int, start: int = 1_700_000_000) -> bytes:
    """A fast-import stream: the starter files and 2,000 bullets, then one note line a commit."""
    out = [b"commit refs/heads/main\n", b"committer Bench <b@x> %d +0000\n" % start]
    out.append(blob("starter"))
    for name in shipped.STARTER_FILES:
        text = shipped.starter_file(name)
        if name == "MEMORY.md":
            text += "".join(bullet("old", i) for i in range(2000))
        out += [f"M 100644 inline AI/{name}\n".encode(), blob(text)]
    notes = [f"# Log {k}\n\n" for k in range(FILES)]
    for i in range(1, count):
        k = i % FILES
        notes[k] += f"Line {i} of the log.\n"
        out += [b"commit refs/heads/main\n", b"committer Bench <b@x> %d +0000\n" % (start + i)]
        out += [blob(f"note {i}"), f"M 100644 inline notes/log-{k}.md\n".encode(), blob(notes[k])]
    return b"".join(out)


def commits_of_bullets(tip: str, count: int, existing: str, tag: str) -> bytes:
    """`count` commits on top of `tip`, each adding one bullet to AI/MEMORY.md."""
    out = []
    text = existing
    for i in range(count):
        text += bullet(tag, i)
        out += [
            b"commit refs/heads/main\n",
            b"committer Bench <b@x> %d +0000\n" % (1_800_000_000 + i),
        ]
        out.append(blob(f"{tag} {i}"))
        if i == 0:
            out.append(f"from {tip}\n".encode())
        out += [b"M 100644 inline AI/MEMORY.md\n", blob(text)]
    return b"".join(out)


def brain(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "brain", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"brain {' '.join(args)} failed: {proc.stderr}")
    doc = json.loads(proc.stdout) if "--json" in args and proc.stdout.strip() else {}
    return took, doc


def idle(env: dict[str, str], timeout: float = 120) -> None:
    """Wait until no sync pass holds this machine's lock (the background ones included)."""
    import fcntl

    folder = Path(env["XDG_STATE_HOME"]) / "brain" / "sync"
    end = time.monotonic() + timeout
    time.sleep(0.3)
    while time.monotonic() < end:
        busy = False
        for lock in folder.glob("*.lock"):
            with lock.open("a") as fh:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
                except OSError:
                    busy = True
        if not busy:
            return
        time.sleep(0.05)


def med(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.0f} ms"


def line(label: str, walls: list[float], passes: list[float] | None = None) -> None:
    extra = f"  (pass {med(passes)})" if passes else ""
    print(f"{label:<31}{med(walls)}{extra}")


class Bench:
    def __init__(self, base: Path, commits: int, runs: int) -> None:
        self.runs = runs
        self.env_a, self.env_b = environment(base / "home-a"), environment(base / "home-b")
        for env in (self.env_a, self.env_b):
            Path(env["HOME"]).mkdir()
        self.remote, self.a, self.b = base / "remote.git", base / "a", base / "b"
        start = time.perf_counter()
        git(base, self.env_a, "init", "-q", "--bare", "-b", "main", str(self.remote))
        git(base, self.env_a, "init", "-q", "-b", "main", str(self.a))
        git(self.a, self.env_a, "fast-import", "--quiet", data=history(commits))
        git(self.a, self.env_a, "checkout", "-q", "main")
        git(self.a, self.env_a, "remote", "add", "origin", str(self.remote))
        git(self.a, self.env_a, "push", "-q", "-u", "origin", "main")
        git(base, self.env_b, "clone", "-q", str(self.remote), str(self.b))
        count = git(self.b, self.env_b, "rev-list", "--count", "HEAD").strip()
        print(f"vault: {count} commits of history, made in {time.perf_counter() - start:.1f} s")
        for env, vault in ((self.env_a, self.a), (self.env_b, self.b)):
            brain(env, "sync", "--vault", str(vault), "--json")  # the first pass: the driver
            brain(env, "reindex", "--vault", str(vault))  # receives then update it incrementally

    def sync_b(self) -> tuple[float, dict[str, Any]]:
        return brain(self.env_b, "sync", "--vault", str(self.b), "--json")

    def quiet(self) -> None:
        runs = [self.sync_b() for _ in range(self.runs)]
        assert all(doc["outcome"] == "up-to-date" for _, doc in runs), runs
        line("no-change sync", [t for t, _ in runs], [d["ms"] / 1000 for _, d in runs])

    def receive(self, label: str, prepare: Callable[[int], None]) -> None:
        walls, passes = [], []
        for run in range(self.runs):
            prepare(run)
            took, doc = self.sync_b()
            assert doc["outcome"] == "synced", doc
            assert doc["received"] >= 1, doc
            walls.append(took)
            passes.append(doc["ms"] / 1000)
        size = (self.b / "AI" / "MEMORY.md").read_text(encoding="utf-8").count("\n- **")
        line(label, walls, passes)
        print(f"{'':<31}(MEMORY.md now {size:,} bullets: a receive reindexes the whole file)")

    def one_commit(self, run: int) -> None:
        with (self.a / "AI" / "MEMORY.md").open("a", encoding="utf-8") as fh:
            fh.write("".join(bullet(f"one{run}", i) for i in range(1000)))
        brain(self.env_a, "sync", "--vault", str(self.a), "--json")

    def many_commits(self, run: int) -> None:
        a, env = self.a, self.env_a
        tip = git(a, env, "rev-parse", "HEAD").strip()
        text = (a / "AI" / "MEMORY.md").read_text(encoding="utf-8")
        stream = commits_of_bullets(tip, 1000, text, f"many{run}")
        git(a, env, "fast-import", "--quiet", "--force", data=stream)
        git(a, env, "reset", "-q", "--hard", "main")
        git(a, env, "push", "-q", "origin", "main")

    def with_local(self, run: int) -> None:
        self.one_commit(run + 100)
        with (self.b / "AI" / "MEMORY.md").open("a", encoding="utf-8") as fh:
            fh.write(bullet(f"local{run}", 0))
        git(self.b, self.env_b, "commit", "-q", "-am", "local")

    def hook(self) -> None:
        b = self.b
        event = json.dumps({"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(b)})
        env = {**self.env_b, "BRAIN_VAULT": str(b)}
        off, on = [], []
        for _ in range(max(self.runs, 15)):  # interleaved, many: load moves a run by ~100 ms
            idle(self.env_b)
            off.append(brain({**env, "BRAIN_SYNC": "off"}, "pack", stdin=event)[0])
            idle(self.env_b)
            on.append(brain(env, "pack", stdin=event)[0])
        idle(self.env_b)
        by_median = (statistics.median(on) - statistics.median(off)) * 1000
        by_min = (min(on) - min(off)) * 1000
        line("pack hook, sync off", off)
        line("pack hook, sync on", on)
        print(f"{'':<31}(added: {by_median:+.0f} ms by medians, {by_min:+.0f} ms fastest runs)")
        os.environ.update(env)
        from brain import autosync

        spawn, passes = [], []
        for _ in range(self.runs):
            idle(self.env_b)
            start = time.perf_counter()
            assert autosync.background(b, "receive")
            spawn.append(time.perf_counter() - start)
            idle(self.env_b)
            passes.append(time.perf_counter() - start)
        line("autosync.background()", spawn)
        line("detached receive, nothing new", passes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="brain-bench-sync-") as tmp:
        bench = Bench(Path(tmp), args.commits, args.runs)
        bench.quiet()
        bench.receive("receive 1,000 (1 commit)", bench.one_commit)
        bench.receive("receive 1,000 (1,000 commits)", bench.many_commits)
        bench.receive("receive 1,000 + replay 1 local", bench.with_local)
        bench.hook()


if __name__ == "__main__":
    main()
