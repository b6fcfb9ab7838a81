"""`brain recall` through the real CLI: opt-in, JSON contract, exit codes, no heavy imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, brain
from test_contract import KEYS

FIXTURES = ROOT / "testdata" / "transcripts"
SESSION = "5b0c1f7e-0000-4000-8000-000000000001"
RECALL_KEYS = KEYS["`recall`"]
RECALL_HIT_KEYS = KEYS["`recall` hit"]
FULL_KEYS = KEYS["`recall --full`"]
SYNC_KEYS = KEYS["`recall --sync`"]
SOURCE_KEYS = KEYS["`recall --sources` source"]
TOGGLE_KEYS = KEYS["`recall --enable` / `--disable`"]


@pytest.fixture
def env(tmp_path: Path, isolated_env: Path) -> dict[str, str]:
    shutil.copytree(FIXTURES / "claude", tmp_path / "claude")
    shutil.copytree(FIXTURES / "codex", tmp_path / "codex")
    shutil.copytree(FIXTURES / "gemini" / ".gemini", isolated_env / ".gemini")
    return {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}


def test_nothing_enabled_says_how_to_opt_in(env: dict[str, str]) -> None:
    run = brain("recall", "paynova", env=env)
    assert run.code == 1
    assert "`brain recall enable claude`" in run.err
    assert "Traceback" not in run.err


def test_enable_query_full_disable(env: dict[str, str]) -> None:
    on = brain("recall", "--enable", "claude", "--json", env=env).json()
    assert list(on) == TOGGLE_KEYS
    assert on["sources"] == ["claude"]
    doc = brain("recall", "paynova webhook", "--json", env=env).json()
    assert list(doc) == RECALL_KEYS
    assert doc["count"] == len(doc["hits"]) > 0
    for hit in doc["hits"]:
        assert list(hit) == RECALL_HIT_KEYS
        assert isinstance(hit["score"], float)
    first = doc["hits"][0]
    assert first["title"] == "Checkout webhook fix"
    assert first["at"].startswith("2025-05-08T")
    terse = brain("recall", "paynova webhook", env=env)
    assert terse.code == 0
    short = terse.out.split()[0]  # the fixture's ids differ only in their last characters
    assert first["id"].startswith(short)
    assert len(short) >= 8
    assert len(terse.out.encode()) < 200 * doc["count"]
    full = brain("recall", "--full", first["id"], "--json", env=env).json()
    assert list(full) == FULL_KEYS
    assert full["id"] == first["id"]
    assert "webhook" in full["body"].lower()
    off = brain("recall", "--disable", "claude", "--json", env=env).json()
    assert off["removed_count"] == 3
    assert brain("recall", "paynova", env=env).code == 1


def test_full_given_a_session_id_says_it_is_one_and_how_to_reach_its_turns(
    env: dict[str, str],
) -> None:
    """`brain recall sessions` without a query leads each line with the session's id; given to
    `full`, it was "no turn ... (run `brain recall QUERY` first)", though the session is there."""
    assert brain("recall", "enable", "claude", env=env).code == 0
    listing = brain("recall", "sessions", env=env)
    assert listing.code == 0, listing
    session = listing.out.split()[0]
    run = brain("recall", "full", session[:8], env=env)
    assert run.code == 1
    assert run.err.startswith(f"brain: '{session[:8]}' is a session (claude {session}), not a turn")
    assert "`brain recall sessions WORDS`" in run.err
    assert "`brain recall WORDS --agent claude`" in run.err
    gone = brain("recall", "full", "zz-none", env=env)
    assert gone.code == 1
    assert "no turn 'zz-none' in transcripts.db" in gone.err


def test_modes_are_subcommands_and_the_old_spellings_still_work(env: dict[str, str]) -> None:
    on = brain("recall", "enable", "claude", "--json", env=env).json()
    assert list(on) == TOGGLE_KEYS
    assert on["sources"] == ["claude"]
    search = brain("recall", "search", "paynova", "webhook", "--json", env=env).json()
    assert search == brain("recall", "paynova webhook", "--json", env=env).json()
    assert search["count"] > 0
    turn = search["hits"][0]["id"]
    full = brain("recall", "full", turn, "--json", env=env).json()
    assert full == brain("recall", "--json", f"--full={turn}", env=env).json()
    assert full["id"] == turn
    srcs = brain("recall", "sources", "--json", env=env).json()
    assert srcs == brain("recall", "--sources", "--json", env=env).json()
    sync = brain("recall", "sync", "--json", env=env).json()
    assert list(sync) == SYNC_KEYS
    # a query whose first word is a mode's: after `--`, or with `search`
    assert brain("recall", "--json", "--", "sync", "paynova", env=env).json()["query"] == (
        "sync paynova"
    )
    assert brain("recall", "search", "full", "webhook", "--json", env=env).json()["query"] == (
        "full webhook"
    )
    off = brain("recall", "disable", "claude", "--json", env=env).json()
    assert off["removed_count"] == 3
    assert brain("recall", "full", env=env).code == 2  # no id: one usage line
    assert brain("recall", env=env).out.count("search") >= 1  # bare: the help, with the modes


def test_current_session_is_excluded_unless_all(env: dict[str, str]) -> None:
    brain("recall", "--enable", "claude", env=env)
    mine = {**env, "CLAUDE_CODE_SESSION_ID": SESSION}
    assert brain("recall", "paynova", "--json", env=mine).json()["count"] == 0
    assert brain("recall", "paynova", "--all", "--json", env=mine).json()["count"] > 0


def test_sources_sync_and_agent_filter(env: dict[str, str], isolated_env: Path) -> None:
    from test_recall import opencode_db

    shutil.copytree(FIXTURES / "copilot", isolated_env / ".copilot")
    shutil.copytree(FIXTURES / "pi", isolated_env / ".pi" / "agent")
    opencode_db(isolated_env)
    names = ["claude", "codex", "gemini", "copilot", "opencode", "pi"]
    for name in names:
        assert brain("recall", "enable", name, env=env).code == 0
    srcs = brain("recall", "--sources", "--json", env=env).json()["sources"]
    assert [list(s) for s in srcs] == [SOURCE_KEYS] * 6
    assert [s["name"] for s in srcs] == names
    assert all(s["enabled"] and s["exists"] for s in srcs)
    # the listing's columns line up whatever an agent's label: each count ends where the others do
    listing = brain("recall", "sources", env=env).out.splitlines()
    assert len(listing) == 6
    assert len({line.index(" turn") for line in listing}) == 1, listing
    sync = brain("recall", "--sync", "--json", env=env).json()
    assert list(sync) == SYNC_KEYS
    assert (sync["file_count"], sync["turn_count"]) == (5 + 1 + 2 + 1, 13 + 5 + 6 + 6)
    for agent, query in (("copilot", "rate limit"), ("opencode", "drift"), ("pi", "storybook")):
        doc = brain("recall", query, "--agent", agent, "--json", env=env).json()
        assert doc["count"] > 0
        assert {h["agent"] for h in doc["hits"]} == {agent}
    doc = brain("recall", "ledger", "--agent", "codex", "--json", env=env).json()
    assert {h["agent"] for h in doc["hits"]} == {"codex"}
    assert brain("recall", "ledger", "--since", "2025-06-01", env=env).code == 1


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "--json"],
        ["recall", "x", "--sync", "--json"],
        ["recall", "--enable", "nosuchagent", "--json"],
        ["recall", "x", "--since", "yesterday-ish", "--json"],
        ["recall", "--full", "zzzz", "--json"],
    ],
)
def test_errors_are_one_json_line(env: dict[str, str], args: list[str]) -> None:
    brain("recall", "--enable", "claude", env=env)
    run = brain(*args, env=env)
    assert run.code in (1, 2)
    assert list(run.json()) == ["error"]
    assert run.err == ""


def test_recall_does_not_import_the_model(env: dict[str, str]) -> None:
    brain("recall", "--enable", "claude", env=env)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "brain", "recall", "paynova"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert proc.returncode == 0
    for heavy in ("numpy", "onnxruntime", "tokenizers"):
        assert f" {heavy}\n" not in proc.stderr


def test_scores_are_shares_of_the_query_on_a_small_corpus(env: dict[str, str]) -> None:
    """A handful of turns: every word is in half of them, where FTS5's IDF is nothing, and every
    hit scored 0.0. A score is the share of the query's weight a turn's window holds."""
    brain("recall", "--enable", "claude", env=env)
    for query in ("paynova webhook", "the webhook", "checkout"):
        hits = brain("recall", query, "--json", env=env).json()["hits"]
        assert hits, query
        scores = [h["score"] for h in hits]
        assert all(0 < s <= 1 for s in scores), (query, scores)
        assert scores == sorted(scores, reverse=True)
