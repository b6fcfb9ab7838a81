"""Hybrid retrieval through the real path: the real ONNX model, the real index, the real CLI,
the real warm worker over its socket."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import ROOT, brain

from brain import config, index

ONNX = {"BRAIN_EMBED": "onnx", "BRAIN_WORKER": "0"}


@pytest.fixture(scope="module")
def embedded_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedded copy of the fixture vault for the module: embedding it costs seconds."""
    import shutil

    root = tmp_path_factory.mktemp("hybrid")
    shutil.copytree(ROOT / "testdata" / "vault", root / "vault")
    return root


@pytest.fixture
def hvault(embedded_state: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The embedded vault, with the state dir shared across this module's tests."""
    monkeypatch.setenv("XDG_STATE_HOME", str(embedded_state / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(embedded_state / "data"))
    vault = embedded_state / "vault"
    if not config.index_path(vault).exists():
        run = brain("reindex", "--vault", str(vault), "--json", env=ONNX)
        assert run.code == 0, run.err
    return vault


def find_json(vault: Path, query: str, **env: str) -> tuple[int, dict[str, object]]:
    run = brain("find", "--vault", str(vault), "--json", query, env={**ONNX, **env})
    assert "Traceback" not in run.err
    return run.code, json.loads(run.out)


@pytest.mark.slow
def test_reindex_embeds_every_unit_and_records_the_model(hvault: Path) -> None:
    conn = sqlite3.connect(config.index_path(hvault))
    model = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()[0]
    units, vectors = conn.execute(
        "SELECT (SELECT count(DISTINCT vhash) FROM units), (SELECT count(*) FROM vectors)"
    ).fetchone()
    conn.close()
    assert model.startswith("onnx:all-MiniLM-L6-v2")
    assert units == vectors > 100


@pytest.mark.slow
def test_a_paraphrase_keyword_search_misses_is_found_by_meaning(hvault: Path) -> None:
    query = "initial HTML and client output don't match in React"
    _, keyword = find_json(hvault, query, BRAIN_EMBED="none")
    handles = [h["handle"] for h in keyword["hits"]]  # type: ignore[index]
    assert "hydration mismatch" not in handles
    # The ranked list (`--all`): the answer is empty, since nothing vouches for the bullet and the
    # question's meaning is nearer a general React question than the bullet's (issue 27's
    # trade-off: search.FIND's weak_world, docs/commands.md).
    run = brain("find", "--vault", str(hvault), "--json", "--all", query, env=ONNX)
    assert run.code == 0, run.err
    hybrid = json.loads(run.out)
    top = hybrid["hits"][0]
    assert top["handle"] == "hydration mismatch"
    assert "semantic" in top["match"]


@pytest.mark.slow
def test_match_says_which_signals_found_a_hit(hvault: Path) -> None:
    code, doc = find_json(hvault, "libgit2 hooks skipped")
    assert code == 0
    top = doc["hits"][0]  # type: ignore[index]
    assert top["handle"] == "libgit2"
    assert {"handle", "keyword", "semantic"} <= set(top["match"])


@pytest.mark.slow
def test_exact_handle_rule_still_holds_on_top_of_fusion(hvault: Path) -> None:
    _, doc = find_json(hvault, "libgit2")
    hits = doc["hits"]  # type: ignore[index]
    assert hits[0]["handle"] == "libgit2"
    assert "exact" in hits[0]["match"]
    assert len(hits) < 10


@pytest.mark.slow
def test_prefix_rule_still_holds_on_top_of_fusion(hvault: Path) -> None:
    _, doc = find_json(hvault, "renova")
    assert doc["hits"][0]["handle"] == "renovate grouping"  # type: ignore[index]


@pytest.mark.slow
@pytest.mark.parametrize("query", ["kafka partition rebalancing", "haskell monad transformers"])
def test_a_question_the_vault_cannot_answer_comes_back_empty(hvault: Path, query: str) -> None:
    code, doc = find_json(hvault, query)
    assert code == 1
    assert doc["hits"] == []
    log = sqlite3.connect(config.usage_log_path())
    entries = log.execute(
        "SELECT entries FROM events WHERE query = ? ORDER BY ts DESC", (query,)
    ).fetchone()
    assert entries == (0,)  # logged as a miss


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "handle"),
    [("creds in logs", "secrets in output"), ("gc tuning", "gomemlimit")],
)
def test_the_vector_half_reads_the_vaults_synonyms(
    hvault: Path, monkeypatch: pytest.MonkeyPatch, query: str, handle: str
) -> None:
    """synonyms.tsv says `creds` is credentials and `gc` garbage collection; the model alone
    does not know (plain vectors put those bullets 16th and 23rd)."""
    from brain.commands.find import find

    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "0")
    assert find(hvault, query, mode="vector").hits[0].handle == handle
    assert find(hvault, query).hits[0].handle == handle


