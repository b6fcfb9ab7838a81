"""The retrieval quality gate: the golden and development sets through the real model, thresholds
in tools/eval; the hybrid scorer's coefficients are what `tools/eval fit` makes of the tuning
half."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import ROOT

from brain import search

pytestmark = pytest.mark.slow  # the golden and dev sets through the ONNX model


def eval_output(*args: str) -> str:
    """What `tools/eval ARGS` prints, which must exit 0."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "eval"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "BRAIN_EMBED": "onnx"},
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run_eval(*args: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(eval_output(*args))
    return doc


def test_golden_set_meets_the_thresholds() -> None:
    report = run_eval("golden", "--json", "--check")
    every = {mode: report[mode]["all"] for mode in ("keyword", "vector", "hybrid")}
    for metric in ("mrr", "r5"):
        assert every["hybrid"]["golden"][metric] > every["keyword"]["golden"][metric]
        assert every["hybrid"]["golden"][metric] > every["vector"]["golden"][metric]
    assert every["hybrid"]["paraphrase"]["r5"] >= every["vector"]["paraphrase"]["r5"]
    assert every["hybrid"]["unanswerable"]["empty"] >= 0.8
    for split in ("tune", "held"):  # both halves are measured and reported
        assert report["hybrid"][split]["all"]["n"] > 60
        paraphrases = report["hybrid"][split]["paraphrases"]  # golden's and dev's together
        assert paraphrases["n"] == sum(
            report["hybrid"][split][c]["n"] for c in ("paraphrase", "dev-paraphrase")
        )


def test_the_answers_meet_the_thresholds() -> None:
    """What an agent reads with default flags (tools/eval answer): the small vault's off-topic
    questions mostly get nothing and its on-topic ones their bullet first in a line or two; the
    large vault's answers are short and hold the gold line; both halves are reported."""
    report = run_eval("answer", "--json", "--check")
    for split in ("tune", "held"):
        small, large = report["small"][split], report["large"][split]
        assert small["on-topic"]["n"] > 10
        assert small["off-topic"]["n"] > 20
        assert large["answerable"]["n"] > 60
        assert large["answerable"]["lines"] < 3
        assert large["no-answer"]["lines"] < large["answerable"]["lines"]
        foreign = report["multilingual"][split]
        assert foreign["answerable"]["n"] > 40
        assert foreign["no-answer"]["n"] > 8


def test_the_scorer_file_is_what_fit_makes_of_the_tuning_half() -> None:
    fitted = run_eval("fit", "--dry-run")
    stored = search.fusion_model()
    assert fitted["features"] == stored["features"] == list(search.FEATURES)
    assert len(stored["rank"]) == len(search.FEATURES) + 1
    # The same cases through the same model: equal up to the float noise of another CPU.
    for got, kept in zip(fitted["rank"], stored["rank"], strict=True):
        assert abs(got - kept) < 0.02


def test_places_say_where_each_expected_line_sits_in_every_mode() -> None:
    """`golden --places`: each answerable case's expected lines and their place in each mode,
    agreeing with the report's R@5 (the share of lines placed in the top five) per half."""
    report = run_eval("golden", "--json", "--places")
    rows = report["places"]
    assert {r["split"] for r in rows} == {"tune", "held"}
    for split in ("tune", "held"):
        for mode in ("keyword", "vector", "hybrid"):
            for category in ("paraphrase", "synonym", "dev-paraphrase"):
                shares = [
                    sum((p[mode] or 10**6) <= 5 for p in r["places"].values()) / len(r["places"])
                    for r in rows
                    if r["split"] == split and r["category"] == category
                ]
                assert shares, (split, category)
                r5 = report[mode][split][category]["r5"]
                assert abs(sum(shares) / len(shares) - r5) < 1e-3, (split, mode, category)
    # a place is 1-based or None (past the depth looked at); every expected line has one per mode
    for r in rows:
        for place in r["places"].values():
            assert set(place) == {"keyword", "vector", "hybrid"}
            assert all(v is None or v >= 1 for v in place.values())


def test_late_interaction_is_measured_against_the_fitted_scorer() -> None:
    """`fit --cv --late` cross-validates the scorer with and without the late-interaction
    features on the tuning half and reports both on the held-out half; the lead docs/commands.md
    records (tuning CV MRR rises) is what it prints."""
    rows = {}
    for line in eval_output("fit", "--cv", "--late").splitlines():
        for name in ("as fitted", "+ late"):
            if line.startswith(name):
                numbers = line[len(name) :].replace("/", " ").split()
                rows[name] = [float(n) for n in numbers]
    assert set(rows) == {"as fitted", "+ late"}
    for figures in rows.values():
        assert len(figures) == 7  # l2, then MRR and R@5 for tuning CV, held-out, paraphrases
        assert all(0.0 <= f <= 1.0 for f in figures[1:])
    assert rows["+ late"][1] > rows["as fitted"][1]  # tuning CV MRR
