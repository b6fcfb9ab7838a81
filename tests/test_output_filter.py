"""The one output step (brain.present: `out`, `err`, `dumps`, `render`; the MCP server's `call`;
the desk's templates): whatever a command shows, a credential in it is masked and no control or
bidi character reaches a terminal raw, wherever the text came from (the vault, an agent's
transcript, a file's name, a query typed on the command line).

The sweep at the end plants a key in every kind of input and runs every command of the Typer app
(text and --json), the hooks' forms of pack, prime and settle, every MCP tool and every desk page:
the commands are read from the app itself, so one added later fails here until it is run too.
Credentials are built at run time from a seeded RNG (tests/test_masking.py): no token literal
lives in this file.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Run, brain, git
from test_masking import AWS, GITHUB

KEY = GITHUB  # ghp_ and 36 characters
MASK = f"{KEY[:4]}…({len(KEY)})"
ODD = "\u202eb\tc\x1b[2J"  # a bidi override, a tab and a terminal sequence, as in a file's name
HISTORY = ROOT / "testdata" / "transcripts" / "history"
SESSION = "b2c0ffee-0004-4000-8000-000000000104"  # "Seed the local database", 2026-11-27, api
TRANSCRIPT = Path("claude/projects/-home-dev-api") / f"{SESSION}.jsonl"


def keys_in(text: str) -> list[str]:
    """What of a planted credential `text` shows (nothing: [])."""
    return [k[4:16] for k in (KEY, AWS) if k[4:16] in text]


def leaks(text: str) -> list[str]:
    """What of a planted credential or a raw control `text` shows (nothing: [])."""
    return keys_in(text) + [c for c in ("\x1b[2J", "\u202e", "\x9b") if c in text]


def assert_clean(text: str, where: str) -> None:
    assert leaks(text) == [], (where, text)


def record(kind: str, **fields: Any) -> str:
    """A line of the Claude Code session SESSION."""
    rec = {"type": kind, "sessionId": SESSION, "cwd": "/home/dev/api", **fields}
    return json.dumps(rec) + "\n"


def plant_transcripts(root: Path) -> dict[str, str]:
    """The history fixture with SESSION titled with KEY, a file named with it and one with ODD
    written, and KEY said in a turn; the environment that reads it (recall on for claude)."""
    shutil.copytree(HISTORY / "claude", root / "claude")
    write = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Write", "input": args}
            for n, args in enumerate(
                [
                    {"file_path": f"/home/dev/api/config/{KEY}.env", "content": "x"},
                    {"file_path": f"/home/dev/api/odd{ODD}.txt", "content": "x"},
                ]
            )
        ],
    }
    with (root / TRANSCRIPT).open("a", encoding="utf-8") as fh:
        fh.write(
            record(
                "user",
                uuid="c0ffee00-0000-4000-8000-000000000001",
                timestamp="2026-11-27T13:04:00.000Z",
                message={"role": "user", "content": f"seed it with the token {KEY} please"},
            )
        )
        fh.write(
            record(
                "assistant",
                uuid="c0ffee00-0000-4000-8000-000000000002",
                timestamp="2026-11-27T13:05:00.000Z",
                message=write,
            )
        )
        fh.write(record("custom-title", customTitle=f"Seed the local database {KEY}"))
    env = {"CLAUDE_CONFIG_DIR": str(root / "claude"), "BRAIN_WORKER": "0"}
    assert brain("recall", "enable", "claude", env=env).code == 0
    return env


@pytest.fixture
def tx(tmp_path: Path) -> dict[str, str]:
    return plant_transcripts(tmp_path / "tx")


# --- day, week, howto, lessons, settle: transcript text, titles, file names (issue 26 item 5) ---


def test_day_and_week_mask_a_session_title_and_a_written_file_name(tx: dict[str, str]) -> None:
    runs = {
        "day": brain("day", "2026-11-27", "--no-git", env=tx),
        "week": brain("week", "--since", "2026-11-24", "--no-git", env=tx),
    }
    runs |= {
        f"{k} json": brain(*a, "--json", env=tx)
        for k, a in [
            ("day", ("day", "2026-11-27", "--no-git")),
            ("week", ("week", "--since", "2026-11-24", "--no-git")),
        ]
    }
    for name, run in runs.items():
        assert run.code == 0, (name, run)
        assert_clean(run.out + run.err, name)
    day = runs["day"].out.splitlines()
    assert any(line.endswith(f"Seed the local database {MASK}") for line in day), day
    assert f"file config/{MASK}.env 1" in day
    assert "file odd\\u202eb\\tc\\x1b[2J.txt 1" in day  # one line, escaped
    [repo] = [r for r in runs["day json"].json()["repos"] if r["project"] == "api"]
    [session] = [s for s in repo["sessions"] if s["session"] == SESSION]
    assert session["title"] == f"Seed the local database {MASK}"
    assert f"config/{MASK}.env" in [f["path"] for f in repo["files"]]
    assert f"odd{ODD}.txt" in [f["path"] for f in repo["files"]]  # JSON keeps the name exactly


def test_a_persons_day_table_masks_before_a_column_folds_the_key(tx: dict[str, str]) -> None:
    """The table folds a long cell over lines: masking the printed table would miss a key cut in
    two, so every cell is masked before rich lays it out."""
    from test_find import run_in_pty

    for args in (("day", "2026-11-27", "--no-git"), ("week", "--since", "2026-11-24")):
        code, table = run_in_pty(*args, env={**tx, "COLUMNS": "70"})
        assert code == 0, table
        assert_clean(table, args[0])
        if args[0] == "day":  # the week's narrower cells clip the title before its mask
            assert "…(40)" in table
            assert "odd\\u202e" in table


def test_howto_and_lessons_json_mask_a_session_title(tx: dict[str, str]) -> None:
    howto = brain("howto", "seed", "the", "local", "database", "--json", env=tx)
    lessons = brain("lessons", "--since", "2026-11-16", "--json", env=tx)
    for run in (howto, lessons):
        assert run.code == 0, run
        assert_clean(run.out, run.out[:40])
    titles = [h["title"] for h in howto.json()["hits"] if h["session"] == SESSION]
    titles += [m["title"] for m in lessons.json()["moments"] if m["session"] == SESSION]
    assert len(titles) >= 2
    assert set(titles) == {f"Seed the local database {MASK}"}


def test_lessons_propose_masks_the_line_it_refused(tx: dict[str, str], git_vault: Path) -> None:
    """A lesson of SESSION is proposed with the session's title as its source: the title holds a
    key, so propose refuses it, and the refused line printed is the bullet with the key."""
    args = ("lessons", "--since", "2026-11-27", "--propose", "--vault", str(git_vault))
    doc = brain(*args, "--json", env=tx)
    lines = brain(*args, env=tx)  # refused is not remembered: refused again
    for run in (doc, lines):
        assert run.code == 0, run
        assert_clean(run.out + run.err, "lessons --propose")
    refused = [p for p in doc.json()["proposals"] if p["action"] == "refused"]
    assert refused
    assert all(MASK in p["markdown"] for p in refused)
    assert "refused: " in lines.out
    assert MASK in lines.out
    assert KEY not in (git_vault / "AI" / "INBOX.md").read_text("utf-8")


def test_settle_masks_a_written_file_name_in_its_reason(tx: dict[str, str], tmp_path: Path) -> None:
    event = {
        "session_id": SESSION,
        "transcript_path": str(tmp_path / "tx" / TRANSCRIPT),
        "cwd": "/home/dev/api",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    run = brain("settle", input=json.dumps(event), env=tx)
    assert run.code == 0, run
    assert_clean(run.out + run.err, "settle")
    reason = run.json()["reason"]
    assert f"config/{MASK}.env" in reason
    assert f"odd{ODD}.txt" in reason  # the agent reads the name exactly (JSON escapes it)
    assert "\\u202e" in run.out


# --- minor: sync's summary, locate's echo -------------------------------------------------------


def test_sync_summary_escapes_a_file_name(git_vault: Path) -> None:
    """A file that waits (it holds a credential) is named in the one-line summary: a tab and a
    U+202E in its name are escaped there, as every name brain prints, in --json's prose too."""
    name = "notes/draft\u202eb\tc.md"
    (git_vault / name).write_text(f"The okapi token is {KEY}.\n", "utf-8")
    text = brain("sync", "--vault", str(git_vault))
    assert text.code == 1, text
    assert "\t" not in text.out
    assert_clean(text.out + text.err, "sync")
    assert "notes/draft\\u202eb\\tc.md" in text.out
    (git_vault / "notes" / "other\u202e.md").write_text(f"the token is {KEY}.\n", "utf-8")
    doc = brain("sync", "--vault", str(git_vault), "--json")
    assert doc.code == 1, doc
    assert_clean(doc.out, "sync --json")
    assert "notes/draft\\u202eb\\tc.md" in doc.json()["summary"]  # prose: named escaped


