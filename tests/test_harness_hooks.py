"""`brain hooks on|off|status` in each agent program's own hook config, through a fresh `brain`
process: brain's entries go in beside the user's own hooks, a second `on` adds nothing, `off`
gives the file back byte for byte, and a file that does not parse is never touched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Run, brain
from test_contract import KEYS

from brain import agent_hooks

MARK = " # ID: brain-hook-7d3f09c1b6e2"
GUARD = {"type": "command", "command": "~/bin/guard.sh", "timeout": 5}

# Each harness's config as a user may have it, with hooks of their own at brain's events too.
CONFIGS: dict[str, tuple[str, str]] = {
    "claude": (
        ".claude/settings.json",
        json.dumps(
            {
                "model": "opus",
                "hooks": {
                    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
                    "PreToolUse": [{"matcher": "Bash", "hooks": [GUARD]}],
                },
            },
            indent=2,
        )
        + "\n",
    ),
    "codex": (
        ".codex/hooks.json",
        '{\n    "hooks": {\n        "UserPromptSubmit": [{"hooks": [{"type": "command", '
        '"command": "python3 ~/.codex/scan_secrets.py", "statusMessage": "scanning"}]}]\n'
        "    }\n}\n",
    ),
    "gemini": (
        ".gemini/settings.json",
        '{\n  "theme": "Dracula",\n  "hooksConfig": {"enabled": true},\n  "hooks": {\n'
        '    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", '
        '"command": "./guard.sh", "name": "guard"}]}],\n'
        '    "AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]\n'
        "  }\n}",
    ),
}
EVENTS = {
    "claude": {"SessionStart": "pack", "UserPromptSubmit": "prime", "Stop": "settle"},
    "codex": {"SessionStart": "pack", "UserPromptSubmit": "prime", "Stop": "settle"},
    "gemini": {"SessionStart": "pack", "BeforeAgent": "prime", "AfterAgent": "settle"},
}
COPILOT = ".copilot/hooks/brain.json"


@pytest.fixture(autouse=True)
def no_agent_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without the agents' programs: an agent is found by its config folder in the test's
    HOME, whatever this machine has installed."""
    programs = [a.program for a in agent_hooks.AGENTS.values()] + ["code", "code-insiders"]
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    keep = [d for d in dirs if not any((Path(d) / p).exists() for p in programs)]
    monkeypatch.setenv("PATH", os.pathsep.join(keep))


def hooks(*args: str) -> Run:
    return brain("hooks", *args)


def brain_commands(doc: dict[str, Any]) -> dict[str, set[tuple[str, ...]]]:
    """event -> the brain arguments registered there."""
    found: dict[str, set[tuple[str, ...]]] = {}
    for event, groups in doc.get("hooks", {}).items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []):
                args = agent_hooks.brain_args(entry.get("command"))
                if args is not None:
                    found.setdefault(event, set()).add(args)
    return found


def users_entries(doc: dict[str, Any]) -> list[Any]:
    return [
        (event, group)
        for event, groups in doc.get("hooks", {}).items()
        if isinstance(groups, list)
        for group in groups
        if not any(agent_hooks.brain_args(e.get("command")) for e in group.get("hooks", []))
    ]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_on_beside_the_users_hooks_then_off_byte_for_byte(name: str, isolated_env: Path) -> None:
    rel, original = CONFIGS[name]
    path = isolated_env / rel
    path.parent.mkdir(parents=True)
    path.write_text(original, encoding="utf-8")
    before = json.loads(original)
    run = hooks("on", "--harness", name, "--json")
    assert run.code == 0, run
    (result,) = run.json()["harnesses"]
    assert list(result) == ["agent", "settings", "action", "hooks", "command", "message"]
    assert (result["agent"], result["settings"], result["action"]) == (name, str(path), "added")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert users_entries(doc) == users_entries(before)  # the user's hooks, untouched, in order
    assert {k: v for k, v in doc.items() if k != "hooks"} == {
        k: v for k, v in before.items() if k != "hooks"
    }
    assert brain_commands(doc) == {event: {(role,)} for event, role in EVENTS[name].items()}
    guard = " 2>/dev/null || true" if name == "gemini" else ""  # Gemini's exit codes: #28
    assert f" settle{guard}{MARK}" in path.read_text(encoding="utf-8")
    text = path.read_bytes()
    again = hooks("on", "--harness", name, "--json")
    assert again.json()["harnesses"][0]["action"] == "present"
    assert path.read_bytes() == text  # a second `on` adds nothing
    status = hooks("status", "--harness", name, "--json").json()["harnesses"][0]
    assert (status["pack"], status["prime"], status["settle"]) == ("on", "on", "on")
    off = hooks("off", "--harness", name, "--json")
    assert off.code == 0, off
    assert off.json()["harnesses"][0]["action"] == "removed"
    assert path.read_text(encoding="utf-8") == original


