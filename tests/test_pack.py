"""`brain pack`: the briefing, its budget, the repository it picks, the cache and the hook form."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain, brain_process, git
from test_contract import KEYS

from brain.commands import pack as packmod
from brain.config import usage_log_path
from brain.usage import Event, connect, events

HOOKS = ROOT / "testdata" / "hooks"
PACK_KEYS = KEYS["`pack`"]
BULLET_KEYS = KEYS["`pack` bullet"]
HEAVY: tuple[str, ...] = ("typer", "click", "rich", "numpy", "onnxruntime", "tokenizers", "httpx")
HEAVY += ("pygit2", "yaml", "mcp", "mistune")


def repo(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


# --- what goes in ------------------------------------------------------------------------------


def test_pack_names_the_project_bullets_handoff_and_state(vault: Path) -> None:
    result = packmod.pack(vault, "payments")
    assert result.text.splitlines()[0].startswith("brain: what the vault knows about payments")
    handles = [b.handle for b in result.bullets]
    assert "payments service" in handles
    assert "paynova status field" in handles  # filed under ### payments, name not in the line
    assert "answer first" not in handles
    assert result.handoff == "projects/payments/handoffs/2025-10-07-idempotency-bloat.md"
    assert f"Newest handoff: {result.handoff}" in result.text
    assert result.state_files == 2
    assert "State: 2 files in projects/payments/state/" in result.text
    # filed under the project or naming it ranks before a mere mention, newest first within
    first_mention = next(i for i, b in enumerate(result.bullets) if "payments" not in b.section)
    named = result.bullets[:first_mention]
    assert [b.date for b in named] == sorted((b.date for b in named), reverse=True)


def test_a_bullet_above_any_section_has_a_null_section(vault: Path) -> None:
    """A bullet before the file's first section has no section: null in JSON, not ""."""
    memory = vault / "AI" / "MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    early = "- **zebra gateway** — the zebra gateway answers on port 9 — docs — 2026-11-01\n\n"
    memory.write_text(text.replace("## Projects", early + "## Projects", 1), encoding="utf-8")
    doc = brain("pack", "zebra", "--vault", str(vault), "--json").json()
    (bullet,) = [b for b in doc["bullets"] if b["handle"] == "zebra gateway"]
    assert bullet["section"] is None


def test_working_rules_follow_when_the_budget_allows(vault: Path) -> None:
    result = packmod.pack(vault, "website", budget=5000)
    assert result.rules, "the TUNINGS rules fill what the project leaves"
    assert all(r.path == "AI/TUNINGS.md" for r in result.rules)
    assert "Working rules (AI/TUNINGS.md):" in result.text
    assert not {(r.path, r.line) for r in result.rules} & {(b.path, b.line) for b in result.bullets}


def test_word_boundaries_and_folding(vault: Path) -> None:
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8")
        + "\n- **kestrel-app deploy** — ships on Fridays — me — 2026-01-01\n"
        + "- **kestrelapp tooling** — not the same word — me — 2026-01-01\n"
        + "- **Ödeme api** — folded match — me — 2026-01-02\n",
        encoding="utf-8",
    )
    handles = [b.handle for b in packmod.pack(vault, "kestrel app").bullets]
    assert handles == ["kestrel-app deploy"]
    assert [b.handle for b in packmod.pack(vault, "odeme").bullets][:1] == ["Ödeme api"]


@pytest.mark.parametrize("budget", [1, 5, 20, 50, 100, 300, 1500, 5000])
@pytest.mark.parametrize("project", ["payments", "brain", "infra", "website"])
def test_never_over_budget_on_the_fixture(vault: Path, project: str, budget: int) -> None:
    result = packmod.pack(vault, project, budget=budget)
    assert len(result.text.encode("utf-8")) <= budget * 4
    assert result.tokens <= budget
    assert len(result.bullets) + len(result.rules) + result.omitted >= len(result.bullets)


