"""`brain settle`, the agents' stop hook, through the real path: a fresh `brain` process fed the
stop JSON each agent sends (testdata/hooks/), reading a real transcript in the agent's format.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Run, brain, brain_process, git
from test_imports import HEAVY, imported_modules
from test_sync import Machine, bullet, pair, remote, wait_for  # noqa: F401 - fixtures
from test_sync import settle as let_passes_finish

from brain import hook_event

HOOKS = ROOT / "testdata" / "hooks"
SESSION = "7f3c2a10-5d4e-4b8a-9c61-2e8f0d4b7a93"
WRITTEN = ("src/paynova/client.py", "src/paynova/backoff.py", "docs/webhooks.md")
CORRECTION = "no, use exponential backoff with jitter instead of a fixed sleep"


def fixture(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((HOOKS / name).read_text(encoding="utf-8"))
    return doc


def settle(event: dict[str, Any] | str, env: dict[str, str] | None = None) -> Run:
    text = event if isinstance(event, str) else json.dumps(event)
    return brain_process("settle", input=text, env=env)  # the stop hook, as agents run it


@pytest.fixture
def transcript(isolated_env: Path) -> Path:
    """The Claude Code session of testdata/hooks where recall finds it (named by its id)."""
    path = isolated_env / ".claude" / "projects" / "-home-dev-shop" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes((HOOKS / "claude-transcript-edits.jsonl").read_bytes())
    return path


@pytest.fixture
def stop(transcript: Path) -> dict[str, Any]:
    event = fixture("claude-stop.json")
    event["transcript_path"] = str(transcript)
    return event


def blocked(run: Run) -> str:
    assert run.code == 0, run
    assert run.err == ""
    doc = run.json()
    assert list(doc) == ["decision", "reason"]
    assert doc["decision"] == "block"
    reason: str = doc["reason"]
    return reason


def passed(run: Run) -> None:
    assert (run.code, run.out, run.err) == (0, "", "")


def tool_use(name: str, args: dict[str, Any]) -> str:
    rec = {
        "type": "assistant",
        "sessionId": SESSION,
        "cwd": "/home/dev/shop",
        "uuid": "ffff0000-0000-4000-8000-000000000001",
        "timestamp": "2026-11-30T14:15:00.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_99", "name": name, "input": args}],
        },
    }
    return json.dumps(rec, separators=(",", ":")) + "\n"


# --- Claude Code ---------------------------------------------------------------------------------


def test_settle_blocks_once_names_the_files_and_quotes_the_correction(
    stop: dict[str, Any],
) -> None:
    assert brain("recall", "--enable", "claude").code == 0
    reason = blocked(settle(stop))
    for path in WRITTEN:  # relative to the session's folder, in the order first written
        assert path in reason
    assert reason.index(WRITTEN[0]) < reason.index(WRITTEN[1]) < reason.index(WRITTEN[2])
    assert "/home/dev/shop/" not in reason
    assert "brain propose" in reason
    assert "a decision and why, a path, a command that worked, a constraint" in reason
    assert "Do not propose what the files you wrote already say" in reason
    assert CORRECTION in reason
    assert "Paynova rate-limits fixed intervals" in reason
    passed(settle(stop))  # a second stop in the session passes
    passed(settle(stop))


def test_without_recall_the_reason_quotes_no_correction(stop: dict[str, Any]) -> None:
    reason = blocked(settle(stop))
    assert "corrected" not in reason
    assert all(path in reason for path in WRITTEN)


def test_a_stop_a_block_continued_passes_and_asks_nothing_yet(stop: dict[str, Any]) -> None:
    passed(settle({**stop, "stop_hook_active": True}))
    blocked(settle(stop))  # the active stop marked nothing: the session is asked at its next stop


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("Bash", {"command": "brain propose 'paynova retries — backoff with jitter' --to MEMORY"}),
        ("Bash", {"command": "cd ~/shop && /home/dev/.local/bin/brain propose 'x — y'"}),
        ("mcp__brain__propose", {"line": "paynova retries — exponential backoff with jitter"}),
        ("mcp__memory__propose", {"line": "any server name brain mcp runs under"}),
    ],
)
def test_a_session_that_proposed_passes(
    stop: dict[str, Any], transcript: Path, name: str, args: dict[str, Any]
) -> None:
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(tool_use(name, args))
    passed(settle(stop))


def test_talking_about_propose_is_not_proposing(stop: dict[str, Any], transcript: Path) -> None:
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(tool_use("Bash", {"command": "grep -rn propose brain/"}))
        fh.write(tool_use("Read", {"file_path": "/home/dev/shop/brain_propose.md"}))
    blocked(settle(stop))


def test_a_session_that_wrote_nothing_passes(stop: dict[str, Any]) -> None:
    no_edits = ROOT / "testdata" / "transcripts" / "claude" / "projects" / "-home-dev-shop"
    event = {
        **stop,
        "transcript_path": str(no_edits / "5b0c1f7e-0000-4000-8000-000000000001.jsonl"),
    }
    passed(settle(event))


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json at all",
        "[1, 2]",
        '{"hook_event_name": "Stop"}',  # no session, no transcript
        '{"hook_event_name": "Stop", "session_id": "s1", "transcript_path": "/nonexistent.jsonl"}',
        '{"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "hi"}',
        '{"hook_event_name": "Stop", "session_id": 7, "transcript_path": ["x"]}',
    ],
)
def test_anything_else_passes_silently(stdin: str) -> None:
    passed(settle(stdin))


def test_a_transcript_of_garbage_passes_and_is_never_fatal(
    stop: dict[str, Any], transcript: Path
) -> None:
    transcript.write_bytes(b'\xff\xfe{"type":"tool_use"\n' * 50 + b"[" * 100_000 + b"\n")
    passed(settle(stop))


def test_an_error_goes_to_the_log_not_to_the_agent(
    stop: dict[str, Any], isolated_env: Path
) -> None:
    state = isolated_env / ".local" / "state" / "brain"
    state.mkdir(parents=True)
    (state / "settle").write_text("a file where brain keeps its marks\n", encoding="utf-8")
    passed(settle(stop))  # the session cannot be marked asked: better no block than one a stop
    log = state / "logs" / "settle.log"
    assert "FileExistsError" in log.read_text(encoding="utf-8")


@pytest.mark.parametrize("named", [False, True], ids=["", "--vault"])
def test_a_pass_imports_nothing_heavy(stop: dict[str, Any], vault: Path, named: bool) -> None:
    event = {**stop, "stop_hook_active": True}
    args = ["--vault", str(vault)] if named else []  # a copy: the pass sweeps it
    code, modules = imported_modules("settle", *args, input=json.dumps(event))
    assert code == 0
    assert "brain.commands.settle" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in (*HEAVY, "sqlite3"))
    assert heavy == []


# --- the other agents ----------------------------------------------------------------------------


def test_codex_stop_blocks_on_a_patch(isolated_env: Path) -> None:
    rollout = isolated_env / "rollout.jsonl"
    lines = ROOT / "testdata" / "transcripts" / "codex" / "sessions" / "2025" / "05" / "08"
    text = next(lines.glob("rollout-*.jsonl")).read_text(encoding="utf-8")
    patch = "*** Begin Patch\n*** Update File: migrations/001.sql\n@@\n-ledger\n+journal\n"
    patch += "*** End Patch\n"
    item = {"type": "custom_tool_call", "call_id": "call_9", "name": "apply_patch", "input": patch}
    text += json.dumps(
        {"timestamp": "2025-05-08T11:00:08Z", "type": "response_item", "payload": item}
    )
    rollout.write_text(text + "\n", encoding="utf-8")
    event = {**fixture("codex-stop.json"), "transcript_path": str(rollout), "cwd": "/home/dev/api"}
    assert "migrations/001.sql" in blocked(settle(event))
    passed(settle(event))
    again = {**event, "session_id": "another", "transcript_path": str(rollout)}
    call = {"type": "function_call", "name": "shell", "call_id": "call_10"}
    call["arguments"] = json.dumps({"command": ["bash", "-lc", "brain propose 'db — journal'"]})
    with rollout.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "response_item", "payload": call}) + "\n")
    passed(settle(again))


def test_gemini_after_agent_blocks_on_a_written_file(isolated_env: Path) -> None:
    chat = isolated_env / "session.json"
    calls = [
        {
            "id": "write_file-1",
            "name": "write_file",
            "args": {"file_path": "/home/dev/shop/src/retry.py", "content": "x"},
            "status": "success",
            "result": [{"functionResponse": {"response": {"output": "ok"}}}],
        }
    ]
    doc = {
        "sessionId": fixture("gemini-after-agent.json")["session_id"],
        "messages": [
            {"id": "m1", "type": "user", "content": "add retries", "timestamp": "2026-11-30"},
            {"id": "m2", "type": "gemini", "content": "Done.", "toolCalls": calls},
        ],
    }
    chat.write_text(json.dumps(doc), encoding="utf-8")
    event = {**fixture("gemini-after-agent.json"), "transcript_path": str(chat)}
    assert "src/retry.py" in blocked(settle(event))
    passed(settle({**event, "stop_hook_active": True}))


def test_gemini_after_agent_reads_its_jsonl_chat(isolated_env: Path) -> None:
    """Gemini CLI's chats are `session-*.jsonl` now (chatRecordingService.ts, PR #23749): the
    stop event names one; its messages' tool calls (a message appended again as its calls run)
    are what the session wrote, and a proposal appended later lets the next session's stop pass."""
    session = fixture("gemini-after-agent.json")["session_id"]
    chat = isolated_env / f"session-2026-11-30T14-12-{session[:8]}.jsonl"
    write = {
        "id": "write_file-1",
        "name": "write_file",
        "args": {"file_path": "/home/dev/shop/src/retry.py", "content": "x"},
        "status": "success",
        "result": [{"functionResponse": {"response": {"output": "ok"}}}],
    }
    message = {
        "id": "m2",
        "timestamp": "2026-11-30T14:13:00Z",
        "type": "gemini",
        "content": "Done.",
    }
    lines = [
        {"sessionId": session, "projectHash": "ab12", "startTime": "2026-11-30T14:12:00Z"},
        {"id": "m1", "timestamp": "2026-11-30T14:12:00Z", "type": "user", "content": "add retries"},
        message,
        {"$set": {"lastUpdated": "2026-11-30T14:13:00Z"}},
        {**message, "toolCalls": [{**write, "status": "executing", "result": None}]},
        {**message, "toolCalls": [write]},
    ]
    chat.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    event = {**fixture("gemini-after-agent.json"), "transcript_path": str(chat)}
    reason = blocked(settle(event))
    assert "src/retry.py" in reason
    assert reason.count("retry.py") == 1
    passed(settle({**event, "stop_hook_active": True}))
    propose = {
        "id": "run_shell_command-2",
        "name": "run_shell_command",
        "args": {"command": "brain propose 'retries — three, with backoff'"},
        "status": "success",
    }
    checkpoint = {"$set": {"messages": [lines[1], {**message, "toolCalls": [write, propose]}]}}
    with chat.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(checkpoint) + "\n")
    passed(settle({**event, "session_id": session + "-next"}))


