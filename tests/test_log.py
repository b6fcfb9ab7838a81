"""`brain log`: misses that still miss, grouped by query, with who asks."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import brain
from test_contract import KEYS

from brain import index, worker_client
from brain.commands import advisories
from brain.commands import log as logmod
from brain.commands.advisories import FREQUENT_MIN

LOG_KEYS = KEYS["`log`"]


def test_empty_log(vault: Path) -> None:
    doc = brain("log", "--vault", str(vault), "--json").json()
    assert list(doc) == LOG_KEYS
    assert (doc["lookups"], doc["misses"], doc["open"], doc["answered"]) == (0, 0, [], [])
    assert "No finds logged" in brain("log", "--vault", str(vault)).out


def test_misses_a_later_edit_answered_are_set_aside(vault: Path) -> None:
    v = str(vault)
    for who, q in [
        ("a", "xylophonist quokka"),
        ("b", "Xylophonist  quokka"),
        ("a", "zanzibar ferry"),
        ("a", "pygit2"),
    ]:
        brain("find", "--vault", v, q, env={"BRAIN_CALLER": who})
    doc = brain("log", "--vault", v, "--json").json()
    assert (doc["lookups"], doc["misses"]) == (4, 3)
    assert [(m["query"], m["count"]) for m in doc["open"]] == [
        ("Xylophonist  quokka", 2),
        ("zanzibar ferry", 1),
    ]
    assert list(doc["open"][0]) == ["query", "count", "last_date", "callers"]
    assert doc["open"][0]["callers"] == ["a", "b"]
    assert doc["callers"] == [{"caller": "a", "misses": 2}, {"caller": "b", "misses": 1}]
    core = vault / "AI" / "MEMORY.md"
    core.write_text(
        core.read_text(encoding="utf-8")
        + "\n- **zanzibar ferry** — the ferry leaves at nine — me — 2026-05-01\n",
        encoding="utf-8",
    )
    doc = brain("log", "--vault", v, "--json").json()
    assert [m["query"] for m in doc["open"]] == ["Xylophonist  quokka"]
    assert [(m["query"], m["hit_count"]) for m in doc["answered"]] == [("zanzibar ferry", 1)]
    assert list(doc["answered"][0]) == ["query", "count", "last_date", "hit_count"]
    text = brain("log", "--vault", v).out
    assert "Xylophonist" in text
    assert "synonyms.tsv" in text


def test_the_index_state_is_said_once_not_once_a_miss(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """log and doctor ask every logged query again; a keyword-only index while the worker
    embeds it was said on stderr once a query (13 lines in a doctor after install)."""
    v = str(vault)
    for q in ("xylophonist quokka", "zanzibar ferry", "marimba okapi"):
        brain("find", "--vault", v, q)
    for _ in range(FREQUENT_MIN):
        brain("find", "--vault", v, "libgit2 hooks")
    index.sync(vault)  # keywords only, as install builds it: the worker embeds it later
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "1")
    monkeypatch.setattr(worker_client, "spawn", lambda where, base=None: True)  # no process
    capsys.readouterr()
    said = "brain: keyword results for now: the vault is being embedded in the background\n"
    assert len(logmod.log(vault).open) == 3
    assert capsys.readouterr().err == said
    assert advisories.frequent_bullets(vault)
    assert capsys.readouterr().err == said
    # each command says it again: once is per command, not per process (the worker runs many)
    assert len(logmod.log(vault).open) == 3
    assert capsys.readouterr().err == said