@pytest.mark.parametrize("name", [*sorted(CONFIGS), "copilot"])
def test_an_unparseable_config_is_left_byte_identical_and_named(
    name: str, isolated_env: Path
) -> None:
    path = isolated_env / (CONFIGS[name][0] if name in CONFIGS else COPILOT)
    path.parent.mkdir(parents=True)
    broken = b'{\n  "hooks": {\n    "Stop": [\n  }, oops\n'
    path.write_bytes(broken)
    for action in ("on", "off"):
        run = hooks(action, "--harness", name)
        assert run.code == 1, run
        assert run.err.count("\n") == 1
        assert f"{path} is not valid JSON (line 4" in run.err
        assert path.read_bytes() == broken
    status = hooks("status", "--harness", name)
    assert status.code == 0
    assert f"{path} is not valid JSON" in status.out
    assert path.read_bytes() == broken


def test_copilot_gets_a_file_of_brains_own(isolated_env: Path) -> None:
    folder = isolated_env / ".copilot" / "hooks"
    folder.mkdir(parents=True)
    theirs = folder / "audit.json"
    theirs.write_text('{"version": 1, "hooks": {"agentStop": []}}\n', encoding="utf-8")
    assert hooks("on", "--harness", "copilot").code == 0
    doc = json.loads((folder / "brain.json").read_text(encoding="utf-8"))
    assert doc["version"] == 1
    entries = {event: [e["bash"] for e in group] for event, group in doc["hooks"].items()}
    assert {e: [agent_hooks.brain_args(c) for c in cs] for e, cs in entries.items()} == {
        "SessionStart": [("pack",)],
        "Stop": [("settle",)],
    }
    status = hooks("status", "--harness", "copilot", "--json").json()["harnesses"][0]
    assert (status["pack"], status["prime"], status["settle"]) == ("on", "n/a", "on")
    assert "prompt hook" in status["note"]
    assert hooks("off", "--harness", "copilot").code == 0
    assert sorted(p.name for p in folder.iterdir()) == ["audit.json"]  # the folder was theirs


def test_copilot_folders_brain_made_go_with_its_file(isolated_env: Path) -> None:
    assert hooks("on", "--harness", "copilot").code == 0
    assert (isolated_env / COPILOT).is_file()
    assert hooks("off", "--harness", "copilot").code == 0
    assert not (isolated_env / ".copilot").exists()


@pytest.mark.parametrize("folder_there", [True, False])
def test_copilot_hooks_on_again_after_off_kept_the_users_hook_in_brains_file(
    isolated_env: Path, folder_there: bool
) -> None:
    """`off` keeps a hook the user added to brain.json (as documented); the file then held no
    entry of brain's, so the next `on` refused it as someone else's: brain could not be turned
    on again without moving the user's hook out."""
    path = isolated_env / COPILOT
    if folder_there:
        path.parent.mkdir(parents=True)
    assert hooks("on", "--harness", "copilot").code == 0
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["hooks"]["PreToolUse"] = [{"type": "command", "bash": "make lint", "timeoutSec": 5}]
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    assert hooks("off", "--harness", "copilot").code == 0
    mine = {"PreToolUse": [{"type": "command", "bash": "make lint", "timeoutSec": 5}]}
    assert json.loads(path.read_text(encoding="utf-8"))["hooks"] == mine
    status = hooks("status", "--harness", "copilot", "--json").json()["harnesses"][0]
    assert (status["problem"], status["pack"], status["settle"]) == (None, "off", "off")
    on = hooks("on", "--harness", "copilot")
    assert on.code == 0, on
    again = json.loads(path.read_text(encoding="utf-8"))["hooks"]
    assert again["PreToolUse"] == mine["PreToolUse"]
    assert [agent_hooks.brain_args(e["bash"]) for e in again["SessionStart"]] == [("pack",)]
    assert hooks("off", "--harness", "copilot").code == 0
    assert json.loads(path.read_text(encoding="utf-8"))["hooks"] == mine


def test_a_copilot_brain_json_that_is_not_brains_is_left_alone(isolated_env: Path) -> None:
    path = isolated_env / COPILOT
    path.parent.mkdir(parents=True)
    mine = '{"version": 1, "hooks": {"Stop": [{"type": "command", "bash": "make lint"}]}}\n'
    path.write_text(mine, encoding="utf-8")
    for action in ("on", "off"):
        run = hooks(action, "--harness", "copilot")
        assert run.code == 1
        assert f"{path} is not brain's hook file" in run.err
        assert path.read_text(encoding="utf-8") == mine


