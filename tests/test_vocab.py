"""brain.vocab, the one text vocabulary: one handle key everywhere (propose and locate agree with
lint), FTS5 phrases safe for any word, and no second copy of a concept anywhere in brain/."""

from __future__ import annotations

import ast
import itertools
import sqlite3
from pathlib import Path

import pytest
from conftest import brain

from brain import vocab

BRAIN = Path(__file__).resolve().parents[1] / "brain"
# "pre-commit cache" is AI/LEARNINGS.md:10 of the fixture vault
SPELLINGS = ["pre commit cache", "Pre-Commit  Cache", "pre_commit cache", "prè-commit cache"]


@pytest.mark.parametrize("name", SPELLINGS)
def test_one_handle_key_for_every_spelling(name: str) -> None:
    assert vocab.handle_key(name) == vocab.handle_key("pre-commit cache") == "pre commit cache"


def test_lint_calls_two_spellings_of_a_handle_one_handle(vault: Path) -> None:
    memory = vault / "AI" / "MEMORY.md"
    with memory.open("a", encoding="utf-8") as f:
        f.write("- **Pre Commit cache** — a second bullet of the same handle — me — 2026-01-02\n")
    run = brain("lint", "--vault", str(vault), "--json")
    assert run.code == 1
    found = [(p["path"], p["line"], p["message"]) for p in run.json()["problems"]]
    assert any(
        (path, line) == ("AI/LEARNINGS.md", 10) and "duplicate handle 'pre-commit cache'" in text
        for path, line, text in found
    ), found


def test_propose_and_inbox_see_the_core_bullet_of_the_same_handle_spelt_otherwise(
    vault: Path,
) -> None:
    """Fixed: propose and the inbox folded spacing only, so `pre commit cache` proposed beside
    the core file's `pre-commit cache` was taken for a new handle, where lint sees one."""
    line = "pre commit cache — run pre-commit clean after every Python upgrade"
    run = brain("propose", line, "--vault", str(vault), "--json")
    assert run.code == 1  # a correction of that bullet, which takes --force
    assert "**pre commit cache** is already a bullet (AI/LEARNINGS.md:10)" in run.json()["error"]
    run = brain("propose", line, "--vault", str(vault), "--json", "--force")
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["action"] == "proposed"
    assert doc["updates"] == "AI/LEARNINGS.md:10"
    assert doc["current"].startswith("- **pre-commit cache** (aliases: pre-commit,")
    listed = brain("inbox", "--vault", str(vault), "--json").json()["proposals"]
    assert [(p["handle"], p["updates"]) for p in listed if p["handle"] == "pre commit cache"] == [
        ("pre commit cache", "AI/LEARNINGS.md:10")
    ]


def test_locate_finds_a_handle_by_its_words(vault: Path) -> None:
    """Fixed: locate folded spacing only, so `pre commit cache` did not find `pre-commit cache`."""
    run = brain("locate", "pre commit cache", "--vault", str(vault), "--json")
    assert run.code == 0, run.err
    assert [(m["path"], m["line"]) for m in run.json()["matches"]] == [("AI/LEARNINGS.md", 10)]


def test_verify_picks_a_bullet_by_its_handle_spelt_otherwise(vault: Path) -> None:
    """Fixed: verify folded spacing only, so `pre commit cache` named no bullet."""
    run = brain("verify", "pre commit cache", "--vault", str(vault), "--json")
    assert run.code in (0, 1), run.err  # 1 would be a failed claim, not a missing handle
    assert [b["handle"] for b in run.json()["bullets"]] == ["pre-commit cache"]


