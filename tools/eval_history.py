#!/usr/bin/env python3
"""Measure `brain lessons` and `brain howto` on testdata/transcripts/history (labelled).

    .venv/bin/python tools/eval_history.py [--json] [--show]

lessons: precision and recall of the moments found (corrections and retries) against the labels,
per split (`tune`: what the rules were adjusted on; `holdout`: never looked at while adjusting)
and per kind and language. Every moment found that is not labelled a lesson counts against
precision, labelled look-alike or not. howto: hit@1 (and hit@3) of the labelled task phrases: the
first command returned is the one that did the task. `--show` lists the misses.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "testdata" / "transcripts" / "history"


def setup(base: Path) -> None:
    """Point the agents' folders and brain's state at a temp dir holding the fixture."""
    home = base / "home"
    home.mkdir()
    shutil.copytree(FIXTURE / "gemini" / ".gemini", home / ".gemini")
    os.environ["HOME"] = str(home)
    for var in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = str(base / var.lower())
    os.environ["CLAUDE_CONFIG_DIR"] = str(FIXTURE / "claude")
    os.environ["CODEX_HOME"] = str(FIXTURE / "codex")


def ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 0.0


def lessons_scores(
    found: set[str], labels: list[dict[str, Any]], kinds: dict[str, str]
) -> dict[str, Any]:
    """Precision and recall per split and overall; a found moment belongs to the split of its
    session (known from any label of that session)."""
    gold = {m["key"] for m in labels if m["label"]}
    split_of_session = {m["key"].rsplit("/", 1)[0]: m["split"] for m in labels}
    out: dict[str, Any] = {}
    for split in ("tune", "holdout", "all"):

        def mine(key: str, split: str = split) -> bool:
            return split == "all" or split_of_session.get(key.rsplit("/", 1)[0]) == split

        f = {k for k in found if mine(k)}
        g = {k for k in gold if mine(k)}
        tp = len(f & g)
        row = {
            "found": len(f),
            "gold": len(g),
            "tp": tp,
            "precision": ratio(tp, len(f)),
            "recall": ratio(tp, len(g)),
        }
        for kind in ("correction", "retry"):
            fk = {k for k in f if kinds.get(k) == kind}
            gk = {m["key"] for m in labels if m["label"] and mine(m["key"]) and m["kind"] == kind}
            row[kind] = {
                "precision": ratio(len(fk & gk), len(fk)),
                "recall": ratio(len(fk & gk), len(gk)),
            }
        out[split] = row
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for m in labels:
        if m["label"] and m["kind"] == "correction":
            by_lang[m["lang"]][1] += 1
            by_lang[m["lang"]][0] += m["key"] in found
    out["correction_recall_by_language"] = {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_lang.items())}
    lookalikes = [m["key"] for m in labels if not m["label"]]
    out["lookalikes_flagged"] = f"{sum(k in found for k in lookalikes)}/{len(lookalikes)}"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="list the misses (of --split)")
    parser.add_argument("--split", default="tune", help="whose misses --show lists (tune)")
    args = parser.parse_args()
    labels = json.loads((FIXTURE / "labels.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="brain-eval-history-") as tmp:
        setup(Path(tmp))
        from brain.commands import howto as howtomod
        from brain.recall import lessons, past, search, store

        for name in ("claude", "codex", "gemini"):
            store.set_enabled(name, True)
        conn = store.connect()
        store.sync(conn, ["claude", "codex", "gemini"])
        agents = ("claude", "codex", "gemini")
        window = past.Window(agents=agents)
        moments = lessons.corrections_in(conn, window) + lessons.retries_in(conn, window)
        found = {m.key for m in moments}
        kinds = {m.key: m.kind for m in moments}
        result: dict[str, Any] = {"lessons": lessons_scores(found, labels["moments"], kinds)}
        misses: list[str] = []
        gold = {m["key"]: m for m in labels["moments"]}
        for m in moments:
            if not gold.get(m.key, {}).get("label"):
                misses.append(
                    f"false {m.kind} [{gold.get(m.key, {}).get('split', '?')}]: {m.lesson}"
                )
        for key, m in gold.items():
            if m["label"] and key not in found:
                misses.append(f"missed {m['kind']} [{m['split']}] {key}")
        hits: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        filters = search.Filters(agents=agents)
        for task in labels["howto"]:
            got = howtomod.rank(conn, task["query"], filters, limit=3, failed=False)
            first = [h.command for h in got]
            task["expect"] = past.masked(task["expect"])  # as howto shows commands
            for split in (task["split"], "all"):
                hits[split][0] += bool(first) and first[0] == task["expect"]
                hits[split][1] += task["expect"] in first
                hits[split][2] += 1
            if not first or first[0] != task["expect"]:
                misses.append(
                    f"howto [{task['split']}] {task['query']!r}: {first[:1]} != {task['expect']!r}"
                )
        result["howto"] = {
            k: {"hit@1": ratio(v[0], v[2]), "hit@3": ratio(v[1], v[2]), "tasks": v[2]}
            for k, v in hits.items()
        }
        conn.close()
    if args.json:
        print(json.dumps(result))
    else:
        print(json.dumps(result, indent=1))
    if args.show:
        print("\n".join(m for m in misses if args.split == "all" or f"[{args.split}]" in m))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
