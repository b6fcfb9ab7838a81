"""`brain howto`, `brain lessons`, `brain day`, `brain week` through the real CLI: the JSON
contract (and README's table of it), terse lines for agents, tables for a person, exit codes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, brain
from test_contract import KEYS

HISTORY = ROOT / "testdata" / "transcripts" / "history"
PASSWORD = "Zq8rT2vLw9xPm4kQ"  # noqa: S105 - the made-up password in the fixture

# the keys are pinned once, in test_contract.py's KEYS (and README.md's JSON table)
HOWTO_KEYS = KEYS["`howto`"]
HOWTO_HIT_KEYS = KEYS["`howto` hit"]
LESSONS_KEYS = KEYS["`lessons`"]
MOMENT_KEYS = KEYS["`lessons` moment"]
TURN_KEYS = KEYS["`lessons` turn"]
PROPOSAL_KEYS = KEYS["`lessons` proposal"]
DAY_KEYS = KEYS["`day`"]
REPO_KEYS = KEYS["`day` repo"]
SESSION_KEYS = KEYS["`day` session"]
FILE_KEYS = KEYS["`day` file"]
COMMIT_KEYS = KEYS["`day` commit"]
WEEK_KEYS = KEYS["`week`"]


@pytest.fixture
def env(tmp_path: Path, isolated_env: Path) -> dict[str, str]:
    shutil.copytree(HISTORY / "claude", tmp_path / "claude")
    shutil.copytree(HISTORY / "codex", tmp_path / "codex")
    shutil.copytree(HISTORY / "gemini" / ".gemini", isolated_env / ".gemini")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex")}
    for name in ("claude", "codex", "gemini"):
        assert brain("recall", "--enable", name, env=env).code == 0
    return env


def test_howto_json_lines_and_exit_codes(env: dict[str, str]) -> None:
    doc = brain("howto", "connect", "to", "the", "dev", "database", "--json", env=env).json()
    assert list(doc) == HOWTO_KEYS
    assert doc["count"] == len(doc["hits"]) > 0
    assert doc["proposal"] is None
    assert all(list(h) == HOWTO_HIT_KEYS for h in doc["hits"])
    assert doc["hits"][0]["ok"] is True
    terse = brain("howto", "connect", "to", "the", "dev", "database", env=env)
    assert terse.code == 0
    first = terse.out.splitlines()[0]
    assert first.startswith("2026-11-18 claude api ")
    assert " $ psql postgres://app:" in first
    for out in (terse.out, str(doc)):
        assert PASSWORD not in out
    none = brain("howto", "zyxwvut", "qwertz", env=env)
    assert (none.code, none.out) == (1, "")


def test_lessons_json_and_lines(env: dict[str, str]) -> None:
    doc = brain("lessons", "--since", "2026-11-16", "--json", env=env).json()
    assert list(doc) == LESSONS_KEYS
    assert doc["count"] == len(doc["moments"]) > 30
    assert doc["proposals"] == []
    for m in doc["moments"]:
        assert list(m) == MOMENT_KEYS
        assert all(list(t) == TURN_KEYS for t in m["turns"])
    assert {m["kind"] for m in doc["moments"]} == {"correction", "retry"}
    only = brain("lessons", "--since", "2026-11-16", "--kind", "retry", "--json", env=env).json()
    assert {m["kind"] for m in only["moments"]} == {"retry"}
    lines = brain("lessons", "--since", "2026-11-16", "--agent", "codex", env=env)
    assert lines.code == 0
    assert all(" codex " in line for line in lines.out.splitlines())
    assert brain("lessons", env=env).code == 0  # the last 7 days: the fixture is older


def test_lessons_propose_through_the_inbox(env: dict[str, str], vault: Path) -> None:
    before = len(brain("inbox", "--vault", str(vault), "--json", env=env).json()["proposals"])
    args = ("lessons", "--since", "2026-11-29", "--propose", "--vault", str(vault), "--json")
    doc = brain(*args, env=env).json()
    assert doc["proposals"]
    assert all(list(p) == PROPOSAL_KEYS for p in doc["proposals"])
    assert {p["action"] for p in doc["proposals"]} == {"proposed"}
    again = brain(*args, env=env).json()
    assert {p["action"] for p in again["proposals"]} == {"remembered"}
    inbox = brain("inbox", "--vault", str(vault), "--json", env=env).json()
    assert len(inbox["proposals"]) == before + len(doc["proposals"])


def test_day_and_week_json(env: dict[str, str]) -> None:
    day = brain("day", "2026-11-17", "--json", env=env).json()
    assert list(day) == DAY_KEYS
    assert day["session_count"] == 2
    for repo in day["repos"]:
        assert list(repo) == REPO_KEYS
        assert repo["note"] == "no longer exists; commits skipped"  # /home/dev/... is made up
        assert all(list(s) == SESSION_KEYS for s in repo["sessions"])
        assert all(list(f) == FILE_KEYS for f in repo["files"])
        assert all(list(c) == COMMIT_KEYS for c in repo["commits"])
    week = brain("week", "--since", "2026-11-16", "--project", "shop", "--json", env=env).json()
    assert list(week) == WEEK_KEYS
    assert week["days"][0]["date"] == "2026-11-16"
    assert list(week["days"][0]) == DAY_KEYS
    assert {r["project"] for d in week["days"] for r in d["repos"]} == {"shop"}
    terse = brain("day", "2026-11-17", "--no-git", env=env)
    assert terse.out.startswith("day 2026-11-17: 2 repositories, 2 sessions")


def test_day_escapes_a_written_files_name(env: dict[str, str], tmp_path: Path) -> None:
    """A file the agent wrote, named with a newline and ESC, is one escaped line for an agent
    and one escaped entry in a person's table: nothing forged, no terminal sequence."""
    from test_find import run_in_pty

    transcript = (
        tmp_path / "claude/projects/-home-dev-shop/a1c0ffee-0003-4000-8000-000000000003.jsonl"
    )
    text = transcript.read_text(encoding="utf-8")
    plain = '"file_path": "/home/dev/shop/src/checkout/checkout.test.ts"'
    assert plain in text
    odd = '"file_path": "/home/dev/shop/src/check\\nout\\u001b[2J.test.ts"'
    transcript.write_text(text.replace(plain, odd), encoding="utf-8")
    run = brain("day", "2026-11-17", "--no-git", env=env)
    assert "\x1b" not in run.out
    assert "file src/check\\nout\\x1b[2J.test.ts 1" in run.out.splitlines()
    code, table = run_in_pty("day", "2026-11-17", "--no-git", env=env)
    assert code == 0, table
    assert "\x1b[2J" not in table
    assert "src/check\\nout\\x1b[2J.test.ts" in table


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["day", "last-tuesday"], 2),
        (["week", "--since", "0d"], 2),
        (["lessons", "--kind", "praise"], 2),
        (["howto", "--limit", "0", "deploy"], 2),
        (["lessons", "--since", "yesterday-ish"], 2),
        (["howto", "deploy", "--agent", "cursor"], 1),
    ],
)
def test_errors_are_one_json_line(env: dict[str, str], args: list[str], code: int) -> None:
    run = brain(*args, "--json", env=env)
    assert run.code == code, run
    assert list(run.json()) == ["error"]
    assert run.err == ""


def test_nothing_enabled_says_how_to_opt_in(isolated_env: Path) -> None:
    for args in (["howto", "deploy"], ["lessons"], ["day"], ["week"]):
        run = brain(*args)
        assert run.code == 1
        assert "brain recall enable" in run.err
        assert "Traceback" not in run.err


def test_a_person_gets_tables(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from brain.commands import day as daymod
    from brain.commands import howto as howtomod
    from brain.present import past as hr

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    table = hr.howto_table(howtomod.howto("deploy the api to staging", limit=2))
    assert "command" in table
    assert "make deploy ENV=staging" in table
    assert "recall id" in table
    grid = hr.week_table(daymod.week("2026-11-20", git=False))
    assert "repository" in grid
    assert "files written" in grid
    assert "infra" in grid


def test_howto_scores_are_between_0_and_1_best_first(env: dict[str, str]) -> None:
    doc = brain("howto", "connect", "to", "the", "dev", "database", "--json", env=env).json()
    scores = [h["score"] for h in doc["hits"]]
    assert scores
    assert all(0 < s <= 1 for s in scores), scores
    assert scores == sorted(scores, reverse=True)
