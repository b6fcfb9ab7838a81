"""The git hooks `brain install` points a vault at, fired by real `git commit`s.

Credentials are built at run time: no token literal lives in this file.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import brain, git

from brain import __version__, config, githooks, shipped

RNG = random.Random(90_125)  # noqa: S311 -- reproducible fake credentials, not crypto
BULLET = "- **{handle}** — {fact} — test — 2026-01-02\n"


def token() -> str:
    body = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "ghp" + "_" + body


def commit(repo: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A real `git commit`; hooks fire. Output is captured (git sends hook output to stderr)."""
    base = [] if cwd else ["-C", str(repo)]
    return subprocess.run(
        ["git", *base, "commit", "-q", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=120,
    )


def install(repo: Path) -> Any:
    run = brain("install", str(repo), "--json")
    assert run.code == 0, run.err + run.out
    return run.json()


def write_hook(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)
    return path


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


@pytest.fixture
def hooked(git_vault: Path) -> Path:
    """The fixture vault as a git repository with brain installed."""
    install(git_vault)
    return git_vault


# --- the generated files -------------------------------------------------------------------------


def test_generated_hooks_carry_the_id_line_interpreter_and_fallback(hooked: Path) -> None:
    folder = githooks.hooks_dir(hooked)
    assert git(hooked, "config", "--local", "core.hooksPath").strip() == str(folder)
    names = sorted(p.name for p in folder.iterdir() if shipped.is_brain_file(p))
    assert names == ["commit-msg", "post-commit", "pre-commit"]
    for name in names:
        text = (folder / name).read_text(encoding="utf-8")
        lines = text.splitlines()
        assert lines[0] == "#!/bin/sh"
        assert lines[1] == f"# {shipped.HOOK_ID}"
        assert f"brain {__version__}" in lines[2]
        assert "command -v brain" in text
        assert os.access(folder / name, os.X_OK)
        assert "@" + "BRAIN_PY@" not in text
    assert "BRAIN_PY=" + str(Path(sys.executable).absolute()) in (folder / "pre-commit").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize("shell", ["sh", "dash", "bash"])
def test_hook_script_is_valid_posix_sh(hooked: Path, shell: str) -> None:
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"{shell} is not installed")
    for name in githooks.BRAIN_HOOKS:
        args = [exe, "-n"] if shell != "bash" else [exe, "--posix", "-n"]
        subprocess.run([*args, str(githooks.hooks_dir(hooked) / name)], check=True)


# --- pre-commit ----------------------------------------------------------------------------------


def test_a_clean_commit_passes(hooked: Path) -> None:
    append(hooked / "AI" / "MEMORY.md", BULLET.format(handle="teapot", fact="the teapot is red"))
    git(hooked, "add", "-A")
    done = commit(hooked, "-m", "teapot")
    assert done.returncode == 0, done.stderr


def test_a_secret_is_blocked_with_its_path_and_line(hooked: Path) -> None:
    note = hooked / "notes" / "leak.md"
    note.write_text(f"# Leak\n\nsome text\ntoken {token()}\n", encoding="utf-8")
    git(hooked, "add", "notes/leak.md")
    done = commit(hooked, "-m", "leak")
    assert done.returncode != 0
    assert "notes/leak.md:4: github-token" in done.stderr
    assert "commit blocked" in done.stderr
    assert git(hooked, "log", "--oneline").count("\n") == 1


def test_a_secret_in_commit_all_is_blocked(hooked: Path) -> None:
    """`git commit -a` stages into a temporary index (GIT_INDEX_FILE=.git/index.lock)."""
    append(hooked / "notes" / "ideas.md", f"\nkey {token()}\n")
    done = commit(hooked, "-a", "-m", "leak")
    assert done.returncode != 0
    assert "notes/ideas.md:" in done.stderr
    assert git(hooked, "log", "--oneline").count("\n") == 1


def test_a_secret_in_a_partial_commit_is_blocked(hooked: Path) -> None:
    """`git commit PATH` uses a `next-index-<pid>.lock` index that `.git/index` never sees."""
    append(hooked / "notes" / "ideas.md", f"\nkey {token()}\n")
    done = commit(hooked, "-m", "leak", "notes/ideas.md")
    assert done.returncode != 0
    assert "notes/ideas.md:" in done.stderr


