"""What past sessions did: tool calls read from each agent's transcripts, `howto`, `lessons`,
`day`/`week` and `corrections()`, on real fixture transcripts, real git repositories and SQLite."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, brain

from brain.commands import day as daymod
from brain.commands import howto as howtomod
from brain.commands import lessons as lessonsmod
from brain.recall import activity, lessons, past, search, store
from brain.recall.adapters import FileState
from brain.recall.adapters.calls import COMMAND_CAP, OUTPUT_CAP
from brain.recall.adapters.known import registry

HISTORY = ROOT / "testdata" / "transcripts" / "history"
LABELS = json.loads((HISTORY / "labels.json").read_text(encoding="utf-8"))
ALL = ("claude", "codex", "gemini")
PASSWORD = "Zq8rT2vLw9xPm4kQ"  # noqa: S105 - the made-up dev database password in the fixture


@pytest.fixture
def fixture_agents(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The labelled history transcripts where each agent keeps them, all three enabled."""
    shutil.copytree(HISTORY / "claude", tmp_path / "claude")
    shutil.copytree(HISTORY / "codex", tmp_path / "codex")
    shutil.copytree(HISTORY / "gemini" / ".gemini", isolated_env / ".gemini")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    for name in ALL:
        store.set_enabled(name, True)
    return tmp_path


def _synced() -> sqlite3.Connection:
    conn = store.connect()
    store.sync(conn, list(ALL))
    return conn


def _calls(conn: sqlite3.Connection, session: str) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT kind, tool, text, ok, code, output, cwd FROM calls WHERE session = ?"
        " ORDER BY ts, id",
        (session,),
    ).fetchall()


# -- reading tool calls ----------------------------------------------------------------------


def test_claude_bash_and_writes_with_how_they_ended(fixture_agents: Path) -> None:
    conn = _synced()
    rows = _calls(conn, "a1c0ffee-0005-4000-8000-000000000005")
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        ("write", "/home/dev/api/tests/unit/test_rates.py", 1, None),
        ("shell", "pytest -x tests/unit", 0, 127),
        ("shell", "python -m pytest -x tests/unit", 1, None),
        ("shell", ".venv/bin/pytest -x tests/unit", 1, None),
    ]
    assert rows[1][5].endswith("pytest: command not found")
    assert {r[6] for r in rows} == {"/home/dev/api"}


def test_claude_background_and_rejected_commands_neither_worked_nor_failed(
    fixture_agents: Path,
) -> None:
    conn = _synced()
    storybook = _calls(conn, "b2c0ffee-0005-4000-8000-000000000105")
    assert (storybook[0][2], storybook[0][3]) == ("pnpm storybook", None)  # in the background
    bench = _calls(conn, "b2c0ffee-0007-4000-8000-000000000107")
    assert bench[0][2].startswith("ab -n 2000")
    assert bench[0][3] is None


def test_codex_json_and_freeform_outputs_and_patches(fixture_agents: Path) -> None:
    conn = _synced()
    older = _calls(conn, "0196b000-0001-7000-8000-00000000c001")  # {"output", "metadata"}
    assert [(r[2].split()[0], r[3], r[4]) for r in older] == [
        ("openapi-generator", 0, 127),
        ("make", 1, 0),
    ]
    newer = _calls(conn, "0196b000-0002-7000-8000-00000000c002")  # "Exit code: N\n...Output:"
    assert [(r[0], r[2], r[4]) for r in newer] == [
        ("shell", "mypy src", 127),
        ("shell", "uv run mypy src", 1),
        ("write", "/home/dev/api/src/rates.py", 0),  # relative to the session's folder
        ("shell", "uv run mypy src", 0),
    ]
    assert newer[1][5] == "src/rates.py:12: error: Incompatible return value type"


def test_gemini_tool_calls_without_a_folder(fixture_agents: Path) -> None:
    conn = _synced()
    rows = _calls(conn, "7e3c0000-0101-4000-8000-00000000be11")
    assert [(r[2][:9], r[3], r[4], r[6]) for r in rows] == [
        ("pg_dump -", 0, 1, ""),
        ("pg_dump -", 1, None, ""),
    ]
    assert rows[0][5].startswith("pg_dump: error: too many")  # without Gemini's trailer lines


