"""Facts that know when their code moved (brain/drift.py): real repositories whose files change
after a bullet's date (commit dates set with GIT_AUTHOR_DATE / GIT_COMMITTER_DATE), read with
pygit2 by `brain reindex` and served from the index by find, pack and prime."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ROOT, brain, brain_process, today

from brain import claims, drift, gitutil, index
from brain.commands import inbox as inboxmod
from brain.commands import reindex as reindexmod
from brain.commands import tend as tendmod

HOOK = ROOT / "testdata" / "hooks" / "claude-user-prompt-submit.json"


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
    reindexmod.reindex(vault)


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


def git_count(repo: Path, after: str, *paths: str) -> int:
    """What git itself counts: commits, no merges, dated after `after`'s day, touching `paths`."""
    out = sh(repo, "log", "--no-merges", "--format=%cs", "HEAD", "--", *paths)
    return sum(day > after for day in out.split())


def test_the_count_is_gits_own_across_a_merged_branch(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sh(payments, "checkout", "-q", "-b", "topic")
    commit(payments, "2026-06-01", {"src/retry.py": "a\n"})
    commit(payments, "2026-06-02", {"src/retry.py": "b\n"})
    sh(payments, "checkout", "-q", "main")
    commit(payments, "2026-06-03", {"src/pool.py": "c\n"})
    sh(payments, "merge", "-q", "--no-ff", "-m", "merge topic", "topic", day="2026-06-04")
    commit(payments, "2026-06-05", {"src/retry.py": "d\n"})
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    got = drifts(vault)["paynova retries"]
    assert got.commit_count == git_count(payments, "2026-05-01", "src/retry.py") == 3
    assert got.last_date == "2026-06-05"


def test_a_renamed_file_is_followed_to_its_new_name(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "".join(f"line {n}\n" for n in range(40))
    commit(payments, "2026-04-02", {"src/retry.py": body})
    sh(payments, "mv", "src/retry.py", "src/net_retry.py")
    commit(payments, "2026-06-01", {}, "move")
    commit(payments, "2026-07-01", {"src/net_retry.py": body + "more\n"})
    commit(payments, "2026-08-01", {"src/net_retry.py": body + "and more\n"})
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    # the rename, then two changes under the new name
    assert drifts(vault)["paynova retries"] == drift.Drift(3, "2026-08-01", at_least=False)


def test_a_deleted_file_counts_its_deletion(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": None}, "retries are the client's now")
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    assert drifts(vault)["paynova retries"] == drift.Drift(1, "2026-06-01", at_least=False)


def test_a_file_that_never_was_and_a_repository_that_is_not_there_are_left_out(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 9\n"})
    vault = make_vault(
        tmp_path,
        [
            "- **ghost file** — payments keeps it in `src/nowhere.py` — me — 2026-05-01",
            "- **ghost repo** — the ledger repo's `ledger:src/retry.py` — me — 2026-05-01",
            "- **far repo** — billing keeps it in `src/retry.py` — me — 2026-05-01",
            f"- **odd name** — payments keeps it in `src/{'x' * 300}.py` — me — 2026-05-01",
            RETRY,  # beside them, the one that names payments' file
        ],
    )
    reindex(vault, payments, monkeypatch)
    assert drifts(vault) == {"paynova retries": drift.Drift(1, "2026-06-01", at_least=False)}


def test_a_repository_gone_from_disk_is_forgotten_and_breaks_nothing(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 9\n"})
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    assert drifts(vault)["paynova retries"].commit_count == 1
    shutil.rmtree(payments)
    (vault / "AI" / "MEMORY.md").write_text(
        MEMORY_HEAD + RETRY + "\n- **x** — y — z — 2026-05-01\n", encoding="utf-8"
    )
    reindex(vault, vault, monkeypatch)
    assert drifts(vault) == {}
    conn = index.connect(vault)
    try:
        roots = [r[0] for r in conn.execute("SELECT root FROM drift_repos")]
        left = conn.execute("SELECT count(*) FROM drift_commits").fetchone()[0]
    finally:
        conn.close()
    assert str(payments) not in roots
    assert left == len(sh(vault, "rev-list", "HEAD").split()) or left == 0


def test_history_is_read_incrementally_and_a_find_never_walks_it(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 4\n"})
    vault = make_vault(tmp_path, [RETRY])
    monkeypatch.chdir(payments)
    index.sync(vault, history=True)  # the index alone (a find's sync reads no history either)
    assert drifts(vault) == {}
    conn = index.connect(vault)
    try:
        first = drift.refresh(conn, vault, payments)
        assert first.commits == 1  # the commits since the bullet's date, read once
        again = drift.refresh(conn, vault, payments)
        assert again.commits == 0  # nothing new: not even pygit2's walk
        assert again.units == 0  # nor the units' files resolved again: nothing could change
        commit(payments, "2026-07-01", {"src/retry.py": "tries = 5\n"})
        commit(payments, "2026-07-02", {"README.md": "new\n"})
        more = drift.refresh(conn, vault, payments)
        assert more.commits == 2  # only the new commits' own diffs
    finally:
        conn.close()
    assert drifts(vault)["paynova retries"] == drift.Drift(2, "2026-07-01", at_least=False)

    def walked(*args: object, **kwargs: object) -> None:
        raise AssertionError("a find walked history")

    monkeypatch.setattr(gitutil, "read_log", walked)
    run = brain("find", "--vault", str(vault), "--json", "paynova retries")
    assert run.code == 0, run
    hit = run.json()["hits"][0]
    assert hit["code_changed"] == {"commit_count": 2, "last_date": "2026-07-01", "at_least": False}


def test_a_rewritten_history_is_read_again_from_scratch(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 4\n"})
    commit(payments, "2026-06-02", {"src/retry.py": "tries = 5\n"})
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    assert drifts(vault)["paynova retries"].commit_count == 2
    sh(payments, "reset", "-q", "--hard", "HEAD~2")  # the two changes are gone: a force-push
    commit(payments, "2026-06-09", {"src/pool.py": "size = 30\n"})
    reindex(vault, payments, monkeypatch)
    assert drifts(vault) == {}
    conn = index.connect(vault)
    try:
        count = conn.execute("SELECT count(*) FROM drift_commits").fetchone()[0]
    finally:
        conn.close()
    assert count == 1  # the new commit since the bullet's date; the two gone are forgotten


def test_a_huge_history_is_read_within_its_bound(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(12):
        commit(payments, f"2026-06-{n + 1:02d}", {"src/retry.py": f"tries = {n}\n"})
    monkeypatch.setattr(drift, "MAX_COMMITS", 5)
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    got = drifts(vault)["paynova retries"]
    assert got == drift.Drift(5, "2026-06-12", at_least=True)
    assert got.line() == "code changed since: at least 5 commits, last 2026-06-12"
    conn = index.connect(vault)
    try:
        assert conn.execute("SELECT count(*) FROM drift_commits").fetchone()[0] == 5
    finally:
        conn.close()


def test_a_first_read_stops_at_the_oldest_date_that_counts(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(6):
        commit(payments, f"2025-0{n + 1}-10", {"src/pool.py": f"size = {n}\n"})
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 4\n"})
    vault = make_vault(tmp_path, [RETRY])
    monkeypatch.chdir(payments)
    index.sync(vault)
    conn = index.connect(vault)
    try:
        read = drift.refresh(conn, vault, payments)
    finally:
        conn.close()
    # the repository's commits since the bullet's date; none of the eight before it
    assert read.commits == 1
    assert drifts(vault)["paynova retries"] == drift.Drift(1, "2026-06-01", at_least=False)


def test_explicit_files_in_a_code_span_and_a_notes_front_matter(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/pool.py": "size = 30\n"})
    commit(payments, "2026-06-20", {"src/retry.py": "tries = 30\n"})
    note = (
        "---\ncode:\n  - payments:src/pool.py\n---\n# Pool sizing\n\n"
        "We settled on ten connections per pod.\n"
    )
    vault = make_vault(
        tmp_path,
        ["- **pool size** — ten connections per pod — `payments:src/pool.py` — 2026-05-01"],
        {"notes/2026-05-02-pool.md": note},
    )
    reindex(vault, payments, monkeypatch)
    assert drifts(vault) == {"pool size": drift.Drift(1, "2026-06-01", at_least=False)}
    run = brain("find", "--vault", str(vault), "--json", "--all", "connections per pod")
    notes = [h for h in run.json()["hits"] if h["kind"] == "prose"]
    assert notes[0]["code_changed"] == {
        "commit_count": 1,
        "last_date": "2026-06-01",
        "at_least": False,
    }


def test_front_matter_forms() -> None:
    assert claims.front_matter(b"---\ncode: a:x.py, a:y.py\ntitle: t\n---\nbody") == (
        "a:x.py",
        "a:y.py",
    )
    assert claims.front_matter(b"---\ncode: [a:x.py]\n---\n") == ("a:x.py",)
    assert claims.front_matter(b"---\ncode:\n- a:x.py\n- b/\ntags: [x]\n---\n") == (
        "a:x.py",
        "b/",
    )
    assert claims.front_matter(b"---\ncode: a:x.py\n") == ()  # never closed: not front matter
    assert claims.front_matter(b"# title\ncode: a:x.py\n") == ()


def test_a_folder_counts_every_file_under_it(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/deep/a.py": "a\n"})
    commit(payments, "2026-06-02", {"src/deeper/b.py": "b\n"})  # a sibling whose name starts alike
    vault = make_vault(
        tmp_path, ["- **layout** — payments keeps its handlers in `src/deep/` — me — 2026-05-01"]
    )
    reindex(vault, payments, monkeypatch)
    assert drifts(vault) == {"layout": drift.Drift(1, "2026-06-01", at_least=False)}


def test_find_pack_and_prime_show_it_in_one_line(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 4\n"})
    commit(payments, "2026-11-02", {"src/retry.py": "tries = 5\n"})
    vault = make_vault(tmp_path, [RETRY])
    reindex(vault, payments, monkeypatch)
    said = "code changed since: 2 commits, last 2026-11-02"
    terse = brain("find", "--vault", str(vault), "--terse", "paynova retries")
    assert terse.out.splitlines()[0].endswith(f" — 2026-05-01 — {said}")
    raw = brain("find", "--vault", str(vault), "--raw", "paynova retries")
    assert f"({said}): - **paynova retries**" in raw.out
    pack = brain("pack", "payments", "--vault", str(vault), "--json")
    bullet = pack.json()["bullets"][0]
    assert bullet["code_changed"]["commit_count"] == 2
    assert f"2026-05-01 — {said}\n" in pack.json()["text"]
    cached = brain("pack", "payments", "--vault", str(vault), "--json").json()
    assert cached["cached"] is True
    assert cached["bullets"] == pack.json()["bullets"]
    commit(payments, "2026-11-20", {"src/retry.py": "tries = 6\n"})
    reindex(vault, payments, monkeypatch)  # no vault file changed: the cached pack is made again
    later = brain("pack", "payments", "--vault", str(vault), "--json").json()
    assert later["cached"] is False
    assert "code changed since: 3 commits, last 2026-11-20" in later["text"]


PROMPT = json.loads(HOOK.read_text(encoding="utf-8"))["prompt"]
POOL = "- **pgxpool max conns** (aliases: pgxpool, connection pool) — pgxpool MaxConns"


def test_prime_shows_it_in_one_line(
    vault: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixture vault's prompt and its answer, the pgxpool bullet, naming payments' pool."""
    memory = vault / "AI" / "LEARNINGS.md"
    text = memory.read_text(encoding="utf-8")
    assert POOL in text
    memory.write_text(text.replace(POOL, f"{POOL} (`src/db/pool.go`)"), encoding="utf-8")
    sh(vault, "init", "-q", "-b", "main")
    commit(payments, "2026-06-01", {"src/db/pool.go": "MaxConns = 20\n"})
    reindex(vault, payments, monkeypatch)
    run = brain_process("prime", "--vault", str(vault), "--json", PROMPT)
    doc = json.loads(run.out)
    said = "code changed since: 1 commit, last 2026-06-01"
    served = [h for h in doc["hits"] if h["handle"] == "pgxpool max conns"]
    assert served, doc
    assert served[0]["code_changed"] == {
        "commit_count": 1,
        "last_date": "2026-06-01",
        "at_least": False,
    }
    assert f"— 2025-03-18 — {said}" in doc["text"]


def test_tend_queues_a_check_and_approving_dates_the_bullet(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit(payments, "2026-06-01", {"src/retry.py": "tries = 4\n"})
    vault = make_vault(tmp_path, [RETRY, "- **other** — nothing in code — me — 2026-05-01"])
    reindex(vault, payments, monkeypatch)
    result = tendmod.tend(vault)
    checks = [p for p in result.proposed if p.op == "check"]
    assert len(checks) == 1
    assert "**paynova retries**" in checks[0].summary
    assert "code changed since: 1 commit, last 2026-06-01" in checks[0].summary
    assert tendmod.tend(vault).proposed == ()  # queued once
    item = next(p for p in inboxmod.inbox(vault).proposals if p.kind == "hygiene")
    inboxmod.approve(vault, item.number)
    memory = (vault / "AI" / "MEMORY.md").read_text(encoding="utf-8")
    assert f"in `src/retry.py` — review — {today()}" in memory
    reindex(vault, payments, monkeypatch)
    assert drifts(vault) == {}  # nothing touched the file after today


def test_verify_checks_an_explicit_file_in_the_repository_it_names(payments: Path) -> None:
    from brain.commands import verify as verifymod
    from brain.vault import Unit

    ctx = verifymod.Context(payments, {"payments": payments})

    def claims(fact: str) -> list[tuple[str, str]]:
        row = Unit("AI/MEMORY.md", 3, "bullet", fact, "", "h", (), "me", "2026-05-01")
        checked, _ = verifymod.check_rows([row], ctx)  # a bullet with no claim is not listed
        return [(c.text, c.status) for one in checked for c in one.claims]

    assert claims("retries live in `payments:src/retry.py`") == [
        ("payments:src/retry.py", verifymod.PASSED)
    ]
    assert claims("retries live in `payments:src/gone.py`") == [
        ("payments:src/gone.py", verifymod.FAILED)
    ]
    assert claims("retries live in `ledger:src/retry.py`") == [
        ("ledger:src/retry.py", verifymod.UNKNOWN)
    ]
    assert claims("the cache is `redis:6379`") == []  # a port, not a file


def test_reindex_through_the_worker_reads_the_repository_it_was_run_in(
    tmp_path: Path, payments: Path
) -> None:
    """A real `brain reindex` run in the repository, forwarded to the warm worker (the default):
    the worker's own folder is not the one the person ran it in, which drift took for it."""
    from test_worker import stop_workers

    from brain import worker_client

    commit(payments, "2026-06-02", {"src/retry.py": "tries = 6\n"})
    vault = make_vault(tmp_path, [RETRY])
    base = worker_client.base_of(vault)
    try:
        # a find leaves the worker running; the reindex after it is forwarded to it
        brain("find", "--vault", str(vault), "retries", cwd=tmp_path, env={"BRAIN_WORKER": "1"})
        deadline = time.monotonic() + 60
        while worker_client.read_record(base) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert worker_client.read_record(base) is not None, "no worker started"
        run = brain("reindex", "--vault", str(vault), cwd=payments, env={"BRAIN_WORKER": "1"})
        assert run.code == 0, run
    finally:
        stop_workers(base)
    assert drifts(vault) == {"paynova retries": drift.Drift(1, "2026-06-02", at_least=False)}


def test_an_explicit_file_cited_with_its_line_is_followed(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`payments:src/retry.py:1` (or `#L1-L2`, or a line and column as compilers print them),
    as agents cite code, names the file: drift counts its commits, verify checks it exists."""
    from brain.commands import verify as verifymod
    from brain.vault import Unit

    commit(payments, "2026-06-02", {"src/retry.py": "tries = 6\n"})
    commit(payments, "2026-07-02", {"src/pool.py": "size = 6\n"})
    commit(payments, "2026-08-02", {"src/ledger.go": "package ledger\n"})
    vault = make_vault(
        tmp_path,
        [
            "- **retry line** — retries are set at `payments:src/retry.py:1` — me — 2026-05-01",
            "- **pool lines** — the pool is `payments:src/pool.py#L1-L2` — me — 2026-05-01",
            "- **ledger column** — it panics at `payments:src/ledger.go:1:9` — me — 2026-05-01",
        ],
    )
    reindex(vault, payments, monkeypatch)
    assert drifts(vault) == {
        "retry line": drift.Drift(1, "2026-06-02", at_least=False),
        "pool lines": drift.Drift(1, "2026-07-02", at_least=False),
        "ledger column": drift.Drift(1, "2026-08-02", at_least=False),
    }
    ctx = verifymod.Context(payments, {"payments": payments})
    row = Unit("AI/MEMORY.md", 3, "bullet", "in `payments:src/gone.py:3`", "", "h", (), "me", "")
    checked, _ = verifymod.check_rows([row], ctx)
    assert [(c.text, c.status) for one in checked for c in one.claims] == [
        ("payments:src/gone.py:3", verifymod.FAILED)
    ]


def test_verify_checks_in_the_repositories_drift_read(
    tmp_path: Path, payments: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reindex run in the repository teaches drift its files; verify, run elsewhere, checks
    the same bullets' files and commits there (it said `no repository payments here` while find
    said `code changed since`). A commit the history was rewritten without fails."""
    gone = commit(payments, "2026-06-02", {"src/retry.py": "tries = 6\n"}, "to be reworded")
    sh(payments, "commit", "-q", "--amend", "-m", "reworded", day="2026-06-02")
    sh(payments, "reflog", "expire", "--expire=now", "--all")
    sh(payments, "gc", "-q", "--prune=now")
    vault = make_vault(
        tmp_path,
        [
            "- **kept file** — retries are in `payments:src/retry.py` — me — 2026-05-01",
            "- **gone file** — the queue is in `payments:src/queue.py` — me — 2026-05-01",
            f"- **gone commit** — payments took retries in {gone[:10]} — me — 2026-05-01",
        ],
    )
    reindex(vault, payments, monkeypatch)
    assert "kept file" in drifts(vault)
    run = brain("verify", "--vault", str(vault), "--json", cwd=tmp_path)
    verdicts = {b["handle"]: b["verdict"] for b in run.json()["bullets"]}
    assert verdicts == {"kept file": "passed", "gone file": "failed", "gone commit": "failed"}
    assert str(payments) in run.json()["repositories"]


def test_verify_never_checks_a_cited_file_outside_its_repository(
    tmp_path: Path, payments: Path
) -> None:
    """`payments:../secret.py` names no file of payments (drift follows none): verify said it
    passed, `in payments`, for a file beside the repository."""
    from brain.commands import verify as verifymod
    from brain.vault import Unit

    (tmp_path / "secret.py").write_text("x = 1\n", encoding="utf-8")
    ctx = verifymod.Context(payments, {"payments": payments})
    cited = ["payments:../secret.py", "payments:src/../../secret.py:2"]
    rows = [
        Unit("AI/MEMORY.md", n, "bullet", f"in `{c}`", "", f"h{n}", (), "me", "")
        for n, c in enumerate(cited, start=3)
    ]
    checked, _ = verifymod.check_rows(rows, ctx)
    said = [(c.text, c.status, c.detail) for one in checked for c in one.claims]
    assert [s[:2] for s in said] == [(c, verifymod.FAILED) for c in cited]
    assert all("climbs out of" in s[2] for s in said)
    assert not drift.refs(rows[0], {"payments": payments})


def test_two_repositories_of_one_name_are_read_in_one_by_drift_and_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clones named `api` (an old one, then a new one), a reindex run in each: run from
    elsewhere, drift read `api:` in the one whose path sorts first and verify checked in the
    one read last, so find said `code changed since` for a file verify called missing. Both
    take the one read last (a clone made afresh)."""
    old, new = new_repo(tmp_path / "a-old" / "api"), new_repo(tmp_path / "b-new" / "api")
    commit(old, "2026-03-01", {"src/kept.py": "a = 1\n"})
    commit(new, "2026-03-01", {"src/other.py": "b = 1\n"})
    commit(old, "2026-06-02", {"src/kept.py": "a = 2\n"})
    vault = make_vault(
        tmp_path, ["- **api file** — the api keeps `api:src/kept.py` — me — 2026-05-01"]
    )
    reindex(vault, old, monkeypatch)
    assert "api file" in drifts(vault)
    reindex(vault, new, monkeypatch)
    reindex(vault, tmp_path, monkeypatch)  # from no repository
    run = brain("verify", "--vault", str(vault), "--json", cwd=tmp_path)
    assert str(new) in run.json()["repositories"]
    assert str(old) not in run.json()["repositories"]
    assert [b["verdict"] for b in run.json()["bullets"]] == ["failed"]
    assert drifts(vault) == {}  # not counted in the one verify does not check