def test_locate_masks_a_key_given_as_its_handle(git_vault: Path) -> None:
    import anyio
    from test_mcp import _session_calls

    v = ("--vault", str(git_vault))
    text = brain("locate", *v, f"okapi {KEY}")
    doc = brain("locate", *v, "--json", f"okapi {KEY}")
    assert (text.code, doc.code) == (1, 1)
    assert MASK in text.err
    assert doc.json()["query"] == f"okapi {MASK}"
    _, (tool,) = anyio.run(_session_calls, git_vault, [("locate", {"handle": f"okapi {KEY}"})])
    assert tool.is_error
    assert MASK in tool.content[0].text
    for out in (text.out + text.err, doc.out, tool.content[0].text):
        assert_clean(out, "locate")


def test_a_warning_on_stderr_masks_the_setting_it_quotes(isolated_env: Path) -> None:
    """brain.semantic's warning is written by the core, not a presenter: it passes the same step
    (a URL's password in brain.yaml was quoted whole)."""
    import os

    from test_imports import V

    password = AWS[4:]  # random enough for the url-password rule
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "brain" / "brain.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    url = f"ftp://deploy:{password}@api.example.com/v1"
    config.write_text(f'embed:\n  provider: openai\n  url: "{url}"\n', "utf-8")
    run = brain("find", "--vault", V, "libgit2", env={"BRAIN_WORKER": "0", "BRAIN_EMBED": ""})
    assert "semantic search is off: embedding url 'ftp://deploy:" in run.err
    assert password[:12] not in run.err