def test_an_outcome_read_after_its_call_fills_it_in(fixture_agents: Path) -> None:
    """Claude Code writes a call and its result on separate lines: a sync between them stores
    the call as unknown, and the next read of the file (from its offset) completes it."""
    session = "a1c0ffee-0004-4000-8000-000000000004"
    path = next((fixture_agents / "claude" / "projects").glob(f"*/{session}.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "make deploy ENV=staging" in line) + 1
    path.write_text("".join(lines[:cut] + lines[-1:]), encoding="utf-8")  # and its title
    conn = _synced()
    assert _calls(conn, session)[-1][2:5] == ("make deploy ENV=staging", None, None)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines[cut:]))
    report = store.sync(conn, list(ALL))
    assert report.read == 1
    assert _calls(conn, session)[-1][2:5] == ("make deploy ENV=staging", 1, None)


def _claude_session(folder: Path, session: str, cwd: str, records: list[dict[str, Any]]) -> Path:
    """A Claude Code transcript: records given as role/content pairs (plus an ai-title)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, rec in enumerate(records):
        full = {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.0.30",
            "type": rec["role"],
            "uuid": f"{session[-8:]}-0000-4000-8000-{i:012d}",
            "timestamp": rec.get("ts", f"2026-11-30T10:{i:02d}:00.000Z"),
            "message": {"role": rec["role"], "content": rec["content"]},
        }
        lines.append(json.dumps(full))
    lines.append(json.dumps({"type": "ai-title", "aiTitle": "Made-up work", "sessionId": session}))
    path = folder / f"{session}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bash(tool_id: str, command: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}
    return {"role": "assistant", "content": [block]}


def _result(tool_id: str, text: str, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": error}
    return {"role": "user", "content": [block]}


def test_huge_outputs_and_commands_are_bounded(tmp_path: Path, isolated_env: Path) -> None:
    root = tmp_path / "claude"
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    heredoc = "cat > big.txt <<'EOF'\n" + "line of text\n" * 2000 + "EOF"
    _claude_session(
        root / "projects" / "-p",
        "d0000000-0000-4000-8000-000000000001",
        "/p",
        [
            {"role": "user", "content": "make a big file"},
            _bash("t1", heredoc),
            _result("t1", "x" * 5_000_000 + "\nthe end: disk full", error=True),
        ],
    )
    store.set_enabled("claude", True)
    conn = _synced()
    (text, output) = conn.execute("SELECT text, output FROM calls").fetchone()
    assert len(output) <= OUTPUT_CAP
    assert output.endswith("the end: disk full")  # the end of an output is where errors are
    assert len(text) <= COMMAND_CAP + 2
    assert conn.execute("SELECT count(*) FROM calls").fetchone()[0] == 1


def test_tool_results_for_other_tools_are_not_parsed(tmp_path: Path, isolated_env: Path) -> None:
    """A file read's result (the bulk of a transcript) is skipped before JSON parsing: a broken
    one costs nothing, not even a skipped-line count."""
    root = tmp_path / "claude"
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    path = _claude_session(
        root / "projects" / "-p",
        "d0000000-0000-4000-8000-000000000002",
        "/p",
        [{"role": "user", "content": "read it"}],
    )
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"r1"\n')
    ad = registry()["claude"]
    chunk = ad.read(path, path.read_bytes(), 0, FileState())
    assert chunk.skipped == 0
    assert chunk.calls == []
    assert chunk.outcomes == []


# -- lessons ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("user", "agent"),
    [
        ("No, use pnpm here, not npm.", "I'll run npm install."),
        ("that's wrong, the port is 8443", "Using port 8080."),
        ("Wait, don't push yet.", "Pushing now."),
        ("Use the staging bucket instead.", "Uploading to the prod bucket."),
        ("Why did you delete the migration?", "Cleaned up the old files."),
        ("Nein, nimm lieber den Container.", "Ich installiere Redis."),
        ("Das ist falsch, die Datei liegt in /etc.", "Die Datei liegt in /opt."),
        ("No, usa yarn.", "Uso npm."),
        ("En vez de borrar la tabla, renómbrala.", "Voy a borrar la tabla."),
        ("Non, pas comme ça : garde les clés.", "J'ai traduit les clés."),
        ("N'utilise pas sudo.", "Je lance sudo make install."),
    ],
)
def test_corrections_in_four_languages(user: str, agent: str) -> None:
    assert lessons.is_correction(user, agent)


@pytest.mark.parametrize(
    ("user", "agent"),
    [
        ("No problem!", "Sorry for the delay."),
        ("Don't worry about it.", "I could not reproduce it."),
        ("Instead of waiting I'll check the logs myself.", "The build takes ten minutes."),
        ("no", "Shall I commit it?"),
        ("No, just the code.", "Should I update the docs too?"),
        ("Nope, all good.", "Done."),
        ("Thanks! Instead of the full stack I only need the worker.", "Started the worker."),
        ("Wait for CI before merging.", "The PR is ready."),
        ("Don't forget the changelog.", "Done."),
        ("Kein Problem, danke!", "Entschuldigung."),
        ("No te preocupes.", "Perdón."),
        ("No sé todavía.", "¿Cuál prefieres?"),
        ("Pas de souci, merci.", "Désolé."),
        ("```\nError: wrong type\n```\nwhat does this mean?", "Run the build."),
    ],
)
def test_look_alikes_are_not_corrections(user: str, agent: str) -> None:
    assert not lessons.is_correction(user, agent)


def test_lesson_text_drops_the_opening_rejection() -> None:
    assert lessons.lesson_text("No — use pnpm, not npm.") == "Use pnpm, not npm."
    assert lessons.lesson_text("Nein, nimm lieber pnpm.") == "Nimm lieber pnpm."
    assert lessons.lesson_text("Non, pas comme ça : garde les clés.").startswith("Pas comme ça")


def _retries(commands: list[tuple[str, int]], *, write_between: int = -1) -> list[str]:
    """The retries found in one made-up Claude session running these (command, exit) pairs."""
    root = Path(os.environ["HOME"]) / "claude"
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    records: list[dict[str, Any]] = [{"role": "user", "content": "do the thing"}]
    for i, (command, code) in enumerate(commands):
        if i == write_between:
            block = {"type": "tool_use", "id": "w", "name": "Edit", "input": {"file_path": "/p/a"}}
            records += [{"role": "assistant", "content": [block]}, _result("w", "updated")]
        records.append(_bash(f"t{i}", command))
        records.append(_result(f"t{i}", f"Exit code {code}\nboom" if code else "ok", bool(code)))
    _claude_session(root / "projects" / "-p", "e0000000-0000-4000-8000-000000000001", "/p", records)
    store.set_enabled("claude", True)
    conn = store.connect()
    store.sync(conn, ["claude"])
    return [m.worked for m in lessons.retries_in(conn, past.Window())]


def test_a_retry_is_a_near_command_that_worked(isolated_env: Path) -> None:
    assert _retries([("npm test", 1), ("npm test -- --runInBand", 0)]) == [
        "npm test -- --runInBand"
    ]


@pytest.mark.parametrize(
    "commands",
    [
        [("npm test", 1), ("npm test", 0)],  # the same command again: the fix was elsewhere
        [("pytest tests/a.py", 1), ("pytest tests/b.py", 0)],  # pointed at something else
        [("make build", 1), ("git commit -am wip", 0)],  # unrelated
        [("grep -rn TODO src", 1), ("grep -rn FIXME src", 0)],  # only looking
    ],
)
def test_retry_look_alikes(isolated_env: Path, commands: list[tuple[str, int]]) -> None:
    assert _retries(commands) == []


def test_a_write_between_makes_it_no_retry(isolated_env: Path) -> None:
    assert _retries([("npm test", 1), ("npm test -- --runInBand", 0)], write_between=1) == []


def test_command_not_found_then_the_program_run_another_way(isolated_env: Path) -> None:
    assert _retries([("mypy src", 127), ("uv run mypy src", 1)]) == ["uv run mypy src"]


def _scores(found: set[str], split: str) -> tuple[float, float]:
    gold = {m["key"] for m in LABELS["moments"] if m["label"] and m["split"] == split}
    sessions = {m["key"].rsplit("/", 1)[0] for m in LABELS["moments"] if m["split"] == split}
    mine = {k for k in found if k.rsplit("/", 1)[0] in sessions}
    tp = len(mine & gold)
    return tp / len(mine), tp / len(gold)


def test_lessons_precision_and_recall_on_the_labelled_fixture(fixture_agents: Path) -> None:
    """The figures the README reports (tools/eval_history.py), as floors: precision first."""
    assert len([m for m in LABELS["moments"] if m["label"]]) >= 40
    assert len([m for m in LABELS["moments"] if not m["label"]]) >= 40
    conn = _synced()
    window = past.Window(agents=ALL)
    found = {m.key for m in lessons.corrections_in(conn, window) + lessons.retries_in(conn, window)}
    tune_p, tune_r = _scores(found, "tune")
    hold_p, hold_r = _scores(found, "holdout")
    assert (tune_p, tune_r) == (1.0, 1.0)
    assert hold_p >= 0.88  # 16 of 18 when measured
    assert hold_r >= 0.72  # 16 of 22


def test_howto_hit_at_1_on_the_labelled_tasks(fixture_agents: Path) -> None:
    conn = _synced()
    tasks = LABELS["howto"]
    assert len(tasks) >= 20
    hits = 0
    for task in tasks:
        got = howtomod.rank(conn, task["query"], search.Filters(agents=ALL), limit=1, failed=False)
        hits += bool(got) and got[0].command == past.masked(task["expect"])
    assert hits / len(tasks) >= 0.95  # 28 of 29 when measured


# -- howto -----------------------------------------------------------------------------------


def test_howto_keeps_what_worked_and_masks_credentials(fixture_agents: Path) -> None:
    result = howtomod.howto("connect to the dev database")
    first = result.hits[0]
    assert first.ok
    assert first.command.startswith("psql postgres://app:")
    assert PASSWORD not in first.command
    assert "…(16)" in first.command
    assert first.turn
    assert first.agent == "claude"
    assert first.cwd == "/home/dev/api"
    every = howtomod.howto("connect to the dev database", failed=True, limit=20)
    assert any(h.ok is False and h.code == 2 for h in every.hits)
    assert all(h.ok for h in result.hits)


def test_howto_folds_near_identical_commands_into_the_last_that_worked(
    fixture_agents: Path,
) -> None:
    (hit,) = howtomod.howto("build the docs site", limit=1).hits
    assert hit.command == "mkdocs build --strict"
    assert hit.runs == 2  # and `mkdocs build` before it (the failed --strict is left out)


def test_howto_leaves_out_commands_that_only_look(fixture_agents: Path) -> None:
    found = howtomod.howto("flaky checkout test", limit=20, failed=True).hits
    assert not any(h.command.startswith(("cat ", "grep ")) for h in found)


def test_howto_propose_queues_the_best_once(fixture_agents: Path, vault: Path) -> None:
    first = howtomod.howto("deploy the api to staging", propose_to=vault)
    assert first.proposal is not None
    assert first.proposal.action == "proposed"
    assert "`make deploy ENV=staging`" in first.proposal.markdown
    inbox = (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")
    assert inbox.count("make deploy ENV=staging") == 1
    again = howtomod.howto("deploy the api to staging", propose_to=vault)
    assert again.proposal is not None
    assert again.proposal.action == "remembered"
    assert (vault / "AI" / "INBOX.md").read_text(encoding="utf-8") == inbox


def test_howto_propose_masks_credentials(fixture_agents: Path, vault: Path) -> None:
    result = howtomod.howto("connect to the dev database", propose_to=vault)
    assert result.proposal is not None
    assert result.proposal.action == "proposed"
    assert PASSWORD not in (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")


# -- lessons: proposals and the Stop hook's corrections --------------------------------------


def test_lessons_propose_each_moment_once(fixture_agents: Path, vault: Path) -> None:
    first = lessonsmod.find_lessons(since="2026-11-20", propose_to=vault)
    assert first.count == len(first.proposals) > 10
    assert {p.action for p in first.proposals} == {"proposed"}
    inbox = vault / "AI" / "INBOX.md"
    text = inbox.read_text(encoding="utf-8")
    assert "<!-- brain:to=LEARNINGS -->" in text
    assert "claude session a1c0ffee (Refactor the invoice totals)" in text
    # the inbox loses one (a person dropped it): it is still not proposed again
    kept = [line for line in text.splitlines() if "Don't rename modules" not in line]
    inbox.write_text("\n".join(kept) + "\n", encoding="utf-8")
    again = lessonsmod.find_lessons(since="2026-11-20", propose_to=vault)
    assert {p.action for p in again.proposals} == {"remembered"}
    assert "Don't rename modules" not in inbox.read_text(encoding="utf-8")


def test_corrections_of_one_session_for_the_stop_hook(fixture_agents: Path) -> None:
    # nothing synced yet: the function reads the session's own transcript itself
    found = lessonsmod.corrections("b2c0ffee-0005-4000-8000-000000000105")
    assert [m.lesson for m in found] == [
        "I'm on a remote box, it can't open a browser. Run it with --no-open.",
        "I said port 6007, 6006 is taken by the other project.",
    ]
    assert [m.lesson for m in lessonsmod.corrections(found[0].session, limit=1)] == [
        found[1].lesson
    ]
    conn = store.connect()
    sessions = {r[0] for r in conn.execute("SELECT DISTINCT session FROM turns")}
    assert sessions == {"b2c0ffee-0005-4000-8000-000000000105"}  # only that transcript read
    assert lessonsmod.corrections("no-such-session") == []


def test_corrections_is_empty_when_recall_is_off(isolated_env: Path) -> None:
    assert lessonsmod.corrections("b2c0ffee-0005-4000-8000-000000000105") == []


def test_a_rejected_tool_use_counts_as_the_agent_turn(isolated_env: Path) -> None:
    """The agent's turn a person corrects may be a command alone, one they rejected: Claude
    Code then writes an interruption marker and the person's words."""
    root = Path(os.environ["HOME"]) / "claude"
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    _claude_session(
        root / "projects" / "-p",
        "f0000000-0000-4000-8000-000000000002",
        "/p",
        [
            {"role": "user", "content": "Benchmark the endpoint."},
            _bash("t1", "ab -n 100 http://localhost/"),
            _result("t1", rejected, error=True),
            {
                "role": "user",
                "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
            },
            {"role": "user", "content": "No, use hey for load tests."},
        ],
    )
    store.set_enabled("claude", True)
    conn = _synced()
    (moment,) = lessons.corrections_in(conn, past.Window())
    assert moment.lesson == "Use hey for load tests."
    assert moment.turns[0].text == "$ ab -n 100 http://localhost/"
    assert _calls(conn, moment.session)[0][3] is None  # rejected: it neither worked nor failed


