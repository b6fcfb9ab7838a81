"""The warm worker's resident memory (tools/bench_worker_memory.py), for a generated vault of 300
bullets: at most 150 MB once warm and after a few hundred finds (issue 29; it held 258-264 MB)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.slow  # a generated vault embedded, a worker, 200 fresh `brain find` processes
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_warm_worker_for_300_bullets_holds_at_most_150_mb() -> None:
    bench = str(ROOT / "tools" / "bench_worker_memory.py")
    run = subprocess.run(
        [sys.executable, bench, "--finds", "200", "--check", "--json"],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    doc = json.loads(run.stdout)
    assert doc["start_mb"] <= 150, doc
    assert doc["after_finds_mb"] <= 150, doc
    # growth: finds the worker answers cost it little, the same query or a new one
    assert doc["after_finds_mb"] - doc["first_find_mb"] < 15, doc