@pytest.mark.slow
def test_never_over_budget_on_a_10k_vault(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    from genvault import generate

    gen = generate(tmp_path / "big", bullets=10_000, notes=40, seed=3)
    projects = sorted(p.name for p in (gen.root / "projects").iterdir())[:3]
    common = gen.handles[0].split()[0]  # a word that names many bullets
    for project in [*projects, common]:
        for budget in (10, 200, 1500, 4000):
            result = packmod.pack(gen.root, project, budget=budget, fresh=True)
            assert len(result.text.encode("utf-8")) <= budget * 4, (project, budget)
    assert packmod.pack(gen.root, common, budget=1500).omitted > 0


def test_an_unknown_project_packs_the_working_rules_and_how_to_ask(vault: Path) -> None:
    """TUNINGS, which the starter says agents read at the start of every session, reach a session
    in a repository the vault does not know: one line saying brain is there and how to ask it,
    then the working rules; no project bullets, no handoff or state line."""
    result = packmod.pack(vault, "xylophone")
    lines = result.text.splitlines()
    assert lines[0] == packmod.intro("xylophone")
    assert "`brain find WORDS`" in lines[0]
    assert "brain propose" in lines[0]
    assert lines[1] == "Working rules (AI/TUNINGS.md):"
    assert result.bullets == ()
    assert [r.path for r in result.rules] == ["AI/TUNINGS.md"] * len(result.rules) != []
    assert (result.handoff, result.state_files) == (None, None)
    assert "Newest handoff" not in result.text
    assert "State:" not in result.text
    assert result.empty  # export: nothing of the project's own to write
    assert not packmod.pack(vault, "payments").empty


@pytest.mark.parametrize("budget", [1, 30, 45, 60, 200])
def test_the_rules_only_pack_keeps_its_budget(vault: Path, budget: int) -> None:
    result = packmod.pack(vault, "xylophone", budget=budget, fresh=True)
    assert len(result.text.encode("utf-8")) <= budget * 4
    if result.text:
        assert result.text.startswith(packmod.intro("xylophone"))
    every = packmod.pack(vault, "xylophone", budget=5000, fresh=True).rules
    assert result.omitted == len(every) - len(result.rules)


# --- the repository the caller is in -----------------------------------------------------------


def test_no_project_takes_the_repository_you_are_in(tmp_path: Path) -> None:
    here = repo(tmp_path, "payments")
    (here / "src" / "deep").mkdir(parents=True)
    run = brain("pack", "--vault", str(FIXTURE_VAULT), cwd=here / "src" / "deep", input="")
    assert run.code == 0, run
    assert run.out.startswith("brain: what the vault knows about payments")
    assert run.out == brain("pack", "--vault", str(FIXTURE_VAULT), "payments", input="").out


def test_a_repository_the_vault_does_not_know_gets_the_working_rules(tmp_path: Path) -> None:
    here = repo(tmp_path, "zzqx-unknown")
    run = brain("pack", "--vault", str(FIXTURE_VAULT), cwd=here, input="")
    assert run.code == 0, run
    assert run.out.startswith(packmod.intro("zzqx-unknown") + "\nWorking rules (AI/TUNINGS.md):")


def test_outside_any_repository_prints_nothing(tmp_path: Path) -> None:
    run = brain("pack", "--vault", str(FIXTURE_VAULT), cwd=tmp_path, input="")
    assert (run.code, run.out) == (0, "")


def test_a_hook_never_fails_even_without_a_vault(tmp_path: Path) -> None:
    here = repo(tmp_path, "payments")
    run = brain("pack", cwd=here, input="")  # no vault configured anywhere
    assert (run.code, run.out) == (0, "")
    assert "no vault configured" in run.err
    assert "Traceback" not in run.err
    named = brain("pack", "payments", cwd=here, input="")  # named: a normal error
    assert named.code == 1


# --- Claude Code's SessionStart hook -----------------------------------------------------------


def _event(cwd: Path, **extra: str) -> str:
    doc = {"session_id": "abc123", "hook_event_name": "SessionStart", "cwd": str(cwd)}
    doc.update({"source": "startup", "transcript_path": "/tmp/t.jsonl", **extra})
    return json.dumps(doc)


def test_session_start_hook_answers_in_claude_codes_form(tmp_path: Path) -> None:
    here = repo(tmp_path, "payments")
    env = {"BRAIN_VAULT": str(FIXTURE_VAULT)}
    run = brain_process("pack", input=_event(here), cwd=tmp_path, env=env)  # cwd: the event's
    assert run.code == 0, run
    assert run.out.count("\n") == 1
    doc = json.loads(run.out)
    assert list(doc) == ["hookSpecificOutput"]
    assert list(doc["hookSpecificOutput"]) == ["hookEventName", "additionalContext"]
    assert doc["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = doc["hookSpecificOutput"]["additionalContext"]
    assert context == brain("pack", "--vault", str(FIXTURE_VAULT), "payments", input="").out
    hook_row = next(e for e in _usage() if e.command == "pack")
    assert hook_row.session == "abc123"
    assert hook_row.caller == "claude-code"
    assert hook_row.bytes == len(run.out.encode("utf-8"))


def test_session_start_hook_for_an_unknown_repository_gets_the_working_rules(
    tmp_path: Path,
) -> None:
    here = repo(tmp_path, "zzqx-unknown")
    run = brain_process("pack", input=_event(here), env={"BRAIN_VAULT": str(FIXTURE_VAULT)})
    assert run.code == 0, run
    context = json.loads(run.out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(packmod.intro("zzqx-unknown") + "\nWorking rules (AI/TUNINGS.md):")
    assert "AI/TUNINGS.md:" in context


def test_session_start_hook_outside_any_repository_gets_the_working_rules(tmp_path: Path) -> None:
    env = {"BRAIN_VAULT": str(FIXTURE_VAULT)}
    run = brain_process("pack", input=_event(tmp_path, session_id="out1"), env=env)
    assert run.code == 0, run
    context = json.loads(run.out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(packmod.intro(None) + "\nWorking rules (AI/TUNINGS.md):")
    by_hand = brain("pack", "--vault", str(FIXTURE_VAULT), cwd=tmp_path, input="")
    assert (by_hand.code, by_hand.out) == (0, "")  # by hand: name a project


def test_a_hook_says_nothing_on_stderr_when_it_fails(tmp_path: Path) -> None:
    """Gemini CLI shows a hook's stderr when its stdout is empty (hookRunner.ts): a start with no
    vault on the machine says nothing, and leaves a line in the state dir's logs/pack.log."""
    from brain.config import state_dir

    here = repo(tmp_path, "payments")
    event = _event(here, session_id="nov", hook_event_name="SessionStart")
    run = brain_process("pack", input=event, cwd=here)  # no vault configured anywhere
    assert (run.code, run.out, run.err) == (0, "", "")
    assert "no vault configured" in (state_dir() / "logs" / "pack.log").read_text(encoding="utf-8")


# --- each agent's start: its form, once per moment, logged under its name ------------------------


def _agent_event(name: str, cwd: Path, **extra: str) -> str:
    doc = json.loads((HOOKS / name).read_text(encoding="utf-8"))
    return json.dumps({**doc, "cwd": str(cwd), **extra})


@pytest.mark.parametrize(
    ("name", "caller", "keys"),
    [
        ("claude-session-start.json", "claude-code", ["hookSpecificOutput"]),
        ("codex-session-start.json", "codex", ["hookSpecificOutput"]),
        ("gemini-session-start.json", "gemini-cli", ["hookSpecificOutput"]),
        ("copilot-session-start.json", "copilot-cli", ["hookSpecificOutput", "additionalContext"]),
        ("vscode-session-start.json", "vscode", ["hookSpecificOutput"]),
    ],
)
def test_each_agents_start_is_answered_in_its_form_and_logged_under_its_name(
    tmp_path: Path, name: str, caller: str, keys: list[str]
) -> None:
    here = repo(tmp_path, "payments")
    env = {"BRAIN_VAULT": str(FIXTURE_VAULT), "CLAUDECODE": "1"}  # inherited from Claude Code
    run = brain_process("pack", input=_agent_event(name, here), env=env)
    assert (run.code, run.err) == (0, ""), run
    doc = json.loads(run.out)
    assert list(doc) == keys
    assert doc["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "payments" in doc["hookSpecificOutput"]["additionalContext"]
    (row,) = [e for e in _usage() if e.command == "pack"]
    assert row.caller == caller
    assert row.session == json.loads(_agent_event(name, here)).get(
        "session_id", json.loads(_agent_event(name, here)).get("sessionId")
    )


def test_vscode_runs_the_start_four_times_and_gets_one_pack(tmp_path: Path) -> None:
    """VS Code runs the SessionStart hooks of ~/.claude/settings.json (three matcher groups,
    matchers ignored) and of ~/.copilot/hooks: four packs at once, of which one answers."""
    import concurrent.futures

    here = repo(tmp_path, "payments")
    event = _agent_event("vscode-session-start.json", here)
    env = {"BRAIN_VAULT": str(FIXTURE_VAULT)}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda _: brain_process("pack", input=event, env=env), range(4)))
    assert all((r.code, r.err) == (0, "") for r in runs), runs
    assert sorted(bool(r.out) for r in runs) == [False, False, False, True]
    assert len([e for e in _usage() if e.command == "pack"]) == 1
    other = brain_process("pack", input=event.replace("5b7e1c92", "6c8f2da3"), env=env)
    assert other.out  # another session answers for itself


def test_a_compaction_packs_again_and_a_resume_does_not(tmp_path: Path) -> None:
    here = repo(tmp_path, "payments")
    env = {"BRAIN_VAULT": str(FIXTURE_VAULT)}
    start = _event(here, session_id="c1")
    assert brain_process("pack", input=start, env=env).out
    assert brain_process("pack", input=start, env=env).out == ""  # the same start run twice
    for _ in range(2):  # each compaction dropped the pack from the context
        compact = _event(here, session_id="c1", source="compact")
        assert brain_process("pack", input=compact, env=env).out
    no_source = _event(here, session_id="c2", source="")  # no agent's: a script's, each answered
    assert brain_process("pack", input=no_source, env=env).out
    assert brain_process("pack", input=no_source, env=env).out
    # Copilot CLI runs its start hook on resume too (no matcher): the conversation holds the pack
    resumed = _agent_event("copilot-session-start.json", here, source="resume")
    assert (brain_process("pack", input=resumed, env=env).out) == ""


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"hook_event_name": "Stop"}'])
def test_other_stdin_is_not_a_hook(tmp_path: Path, stdin: str) -> None:
    here = repo(tmp_path, "payments")
    run = brain_process("pack", "--vault", str(FIXTURE_VAULT), input=stdin, cwd=here)
    assert run.code == 0
    assert run.out.startswith("brain: what the vault knows about payments")


def test_a_silent_open_stdin_does_not_block(tmp_path: Path) -> None:
    here = repo(tmp_path, "payments")
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", "pack", "--vault", str(FIXTURE_VAULT)],
        stdin=subprocess.PIPE,  # open, never written, never closed
        stdout=subprocess.PIPE,
        cwd=here,
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    try:
        out = proc.stdout.read()  # EOF when brain exits, stdin still open
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0
    assert out.startswith(b"brain: what the vault knows about payments")
    assert time.monotonic() - start < 20


# --- the cache ---------------------------------------------------------------------------------


def test_cached_pack_follows_the_vault(vault: Path) -> None:
    v = str(vault)
    first = brain("pack", "--vault", v, "--json", "payments", input="").json()
    assert list(first) == PACK_KEYS
    assert first["cached"] is False
    for b in first["bullets"] + first["rules"]:
        assert list(b) == BULLET_KEYS
    second = brain("pack", "--vault", v, "--json", "payments", input="").json()
    assert second["cached"] is True
    assert {**second, "cached": False} == first
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8")
        + "- **payments freeze** — payments freezes deploys in December — me — 2027-01-01\n",
        encoding="utf-8",
    )
    third = brain("pack", "--vault", v, "--json", "payments", input="").json()
    assert third["cached"] is False
    assert third["built_at"] != first["built_at"]
    assert third["bullets"][0]["handle"] == "payments freeze"
    fresh = brain("pack", "--vault", v, "--json", "--fresh", "payments", input="").json()
    assert fresh["cached"] is False
    assert fresh["text"] == third["text"]


@pytest.mark.parametrize("held", ["[]", '"pack"', "{", ""])
def test_a_cache_file_that_holds_no_object_is_built_again(vault: Path, held: str) -> None:
    """A cached pack that is not a JSON object (a list, a string, torn) is rebuilt, never a
    crash: it is read as every state file is (brain.files.read_json_dict)."""
    v = str(vault)
    first = brain("pack", "--vault", v, "--json", "payments", input="").json()
    where = packmod.cache_path(vault, "payments", packmod.DEFAULT_BUDGET)
    assert where.is_file()
    where.write_text(held, encoding="utf-8")
    again = brain("pack", "--vault", v, "--json", "payments", input="")
    assert again.code == 0, again.err
    assert again.json()["cached"] is False
    assert again.json()["text"] == first["text"]


def test_a_new_state_file_changes_the_cached_pack(vault: Path) -> None:
    assert packmod.pack(vault, "payments").state_files == 2
    (vault / "projects" / "payments" / "state" / "notes.json").write_text("{}", encoding="utf-8")
    again = packmod.pack(vault, "payments")
    assert (again.cached, again.state_files) == (False, 3)


def test_a_torn_cache_file_is_rebuilt(vault: Path) -> None:
    first = packmod.pack(vault, "payments")
    path = packmod.cache_path(vault, "payments", 1500)
    path.write_text("{", encoding="utf-8")
    again = packmod.pack(vault, "payments")
    assert again.text == first.text
    assert again.cached is False


def test_cached_pack_imports_nothing_heavy(vault: Path) -> None:
    args = ["pack", "--vault", str(vault), "payments"]
    assert brain(*args, input="").code == 0  # builds the index and the cache
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "brain", *args],
        capture_output=True,
        text=True,
        input="",
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "brain.commands.pack" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert heavy == [], f"a cached `brain pack` imported {heavy}"
    # nor what serving a cached pack has no use for: ranking, and platformdirs' imports (on
    # Linux brain.config finds the folders itself). brain.files (os, stat and pathlib only) is
    # the vault walk's link rule, which the freshness check needs.
    unneeded = {"brain.search", "brain.semantic", "tempfile", "shutil"}
    if sys.platform == "linux":
        unneeded.add("platformdirs")
    assert sorted(modules & unneeded) == []