def test_a_lesson_holding_a_credential_is_masked(isolated_env: Path, vault: Path) -> None:
    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"  # noqa: S105 - made up
    root = Path(os.environ["HOME"]) / "claude"
    os.environ["CLAUDE_CONFIG_DIR"] = str(root)
    _claude_session(
        root / "projects" / "-p",
        "f0000000-0000-4000-8000-000000000001",
        "/p",
        [
            {"role": "user", "content": "push it"},
            {"role": "assistant", "content": [{"type": "text", "text": "Pushing with my token."}]},
            {"role": "user", "content": f"No, use GITHUB_TOKEN={token} from the vault."},
        ],
    )
    store.set_enabled("claude", True)
    result = lessonsmod.find_lessons(since="2020-01-01", propose_to=vault)
    (moment,) = result.moments
    assert token not in moment.lesson
    assert token not in moment.turns[1].text
    assert result.proposals[0].action == "proposed"
    assert token not in (vault / "AI" / "INBOX.md").read_text(encoding="utf-8")


# -- day and week ----------------------------------------------------------------------------


def _git(repo: Path, *args: str, when: str = "") -> None:
    env = {**os.environ}
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def utc() -> Iterator[None]:
    """Days are local days: pin the zone to UTC (and give the old one back)."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.fixture
def worked(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch, utc: None) -> Path:
    """A real repository with commits at known times, and Claude sessions that ran in it (in a
    subfolder), in a folder that is gone, and a Gemini session that names no folder."""
    repo = tmp_path / "shop"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for when, name in (
        ("2026-11-29T18:00:00+00:00", "the day before"),
        ("2026-11-30T10:30:00+00:00", "Move the lock after the ack"),
        ("2026-11-30T11:45:00+00:00", "Retry the webhook"),
    ):
        (repo / "src" / "x.txt").write_text(name, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", name, when=when)
    _git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("s", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "On a side branch", when="2026-11-30T12:00:00+00:00")
    root = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    edit = {"type": "tool_use", "id": "w1", "name": "Edit", "input": {"file_path": "lock.py"}}
    _claude_session(
        root / "projects" / "-shop",
        "90000000-0000-4000-8000-000000000001",
        str(repo / "src"),
        [
            {"role": "user", "content": "Fix the lock", "ts": "2026-11-30T10:00:00.000Z"},
            {"role": "assistant", "content": [edit], "ts": "2026-11-30T10:01:00.000Z"},
            _result("w1", "updated") | {"ts": "2026-11-30T10:01:10.000Z"},
            {"role": "user", "content": "and tomorrow too", "ts": "2026-12-01T09:00:00.000Z"},
        ],
    )
    _claude_session(
        root / "projects" / "-gone",
        "90000000-0000-4000-8000-000000000002",
        str(tmp_path / "deleted-project"),
        [{"role": "user", "content": "hello", "ts": "2026-11-30T15:00:00.000Z"}],
    )
    chats = isolated_env / ".gemini" / "tmp" / "abc" / "chats"
    chats.mkdir(parents=True)
    doc = {
        "sessionId": "g0000000-0000-4000-8000-000000000001",
        "projectHash": "abc",
        "messages": [
            {
                "id": "m1",
                "timestamp": "2026-11-30T16:00:00.000Z",
                "type": "user",
                "content": "notes",
            },
            {
                "id": "m2",
                "timestamp": "2026-11-30T16:01:00.000Z",
                "type": "gemini",
                "content": "",
                "toolCalls": [
                    {
                        "id": "wf1",
                        "name": "write_file",
                        "args": {"file_path": str(repo / "NOTES.md"), "content": "x"},
                        "status": "success",
                        "result": [{"functionResponse": {"response": {"output": "ok"}}}],
                    }
                ],
            },
        ],
    }
    (chats / "session-2026-11-30T16-00-g0000000.json").write_text(json.dumps(doc), "utf-8")
    for name in ("claude", "gemini"):
        store.set_enabled(name, True)
    return repo


def test_day_groups_sessions_files_and_commits_by_repository(worked: Path) -> None:
    result = daymod.day("2026-11-30")
    assert (result.date, result.session_count, result.commit_count) == ("2026-11-30", 3, 3)
    shop = next(r for r in result.repos if r.repo == str(worked))
    assert (shop.project, shop.git, shop.note) == ("shop", True, None)  # nothing to note: null
    assert [(s.agent, s.turn_count) for s in shop.sessions] == [("claude", 1), ("gemini", 1)]
    assert sorted(f.path for f in shop.files) == ["NOTES.md", "src/lock.py"]
    assert [c.summary for c in shop.commits] == [
        "On a side branch",  # every local branch, newest first
        "Retry the webhook",
        "Move the lock after the ack",
    ]
    assert shop.commits[0].at == "2026-11-30T12:00:00.000Z"
    gone = next(r for r in result.repos if (r.repo or "").endswith("deleted-project"))
    assert (gone.git, gone.note) == (False, "no longer exists; commits skipped")


def test_day_without_git_and_for_one_project(worked: Path) -> None:
    result = daymod.day("2026-11-30", git=False)
    assert result.commit_count == 0
    shop = next(r for r in result.repos if r.repo == str(worked))
    assert (shop.git, shop.note) == (False, None)
    only = daymod.day("2026-11-30", project="SHOP")
    assert [r.project for r in only.repos] == ["shop"]


def test_day_json_says_none_as_null(worked: Path) -> None:
    """`day`/`week --json`: a repository with nothing to note, a week with no --project, a
    session the agent kept no folder for: null, not "" (README: JSON, "None is null")."""
    day = brain("day", "2026-11-30", "--json")
    assert day.code == 0, day
    shop = next(r for r in day.json()["repos"] if r["repo"] == str(worked))
    assert (shop["project"], shop["note"]) == ("shop", None)
    week = brain("week", "--since", "2026-11-29", "--json").json()
    assert week["project"] is None
    nowhere = activity.place("", {})
    assert (nowhere.repo, nowhere.project, nowhere.note) == (
        None,
        None,
        "the agent keeps no folder",
    )


def test_week_is_the_days_one_by_one(worked: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    today = datetime.now(UTC).date()
    span = f"{(today - datetime(2026, 11, 29, tzinfo=UTC).date()).days + 1}d"
    week = daymod.week(span, project="shop")
    assert week.first_date == "2026-11-29"
    by_day = {d.date: d for d in week.days}
    assert by_day["2026-11-29"].session_count == 0  # a commit alone is not work in a session
    assert (by_day["2026-11-30"].session_count, by_day["2026-11-30"].commit_count) == (2, 3)
    assert (by_day["2026-12-01"].turn_count, by_day["2026-12-01"].commit_count) == (1, 0)
    assert week.commit_count == 3


def test_a_repository_whose_history_cannot_be_read_is_a_note(
    worked: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.rmtree(worked / ".git" / "objects")
    (worked / ".git" / "objects").mkdir()
    result = daymod.day("2026-11-30")
    shop = next(r for r in result.repos if r.repo == str(worked))
    assert shop.commits == ()
    assert shop.note.startswith("cannot read its history")


def test_day_rejects_a_bad_date(isolated_env: Path) -> None:
    from brain.errors import UsageError

    with pytest.raises(UsageError, match="not a day"):
        daymod.day("last tuesday")


def test_codex_call_and_output_shapes() -> None:
    """The shapes of Codex versions the fixture does not hold: local shell calls, the unified
    exec tool, the oldest {content, success} output, exec end events, apply_patch as argv."""
    from brain.recall.adapters import calls

    local = {
        "type": "local_shell_call",
        "call_id": "c1",
        "status": "completed",
        "action": {"type": "exec", "command": ["bash", "-lc", "make"], "working_directory": "/w"},
    }
    (call,) = calls.codex_call(local, "t", "s", "turn", "/home")
    assert (call.text, call.cwd, call.kind) == ("make", "/w", "shell")
    unified = {
        "type": "function_call",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": "cargo test", "workdir": "crates/a"}),
        "call_id": "c2",
    }
    (call,) = calls.codex_call(unified, "t", "s", "turn", "/repo")
    assert (call.text, call.cwd) == ("cargo test", "/repo/crates/a")
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: /abs/b.py\n*** End Patch"
    argv = {
        "type": "function_call",
        "name": "shell",
        "arguments": json.dumps({"command": ["apply_patch", patch]}),
        "call_id": "c3",
    }
    assert [(c.kind, c.n, c.text) for c in calls.codex_call(argv, "t", "s", "", "/r")] == [
        ("write", 0, "/r/a.py"),
        ("write", 1, "/abs/b.py"),
    ]
    out = "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 2\nOutput:\nerror: boom"
    done = calls.codex_outcome({"type": "function_call_output", "call_id": "c2", "output": out})
    assert done is not None
    assert (done.ok, done.code, done.output) == (False, 2, "error: boom")
    oldest = {"call_id": "c1", "output": {"content": "denied", "success": False}}
    done = calls.codex_outcome(oldest)
    assert done is not None
    assert (done.ok, done.code) == (False, None)
    end = {"type": "exec_command_end", "call_id": "c1", "exit_code": 0, "aggregated_output": "ok"}
    assert calls.codex_event(end) == calls.Outcome("c1", True, 0, "ok")


def test_a_rewritten_gemini_chat_completes_its_calls(isolated_env: Path) -> None:
    """Gemini CLI rewrites its chat document: a command still running at one read has ended at
    the next, and the stored call says so."""
    chats = isolated_env / ".gemini" / "tmp" / "abc" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-11-30T16-00-g1000000.json"

    def write(status: str, result: list[dict[str, Any]]) -> None:
        call = {"id": "sh1", "name": "run_shell_command", "args": {"command": "make docs"}}
        doc = {
            "sessionId": "g1000000-0000-4000-8000-000000000001",
            "messages": [
                {"id": "m1", "timestamp": "2026-11-30T16:00:00Z", "type": "user", "content": "go"},
                {
                    "id": "m2",
                    "timestamp": "2026-11-30T16:01:00Z",
                    "type": "gemini",
                    "content": "Building the docs.",
                    "toolCalls": [{**call, "status": status, "result": result}],
                },
            ],
        }
        path.write_text(json.dumps(doc), encoding="utf-8")

    write("executing", [])
    store.set_enabled("gemini", True)
    conn = store.connect()
    store.sync(conn, ["gemini"])
    assert conn.execute("SELECT ok, turn FROM calls").fetchone() == (None, "m2")
    write(
        "error", [{"functionResponse": {"response": {"output": "Output: no rule\nExit Code: 2"}}}]
    )
    os.utime(path, ns=(1, 1))  # a new mtime, whatever the clock's resolution
    store.sync(conn, ["gemini"])
    assert conn.execute("SELECT ok, code, output FROM calls").fetchone() == (0, 2, "no rule")


# -- every agent recall reads: Gemini CLI's JSONL, Copilot CLI, pi, OpenCode -------------------

NEW = ("gemini", "copilot", "pi", "opencode")
TRANSCRIPTS = ROOT / "testdata" / "transcripts"


@pytest.fixture
def more_agents(isolated_env: Path) -> Path:
    """Each agent's fixture session (testdata/transcripts) where the agent keeps it, enabled:
    every one a failed command, a near one that worked, a file written and a correction."""
    from test_recall import opencode_db

    shutil.copytree(TRANSCRIPTS / "gemini" / ".gemini", isolated_env / ".gemini")
    shutil.copytree(TRANSCRIPTS / "copilot", isolated_env / ".copilot")
    shutil.copytree(TRANSCRIPTS / "pi", isolated_env / ".pi" / "agent")
    opencode_db(isolated_env)
    for name in NEW:
        store.set_enabled(name, True)
    return isolated_env


def test_lessons_in_every_agent(more_agents: Path) -> None:
    """Each new agent's retry (a failed command, then a near one that worked) and correction."""
    found = lessonsmod.find_lessons(since="2026-11-20").moments
    retries = {m.agent: (m.failed, m.worked) for m in found if m.kind == "retry"}
    assert retries == {
        "gemini": ("buf generate", "npx @bufbuild/buf generate"),
        "copilot": ("pytest tests/test_login.py", "python -m pytest tests/test_login.py"),
        "pi": ("pnpm run build-storybook", "pnpm run storybook:build"),
        "opencode": ("terraform plan", "terraform init && terraform plan"),
    }
    corrections = {m.agent: m.lesson for m in found if m.kind == "correction"}
    assert corrections == {
        "gemini": "Use the pinned buf in tools/bin instead of npx",
        "copilot": "Don't hardcode the limit, read it from settings.RATE_LIMIT",
        "pi": "Keep the old script name and add an alias in package.json instead",
        "opencode": "Don't touch the module, pin the aws provider version instead",
    }
    folders = {m.agent: m.cwd for m in found}
    assert folders == {
        "gemini": "/home/dev/shop",  # its project's .project_root
        "copilot": "/home/dev/api",
        "pi": "/home/dev/web",
        "opencode": "/home/dev/infra",
    }


