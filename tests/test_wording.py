"""What brain says to a new user: install's and uninstall's lines, doctor's hook check, the help
texts and the hints that name other commands. Each says what is so now (three hooks per agent, the
subcommand spellings, the profile line the installer added) and counts with the right noun."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import brain

from brain import agent_hooks, config
from brain.commands import install as installmod
from brain.commands.install import PathLink, UninstallResult
from brain.present import setup


@pytest.fixture(autouse=True)
def no_brain_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH without brain's own folder (an activated venv would make the link moot)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in dirs if not (Path(d) / "brain").exists()))


def _installer_line(home: Path) -> Path:
    """The two lines install.sh appends to ~/.bashrc (install.sh, "PATH and the vault")."""
    bashrc = home / ".bashrc"
    bashrc.write_text(
        "alias ll='ls -l'\n\n# added by brain's installer (BRAIN_NO_MODIFY_PATH=1 skips this)\n"
        f'export PATH="{home}/.local/bin:$PATH"\n',
        encoding="utf-8",
    )
    return bashrc


# --- help texts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["uninstall", "doctor"])
def test_help_speaks_of_the_three_hooks_not_one_session_start_hook(command: str) -> None:
    text = " ".join(brain(command, "--help").out.split())
    assert "SessionStart" not in text
    assert "pack, prime and settle" in text


# --- doctor --------------------------------------------------------------------------------------


def _check(vault: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    doc = brain("doctor", "--vault", str(vault), "--json", env=env).json()
    (check,) = [c for c in doc["checks"] if c["name"] == "agent-hooks"]
    return check  # type: ignore[no-any-return]


def test_doctor_checks_every_hook_install_adds_in_every_agent(
    git_vault: Path, isolated_env: Path
) -> None:
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".gemini").mkdir()
    assert brain("install", str(git_vault), "--json").code == 0
    check = _check(git_vault)
    assert check["status"] == "ok", check
    assert check["detail"] == (
        "Claude Code: pack, prime and settle; Gemini CLI: pack, prime and settle"
    )
    # Claude's prompt hook gone (SessionStart untouched): the old check said all was well
    settings = isolated_env / ".claude" / "settings.json"
    doc = json.loads(settings.read_text(encoding="utf-8"))
    del doc["hooks"]["UserPromptSubmit"]
    settings.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    check = _check(git_vault)
    assert check["status"] == "fail"
    assert f"Claude Code: prime not registered in {settings}" in check["detail"]
    assert check["fix"] == "brain hooks on --harness claude"
    # another agent's hooks turned off: a warning, doctor still exits 0 for it
    assert brain("hooks", "on", "--harness", "claude").code == 0
    assert brain("hooks", "off", "--harness", "gemini").code == 0
    check = _check(git_vault)
    assert check["status"] == "warn", check
    assert "Gemini CLI: pack, prime and settle not registered" in check["detail"]
    assert brain("doctor", "--vault", str(git_vault)).code == 0


def test_doctor_fails_when_a_hook_starts_a_program_that_is_gone(
    git_vault: Path, isolated_env: Path, tmp_path: Path
) -> None:
    (isolated_env / ".codex").mkdir()
    gone = tmp_path / "old-venv" / "bin" / "brain"
    agent_hooks.register("codex", [str(gone)])
    check = _check(git_vault)
    assert check["status"] == "fail"
    assert f"Codex CLI's hooks run {gone}, which no longer exists" in check["detail"]
    assert check["fix"] == "brain hooks on"


# --- install and uninstall -----------------------------------------------------------------------


def test_install_says_open_a_new_shell_when_the_installer_put_the_folder_in_a_profile(
    tmp_path: Path, isolated_env: Path
) -> None:
    bin_dir = isolated_env / ".local" / "bin"
    bare = brain("install", str(tmp_path / "a"))
    assert f"{bin_dir} is not on PATH; add it in your shell profile" in bare.out
    assert brain("uninstall").code == 0
    bashrc = _installer_line(isolated_env)
    run = brain("install", str(tmp_path / "v"))
    assert run.code == 0, run.err
    assert f"{bin_dir} is not on this shell's PATH yet; {bashrc} adds it: open a new shell" in (
        run.out
    )
    assert "add it in your shell profile" not in run.out


def test_uninstall_names_the_profile_line_the_installer_added(
    tmp_path: Path, isolated_env: Path
) -> None:
    bashrc = _installer_line(isolated_env)
    before = bashrc.read_text(encoding="utf-8")
    assert brain("install", str(tmp_path / "v")).code == 0
    run = brain("uninstall")
    assert run.code == 0, run.err
    assert f"PATH: removed {isolated_env}/.local/bin/brain" in run.out
    assert (
        f"  note: the installer's line that puts {isolated_env}/.local/bin on PATH is still in "
        f"{bashrc}:3-4 (under its comment); delete it unless other programs you use live there"
    ) in run.out
    assert bashrc.read_text(encoding="utf-8") == before  # named, never edited


def test_a_line_of_the_persons_own_is_not_taken_for_the_installers(isolated_env: Path) -> None:
    (isolated_env / ".zshrc").write_text(
        f'export PATH="{isolated_env}/.local/bin:$PATH"\n', encoding="utf-8"
    )
    folder = isolated_env / ".local" / "bin"
    assert installmod.profile_lines(folder) == [(isolated_env / ".zshrc", 1)]
    assert installmod.profile_lines(folder, installer=True) == []
    (isolated_env / ".profile").write_text('# export PATH="$HOME/.local/bin:$PATH"\n')
    assert len(installmod.profile_lines(folder)) == 1  # a comment puts nothing on PATH


def test_uninstall_deletes_every_index_not_only_the_hooked_vaults(
    git_vault: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "AI").mkdir()
    (other / "AI" / "MEMORY.md").write_text("- **x** — y — z — 2026-01-01\n", encoding="utf-8")
    assert brain("install", str(git_vault), "--json").code == 0
    assert brain("reindex", "--vault", str(other)).code == 0
    assert config.index_path(other).exists()
    run = brain("uninstall", "--json")
    assert run.code == 0, run.err
    assert sorted(run.json()["indexes"]) == sorted(
        [str(config.index_path(git_vault)), str(config.index_path(other))]
    )
    assert not list(config.index_dir().glob("*.sqlite*"))


def _uninstalled(**changes: object) -> UninstallResult:
    none = agent_hooks.AgentHooks("claude", "/h/.claude/settings.json", "absent", (), None)
    base: dict[str, object] = {
        "vault": "/v",
        "recorded": None,
        "path_link": PathLink("/h/.local/bin/brain", None, "absent", False),
        "git_hooks": (),
        "indexes": ("/s/index/v-1.sqlite",),
        "claude": none,
        "agents": (),
        "workers": (4242,),
        "left": (),
    }
    return UninstallResult(**{**base, **changes})  # type: ignore[arg-type]


def test_uninstall_counts_workers_and_indexes_with_their_nouns() -> None:
    one = setup.uninstall_lines(_uninstalled())
    assert "Stopped 1 background worker (pid 4242)" in one
    assert (
        "Deleted every index (1 index file) and the cached packs (`brain reindex` rebuilds it)"
    ) in one
    two = setup.uninstall_lines(_uninstalled(workers=(7, 8), indexes=("/a", "/b")))
    assert "Stopped 2 background workers (pids 7, 8)" in two
    assert any("(2 index files)" in line and "rebuilds them" in line for line in two)
    assert not any(re.search(r"the background \d", line) for line in one + two)


# --- recall's and howto's hints -----------------------------------------------------------------

_OLD = re.compile(r"recall --(?:full|sync|sources|enable|disable)\b")


@pytest.mark.parametrize("args", [("recall", "deploy"), ("howto", "deploy"), ("day",)])
def test_hints_name_recalls_subcommands_as_they_are_spelt_now(args: tuple[str, ...]) -> None:
    run = brain(*args)
    assert run.code == 1
    assert "`brain recall enable claude`; `brain recall sources` lists the agents" in run.err
    assert not _OLD.search(run.err), run.err


def test_an_agent_not_enabled_is_named_with_the_command_that_enables_it(
    isolated_env: Path,
) -> None:
    (isolated_env / ".claude" / "projects").mkdir(parents=True)
    assert brain("recall", "enable", "claude").code == 0
    for args in (("recall", "deploy", "--agent", "codex"), ("howto", "x", "--agent", "codex")):
        run = brain(*args)
        assert "run `brain recall enable codex`" in run.err, run.err
    none = brain("recall", "disable", "claude")
    assert none.code == 0
    sources = brain("recall", "sources")
    assert "none enabled; opt in with `brain recall enable NAME`" in sources.err
    assert brain("recall", "full", " ").err.startswith("brain: `brain recall full` needs a turn id")


def test_no_string_brain_prints_spells_a_recall_mode_the_old_way() -> None:
    """The hints a person or an agent follows (`--full ID` still works: brain.app rewrites it)."""
    import ast

    root = Path(__file__).resolve().parents[1] / "brain"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and _OLD.search(text):
                found.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}")
    assert not found, found


# --- the starter inbox ---------------------------------------------------------------------------


def test_the_starter_inbox_says_how_to_approve_not_to_move_bullets_by_hand(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "v"
    assert brain("install", str(vault)).code == 0
    text = " ".join((vault / "AI" / "INBOX.md").read_text(encoding="utf-8").split())
    for said in ("`brain inbox approve 3`", "`brain inbox drop 3`", "`brain desk`", "brain tend"):
        assert said in text
    assert "move each good one" not in text
    listing = brain("inbox", "--vault", str(vault))
    assert (listing.code, listing.out.strip()) == (0, "The inbox is empty.")
    assert brain("propose", "kiwi — a fruit", "--vault", str(vault)).code == 0
    assert brain("inbox", "approve", "1", "--vault", str(vault)).code == 0
    assert brain("lint", "--vault", str(vault)).code == 0


def test_uninstall_says_what_each_folder_it_leaves_holds(
    git_vault: Path, isolated_env: Path
) -> None:
    """The data dir holds the model's cache and install.sh's environment of brain, not settings
    or lookups: a person deciding whether to `rm -r` it is told which is which."""
    assert brain("install", str(git_vault)).code == 0
    assert brain("find", "libgit2 hooks").code == 0  # a lookup logged in the state dir
    (config.data_dir() / "models").mkdir(parents=True)
    (config.data_dir() / "models" / "model.onnx").write_bytes(b"onnx")
    (config.config_dir() / "brain.yaml").write_text("budget: 1200\n", encoding="utf-8")
    run = brain("uninstall")
    assert run.code == 0, run.err
    left = next(line for line in run.out.splitlines() if line.startswith("Left in place: "))
    state, conf, data = config.state_dir(), config.config_dir(), config.data_dir()
    assert f"{state} (your lookup log and recall's transcripts.db)" in left
    assert f"{conf} (brain.yaml and recall's opt-ins)" in left
    assert (
        f"{data} (the embedding model's cache and the environment install.sh installs brain into)"
    ) in left
    assert left.endswith(f"; to remove them too: rm -r {state} {conf} {data}")


def test_one_folder_for_state_config_and_data_is_named_once(
    git_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on macOS, where platformdirs gives all three as Application Support/brain: uninstall
    names that folder once, with everything it holds, and `rm -r` it once."""
    one = tmp_path / "support"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(one))
    monkeypatch.setenv("XDG_DATA_HOME", str(one))
    monkeypatch.setenv("BRAIN_STATE", str(one / "brain"))
    assert brain("install", str(git_vault)).code == 0
    assert brain("find", "libgit2 hooks").code == 0
    run = brain("uninstall")
    assert run.code == 0, run.err
    assert (
        f"Left in place: {one / 'brain'} (your lookup log and recall's transcripts.db; brain.yaml "
        "and recall's opt-ins; the embedding model's cache and the environment install.sh "
        f"installs brain into); to remove them too: rm -r {one / 'brain'}"
    ) in run.out.splitlines()


