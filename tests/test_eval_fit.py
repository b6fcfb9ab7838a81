"""`tools/eval fit`'s listwise scorer on made-up queries (no model, no vault): it finds the one
minimum of its loss, and the weights it finds put each query's answer first."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import ROOT


def tools_eval() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("tools_eval", str(ROOT / "tools" / "eval"))
    spec = importlib.util.spec_from_loader("tools_eval", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def queries(truth: list[float], n: int, seed: int) -> list[tuple[Any, Any]]:
    """`n` queries of 30 candidates each; a query's answer is its candidate that `truth` scores
    highest (a second answer in every fifth query, as golden's multi-answer cases)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        x = rng.normal(size=(30, len(truth)))
        order = np.argsort(-(x @ np.array(truth)))
        y = np.zeros(30)
        y[order[: 2 if k % 5 == 0 else 1]] = 1.0
        out.append((x, y))
    return out


def test_the_listwise_fit_reaches_the_minimum_and_ranks_answers_first() -> None:
    ev = tools_eval()
    l2 = 0.5
    train = queries([2.0, -1.0, 0.0], 60, seed=1)
    w = ev._listwise(train, l2)
    gradient = l2 * w
    for x, y in train:
        p = np.exp(x @ w - (x @ w).max())
        p /= p.sum()
        gradient = gradient + y.sum() * (p @ x) - y @ x
    assert np.abs(gradient).max() < 1e-6  # the minimum (the loss is convex: the only one)
    assert w[0] > 0 > w[1]
    assert abs(w[2]) < 0.2 * w[0]  # the feature that tells nothing gets next to no weight
    held = queries([2.0, -1.0, 0.0], 60, seed=2)
    first = [bool(y[np.argmax(x @ w)]) for x, y in held]
    assert sum(first) >= 0.9 * len(held)


def unit_rows(*rows: list[float]) -> Any:
    """Word vectors, one a row, L2-normalised as MiniLM's contextual vectors are."""
    m = np.array(rows, dtype=float)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_late_interaction_matches_each_query_word_to_its_nearest_unit_word() -> None:
    ev = tools_eval()
    query = unit_rows([1, 0, 0], [0, 1, 0])
    # one unit holds a word for each query word, one a word for only the first, one nothing near
    both = unit_rows([0, 1, 0.1], [1, 0.1, 0], [0, 0, 1])
    first = unit_rows([1, 0, 0], [0, 0, 1])
    far = unit_rows([0, 0, 1])
    scores = ev._late_interaction(query, [both, first, far, np.zeros((0, 3))])
    expected_both = (1 / np.linalg.norm([1, 0.1, 0]) + 1 / np.linalg.norm([0, 1, 0.1])) / 2
    assert scores[0] == pytest.approx(expected_both)
    assert scores[1] == pytest.approx(0.5)  # the second query word finds nothing: cosine 0
    assert scores[2] == pytest.approx(0.0)
    assert scores[3] == 0.0  # a unit without words
    assert scores[0] > scores[1] > scores[2]


def test_only_topic_words_take_part() -> None:
    ev = tools_eval()
    vecs = np.eye(4)
    kept = ev._content(["who", "signs", "the", "?"], vecs)
    assert kept.tolist() == [vecs[1].tolist()]  # "who" and "the" are stopwords, "?" no word
    assert ev._content(["the", "a"], vecs[:2]).shape == (2, 4)  # all stopwords: keep them all


def test_ranked_gives_reciprocal_rank_and_recall_at_five() -> None:
    ev = tools_eval()
    y = np.zeros(8)
    y[[2, 7]] = 1.0
    scores = np.array([8.0, 7, 6, 5, 4, 3, 2, 1])  # answers at places 3 and 8
    assert ev._ranked(scores, y) == (pytest.approx(1 / 3), 0.5)
    assert ev._ranked(-scores, y) == (1.0, 0.5)  # reversed: places 1 and 6