# --- the step itself ----------------------------------------------------------------------------


def test_json_escapes_what_a_terminal_acts_on_and_keeps_the_data() -> None:
    from brain.present import dumps

    doc = {"name": "a\u202eb\x9b2J\x7f\u2028\udcff", "n": 1, "said": f"token {KEY}"}
    text = dumps(doc)
    assert "\u202e" not in text
    assert "\x9b" not in text
    assert "\x7f" not in text
    assert json.loads(text)["name"] == doc["name"]  # the same string to every reader
    assert json.loads(text)["said"] == f"token {MASK}"


def test_text_is_masked_before_it_is_escaped_or_cut() -> None:
    from brain.present import clip, sanitized

    assert sanitized(f"\x1b[31m{KEY}\ttab") == f"\\x1b[31m{MASK}\ttab"
    assert sanitized("line\r\nnext\rover") == "line\r\nnext\\rover"
    # a cut through the key would leave a part the rules do not recognise
    assert MASK in clip(f"the token {KEY} and more words after it", 30)
    assert sanitized(sanitized(f"x {KEY}")) == f"x {MASK}"


def test_render_masks_every_cell_before_a_column_folds_it() -> None:
    from rich.table import Table

    from brain.present import render

    table = Table(width=24)
    table.add_column("title", overflow="fold")
    table.add_row(f"session {KEY} \x1b[2J done")
    shown = render(table)
    assert_clean(shown, "table")
    assert "…(40)" in shown


def test_the_hot_paths_load_no_rules_for_text_without_a_hint() -> None:
    """Every answer is masked on its way out, but text holding none of CREDENTIAL_HINTS never
    loads brain.secrets (~30 ms of regular expressions): find and prime stay as fast as before."""
    from test_imports import V, imported_modules

    env = {"BRAIN_WORKER": "0"}
    imported_modules("find", "--vault", V, "x", env=env)  # builds the index (which masks)
    for args in (["find", "libgit2", "hooks"], ["find", "--json", "pygit2"], ["prime", "pygit2"]):
        code, modules = imported_modules(*args[:1], "--vault", V, *args[1:], env=env)
        assert code in (0, 1)
        assert "brain.secrets" not in modules, args
    _, modules = imported_modules("prime", "--vault", V, f"pygit2 {KEY}", env=env)
    assert "brain.secrets" in modules  # the prompt holds one: its words are masked first


# --- the sweep: every command, every kind of input ----------------------------------------------


