#!/usr/bin/env python3
"""Figures for `brain mcp` and `brain ledger`, as medians and ratios to `python3 -c pass`.

- mcp: spawn `brain mcp` with the SDK's stdio client, initialize, call `find` once; the time from
  spawn to the first tool result (median of --runs).
- http: `brain mcp --http --port 0` spawned once: the time to its start lines, then per run a
  client session over streamable HTTP (connect, initialize, `find`), and one `find` in a session
  already open (the warm cost of a call).
- ledger: a usage log of --rows lookups (generated), `brain ledger --json` in a fresh process.

    .venv/bin/python tools/bench_mcp.py [--runs 7] [--rows 100000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "BRAIN_EMBED": os.environ.get("BRAIN_EMBED", "none"),
        "BRAIN_NO_UPDATE": "1",
        "BRAIN_WORKER": "0",  # the server searches itself; its reindex must leave no worker
    }


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def bench_mcp(vault: Path, env: dict[str, str], runs: int) -> list[float]:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "brain", "mcp", "--vault", str(vault)], env=env
    )

    async def once() -> float:
        start = time.perf_counter()
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            result = await session.call_tool("find", {"query": "libgit2 hooks"})
            took = time.perf_counter() - start
            assert not result.is_error, result
        return took

    return [anyio.run(once) for _ in range(runs)]


def bench_http(
    vault: Path, env: dict[str, str], runs: int
) -> tuple[float, list[float], list[float]]:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    argv = [sys.executable, "-m", "brain", "mcp", "--vault", str(vault), "--http", "--port", "0"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        url = ""
        for line in proc.stderr:
            if "serving brain's tools at " in line:
                url = line.rsplit(" ", 1)[1].strip()
            if line.startswith("Ctrl-C stops it"):
                break
        up = time.perf_counter() - start
        token = (Path(env["XDG_STATE_HOME"]) / "brain" / "mcp-token").read_text().strip()

        async def session(calls: int) -> list[float]:
            took = []
            begin = time.perf_counter()
            async with (
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
                streamable_http_client(url, http_client=http) as (r, w),
                ClientSession(r, w) as s,
            ):
                await s.initialize()
                for _ in range(calls):
                    result = await s.call_tool("find", {"query": "libgit2 hooks"})
                    assert not result.is_error, result
                    took.append(time.perf_counter() - begin)
                    begin = time.perf_counter()
            return took

        cold = [anyio.run(session, 1)[0] for _ in range(runs)]
        warm = anyio.run(session, runs + 1)[1:]
        return up, cold, warm
    finally:
        proc.terminate()  # by its pid
        proc.wait(20)


def seed_log(env: dict[str, str], vault: Path, rows: int) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.update({k: env[k] for k in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "HOME")})
    from brain.usage import connect

    rnd = random.Random(7)  # noqa: S311 - test data
    now = time.time()
    callers = ["claude-code", "codex", "cursor", "mcp:claude-desktop", "script"]
    conn = connect()
    conn.execute("BEGIN")
    conn.executemany(
        # the columns named: the table has grown one since (evidence, default '')
        "INSERT INTO events(ts, command, caller, session, query, entries, bytes, vault)"
        " VALUES (?,?,?,?,?,?,?,?)",
        (
            (
                now - rnd.random() * 90 * 86400,
                "find",
                rnd.choice(callers),
                f"s{rnd.randrange(2000)}",
                f"query {rnd.randrange(5000)}",
                rnd.choice([0, 1, 3, 5, 10]),
                rnd.randrange(0, 2400),
                str(vault),
            )
            for _ in range(rows)
        ),
    )
    conn.execute("COMMIT")
    conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="brain-bench-mcp-"))
    try:
        vault = tmp / "vault"
        shutil.copytree(ROOT / "testdata" / "vault", vault)
        vault = vault.resolve()
        env = _env(tmp / "home")
        subprocess.run(
            [sys.executable, "-m", "brain", "reindex", "--vault", str(vault)],
            env=env,
            check=True,
            capture_output=True,
        )
        base = statistics.median(
            _time([sys.executable, "-c", "pass"], env) for _ in range(args.runs)
        )
        mcp = bench_mcp(vault, env, args.runs)
        up, cold, warm = bench_http(vault, env, args.runs)
        seed_log(env, vault, args.rows)
        ledger = [
            _time([sys.executable, "-m", "brain", "ledger", "--vault", str(vault), "--json"], env)
            for _ in range(args.runs)
        ]
        log_med = statistics.median(ledger)
        mcp_med = statistics.median(mcp)
        print(f"python3 -c pass          {base * 1000:8.1f} ms")
        print(
            f"mcp spawn->first result  {mcp_med * 1000:8.1f} ms  ({mcp_med / base:5.1f}x)  "
            f"min {min(mcp) * 1000:.0f} max {max(mcp) * 1000:.0f}"
        )
        for name, took in (("http session+find", cold), ("http find, warm", warm)):
            med = statistics.median(took)
            print(
                f"{name:<24} {med * 1000:8.1f} ms  ({med / base:5.1f}x)  "
                f"min {min(took) * 1000:.0f} max {max(took) * 1000:.0f}"
            )
        print(f"http spawn->listening    {up * 1000:8.1f} ms  ({up / base:5.1f}x)")
        print(
            f"ledger, {args.rows:,} rows  {log_med * 1000:8.1f} ms  ({log_med / base:5.1f}x)  "
            f"min {min(ledger) * 1000:.0f} max {max(ledger) * 1000:.0f}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
