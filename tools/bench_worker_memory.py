#!/usr/bin/env python3
"""A warm worker's resident memory, and where it goes, for a generated vault of 300 bullets.

    .venv/bin/python tools/bench_worker_memory.py [--bullets 300] [--finds 1000] [--check] [--json]

The worker is the one process brain leaves running (one per vault, for ten idle minutes), so its
size is what a user sees in `top`. The bench generates a vault (tools/genvault.py), embeds it,
starts the vault's worker and reads its resident set (VmRSS, /proc) after start (the model loaded,
the vectors in memory: its warm-up done), after the first `brain find` and after --finds finds
(fresh `brain find` processes the worker answers, each query new until they cycle), so growth
shows. Where it goes is read two ways: the worker's own mappings (smaps: the shared libraries by
package, and the anonymous memory: Python's objects, numpy's arrays, ONNX Runtime's weights and
buffers), and the growth of a fresh process taking the worker's steps one at a time (brain's
modules, numpy, onnxruntime, the tokenizer, the session, the folded weights, the vectors and a
query, a keyword find). Linux only (/proc). --check exits 1 when the worker holds more than
TARGET_MB after start or after the finds (issue 29: <= 150 MB).
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # tools/ is not a package
from bench_hybrid import private_env, stop_workers  # noqa: E402
from genvault import generate  # noqa: E402

TARGET_MB = 150.0

# The worker's steps, one at a time, in a fresh process: each prints its VmRSS after.
STAGES = r"""
import json, sys
from pathlib import Path

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

vault = Path(sys.argv[1])
out = [("interpreter", rss())]
import brain.worker, brain.run, brain.commands.find, brain.search, brain.index
out.append(("brain's modules", rss()))
import numpy
out.append(("numpy", rss()))
import onnxruntime
out.append(("onnxruntime (import)", rss()))
from brain import embed
from tokenizers import Tokenizer
tok = Tokenizer.from_file(str(embed.TOKENIZER_PATH))
out.append(("tokenizer", rss()))
del tok
from brain import semantic, index
embedder = semantic.load()
out.append(("ONNX session (int8, as stored)", rss()))
fold = getattr(embedder, "fold_weights", None)
if fold is not None:
    fold()
