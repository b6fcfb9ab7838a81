"""`brain ledger` and the usage log's migration: cost per caller, session and day."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from conftest import brain
from test_contract import KEYS

from brain.commands.ledger import ledger
from brain.config import CORE_FILES, usage_log_path
from brain.usage import LOG_VERSION, connect, events, record

LEDGER_KEYS = KEYS["`ledger`"]


def _seed(vault: Path, rows: list[tuple[float, str, str, str, int, int]]) -> None:
    conn = connect()
    try:
        conn.executemany(
            "INSERT INTO events(ts, command, caller, session, query, entries, bytes, vault)"
            " VALUES (?, 'find', ?, ?, ?, ?, ?, ?)",
            [(ts, who, sess, q, n, b, str(vault.resolve())) for ts, who, sess, q, n, b in rows],
        )
    finally:
        conn.close()


def test_empty_log_gives_an_empty_well_formed_report(vault: Path) -> None:
    run = brain("ledger", "--vault", str(vault), "--json")
    assert run.code == 0, run
    doc = run.json()
    assert list(doc) == LEDGER_KEYS
    assert (doc["lookups"], doc["tokens"], doc["saved"]) == (0, 0, 0)
    assert doc["callers"] == doc["sessions"] == doc["days"] == []
    text = brain("ledger", "--vault", str(vault))
    assert text.code == 0
    assert "No lookups logged yet" in text.out


def test_tokens_and_savings_per_caller_session_and_day(vault: Path) -> None:
    day = time.mktime((2026, 5, 1, 12, 0, 0, 0, 0, -1))
    _seed(
        vault,
        [
            (day, "claude-code", "s1", "a", 2, 400),
            (day + 60, "claude-code", "s1", "b", 0, 0),
            (day + 86400, "codex", "s2", "c", 1, 100),
        ],
    )
    core = sum((vault / f).stat().st_size for f in CORE_FILES)
    doc = brain("ledger", "--vault", str(vault), "--json").json()
    assert doc["core_tokens"] == (core + 3) // 4  # rounded up, as every budget (brain.vocab)
    assert (doc["lookups"], doc["tokens"]) == (3, 125)
    assert doc["saved"] == 2 * doc["core_tokens"] - 125  # "b" served nothing: it saved nothing
    assert [(c["caller"], c["lookups"], c["tokens"]) for c in doc["callers"]] == [
        ("claude-code", 2, 100),
        ("codex", 1, 25),
    ]
    assert list(doc["callers"][0]) == ["caller", "lookups", "tokens", "saved"]
    assert [s["session"] for s in doc["sessions"]] == ["s2", "s1"]
    assert list(doc["sessions"][0]) == [
        "session",
        "caller",
        "lookups",
        "tokens",
        "saved",
        "last_at",
    ]
    assert [(d["date"], d["lookups"]) for d in doc["days"]] == [
        ("2026-05-01", 2),
        ("2026-05-02", 1),
    ]
    assert list(doc["days"][0]) == ["date", "lookups", "tokens", "saved"]
    since = brain("ledger", "--vault", str(vault), "--json", "--since", "2026-05-02").json()
    assert since["lookups"] == 1
    only = brain("ledger", "--vault", str(vault), "--json", "--caller", "claude-code").json()
    assert only["lookups"] == 2
    assert only["caller"] == "claude-code"
    text = brain("ledger", "--vault", str(vault))
    assert "claude-code" in text.out
    assert "2026-05-02" in text.out


def test_a_lookup_that_served_nothing_saves_nothing(vault: Path) -> None:
    day = time.mktime((2026, 5, 1, 12, 0, 0, 0, 0, -1))
    _seed(
        vault,
        [
            (day, "claude-code", "empty", "x", 0, 0),  # a pack or find that printed nothing
            (day + 1, "claude-code", "empty", "y", 0, 120),  # an empty JSON answer, a hint
            (day + 2, "codex", "served", "z", 2, 400),
        ],
    )
    doc = brain("ledger", "--vault", str(vault), "--json").json()
    by = {s["session"]: s for s in doc["sessions"]}
    assert (by["empty"]["lookups"], by["empty"]["tokens"], by["empty"]["saved"]) == (2, 30, 0)
    assert by["served"]["saved"] == doc["core_tokens"] - 100
    assert doc["saved"] == doc["core_tokens"] - 100
    assert doc["tokens"] == 130  # what was printed is still counted as returned


def test_bad_since_is_a_usage_error(vault: Path) -> None:
    run = brain("ledger", "--vault", str(vault), "--since", "yesterday")
    assert run.code == 2
    assert run.err.count("\n") == 1
    assert "YYYY-MM-DD" in run.err


def test_the_chart_renders_at_a_terminal(vault: Path) -> None:
    from brain.present.upkeep import ledger_text as text

    _seed(vault, [(time.time(), "person", "", "q", 1, 80)])
    markup = text(ledger(vault.resolve()), chart=True)
    assert "█" in markup
    assert "[bold]By day[/bold]" in markup


# --- migration -----------------------------------------------------------------------------------


def test_a_version_0_log_of_another_shape_is_migrated_keeping_its_rows() -> None:
    path = usage_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE events(ts REAL, command TEXT, query TEXT, entries INTEGER, extra TEXT)"
    )
    old.execute("INSERT INTO events VALUES (1.5, 'find', 'old query', 3, 'x')")
    old.commit()
    old.close()
    conn = connect()
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LOG_VERSION
        (event,) = events(conn)
    finally:
        conn.close()
    assert (event.ts, event.command, event.query, event.entries, event.caller, event.bytes) == (
        1.5,
        "find",
        "old query",
        3,
        "",
        0,
    )
    record("find", "me", "", "new", 1, 10, Path("/v"))
    conn = connect()
    try:
        assert [e.query for e in events(conn)] == ["old query", "new"]
    finally:
        conn.close()


def test_a_version_2_log_gains_the_evidence_column_and_keeps_its_rows(vault: Path) -> None:
    path = usage_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE events(ts REAL NOT NULL, command TEXT NOT NULL, caller TEXT NOT NULL,"
        " session TEXT NOT NULL, query TEXT NOT NULL, entries INTEGER NOT NULL,"
        " bytes INTEGER NOT NULL, vault TEXT NOT NULL)"
    )
    old.execute("CREATE TABLE served(ts REAL, session TEXT, vault TEXT, unit TEXT)")
    old.execute("INSERT INTO events VALUES (1.5, 'find', 'me', 's', 'old miss', 0, 0, '/v')")
    old.execute("INSERT INTO served VALUES (1.5, 's', '/v', 'AI/MEMORY.md#x')")
    old.execute("PRAGMA user_version = 2")
    old.commit()
    old.close()
    record("find", "me", "", "new", 0, 10, Path("/v"), evidence="weak")
    conn = connect()
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LOG_VERSION == 3
        assert [(e.query, e.evidence) for e in events(conn)] == [("old miss", ""), ("new", "weak")]
        assert conn.execute("SELECT count(*) FROM served").fetchone()[0] == 1
    finally:
        conn.close()
    # a brain of version 2 still writes its rows, without the column
    older = sqlite3.connect(path)
    older.execute(
        "INSERT INTO events(ts, command, caller, session, query, entries, bytes, vault)"
        " VALUES (2.5, 'find', 'me', '', 'older', 1, 5, '/v')"
    )
    older.commit()
    older.close()
    conn = connect()
    try:
        got = {e.query: e.evidence for e in events(conn)}
        assert got == {"old miss": "", "older": "", "new": "weak"}
    finally:
        conn.close()


def test_an_unstamped_log_of_the_current_shape_is_adopted(vault: Path) -> None:
    conn = connect()
    conn.execute("PRAGMA user_version = 0")
    conn.close()
    record("find", "me", "", "kept", 1, 10, vault.resolve())
    assert brain("ledger", "--vault", str(vault), "--json").json()["lookups"] == 1


def test_a_log_that_is_not_a_database_is_set_aside_never_fatal(vault: Path) -> None:
    path = usage_log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not sqlite" * 100)
    run = brain("ledger", "--vault", str(vault), "--json")
    assert run.code == 0, run
    assert run.json()["lookups"] == 0
    assert list(path.parent.glob("usage.sqlite.unreadable-*"))
    assert brain("find", "--vault", str(vault), "pygit2").code == 0
    assert brain("ledger", "--vault", str(vault), "--json").json()["lookups"] == 1


def test_the_sessions_table_shows_each_id_and_caller_whole_with_what_it_saved(
    vault: Path,
) -> None:
    """A Claude Code session id (what `claude --resume` takes) and an MCP client's caller were
    cut at 24 and 16 characters, and the table alone of the three left out what was saved."""
    day = time.mktime((2026, 5, 1, 12, 0, 0, 0, 0, -1))
    uuid = "5b0c1f7e-0000-4000-8000-000000000001"
    _seed(
        vault,
        [(day, "mcp:codex-mcp-client", uuid, "a", 2, 400), (day + 60, "codex", "s2", "b", 1, 100)],
    )
    doc = brain("ledger", "--vault", str(vault), "--json").json()
    saved = {s["session"]: s["saved"] for s in doc["sessions"]}
    text = brain("ledger", "--vault", str(vault)).out
    rows = text.split("Sessions\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(rows) == 2, text
    mine = next(r for r in rows if uuid in r)
    assert "mcp:codex-mcp-client" in mine
    assert mine.endswith(f" {saved[uuid]:,} saved")
    assert rows[0].index(" lookup") == rows[1].index(" lookup")  # the columns line up