def test_budget_1_prints_nothing_in_any_form(vault: Path) -> None:
    for env in ({}, {"CLAUDECODE": "1"}):
        run = brain("pack", "--vault", str(vault), "payments", "--budget", "1", input="", env=env)
        assert run.code == 0, run
        assert run.out == ""
    event = json.dumps({"hook_event_name": "SessionStart", "cwd": str(vault), "source": "startup"})
    (vault / ".git").mkdir()
    hook = brain("pack", "--vault", str(vault), "--budget", "1", input=event, cwd=vault)
    assert hook.code == 0, hook
    assert hook.out == ""


def test_each_serve_is_logged_with_its_bytes(vault: Path) -> None:
    run = brain("pack", "--vault", str(vault), "payments", input="")
    brain("pack", "--vault", str(vault), "payments", input="")
    rows = [e for e in _usage() if e.command == "pack"]
    assert len(rows) == 2
    assert rows[0].query == "payments"
    assert rows[0].bytes == rows[1].bytes == len(run.out.encode("utf-8"))
    assert rows[0].entries > 0


def _usage() -> list[Event]:
    conn = connect(usage_log_path())
    try:
        return events(conn)
    finally:
        conn.close()


# --- the command line --------------------------------------------------------------------------


def test_budget_must_be_positive(vault: Path) -> None:
    run = brain("pack", "--vault", str(vault), "--budget", "0", "payments", input="")
    assert run.code == 2
    assert "--budget" in run.err


