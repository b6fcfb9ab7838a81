"""`tools/eval fit`'s listwise scorer on made-up queries (no model, no vault): it finds the one
minimum of its loss, and the weights it finds put each query's answer first."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from types import ModuleType
from typing import Any

import numpy as np
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