def test_copilot_agent_stop_blocks_on_a_created_file(isolated_env: Path) -> None:
    log = isolated_env / "events.jsonl"
    start = {
        "type": "tool.execution_start",
        "data": {"toolCallId": "t1", "toolName": "create", "arguments": {"path": "/w/notes.md"}},
    }
    log.write_text(json.dumps(start) + "\n", encoding="utf-8")
    for name in ("copilot-agent-stop.json", "copilot-stop.json"):
        event = fixture(name)
        key = "transcriptPath" if "transcriptPath" in event else "transcript_path"
        event[key] = str(log)
        event["sessionId" if "sessionId" in event else "session_id"] += name
        assert "/w/notes.md" in blocked(settle(event))


# --- one internal event --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "harness"),
    [
        ("claude-stop.json", "stop", "claude"),
        ("claude-session-start.json", "start", "claude"),
        ("codex-stop.json", "stop", "codex"),
        ("codex-user-prompt-submit.json", "prompt", "codex"),
        ("gemini-after-agent.json", "stop", "gemini"),
        ("gemini-before-agent.json", "prompt", "gemini"),
        ("copilot-agent-stop.json", "stop", "copilot"),
        ("copilot-stop.json", "stop", "copilot"),
        ("codex-session-start.json", "start", "codex"),
        ("gemini-session-start.json", "start", "gemini"),
        ("copilot-session-start.json", "start", "copilot"),
        ("vscode-session-start.json", "start", "vscode"),
        ("vscode-user-prompt-submit.json", "prompt", "vscode"),
        ("vscode-stop.json", "stop", "vscode"),
    ],
)
def test_every_agent_s_event_maps_to_one_internal_event(name: str, kind: str, harness: str) -> None:
    doc = fixture(name)
    event = hook_event.parse(doc)
    assert event is not None
    assert (event.kind, event.harness) == (kind, harness)
    assert event.session == doc.get("session_id", doc.get("sessionId"))
    assert event.cwd == "/home/dev/shop"
    assert event.stop_active is False
    if kind == "stop":
        assert event.transcript
    if kind == "prompt":
        assert event.prompt == "bump the postgres version in prod"


