"""Start-up within 2x the floor (issue 29): tools/bench_thin.py --check times keyword find, warm
hybrid find, cached pack and warm prime in fresh processes against the same venv's `python -c
pass` in the same run, and checks that the worker's answers are the in-process ones."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT


@pytest.mark.slow  # a worker and ~300 fresh processes; the best of three runs of medians
def test_the_four_start_up_figures_are_within_twice_the_floor() -> None:
    bench = str(ROOT / "tools" / "bench_thin.py")
    run = subprocess.run(
        [sys.executable, bench, "--quick", "--runs", "3", "--reps", "9", "--check", "--json"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert run.stdout, run.stderr[-3000:]
    doc = json.loads(run.stdout)
    assert all(check.endswith("same") for check in doc["checks"]), doc["checks"]
    figures = ("warm_find_keyword", "warm_find_hybrid", "cached_pack", "warm_prime")
    assert {k: doc[f"{k}_x"] for k in figures if doc[f"{k}_x"] > 2.0} == {}, doc
    assert run.returncode == 0, doc
