"""brain's hooks in agents' settings files (brain.agent_hooks): only brain's own commands are
brain's, and everything else in the file stays as the user wrote it, byte for byte.

Most tests go through `brain install` / `brain uninstall` in a fresh process; the recognition
rule and the formatting cases call the module directly.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, brain

from brain import agent_hooks

MARK = " # ID: brain-hook-7d3f09c1b6e2"
USERS_OWN = "cd ~/work && brain pack myproject --budget 500 > /tmp/pack.log"


@pytest.fixture
def settings(isolated_env: Path) -> Path:
    path = isolated_env / ".claude" / "settings.json"
    path.parent.mkdir()
    return path


def install(tmp_path: Path, *args: str) -> Run:
    return brain("install", str(tmp_path / "vault"), *args)


def commands(path: Path) -> list[tuple[str, str]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [
        (group.get("matcher", ""), entry["command"])
        for group in doc["hooks"]["SessionStart"]
        for entry in group["hooks"]
    ]


# --- whose command it is -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args"),
    [
        (f"/home/me/.local/bin/brain pack{MARK}", ("pack",)),
        (f"'/path with space/brain' pack{MARK}", ("pack",)),
        (f"/venv/bin/python -P -m brain pack{MARK}", ("pack",)),
        (f"/x/brain prime{MARK}", ("prime",)),  # a future row's command is brain's too
        ("/home/me/.local/bin/brain pack", ("pack",)),  # what brain wrote before the ID comment
        ("/venv/bin/python -P -m brain pack", ("pack",)),
        ("/x/brain prime", None),  # without the ID, only `pack` was ever brain's
        ("brain pack", None),  # brain always wrote an absolute path
        (USERS_OWN, None),
        ("/x/brain pack --budget 500", None),
        ("/x/brain  pack", None),  # not as brain spaces it
        # brain's ID comment marks brain's entry, whatever the user edited before it
        (f"/x/brain prime --budget 400{MARK}", ("prime", "--budget", "400")),
        (f"/x/brain pack && rm -rf ~{MARK}", ("pack", "&&", "rm", "-rf", "~")),
        (f"brain prime{MARK}", ("prime",)),  # a launcher of the user's
        (f"nice -n 5 /x/brain --vault /v settle{MARK}", ("settle",)),
        ("/x/brain  pack   #  ID: brain-hook-7d3f09c1b6e2 ", ("pack",)),
        (f"/x/brain{MARK}", ()),  # brain's, naming none of its hook commands
        ("mybrain pack", None),
        ("/x/brain packer", None),
        ("echo brain", None),
        (None, None),
    ],
)
def test_brains_commands_are_marked_by_the_id_or_exactly_the_old_form(
    command: str | None, args: tuple[str, ...] | None
) -> None:
    assert agent_hooks.brain_args(command) == args


def test_a_written_command_is_recognised() -> None:
    for launch in (["/opt/my tools/brain"], ["/usr/bin/python3", "-P", "-m", "brain"]):
        assert agent_hooks.brain_args(agent_hooks.command(["pack"], launch)) == ("pack",)


def test_the_mapping_is_data() -> None:
    """Registering another command is a row: every row names a known agent, an event, matchers
    (one group each) and brain's arguments; each agent gets pack, prime and settle at its own
    events, except Copilot CLI's prompt hook, whose output Copilot drops."""
    rows = {(r.agent, r.args[0]): r.event for r in agent_hooks.HOOKS}
    assert rows == {
        ("claude", "pack"): "SessionStart",
        ("claude", "prime"): "UserPromptSubmit",
        ("claude", "settle"): "Stop",
        ("codex", "pack"): "SessionStart",
        ("codex", "prime"): "UserPromptSubmit",
        ("codex", "settle"): "Stop",
        ("gemini", "pack"): "SessionStart",
        ("gemini", "prime"): "BeforeAgent",
        ("gemini", "settle"): "AfterAgent",
        ("copilot", "pack"): "SessionStart",
        ("copilot", "settle"): "Stop",
    }
    assert agent_hooks.SESSION_MATCHERS == ("startup", "clear", "compact")
    for row in agent_hooks.HOOKS:
        assert row.agent in agent_hooks.AGENTS
        assert row.matchers