def test_a_prompt_s_context_is_in_the_form_each_program_reads() -> None:
    for name, hook in (
        ("codex-user-prompt-submit.json", "UserPromptSubmit"),
        ("gemini-before-agent.json", "BeforeAgent"),
    ):
        event = hook_event.parse(fixture(name))
        assert event is not None
        assert hook_event.context(event, "- **pg** — 16.4 in prod") == {
            "hookSpecificOutput": {
                "hookEventName": hook,
                "additionalContext": "- **pg** — 16.4 in prod",
            }
        }


# --- after deciding ------------------------------------------------------------------------------


def test_a_stop_that_passes_sends_the_vault_and_a_block_leaves_it(
    stop: dict[str, Any],
    pair: tuple[Machine, Machine],  # noqa: F811 - test_sync's fixture
    remote: Path,  # noqa: F811 - test_sync's fixture
) -> None:
    a, _ = pair
    a.add("AI/MEMORY.md", bullet("settled at stop"))
    env = {"BRAIN_VAULT": str(a.vault)}
    blocked(a.brain("settle", input=json.dumps(stop), env=env))
    time.sleep(1.0)
    log = Path(a.env()["XDG_STATE_HOME"]) / "brain" / "logs"
    assert not list(log.glob("*-sync.log"))  # the agent goes on: nothing is sent yet
    passed(a.brain("settle", input=json.dumps({**stop, "stop_hook_active": True}), env=env))
    wait_for(lambda: "settled at stop" in git(remote, "show", "main:AI/MEMORY.md"), "the send")
    let_passes_finish(a)


