"""Recall's core: adapters on fixtures in each agent's format, incremental ingest, bad input."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import ROOT

from brain.recall import search, store
from brain.recall.adapters import BODY_CAP, Chunk, FileState
from brain.recall.adapters.known import registry

FIXTURES = ROOT / "testdata" / "transcripts"
SESSION = "5b0c1f7e-0000-4000-8000-000000000001"


@pytest.fixture
def agents(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture transcripts where each agent keeps them (a copy: tests may append)."""
    shutil.copytree(FIXTURES / "claude", tmp_path / "claude")
    shutil.copytree(FIXTURES / "codex", tmp_path / "codex")
    shutil.copytree(FIXTURES / "gemini" / ".gemini", isolated_env / ".gemini")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    return tmp_path


def opencode_db(isolated_env: Path) -> Path:
    """testdata's OpenCode database, built where OpenCode keeps it (XDG_DATA_HOME/opencode)."""
    path = isolated_env / ".local" / "share" / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript((FIXTURES / "opencode" / "opencode.sql").read_text(encoding="utf-8"))
    conn.execute("PRAGMA journal_mode = WAL")  # as OpenCode opens it
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def more_agents(isolated_env: Path) -> Path:
    """Copilot CLI's, pi's and OpenCode's fixture sessions where each keeps them."""
    shutil.copytree(FIXTURES / "copilot", isolated_env / ".copilot")
    shutil.copytree(FIXTURES / "pi", isolated_env / ".pi" / "agent")
    opencode_db(isolated_env)
    return isolated_env


def _read(name: str) -> list[tuple[str, str, str]]:
    ad = registry()[name]
    out = []
    for path in ad.files():
        chunk = ad.read(path, path.read_bytes(), 0, FileState())
        if chunk.titled:
            out += [(t.role, t.body, chunk.state.title) for t in chunk.turns]
    return out


def test_claude_keeps_conversation_and_skips_machinery(agents: Path) -> None:
    turns = _read("claude")
    bodies = " ".join(b for _, b, _ in turns)
    assert [r for r, _, _ in turns] == ["user", "assistant", "user"]
    assert "Paynova" in turns[0][1]
    assert "zebras" not in bodies  # system reminder, meta, side chain
    assert "/clear" not in bodies
    assert "secret thoughts" not in bodies  # thinking blocks are not text
    assert "walruses" not in bodies  # no title: a headless run
    assert {t for _, _, t in turns} == {"Checkout webhook fix"}  # custom title beats ai-title