def test_a_malformed_bullet_is_blocked(hooked: Path) -> None:
    memory = hooked / "AI" / "MEMORY.md"
    lines_before = memory.read_text(encoding="utf-8").count("\n")
    append(memory, "- **broken bullet — no date and no closing stars\n")
    git(hooked, "add", "-A")
    done = commit(hooked, "-m", "broken")
    assert done.returncode != 0
    assert f"AI/MEMORY.md:{lines_before + 1}:" in done.stderr


def test_hooks_work_with_git_variables_set_from_another_directory(
    hooked: Path, tmp_path: Path
) -> None:
    """`git --git-dir X --work-tree Y commit` exports GIT_DIR and GIT_WORK_TREE to the hooks."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (hooked / "notes" / "leak.md").write_text(token() + "\n", encoding="utf-8")
    git(hooked, "add", "-A")
    done = subprocess.run(
        [
            "git",
            f"--git-dir={hooked / '.git'}",
            f"--work-tree={hooked}",
            "commit",
            "-q",
            "-m",
            "leak",
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        check=False,
    )
    assert done.returncode != 0
    assert "notes/leak.md:1: github-token" in done.stderr


def test_no_verify_skips_the_checks(hooked: Path) -> None:
    (hooked / "notes" / "leak.md").write_text(token() + "\n", encoding="utf-8")
    git(hooked, "add", "-A")
    assert commit(hooked, "--no-verify", "-m", "on purpose").returncode == 0


def test_a_missing_brain_blocks_the_commit_and_says_how_to_skip_or_repair(
    git_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interpreter baked into the hook has gone and no brain is on PATH: the pre-commit check
    cannot run, so the commit (here one carrying a token) does not go through; post-commit still
    never blocks."""
    githooks.install_git_hooks(git_vault, "/nonexistent/python3")
    monkeypatch.setenv(
        "PATH",
        os.pathsep.join(
            d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "brain").exists()
        ),
    )
    head = git(git_vault, "rev-parse", "HEAD")
    (git_vault / "notes" / "leak.md").write_text(token() + "\n", encoding="utf-8")
    git(git_vault, "add", "-A")
    done = commit(git_vault, "-m", "leak")
    assert done.returncode != 0
    assert git(git_vault, "rev-parse", "HEAD") == head
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("brain: commit blocked: brain is not found")
    assert "/nonexistent/python3" in lines[0]
    assert "`git commit --no-verify`" in lines[0]
    assert "`brain install`" in lines[0]
    skipped = commit(git_vault, "--no-verify", "-m", "on purpose")  # post-commit runs, never blocks
    assert skipped.returncode == 0, skipped.stderr
    assert "brain: not found" in skipped.stderr
    assert git(git_vault, "log", "-1", "--format=%s").strip() == "on purpose"


# --- post-commit ---------------------------------------------------------------------------------


def indexed(vault: Path, handle: str) -> tuple[bool, str]:
    conn = sqlite3.connect(config.index_path(vault), timeout=10)
    try:
        found = conn.execute(
            "SELECT count(*) FROM units WHERE kind = 'bullet' AND handle = ?", (handle,)
        ).fetchone()[0]
        built = conn.execute("SELECT value FROM meta WHERE key = 'built'").fetchone()[0]
    finally:
        conn.close()
    return bool(found), str(built)


