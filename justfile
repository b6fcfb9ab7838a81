# Everyday verbs. `just` is optional: each recipe is one line you can paste.

# set up .venv and run ruff, mypy and the tests
test *ARGS:
    tools/test {{ARGS}}

# lint and type-check only
lint:
    .venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy

# the speed benchmark (10,000 bullets, 500 notes)
bench:
    .venv/bin/python tools/bench

# a find in the fixture vault
demo QUERY="libgit2 hooks":
    .venv/bin/brain find --vault testdata/vault "{{QUERY}}"

# the installers, the release workflow and `brain update`, against a release server on 127.0.0.1
test-installer *ARGS:
    .venv/bin/python -m pytest tests/test_installer.py tests/test_release.py {{ARGS}}

# retrieval quality: the golden set (keyword, vector, hybrid) and LoCoMo from ../shared
eval:
    .venv/bin/python tools/eval golden && .venv/bin/python tools/eval locomo && .venv/bin/python tools/eval_recall && .venv/bin/python tools/eval_history.py

# the other benchmarks: hybrid find, embedding, hooks, pack, mcp, recall
bench-all:
    .venv/bin/python tools/bench_hybrid.py && .venv/bin/python tools/bench_embed.py && .venv/bin/python tools/bench_hooks.py --embed onnx && .venv/bin/python tools/bench_pack.py && .venv/bin/python tools/bench_mcp.py && .venv/bin/python tools/bench_recall.py && .venv/bin/python tools/bench_history.py