def test_a_new_row_is_registered_and_removed_like_the_first(
    settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = agent_hooks.HookRow("claude", "PreCompact", ("",), ("reindex",))
    monkeypatch.setattr(agent_hooks, "HOOKS", (*agent_hooks.HOOKS, extra))
    settings.write_text('{"theme": "dark"}\n', encoding="utf-8")
    assert agent_hooks.register("claude", ["/x/brain"]).action == "added"
    doc = json.loads(settings.read_text(encoding="utf-8"))
    assert doc["hooks"]["PreCompact"] == [
        {"hooks": [{"type": "command", "command": f"/x/brain reindex{MARK}"}]}
    ]
    assert doc["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": f"/x/brain prime{MARK}"}]}
    ]
    assert len(doc["hooks"]["SessionStart"]) == 3
    assert agent_hooks.unregister("claude").action == "removed"
    assert settings.read_text(encoding="utf-8") == '{"theme": "dark"}\n'


def test_codex_keeps_its_hooks_in_its_own_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", "/somewhere/codex")
    assert agent_hooks.AGENTS["codex"].settings_path() == Path("/somewhere/codex/hooks.json")


# --- a user's own hook ---------------------------------------------------------------------------


def test_a_users_own_pack_hook_is_kept_through_install_and_uninstall(
    tmp_path: Path, settings: Path
) -> None:
    original = json.dumps(
        {
            "hooks": {
                "SessionStart": [
                    {"matcher": "startup", "hooks": [{"type": "command", "command": USERS_OWN}]}
                ]
            }
        },
        indent=2,
    )
    settings.write_text(original, encoding="utf-8")
    run = install(tmp_path)
    assert run.code == 0, run
    found = commands(settings)
    assert found[0] == ("startup", USERS_OWN)  # untouched, and brain's own beside it
    assert [m for m, c in found[1:]] == ["startup", "clear", "compact"]
    assert all(c.endswith(f" pack{MARK}") for _, c in found[1:])
    assert install(tmp_path).code == 0  # a second install adds nothing
    assert len(commands(settings)) == 4
    assert brain("uninstall").code == 0
    assert settings.read_text(encoding="utf-8") == original


def test_an_entry_from_an_older_brain_is_updated_then_removed(
    tmp_path: Path, settings: Path
) -> None:
    old = "/old/venv/bin/brain pack"
    doc = {
        "hooks": {
            "SessionStart": [
                {"matcher": m, "hooks": [{"type": "command", "command": old}]}
                for m in ("startup", "clear", "compact")
            ]
        }
    }
    settings.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    result = install(tmp_path, "--json").json()["claude"]
    assert result["action"] == "added"  # prime and settle; pack updated where it stands
    assert result["hooks"] == ["UserPromptSubmit", "Stop"]
    assert [c for _, c in commands(settings)] == [result["command"]] * 3
    assert result["command"].endswith(f" pack{MARK}")
    assert brain("uninstall").code == 0
    # no record of what the older brain created: its list goes, `hooks` stays
    assert json.loads(settings.read_text(encoding="utf-8")) == {"hooks": {}}


# --- the file as it was --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "original",
    [
        '{\n  "theme": "dark",\n  "hooks": {}\n}\n',  # an empty hooks table
        '{"hooks": {"SessionStart": []}}\n',  # an empty SessionStart list
    ],
)
def test_empty_containers_the_user_had_survive(
    tmp_path: Path, settings: Path, original: str
) -> None:
    settings.write_text(original, encoding="utf-8")
    assert install(tmp_path).code == 0
    assert brain("uninstall").code == 0
    assert settings.read_text(encoding="utf-8") == original


ODD_LAYOUT = """{
    "permissions": {"allow": ["Bash(ls:*)", "Read"],   "deny": []},
    "model":"opus",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
        ]
    },
    "env": {"É": "ü"}
}"""


