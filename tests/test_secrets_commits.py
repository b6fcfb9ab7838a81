"""`brain.secrets.scan_commits`: what a sync pass is about to send is scanned, commit by commit,
on real repositories (#26 item 3). A commit made with `--no-verify` never met the pre-commit hook.

Credentials are built at run time from a seeded RNG: no token literal lives in this file.
"""

from __future__ import annotations

import gzip
import os
import random
import re
import shlex
import string
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from conftest import brain, git

from brain import secrets
from brain.errors import BrainError
from brain.secrets import scan_commits

RNG = random.Random(26_003)  # noqa: S311 - reproducible fake credentials, not crypto


def token() -> str:
    body = "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    return "ghp" + "_" + body


def commit(repo: Path, message: str, *paths: str) -> str:
    """Stage everything (or `paths`) and commit it as a hook-less `--no-verify` commit would."""
    git(repo, "add", "-A", *paths)
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def pushed(tmp_path: Path) -> Path:
    """A vault with one commit already on its remote (origin/main), nothing since."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    repo = tmp_path / "vault"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "AI/MEMORY.md", "# Memory\n")
    commit(repo, "start")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return repo


def test_a_key_added_then_removed_before_sending_is_still_found(pushed: Path) -> None:
    secret = token()
    write(pushed, "notes/deploy.md", f"# Deploy\n\nsteps\nthe bot token is {secret}\n")
    bad = commit(pushed, "deploy notes")
    write(pushed, "notes/deploy.md", "# Deploy\n\nsteps\n")
    commit(pushed, "take the token out")
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert found.commit_count == 2
    assert [(f.commit, f.path, f.line, f.rule, f.masked) for f in found.findings] == [
        (bad, "notes/deploy.md", 4, "github-token", "ghp_…(40)")
    ]
    assert found.first_bad == bad
    assert secret not in repr(found)


def test_what_the_remote_has_is_not_scanned_again(pushed: Path) -> None:
    write(pushed, "notes/old.md", f"token {token()}\n")
    commit(pushed, "an old leak")
    git(pushed, "push", "-q", "origin", "main")
    write(pushed, "notes/new.md", "clean\n")
    commit(pushed, "new")
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert (found.commit_count, found.findings, found.first_bad, found.hint) == (1, (), None, None)
    everything = scan_commits(pushed, "HEAD", [])  # no exclude: the whole history
    assert [f.path for f in everything.findings] == ["notes/old.md"]


def test_an_exclude_that_names_no_commit_hides_nothing(pushed: Path) -> None:
    write(pushed, "a.md", f"token {token()}\n")
    bad = commit(pushed, "leak")
    found = scan_commits(pushed, "HEAD", ["origin/no-such-branch", "0" * 40])
    assert found.first_bad == bad
    assert found.commit_count == 2


def test_a_tip_that_names_no_commit_is_one_line(pushed: Path, tmp_path: Path) -> None:
    with pytest.raises(BrainError, match="nope names no commit in"):
        scan_commits(pushed, "nope", [])
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert scan_commits(empty, "HEAD", []) == secrets.CommitScan(True, 0, 0, (), (), None, None)
    with pytest.raises(BrainError, match="is not a git repository"):
        scan_commits(tmp_path / "plain", "HEAD", [])


def test_odd_names_binary_and_compressed_files_are_read(pushed: Path) -> None:
    in_name, in_binary, in_gzip, in_zip = token(), token(), token(), token()
    with open(os.fsencode(pushed) + b"/caf\xe9.md", "wb") as fh:  # noqa: PTH123 - a bytes name
        fh.write(f"x\nthe token is {in_name}\n".encode())
    (pushed / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0" + in_binary.encode() + b"\0")
    (pushed / "old.md.gz").write_bytes(gzip.compress(f"a\nb\ntoken {in_gzip}\n".encode()))
    with zipfile.ZipFile(pushed / "notes.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("keys.md", f"token {in_zip}\n")
    in_file_name = token()
    (pushed / f"{in_file_name}.md").write_text(f"and a key in it {token()}\n", encoding="utf-8")
    bad = commit(pushed, "odd files")
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert [(f.commit, f.path, f.line, f.inside) for f in found.findings] == [
        (bad, "caf\udce9.md", 2, None),
        (bad, "ghp_…(40).md", None, None),  # the name: masked, no line
        (bad, "ghp_…(40).md", 1, None),  # what it holds, under its masked name
        (bad, "logo.png", 3, None),
        (bad, "notes.zip", 1, "keys.md"),
        (bad, "old.md.gz", 3, "gzip"),
    ]
    shown = repr(found)
    for secret in (in_name, in_binary, in_gzip, in_zip, in_file_name):
        assert secret not in shown


def test_a_merge_is_scanned_for_what_differs_from_every_parent(pushed: Path) -> None:
    """A merge that takes a side's file whole adds nothing of its own; one whose resolution
    writes a key (in neither parent) holds it."""
    git(pushed, "checkout", "-q", "-b", "side")
    write(pushed, "side.md", "from the side\n")
    side = commit(pushed, "side")
    git(pushed, "checkout", "-q", "main")
    write(pushed, "main.md", "from main\n")
    commit(pushed, "main")
    git(pushed, "merge", "-q", "--no-ff", "--no-edit", "side")
    clean = scan_commits(pushed, "HEAD", ["origin/main", side])  # the side is already sent
    assert (clean.commit_count, clean.blob_count, clean.findings) == (2, 1, ())  # main.md only

    git(pushed, "checkout", "-q", "-b", "other", "HEAD~1")
    write(pushed, "shared.md", "ours\n")
    commit(pushed, "other")
    git(pushed, "checkout", "-q", "main")
    write(pushed, "shared.md", "theirs\n")
    commit(pushed, "main again")
    conflict = ["git", "-C", str(pushed), "merge", "-q", "other"]
    assert subprocess.run(conflict, capture_output=True, check=False).returncode != 0
    write(pushed, "shared.md", f"resolved with token {token()}\n")
    merge = commit(pushed, "merge other")
    assert len(git(pushed, "rev-list", "--parents", "-n", "1", "HEAD").split()) == 3
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert [(f.commit, f.path) for f in found.findings] == [(merge, "shared.md")]
    assert found.first_bad == merge


def test_each_blob_is_read_once(pushed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = token()
    write(pushed, "a.md", f"token {secret}\n")
    first = commit(pushed, "one")
    write(pushed, "copy/a.md", f"token {secret}\n")  # the same blob at a second path
    write(pushed, "b.md", "plain\n")
    commit(pushed, "two")
    git(pushed, "rm", "-q", "b.md")
    commit(pushed, "three")
    write(pushed, "b.md", "plain\n")  # the same blob again, restored
    commit(pushed, "four")
    read: list[bytes] = []
    real = secrets.scan_data
    monkeypatch.setattr(
        secrets, "scan_data", lambda data, path: read.append(data) or real(data, path)
    )
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert sorted(read) == sorted({f"token {secret}\n".encode(), b"plain\n"})
    assert found.blob_count == 2
    # a copy is a second place the credential is in, from its own commit
    assert [(f.commit == first, f.path) for f in found.findings] == [
        (True, "a.md"),
        (False, "copy/a.md"),
    ]


def test_a_file_that_cannot_be_read_whole_is_named_with_its_commit(pushed: Path) -> None:
    whole = gzip.compress(bytes(RNG.randrange(256) for _ in range(4000)))
    (pushed / "broken.gz").write_bytes(whole[: len(whole) // 2])
    bad = commit(pushed, "cut gzip")
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert found.unscanned == (
        secrets.CommitUnscanned(bad, "broken.gz", "gzip: cut short; scanned as far as it goes"),
    )
    assert found.first_bad is None


def _follow(hint: str) -> list[str]:
    command = re.search(r"`([^`]+)`", hint)
    assert command is not None, hint
    return shlex.split(command.group(1))


def test_the_hint_takes_the_credential_out_and_keeps_every_change(pushed: Path) -> None:
    """Do what the hint says: nothing of the other changes is lost, and what is left to send
    is clean."""
    secret = token()
    write(pushed, "notes/a.md", "first note\n")
    commit(pushed, "a")
    write(pushed, "notes/deploy.md", f"# Deploy\n\nthe bot token is {secret}\n")
    write(pushed, "notes/b.md", "second note\n")
    bad = commit(pushed, "deploy and b")
    write(pushed, "notes/c.md", "third note\n")
    commit(pushed, "c")
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    assert found.first_bad == bad
    assert f"commit {bad[:12]} put a credential in notes/deploy.md (github-token" in found.hint
    assert "if it is still there, and commit again" in found.hint
    subprocess.run(_follow(found.hint), check=True, capture_output=True)
    write(pushed, "notes/deploy.md", "# Deploy\n\nthe bot token is in the password manager\n")
    commit(pushed, "deploy, b and c without the token")
    after = scan_commits(pushed, "HEAD", ["origin/main"])
    assert (after.findings, after.first_bad) == ((), None)
    tree = git(pushed, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert [p for p in tree if p.startswith("notes/")] == [
        "notes/a.md",
        "notes/b.md",
        "notes/c.md",
        "notes/deploy.md",
    ]
    assert git(pushed, "log", "--format=%s").splitlines()[:2] == [
        "deploy, b and c without the token",
        "a",
    ]


def test_the_hint_for_a_first_commit_starts_the_branch_again(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "AI/MEMORY.md", "# Memory\n")
    write(repo, "key.md", f"token {token()}\n")
    root = commit(repo, "first")
    found = scan_commits(repo, "HEAD", [])
    assert found.first_bad == root
    subprocess.run(_follow(found.hint), check=True, capture_output=True)
    (repo / "key.md").unlink()
    commit(repo, "first, without the key")
    after = scan_commits(repo, "HEAD", [])
    assert (after.commit_count, after.findings) == (1, ())
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").split() == ["AI/MEMORY.md"]


def test_two_hundred_commits_scan_well_under_a_second(pushed: Path) -> None:
    """A sync pass pays for this on every send. Three notes change in each commit (fast-import
    writes them, as a busy day of a vault would); the bound is loose for a loaded machine."""
    subprocess.run(
        ["git", "-C", str(pushed), "fast-import", "--quiet"],
        input=_fast_import(feed_commits=200),
        check=True,
        capture_output=True,
        text=True,
    )
    secrets.scan_text("warm the rules", "x")  # compiled once per process, not per pass
    started = time.perf_counter()
    found = scan_commits(pushed, "HEAD", ["origin/main"])
    took = time.perf_counter() - started
    assert found.commit_count == 200
    assert found.blob_count == 600
    assert took < 3, took


def _fast_import(feed_commits: int) -> str:
    """A `git fast-import` stream: `feed_commits` commits on main, three notes changed in each."""
    out = []
    for n in range(feed_commits):
        out.append("commit refs/heads/main")
        out.append(f"committer t <t@t> {1_700_000_000 + n} +0000")
        out.append(f"data {len(f'c{n}')}\nc{n}")
        if n == 0:
            out.append("from refs/heads/main^0")
        for k in range(3):
            body = f"# Note {k}\n\nrevision {n} of note {k}, with words to read\n" * 20
            out.append(f"M 100644 inline notes/n{(n + k) % 40}.md\ndata {len(body)}\n{body}")
    return "\n".join(out) + "\n"


# --- `brain secrets --outgoing` -------------------------------------------------------------------


def test_outgoing_names_the_commit_and_how_to_take_it_out(pushed: Path) -> None:
    write(pushed, "notes/old.md", f"token {token()}\n")
    commit(pushed, "an old leak, already sent")
    git(pushed, "push", "-q", "origin", "main")
    secret = token()
    write(pushed, "notes/deploy.md", f"# Deploy\n\nthe bot token is {secret}\n")
    bad = commit(pushed, "deploy notes")
    run = brain("secrets", "--outgoing", "--vault", str(pushed))
    assert run.code == 1
    assert run.out == f"{bad[:12]} notes/deploy.md:3: github-token (ghp_…(40))\n"
    lines = run.err.splitlines()
    assert lines[0] == "1 possible secret in 1 commit not sent yet, 1 distinct file version read"
    assert lines[1].startswith(f"commit {bad[:12]} put a credential in notes/deploy.md")
    assert f"reset --soft {bad[:12]}~1" in lines[1]
    doc = brain("secrets", "--outgoing", "--vault", str(pushed), "--json").json()
    assert doc["hint"] == lines[1]  # the keys and their order: tests/test_contract.py
    assert (doc["ok"], doc["first_bad"], doc["findings"][0]["commit"]) == (False, bad, bad)
    assert secret not in run.out + run.err + str(doc)
    git(pushed, "push", "-q", "origin", "main")
    sent = brain("secrets", "--outgoing", "--vault", str(pushed))
    assert (sent.code, sent.out, sent.err) == (
        0,
        "",
        "no secrets in 0 commits not sent yet, 0 distinct file versions read\n",
    )


def test_outgoing_takes_no_paths_nor_another_mode(pushed: Path) -> None:
    for extra in (["notes"], ["--staged"]):
        run = brain("secrets", "--outgoing", *extra, "--vault", str(pushed))
        assert run.code == 2, run
        assert "--outgoing reads commits: it takes no PATHS and no --staged" in run.err
    both = brain("secrets", "--outgoing", "--history", "--vault", str(pushed))
    assert both.code == 2
    assert "--history and --outgoing are two scans: give one" in both.err