def test_a_stop_that_passes_starts_the_daily_sweep_once(
    stop: dict[str, Any], isolated_env: Path, tmp_path: Path
) -> None:
    """The stop is the moment for the daily vault sweep: a passing stop starts `brain tend
    --daily` in the background (its line in logs/tend.log), a blocked stop does not."""
    import shutil

    vault = tmp_path / "vault"
    shutil.copytree(ROOT / "testdata" / "vault", vault)
    env = {"BRAIN_VAULT": str(vault), "BRAIN_EMBED": "none"}
    log = Path(os.environ["XDG_STATE_HOME"]) / "brain" / "logs" / "tend.log"
    blocked(settle(stop, env=env))
    time.sleep(1.0)
    assert not log.exists()  # the agent goes on: no sweep yet
    passed(settle({**stop, "stop_hook_active": True}, env=env))
    deadline = time.monotonic() + 60
    while not (log.exists() and str(vault) in log.read_text(encoding="utf-8")):
        assert time.monotonic() < deadline, "the daily sweep never ran"
        time.sleep(0.2)


def test_a_stop_sweeps_the_vault_dash_dash_vault_names(
    stop: dict[str, Any], isolated_env: Path, tmp_path: Path
) -> None:
    """`brain settle --vault V` (a stop hook written for one vault) works on V, whatever
    BRAIN_VAULT says, as every command's --vault does."""
    import shutil

    vault = tmp_path / "vault"
    shutil.copytree(ROOT / "testdata" / "vault", vault)
    env = {"BRAIN_VAULT": str(tmp_path / "elsewhere"), "BRAIN_EMBED": "none"}
    log = Path(os.environ["XDG_STATE_HOME"]) / "brain" / "logs" / "tend.log"
    event = json.dumps({**stop, "stop_hook_active": True})
    passed(brain_process("settle", "--vault", str(vault), input=event, env=env))
    deadline = time.monotonic() + 60
    while not (log.exists() and str(vault) in log.read_text(encoding="utf-8")):
        assert time.monotonic() < deadline, "the daily sweep never ran on --vault's vault"
        time.sleep(0.2)