def test_only_the_lines_brain_adds_change(tmp_path: Path, settings: Path) -> None:
    settings.write_text(ODD_LAYOUT, encoding="utf-8")
    assert install(tmp_path).code == 0
    after = settings.read_text(encoding="utf-8")
    before_lines = ODD_LAYOUT.splitlines()
    after_lines = after.splitlines()
    # the user's lines all stay, as written; brain's groups follow the last one (after a comma)
    cut = next(k for k, line in enumerate(before_lines) if "echo hi" in line)
    tail = len(before_lines) - cut - 1
    added = after_lines[cut + 1 : len(after_lines) - tail]
    assert after_lines == [
        *before_lines[:cut],
        before_lines[cut] + ",",
        *added,
        *before_lines[cut + 1 :],
    ]
    # 3 SessionStart groups of 9 lines, the list's `],`, UserPromptSubmit's and Stop's 10 lines
    # (the last `]` is the user's own line, moved down)
    assert len(added) == 3 * 9 + 1 + 10 + 9
    assert all(line.startswith(" " * 12) for line in added[:27])  # in the file's own indent
    assert added[27:29] == ["        ],", '        "UserPromptSubmit": [']  # beside SessionStart
    assert not after.endswith("\n")  # as the user had it
    assert brain("uninstall").code == 0
    assert settings.read_text(encoding="utf-8") == ODD_LAYOUT


@pytest.mark.parametrize(
    "original",
    [
        '{\n\t"theme": "dark"\n}',  # tabs, no final newline
        '{"theme": "dark"}\n',  # one line
        '{\r\n  "theme": "dark"\r\n}\r\n',  # CRLF
        "",  # empty file
        "{}",
    ],
)
def test_formatting_is_kept_through_register_and_unregister(settings: Path, original: str) -> None:
    settings.write_text(original, encoding="utf-8", newline="")
    assert agent_hooks.register("claude", ["/x/brain"]).action == "added"
    added = settings.read_bytes().decode("utf-8")
    json.loads(added)
    if "\t" in original:
        assert '\n\t"hooks": {\n\t\t"SessionStart"' in added
    if "\r\n" in original:
        assert "\n" not in added.replace("\r\n", "")
    if len(original.strip()) > 2 and "\n" not in original.strip():
        assert "\n" not in added.strip()  # a one-line file stays one line
    assert agent_hooks.unregister("claude").action == "removed"
    assert settings.read_bytes().decode("utf-8") == original


def test_a_moved_brain_updates_its_entries_in_place(settings: Path) -> None:
    agent_hooks.register("claude", ["/old/venv/bin/brain"])
    result = agent_hooks.register("claude", ["/new place/bin/brain"])
    assert result.action == "updated"
    assert [c for _, c in commands(settings)] == [f"'/new place/bin/brain' pack{MARK}"] * 3


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path: Path, settings: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"theme": "dark"}\n', encoding="utf-8")
    settings.symlink_to(real)
    assert agent_hooks.register("claude", ["/x/brain"]).action == "added"
    assert settings.is_symlink()
    assert json.loads(real.read_text(encoding="utf-8"))["theme"] == "dark"
    assert agent_hooks.unregister("claude").action == "removed"
    assert settings.is_symlink()
    assert real.read_text(encoding="utf-8") == '{"theme": "dark"}\n'


# --- files brain must not write ------------------------------------------------------------------


def test_a_read_only_settings_file_is_never_written(tmp_path: Path, settings: Path) -> None:
    settings.write_text('{"theme": "dark"}\n', encoding="utf-8")
    settings.chmod(0o444)
    inode = settings.stat().st_ino
    run = install(tmp_path)
    assert run.code == 1, run
    assert run.err.count("\n") == 1
    assert f"{settings} is read-only; left untouched" in run.err
    assert settings.read_text(encoding="utf-8") == '{"theme": "dark"}\n'
    assert settings.stat().st_ino == inode  # not replaced either
    assert stat.S_IMODE(settings.stat().st_mode) == 0o444
    doc: Any = install(tmp_path, "--json")
    assert doc.code == 1
    assert doc.json()["claude"]["action"] == "read-only"


def test_an_unreadable_settings_file_is_named_in_a_sentence(tmp_path: Path, settings: Path) -> None:
    settings.mkdir()  # a folder where the file should be: reading it fails
    run = install(tmp_path)
    assert run.code == 1
    assert f"{settings} cannot be read (" in run.err
    assert " is cannot " not in run.err


def test_registration_needs_no_rewrite_when_present(settings: Path) -> None:
    agent_hooks.register("claude", ["/x/brain"])
    before = settings.stat()
    assert agent_hooks.register("claude", ["/x/brain"]).action == "present"
    assert settings.stat().st_mtime_ns == before.st_mtime_ns


# --- a file brain created and the user added to since --------------------------------------------

SETTINGS_FILES = {
    "claude": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
}


