#!/usr/bin/env python3
"""What `brain desk` costs: `python tools/bench_desk.py [--bullets 10000] [--runs 5]`.

On the generated vault (tools/genvault.py: 10,000 bullets, 500 notes, a git repository) with a
usage log of --lookups lookups over 30 days (a tenth of them misses) and --proposals proposals
in the inbox (a quarter of them updates of a bullet the vault has), `brain desk` runs as a
process and headless Chromium (Debian's chromium and chromium-driver, via Selenium) loads each
page --runs times. Per page, medians of:

- first paint: `first-contentful-paint` from the browser's paint timing (navigation start to the
  first text drawn), what a person waits for;
- server: navigation start to the first byte of the response (the page's reading of the vault).

Before those, the first load of each page: its first paint and the seconds until its content is
there (Health and Misses are read in the background, and reload themselves until their reading is
done: doctor's near-duplicate scan alone takes minutes on 10,000 bullets without vectors).

Then the desk process's memory: resident set (VmRSS) after the runs, and its peak (VmHWM).
The index is keyword-only unless --embed says otherwise: the desk's own cost is what is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from bench_hooks import environment  # noqa: E402
from genvault import generate  # noqa: E402

# The page's content is there: loaded, and not the page saying a background reading is on its way
# (a meta refresh replaces that page every few seconds; between two, the document can be empty).
READY = (
    "return document.readyState === 'complete' && !!document.querySelector('main h1')"
    " && !document.getElementById('pending');"
)
PENDING = "return !!document.getElementById('pending');"
# A page read in the background ends in the line saying when it was read.
READ = "return !!document.querySelector('p.read');"
BACKGROUND = ("misses", "health")
PAGES = ("inbox", "misses", "ledger", "health", "search?q=sqlite+index+timeout")

# Run in the bench's environment: fills the usage log and the inbox through brain's own modules.
FILL = """
import random, sys, time
from pathlib import Path
from brain import usage
from brain.commands.propose import propose_many
vault, lookups, proposals = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
handles = sys.argv[4].split("\\x1f")
rng = random.Random(7)
now = time.time()
rows = []
for i in range(lookups):
    miss = rng.random() < 0.1
    query = f"zq{rng.randrange(200)} missing words" if miss else rng.choice(handles)
    caller = rng.choice(["claude-code", "claude-code", "codex", "person"])
    rows.append((now - rng.random() * 30 * 86400, "find", caller, f"s{rng.randrange(60)}",
                 query, 0 if miss else 5, 0 if miss else rng.randrange(300, 2400),
                 usage.vault_key(vault)))
conn = usage.connect()
conn.executemany(usage._INSERT, rows)
conn.commit()
conn.close()
lines = []
for i in range(proposals):
    if i % 4 == 0:
        lines.append((f"{handles[i]} — updated fact number {i} for the desk bench", "bench"))
    else:
        lines.append((f"desk bench {i} — a new fact about sqlite index number {i}", "bench"))
