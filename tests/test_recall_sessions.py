"""`brain recall sessions` (`--sessions`): sessions, not turns, from the same transcripts.db."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, brain
from test_contract import shape

CLAUDE = "5b0c1f7e-0000-4000-8000-000000000001"
CODEX = "0196a8f2-1111-7000-8000-00000000c0de"


@pytest.fixture
def transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's and Codex's fixture transcripts, both opted in."""
    for agent, var in (("claude", "CLAUDE_CONFIG_DIR"), ("codex", "CODEX_HOME")):
        shutil.copytree(ROOT / "testdata" / "transcripts" / agent, tmp_path / agent)
        monkeypatch.setenv(var, str(tmp_path / agent))
        assert brain("recall", "enable", agent).code == 0


@pytest.mark.usefixtures("transcripts")
def test_sessions_newest_first_each_once() -> None:
    run = brain("recall", "sessions")
    assert run.code == 0, run
    assert run.out.splitlines() == [
        f"{CODEX} 2025-05-08 codex [Rename the ledger table to jour…] 2 turns /home/dev/api",
        f"{CLAUDE} 2025-05-08 claude [Checkout webhook fix] 3 turns /home/dev/shop",
    ]
    assert brain("recall", "--sessions").out == run.out  # the spelling the anchor has
    only = brain("recall", "sessions", "--agent", "claude", "--json").json()
    assert [s["session"] for s in only["sessions"]] == [CLAUDE]
    assert brain("recall", "sessions", "-n", "1").out.splitlines() == run.out.splitlines()[:1]


@pytest.mark.usefixtures("transcripts")
def test_a_query_lists_the_sessions_that_said_it_led_by_their_best_turn() -> None:
    """Two of the Codex session's turns match `migration`: one session, led by the id of its
    best turn, which `recall full` takes."""
    turns = brain("recall", "--json", "migration").json()
    assert turns["count"] == 2
    assert {h["session"] for h in turns["hits"]} == {CODEX}
    run = brain("recall", "--sessions", "migration")
    assert run.code == 0, run
    (line,) = run.out.splitlines()
    best = line.split()[0]
    assert best == turns["hits"][0]["id"][: len(best)]
    assert line.split()[1] == CODEX
    assert brain("recall", "full", best).code == 0
    doc = brain("recall", "sessions", "--json", "migration").json()
    shape(doc, "`recall sessions`")
    (session,) = doc["sessions"]
    assert session["turn"] == turns["hits"][0]["id"]
    assert (session["turn_count"], session["cwd"]) == (2, "/home/dev/api")


@pytest.mark.usefixtures("transcripts")
def test_no_session_is_exit_1_and_an_empty_list() -> None:
    run = brain("recall", "sessions", "--json", "xylophonist")
    assert run.code == 1
    assert run.json() == {"query": "xylophonist", "count": 0, "sessions": []}
    listing = brain("recall", "sessions", "--since", "2099-01-01", "--json")
    assert (listing.code, listing.json()["sessions"], listing.json()["query"]) == (1, [], None)


def test_sessions_need_an_agent_opted_in() -> None:
    run = brain("recall", "sessions")
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert "brain recall enable claude" in run.err
