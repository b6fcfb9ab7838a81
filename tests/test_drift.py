"""Facts that know when their code moved (brain/drift.py): real repositories whose files change
after a bullet's date (commit dates set with GIT_AUTHOR_DATE / GIT_COMMITTER_DATE), read with
pygit2 by `brain reindex` and served from the index by find, pack and prime."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import brain

from brain import drift, gitutil, index
from brain.config import index_path


def sh(repo: Path, *args: str, day: str = "") -> str:
    env = {**os.environ}
    if day:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{day}T12:00:00+00:00"
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    )
    return proc.stdout


def commit(repo: Path, day: str, files: dict[str, str | None], message: str = "change") -> str:
    """A commit dated `day` that writes (or, for None, deletes) `files`."""
    for rel, body in files.items():
        target = repo / rel
        if body is None:
            sh(repo, "rm", "-q", rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        sh(repo, "add", rel)
    sh(repo, "commit", "-q", "-m", message, day=day)
    return sh(repo, "rev-parse", "HEAD").strip()


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    sh(path, "init", "-q", "-b", "main")
    return path


MEMORY_HEAD = "# Memory\n\n"


def make_vault(root: Path, bullets: list[str], notes: dict[str, str] | None = None) -> Path:
    vault = new_repo(root / "vault")
    (vault / "AI").mkdir()
    (vault / "AI" / "MEMORY.md").write_text(MEMORY_HEAD + "\n".join(bullets) + "\n", "utf-8")
    for rel, text in (notes or {}).items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    sh(vault, "add", "-A")
    sh(vault, "commit", "-q", "-m", "vault", day="2026-01-01")
    return vault


def reindex(vault: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`brain reindex` as run in `cwd` (the repository brain runs in)."""
    monkeypatch.chdir(cwd)
    index.sync(vault, history=True)


def drifts(vault: Path) -> dict[str, drift.Drift]:
    """Each bullet's drift by handle, as the index serves it."""
    conn = index.connect(vault)
    try:
        rows = conn.execute(
            "SELECT path, section, handle, text, date FROM units WHERE kind = 'bullet'"
        ).fetchall()
        found = drift.lookup(conn, [drift.key(*r) for r in rows])
        return {r[2]: found[drift.key(*r)] for r in rows if drift.key(*r) in found}
    finally:
        conn.close()


@pytest.fixture
def payments(tmp_path: Path) -> Path:
    repo = new_repo(tmp_path / "payments")
    commit(repo, "2026-03-01", {"src/retry.py": "tries = 3\n", "src/pool.py": "size = 10\n"})
    commit(repo, "2026-04-01", {"README.md": "payments\n"})
    return repo


RETRY = "- **paynova retries** — payments retries 3 times in `src/retry.py` — review — 2026-05-01"


def test_commits_after_the_bullets_date_are_counted(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-04-20", {"src/retry.py": "tries = 4\n"})  # before the bullet
    commit(payments, "2026-05-01", {"src/retry.py": "tries = 5\n"})  # its own day: not after
    commit(payments, "2026-06-02", {"src/retry.py": "tries = 6\n"})
    commit(payments, "2026-07-03", {"src/pool.py": "size = 20\n"})  # another file
    commit(payments, "2026-11-02", {"src/retry.py": "tries = 7\n", "README.md": "x\n"})
    vault = make_vault(tmp_path, [RETRY, "- **other** — nothing in code — me — 2026-05-01"])
    reindex(vault, payments, monkeypatch)
    found = drifts(vault)
    assert found == {"paynova retries": drift.Drift(2, "2026-11-02", at_least=False)}
    assert found["paynova retries"].line() == "code changed since: 2 commits, last 2026-11-02"