def test_howto_in_every_agent(more_agents: Path) -> None:
    cases = {
        "gemini": ("regenerate the protobuf stubs", "npx @bufbuild/buf generate"),
        "copilot": ("run the login tests", "python -m pytest tests/test_login.py"),
        "pi": ("build storybook", "pnpm run storybook:build"),
        "opencode": ("terraform plan drift", "terraform init && terraform plan"),
    }
    for agent, (task, command) in cases.items():
        hits = howtomod.howto(task, agent=agent).hits
        assert hits, agent
        assert (hits[0].command, hits[0].ok, hits[0].agent) == (command, True, agent)
        assert hits[0].turn  # the recall id of the turn it followed


def test_corrections_of_a_session_of_every_agent(more_agents: Path) -> None:
    """The Stop hook's quotes: each agent's transcript is found by its session id alone."""
    sessions = {
        "9a1b2c3d-3333-4000-8000-00000000cafe": "Use the pinned buf",
        "c0d1e2f3-a4b5-4c6d-8e7f-901a2b3c4d5e": "Don't hardcode the limit",
        "b7e1d2c3-5555-4000-8000-0000000000aa": "Keep the old script name",
        "ses_5f1e0a3b2ffeW8aH1q2r3s4t5u": "Don't touch the module",
    }
    for session, lesson in sessions.items():
        (moment,) = lessonsmod.corrections(session)
        assert moment.lesson.startswith(lesson), session
    conn = store.connect()
    assert {r[0] for r in conn.execute("SELECT DISTINCT session FROM turns")} == set(sessions)


