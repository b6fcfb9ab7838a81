"""`brain install` and `brain uninstall`: the vault, its record, the PATH link, Claude Code.

The git hooks themselves are exercised with real commits in test_hooks.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, Run, brain, git
from test_contract import KEYS, no_none_markers

from brain import agent_hooks, config, shipped, worker_client
from brain.commands import install as installmod

STARTER = ["AI/INBOX.md", "AI/LEARNINGS.md", "AI/MEMORY.md", "AI/TUNINGS.md", "AI/synonyms.tsv"]
INSTALL_KEYS = KEYS["`install`"]
UNINSTALL_KEYS = KEYS["`uninstall`"]


def _path_without_brain() -> str:
    """PATH minus any folder holding a `brain` (an activated venv would make the link moot)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    return os.pathsep.join(d for d in dirs if not (Path(d) / "brain").exists())


@pytest.fixture(autouse=True)
def no_brain_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", _path_without_brain())


def install(*args: str, env: dict[str, str] | None = None) -> Run:
    return brain("install", *args, env=env)


def install_json(*args: str, env: dict[str, str] | None = None) -> Any:
    run = install(*args, "--json", env=env)
    assert run.code == 0, run.err + run.out
    return run.json()


def local_hooks_path(repo: Path) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(repo), "config", "--local", "--get", "core.hooksPath"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


# --- the vault -----------------------------------------------------------------------------------


def test_default_vault_is_created_with_the_starter_and_recorded(isolated_env: Path) -> None:
    doc = install_json()
    vault = isolated_env / "Documents" / "Brain"
    assert list(doc) == INSTALL_KEYS
    assert doc["vault"] == str(vault)
    assert (doc["origin"], doc["created"], doc["git_init"]) == ("default", True, True)
    assert doc["starter"] == [f"AI/{n}" for n in shipped.STARTER_FILES]
    assert sorted(p.relative_to(vault).as_posix() for p in (vault / "AI").iterdir()) == STARTER
    assert (vault / ".git").is_dir()
    assert (vault / "AI" / "synonyms.tsv").read_text(encoding="utf-8") == "term\texpansion\n"
    for name in ("MEMORY.md", "LEARNINGS.md", "TUNINGS.md", "INBOX.md"):
        assert (vault / "AI" / name).read_text(encoding="utf-8").startswith("# ")
    record = isolated_env / ".config" / "brain" / "vault"
    assert doc["recorded"] == str(record)
    assert record.read_text(encoding="utf-8") == f"{vault}\n"
    assert brain("lint", "--vault", str(vault)).code == 0  # the starter is lint-clean


def test_a_new_vault_gets_its_first_commit_and_a_next_step(isolated_env: Path) -> None:
    run = install()
    assert run.code == 0, run
    vault = isolated_env / "Documents" / "Brain"
    head = git(vault, "rev-parse", "--short=12", "HEAD").strip()
    assert git(vault, "log", "--format=%s").splitlines() == ["brain: the starter AI/ files"]
    committed = sorted(git(vault, "ls-files").splitlines())
    assert committed == STARTER
    assert git(vault, "status", "--porcelain") == ""
    assert f"committed as {head}" in run.out
    last = run.out.splitlines()[-1]
    assert last.startswith("Next: write your first fact as a bullet in ")
    assert str(vault / "AI" / "MEMORY.md") in last
    assert install_json()["commit"] is None  # nothing new to commit the second time


def test_init_commits_only_the_starter_files(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "mine.md").write_text("my notes\n", encoding="utf-8")
    doc = install_json(str(plain), "--init")
    assert doc["commit"]
    assert sorted(git(plain, "ls-files").splitlines()) == STARTER
    assert git(plain, "status", "--porcelain", "--untracked-files=all") == "?? mine.md\n"


