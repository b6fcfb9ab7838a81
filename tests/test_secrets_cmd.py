"""`brain secrets`: the vault's files, named paths, or what is staged; gitleaks merged when present.

Credentials are built at run time from a seeded RNG: no token literal lives in this file.
"""

from __future__ import annotations

import os
import random
import string
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import brain, git

from brain.errors import BrainError
from brain.secrets_scan import scan

RNG = random.Random(7_340_113)  # noqa: S311 -- reproducible fake credentials, not crypto


def token() -> str:
    body = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "ghp" + "_" + body


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "AI").mkdir(parents=True)
    (root / "AI" / "MEMORY.md").write_text("# Memory\n\nNothing secret here.\n", encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "clean.md").write_text("# Clean\n\nJust words.\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def test_whole_vault_finds_the_token_with_its_line(repo: Path) -> None:
    secret = token()
    (repo / "notes" / "leak.md").write_text(f"# Leak\n\nline\nthe key is {secret}\n", "utf-8")
    result = scan(repo.resolve())
    assert not result.ok
    assert [(f.path, f.line, f.rule) for f in result.findings] == [
        ("notes/leak.md", 4, "github-token")
    ]
    assert secret not in result.findings[0].masked
    assert "notes/clean.md" in result.files
    assert result.gitleaks is False


def test_the_git_folder_is_skipped_and_a_binary_file_read_by_its_bytes(repo: Path) -> None:
    secret = token()
    (repo / ".git" / "leak.md").write_text(secret, encoding="utf-8")
    (repo / "image.png").write_bytes(b"\x89PNG\0\0\1\2\nIHDR " + secret.encode() + b"\0\xff")
    result = scan(repo.resolve())
    assert not any(p.startswith(".git/") for p in result.files)
    assert "image.png" in result.files
    assert [(f.path, f.line, f.rule, f.inside) for f in result.findings] == [
        ("image.png", 2, "github-token", None)  # the line `grep -an` gives
    ]


def test_named_paths_limit_the_scan(repo: Path) -> None:
    (repo / "notes" / "leak.md").write_text(token() + "\n", encoding="utf-8")
    only_clean = scan(repo.resolve(), [str(repo / "notes" / "clean.md")])
    assert only_clean.ok
    assert only_clean.files == ("notes/clean.md",)
    folder = scan(repo.resolve(), ["notes"])  # relative to the vault when not to cwd
    assert folder.files == ("notes/clean.md", "notes/leak.md")
    assert not folder.ok


def test_a_path_outside_the_vault_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("x", encoding="utf-8")
    with pytest.raises(BrainError, match="not inside the vault"):
        scan(repo.resolve(), [str(outside)])


def test_staged_reads_the_index_not_the_work_tree(repo: Path) -> None:
    secret = token()
    leak = repo / "notes" / "leak.md"
    leak.write_text(f"key {secret}\n", encoding="utf-8")
    assert scan(repo.resolve(), staged=True).ok  # not staged yet
    git(repo, "add", "notes/leak.md")
    leak.write_text("cleaned in the work tree only\n", encoding="utf-8")
    staged = scan(repo.resolve(), staged=True)
    assert staged.files == ("notes/leak.md",)
    assert [(f.path, f.line) for f in staged.findings] == [("notes/leak.md", 1)]


def test_staged_inside_a_hook_reads_the_index_git_handed_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git commit -a` stages into a temporary index that only GIT_INDEX_FILE names."""
    (repo / "notes" / "clean.md").write_text(f"now {token()}\n", encoding="utf-8")
    temp_index = repo / ".git" / "index.brain-test.lock"
    env = {**os.environ, "GIT_INDEX_FILE": str(temp_index)}
    subprocess.run(["git", "-C", str(repo), "read-tree", "HEAD"], env=env, check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-u"], env=env, check=True)
    assert scan(repo.resolve(), staged=True).ok  # the real index has nothing staged
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/index.brain-test.lock")  # relative, as git sets it
    found = scan(repo.resolve(), staged=True)
    assert [f.path for f in found.findings] == ["notes/clean.md"]


def test_an_index_of_another_repository_is_ignored(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "x.md").write_text(token(), encoding="utf-8")
    git(other, "add", "x.md")
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert scan(repo.resolve(), staged=True).ok


def test_staged_needs_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(BrainError, match="not a git repository"):
        scan(plain, staged=True)


def test_cli_lines_exit_code_and_summary(repo: Path) -> None:
    (repo / "notes" / "leak.md").write_text(f"\n{token()}\n", encoding="utf-8")
    run = brain("secrets", "--vault", str(repo))
    assert run.code == 1
    assert run.out.splitlines() == ["notes/leak.md:2: github-token (ghp_…(40))"]
    assert run.err.splitlines()[-1].startswith("1 possible secret in 1 file")
    (repo / "notes" / "leak.md").unlink()
    clean = brain("secrets", "--vault", str(repo))
    assert (clean.code, clean.out) == (0, "")
    assert clean.err.startswith("no secrets in ")


def test_cli_json_contract(repo: Path) -> None:
    (repo / "notes" / "leak.md").write_text(token(), encoding="utf-8")
    run = brain("secrets", "--vault", str(repo), "--json")
    assert run.code == 1
    doc = run.json()
    assert list(doc) == ["ok", "files", "findings", "gitleaks", "skipped", "not_scanned"]
    assert list(doc["findings"][0]) == ["path", "line", "rule", "masked", "inside"]
    assert doc["ok"] is False
    assert doc["findings"][0]["path"] == "notes/leak.md"
    assert doc["gitleaks"] is False


def test_cli_staged(repo: Path) -> None:
    (repo / "notes" / "leak.md").write_text(token(), encoding="utf-8")
    assert brain("secrets", "--staged", "--vault", str(repo)).code == 0
    git(repo, "add", "-A")
    run = brain("secrets", "--staged", "--vault", str(repo))
    assert run.code == 1
    assert run.out.startswith("notes/leak.md:1: github-token")


FAKE_GITLEAKS = """\
    cmd=$1; shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --source) src=$2; shift ;;
        --report-path) rep=$2; shift ;;
        --report-format|--exit-code|--config) shift ;;
        --*) ;;
        *) src=$1 ;;
      esac
      shift
    done
    out='['; sep=''
    for f in $(grep -rl FAKELEAK "$src"); do
      n=$(grep -n FAKELEAK "$f" | head -n 1 | cut -d: -f1)
      out="$out$sep{\\"File\\": \\"$f\\", \\"StartLine\\": $n, \\"RuleID\\": \\"fake-rule\\"}"
      sep=','
    done
    printf '%s]' "$out" > "$rep"
"""


@pytest.fixture
def with_gitleaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    script = bindir / "gitleaks"
    script.write_text("#!/bin/sh\n" + textwrap.dedent(FAKE_GITLEAKS), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.usefixtures("with_gitleaks")
def test_gitleaks_findings_are_merged_one_per_line(repo: Path) -> None:
    (repo / "notes" / "leak.md").write_text(f"FAKELEAK {token()}\n", encoding="utf-8")
    (repo / "notes" / "only-gitleaks.md").write_text("x\nFAKELEAK here\n", encoding="utf-8")
    result = scan(repo.resolve())
    assert result.gitleaks is True
    assert [(f.path, f.line, f.rule) for f in result.findings] == [
        ("notes/leak.md", 1, "github-token"),  # brain's finding wins the shared line
        ("notes/only-gitleaks.md", 2, "fake-rule"),
    ]


@pytest.mark.usefixtures("with_gitleaks")
def test_gitleaks_sees_the_staged_content(repo: Path) -> None:
    note = repo / "notes" / "staged.md"
    note.write_text("a\nb\nFAKELEAK\n", encoding="utf-8")
    git(repo, "add", "notes/staged.md")
    note.write_text("clean now\n", encoding="utf-8")
    result = scan(repo.resolve(), staged=True)
    assert result.gitleaks is True
    assert [(f.path, f.line, f.rule) for f in result.findings] == [
        ("notes/staged.md", 3, "fake-rule")
    ]
    run = brain("secrets", "--staged", "--vault", str(repo), "--json")
    assert run.json()["gitleaks"] is True
    assert "(and gitleaks)" in brain("secrets", "--staged", "--vault", str(repo)).err


def test_a_name_holding_a_credential_is_printed_masked_with_what_the_file_holds(repo: Path) -> None:
    """The finding in the file's text named the file by its real name, credential and all."""
    in_name = token()
    (repo / "notes" / f"key-{in_name}.md").write_text(f"x\ntoken {token()}\n", "utf-8")
    run = brain("secrets", "--vault", str(repo))
    assert run.out.splitlines() == [
        "notes/key-ghp_…(40).md: github-token (ghp_…(40))",
        "notes/key-ghp_…(40).md:2: github-token (ghp_…(40))",
    ]
    doc = brain("secrets", "--vault", str(repo), "--json").json()
    assert in_name not in run.out + run.err + str(doc)
    # in-process the path stays the file's, so sync can leave it uncommitted
    assert f"notes/key-{in_name}.md" in [f.path for f in scan(repo.resolve()).findings]
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "named after a key")
    history = brain("secrets", "--history", "--vault", str(repo))
    assert history.code == 1
    assert in_name not in history.out + history.err
