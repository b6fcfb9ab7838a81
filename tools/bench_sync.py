#!/usr/bin/env python3
"""What `brain sync` costs: `python tools/bench_sync.py [--commits 5000] [--runs 5]`.

A bare repository on local disk is the remote; machine a made the vault, machine b cloned it,
each with its own HOME and XDG dirs. The vault has --commits commits of history (default 5,000:
a MEMORY.md of 2,000 bullets, then one note line per commit, written with `git fast-import`).

1. a no-change `brain sync` on b (wall time of the command; the pass's own `ms` beside it);
2. b receiving 1,000 new bullets: in one commit, in 1,000 commits, and in one commit while b has
   a commit of its own to replay on top (the merge driver runs);
3. the SessionStart pack hook on b with sync on against the same hook with BRAIN_SYNC=off (what
   the hook pays for the background receive), `brain.sync.background()` itself, and how long
   the detached receive pass then takes.

Medians of --runs runs. The index is keyword-only (BRAIN_EMBED=none): this measures sync.
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
sys.path.insert(0, str(ROOT))

from brain import hooks  # noqa: E402

FILES = 50  # the notes the history's commits append to


def environment(home: Path) -> dict[str, str]:
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
        BRAIN_EMBED="none",
        BRAIN_NO_UPDATE="1",
    )
    return env


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
    for name in hooks.STARTER_FILES:
        text = hooks.starter_file(name)
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


def brain(env: dict[str, str], *args: str, stdin: str | None = None) -> tuple[float, dict]:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="brain-bench-sync-") as tmp:
        base = Path(tmp)
        env_a, env_b = environment(base / "home-a"), environment(base / "home-b")
        for env in (env_a, env_b):
            Path(env["HOME"]).mkdir()
        remote, a, b = base / "remote.git", base / "a", base / "b"
        git(base, env_a, "init", "-q", "--bare", "-b", "main", str(remote))
        git(base, env_a, "init", "-q", "-b", "main", str(a))
        start = time.perf_counter()
        git(a, env_a, "fast-import", "--quiet", data=history(args.commits))
        git(a, env_a, "checkout", "-q", "main")
        git(a, env_a, "remote", "add", "origin", str(remote))
        git(a, env_a, "push", "-q", "-u", "origin", "main")
        git(base, env_b, "clone", "-q", str(remote), str(b))
        count = git(b, env_b, "rev-list", "--count", "HEAD").strip()
        print(f"vault: {count} commits of history, made in {time.perf_counter() - start:.1f} s")
        for env, vault in ((env_a, a), (env_b, b)):
            brain(env, "sync", "--vault", str(vault), "--json")  # first pass: driver, index

        quiet = [brain(env_b, "sync", "--vault", str(b), "--json") for _ in range(args.runs)]
        assert all(doc["outcome"] == "up-to-date" for _, doc in quiet), quiet
        print(
            f"no-change sync           {med([t for t, _ in quiet])}  (pass {med([d['ms'] / 1000 for _, d in quiet])})"
        )

        def receive(label: str, prepare: object) -> None:
            walls, passes = [], []
            for run in range(args.runs):
                prepare(run)  # type: ignore[operator]
                took, doc = brain(env_b, "sync", "--vault", str(b), "--json")
                assert doc["received"] >= 1 and doc["outcome"] == "synced", doc
                walls.append(took)
                passes.append(doc["ms"] / 1000)
            print(f"{label:<25}{med(walls)}  (pass {med(passes)})")

        def one_commit(run: int) -> None:
            with (a / "AI" / "MEMORY.md").open("a", encoding="utf-8") as fh:
                fh.write("".join(bullet(f"one{run}", i) for i in range(1000)))
            brain(env_a, "sync", "--vault", str(a), "--json")

        def many_commits(run: int) -> None:
            tip = git(a, env_a, "rev-parse", "HEAD").strip()
            text = (a / "AI" / "MEMORY.md").read_text(encoding="utf-8")
            git(
                a,
                env_a,
                "fast-import",
                "--quiet",
                "--force",
                data=commits_of_bullets(tip, 1000, text, f"many{run}"),
            )
            git(a, env_a, "reset", "-q", "--hard", "main")
            git(a, env_a, "push", "-q", "origin", "main")

        def with_local(run: int) -> None:
            one_commit(run + 100)
            with (b / "AI" / "MEMORY.md").open("a", encoding="utf-8") as fh:
                fh.write(bullet(f"local{run}", 0))
            git(b, env_b, "commit", "-q", "-am", "local")

        receive("receive 1,000 (1 commit)", one_commit)
        receive("receive 1,000 (1,000 commits)", many_commits)
        receive("receive 1,000 + replay 1", with_local)

        event = json.dumps({"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(b)})
        hook_env = {**env_b, "BRAIN_VAULT": str(b)}
        off, on = [], []
        for _ in range(args.runs):
            idle(env_b)
            off.append(brain({**hook_env, "BRAIN_SYNC": "off"}, "pack", stdin=event)[0])
            idle(env_b)
            on.append(brain(hook_env, "pack", stdin=event)[0])
        idle(env_b)
        print(f"pack hook, sync off      {med(off)}")
        print(
            f"pack hook, sync on       {med(on)}  (+{(statistics.median(on) - statistics.median(off)) * 1000:.0f} ms)"
        )

        os.environ.update(hook_env)
        from brain import sync

        spawn, passes = [], []
        for _ in range(args.runs):
            idle(env_b)
            start = time.perf_counter()
            assert sync.background(b, "receive")
            spawn.append(time.perf_counter() - start)
            idle(env_b)
            passes.append(time.perf_counter() - start)
        print(f"sync.background()        {med(spawn)}")
        print(f"detached receive pass    {med(passes)}  (nothing to receive)")


if __name__ == "__main__":
    main()