@pytest.mark.slow
def test_an_edit_re_embeds_only_what_changed(hvault: Path) -> None:
    memory = hvault / "AI" / "MEMORY.md"
    before = memory.read_text(encoding="utf-8")
    try:
        memory.write_text(
            before + "- **tide tables** — the harbour tide tables live in the boat locker"
            " — test — 2026-11-30\n",
            encoding="utf-8",
        )
        run = brain("reindex", "--vault", str(hvault), "--json", env=ONNX)
        assert run.code == 0, run.err
        assert run.json()["embedded"] == 1
    finally:
        memory.write_text(before, encoding="utf-8")
        brain("reindex", "--vault", str(hvault), env=ONNX)


@pytest.mark.slow
def test_worker_gives_identical_results_to_in_process(hvault: Path) -> None:
    queries = ["people paid double when the card processor was sluggish", "k8s upgrade"]
    inline = [find_json(hvault, q)[1] for q in queries]
    env = {"BRAIN_WORKER": "1", "BRAIN_WORKER_IDLE": "30"}
    first = find_json(hvault, queries[0], **env)[1]  # starts the worker, answers in-process
    assert first == inline[0]
    sock = _worker_socket(hvault)
    deadline = time.monotonic() + 60
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sock.exists(), "the first hybrid find should have started a worker"
    try:
        # It listens at once but answers `busy` (keywords, and a line on stderr) until the model
        # has loaded; compare once it answers.
        args = ("find", "--vault", str(hvault), queries[1])
        while brain(*args, env={**ONNX, **env}).err and time.monotonic() < deadline:
            time.sleep(0.2)
        served = [find_json(hvault, q, **env)[1] for q in queries]
        assert served == inline
    finally:
        _stop_worker(sock)