def test_post_commit_reindexes_in_the_background(hooked: Path) -> None:
    handle = "zebrafish tank"
    present, built_before = indexed(hooked, handle)
    assert not present
    append(
        hooked / "AI" / "MEMORY.md",
        BULLET.format(handle=handle, fact="the zebrafish tank heater is set to 26 degrees"),
    )
    git(hooked, "add", "-A")
    started = time.monotonic()
    done = commit(hooked, "-m", "zebrafish")
    commit_seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    # Nobody runs reindex (and `find` would sync a stale index itself): read the index directly.
    # a background python's start and a reindex: seconds on a loaded 2-core machine, not 10
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        present, built = indexed(hooked, handle)
        if present:
            break
        time.sleep(0.1)
    assert present, "the post-commit hook did not reindex within 60 s"
    assert built != built_before
    # The reindex's output reaches the log when the process flushes it (at its exit), after the
    # index was committed: read too early, it is not there yet.
    log = githooks.post_commit_log(hooked)
    while "Index updated" not in log.read_text(encoding="utf-8") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "Index updated" in log.read_text(encoding="utf-8")
    found = brain("find", "--vault", str(hooked), "--terse", "zebrafish heater")
    assert found.code == 0
    assert "zebrafish tank" in found.out
    assert commit_seconds < 30


def test_post_commit_never_fails_a_commit(hooked: Path) -> None:
    """Even when brain cannot reindex (the vault lost its AI/ folder), the commit stands."""
    git(hooked, "rm", "-q", "-r", "AI")
    done = commit(hooked, "--no-verify", "-m", "no more AI")
    assert done.returncode == 0, done.stderr
    assert "no more AI" in git(hooked, "log", "-1", "--format=%s")


# --- chaining ------------------------------------------------------------------------------------


def test_a_foreign_pre_commit_hook_still_runs_and_can_block(
    git_vault: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "foreign-ran"
    foreign = write_hook(
        git_vault / ".git" / "hooks" / "pre-commit",
        f'echo ran >> "{marker}"\n[ ! -e "{tmp_path / "fail"}" ]\n',
    )
    before = foreign.read_bytes()
    doc = install(git_vault)
    assert doc["git_hooks"]["chains"] == str(git_vault / ".git" / "hooks")
    assert foreign.read_bytes() == before  # never overwritten
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="cup", fact="the cup is green"))
    git(git_vault, "add", "-A")
    assert commit(git_vault, "-m", "cup").returncode == 0
    assert marker.read_text(encoding="utf-8") == "ran\n"
    (tmp_path / "fail").touch()
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="pot", fact="the pot is grey"))
    git(git_vault, "add", "-A")
    done = commit(git_vault, "-m", "pot")
    assert done.returncode != 0
    assert marker.read_text(encoding="utf-8") == "ran\nran\n"
    brain("uninstall")
    assert foreign.read_bytes() == before


def test_other_hooks_of_the_previous_folder_keep_running(git_vault: Path, tmp_path: Path) -> None:
    marker = tmp_path / "checkout-ran"
    write_hook(git_vault / ".git" / "hooks" / "post-checkout", f'echo "$3" >> "{marker}"\n')
    write_hook(git_vault / ".git" / "hooks" / "pre-commit.sample", "exit 1\n")
    doc = install(git_vault)
    assert "post-checkout" in doc["git_hooks"]["hooks"]
    assert "pre-commit.sample" not in doc["git_hooks"]["hooks"]
    git(git_vault, "checkout", "-q", "-b", "side")
    assert marker.read_text(encoding="utf-8") == "1\n"


def test_another_tools_hooks_path_is_chained_and_restored(git_vault: Path, tmp_path: Path) -> None:
    tool = git_vault / ".tool-hooks"
    marker = tmp_path / "tool-ran"
    write_hook(tool / "pre-commit", f'echo pre-commit >> "{marker}"\n')
    write_hook(tool / "commit-msg", f'echo "commit-msg $(head -n 1 "$1")" >> "{marker}"\n')
    git(git_vault, "config", "core.hooksPath", ".tool-hooks")  # relative, as husky sets it
    doc = install(git_vault)
    assert doc["git_hooks"]["previous"] == ".tool-hooks"
    assert git(git_vault, "config", "core.hooksPath").strip() == str(githooks.hooks_dir(git_vault))
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="jar", fact="the jar is empty"))
    git(git_vault, "add", "AI")
    done = commit(git_vault, "-m", "jar message")
    assert done.returncode == 0, done.stderr
    assert marker.read_text(encoding="utf-8") == "pre-commit\ncommit-msg jar message\n"
    install(git_vault)  # a reinstall keeps chaining to the tool, never to brain itself
    assert git(git_vault, "config", "brain.previousHooksPath").strip() == ".tool-hooks"
    undo = brain("uninstall", "--json").json()
    assert undo["git_hooks"][0]["previous"] == ".tool-hooks"
    assert git(git_vault, "config", "core.hooksPath").strip() == ".tool-hooks"
    assert (
        subprocess.run(
            ["git", "-C", str(git_vault), "config", "brain.previousHooksPath"],
            capture_output=True,
            check=False,
        ).returncode
        == 1
    )
    assert (tool / "pre-commit").is_file()