propose_many(vault, lines)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bullets", type=int, default=10_000)
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--lookups", type=int, default=5_000)
    ap.add_argument("--proposals", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--embed", default="none")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-desk-") as tmp:
        root = Path(tmp)
        env = environment(root / "home", args.embed)
        gen = generate(root / "vault", bullets=args.bullets, notes=args.notes)
        vault = gen.root
        for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "bench"]):
            subprocess.run(["git", "-C", str(vault), *cmd], env=env, check=True)
        py = [sys.executable, "-m", "brain"]
        subprocess.run([*py, "reindex", "--vault", str(vault)], env=env, check=True)
        handles = random.Random(3).sample(gen.handles, 400)  # noqa: S311 - reproducible
        fill = [str(vault), str(args.lookups), str(args.proposals), "\x1f".join(handles)]
        subprocess.run([sys.executable, "-c", FILL, *fill], env=env, check=True, cwd=ROOT)

        desk = subprocess.Popen(
            [*py, "desk", "--vault", str(vault), "--no-open"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert desk.stdout is not None
        m = re.search(r"http://\S+", desk.stdout.readline())
        assert m, "brain desk printed no URL"
        url = m.group(0)
        try:
            results, rss = measure(root, url, desk.pid, args.runs)
        finally:
            os.kill(desk.pid, signal.SIGINT)
            desk.wait(timeout=60)
        doc = {
            "bullets": args.bullets,
            "notes": args.notes,
            "lookups": args.lookups,
            "proposals": args.proposals,
            "embed": args.embed,
            "pages": results,
            "rss_mb": rss["VmRSS"],
            "peak_rss_mb": rss["VmHWM"],
            "when": time.strftime("%Y-%m-%d"),
        }
        if args.json:
            print(json.dumps(doc))
            return
        print(
            f"brain desk on {args.bullets:,} bullets, {args.notes} notes, {args.lookups:,} "
            f"lookups, {args.proposals} proposals (embed {args.embed}); medians of {args.runs}"
        )
        print("  page     first load: paint, content   then: first paint, first byte")
        for page, r in results.items():
            print(
                f"  {page:<8} {r['first_load_paint_ms']:>8.1f} ms {r['first_load_ready_s']:>8.2f} s"
                f"   {r['first_paint_ms']:>8.1f} ms {r['server_ms']:>8.1f} ms"
            )
        print(f"  memory: {rss['VmRSS']} MB resident after the runs, {rss['VmHWM']} MB at peak")


def timing(driver: Any) -> tuple[float, float]:
    """(first contentful paint, first byte) of the page just loaded, in ms from navigation."""
    fp, first_byte = driver.execute_script(
        "const p = performance.getEntriesByName('first-contentful-paint')[0];"
        "const n = performance.getEntriesByType('navigation')[0];"
        "return [p ? p.startTime : -1, n.responseStart];"
    )
    return float(fp), float(first_byte)


def measure(
    root: Path, url: str, pid: int, runs: int
) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """Each page's medians in headless Chromium, then the desk process's memory (MB)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    base = url.split("?", 1)[0]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={root / 'chromium'}")
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    results: dict[str, dict[str, float]] = {}
    try:
        driver.set_page_load_timeout(600)
        driver.get(url)  # sets the cookie
        for page in PAGES:
            # the first load: a page read in the background paints at once, then reloads itself
            # until its reading is there
            start = time.perf_counter()
            driver.get(base + page)
            cold = timing(driver)
            done = READ if page in BACKGROUND else READY
            WebDriverWait(driver, 3600, poll_frequency=0.5).until(
                lambda drv, done=done: drv.execute_script(done)
            )
            ready = time.perf_counter() - start
            paint, server, stale = [], [], 0
            for _ in range(runs):
                driver.get(base + page)
                if driver.execute_script(PENDING):
                    text = driver.find_element("tag name", "body").text[:400]
                    raise SystemExit(f"{page} was still on its way on a second load: {text}")
                stale += "has changed since" in driver.find_element("tag name", "main").text
                fp, first_byte = timing(driver)
                paint.append(fp)
                server.append(first_byte)
            results[page.split("?")[0]] = {
                "first_load_paint_ms": round(cold[0], 1),
                "first_load_ready_s": round(ready, 2),
                "first_paint_ms": round(statistics.median(paint), 1),
                "server_ms": round(statistics.median(server), 1),
                "stale_loads": stale,  # a background page showing an older reading
            }
        status = Path(f"/proc/{pid}/status").read_text()
        rss = {
            k: int(re.search(rf"{k}:\s+(\d+) kB", status).group(1)) // 1024  # type: ignore[union-attr]
            for k in ("VmRSS", "VmHWM")
        }
    finally:
        driver.quit()
    return results, rss


if __name__ == "__main__":
    main()