def add_users_settings(path: Path) -> dict[str, Any]:
    """What a person adds to a settings file brain created: their own keys, beside brain's."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    mine = {"model": "opus", "permissions": {"allow": ["Read", "Bash(ls:*)"]}}
    path.write_text(json.dumps({**mine, **doc}, indent=2) + "\n", encoding="utf-8")
    return mine


@pytest.mark.parametrize("off", [("hooks", "off"), ("uninstall",)])
@pytest.mark.parametrize("name", sorted(SETTINGS_FILES))
def test_a_file_brain_created_keeps_what_the_user_added_to_it(
    isolated_env: Path, name: str, off: tuple[str, ...]
) -> None:
    path = isolated_env / SETTINGS_FILES[name]
    assert brain("hooks", "on", "--harness", name).code == 0
    assert path.is_file()  # brain created it
    mine = add_users_settings(path)
    run = brain(*off)
    assert run.code == 0, run
    assert path.is_file()  # the user's settings are in it: never deleted
    assert json.loads(path.read_text(encoding="utf-8")) == mine  # brain's entries gone, theirs kept


def test_a_blank_file_brain_filled_keeps_what_the_user_added(settings: Path) -> None:
    settings.write_text("", encoding="utf-8")
    assert agent_hooks.register("claude", ["/x/brain"]).action == "added"
    mine = add_users_settings(settings)
    assert agent_hooks.unregister("claude").action == "removed"
    assert json.loads(settings.read_text(encoding="utf-8")) == mine  # not emptied again


# --- brain's entry, edited by the user -----------------------------------------------------------


def edit_entry(path: Path, event: str, args: str, **keys: object) -> None:
    """The person edits brain's entry at `event`: other arguments, keys of their own."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    (entry,) = doc["hooks"][event][0]["hooks"]
    verb = args.split(maxsplit=1)[0]
    entry["command"] = entry["command"].replace(f" {verb}{MARK}", f" {args}{MARK}")
    entry.update(keys)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def entries_at(path: Path, event: str) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [e for group in doc["hooks"][event] for e in group["hooks"]]


def test_on_keeps_brains_edited_entry_and_adds_no_second(settings: Path) -> None:
    assert brain("hooks", "on", "--harness", "claude").code == 0
    edit_entry(settings, "UserPromptSubmit", "prime --budget 400", timeout=20)
    edit_entry(settings, "Stop", "settle", timeout=30)
    edited = settings.read_bytes()
    run = brain("hooks", "on", "--harness", "claude", "--json")
    assert run.code == 0, run
    assert run.json()["harnesses"][0]["action"] == "present"
    assert settings.read_bytes() == edited  # one prime, the user's, as they left it
    (prime,) = entries_at(settings, "UserPromptSubmit")
    assert prime["command"].endswith(f" prime --budget 400{MARK}")
    assert prime["timeout"] == 20
    status = brain("hooks", "status", "--harness", "claude", "--json").json()["harnesses"][0]
    assert (status["pack"], status["prime"], status["settle"]) == ("on", "on", "on")


def test_a_moved_brain_refreshes_its_launcher_and_keeps_the_users_edits(settings: Path) -> None:
    agent_hooks.register("claude", ["/old/venv/bin/brain"])
    edit_entry(settings, "UserPromptSubmit", "prime --budget 400", timeout=20)
    result = agent_hooks.register("claude", ["/new place/bin/brain"])
    assert result.action == "updated"
    assert entries_at(settings, "UserPromptSubmit") == [
        {
            "type": "command",
            "command": f"'/new place/bin/brain' prime --budget 400{MARK}",
            "timeout": 20,
        }
    ]
    assert [e["command"] for e in entries_at(settings, "Stop")] == [
        f"'/new place/bin/brain' settle{MARK}"
    ]


def test_a_launcher_the_user_wrote_is_theirs_to_keep(settings: Path) -> None:
    agent_hooks.register("claude", ["/x/brain"])
    doc = json.loads(settings.read_text(encoding="utf-8"))
    doc["hooks"]["Stop"][0]["hooks"][0]["command"] = f"nice -n 5 brain settle{MARK}"
    settings.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    assert agent_hooks.register("claude", ["/y/brain"]).action == "updated"  # pack and prime
    assert [e["command"] for e in entries_at(settings, "Stop")] == [f"nice -n 5 brain settle{MARK}"]