def test_each_stop_reads_only_what_the_session_added(
    stop: dict[str, Any], transcript: Path, isolated_env: Path
) -> None:
    """A long session: the first stop reads the transcript, the next only the lines added since
    (the bytes before are never looked at again), and still knows the files written before."""
    from brain.commands import settle as settlemod

    lines = transcript.read_bytes().splitlines(keepends=True)
    edits = b"".join(lines)
    transcript.write_bytes(b"".join(line for line in lines if b'"Write"' not in line))
    first = settlemod.activity(transcript, "/home/dev/shop", SESSION)
    assert first.files == ("/home/dev/shop/src/paynova/client.py",)  # the Edit and the MultiEdit
    size = transcript.stat().st_size
    with transcript.open("r+b") as fh:  # what was read is overwritten: a rescan would see it
        fh.write(b" " * size)
    with transcript.open("ab") as fh:
        fh.write(
            b"\n".join(line.rstrip(b"\n") for line in edits.splitlines() if b'"Write"' in line)
        )
        fh.write(b"\n")
    again = settlemod.activity(transcript, "/home/dev/shop", SESSION)
    assert again.files == (
        "/home/dev/shop/src/paynova/client.py",
        "/home/dev/shop/src/paynova/backoff.py",
        "/home/dev/shop/docs/webhooks.md",  # written as docs/webhooks.md in the session's folder
    )
    transcript.write_bytes(b"")  # a transcript that shrank is read again from its start
    assert settlemod.activity(transcript, "/home/dev/shop", SESSION).files == ()


def _small_bounds(monkeypatch: pytest.MonkeyPatch) -> Any:
    """settle's reading bounds shrunk to kilobytes (raising=False: held on code without them)."""
    from brain.commands import settle as settlemod

    monkeypatch.setattr(settlemod, "MAX_TRANSCRIPT", 64 * 1024)
    monkeypatch.setattr(settlemod, "PIECE", 8 * 1024, raising=False)
    monkeypatch.setattr(settlemod, "LINE_MAX", 16 * 1024, raising=False)
    return settlemod


