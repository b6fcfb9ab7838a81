"""`brain secrets --history`: a credential committed once and deleted since is still in every
clone; it is found in any commit of any ref, with the commit that brought it in, never printed."""

from __future__ import annotations

import gzip
import random
import string
from pathlib import Path

import pytest
from conftest import brain, git

from brain import secrets
from brain.commands import secrets as secretscmd

RNG = random.Random(17_017)  # noqa: S311 - reproducible fake credentials, not crypto


def token() -> str:
    body = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "ghp" + "_" + body


def commit_all(repo: Path, message: str, date: str) -> str:
    git(repo, "add", "-A")
    env_date = f"{date}T12:00:00+00:00"
    git(repo, "commit", "-q", "-m", message, f"--date={env_date}")
    return git(repo, "rev-parse", "--short=7", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    vault = tmp_path / "history"
    (vault / "AI").mkdir(parents=True)
    (vault / "AI" / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    git(vault, "init", "-q", "-b", "main")
    commit_all(vault, "start", "2026-01-01")
    return vault


def test_a_deleted_secret_is_found_with_the_commit_that_added_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = token()
    note = repo / "notes" / "deploy.md"
    note.parent.mkdir()
    note.write_text(f"# Deploy\n\nthe bot token is {secret}\n", encoding="utf-8")
    added = commit_all(repo, "deploy notes", "2026-02-03")
    note.write_text(f"# Deploy\n\nmore words\nthe bot token is {secret}\n", encoding="utf-8")
    commit_all(repo, "edit", "2026-02-04")  # a new version of the file, the same secret
    note.unlink()
    commit_all(repo, "remove the token", "2026-02-05")

    now = brain("secrets", "--vault", str(repo))
    assert now.code == 0  # the work tree is clean
    run = brain("secrets", "--vault", str(repo), "--history")
    assert run.code == 1
    assert run.out == f"{added} 2026-02-03 notes/deploy.md:3: github-token (ghp_…(40))\n"
    assert secret not in run.out + run.err
    assert "revoke it" in run.err
    doc = brain("secrets", "--vault", str(repo), "--history", "--json").json()
    assert list(doc) == ["ok", "commit_count", "blob_count", "findings", "skipped"]
    assert doc["ok"] is False
    assert doc["commit_count"] == 4
    (finding,) = doc["findings"]
    assert list(finding) == ["commit", "date", "path", "line", "rule", "masked", "inside"]
    assert finding["commit"] == added
    assert secret not in str(doc)


def test_every_ref_is_read_and_each_blob_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret only on a branch that is not checked out, and one in a tag's commit, are found; a
    file copied to another path is one blob, read once."""
    git(repo, "checkout", "-q", "-b", "feature")
    on_branch = token()
    (repo / "branch.md").write_text(f"token {on_branch}\n", encoding="utf-8")
    branch = commit_all(repo, "branch", "2026-03-01")
    git(repo, "checkout", "-q", "main")
    (repo / "a.md").write_text("plain\n", encoding="utf-8")
    (repo / "b.md").write_text("plain\n", encoding="utf-8")
    commit_all(repo, "two copies", "2026-03-02")
    read: list[bytes] = []
    real = secrets.scan_data
    monkeypatch.setattr(
        secrets, "scan_data", lambda data, path: read.append(data) or real(data, path)
    )
    result = secretscmd.history(repo)
    assert [(f.commit, f.path) for f in result.findings] == [(branch, "branch.md")]
    assert read.count(b"plain\n") == 1
    assert result.blob_count == len(read)


def test_a_clean_history_passes(repo: Path) -> None:
    (repo / "image.bin").write_bytes(b"\0\1\2 no key here\n")
    commit_all(repo, "binary", "2026-04-01")
    run = brain("secrets", "--vault", str(repo), "--history")
    assert run.code == 0, run
    assert run.err.startswith("no secrets in the history (2 commits, ")


def test_binary_and_compressed_blobs_are_read_as_the_work_tree_is(repo: Path) -> None:
    in_binary, in_gzip = token(), token()
    (repo / "image.bin").write_bytes(b"\0\1\2" + in_binary.encode())
    (repo / "backup.md.gz").write_bytes(gzip.compress(f"# Old\n\ntoken {in_gzip}\n".encode()))
    added = commit_all(repo, "binary and gzip", "2026-04-01")
    (repo / "image.bin").unlink()
    (repo / "backup.md.gz").unlink()
    commit_all(repo, "removed", "2026-04-02")
    run = brain("secrets", "--vault", str(repo), "--history")
    assert run.code == 1, run
    assert run.out.splitlines() == [
        f"{added} 2026-04-01 backup.md.gz[gzip]:3: github-token (ghp_…(40))",
        f"{added} 2026-04-01 image.bin:1: github-token (ghp_…(40))",
    ]
    assert in_binary not in run.out + run.err
    assert in_gzip not in run.out + run.err


def test_history_needs_a_repository_and_takes_no_paths(vault: Path, repo: Path) -> None:
    run = brain("secrets", "--vault", str(vault), "--history")
    assert run.code == 1
    assert "is not a git repository, so it has no history" in run.err
    assert "Traceback" not in run.err
    run = brain("secrets", "--vault", str(repo), "--history", "--staged")
    assert run.code == 2
    assert "takes no PATHS and no --staged" in run.err