def test_an_existing_repository_gets_no_commit_but_the_step_to_make_one(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q")
    doc = install_json(str(repo))
    assert doc["commit"] is None
    assert git(repo, "status", "--porcelain") == "?? AI/\n"  # brain commits only where it ran init
    assert doc["next"].startswith("Next: commit the starter files: git -C ")


def test_a_failed_first_commit_is_named_with_the_way_to_make_it(tmp_path: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "", "GIT_COMMITTER_NAME": "", "GIT_AUTHOR_EMAIL": ""}
    env |= {"GIT_COMMITTER_EMAIL": "", "EMAIL": ""}
    doc = install_json(str(tmp_path / "v"), env=env)
    if doc["commit"]:
        pytest.skip("git found an identity on this machine anyway")
    assert doc["next"].startswith("Next: commit the starter files (git said: ")
    assert "&& git -C" in doc["next"]


def test_nested_json_key_orders(tmp_path: Path) -> None:
    doc: dict[str, Any] = install_json(str(tmp_path / "v"))
    assert list(doc["path_link"]) == ["path", "target", "action", "on_path", "message"]
    assert list(doc["git_hooks"]) == [
        "vault",
        "dir",
        "hooks",
        "previous",
        "chains",
        "action",
        "message",
    ]
    assert list(doc["index"]) == ["path", "file_count", "bullet_count", "built_at", "ms"]
    assert list(doc["claude"]) == ["agent", "settings", "action", "hooks", "command", "message"]
    no_none_markers(doc, "install")  # none is null: no "" anywhere
    assert doc["sync"] is None  # no BRAIN_CONNECT
    run = brain("uninstall", "--json")
    assert run.code == 0, run.err
    undo = run.json()
    assert list(undo) == UNINSTALL_KEYS
    no_none_markers(undo, "uninstall")
    assert undo["git_hooks"][0]["chains"] is None


def test_second_install_changes_nothing(tmp_path: Path, isolated_env: Path) -> None:
    vault = tmp_path / "v"
    first = install_json(str(vault))
    settings = isolated_env / ".claude" / "settings.json"
    before = settings.read_bytes()
    folder = Path(first["git_hooks"]["dir"])
    hook_bytes = {p.name: p.read_bytes() for p in folder.iterdir()}
    again = install_json()  # the recorded vault
    assert (again["origin"], again["created"], again["git_init"]) == ("recorded", False, False)
    assert again["starter"] == []
    assert again["moved_from"] is None
    assert again["claude"]["action"] == "present"
    assert again["path_link"]["action"] == "kept"
    assert again["git_hooks"]["action"] == "updated"
    assert settings.read_bytes() == before
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == hook_bytes


def test_install_with_another_path_moves(tmp_path: Path, isolated_env: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    install_json(str(first))
    assert local_hooks_path(first) is not None
    doc = install_json(str(second))
    assert doc["moved_from"] == str(first)
    assert config.recorded_vault_file().read_text(encoding="utf-8") == f"{second}\n"
    assert local_hooks_path(first) is None  # the old vault has its own hooks back
    assert local_hooks_path(second) == doc["git_hooks"]["dir"]
    assert (first / "AI" / "MEMORY.md").is_file()  # and its files stay


def test_brain_vault_is_used(tmp_path: Path) -> None:
    target = tmp_path / "from-env"
    doc = install_json(env={"BRAIN_VAULT": str(target)})
    assert (doc["vault"], doc["origin"]) == (str(target), "BRAIN_VAULT")


def test_existing_repository_with_ai_is_used_as_it_is(git_vault: Path) -> None:
    before = {p: p.read_bytes() for p in (git_vault / "AI").iterdir()}
    doc = install_json(str(git_vault))
    assert (doc["created"], doc["git_init"], doc["starter"]) == (False, False, [])
    assert {p: p.read_bytes() for p in (git_vault / "AI").iterdir()} == before
    assert doc["index"]["bullet_count"] > 100


def test_existing_repository_without_ai_gets_the_starter(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("mine\n", encoding="utf-8")
    doc = install_json(str(repo))
    assert doc["starter"] == [f"AI/{n}" for n in shipped.STARTER_FILES]
    assert (repo / "README.md").read_text(encoding="utf-8") == "mine\n"
    assert doc["git_init"] is False


def test_a_file_is_refused(tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("x", encoding="utf-8")
    run = install(str(afile))
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert "is a file, not a folder" in run.err
    assert "Traceback" not in run.err


@pytest.mark.parametrize("how", ["--vault", "PATH", "BRAIN_VAULT", "new", "--json"])
def test_a_vault_path_that_is_not_utf8_is_refused_before_anything(tmp_path: Path, how: str) -> None:
    """brain writes the vault's path as UTF-8 text (its record, the hooks, git's config): a
    folder whose name is not UTF-8 (the byte 0xff, which Python reads as U+DCFF) is refused in
    one line that names it escaped, before anything is made. It crashed (exit 3) at the record,
    after making the vault and its repository, and once more on the next try."""
    parent = tmp_path / ("new\udcff" if how == "new" else "")
    bad = parent / "bad\udcffvault"
    if how != "new":
        bad.mkdir()  # the name's bytes: the surrogate is written back as 0xff
    args, env = (["--vault", str(bad)], None)
    if how == "PATH":
        args = [str(bad)]
    elif how == "BRAIN_VAULT":
        args, env = [], {"BRAIN_VAULT": str(bad)}
    elif how == "--json":
        args = [*args, "--json"]
    run = install(*args, "--init", env=env)
    assert run.code == 1, run
    assert "internal error" not in run.out + run.err
    said = run.json()["error"] if how == "--json" else run.err
    assert how == "--json" or run.err.count("\n") == 1
    assert f"{tmp_path}/" in said
    assert "bad\\xffvault is not valid UTF-8 (byte 0xff)" in said
    assert "rename" in said
    assert not config.recorded_vault_file().exists()
    if how == "new":
        assert not parent.exists()
    else:
        assert list(bad.iterdir()) == []  # no repository, no starter files


def test_dash_dash_vault_is_path(tmp_path: Path) -> None:
    """`brain install --vault PATH` is `brain install PATH`, as every command takes --vault;
    the two naming different folders is a usage error that installs nothing."""
    plain = tmp_path / "plain"
    plain.mkdir()
    run = install(str(plain), "--vault", str(tmp_path / "other"))
    assert run.code == 2, run
    assert "name two vaults" in run.err
    assert not config.recorded_vault_file().exists()
    doc = install_json("--vault", str(plain), "--init", env={"BRAIN_VAULT": str(tmp_path / "x")})
    assert (doc["created"], doc["git_init"]) == (False, True)
    assert config.recorded_vault() == plain.resolve()


def test_a_plain_folder_needs_init(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "note.md").write_text("hello\n", encoding="utf-8")
    run = install(str(plain))  # not a terminal: no question, a one-line error
    assert run.code == 1
    assert run.err.count("\n") == 1
    assert "not a git repository" in run.err
    assert "--init" in run.err
    assert not (plain / ".git").exists()
    assert not config.recorded_vault_file().exists()
    doc = install_json(str(plain), "--init")
    assert (doc["created"], doc["git_init"]) == (False, True)
    assert (plain / ".git").is_dir()
    assert (plain / "note.md").read_text(encoding="utf-8") == "hello\n"


def test_an_empty_folder_needs_no_init_flag(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    doc = install_json(str(empty))
    assert (doc["created"], doc["git_init"]) == (False, True)


def test_a_folder_inside_another_repository_is_refused(git_vault: Path) -> None:
    run = install(str(git_vault / "notes"))
    assert run.code == 1
    assert f"inside the git repository {git_vault}" in run.err


def test_human_output_names_every_step(tmp_path: Path) -> None:
    run = install(str(tmp_path / "v"))
    assert run.code == 0, run.err
    for word in ("Vault:", "Recorded in", "PATH:", "Git hooks:", "Index:", "Claude Code:"):
        assert word in run.out
    undo = brain("uninstall")
    assert undo.code == 0, undo.err
    assert "untouched" in undo.out


# --- PATH ----------------------------------------------------------------------------------------


def test_path_link_is_made_and_removed(tmp_path: Path, isolated_env: Path) -> None:
    doc = install_json(str(tmp_path / "v"))
    link = isolated_env / ".local" / "bin" / "brain"
    info = doc["path_link"]
    assert info["path"] == str(link)
    assert info["action"] == "created"
    assert link.is_symlink()
    assert Path(os.path.realpath(link)) == Path(info["target"])
    assert info["on_path"] is False
    assert 'export PATH="$HOME/.local/bin:$PATH"' in info["message"]
    out = subprocess.run([str(link), "version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("brain ")
    undo = brain("uninstall", "--json").json()
    assert undo["path_link"]["action"] == "removed"
    assert not link.exists()
    assert not link.is_symlink()


def test_link_dir_on_path_has_no_hint(tmp_path: Path, isolated_env: Path) -> None:
    bindir = isolated_env / ".local" / "bin"
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    doc = install_json(str(tmp_path / "v"), env=env)
    assert doc["path_link"]["on_path"] is True
    assert doc["path_link"]["message"] is None  # nothing to say: null (README: JSON)


def test_brain_already_on_path_needs_no_link(tmp_path: Path, isolated_env: Path) -> None:
    exe = Path(sys.executable).parent / "brain"
    if not exe.exists():
        pytest.skip("no brain console script beside the interpreter")
    env = {"PATH": f"{exe.parent}{os.pathsep}{os.environ['PATH']}"}
    doc = install_json(str(tmp_path / "v"), env=env)
    assert doc["path_link"]["action"] == "on-path"
    assert not (isolated_env / ".local" / "bin" / "brain").exists()


def test_unwritable_bin_dir_is_reported_and_install_continues(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the bin folder should be", encoding="utf-8")
    env = {"BRAIN_BINDIR": str(blocker)}
    run = install(str(tmp_path / "v"), env=env)
    assert run.code == 0, run.err
    assert "cannot write" in run.out
    assert "BRAIN_BINDIR" in run.out
    doc = install_json(env=env)
    assert doc["path_link"]["action"] == "failed"
    assert doc["git_hooks"]["action"] == "updated"
    assert blocker.read_text(encoding="utf-8").startswith("a file")


def test_a_foreign_brain_in_the_bin_dir_is_left_alone(tmp_path: Path, isolated_env: Path) -> None:
    bindir = isolated_env / ".local" / "bin"
    bindir.mkdir(parents=True)
    foreign = bindir / "brain"
    foreign.write_text("#!/bin/sh\necho another brain\n", encoding="utf-8")
    doc = install_json(str(tmp_path / "v"))
    assert doc["path_link"]["action"] == "exists"
    assert "not brain's link" in doc["path_link"]["message"]
    brain("uninstall")
    assert foreign.read_text(encoding="utf-8") == "#!/bin/sh\necho another brain\n"


def test_wrapper_script_where_links_are_not_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_env: Path
) -> None:
    def no_symlinks(self: Path, target: str | Path, target_is_directory: bool = False) -> None:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "symlink_to", no_symlinks)
    exe = Path(sys.executable)
    result = installmod.link_brain(exe)
    link = isolated_env / ".local" / "bin" / "brain"
    assert result.action == "created"
    assert not link.is_symlink()
    assert shipped.is_brain_file(link)
    assert os.access(link, os.X_OK)
    assert installmod.unlink_brain().action == "removed"
    assert not link.exists()


# --- Claude Code settings (the editing itself: test_agent_hooks.py) -----------------------------

OTHER_HOOKS = {
    "model": "opus",
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}
        ],
    },
    "permissions": {"allow": ["Bash(ls:*)"]},
}


def brain_entries(doc: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for group in doc.get("hooks", {}).get("SessionStart", []):
        for entry in group["hooks"]:
            if agent_hooks.brain_args(entry["command"]) == ("pack",):
                counts[group["matcher"]] = counts.get(group["matcher"], 0) + 1
    return counts


def test_settings_keep_other_hooks_and_get_one_entry_per_matcher(
    tmp_path: Path, isolated_env: Path
) -> None:
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(OTHER_HOOKS, indent=4) + "\n"
    settings.write_text(original, encoding="utf-8")
    install_json(str(tmp_path / "v"))
    install_json()
    doc = json.loads(settings.read_text(encoding="utf-8"))
    assert brain_entries(doc) == {"startup": 1, "clear": 1, "compact": 1}
    assert list(doc) == ["model", "hooks", "permissions"]
    assert doc["hooks"]["PreToolUse"] == OTHER_HOOKS["hooks"]["PreToolUse"]
    first = doc["hooks"]["SessionStart"][0]
    assert first == OTHER_HOOKS["hooks"]["SessionStart"][0]
    text = settings.read_text(encoding="utf-8")
    assert text.startswith('{\n    "model"')  # the file's own indent is kept
    assert text.endswith("}\n")
    entry = doc["hooks"]["SessionStart"][1]
    assert entry["hooks"][0]["type"] == "command"
    assert entry["hooks"][0]["command"].endswith(" pack # ID: brain-hook-7d3f09c1b6e2")
    undo = brain("uninstall", "--json").json()
    assert undo["claude"]["action"] == "removed"
    assert settings.read_text(encoding="utf-8") == original  # byte for byte


def test_settings_are_created_when_missing_and_removed_on_uninstall(
    tmp_path: Path, isolated_env: Path
) -> None:
    doc = install_json(str(tmp_path / "v"))
    settings = isolated_env / ".claude" / "settings.json"
    assert doc["claude"]["settings"] == str(settings)
    assert doc["claude"]["hooks"] == [
        "SessionStart:startup",
        "SessionStart:clear",
        "SessionStart:compact",
        "UserPromptSubmit",
        "Stop",
    ]
    assert brain_entries(json.loads(settings.read_text(encoding="utf-8"))) == {
        "startup": 1,
        "clear": 1,
        "compact": 1,
    }
    brain("uninstall")
    assert not settings.exists()  # as before install: no `{}` left behind
    assert not settings.parent.exists()  # brain made ~/.claude too


def test_a_broken_settings_file_is_left_byte_identical(tmp_path: Path, isolated_env: Path) -> None:
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir()
    broken = b'{\n  "hooks": {\n    "SessionStart": [\n  }, oops\n'
    settings.write_bytes(broken)
    run = install(str(tmp_path / "v"))
    assert run.code == 1, run  # the hook is not in place: install says so by its exit code
    assert run.err.count("\n") == 1
    assert f"{settings} is not valid JSON (line 4" in run.err
    assert settings.read_bytes() == broken
    assert install("--json").json()["claude"]["action"] == "unparseable"
    undo = brain("uninstall")
    assert undo.code == 1
    assert str(settings) in undo.err
    assert settings.read_bytes() == broken


def test_claude_config_dir_is_respected(tmp_path: Path, isolated_env: Path) -> None:
    custom = tmp_path / "claude-config"
    env = {"CLAUDE_CONFIG_DIR": str(custom)}
    doc = install_json(str(tmp_path / "v"), env=env)
    assert doc["claude"]["settings"] == str(custom / "settings.json")
    assert (custom / "settings.json").is_file()
    assert not (isolated_env / ".claude" / "settings.json").exists()
    run = brain("uninstall", "--json", env=env)
    assert run.json()["claude"]["action"] == "removed"


# --- uninstall -----------------------------------------------------------------------------------


def test_uninstall_leaves_the_vault_and_its_history(git_vault: Path, isolated_env: Path) -> None:
    install_json(str(git_vault))
    files_before = sorted(
        p.relative_to(git_vault).as_posix() for p in git_vault.rglob("*") if ".git" not in p.parts
    )
    head = git(git_vault, "rev-parse", "HEAD")
    undo = brain("uninstall", "--json").json()
    assert undo["vault"] == str(git_vault)
    assert undo["recorded"] == str(config.recorded_vault_file())
    assert [h["action"] for h in undo["git_hooks"]] == ["removed"]
    assert undo["indexes"] == [str(config.index_path(git_vault))]
    assert not config.recorded_vault_file().exists()
    assert local_hooks_path(git_vault) is None
    assert not (isolated_env / ".config" / "brain" / "hooks").exists() or not any(
        (isolated_env / ".config" / "brain" / "hooks").iterdir()
    )
    assert git(git_vault, "rev-parse", "HEAD") == head
    assert (
        sorted(
            p.relative_to(git_vault).as_posix()
            for p in git_vault.rglob("*")
            if ".git" not in p.parts
        )
        == files_before
    )
    again = brain("uninstall", "--json")
    assert again.code == 0
    assert again.json()["claude"]["action"] == "absent"


@pytest.mark.slow
def test_uninstall_stops_the_worker_and_names_what_it_leaves(
    tmp_path: Path, isolated_env: Path
) -> None:
    vault = tmp_path / "v"
    install_json(str(vault))
    env = {**os.environ, "BRAIN_EMBED": "onnx", "BRAIN_WORKER_IDLE": "120"}
    worker = subprocess.Popen([sys.executable, "-P", "-m", "brain.worker", str(vault)], env=env)
    try:
        # the folder the worker picks: the state dir's run/ only while its socket path fits (a
        # HOME past home999 on an xdist worker is too long, and the worker lives in $TMPDIR)
        run_dir = worker_client.run_dir()
        deadline = time.monotonic() + 90
        while not list(run_dir.glob("worker-*.sock")) and worker.poll() is None:
            assert time.monotonic() < deadline, "the worker never started serving"
            time.sleep(0.1)
        assert worker.poll() is None, "the worker exited at start"
        (config.state_dir() / "transcripts.db").write_bytes(b"")  # recall's, the user's to keep
        run = brain("uninstall", "--json")
        assert run.code == 0, run
        undo = run.json()
        assert undo["workers"] == [worker.pid]
        assert worker.wait(timeout=30) == 0  # asked to stop, it cleaned up and left
        assert not list(run_dir.glob("worker-*.sock"))
        state = str(config.state_dir())
        assert state in undo["left"]
        assert (config.state_dir() / "transcripts.db").exists()
        human = brain("uninstall")
        assert f"Left in place: {state}" in human.out
        assert f"rm -r {state}" in human.out
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def test_uninstall_with_nothing_installed() -> None:
    run = brain("uninstall", "--json")
    assert run.code == 0, run.err
    doc = run.json()
    assert doc["vault"] is None
    assert doc["git_hooks"] == []
    assert doc["path_link"]["action"] == "absent"


# --- packaging -----------------------------------------------------------------------------------


def test_every_package_is_listed_in_pyproject() -> None:
    """pyproject lists packages by hand (for hooks/ and starter/); none may be forgotten."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
            "packages"
        ]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "brain").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found <= listed
    assert {"brain.hooks_data", "brain.starter_data"} <= listed


def test_no_package_is_both_a_dependency_and_an_extra() -> None:
    """A package brain always needs (mcp, for `brain mcp`) is a dependency; an extra holds only
    what some installs go without, so `pip install brain-memory[x]` never names one twice."""
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def name(spec: str) -> str:
        return re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower()

    needed = {name(d) for d in project["dependencies"]}
    assert "mcp" in needed
    for extra, specs in project["optional-dependencies"].items():
        assert extra not in needed, extra
        assert not needed & {name(d) for d in specs}, extra


def test_templates_load_through_importlib_resources() -> None:
    from importlib import resources

    assert resources.files("brain.hooks_data").joinpath("hook-tmpl").read_text(
        encoding="utf-8"
    ) == (ROOT / "hooks" / "hook-tmpl").read_text(encoding="utf-8")
    for name in shipped.STARTER_FILES:
        assert resources.files("brain.starter_data").joinpath(name).is_file()


def test_git_is_required_on_path(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    run = install(str(tmp_path / "v"), env={"PATH": str(tmp_path / "empty-bin")})
    assert run.code == 1
    assert "git is not installed" in run.err


def _install_at_a_terminal(plain: Path, typed: bytes) -> subprocess.CompletedProcess[str]:
    """`brain install PLAIN` (a folder with a note, no git) with a terminal on stdin where the
    person has typed `typed`."""
    pty = pytest.importorskip("pty")
    plain.mkdir()
    (plain / "note.md").write_text("hello\n", encoding="utf-8")
    controller, terminal = pty.openpty()
    try:
        os.write(controller, typed)
        return subprocess.run(
            [sys.executable, "-m", "brain", "install", str(plain)],
            stdin=terminal,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(controller)
        os.close(terminal)


@pytest.mark.parametrize(("answer", "code"), [("y", 0), ("n", 1)])
def test_a_terminal_is_asked_before_git_init(tmp_path: Path, answer: str, code: int) -> None:
    plain = tmp_path / "plain"
    proc = _install_at_a_terminal(plain, f"{answer}\n".encode())
    assert proc.returncode == code, proc.stderr
    assert "is not a git repository. Run `git init` there" in proc.stderr
    assert (plain / ".git").is_dir() is (answer == "y")


def test_end_of_input_at_the_question_is_an_interruption(tmp_path: Path) -> None:
    """Ctrl-D at install's question (asked by its runner, brain.run) stops it as Ctrl-C does:
    exit 130 and one line, nothing installed."""
    plain = tmp_path / "plain"
    proc = _install_at_a_terminal(plain, b"\x04")  # the terminal's end of input
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.endswith("brain: interrupted\n")
    assert not (plain / ".git").exists()
    assert not config.recorded_vault_file().exists()


# --- install --dry-run -------------------------------------------------------------------------


def _tree(*roots: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file and folder under `roots`: its mode, mtime and (for a file) its bytes."""
    seen: dict[str, tuple[int, int, bytes]] = {}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.exists() else []:
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            seen[str(path)] = (st.st_mode, st.st_mtime_ns, data)
    return seen


def test_dry_run_writes_nothing_and_names_every_step(tmp_path: Path, isolated_env: Path) -> None:
    """On a machine brain never touched: the vault folder, git's repository, the starter files,
    their commit, the record, the PATH link, the git hooks, the index, Claude Code's settings,
    the merge driver, each named with its path, and not a file or folder made (not even the
    state dir)."""
    vault = tmp_path / "Brain"
    before = _tree(isolated_env, tmp_path)
    run = install("--dry-run", str(vault))
    assert run.code == 0, run
    assert _tree(isolated_env, tmp_path) == before
    lines = run.out.splitlines()
    assert lines[0] == f"brain install --dry-run wrote nothing. `brain install {vault}` would:"
    home = isolated_env
    for line in (
        f"  create the vault {vault}",
        f"  create the git repository {vault}/.git (git init)",
        f"  create the starter file {vault}/AI/MEMORY.md",
        f"  create the record {home}/.config/brain/vault ({vault})",
        f"  create the agent hooks {home}/.claude/settings.json (Claude Code: pack, prime, settle)",
    ):
        assert line in lines, (line, run.out)
    doc = install("--dry-run", "--json", str(vault)).json()
    assert list(doc) == KEYS["`install --dry-run`"]
    for step in doc["steps"]:
        assert list(step) == KEYS["`install --dry-run` step"]
    no_none_markers(doc)
    whats = [s["what"] for s in doc["steps"]]
    assert whats == [
        "vault",
        "git repository",
        *["starter file"] * 5,
        "first commit",
        "record",
        "PATH link",
        "git hooks",
        "index",
        "agent hooks",
        "merge driver",
    ]
    link = doc["steps"][whats.index("PATH link")]
    assert (link["path"], link["action"]) == (str(home / ".local" / "bin" / "brain"), "create")
    index = doc["steps"][whats.index("index")]
    assert index["path"].startswith(str(home / ".local" / "state" / "brain" / "index"))
    assert _tree(isolated_env, tmp_path) == before


def test_dry_run_after_an_install_finds_everything_in_place(
    tmp_path: Path, isolated_env: Path
) -> None:
    vault = tmp_path / "Brain"
    install_json(str(vault))
    before = _tree(isolated_env, tmp_path)
    doc = install("--dry-run", "--json", str(vault)).json()
    assert _tree(isolated_env, tmp_path) == before
    actions = {s["what"]: s["action"] for s in doc["steps"]}
    assert actions == {
        "vault": "keep",
        "record": "keep",
        "PATH link": "keep",
        "git hooks": "keep",
        "index": "update",  # brought up to date, as every install does
        "agent hooks": "keep",
        "merge driver": "keep",
    }
    other = tmp_path / "Other"
    moved = install("--dry-run", str(other))
    assert f"  remove the git hooks {isolated_env}/.config/brain/hooks/" in moved.out
    assert f"{vault} gets its own hooks back" in moved.out
    assert _tree(isolated_env, tmp_path) == before


def test_dry_run_of_a_plain_folder_says_install_would_ask(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.md").write_text("# todo\n", encoding="utf-8")
    run = install("--dry-run", str(folder))
    assert run.code == 0, run
    assert (
        f"  ask, then create the git repository {folder}/.git (git init; asked first at a "
        "terminal, --init says yes)"
    ) in run.out
    assert f"`brain install --init {folder}` would:" in run.out
    assert sorted(p.name for p in folder.iterdir()) == ["todo.md"]