def test_status_lists_the_harnesses_found(isolated_env: Path) -> None:
    empty = hooks("status")
    assert empty.code == 0
    assert "No agent program found" in empty.out
    (isolated_env / ".codex").mkdir()
    (isolated_env / ".codex" / "config.toml").write_text(
        "[features]\nhooks = false\n", encoding="utf-8"
    )
    (isolated_env / ".gemini").mkdir()
    doc = hooks("status", "--json").json()
    assert list(doc) == ["harnesses"]
    assert [h["agent"] for h in doc["harnesses"]] == ["codex", "gemini"]
    first = doc["harnesses"][0]
    assert list(first) == KEYS["`hooks status` harness"]
    assert (first["pack"], first["prime"], first["settle"]) == ("off", "off", "off")
    assert "hooks = false" in first["note"]
    text = hooks("status").out
    assert "Codex CLI: pack off, prime off, settle off in " in text
    assert "Gemini CLI: " in text


def test_on_without_a_harness_covers_claude_and_the_ones_found(isolated_env: Path) -> None:
    (isolated_env / ".gemini").mkdir()
    run = hooks("on", "--json")
    assert run.code == 0, run
    assert list(run.json()) == ["action", "harnesses"]
    assert [h["agent"] for h in run.json()["harnesses"]] == ["claude", "gemini"]
    assert not (isolated_env / ".codex").exists()  # an agent not on this machine gets nothing
    off = hooks("off", "--json").json()["harnesses"]
    assert [(h["agent"], h["action"]) for h in off] == [
        ("claude", "removed"),
        ("codex", "absent"),
        ("gemini", "removed"),
        ("copilot", "absent"),
    ]
    assert not (isolated_env / ".gemini" / "settings.json").exists()  # brain made it
    assert (isolated_env / ".gemini").is_dir()  # the user's folder stays


@pytest.mark.parametrize("args", [["sideways"], ["on", "--harness", "cursor"]])
def test_bad_arguments_are_usage_errors(args: list[str]) -> None:
    run = hooks(*args)
    assert run.code == 2
    assert "Traceback" not in run.err


# --- install and uninstall -----------------------------------------------------------------------


def test_install_turns_all_three_on_and_uninstall_off(tmp_path: Path, isolated_env: Path) -> None:
    originals = {}
    for rel, text in CONFIGS.values():
        path = isolated_env / rel
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
        originals[path] = text
    (isolated_env / ".copilot").mkdir()
    run = brain("install", str(tmp_path / "vault"), "--json")
    assert run.code == 0, run
    doc = run.json()
    assert doc["claude"]["action"] == "added"
    assert [(h["agent"], h["action"]) for h in doc["agents"]] == [
        ("codex", "added"),
        ("gemini", "added"),
        ("copilot", "added"),
    ]
    for name, (rel, _) in CONFIGS.items():
        registered = brain_commands(json.loads((isolated_env / rel).read_text(encoding="utf-8")))
        assert sorted(a for args in registered.values() for a in args) == [
            ("pack",),
            ("prime",),
            ("settle",),
        ], name
    assert (isolated_env / COPILOT).is_file()
    status = hooks("status", "--json").json()["harnesses"]
    assert all(s["pack"] == "on" and s["settle"] == "on" for s in status)
    undo = brain("uninstall", "--json")
    assert undo.code == 0, undo
    assert undo.json()["claude"]["action"] == "removed"
    assert [h["agent"] for h in undo.json()["agents"]] == ["codex", "gemini", "copilot"]
    for path, text in originals.items():
        assert path.read_text(encoding="utf-8") == text
    assert not (isolated_env / COPILOT).exists()


# --- the session-start hook in each program's form -----------------------------------------------


