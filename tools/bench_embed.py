"""Benchmark brain.embed's ONNX provider.

    .venv/bin/python tools/bench_embed.py [--runs 5] [--sentences 1000] [--no-quantized]

Prints medians (and, in brackets, the best run: on a shared machine the least disturbed) of:
- a fresh process that imports brain.embed, loads the model and embeds one query, next to
  ``python -c pass`` on the same interpreter (the ratio is what a CLI start pays);
- onnxruntime session creation alone in a fresh process, for the graph optimisation level
  brain uses (none) and for ORT's default (all);
- embed throughput (texts/s) over varied 10-60 word sentences at batch sizes 16/32/64.

If the ``onnx`` package is importable (it is not a brain dependency; e.g. ``pip install
--target /tmp/onnxpkg onnx ml_dtypes`` then ``PYTHONPATH=/tmp/onnxpkg``), it also builds a
per-channel int8 copy of the model (onnxruntime.quantization.quantize_dynamic) in a temp dir
and reports the same figures for it plus its cosine to the shipped model's vectors.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from brain import embed  # noqa: E402  (after the path tweak, so a checkout runs as is)

SUBJECTS = [
    "the indexer",
    "our search ranking",
    "the git hook",
    "the sqlite database",
    "this handoff",
    "the vault sync",
    "the embedding cache",
    "the payments service",
    "the deploy pipeline",
    "a flaky test",
    "the migration script",
    "the CLI",
    "the MCP server",
    "the release branch",
    "the ledger",
    "the website build",
    "the node pool upgrade",
    "the refund flow",
]
VERBS = [
    "fails",
    "is slow",
    "times out",
    "crashes on start",
    "needs a rewrite",
    "was reverted",
    "double counts entries",
    "leaks memory",
    "drops unicode paths",
    "ignores the config",
    "works again",
    "blocks the release",
    "returns stale results",
    "skips deleted notes",
]
CLAUSES = [
    "after we upgraded the dependency last week",
    "when two agents write to the same note at once",
    "because the FTS5 tokenizer splits on hyphens",
    "only on machines with two cores",
    "unless the cache directory already exists",
    "so I added a retry with exponential backoff",
    "and the fix is to rebuild the index from scratch",
    "which nobody noticed until the postmortem",
    "even though the unit tests all pass locally",
    "while the customer was waiting for a refund",
    "since the session is created on every command",
    "but only for notes with front matter",
]
QUESTIONS = [
    "how do I undo the last commit without losing my changes",
    "why does the search return nothing for short queries",
    "what is the fastest way to re-embed the whole vault",
    "where should idempotency keys be stored for the payments api",
    "should we pin the model version in the index metadata",
    "can the hook run without blocking the commit",
]
TAILS = [
    "See the handoff from Tuesday for the full timeline.",
    "TODO: measure it again on the CI runner.",
    "Decision: keep it simple and revisit in the next sprint.",
    "Nobody remembers why this was added in the first place.",
    "The benchmark numbers are in the plan document.",
]


def sentences(count: int, seed: int = 7, lo: int = 10, hi: int = 60) -> list[str]:
    """Deterministic, varied English-like notes of ``lo``-``hi`` words."""
    rng = random.Random(seed)  # noqa: S311 (test data, not secrets)
    out: list[str] = []
    while len(out) < count:
        parts = [
            rng.choice(QUESTIONS).capitalize() + "?"
            if rng.random() < 0.3
            else f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)}."
        ]
        target = rng.randint(lo, hi)
        while len(" ".join(parts).split()) < target:
            pick = rng.random()
            if pick < 0.5:
                parts.append(f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(CLAUSES)}.")
            elif pick < 0.8:
                parts.append(rng.choice(TAILS))
            else:
                parts.append(f"Also {rng.choice(SUBJECTS)} {rng.choice(VERBS)}.")
        out.append(" ".join(" ".join(parts).split()[:target]))
    return out


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


def wall(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, result.stdout


FRESH_EMBED = """
import sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from pathlib import Path
from brain.embed import load_embedder
t1 = time.perf_counter()
e = load_embedder("onnx", cache_dir=Path({cache!r}) if {cache!r} else None)
t2 = time.perf_counter()
e.embed(["how do I undo the last commit"])
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""

FRESH_SESSION = """
import os, sys, time
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
t0 = time.perf_counter()
import onnxruntime as ort
t1 = time.perf_counter()
o = ort.SessionOptions()
o.graph_optimization_level = getattr(ort.GraphOptimizationLevel, {level!r})
o.log_severity_level = 3
ort.InferenceSession({path!r}, sess_options=o, providers=["CPUExecutionProvider"])
t2 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000)
"""