getattr(embed, "release_memory", lambda: None)()  # as the worker does (none before issue 29)
out.append(("folded weights (fp32 session)", rss()))
conn = index.open_index(vault)
semantic.search(conn, embedder, "warm up", 1, str(vault))
conn.close()
out.append(("vectors, general questions, a query", rss()))
getattr(embed, "release_memory", lambda: None)()  # as the worker does after its warm-up
out.append(("released after the warm-up", rss()))
from brain.commands.find import find
find(vault, "warm up")
out.append(("a keyword find (SQLite, FTS5)", rss()))
print(json.dumps(out))
"""


def vm_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def by_mapping(pid: int) -> list[tuple[str, float]]:
    """The worker's resident memory by what is mapped: a package's shared libraries, the
    interpreter, or anonymous memory (heap and arenas), in MB, largest first."""
    sizes: collections.Counter[str] = collections.Counter()
    name = "?"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(None, 5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            path = head[5].strip() if len(head) > 5 else ""
            name = _owner(path)
        elif line.startswith("Rss:"):
            sizes[name] += int(line.split()[1])
    return [(k, v / 1024) for k, v in sizes.most_common()]


def _owner(path: str) -> str:
    if not path or path.startswith("[anon") or path == "[heap]":
        return "anonymous (heap, arenas, arrays, weights)"
    if path.startswith("["):
        return path  # [stack], [vdso], ...
    for package in ("onnxruntime", "numpy", "tokenizers", "pygit2", "cryptography", "yaml"):
        if f"/{package}" in path or f"/{package}." in path:
            return package
    if "python3" in path or "libpython" in path:
        return "the interpreter and its extension modules"
    if path.endswith(".onnx"):
        return "model.onnx (mapped)"
    return "other libraries and files"


def finds(brain: list[str], vault: str, queries: list[str], n: int, env: dict[str, str]) -> None:
    for i in range(n):
        subprocess.run(
            [*brain, "find", "--vault", vault, queries[i % len(queries)]],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )


def wait_warm(python: str, vault: str, env: dict[str, str], pid: int) -> None:
    """Until the worker answers a vector query: its model and vectors are loaded. The query is
    its own warm-up's ("warm up"), whose vector it kept: asking it embeds nothing more."""
    probe = (
        "import sys; from pathlib import Path; from brain import worker_client as w; "
        "a = w.ask(Path(sys.argv[1]), 'warm up', 1); sys.exit(0 if a.hits is not None else 1)"
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if subprocess.run([python, "-c", probe, vault], env=env, check=False).returncode == 0:
            return
        if not Path(f"/proc/{pid}").exists():
            raise SystemExit("the worker exited before it was warm")
        time.sleep(0.3)
    raise SystemExit("the worker was not warm within 300 s")


def main() -> int:  # noqa: PLR0915 - one bench, read top to bottom
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bullets", type=int, default=300)
    parser.add_argument("--finds", type=int, default=1000)
    parser.add_argument("--check", action="store_true", help=f"exit 1 above {TARGET_MB:g} MB")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not Path("/proc/self/smaps").exists():
        print("bench_worker_memory: needs Linux's /proc", file=sys.stderr)
        return 2

    tmp = Path(tempfile.mkdtemp(prefix="brain-bench-memory-"))
    env = private_env(tmp)
    env["PYTHONPATH"] = str(ROOT)
    (tmp / "run").mkdir(mode=0o700)
    run_dir = tmp / "run" / "brain"
    vault = tmp / "vault"
    made = generate(vault, bullets=args.bullets, notes=max(1, args.bullets // 20), seed=1)
    v = str(vault)
    python = sys.executable
    brain = [python, "-P", "-m", "brain"]
    doc: dict[str, object] = {"bullets": args.bullets, "finds": args.finds}
    worker = None
    try:
        alone = {**env, "BRAIN_WORKER": "0"}
        reindex = [*brain, "reindex", "--vault", v]
        subprocess.run(reindex, env=alone, capture_output=True, check=True)
        staged = subprocess.run(
            [python, "-c", STAGES, v], env=alone, capture_output=True, text=True, check=True
        )
        stages = json.loads(staged.stdout)
        log = (tmp / "worker.log").open("wb")
        worker = subprocess.Popen(
            [python, "-P", "-m", "brain.worker", v],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        wait_warm(python, v, env, worker.pid)
        start = vm_rss_mb(worker.pid)
        mappings = by_mapping(worker.pid)
        # the handles and the generator's query shapes: more than the worker keeps (256)
        queries = [*made.queries.values(), *made.handles]
        finds(brain, v, queries, 1, env)
        first = vm_rss_mb(worker.pid)
        finds(brain, v, queries, max(0, args.finds - 1), env)
        many = vm_rss_mb(worker.pid)
        if worker.poll() is not None:
            raise SystemExit("the worker exited during the finds: see its log")
        doc.update(
            start_mb=round(start, 1),
            first_find_mb=round(first, 1),
            after_finds_mb=round(many, 1),
            by_mapping_mb={k: round(mb, 1) for k, mb in mappings},
            stages_mb=[(name, round(mb, 1)) for name, mb in stages],
            distinct_queries=len(queries),
        )
    finally:
        if worker is not None and worker.poll() is None:
            worker.terminate()
            worker.wait(timeout=30)
        stop_workers(run_dir)
        shutil.rmtree(tmp, ignore_errors=True)

    over = max(start, many) > TARGET_MB
    if args.json:
        print(json.dumps(doc))
    else:
        print(f"worker for {args.bullets} bullets: resident memory (VmRSS)")
        print(f"  after start (warm)          {start:7.1f} MB")
        print(f"  after the first find        {first:7.1f} MB")
        print(f"  after {args.finds:5d} finds           {many:7.1f} MB ({len(queries)} queries)")
        print("the warm worker's resident memory by mapping:")
        for name, mb in mappings:
            if mb >= 0.5:
                print(f"  {name:42s} {mb:7.1f} MB")
        print("a fresh process taking the worker's steps (VmRSS after each, and its growth):")
        before = 0.0
        for name, mb in stages:
            print(f"  {name:42s} {mb:7.1f} MB  +{mb - before:6.1f}")
            before = mb
        print(f"target: <= {TARGET_MB:g} MB after start and after the finds")
    if args.check and over:
        print(f"bench_worker_memory: over {TARGET_MB:g} MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