@pytest.mark.parametrize("word", ["not", "and", 'say "hi"', "col:umn", "x*", "(", '"'])
def test_fts_phrase_is_a_phrase_for_any_text(word: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    conn.executemany("INSERT INTO t(body) VALUES (?)", [(f"we {word} here",), ("other",)])
    sql = "SELECT count(*) FROM t WHERE t MATCH ?"
    expected = 1 if vocab.words(word) else 0  # punctuation alone is no token: nothing to find
    assert conn.execute(sql, (vocab.fts_phrase([word]),)).fetchone()[0] == expected
    assert conn.execute(sql, (vocab.fts_phrase(["we", word]),)).fetchone()[0] == 1
    if vocab.words(word):
        assert conn.execute(sql, (vocab.fts_phrase([word[:1]], prefix=True),)).fetchone()[0] == 1


def test_chat_stopwords_build_on_the_plain_ones() -> None:
    assert vocab.STOPWORDS < vocab.CHAT_STOPWORDS
    assert {"s", "t"} == vocab.STOPWORDS - vocab.TURN_STOPWORDS


def test_a_common_word_is_one_most_units_hold() -> None:
    assert not vocab.common(19, 19)  # too few units for a share to mean anything
    assert vocab.common(9, 20)
    assert not vocab.common(8, 20)  # 40% exactly is not more than COMMON
    assert vocab.idf(10, 20) < vocab.idf(1, 20)


# --- no second copy ------------------------------------------------------------------------------

# Names only brain/vocab.py may bind at module level, and functions only it may define.
OWN_NAMES = {"SEP", "BYTES_PER_TOKEN", "COMMON", "COMMON_MIN_UNITS", "CHAT_WORDS"}
OWN_FUNCTIONS = {"fold", "fold_map", "words", "handle_key", "fold_handle", "name_key", "idf"}


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (str(p.relative_to(BRAIN)), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(BRAIN.rglob("*.py"))
        if p.name != "vocab.py"
    ]


def _quoting(node: ast.AST) -> bool:
    """A string built by gluing a `"` to something: FTS5 quoting by hand."""

    def text(n: ast.AST) -> str:
        return n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else ""

    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return text(node.left).endswith('"') or text(node.right).startswith('"')
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        return any(
            (text(a).endswith('"') and isinstance(b, ast.FormattedValue))
            or (isinstance(a, ast.FormattedValue) and text(b).startswith('"'))
            for a, b in itertools.pairwise(parts)
        )
    return False


def _copies(rel: str, tree: ast.Module) -> list[str]:
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and (t.id in OWN_NAMES or t.id.endswith("STOPWORDS")):
                found.append(f"{rel}: {t.id}")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in OWN_FUNCTIONS:
            found.append(f"{rel}: def {node.name}")
        if isinstance(node, ast.Constant) and node.value == vocab.SEP:
            found.append(f"{rel}:{node.lineno}: the separator spelt out")
    queries_fts = any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and "MATCH" in n.value
        for n in ast.walk(tree)
    )
    if queries_fts:
        found += [f"{rel}:{n.lineno}: quotes by hand" for n in ast.walk(tree) if _quoting(n)]
    return found


def test_no_module_keeps_its_own_copy_of_the_vocabulary() -> None:
    assert [c for rel, tree in _modules() for c in _copies(rel, tree)] == []


def test_the_copy_check_sees_each_kind_of_copy() -> None:
    planted = """
SEP = " — "
STOPWORDS = frozenset()
SQL = "SELECT rowid FROM fts WHERE fts MATCH ?"
def helper():
    def fold(text):
        return text
    a = '"' + word + '"'
    b = f'{{body}} : "{word}"'
    c = f'"{word}" *'
    d = "plain " + word
    e = f"said {word!r}"
    line = " — ".join(parts)
"""
    assert sorted(_copies("x.py", ast.parse(planted))) == [
        "x.py: SEP",
        "x.py: STOPWORDS",
        "x.py: def fold",
        "x.py:10: quotes by hand",
        "x.py:13: the separator spelt out",
        "x.py:2: the separator spelt out",
        "x.py:8: quotes by hand",
        "x.py:8: quotes by hand",
        "x.py:9: quotes by hand",
    ]
    assert sorted(_copies("y.py", ast.parse(planted.replace("MATCH", "WHERE")))) == [
        "y.py: SEP",
        "y.py: STOPWORDS",
        "y.py: def fold",
        "y.py:13: the separator spelt out",
        "y.py:2: the separator spelt out",
    ]
