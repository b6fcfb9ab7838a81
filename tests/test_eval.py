"""The retrieval quality gate: the golden set through the real model, thresholds in tools/eval."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT


def test_golden_set_meets_the_thresholds() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "eval"), "golden", "--json", "--check"],
        capture_output=True,
        text=True,
        env={**os.environ, "BRAIN_EMBED": "onnx"},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    hybrid, keyword, vector = (
        report["hybrid"]["all"],
        report["keyword"]["all"],
        report["vector"]["all"],
    )
    for metric in ("mrr", "r5"):
        assert hybrid[metric] > keyword[metric]
        assert hybrid[metric] > vector[metric]
    assert report["hybrid"]["unanswerable"]["empty"] >= 0.8