@dataclass(frozen=True)
class Call:
    args: tuple[str, ...]
    input: str | None = None
    cwd: Path | None = None
    json: bool = True  # also with --json
    env: tuple[tuple[str, str], ...] = ()


@dataclass
class World:
    vault: Path
    repo: Path  # a git repository named after the vault's project
    env: dict[str, str]
    tx: Path  # the transcripts' root


def plant_vault(vault: Path) -> None:
    """A bullet and a note holding KEY, a file named with KEY, one named with ODD, a proposal
    with KEY typed into the inbox by hand: uncommitted, as a person leaves them."""
    memory = vault / "AI" / "MEMORY.md"
    bullet = (
        f"- **okapi deploy key** (aliases: okapi ci) — okapi deploys with {KEY} — me — 2026-11-30"
    )
    memory.write_text(memory.read_text("utf-8").rstrip("\n") + f"\n\n{bullet}\n", "utf-8")
    (vault / "notes" / "okapi-keys.md").write_text(
        f"# Okapi keys\n\nThe okapi runner uses {AWS} and the token {KEY}.\n", "utf-8"
    )
    (vault / "notes" / f"okapi {KEY}.md").write_text("# Okapi\n\nThe okapi handoff.\n", "utf-8")
    (vault / "notes" / f"okapi{ODD}.md").write_text("# Okapi odd\n\nThe okapi odd.\n", "utf-8")
    inbox = vault / "AI" / "INBOX.md"
    inbox.write_text(
        inbox.read_text("utf-8")
        + f"- **okapi inbox** — okapi ships with {KEY} — me — 2026-11-30\n",
        "utf-8",
    )


@pytest.fixture
def world(git_vault: Path, tmp_path: Path) -> World:
    env = plant_transcripts(tmp_path / "tx") | {"BRAIN_EMBED": "none"}
    plant_vault(git_vault)
    repo = tmp_path / "okapi"
    repo.mkdir()
    git(repo, "init", "-q")
    return World(git_vault, repo, env, tmp_path / "tx")