def test_claude_prompt_typed_mid_turn_is_the_users_turn(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code 2.1.x writes a prompt typed while it works as a `queued_command` attachment
    and no `user` record: recall finds those words, as the person's, in the session's place; a
    background task's notification queued the same way is not the person's."""
    shutil.copytree(FIXTURES / "claude-queued", tmp_path / "claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    turns = _read("claude")
    assert [(r, b) for r, b, _ in turns] == [
        ("user", "Move the invoice export to the nightly job."),
        ("user", "and keep the CSV columns in the order finance uses"),
        (
            "assistant",
            "The export now runs in the nightly job, with the columns in finance's order.",
        ),
    ]
    assert _sync("claude").turn_count == 3
    (hit,) = _find("csv columns finance order")[:1]
    assert (hit.id, hit.role, hit.cwd) == (
        "d7000000-0000-4000-8000-000000000004",
        "user",
        "/home/dev/shop",
    )
    assert hit.session == "7c2d9e4a-0000-4000-8000-0000000000a1"
    assert not _find("walrus")  # the task notification


def test_codex_reads_messages_not_events_or_tools(agents: Path) -> None:
    turns = _read("codex")
    assert [r for r, _, _ in turns] == ["user", "assistant"]
    assert turns[0][1].startswith("Rename the ledger table")
    assert turns[0][2].startswith("Rename the ledger table")  # the first prompt is the title


def test_gemini_reads_user_and_model_messages(agents: Path) -> None:
    turns = [t for t in _read("gemini") if "invoice" in t[2]]  # the one-document form
    assert [r for r, _, _ in turns] == ["user", "assistant", "user"]
    assert turns[2][1] == "Thanks, that fixed the invoice test."


def test_gemini_reads_its_jsonl_chats(agents: Path) -> None:
    """Gemini CLI's `session-*.jsonl` (chatRecordingService.ts since its PR #23749): a message
    appended again is one turn, its last version; what the person typed, not the @-file Gemini
    expanded; info notices and hook context are not conversation; `$set` names it; the project's
    `.project_root` is its folder."""
    ad = registry()["gemini"]
    (path,) = [p for p in ad.files() if p.suffix == ".jsonl"]
    chunk = ad.read(path, path.read_bytes(), 0, FileState())
    assert chunk.titled
    assert chunk.rewrites
    assert chunk.state.title == "Regenerate the billing protobuf stubs"
    assert chunk.state.cwd == "/home/dev/shop"
    assert chunk.state.session == "9a1b2c3d-3333-4000-8000-00000000cafe"
    assert [t.role for t in chunk.turns] == ["user", "assistant", "assistant", "user", "assistant"]
    assert chunk.turns[0].body == "Regenerate the protobuf stubs for @proto/billing.proto"
    bodies = " ".join(t.body for t in chunk.turns)
    assert "quagga" not in bodies  # the expanded file
    assert "Request cancelled" not in bodies
    assert "hook_context" not in bodies
    assert chunk.end == len(path.read_bytes())  # append-only: the next read starts there
    shells = [(c.text, c.cwd) for c in chunk.calls if c.kind == "shell"]
    assert shells == [
        ("buf generate", "/home/dev/shop"),
        ("npx @bufbuild/buf generate", "/home/dev/shop"),
        ("tools/bin/buf generate", "/home/dev/shop"),
    ]


def test_gemini_jsonl_grows_and_is_read_from_where_it_stopped(agents: Path) -> None:
    """A sync between two appends reads only the new lines; a message appended again with an
    edited text replaces the stored turn, and a later `$set` summary retitles every turn."""
    assert _sync("gemini").turn_count == 3 + 5
    ad = registry()["gemini"]
    (path,) = [p for p in ad.files() if p.suffix == ".jsonl"]
    edited = {
        "id": "a0c4e1d2-0003-4000-8000-00000000g003",
        "timestamp": "2026-11-27T10:02:05.000Z",
        "type": "gemini",
        "content": "Switched to the pinned tools/bin/buf; the axolotl stubs are regenerated.",
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(edited) + "\n")
        fh.write(json.dumps({"$set": {"summary": "Billing stubs, the pinned buf"}}) + "\n")
    report = _sync("gemini")
    assert (report.read, report.turn_count) == (1, 0)
    assert report.bytes < 400  # the two new lines, not the file
    hit = _find("axolotl")[0]  # its own words first (its neighbours follow)
    assert hit.id == edited["id"]
    assert hit.title == "Billing stubs, the pinned buf"
    assert _find("stubs")
    assert {h.title for h in _find("protobuf")} == {hit.title}


def _sync(*names: str) -> store.SyncReport:
    conn = store.connect()
    try:
        return store.sync(conn, list(names))
    finally:
        conn.close()


def _find(query: str, **kw: str) -> list[search.Hit]:
    conn = store.connect()
    try:
        words = search.terms(query)
        return search.hits(conn, words, search.ranked(conn, words, search.Filters(**kw), 10))
    finally:
        conn.close()


def test_sync_is_incremental_and_idempotent(agents: Path) -> None:
    first = _sync("claude", "codex", "gemini")
    assert first.turn_count == 3 + 2 + 3 + 5
    again = _sync("claude", "codex", "gemini")
    assert (again.read, again.turn_count) == (0, 0)
    (hit,) = _find("paynova lock acknowledgement")[:1]
    assert hit.id == "c1000000-0000-4000-8000-000000000003"
    assert hit.title == "Checkout webhook fix"
    assert hit.cwd == "/home/dev/shop"
    assert len(hit.snippet) < 200
    assert _find("journal_entries migrations", agent="codex")[0].agent == "codex"
    assert _find("invoice pdf fonts")[0].agent == "gemini"


def _line(uuid: str, text: str, session: str = SESSION) -> str:
    rec = {
        "type": "user",
        "userType": "external",
        "sessionId": session,
        "cwd": "/home/dev/shop",
        "uuid": uuid,
        "timestamp": "2025-05-08T09:05:00.000Z",
        "message": {"role": "user", "content": text},
    }
    return json.dumps(rec)


def test_append_resumes_and_truncated_line_waits(agents: Path) -> None:
    _sync("claude")
    path = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    half = _line("c1000000-0000-4000-8000-00000000000a", "the quokka migration plan")
    with path.open("a", encoding="utf-8") as fh:
        fh.write(_line("c1000000-0000-4000-8000-00000000000b", "wombat deploy notes") + "\n")
        fh.write(half[:40])  # a record still being written
    report = _sync("claude")
    assert (report.read, report.turn_count, report.skipped_count) == (1, 1, 0)
    assert _find("wombat")
    assert not _find("quokka")
    with path.open("a", encoding="utf-8") as fh:
        fh.write(half[40:] + "\n")
    assert _sync("claude").turn_count == 1
    assert _find("quokka")
    # the turn before the appended ones now has them as context: found through its neighbour
    assert any(h.id.endswith("0009") for h in _find("wombat quokka"))


def test_resumed_session_in_a_new_file_inserts_nothing_twice(agents: Path) -> None:
    _sync("claude")
    src = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    copy = src.with_name("9d9d9d9d-0000-4000-8000-000000000002.jsonl")
    copy.write_bytes(src.read_bytes())
    report = _sync("claude")
    assert (report.read, report.turn_count) == (1, 0)


def test_bad_input_is_skipped_with_a_count(agents: Path) -> None:
    path = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    huge = "x " * (BODY_CAP * 2) + " platypus"
    with path.open("ab") as fh:
        fh.write(b"{not json\n")
        fh.write(b'{"type": "user", "message": "\xff\xfe broken bytes"}\n')
        fh.write(b"[1, 2, 3]\n")
        fh.write(
            (_line("c1000000-0000-4000-8000-0000000000cc", "capybara " + huge) + "\n").encode()
        )
    report = _sync("claude")
    # not JSON, not an object: skipped; bytes that are not UTF-8 are read replaced (U+FFFD)
    assert report.skipped_count == 2
    (hit,) = [h for h in _find("capybara") if h.id.endswith("00cc")]
    assert not _find("platypus")  # past the cap
    conn = store.connect()
    (body,) = conn.execute(
        "SELECT body FROM fts WHERE rowid = (SELECT id FROM turns WHERE tid = ?)", (hit.id,)
    ).fetchone()
    assert len(body) <= BODY_CAP + 2


def test_vanished_file_is_skipped(agents: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ad = registry()["claude"]
    real = ad.files

    def files() -> list[Path]:
        found = list(real())
        return [*found, found[0].with_name("gone-0000.jsonl")]

    monkeypatch.setattr(type(ad), "files", lambda self: files())
    report = _sync("claude")
    assert report.skipped_count == 1
    assert report.turn_count == 3


def test_filters_and_current_session(agents: Path) -> None:
    _sync("claude", "codex", "gemini")
    assert _find("paynova", exclude_session=SESSION) == []
    assert _find("paynova", since="2025-05-09") == []
    assert _find("ledger", cwd="/home/dev/api")
    assert _find("ledger", cwd="/home/dev/ap") == []
    assert _find("invoice", cwd="/home/dev") == []  # Gemini keeps no folder


def test_user_text_never_reaches_match_syntax(agents: Path) -> None:
    _sync("claude")
    for query in ['"', "NOT", "body:x", "c++ AND (", "*", "NEAR(a b)"]:
        words = re.findall(r"\w+", query.casefold())  # never an FTS5 error, nor an operator
        for hit in _find(query):
            assert any(word in f"{hit.title} {hit.snippet}".casefold() for word in words), query


def test_forget_deletes_an_agent(agents: Path) -> None:
    _sync("claude", "codex")
    conn = store.connect()
    assert store.forget(conn, "codex") == 2
    assert conn.execute("SELECT count(*) FROM fts").fetchone()[0] == 3


def test_a_turn_is_found_through_its_neighbours(agents: Path) -> None:
    path = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    with path.open("a", encoding="utf-8") as fh:
        fh.write(_line("c1000000-0000-4000-8000-00000000000b", "the okapi rollout plan") + "\n")
    _sync("claude")
    found = {h.id[-4:]: h for h in _find("okapi")}
    assert next(iter(found)) == "000b"  # its own words first
    # the turn before it holds no "okapi": found through its neighbour, shown from its start
    assert found["0009"].snippet == "Yes, do that, and keep the retry at three attempts."
    assert found["000b"].score > found["0009"].score > 0


def test_turns_take_their_place_in_time_order(agents: Path) -> None:
    _sync("claude")
    path = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    early = json.loads(_line("c1000000-0000-4000-8000-0000000000e0", "an earlier remark"))
    early["timestamp"] = "2025-05-08T08:00:00.000Z"  # before every turn stored so far
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(early) + "\n")
    assert _sync("claude").turn_count == 1
    conn = store.connect()
    rows = conn.execute("SELECT pos, tid FROM turns WHERE session = ? ORDER BY pos", (SESSION,))
    positions, order = zip(*rows, strict=True)
    by_time = conn.execute("SELECT tid FROM turns WHERE session = ? ORDER BY ts, id", (SESSION,))
    assert list(order) == [tid for (tid,) in by_time]
    assert order[0].endswith("00e0")
    assert list(positions) == list(range(positions[0], positions[0] + len(positions)))


def test_a_new_title_reaches_every_turn_of_the_session(agents: Path) -> None:
    _sync("claude")
    assert not _find("axolotl")
    path = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    rec = {"type": "custom-title", "customTitle": "Axolotl checkout", "sessionId": SESSION}
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
    _sync("claude")
    hits = _find("axolotl")
    assert len(hits) == 3
    assert {h.title for h in hits} == {"Axolotl checkout"}
    conn = store.connect()
    titles = conn.execute(
        "SELECT DISTINCT title FROM fts WHERE rowid IN (SELECT id FROM turns WHERE session = ?)",
        (SESSION,),
    ).fetchall()
    assert titles == [("Axolotl checkout",)]


def test_a_word_in_most_turns_ranks_nothing_alone(agents: Path) -> None:
    folder = next((agents / "claude" / "projects").glob("*"))
    lines = [
        json.dumps({"type": "custom-title", "customTitle": "Alpaca notes", "sessionId": "s-alpaca"})
    ]
    for i in range(12):
        words = "alpaca lemur migration" if i == 3 else f"alpaca remark number {i}"
        rec = json.loads(_line(f"a1000000-0000-4000-8000-{i:012d}", words, session="s-alpaca"))
        rec["timestamp"] = f"2025-06-01T10:{i:02d}:00.000Z"
        lines.append(json.dumps(rec))
    (folder / "s-alpaca.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _sync("claude")
    # "alpaca" is in most turns (IDF 0): the rarer word decides; alone, the newest come first
    assert _find("alpaca lemur")[0].id.endswith("000000000003")
    assert [h.id[-2:] for h in _find("alpaca")][:3] == ["11", "10", "09"]


def test_an_old_schema_is_rebuilt_silently(agents: Path) -> None:
    path = store.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE turns(id INTEGER PRIMARY KEY, agent TEXT, tid TEXT, session TEXT, ts TEXT,"
        " role TEXT, cwd TEXT);"
        "CREATE VIRTUAL TABLE fts USING fts5(body, context, title);"
        "INSERT INTO turns VALUES (1, 'claude', 'stale', 's', '', 'user', '');"
        "PRAGMA user_version = 1;"
    )
    old.close()
    assert _sync("claude").turn_count == 3
    conn = store.connect()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM turns WHERE tid = 'stale'").fetchone()[0] == 0
    assert _find("paynova")


def test_rows_reach_fts5_in_rowid_order(agents: Path) -> None:
    """Turns stored out of file order (their timestamps run backwards) still reach FTS5 by
    rowid: a lower rowid makes FTS5 write its pending terms out as one more segment."""
    folder = next((agents / "claude" / "projects").glob("*"))
    lines = [json.dumps({"type": "ai-title", "aiTitle": "Backwards", "sessionId": "s-back"})]
    for i in range(120):
        rec = json.loads(_line(f"b1000000-0000-4000-8000-{i:012d}", f"word{i} note", "s-back"))
        rec["timestamp"] = f"2025-06-01T{23 - i // 60:02d}:{59 - i % 60:02d}:00.000Z"
        lines.append(json.dumps(rec))
    (folder / "s-back.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _sync("claude")
    conn = store.connect()
    assert conn.execute("SELECT count(*) FROM fts_data").fetchone()[0] < 8  # 17 unsorted


# -- Copilot CLI, OpenCode, pi ---------------------------------------------------------------


def _chunks(name: str) -> list[tuple[Path, Chunk]]:
    from brain.recall.store import _load

    ad = registry()[name]
    return [(p, ad.read(p, _load(ad, p)[1], 0, FileState())) for p in ad.files()]


def test_copilot_reads_events_jsonl(more_agents: Path) -> None:
    """Copilot CLI's session-state/<id>/events.jsonl (github/copilot-sdk session-events.ts): the
    person's and the assistant's messages; a skill's injected prompt and a sub-agent's message
    are not conversation; the folder from session.start, the title from session.title_changed."""
    ((path, chunk),) = _chunks("copilot")
    assert path.parent.name == chunk.state.session == "c0d1e2f3-a4b5-4c6d-8e7f-901a2b3c4d5e"
    assert (chunk.state.cwd, chunk.state.title) == ("/home/dev/api", "Login rate limit")
    assert [t.role for t in chunk.turns] == ["user", "assistant", "assistant", "user", "assistant"]
    assert chunk.turns[0].body == "Add a rate limit to the login endpoint"  # as displayed
    assert "okapi" not in " ".join(t.body for t in chunk.turns)
    assert [(c.kind, c.text) for c in chunk.calls] == [
        ("write", "/home/dev/api/middleware/ratelimit.py"),
        ("shell", "pytest tests/test_login.py"),
        ("shell", "python -m pytest tests/test_login.py"),
    ]
    assert [(o.ok, o.code) for o in chunk.outcomes] == [(True, None), (False, 127), (True, 0)]


def test_pi_reads_its_session_tree(more_agents: Path) -> None:
    """pi's sessions/--<cwd>--/<time>_<uuid>.jsonl (pi-mono docs/session.md): user and assistant
    text (not thinking, compaction summaries or extensions' messages), tool calls with the
    results that end them, a `!` command with its exit code; the name from session_info."""
    ((path, chunk),) = _chunks("pi")
    assert chunk.state.session == "b7e1d2c3-5555-4000-8000-0000000000aa"
    assert path.stem.endswith(chunk.state.session)
    assert (chunk.state.cwd, chunk.state.title) == ("/home/dev/web", "Fix the storybook CI build")
    bodies = " ".join(t.body for t in chunk.turns)
    assert len(chunk.turns) == 6
    assert not {"capybaras", "narwhal"} & set(bodies.split())
    assert all(t.id.startswith("a1") and len(t.id) == 21 for t in chunk.turns)
    ended = {o.id: (o.ok, o.code) for o in chunk.outcomes}
    assert [(c.text, ended[c.id]) for c in chunk.calls] == [
        ("pnpm run build-storybook", (False, 1)),
        ("pnpm run storybook:build", (True, None)),
        ("/home/dev/web/.github/workflows/ci.yml", (True, None)),
        ("git diff --stat", (True, 0)),
    ]


def test_opencode_reads_its_database_read_only(more_agents: Path) -> None:
    """OpenCode's opencode.db (session, message and part tables: packages/core/src/session/
    sql.ts): one recall file per top-level session, its text parts (not synthetic ones, not
    reasoning), its tool parts as calls; a sub-agent's session is not read; a placeholder title
    gives way to the first prompt. The database is never written."""
    db = more_agents / ".local" / "share" / "opencode" / "opencode.db"
    before = db.read_bytes()
    chunks = dict((p.name, c) for p, c in _chunks("opencode"))
    assert set(chunks) == {"ses_5f1e0a3b2ffeW8aH1q2r3s4t5u", "ses_5f1e0a3b2ffeW8aH1q2r3s4t5w"}
    drift = chunks["ses_5f1e0a3b2ffeW8aH1q2r3s4t5u"]
    assert (drift.state.title, drift.state.cwd) == ("Terraform plan drift", "/home/dev/infra")
    assert [t.role for t in drift.turns] == ["user", "assistant", "user", "assistant"]
    assert drift.turns[0].body == "Why does terraform plan show drift on the vpc module?"
    bodies = " ".join(t.body for t in drift.turns)
    assert "dodo" not in bodies
    assert "yaks" not in bodies
    assert [(c.kind, c.text, c.cwd) for c in drift.calls] == [
        ("shell", "terraform plan", "/home/dev/infra/envs/prod"),
        ("shell", "terraform init && terraform plan", "/home/dev/infra/envs/prod"),
        ("write", "/home/dev/infra/modules/vpc/main.tf", "/home/dev/infra"),
        ("write", "/home/dev/infra/versions.tf", "/home/dev/infra"),
    ]
    assert [(o.ok, o.code) for o in drift.outcomes][:2] == [(False, 1), (True, 0)]
    rotate = chunks["ses_5f1e0a3b2ffeW8aH1q2r3s4t5w"]
    assert rotate.state.title == "Rotate the staging database credentials"
    assert db.read_bytes() == before


def test_opencode_session_read_again_when_a_part_changes(more_agents: Path) -> None:
    """A part rewritten in place (a tool that finished, a text that grew) changes the session's
    signature: the next sync reads that session again, and only that one."""
    assert _sync("opencode").turn_count == 6
    assert _sync("opencode").read == 0
    db = more_agents / ".local" / "share" / "opencode" / "opencode.db"
    conn = sqlite3.connect(db)
    text = json.dumps({"type": "text", "text": "Rotated them through the vault engine; gecko."})
    conn.execute(  # OpenCode stamps an update with the time it is made: after all before it
        "UPDATE part SET data = ?, time_updated = (SELECT max(time_updated) + 1 FROM session)"
        " WHERE id = 'prt_n0201'",
        (text,),
    )
    conn.commit()
    conn.close()
    report = _sync("opencode")
    assert (report.read, report.turn_count) == (1, 0)
    assert _find("gecko")[0].id == "msg_n02"  # edited in place: its own words first


def test_opencode_database_that_is_not_one_is_skipped(isolated_env: Path) -> None:
    db = isolated_env / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database at all" * 100)
    report = _sync("opencode")
    assert (report.file_count, report.turn_count) == (0, 0)


def test_new_agents_sync_and_are_found(more_agents: Path) -> None:
    report = _sync("copilot", "pi", "opencode")
    assert (report.file_count, report.turn_count) == (1 + 1 + 2, 5 + 6 + 6)
    assert _find("rate limit login")[0].agent == "copilot"
    assert _find("storybook alias")[0].agent == "pi"
    (hit,) = [h for h in _find("nat gateway drift") if h.agent == "opencode"][:1]
    assert hit.cwd == "/home/dev/infra"
    assert _find("credentials", cwd="/home/dev/infra")[0].title == (
        "Rotate the staging database credentials"
    )
    again = _sync("copilot", "pi", "opencode")
    assert (again.read, again.turn_count) == (0, 0)


def test_a_transcript_of_gigabytes_is_read_in_bounded_memory(agents: Path) -> None:
    """A 4 GB (sparse) file among the transcripts, as a runaway program or a disk error leaves
    one: `brain recall sync` reads it in pieces of READ_MAX under an address-space limit of
    1.5 GB (it read the whole file into memory and crashed on MemoryError), and the other
    sessions are stored."""
    import resource
    import subprocess
    import sys

    store.set_enabled("claude", True)
    huge = agents / "claude" / "projects" / "-home-dev-shop" / "huge.jsonl"
    huge.parent.mkdir(parents=True, exist_ok=True)
    with huge.open("wb") as fh:
        fh.truncate(4 << 30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    proc = subprocess.run(
        [sys.executable, "-m", "brain", "recall", "sync"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,  # a limit of the child's alone, set before it runs brain
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _find("webhook")


def test_a_transcript_longer_than_read_max_is_read_whole_in_pieces(
    agents: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces of READ_MAX each resume where the last stopped: one sync stores every turn of a
    file many times that long, and a sync that stopped between pieces is finished by the next."""
    monkeypatch.setattr(store, "READ_MAX", 4096)  # the title is in the first
    path = next((agents / "claude" / "projects").glob(f"*/{SESSION}.jsonl"))
    words = [f"zebu{n:03d}" for n in range(60)]
    with path.open("a", encoding="utf-8") as fh:
        for n, word in enumerate(words):
            fh.write(_line(f"c2000000-0000-4000-8000-{n:012d}", f"the {word} runbook") + "\n")
    assert path.stat().st_size > 3 * 4096
    _sync("claude")
    assert all(_find(word) for word in words)
    assert _sync("claude").read == 0  # all read: nothing left over for the next sync

    with path.open("a", encoding="utf-8") as fh:
        for n, word in enumerate(words):
            fh.write(_line(f"c3000000-0000-4000-8000-{n:012d}", f"the yak{word} plan") + "\n")
    with store.connect() as conn:  # one piece, as a sync stopped after it leaves the file
        got = store._read(registry()["claude"], path, store._saved(conn, path), False)
        with store.transaction(conn):
            store._write(conn, registry()["claude"], path, got)
    assert got.more
    assert not all(_find(f"yak{word}") for word in words)
    assert _sync("claude").read == 1  # the rest, though the file has not changed since
    assert all(_find(f"yak{word}") for word in words)
