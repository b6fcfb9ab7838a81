"""A long query (a pasted log, traceback or file) costs about what a question does: find, prime
and recall search its MAX_TERMS most telling terms (brain.vocab.telling), and the vector half
reads no more of it than the model does. Counted, not timed: the statements sent to SQLite and
the terms in them."""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import ROOT, brain

from brain import index, search, vocab
from brain.commands.find import find_in
from brain.present import ECHO_CHARS
from brain.recall import search as recall_search
from brain.recall import store
from brain.vocab import MAX_TERMS, SHORTLIST

WORDS = 15_000
PHRASE = re.compile(r'"(?:[^"]|"")*"')  # a quoted FTS5 term, as brain.vocab.fts_phrase writes it


def pasted_log(words: int, named: str, seed: int = 1) -> str:
    """A service's log of `words` words (timestamps, levels, hex ids, counts, paths and a few
    English words), with one line that says `named` in its middle."""
    rng = random.Random(seed)  # noqa: S311 - a fixed text, not a secret
    verbs = "retrying request failed timeout connecting pool exhausted cache miss".split()
    lines: list[str] = []
    count = 0
    while count < words:
        line = (
            f"2026-11-{rng.randint(1, 30):02d}T{rng.randint(0, 23):02d}:00:00Z"
            f" {rng.choice(['INFO', 'WARN', 'ERROR'])} job {rng.getrandbits(48):012x}"
            f" {rng.choice(verbs)} /v1/{rng.getrandbits(32):08x} {rng.randint(1, 99999)}"
        )
        lines.append(line)
        count += len(line.split())
    lines.insert(len(lines) // 2, f"ERROR payments: {named} rejected the webhook")
    return "\n".join(lines)


@contextmanager
def statements(conn: sqlite3.Connection) -> Iterator[list[str]]:
    """Every statement `conn` runs inside the block, its parameters bound in."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)


def test_a_short_query_keeps_every_term() -> None:
    terms = [f"t{k}" for k in range(MAX_TERMS)]
    assert vocab.telling(terms, lambda k: pytest.fail("no count is needed")) == list(range(64))


def test_of_a_long_query_the_held_terms_rarest_first_then_the_others_in_order() -> None:
    terms = [f"t{k}" for k in range(80)]
    # t0-t59 held by 1-3 units, t70 by 100, the others by none
    kept = vocab.telling(terms, lambda k: k % 3 + 1 if k < 60 else 100 if k == 70 else 0)
    assert kept == [*range(60), 60, 61, 62, 70]
    # of more held terms than fit, the commonest are dropped
    kept = vocab.telling(terms, lambda k: 2 if k < 60 else 1 if k < 70 else 9)
    assert kept == [*range(54), *range(60, 70)]  # the rarest, then ties in query order


def test_a_named_handle_comes_first_and_counts_are_asked_for_a_shortlist_only() -> None:
    terms = [f"t{k}" for k in range(5 * SHORTLIST)]
    asked: list[int] = []

    def held(k: int) -> int:
        asked.append(k)
        return 1 if k != 900 else 50  # the named word is the commonest of all

    kept = vocab.telling(terms, held, named={"t900"})
    assert len(asked) == SHORTLIST
    assert 900 in kept


def test_english_rank_puts_names_and_jargon_past_every_english_word() -> None:
    assert vocab.english_rank("the") < vocab.english_rank("kubernetes")
    assert vocab.english_rank("paynova") == vocab.NOT_ENGLISH


def test_a_huge_query_sends_a_bounded_number_of_terms_to_fts5(vault: Path) -> None:
    text = pasted_log(WORDS, "paynova status field")
    conn = index.open_index(vault)
    try:
        with statements(conn) as sent:
            result = find_in(conn, vault, text, mode="keyword")
    finally:
        conn.close()
    matches = [s for s in sent if "MATCH" in s]
    # The cut's counts (2 per shortlisted term), then the ranking's (2 per term, and the BM25
    # shortlist); the old code sent 2 per distinct word of the text and one of all of them.
    assert len(matches) <= 2 * SHORTLIST + 2 * MAX_TERMS + 2
    assert max(len(PHRASE.findall(s)) for s in matches) <= 4 * MAX_TERMS
    assert result.hits[0].handle == "paynova status field"


def test_a_pasted_log_that_names_a_bullet_finds_it_through_the_cli(vault: Path) -> None:
    lines = pasted_log(WORDS, "paynova status field", seed=2).splitlines()
    run = brain("find", "--vault", str(vault), "--terse", *lines)  # an argument a line
    assert run.code == 0, run.err
    assert run.out.startswith("AI/MEMORY.md:21 paynova status field — ")


def test_find_json_of_a_pasted_log_fits_its_budget_and_echoes_the_start(vault: Path) -> None:
    """The answer echoes the query's first ECHO_CHARS characters: echoing all of it made every
    query over about 2 KB fail with '--budget 2400 cannot hold even an empty JSON answer'."""
    text = pasted_log(2_000, "paynova status field", seed=3)
    run = brain("find", "--vault", str(vault), "--json", text)
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["hits"][0]["handle"] == "paynova status field"
    assert doc["query"] == text[: ECHO_CHARS - 1].rstrip() + "…"
    listing = brain("find", "--vault", str(vault), "--json", "--budget", "800", text)
    assert listing.code == 0, listing.err  # the envelope is small enough for a small budget too


def test_the_vector_half_reads_what_the_model_reads(vault: Path) -> None:
    conn = index.open_index(vault)
    try:
        short = "why are git hooks skipped when committing from python"
        assert search.vector_query(conn, short) == short
        text = " ".join(f"word{k}" for k in range(WORDS))
        with statements(conn) as sent:
            cut = search.vector_query(conn, text)
    finally:
        conn.close()
    assert cut.split() == text.split()[: search.VECTOR_WORDS]
    counts = [s for s in sent if "MATCH" in s]
    assert len(counts) == search.VECTOR_WORDS  # a count per distinct word it read


def test_recall_searches_the_telling_words_of_a_pasted_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "testdata" / "transcripts" / "claude", tmp_path / "claude")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    assert brain("recall", "--enable", "claude", env=env).code == 0
    lines = pasted_log(WORDS, "paynova checkout").splitlines()
    doc = brain("recall", "--json", *lines, env=env).json()
    assert doc["hits"][0]["title"] == "Checkout webhook fix"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", env["CLAUDE_CONFIG_DIR"])
    conn = store.connect()
    try:
        words = recall_search.focus(conn, recall_search.terms("\n".join(lines)))
    finally:
        conn.close()
    assert len(words) == MAX_TERMS
    assert {"paynova", "checkout", "webhook"} <= set(words)