def test_commit_msg_delegates_to_the_global_hook(git_vault: Path, tmp_path: Path) -> None:
    global_dir = tmp_path / "global-hooks"
    marker = tmp_path / "global-ran"
    write_hook(
        global_dir / "commit-msg",
        f'echo "global saw: $(head -n 1 "$1")" >> "{marker}"\n'
        'grep -q "^WIP" "$1" && { echo "no WIP commits" >&2; exit 1; }\nexit 0\n',
    )
    git(git_vault, "config", "--global", "core.hooksPath", str(global_dir))
    install(git_vault)
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="lid", fact="the lid is loose"))
    git(git_vault, "add", "-A")
    done = commit(git_vault, "-m", "lid fixed")
    assert done.returncode == 0, done.stderr
    assert marker.read_text(encoding="utf-8") == "global saw: lid fixed\n"
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="cap", fact="the cap is lost"))
    git(git_vault, "add", "-A")
    rejected = commit(git_vault, "-m", "WIP cap")
    assert rejected.returncode != 0
    assert "no WIP commits" in rejected.stderr


def test_a_global_hook_set_after_install_is_still_run(git_vault: Path, tmp_path: Path) -> None:
    install(git_vault)
    global_dir = tmp_path / "later-hooks"
    marker = tmp_path / "later-ran"
    write_hook(global_dir / "commit-msg", f'echo later >> "{marker}"\n')
    git(git_vault, "config", "--global", "core.hooksPath", str(global_dir))
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="bowl", fact="the bowl is deep"))
    git(git_vault, "add", "-A")
    assert commit(git_vault, "-m", "bowl").returncode == 0
    assert marker.read_text(encoding="utf-8") == "later\n"


def test_brain_never_chains_into_its_own_hooks(git_vault: Path) -> None:
    """A previous folder that holds brain's hooks (a copy, a stale config) is never run."""
    install(git_vault)
    copy = git_vault / ".git" / "brain-copy"
    shutil.copytree(githooks.hooks_dir(git_vault), copy)
    brain("uninstall")
    git(git_vault, "config", "core.hooksPath", str(copy))
    install(git_vault)
    append(git_vault / "AI" / "MEMORY.md", BULLET.format(handle="tray", fact="the tray is full"))
    git(git_vault, "add", "-A")
    done = commit(git_vault, "-m", "tray")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("all good") == 1  # brain's lint ran once, not once per copy


def test_a_hook_reading_stdin_gives_each_chained_hook_a_copy(
    git_vault: Path, tmp_path: Path
) -> None:
    local_marker, global_marker = tmp_path / "local", tmp_path / "global"
    write_hook(git_vault / ".git" / "hooks" / "pre-push", f'cat > "{local_marker}"\n')
    global_dir = tmp_path / "global-hooks"
    write_hook(global_dir / "pre-push", f'cat > "{global_marker}"\nexit 3\n')
    git(git_vault, "config", "--global", "core.hooksPath", str(global_dir))
    doc = install(git_vault)
    assert "pre-push" in doc["git_hooks"]["hooks"]
    refs = "refs/heads/main 1111 refs/heads/main 0000\n"
    done = subprocess.run(
        [str(githooks.hooks_dir(git_vault) / "pre-push"), "origin", "url"],
        input=refs,
        capture_output=True,
        text=True,
        cwd=git_vault,
        check=False,
    )
    assert done.returncode == 3  # the failing hook's status is passed on
    assert local_marker.read_text(encoding="utf-8") == refs
    assert global_marker.read_text(encoding="utf-8") == refs
