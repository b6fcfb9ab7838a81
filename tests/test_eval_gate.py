"""`tools/eval gate`'s curve and fit from saved rows (`--rows`, what `--dump` writes): the
measurement behind docs/commands.md's answer-gate tables, without the models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import ROOT


def row(category: str, split: str, signal: float, r5: float = 1.0) -> dict[str, Any]:
    return {
        "query": f"{category} {split} {signal}",
        "category": category,
        "split": split,
        "signals": [signal, 0.5],
        "vouched": True,
        "r5": 0.0 if category.endswith("unanswerable") else r5,
    }


def gate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    golden = [
        row(cat, split, s)
        for split in ("tune", "held")
        for cat, s in (
            ("keyword", 0.9),
            ("paraphrase", 0.8),
            ("keyword", 0.7),
            ("near-unanswerable", 0.2),
            ("near-unanswerable", 0.1),
            ("far-unanswerable", 0.05),
        )
    ]
    # LoCoMo: one answerable row like the golden answerable ones, one that never answers, and
    # one that looks unanswerable to the gate (it is emptied by any bar that empties the near).
    locomo = [
        {**row("locomo", "", 0.85), "found": True, "recall": [1.0, 1.0, 1.0, 1.0]},
        {**row("locomo", "", 0.85), "found": False, "recall": [0.0, 0.0, 0.0, 0.0]},
        {**row("locomo", "", 0.15), "found": True, "recall": [0.5, 0.5, 1.0, 1.0]},
    ]
    dump = tmp_path / "rows.json"
    dump.write_text(json.dumps({"names": ["sig", "flat"], "golden": golden, "locomo": locomo}))
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "eval"), "gate", "--rows", str(dump), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_separating_signal_empties_every_near_question_at_no_cost(tmp_path: Path) -> None:
    run = gate(tmp_path, "--signals", "sig")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    # AUC: the answerable above the near and far; LoCoMo's lookalike below two of the near four
    assert ["sig", "1.000", "1.000", "0.833"] in [x.split() for x in out.splitlines()]
    bar = out.split("chosen on the tuning half (answerable R@5 down at most 0.02): bar ")[1]
    bar = bar.split()[0]
    line = next(x for x in out.splitlines() if x.split() and x.split()[0] == bar)
    # tune near, far, dR@5; held ...; all ...; LoCoMo empty (the unfound row and the lookalike)
    assert line.split() == [bar, *["1.00", "1.00", "0.000"] * 3, "2"]
    none = next(x for x in out.splitlines() if x.startswith(" 0.00"))
    assert none.split() == ["0.00", *["0.00", "0.00", "0.000"] * 3, "1"]
    assert (
        f"LoCoMo conv 0 after the gate (bar {bar}): R@5/10/25/50 33.3 / 33.3 / 33.3 / 33.3, 2"
        in out
    )


def test_an_unknown_signal_is_one_line(tmp_path: Path) -> None:
    run = gate(tmp_path, "--signals", "sig,nosuch")
    assert run.returncode == 2
    assert run.stderr.strip() == "unknown signals: nosuch (see --help)"