def test_off_removes_brains_edited_entries_and_nothing_of_the_users(settings: Path) -> None:
    original = json.dumps(
        {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say"}]}]}},
        indent=2,
    )
    settings.write_text(original, encoding="utf-8")
    assert brain("hooks", "on", "--harness", "claude").code == 0
    edit_entry(settings, "UserPromptSubmit", "prime --budget 400", timeout=20)
    doc = json.loads(settings.read_text(encoding="utf-8"))
    doc["hooks"]["Stop"][1]["hooks"][0]["timeout"] = 30  # brain's settle, after the user's
    settings.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    run = brain("hooks", "off", "--harness", "claude", "--json")
    assert run.code == 0, run
    assert sorted(run.json()["harnesses"][0]["hooks"]) == [
        "SessionStart:clear",
        "SessionStart:compact",
        "SessionStart:startup",
        "Stop",
        "UserPromptSubmit",
    ]
    assert json.loads(settings.read_text(encoding="utf-8")) == json.loads(original)


# --- Copilot CLI: brain's own file, and what the user added to it ---------------------------------

COPILOT = ".copilot/hooks/brain.json"


def test_copilot_on_keeps_what_the_user_added_to_brains_file(isolated_env: Path) -> None:
    path = isolated_env / COPILOT
    assert brain("hooks", "on", "--harness", "copilot").code == 0
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["hooks"]["Stop"][0]["timeoutSec"] = 90
    doc["hooks"]["Stop"].append({"type": "command", "bash": "make lint"})
    doc["description"] = "mine too"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    edited = path.read_bytes()
    run = brain("hooks", "on", "--harness", "copilot", "--json")
    assert run.code == 0, run
    assert run.json()["harnesses"][0]["action"] == "present"
    assert path.read_bytes() == edited


def test_copilot_off_keeps_brains_file_when_the_user_added_to_it(isolated_env: Path) -> None:
    path = isolated_env / COPILOT
    assert brain("hooks", "on", "--harness", "copilot").code == 0
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["hooks"]["Stop"].append({"type": "command", "bash": "make lint"})
    doc["description"] = "mine too"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    run = brain("uninstall")
    assert run.code == 0, run
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "version": 1,
        "hooks": {"Stop": [{"type": "command", "bash": "make lint"}]},
        "description": "mine too",
    }


def test_copilot_off_deletes_brains_file_holding_only_brains_entries(isolated_env: Path) -> None:
    path = isolated_env / COPILOT
    assert brain("hooks", "on", "--harness", "copilot").code == 0
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["hooks"]["Stop"][0]["timeoutSec"] = 90  # a key on brain's entry goes with it
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    assert brain("hooks", "off", "--harness", "copilot").code == 0
    assert not (isolated_env / ".copilot").exists()


def test_doctor_counts_brains_edited_pack_as_registered(settings: Path, tmp_path: Path) -> None:
    from brain import health

    exe = tmp_path / "bin" / "brain"  # doctor checks that the hook's program exists
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    agent_hooks.register("claude", [str(exe)])
    doc = json.loads(settings.read_text(encoding="utf-8"))
    for group in doc["hooks"]["SessionStart"]:
        group["hooks"][0]["command"] = f"{exe} pack --budget 900{MARK}"
    settings.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    check = health._agent_hooks_check()
    assert (check.status, check.fix) == ("ok", None), check


# --- each shell's form of the command (issue 28: Windows, Gemini's exit codes) -------------------

SH_GUARD = " 2>/dev/null || true"


def fake_brain(tmp_path: Path) -> Path:
    """An executable named brain that writes each argument it got on a line of its own, and a
    line on stderr (which a guarded command must swallow)."""
    exe = tmp_path / "bin dir" / "brain"
    exe.parent.mkdir()
    exe.write_text('#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a"; done\necho noise >&2\n')
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_the_posix_form_runs_brain_with_its_arguments_intact(tmp_path: Path, shell: str) -> None:
    import subprocess

    exe = fake_brain(tmp_path)
    args = ["prime", "--vault", "/v/it's $HOME `x` & y"]
    for guarded in (False, True):
        cmd = agent_hooks.command(args, [str(exe)], agent_hooks.SH, guarded)
        run = subprocess.run([shell, "-c", cmd], capture_output=True, text=True, check=False)
        assert run.returncode == 0, run
        assert run.stdout.splitlines() == args
        assert run.stderr == ("" if guarded else "noise\n")
        assert agent_hooks.brain_args(cmd) == tuple(args)


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_guarded_command_without_brain_exits_0_and_says_nothing(
    tmp_path: Path, shell: str
) -> None:
    """Gemini CLI turns an exit code other than 0 and 1, with text on stderr, into a denial of the
    prompt (hookRunner.ts, convertPlainTextToHookOutput): brain being gone must not do that."""
    import subprocess

    gone = str(tmp_path / "gone" / "brain")
    bare = subprocess.run(
        [shell, "-c", agent_hooks.command(["prime"], [gone])], capture_output=True, check=False
    )
    assert bare.returncode == 127
    assert bare.stderr
    guarded = agent_hooks.command(["prime"], [gone], agent_hooks.SH, guarded=True)
    run = subprocess.run([shell, "-c", guarded], input=b"{}", capture_output=True, check=False)
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")