def test_day_places_every_agents_sessions_in_their_repositories(
    more_agents: Path, tmp_path: Path
) -> None:
    """day/week group the new agents' sessions by their folders, with the files they wrote."""
    for folder in ("shop", "api", "web", "infra"):
        (tmp_path / folder).mkdir()
        subprocess.run(["git", "init", "-q", str(tmp_path / folder)], check=True)
    swap = {"/home/dev/": f"{tmp_path}/"}
    _relocate(more_agents, swap)
    week = daymod.week("2026-11-27", git=False)
    places = {
        (s.agent, r.project): sorted(f.path for f in r.files)
        for d in week.days
        for r in d.repos
        for s in r.sessions
    }
    assert places == {
        ("gemini", "shop"): ["gen/README.md"],
        ("copilot", "api"): ["middleware/ratelimit.py"],
        ("pi", "web"): [".github/workflows/ci.yml"],
        ("opencode", "infra"): ["modules/vpc/main.tf", "versions.tf"],
    }


def _relocate(home: Path, swap: dict[str, str]) -> None:
    """The fixtures' folders (/home/dev/...) moved under a temp dir holding real repositories."""
    import sqlite3 as sql

    def moved(text: str) -> str:
        for old, new in swap.items():
            text = text.replace(old, new)
        return text

    for pattern in (
        ".gemini/tmp/*/*/*.jsonl",
        ".gemini/tmp/*/.project_root",
        ".copilot/**/*.jsonl",
    ):
        for path in home.glob(pattern):
            path.write_text(moved(path.read_text(encoding="utf-8")), encoding="utf-8")
    for path in home.glob(".pi/agent/sessions/*/*.jsonl"):
        path.write_text(moved(path.read_text(encoding="utf-8")), encoding="utf-8")
    conn = sql.connect(home / ".local" / "share" / "opencode" / "opencode.db")
    for table in ("session", "part"):
        column = "directory" if table == "session" else "data"
        for key, value in conn.execute(f"SELECT id, {column} FROM {table}").fetchall():  # noqa: S608
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE id = ?", (moved(value), key))  # noqa: S608
    conn.commit()
    conn.close()
