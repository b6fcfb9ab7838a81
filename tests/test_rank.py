"""What `brain find` serves: synonyms as phrases, everyday words that are also handle words,
near-duplicates served once, queries of only stopwords (keyword mode; the model-backed paths are
in tests/test_hybrid.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, brain

from brain import index, search
from brain.commands.find import find

FILLER = "widget sprocket gasket flange bracket hinge spindle bearing pulley lever rivet washer"


def bullet(handle: str, fact: str, date: str = "2025-01-01") -> str:
    return f"- **{handle}** — {fact} — ops — {date}"


def make_vault(root: Path, bullets: list[str], synonyms: str = "") -> Path:
    """A vault of `bullets` and thirty filler bullets, so that BM25's IDF means something."""
    words = FILLER.split()
    filler = [
        bullet(f"filler {i}", " ".join(words[(i + k) % len(words)] for k in range(8)))
        for i in range(30)
    ]
    (root / "AI").mkdir(parents=True)
    text = "# Memory\n\n## Things\n\n" + "\n".join([*bullets, *filler]) + "\n"
    (root / "AI" / "MEMORY.md").write_text(text, encoding="utf-8")
    (root / "AI" / "LEARNINGS.md").write_text("", encoding="utf-8")
    (root / "AI" / "TUNINGS.md").write_text("", encoding="utf-8")
    (root / "AI" / "synonyms.tsv").write_text("term\texpansion\n" + synonyms, encoding="utf-8")
    return root.resolve()


def handles(vault: Path, query: str) -> list[str]:
    """The ranked list (`--all`): these are the ranking's rules; the cut is tests/test_cut.py's."""
    return [h.handle for h in find(vault, query, mode="keyword", ranked=True).hits]


# --- synonyms as phrases ---------------------------------------------------------------------

PHRASES = [
    bullet("sepa mandates", "a Lastschrift needs a signed mandate before the first collection"),
    bullet("card payouts", "card payouts settle by direct debit from the merchant's bank account"),
    bullet("refund window", "refunds are accepted for 180 days after the charge"),
    bullet("debit notes", "a debit note corrects an invoice upwards"),
]


def test_a_multi_word_synonym_is_a_phrase_in_the_query(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", PHRASES, "direct debit\tlastschrift\n")
    found = handles(vault, "direct debit authorization")
    assert set(found[:2]) == {"card payouts", "sepa mandates"}
    assert "debit notes" not in found  # one word of the phrase is not the phrase


def test_a_synonym_row_works_in_both_directions(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", PHRASES, "direct debit\tlastschrift\n")
    found = handles(vault, "lastschrift")
    assert set(found) == {"sepa mandates", "card payouts"}  # not "debit notes": a phrase


def test_a_row_with_a_phrase_on_the_left_finds_the_right_from_the_phrase(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", PHRASES, "sepa direct debit\tlastschrift\n")
    assert "sepa mandates" in handles(vault, "sepa direct debit rules")


def test_an_expansion_of_several_words_matches_its_words_apart(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", PHRASES, "chargeback\trefunds days\n")
    assert handles(vault, "chargeback") == ["refund window"]  # "refunds are ... 180 days"


def test_bad_synonym_rows_are_harmless(tmp_path: Path) -> None:
    rows = "\t\nthe\tand\nmandate\tthe\n\tmandate\n"  # empty rows and sides; stopwords
    vault = make_vault(tmp_path / "v", PHRASES, rows)
    conn = index.open_index(vault)
    try:
        table = search.load_synonyms(conn)
    finally:
        conn.close()
    assert table == {}
    run = brain("find", "--vault", str(vault), "--json", "mandate", env={"BRAIN_EMBED": "none"})
    assert run.code == 0, run.err
    assert [h["handle"] for h in run.json()["hits"]] == ["sepa mandates"]


# --- everyday words that are handle words ----------------------------------------------------

GO = [
    bullet("go race detector", "run go test with -race in CI for every package"),
    bullet("go error wrapping", "wrap Go errors with fmt.Errorf and %w"),
    bullet("go modules", "go modules are vendored in the payments repository"),
    bullet("go memory limit", "set GOMEMLIMIT to 90% of the container limit"),
    bullet("pgbouncer pooler", "the pooler in transaction mode rejects named prepared statements"),
]


def test_an_everyday_word_in_a_question_does_not_drag_in_its_handles(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", GO)
    assert handles(vault, "why can't the queue go through the pooler") == ["pgbouncer pooler"]


def test_the_everyday_word_alone_still_finds_its_handles(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", GO)
    assert {"go race detector", "go modules", "go error wrapping"} <= set(handles(vault, "go"))
    assert handles(vault, "go modules")[0] == "go modules"
    assert handles(vault, "go race")[0] == "go race detector"


def test_a_rare_handle_word_in_a_question_still_counts_as_a_handle(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", GO)
    assert handles(vault, "why does the pgbouncer reject my statement")[0] == "pgbouncer pooler"


def test_everyday_is_the_commonest_english_words() -> None:
    assert search.everyday("go")
    assert search.everyday("run")
    assert not search.everyday("pooler")
    assert not search.everyday("kubernetes")
    assert not search.everyday("direct debit")


# --- near-duplicates -------------------------------------------------------------------------


def test_near_duplicates_are_served_once_the_newer(tmp_path: Path) -> None:
    fact = "no production deploys of payments during the external audit week; ask Priya first"
    vault = make_vault(
        tmp_path / "v",
        [
            bullet("audit freeze", fact, "2025-03-10"),
            bullet("audit freeze again", fact, "2026-09-02"),
            bullet("audit scope", "the external audit covers the ledger and payouts only"),
        ],
    )
    for mode in ("keyword", "hybrid", "vector"):
        listed = find(vault, "external audit deploys", mode=mode, ranked=True)
        names = [h.handle for h in listed.hits]
        assert "audit freeze again" in names, mode
        assert "audit freeze" not in names, mode
        assert "audit scope" in names, mode


def test_a_duplicate_keeps_the_better_rank(tmp_path: Path) -> None:
    fact = "no production deploys of payments during the external audit week; ask Priya first"
    vault = make_vault(
        tmp_path / "v",
        [
            bullet("audit freeze", fact + " external audit", "2025-03-10"),
            bullet("audit scope", "the external audit covers the ledger and payouts only"),
            bullet("freeze", fact, "2026-09-02"),
        ],
    )
    hits = find(vault, "external audit", mode="keyword", ranked=True).hits
    assert [h.handle for h in hits] == ["freeze", "audit scope"]


def test_units_that_merely_share_words_are_both_served(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        [
            bullet("refund window", "refunds are accepted for 180 days after the charge"),
            bullet("refund fees", "refunds are free for the first 30 days after the charge"),
        ],
    )
    assert {"refund window", "refund fees"} <= set(handles(vault, "refunds days charge"))


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["what is the", "AND", "why would it"])
def test_a_query_of_only_stopwords_is_an_honest_nothing(query: str) -> None:
    run = brain("find", "--vault", str(FIXTURE_VAULT), "--json", query, env={"BRAIN_EMBED": "none"})
    assert run.code == 1, run
    assert "Traceback" not in run.err
    assert json.loads(run.out)["hits"] == []


def test_a_stopword_handle_is_still_found(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", [bullet("it", "the IT desk is on the second floor")])
    assert handles(vault, "it") == ["it"]