def _outside_project(tmp_path: Path) -> Path:
    """A folder outside the vault laid out as a project: a handoff and a state file."""
    ext = tmp_path / "elsewhere"
    (ext / "handoffs").mkdir(parents=True)
    (ext / "state").mkdir()
    (ext / "handoffs" / "2099-01-01-outside.md").write_text("OUTSIDE\n", "utf-8")
    (ext / "state" / "a.md").write_text("x\n", "utf-8")
    return ext


def test_pack_never_names_a_handoff_out_of_the_vault(vault: Path, tmp_path: Path) -> None:
    """`projects/evil` a link to a folder outside, or a project named `../../elsewhere`: pack
    named the handoff out there for the agent to read and counted the files there."""
    ext = _outside_project(tmp_path)
    (vault / "projects" / "evil").symlink_to(ext, target_is_directory=True)
    relative = f"../../{ext.name}"
    assert (vault / "projects" / relative).resolve() == ext.resolve()
    for name in ("evil", "Evil", relative):
        run = brain("pack", name, "--vault", str(vault), "--json")
        assert run.code == 0, run
        doc = run.json()
        assert (doc["handoff"], doc["state_files"]) == (None, None), name
        assert "outside" not in doc["text"]


def test_pack_names_no_handoff_the_index_does_not_read(vault: Path, tmp_path: Path) -> None:
    """A newer handoff that is a link to a file out of the vault, or one over NOTE_MAX: the
    index skips both, and pack pointed the agent at them; the newest readable one is named."""
    from brain.vault import NOTE_MAX

    handoffs = vault / "projects" / "payments" / "handoffs"
    ext = _outside_project(tmp_path)
    (handoffs / "2099-01-02-link.md").symlink_to(ext / "handoffs" / "2099-01-01-outside.md")
    with (handoffs / "2099-01-01-huge.md").open("w", encoding="utf-8") as fh:
        fh.truncate(NOTE_MAX + 1)
    result = packmod.pack(vault, "payments", fresh=True)
    assert result.handoff == "projects/payments/handoffs/2025-10-07-idempotency-bloat.md"