# PowerShell's rules (about_Quoting_Rules): nothing expands in single quotes, where a single
# quote (or any of PowerShell's typographic single quotes) is doubled; `&` calls a quoted path;
# `#` starts a comment. Written out here by hand, not by the code under test.
PS_CASES = [
    (
        ["C:\\Users\\Jo Smith\\.local\\bin\\brain.exe"],
        ["pack"],
        False,
        "& 'C:\\Users\\Jo Smith\\.local\\bin\\brain.exe' pack" + MARK,
    ),
    (
        ["C:\\Program Files\\Python312\\python.exe", "-P", "-m", "brain"],
        ["prime", "--budget", "400"],
        False,
        "& 'C:\\Program Files\\Python312\\python.exe' -P -m brain prime --budget 400" + MARK,
    ),
    (
        ["C:\\b\\brain.exe"],
        ["settle", "--vault", "D:\\it's $env:HOME\u2019s"],
        True,
        "try { & 'C:\\b\\brain.exe' settle --vault 'D:\\it''s $env:HOME\u2019\u2019s' 2>$null }"
        " catch {}; exit 0" + MARK,
    ),
]


@pytest.mark.parametrize(("launch", "args", "guarded", "expected"), PS_CASES)
def test_the_powershell_form_follows_powershells_quoting(
    launch: list[str], args: list[str], guarded: bool, expected: str
) -> None:
    cmd = agent_hooks.command(args, launch, agent_hooks.POWERSHELL, guarded)
    assert cmd == expected
    assert agent_hooks.brain_args(cmd) == tuple(args)
    moved = agent_hooks.refreshed(
        cmd, args, ["E:\\new\\brain.exe"], agent_hooks.POWERSHELL, guarded
    )
    assert moved == agent_hooks.command(
        args, ["E:\\new\\brain.exe"], agent_hooks.POWERSHELL, guarded
    )


def test_a_posix_command_becomes_the_powershell_form_with_the_users_arguments() -> None:
    old = f"'C:\\b\\brain.exe' prime --budget 400{MARK}"  # what an older brain wrote on Windows
    new = agent_hooks.refreshed(old, ["prime"], ["C:\\b\\brain.exe"], agent_hooks.POWERSHELL, True)
    assert new == (
        "try { & 'C:\\b\\brain.exe' prime --budget 400 2>$null } catch {}; exit 0" + MARK
    )


def gemini_settings(home: Path) -> Path:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def gemini_commands(path: Path) -> list[str]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [e["command"] for groups in doc["hooks"].values() for g in groups for e in g["hooks"]]


def test_gemini_gets_the_guarded_form_and_an_older_entry_is_brought_to_it(
    isolated_env: Path,
) -> None:
    path = gemini_settings(isolated_env)
    exe = agent_hooks.launcher()  # `status` compares with this brain's own launcher
    assert agent_hooks.register("gemini").action == "added"

    def guarded(*args: str) -> str:
        return agent_hooks.command(args, exe, agent_hooks.SH, guarded=True)

    assert guarded("pack").endswith(f" pack{SH_GUARD}{MARK}")
    assert gemini_commands(path) == [
        guarded("pack"),
        guarded("pack"),
        guarded("prime"),
        guarded("settle"),
    ]
    # what brain wrote before the guard, with the user's edit: it is brought to the guarded form
    older = agent_hooks.command(["prime", "--budget", "300"], exe)
    text = path.read_text(encoding="utf-8").replace(guarded("prime"), older)
    path.write_text(text, encoding="utf-8")
    assert "out of date" in str(agent_hooks.state("gemini").note)
    done = agent_hooks.register("gemini")
    assert done.action == "updated"
    assert guarded("prime", "--budget", "300") in gemini_commands(path)
    assert agent_hooks.state("gemini").note is None
    assert agent_hooks.register("gemini").action == "present"