def calls(w: World) -> Iterator[tuple[str, Call]]:
    """(command, call) for every command of the app, in an order that leaves what later calls
    read in place (those that change the vault or the machine come last)."""
    v = ("--vault", str(w.vault))
    imported = w.repo / f"notes {KEY}.md"
    imported.write_text(f"- okapi import — okapi deploys with {KEY}\n- okapi plain — fine\n")
    prompt = {"prompt": f"how does okapi deploy {KEY}", "session_id": "s1"}
    stop = {
        "session_id": SESSION,
        "transcript_path": str(w.tx / TRANSCRIPT),
        "cwd": "/home/dev/api",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    start = {"session_id": "s2", "cwd": str(w.repo), "hook_event_name": "SessionStart"}
    yield "reindex", Call(("reindex", *v))
    yield "find", Call(("find", *v, "okapi"))
    yield "find", Call(("find", *v, "--raw", "okapi", "keys"))
    yield "find", Call(("find", *v, f"okapi {KEY}"))
    yield "find", Call(("find", *v, "okapi"), env=(("BRAIN_CALLER", f"bot {KEY}"),))  # a caller
    yield "prime", Call(("prime", *v, f"how does okapi deploy {KEY}"))
    yield (
        "prime",
        Call(("prime", *v), json.dumps({**prompt, "hook_event_name": "UserPromptSubmit"})),
    )
    gemini = {**prompt, "hook_event_name": "BeforeAgent", "session_id": "s3"}
    yield "prime", Call(("prime", *v), json.dumps(gemini), json=False)
    yield "pack", Call(("pack", *v, "okapi"))
    yield "pack", Call(("pack", *v, f"okapi-{KEY}"))
    yield "pack", Call(("pack", *v), json.dumps(start), cwd=w.repo, json=False)
    yield "settle", Call(("settle", *v), json.dumps(stop), json=False)
    yield "locate", Call(("locate", *v, "okapi ci"))
    yield "locate", Call(("locate", *v, f"okapi {KEY}"))
    yield "propose", Call(("propose", *v, f"okapi token — deploys with {KEY}"))
    yield "inbox", Call(("inbox", *v))
    yield "lint", Call(("lint", *v))
    yield "lint", Call(("lint", *v, f"notes/okapi {KEY}.md"))
    yield "secrets", Call(("secrets", *v))
    yield "secrets", Call(("secrets", "--history", *v))
    yield "verify", Call(("verify", *v))
    yield "verify", Call(("verify", *v, f"okapi {KEY}"))
    yield "doctor", Call(("doctor", *v))
    yield "log", Call(("log", *v))
    yield "ledger", Call(("ledger", *v))
    yield "learn", Call(("learn", *v))
    yield "review", Call(("review", *v))
    yield "version", Call(("version",))
    yield "update", Call(("update", "--check"))
    yield "hooks", Call(("hooks", "status"))
    yield "recall sources", Call(("recall", "sources"))
    yield "recall search", Call(("recall", "search", f"token {KEY}"))
    yield "recall search", Call(("recall", "seed", "database"))
    yield "recall full", Call(("recall", "full", "c0ffee00"))  # the turn that said KEY
    yield "recall sessions", Call(("recall", "sessions"))  # the first turn of each session
    yield "recall sessions", Call(("recall", "sessions", f"token {KEY}"))
    yield "recall sync", Call(("recall", "sync"))
    yield "howto", Call(("howto", "seed", "the", "local", "database"))
    yield "howto", Call(("howto", f"seed {KEY}"))
    yield "lessons", Call(("lessons", "--since", "2026-11-16"))
    yield "lessons", Call(("lessons", "--since", "2026-11-27", "--propose", *v))
    yield "day", Call(("day", "2026-11-27"))
    yield "week", Call(("week", "--since", "2026-11-24"))
    yield "export", Call(("export", *v, "--project", "okapi", "claude", "cursor"), cwd=w.repo)
    yield "import", Call(("import", *v, str(imported)))
    yield "tend", Call(("tend", "--dry-run", *v))
    yield "inbox approve", Call(("inbox", "approve", "all", *v))  # the planted one: all refused
    yield "inbox drop", Call(("inbox", "drop", "4", *v))  # the one typed in with KEY
    yield "recall enable", Call(("recall", "enable", "codex"))
    yield "recall disable", Call(("recall", "disable", "codex"))
    yield "sync", Call(("sync", *v))
    yield "install", Call(("install", str(w.vault)))
    yield "uninstall", Call(("uninstall",))


# Run by the tests below, not as a CLI call: a server each.
SERVED = {
    "desk": "test_every_desk_page_passes_the_output_step",
    "mcp": "test_every_mcp_tool_passes_the_output_step",
}


def app_commands() -> dict[str, bool]:
    """Every command of the Typer app, by its words (`inbox approve`), and whether it takes
    --json; a group that runs without a subcommand (`inbox`) is a command too."""
    import typer

    from brain.app import app

    found: dict[str, bool] = {}

    def walk(group: Any, prefix: str) -> None:
        for name, cmd in group.commands.items():
            words = f"{prefix}{name}"
            takes_json = any("--json" in getattr(p, "opts", ()) for p in cmd.params)
            if hasattr(cmd, "commands"):
                if getattr(cmd, "invoke_without_command", False):
                    found[words] = takes_json
                walk(cmd, f"{words} ")
            else:
                found[words] = takes_json

    walk(typer.main.get_command(app), "")
    return found


def with_json(args: tuple[str, ...], command: str) -> tuple[str, ...]:
    n = len(command.split())
    return (*args[:n], "--json", *args[n:])


def test_every_command_is_in_the_sweep(world: World) -> None:
    """The app's commands, read from the app: a new one fails here, named, until `calls` runs
    it (or SERVED names the test that does)."""
    swept = {name for name, _ in calls(world)}
    missing = sorted(set(app_commands()) - swept - set(SERVED))
    assert missing == [], f"add a call of `brain {missing[0]}` with planted input to calls()"


def test_no_command_prints_a_planted_key_or_a_raw_control(world: World) -> None:
    takes_json = app_commands()
    shown: dict[str, Run] = {}
    for name, call in calls(world):
        variants = [call.args]
        if call.json and takes_json.get(name):
            variants.append(with_json(call.args, name))
        for args in variants:
            run = brain(*args, input=call.input, env=world.env | dict(call.env), cwd=call.cwd)
            label = " ".join(a if len(a) < 60 else a[:20] + "…" for a in args)
            assert run.code in (0, 1, 2), (label, run)
            assert "Traceback" not in run.err, (label, run.err)
            assert_clean(run.out + run.err, label)
            shown[label] = run
    written = [world.repo / "CLAUDE.md", world.repo / ".cursor" / "rules" / "brain.mdc"]
    for path in written:
        assert_clean(path.read_text("utf-8"), str(path))
    masked = [label for label, run in shown.items() if "…(40)" in run.out + run.err]
    # the key reached the output of every kind of input, and was masked there
    for word in ("find", "prime", "settle", "locate", "recall", "howto", "lessons", "day", "week"):
        assert any(label.startswith(word) for label in masked), (word, masked)


def test_every_mcp_tool_passes_the_output_step(world: World) -> None:
    import anyio
    from test_mcp import _session_calls

    planted: dict[str, list[dict[str, Any]]] = {
        "find": [{"query": "okapi"}, {"query": f"okapi {KEY}"}],
        "locate": [{"handle": "okapi ci"}, {"handle": f"okapi {KEY}"}],
        "recall": [{"query": f"token {KEY}"}, {"full": "c0ffee00"}],
        "pack": [{"project": "okapi"}, {"project": f"okapi-{KEY}"}],
        "propose": [{"line": f"okapi token — deploys with {KEY}"}],
    }
    todo = [(name, args) for name, many in planted.items() for args in many]
    names, results = anyio.run(_session_calls, world.vault, todo)
    assert sorted(names - set(planted)) == [], "add the new tool to `planted`"
    for (name, args), result in zip(todo, results, strict=True):
        where = f"{name} {args}"
        assert_clean(result.content[0].text, where)
        # the structure is data, as --json's is once parsed: a name in it is kept exactly
        assert keys_in(json.dumps(result.structured_content, ensure_ascii=False)) == [], where


def test_every_desk_page_passes_the_output_step(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.routing import Route
    from test_desk import PORT, signed_in

    from brain.desk.server import POLL, Desk, create_app

    caller = world.env | {"BRAIN_CALLER": f"bot {KEY}"}  # the ledger's chart names callers
    assert brain("find", "--vault", str(world.vault), f"okapi {KEY}", env=caller).code == 0
    for name, value in world.env.items():  # the desk runs here: recall reads the transcripts
        monkeypatch.setenv(name, value)
    desk = Desk(world.vault, PORT, wait=60.0)
    app = create_app(desk)
    pages = [
        r.path
        for r in app.app.routes  # type: ignore[attr-defined]  # the Starlette app behind the guard
        if isinstance(r, Route) and "GET" in (r.methods or ()) and r.path not in ("/", POLL)
    ]
    assert "/inbox" in pages
    assert "/search" in pages
    client = signed_in(desk)  # as the person's browser, with its cookie
    for page in pages:
        queries = (
            [f"?q=okapi+{KEY}", "?q=okapi", "?q=seed&in=transcripts"] if page == "/search" else [""]
        )
        for q in queries:
            r = client.get(page + q)
            assert r.status_code == 200, (page, r.text[:300])
            assert_clean(r.text, page + q)
    assert "…(40)" in client.get("/inbox").text
    assert "bot ghp_…(40)" in client.get("/ledger").text  # in the chart's data too


def at_a_terminal(world: World, call: Call) -> str:
    from test_find import run_in_pty

    code, shown = run_in_pty(*call.args, env=world.env | dict(call.env))
    assert code in (0, 1, 2), (call.args, shown)
    assert "Traceback" not in shown, shown
    return shown


def test_a_persons_tables_and_listings_mask_and_escape(world: World) -> None:
    """What rich lays out for a person (find's listing, the ledger, howto's and lessons' tables):
    rich's colours are the only escape sequences that reach the terminal."""
    v = ("--vault", str(world.vault))
    brain("find", *v, "okapi", env=world.env | {"BRAIN_CALLER": f"bot {KEY}"})
    for args in [
        ("find", *v, "okapi"),
        ("ledger", *v),
        ("howto", "seed", "the", "local", "database"),
        ("lessons", "--since", "2026-11-16"),
    ]:
        assert_clean(at_a_terminal(world, Call(args)), args[0])


@pytest.mark.slow
def test_no_command_at_a_terminal_prints_a_planted_key(world: World) -> None:
    """The sweep again with a person at a terminal (tables, listings, notes on stderr); a call
    that reads stdin or runs in another folder is left to the sweep above."""
    for _, call in calls(world):
        if call.input is None and call.cwd is None:
            assert_clean(at_a_terminal(world, call), " ".join(call.args)[:80])
