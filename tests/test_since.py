"""One `--since` grammar for every command that takes it (brain/when.py)."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import brain

from brain.errors import UsageError
from brain.usage import connect
from brain.when import parse_since

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "back"),
    [("24h", timedelta(hours=24)), ("7d", timedelta(days=7)), ("2w", timedelta(days=14))],
)
def test_spans_count_back_from_now(text: str, back: timedelta) -> None:
    since = parse_since(text, now=NOW)
    assert since.start == NOW - back
    assert since.span == back


def test_a_day_is_local_midnight_and_a_month_its_first_day() -> None:
    day = parse_since("2026-05-01")
    assert day.span is None
    assert day.epoch == time.mktime((2026, 5, 1, 0, 0, 0, 0, 0, -1))
    assert parse_since("2026-05").start == day.start
    assert parse_since("2026-05-01T09:30Z").utc == "2026-05-01T09:30:00"


def test_first_day_counts_today_in_the_span() -> None:
    today = date(2026, 12, 2)
    assert parse_since("7d").first_day(today) == date(2026, 11, 26)
    assert parse_since("1w").first_day(today) == date(2026, 11, 26)
    assert parse_since("24h").first_day(today) == today
    assert parse_since("2026-11-30").first_day(today) == date(2026, 11, 30)


@pytest.mark.parametrize("text", ["yesterday-ish", "7x", "0d", "", "2026-13-01"])
def test_bad_input_names_the_option_and_the_forms(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_since(text, option="--since")
    assert "--since" in str(caught.value)
    assert "7d" in caught.value.hint
    assert "YYYY-MM-DD" in caught.value.hint


def _seed(vault: Path, *stamps: float) -> None:
    conn = connect()
    try:
        conn.executemany(
            "INSERT INTO events(ts, command, caller, session, query, entries, bytes, vault)"
            " VALUES (?, 'find', 'script', 's', ?, ?, ?, ?)",
            [(ts, f"q{i}", 0, 0, str(vault.resolve())) for i, ts in enumerate(stamps)],
        )
    finally:
        conn.close()


def test_log_and_ledger_take_spans(vault: Path) -> None:
    """`log --since 7d` and `ledger --since 2w` were usage errors: they took only YYYY-MM-DD."""
    now = time.time()
    _seed(vault, now - 3 * 86400, now - 10 * 86400, now - 20 * 86400)
    log = brain("log", "--vault", str(vault), "--since", "7d", "--json")
    assert log.code == 0, log
    assert log.json()["lookups"] == 1
    ledger = brain("ledger", "--vault", str(vault), "--since", "2w", "--json")
    assert ledger.code == 0, ledger
    assert ledger.json()["lookups"] == 2
    assert brain("ledger", "--vault", str(vault), "--since", "24h", "--json").json()["lookups"] == 0


@pytest.mark.parametrize("command", ["log", "ledger"])
def test_bad_since_is_one_line(vault: Path, command: str) -> None:
    run = brain(command, "--vault", str(vault), "--since", "lastweek")
    assert run.code == 2
    assert run.err.count("\n") == 1
    assert "--since 'lastweek'" in run.err
    assert "7d" in run.err