@pytest.mark.parametrize(
    ("event", "keys"),
    [
        (
            {"hook_event_name": "SessionStart", "turn_id": "t", "source": "startup"},
            ["hookSpecificOutput"],
        ),
        (
            {
                "hook_event_name": "SessionStart",
                "timestamp": "2026-11-30T14:12:00Z",
                "transcript_path": "/h/.gemini/tmp/x/chats/session-1.json",
            },
            ["hookSpecificOutput"],
        ),
        (
            {
                "hook_event_name": "SessionStart",
                "timestamp": "2026-11-30T14:12:00Z",
                "source": "new",
                "transcript_path": "/h/.copilot/session-state/s/events.jsonl",
            },
            ["hookSpecificOutput", "additionalContext"],
        ),
    ],
)
def test_session_start_context_for_codex_gemini_copilot(
    tmp_path: Path, event: dict[str, str], keys: list[str]
) -> None:
    from conftest import FIXTURE_VAULT
    from test_pack import repo

    here = repo(tmp_path, "payments")
    doc = {"session_id": "s1", "cwd": str(here), **event}
    run = brain("pack", input=json.dumps(doc), cwd=here, env={"BRAIN_VAULT": str(FIXTURE_VAULT)})
    assert run.code == 0, run
    out = json.loads(run.out)
    assert list(out) == keys  # Codex refuses keys its schema does not know; Copilot reads the top
    assert "payments" in out["hookSpecificOutput"]["additionalContext"]


def test_uninstall_leaves_a_broken_config_brain_never_wrote_out_of_it(
    tmp_path: Path, isolated_env: Path
) -> None:
    path = isolated_env / CONFIGS["gemini"][0]
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"hooks": {"AfterAgent": [ }')
    run = brain("install", str(tmp_path / "vault"), "--json")
    assert run.code == 1  # install could not put the hooks in: it says so
    assert [(h["agent"], h["action"]) for h in run.json()["agents"]] == [("gemini", "unparseable")]
    undo = brain("uninstall", "--json")
    assert undo.code == 0, undo  # nothing of brain's is in that file: nothing to fail on
    assert undo.json()["agents"] == []
    assert path.read_bytes() == b'{"hooks": {"AfterAgent": [ }'


# --- VS Code, which runs Claude Code's and Copilot CLI's hooks ------------------------------------


def test_status_shows_vscode_with_the_hooks_it_runs(isolated_env: Path) -> None:
    (isolated_env / ".vscode").mkdir()
    doc = hooks("status", "--json").json()
    (vscode,) = [h for h in doc["harnesses"] if h["agent"] == "vscode"]
    assert list(vscode) == KEYS["`hooks status` harness"]
    assert (vscode["pack"], vscode["prime"], vscode["settle"]) == ("off", "n/a", "off")
    assert hooks("on", "--harness", "copilot").code == 0  # its file alone: VS Code runs it
    doc = hooks("status", "--json").json()
    (vscode,) = [h for h in doc["harnesses"] if h["agent"] == "vscode"]
    assert (vscode["pack"], vscode["prime"], vscode["settle"]) == ("on", "n/a", "on")
    assert "~/.claude/settings.json" in vscode["note"]
    assert "VS Code: pack on, prime n/a, settle on in " in hooks("status").out


# --- each agent's prompt, logged under its own name ----------------------------------------------

PROMPT = json.loads((ROOT / "testdata" / "hooks" / "claude-user-prompt-submit.json").read_text())
SERVED = "AI/LEARNINGS.md:36 pgxpool max conns — "  # what the fixture vault answers PROMPT with


@pytest.mark.parametrize(
    ("name", "caller"),
    [
        ("claude-user-prompt-submit.json", "claude-code"),
        ("codex-user-prompt-submit.json", "codex"),
        ("gemini-before-agent.json", "gemini-cli"),
    ],
)
def test_each_agents_prompt_is_logged_under_its_name(vault: Path, name: str, caller: str) -> None:
    """The ledger names the agent that called, not claude-code for every hook: Codex started from
    a Claude Code session inherits CLAUDECODE, which names no hook's caller."""
    assert brain("reindex", "--vault", str(vault)).code == 0
    event = json.loads((ROOT / "testdata" / "hooks" / name).read_text(encoding="utf-8"))
    event["prompt"] = PROMPT["prompt"]
    env = {"CLAUDECODE": "1"}
    run = brain("prime", "--vault", str(vault), input=json.dumps(event), env=env)
    assert run.code == 0, run
    assert SERVED in run.out
    ledger = brain("ledger", "--vault", str(vault), "--json", "--caller", caller).json()
    assert ledger["lookups"] == 1


def test_vscode_s_prompt_gets_nothing_and_is_not_counted(vault: Path) -> None:
    """VS Code reads no context from its UserPromptSubmit (the common output only): prime serves
    it nothing, rather than log bullets nobody received."""
    assert brain("reindex", "--vault", str(vault)).code == 0
    event = json.loads((ROOT / "testdata" / "hooks" / "vscode-user-prompt-submit.json").read_text())
    event["prompt"] = PROMPT["prompt"]
    run = brain("prime", "--vault", str(vault), input=json.dumps(event))
    assert (run.code, run.out, run.err) == (0, "", "")
    assert brain("ledger", "--vault", str(vault), "--json").json()["lookups"] == 0