def bench_fresh_process(runs: int) -> None:
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as cache:
        # Writes the stamp once and warms the page cache.
        wall([python, "-c", FRESH_EMBED.format(root=str(ROOT), cache=cache)])
        baseline: list[float] = []
        rows: dict[str, list[list[float]]] = {"stamp": [], "hash": []}
        walls: dict[str, list[float]] = {"stamp": [], "hash": []}
        for _ in range(runs):
            baseline.append(wall([python, "-c", "pass"])[0])
            for name, cache_dir in (("stamp", cache), ("hash", "")):
                code = FRESH_EMBED.format(root=str(ROOT), cache=cache_dir)
                seconds, out = wall([python, "-c", code])
                walls[name].append(seconds)
                rows[name].append([float(x) for x in out.split()])
    base = median_ms(baseline)
    print(
        f"fresh process, median of {runs} "
        f"(python -c pass = {base:.0f} ms [{min(baseline) * 1000:.0f}]):"
    )
    for name, label in (("stamp", "sha256 stamp in cache_dir"), ("hash", "no cache_dir: hash")):
        total = median_ms(walls[name])
        best = min(walls[name]) * 1000
        imp, load, first = (statistics.median(col) for col in zip(*rows[name], strict=True))
        print(
            f"  import+load+1 query ({label}): {total:.0f} ms [{best:.0f}]"
            f" = {total / base:.1f}x python;"
            f" import {imp:.0f}, load_embedder {load:.0f}, first embed {first:.0f} ms"
        )


def bench_session(runs: int, path: Path, label: str, levels: Sequence[str]) -> None:
    for level in levels:
        imports: list[float] = []
        sessions: list[float] = []
        for _ in range(runs):
            out = wall([sys.executable, "-c", FRESH_SESSION.format(level=level, path=str(path))])[1]
            imp, sess = (float(x) for x in out.split())
            imports.append(imp)
            sessions.append(sess)
        print(
            f"  {label}, {level}: import onnxruntime {statistics.median(imports):.0f} ms"
            f" [{min(imports):.0f}], session create {statistics.median(sessions):.0f} ms"
            f" [{min(sessions):.0f}]"
        )


def bench_throughput(embed_fn: Callable[..., object], texts: list[str], runs: int) -> str:
    cells = []
    embed_fn(texts[:64], batch_size=32)  # warm-up: first-run allocations
    for batch_size in (16, 32, 64):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            embed_fn(texts, batch_size=batch_size)
            times.append(time.perf_counter() - start)
        rate, best = len(texts) / statistics.median(times), len(texts) / min(times)
        cells.append(f"bs{batch_size} {rate:.0f}/s [{best:.0f}]")
    return ", ".join(cells)


def quantize(src: Path, workdir: Path) -> Path:
    """Per-channel dynamic int8, as the issue proposed. The shipped file's MatMul weights are
    Cast+Mul outputs, not initializers, so quantize_dynamic would find nothing to quantize:
    let onnxruntime constant-fold them first (basic level), then quantize the fp32 result."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folded = workdir / "folded.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(src), sess_options=options, providers=["CPUExecutionProvider"])
    quantized = workdir / "model-per-channel.onnx"
    start = time.perf_counter()
    quantize_dynamic(folded, quantized, per_channel=True, weight_type=QuantType.QInt8)
    print(f"  per-channel conversion: {time.perf_counter() - start:.1f} s (after folding)")
    folded.unlink()
    return quantized


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--no-quantized", action="store_true")
    args = parser.parse_args()

    import numpy as np

    texts = sentences(args.sentences)
    words = [len(t.split()) for t in texts]
    print(
        f"{len(texts)} sentences, {min(words)}-{max(words)} words; "
        f"model {embed.model_path()} ({embed.MODEL_SHA256[:12]})"
    )
    bench_fresh_process(args.runs)
    print(f"session create in a fresh process, median of {args.runs}:")
    bench_session(
        args.runs, embed.model_path(), "shipped model", ["ORT_DISABLE_ALL", "ORT_ENABLE_ALL"]
    )

    shipped = embed.load_embedder("onnx")
    assert shipped is not None
    runs = max(1, args.runs // 2)
    print(f"throughput, median of {runs}:")
    print(f"  shipped model: {bench_throughput(shipped.embed, texts, runs)}")

    if args.no_quantized:
        return
    if importlib.util.find_spec("onnx") is None:
        print("per-channel quantized model: skipped (the onnx package is not importable)")
        return
    with tempfile.TemporaryDirectory(prefix="bench-embed-q-") as tmp:
        quantized_path = quantize(embed.model_path(), Path(tmp))
        bench_session(args.runs, quantized_path, "per-channel model", ["ORT_DISABLE_ALL"])
        # Same pipeline (tokenizer, padding, pooling) with the other file; only the pin
        # check is bypassed, since the converted file is not the pinned one.
        original_verify = embed._verify_model
        embed._verify_model = lambda path, cache_dir: None
        try:
            quantized = embed._OnnxEmbedder(quantized_path)
        finally:
            embed._verify_model = original_verify
        print(f"  per-channel model: {bench_throughput(quantized.embed, texts, runs)}")
        sample = texts[:: max(1, len(texts) // 200)][:200]
        reference = shipped.embed(sample)
        mine = quantized.embed(sample)
        cos = np.sum(reference * mine, axis=1)
        # Does search change? Share of each sentence's 5 nearest neighbours that survive.
        ref_sim, q_sim = reference @ reference.T, mine @ mine.T
        np.fill_diagonal(ref_sim, -2)
        np.fill_diagonal(q_sim, -2)
        top5 = [
            len(set(r) & set(q)) / 5
            for r, q in zip(np.argsort(-ref_sim)[:, :5], np.argsort(-q_sim)[:, :5], strict=True)
        ]
        print(
            f"  cosine per-channel vs shipped over {len(sample)} sentences: mean {cos.mean():.4f},"
            f" min {cos.min():.4f}, 5th pct {np.percentile(cos, 5):.4f};"
            f" top-5 neighbour overlap {np.mean(top5):.3f}"
        )


if __name__ == "__main__":
    main()