def _worker_socket(vault: Path) -> Path:
    env = {**os.environ, **ONNX, "BRAIN_WORKER": "1"}
    code = "import sys; from pathlib import Path; from brain import worker_client; "
    code += "print(worker_client.base_of(Path(sys.argv[1])).with_suffix('.sock'))"
    out = subprocess.run(
        [sys.executable, "-c", code, str(vault)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.strip()
    return Path(out)


def _stop_worker(sock: Path) -> None:
    """Stop the worker by the pid it recorded (never by name: that would stop every user's)."""
    os.kill(json.loads(sock.with_suffix(".json").read_text())["pid"], signal.SIGTERM)
    deadline = time.monotonic() + 10
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.mark.slow
def test_worker_exits_after_its_idle_time(hvault: Path) -> None:
    env = {**os.environ, **ONNX, "BRAIN_WORKER_IDLE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "brain.worker", str(hvault)], env=env)
    try:
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert not _worker_socket(hvault).exists()


class _Embeddings(BaseHTTPRequestHandler):
    """An Ollama-shaped embedding server on loopback: deterministic vectors from the text."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        vectors = [[float(len(t) % 7 + 1), float(t.count("e") + 1), 1.0] for t in body["input"]]
        data = json.dumps({"embeddings": vectors}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def ollama() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _use_ollama(url: str) -> None:
    cfg = config.config_dir()
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "brain.yaml").write_text(
        f"embed:\n  provider: ollama\n  model: fake\n  url: {url}\n", encoding="utf-8"
    )


def test_a_new_model_re_embeds_everything(vault: Path, ollama: str) -> None:
    _use_ollama(ollama)
    first = brain("reindex", "--vault", str(vault), "--json", env={"BRAIN_EMBED": ""})
    assert first.code == 0, first.err
    doc = first.json()
    assert doc["model"] == f"ollama:fake@{ollama}"
    total = doc["embedded"]
    assert total > 100
    again = brain("reindex", "--vault", str(vault), "--json", env={"BRAIN_EMBED": ""})
    assert again.json()["embedded"] == 0
    other = brain("reindex", "--vault", str(vault), "--json", env={"BRAIN_EMBED": "ollama:other"})
    assert other.json()["embedded"] == total


def test_a_model_that_cannot_load_falls_back_to_keywords(vault: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _use_ollama(f"http://127.0.0.1:{server.server_address[1]}")
    assert brain("reindex", "--vault", str(vault), env={"BRAIN_EMBED": ""}).code == 0
    server.shutdown()
    server.server_close()  # the same model id, but its server is gone
    env = {"BRAIN_EMBED": "", "BRAIN_WORKER": "0"}
    run = brain("find", "--vault", str(vault), "--json", "libgit2 hooks", env=env)
    assert run.code == 0
    assert run.json()["hits"][0]["handle"] == "libgit2"
    warnings = [line for line in run.err.splitlines() if line]
    assert len(warnings) == 1
    assert warnings[0].startswith("brain: keyword results only")
    assert "Traceback" not in run.err


def test_keyword_only_mode_imports_no_numpy(vault: Path) -> None:
    index.sync(vault)
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "brain", "find", "--vault", str(vault), "x"],
        capture_output=True,
        text=True,
        env={**os.environ, "BRAIN_EMBED": "none"},
        check=False,
    )
    assert " numpy" not in run.stderr


def test_an_index_not_yet_embedded_answers_from_keywords_and_says_how_to_fix_it(
    vault: Path,
) -> None:
    run = brain("find", "--vault", str(vault), "libgit2 hooks", env=ONNX)
    assert run.code == 0
    assert run.out.startswith("AI/LEARNINGS.md:")
    assert run.err == "brain: keyword results for now: run `brain reindex` to embed the vault\n"


def test_the_vector_query_drops_words_most_of_the_vault_shares(tmp_path: Path) -> None:
    from brain import search

    vault = tmp_path / "v"
    (vault / "AI").mkdir(parents=True)
    lines = ["# Memory", ""]
    for i in range(30):
        speaker = "alice" if i % 3 else "bob"  # alice in two thirds of the bullets
        lines.append(f"- **fact {i}** — {speaker} mentioned topic{i} at lunch — chat — 2026-01-01")
    (vault / "AI" / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    conn = index.open_index(vault)
    try:
        assert search.vector_query(conn, "What did Alice say about topic7?") == (
            "What did say about topic7?"
        )
        assert search.vector_query(conn, "alice") == "alice"  # nothing else left: kept whole
        assert search.vector_query(conn, "bob and topic3") == "bob and topic3"
    finally:
        conn.close()


def test_whether_a_question_is_answered_depends_on_how_much_of_it_the_vault_knows(
    tmp_path: Path,
) -> None:
    """With no vector standing out (flat cosines), a keyword hit holding one word of a long
    question answers it when the vault knows most of the question's words, and a query mostly
    in words the vault has never seen comes back empty even though one of its words matches."""
    from brain import search

    vault = tmp_path / "v"
    (vault / "AI").mkdir(parents=True)
    (vault / "notes").mkdir()
    lines = [f"Bob mentioned topic{i} over lunch." for i in range(30)]
    lines += [
        "Bob has three kids and takes them camping every summer.",
        "Alice volunteers at a library that runs reading clubs for children.",
        "Many people underestimate how hard teaching is.",
        "The release build runs the compilation step twice on cold caches.",
    ]
    note = "# Chat, 2026-01-01\n\n" + "\n".join(lines) + "\n"
    (vault / "notes" / "2026-01-01-chat.md").write_text(note, encoding="utf-8")
    conn = index.open_index(vault)
    try:
        flat = [(uid, 0.3) for (uid,) in conn.execute("SELECT id FROM units LIMIT 100")]

        def ask(text: str) -> list[str]:
            query = search.parse_query(text, {})
            return [h.text for h in search.hybrid_rank(conn, query, flat)]

        # `many`, `children` and `bob` are all known; the best hit holds one word in four.
        answered = ask("How many children does Bob have at home?")
        assert any("three kids" in t for t in answered)
        # Only `compilation` is known: a topic the vault does not hold.
        assert ask("godot shader compilation") == []
    finally:
        conn.close()


def test_the_vector_query_carries_the_vaults_synonyms(tmp_path: Path) -> None:
    """The model reads each synonym the vault defines for a word of the query, as the file
    spells it, after the query; none that the query says already, none past what it reads."""
    from brain import search

    vault = tmp_path / "v"
    (vault / "AI").mkdir(parents=True)
    lines = ["# Memory", ""]
    lines += [f"- **fact {i}** — topic{i} came up at lunch — chat — 2026-01-01" for i in range(30)]
    (vault / "AI" / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    synonyms = "term\texpansion\ncreds\tcredentials\noom\tout of memory\nrefund\t退款申请\n"
    (vault / "AI" / "synonyms.tsv").write_text(synonyms, encoding="utf-8")
    conn = index.open_index(vault)
    try:
        assert search.vector_query(conn, "creds in logs") == "creds in logs (credentials)"
        assert search.vector_query(conn, "pod OOM killed") == "pod OOM killed (out of memory)"
        assert search.vector_query(conn, "refund policy") == "refund policy (退款申请)"
        assert search.vector_query(conn, "Out of memory?") == "Out of memory? (oom)"
        said = "creds and credentials"  # both sides said: nothing to add
        assert search.vector_query(conn, said) == said
        assert search.vector_query(conn, "lunch") == "lunch"
        full = " ".join(["creds", *(f"w{i}" for i in range(search.VECTOR_WORDS - 1))])
        assert search.vector_query(conn, full) == full  # the model reads no further
    finally:
        conn.close()


def test_the_scorer_tells_a_bullet_from_a_paragraph(tmp_path: Path) -> None:
    """A bullet is the vault's own statement of a fact: the scorer sees which a candidate is, and
    the fitted scorer ranks a bullet above a paragraph that both halves found alike."""
    from brain import search

    vault = tmp_path / "v"
    (vault / "AI").mkdir(parents=True)
    (vault / "notes").mkdir()
    lines = ["# Memory", ""]
    lines += [f"- **fact {i}** — topic{i} came up at lunch — chat — 2026-01-01" for i in range(30)]
    (vault / "AI" / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    note = "# Lunch\n\nThe topic3 came up at lunch.\n"  # dated after the bullets, by its name
    (vault / "notes" / "2026-03-01-lunch.md").write_text(note, encoding="utf-8")
    conn = index.open_index(vault)
    try:
        ranked = search.keyword_rank(conn, search.parse_query("topic3", {}))
        by_text = {t: uid for uid, t in conn.execute("SELECT id, text FROM units")}
        paragraph = by_text["The topic3 came up at lunch."]
        fact = by_text["topic3 came up at lunch"]
        found = search.candidates(conn, ranked, [(paragraph, 0.8), (fact, 0.8)])
        hits = {h.id: h for h in found.hits}
        features = dict(zip(hits, found.features, strict=True))
        kind = search.FEATURES.index("bullet")
        assert features[paragraph][kind] == 0.0
        assert features[fact][kind] == 1.0
        # Twins but for their kind (the paragraph, newer, would win a tie): the bullet first.
        as_paragraph = tuple(0.0 if k == kind else v for k, v in enumerate(features[fact]))
        twins = search.Candidates([hits[paragraph], hits[fact]], [as_paragraph, features[fact]])
        order = search.score_candidates(twins, search.fusion_model())
        assert [h.id for h in order] == [fact, paragraph]
    finally:
        conn.close()