def test_a_line_longer_than_a_stop_reads_is_passed_over_once(
    transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line longer than one stop reads (a gigabyte of one line, scaled down): each stop reads
    on from where the last stopped, so the edits after it are found, and the line is never read
    again (it was read from its start at every stop, and what followed it never)."""
    settlemod = _small_bounds(monkeypatch)
    transcript.write_bytes(tool_use("Edit", {"file_path": "/home/dev/shop/a.py"}).encode())
    with transcript.open("ab") as fh:
        fh.write(b"x" * (200 * 1024))  # over three stops' reading, no newline yet
    first = settlemod.activity(transcript, "/home/dev/shop", SESSION)
    assert first.files == ("/home/dev/shop/a.py",)
    with transcript.open("ab") as fh:
        fh.write(b"\n" + tool_use("Write", {"file_path": "/home/dev/shop/b.py"}).encode())
    stops = [settlemod.activity(transcript, "/home/dev/shop", SESSION).files for _ in range(4)]
    assert stops[-1] == ("/home/dev/shop/a.py", "/home/dev/shop/b.py")
    seen = json.loads(settlemod._seen_path(SESSION).read_text(encoding="utf-8"))
    assert seen["offset"] == transcript.stat().st_size  # all read: the next stop reads nothing


def test_a_line_over_line_max_is_passed_over_within_one_stop(
    transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long line inside what one stop reads is passed over, the lines around it read."""
    settlemod = _small_bounds(monkeypatch)
    transcript.write_bytes(
        tool_use("Edit", {"file_path": "/home/dev/shop/a.py"}).encode()
        + tool_use(
            "Write", {"file_path": "/home/dev/shop/long.py", "content": "y" * 40_000}
        ).encode()
        + tool_use("Write", {"file_path": "/home/dev/shop/b.py"}).encode()
    )
    did = settlemod.activity(transcript, "/home/dev/shop", SESSION)
    assert did.files == ("/home/dev/shop/a.py", "/home/dev/shop/b.py")


def _peak(event: dict[str, Any]) -> tuple[int, str, int]:
    """(exit code, output, peak RSS in MB) of one `brain settle` process fed `event`."""
    probe = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run([sys.executable, '-m', 'brain', 'settle'], input=sys.argv[1],"
        " text=True, capture_output=True, check=False)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
        "print(r.stdout, end='')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(event)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    head, _, out = run.partition("\n")
    code, peak = head.split()
    return int(code), out, int(peak)


@pytest.mark.slow
def test_a_gigabyte_transcript_is_read_in_bounded_memory(
    stop: dict[str, Any], transcript: Path
) -> None:
    """A sparse 1 GB transcript of one line (no newline) with an edit after it, and one of
    300 MB of ordinary lines: every stop holds under 100 MB (it held 282 MB: 256 MB read at
    once), and the stops read the long line through once, so the edit after it blocks (every
    stop read the line's first 256 MB again, and never got past it)."""
    from brain.commands import settle as settlemod

    with transcript.open("wb") as fh:
        fh.truncate(1 << 30)
        fh.seek(1 << 30)
        fh.write(b"\n" + tool_use("Write", {"file_path": "/home/dev/shop/b.py"}).encode())
    answers = []
    for _ in range(5):  # 256 MB a stop: the gigabyte in four, the edit in the fifth
        code, out, peak = _peak(stop)
        assert (code, peak < 100) == (0, True), peak
        answers.append(out)
    assert answers[:4] == [""] * 4
    assert "b.py" in answers[4]
    seen = json.loads(settlemod._seen_path(SESSION).read_text(encoding="utf-8"))
    assert seen["offset"] == transcript.stat().st_size

    other = {**stop, "session_id": "0" * 8, "transcript_path": str(transcript) + ".2"}
    line = tool_use("Read", {"file_path": "/home/dev/shop/" + "r" * 200}).encode()
    with Path(other["transcript_path"]).open("wb") as fh:
        for _ in range(300 * 1024 * 1024 // (len(line) * 4096) + 1):
            fh.write(line * 4096)
    for _ in range(2):
        code, _, peak = _peak(other)
        assert (code, peak < 100) == (0, True), peak


# --- the stop's answer in each program's form ----------------------------------------------------

# The keys Codex's Stop output schema allows, no other (codex-rs/hooks/schema/generated/
# stop.command.output.schema.json: additionalProperties false).
CODEX_STOP_KEYS = {
    "continue",
    "decision",
    "reason",
    "stopReason",
    "suppressOutput",
    "systemMessage",
}


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini", "copilot"])
def test_a_block_is_the_top_level_decision_where_the_program_reads_it(harness: str) -> None:
    """Claude Code refuses `hookSpecificOutput` at a stop (anthropics/claude-code#60993), Codex
    any key its schema lacks; Gemini reads "block" as "deny", Copilot `decision: "block"`."""
    doc = hook_event.block("propose what you settled", harness)
    assert doc == {"decision": "block", "reason": "propose what you settled"}
    assert set(doc) <= CODEX_STOP_KEYS


def test_vscode_s_stop_is_blocked_in_its_hook_specific_form() -> None:
    """VS Code's Stop reads `hookSpecificOutput.decision` and `reason` (microsoft/vscode-docs
    docs/copilot/customization/hooks.md, "Stop output"); the top-level pair stays beside it."""
    event = hook_event.parse(fixture("vscode-stop.json"))
    assert event is not None
    doc = hook_event.block("propose what you settled", event.harness)
    assert doc["hookSpecificOutput"] == {
        "hookEventName": "Stop",
        "decision": "block",
        "reason": "propose what you settled",
    }
    assert (doc["decision"], doc["reason"]) == ("block", "propose what you settled")
