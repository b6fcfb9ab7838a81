"""`brain log`: misses that still miss, grouped by query, with who asks."""

from __future__ import annotations

from pathlib import Path

from conftest import brain
from test_contract import KEYS

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