def test_install_and_hooks_on_say_to_restart_the_agent_whose_hooks_they_added(
    git_vault: Path, isolated_env: Path
) -> None:
    """README: restart the agent so it reads its hooks again; install and `hooks on` say so under
    the agents they changed, and not when the hooks were already in place."""
    (isolated_env / ".codex").mkdir()  # Codex CLI is on this machine
    first = brain("install", str(git_vault))
    assert first.code == 0, first.err
    restart = "  restart Claude Code and Codex CLI if they are running: each reads its hooks when"
    assert f"{restart} it starts" in first.out.splitlines()
    again = brain("install", str(git_vault))
    assert "restart" not in again.out
    assert brain("hooks", "off", "--harness", "codex").code == 0
    on = brain("hooks", "on", "--harness", "codex")
    assert on.code == 0, on.err
    assert "  restart Codex CLI if it is running: it reads its hooks when it starts" in on.out


def test_log_counts_finds_where_nothing_stood_out_not_finds_that_returned_nothing(
    vault: Path,
) -> None:
    """A weak answer prints lines and is still a miss (brain.commands.log): the count says what
    it counts, so a person who saw lines come back is not told the find returned nothing."""
    v, keywords = ("--vault", str(vault)), {"BRAIN_EMBED": "none"}
    weak = brain("find", *v, "--json", "why is the build slow on monday", env=keywords)
    assert (weak.json()["evidence"], bool(weak.json()["hits"])) == ("weak", True)
    assert brain("find", *v, "libgit2 hooks", env=keywords).code == 0
    run = brain("log", *v, env=keywords)
    assert run.code == 0, run.err
    assert run.out.startswith("Nothing stood out in 1 of 2 finds (1 distinct query)"), run.out
    assert "returned nothing" not in run.out