def test_codex_registers_its_compact_start(isolated_env: Path) -> None:
    """Codex CLI starts a session anew after a compaction (SessionStart source "compact"), whose
    summary dropped the pack: brain registers it, and `status` calls an older registration
    without it partial."""
    path = isolated_env / ".codex" / "hooks.json"
    path.parent.mkdir()
    older = {
        "hooks": {
            "SessionStart": [
                {"matcher": m, "hooks": [{"type": "command", "command": f"/x/brain pack{MARK}"}]}
                for m in ("startup", "clear")
            ]
        }
    }
    path.write_text(json.dumps(older, indent=2) + "\n", encoding="utf-8")
    assert agent_hooks.state("codex").pack == "partial"
    done = agent_hooks.register("codex", ["/x/brain"])
    assert "SessionStart:compact" in done.hooks
    matchers = [g["matcher"] for g in json.loads(path.read_text())["hooks"]["SessionStart"]]
    assert matchers == ["startup", "clear", "compact"]
    assert agent_hooks.state("codex").pack == "on"


def test_on_windows_each_agent_gets_the_form_its_shell_reads(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI runs PowerShell on Windows (shell-utils.ts, getShellConfiguration), Codex reads
    `commandWindows` there, Copilot CLI `powershell`; Claude Code runs Git Bash."""
    monkeypatch.setattr(agent_hooks, "_windows", lambda: True)
    exe = ["C:\\Users\\jo\\.local\\bin\\brain.exe"]
    gemini = gemini_settings(isolated_env)
    agent_hooks.register("gemini", exe)
    assert gemini_commands(gemini)[2] == agent_hooks.command(
        ["prime"], exe, agent_hooks.POWERSHELL, guarded=True
    )
    (isolated_env / ".codex").mkdir()
    agent_hooks.register("codex", exe)
    stop = json.loads((isolated_env / ".codex" / "hooks.json").read_text())["hooks"]["Stop"]
    assert stop[0]["hooks"][0] == {
        "type": "command",
        "command": agent_hooks.command(["settle"], exe),
        "commandWindows": agent_hooks.command(["settle"], exe, agent_hooks.POWERSHELL),
    }
    for name in ("gemini", "codex"):
        state = agent_hooks.state(name)
        assert (state.pack, state.prime, state.settle) == ("on", "on", "on"), name


def test_a_posix_gemini_command_under_powershell_is_not_on(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = gemini_settings(isolated_env)
    agent_hooks.register("gemini", ["C:\\b\\brain.exe"])  # written off Windows: the POSIX form
    monkeypatch.setattr(agent_hooks, "_windows", lambda: True)
    state = agent_hooks.state("gemini")
    assert (state.pack, state.prime, state.settle) == ("off", "off", "off")
    assert agent_hooks.register("gemini", ["C:\\b\\brain.exe"]).action == "updated"
    assert all(c.startswith("try { & ") for c in gemini_commands(path))
    state = agent_hooks.state("gemini")
    assert (state.pack, state.prime, state.settle) == ("on", "on", "on")


def test_copilot_gets_a_bash_and_a_powershell_command(isolated_env: Path) -> None:
    """Copilot CLI runs `bash` on Unix and `powershell` on Windows (hooks-reference.md, "Command
    hooks"); a file of an older brain, with `bash` only, gets its `powershell` beside it."""
    path = isolated_env / COPILOT
    assert agent_hooks.register("copilot", ["/x/brain"]).action == "added"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["hooks"]["Stop"] == [
        {
            "type": "command",
            "bash": f"/x/brain settle{MARK}",
            "powershell": f"& '/x/brain' settle{MARK}",
            "timeoutSec": 30,
        }
    ]
    for entries in doc["hooks"].values():
        del entries[0]["powershell"]
    entries[0]["bash"] = f"/x/brain settle --vault /v{MARK}"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    assert agent_hooks.register("copilot", ["/x/brain"]).action == "updated"
    stop = json.loads(path.read_text(encoding="utf-8"))["hooks"]["Stop"][0]
    assert stop["powershell"] == f"& '/x/brain' settle --vault '/v'{MARK}"
    assert stop["bash"] == f"/x/brain settle --vault /v{MARK}"
