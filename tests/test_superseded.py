"""Stale notes: a note's paragraph that a newer bullet says otherwise than is never served as
current (brain/superseded.py), its date from the file name or from git history
(brain/note_dates.py)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_VAULT, ROOT, brain, git

from brain import config, gitutil, index, note_dates, supersede
from brain.commands.doctor import doctor
from brain.commands.find import find
from brain.commands.pack import pack

STALE = ROOT / "testdata" / "stale"
CASES = [json.loads(line) for line in (STALE / "cases.jsonl").read_text().splitlines() if line]
PLANTED = [c for c in CASES if c["marked"]]
LOOK_ALIKES = [c for c in CASES if not c["marked"]]


def _where(case: dict[str, str]) -> str:
    return "notes/stale/" + case["note"].removeprefix("notes/")


@pytest.fixture
def stale_vault(tmp_path: Path) -> Path:
    """The fixture vault, plus testdata/stale's bullets (in AI/MEMORY.md) and notes."""
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, vault)
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + (STALE / "MEMORY.md").read_text())
    shutil.copytree(STALE / "notes", vault / "notes" / "stale")
    return vault


def shadows(vault: Path) -> set[tuple[str, str]]:
    """(note path, bullet handle) for every shadowed paragraph in the vault's index."""
    conn = index.open_index(vault)
    try:
        rows = conn.execute(
            "SELECT p.path, b.handle FROM shadows s JOIN units p ON p.id = s.note"
            " JOIN units b ON b.id = s.bullet"
        ).fetchall()
    finally:
        conn.close()
    return {(p, h) for p, h in rows}


def commit(repo: Path, message: str, when: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env)


def test_planted_notes_are_marked_and_look_alikes_are_not(stale_vault: Path) -> None:
    found = shadows(stale_vault)
    planted = {(_where(c), c["handle"]) for c in PLANTED}
    assert len(planted) == 13
    assert planted <= found, planted - found
    wrongly = {(p, h) for p, h in found if p.startswith("notes/stale/")} - planted
    assert not wrongly
    # The fixture vault's own 80-odd dated paragraphs retell no bullet with other specifics.
    assert not {(p, h) for p, h in found if not p.startswith("notes/stale/")}


@pytest.mark.parametrize("case", PLANTED, ids=[c["handle"] for c in PLANTED])
def test_find_serves_a_planted_note_below_its_bullet_and_marked(
    stale_vault: Path, case: dict[str, str]
) -> None:
    hits = find(stale_vault, case["query"]).hits
    note = next(i for i, h in enumerate(hits) if h.path == _where(case))
    bullet = next(i for i, h in enumerate(hits) if h.handle == case["handle"])
    assert bullet < note
    assert hits[note].superseded_by == case["handle"]
    assert all(not h.superseded_by for h in hits if h.kind == "bullet")


@pytest.mark.parametrize("case", LOOK_ALIKES, ids=[c["kind"] for c in LOOK_ALIKES])
def test_find_leaves_look_alikes_unmarked(stale_vault: Path, case: dict[str, str]) -> None:
    hits = find(stale_vault, case["query"]).hits
    assert any(h.path == _where(case) for h in hits)
    assert not any(h.superseded_by for h in hits if h.path == _where(case))


def test_a_newer_bullet_the_query_missed_is_brought_in_above_the_note(stale_vault: Path) -> None:
    # Only the note holds these words; the bullet that corrects it is served above it anyway.
    hits = find(stale_vault, "goodwill credit").hits
    assert [(h.handle or h.path, h.match) for h in hits[:2]] == [
        ("refund window", ("newer",)),
        ("notes/stale/2026-01-12-support-sync.md", ("keyword",)),
    ]
    assert hits[1].superseded_by == "refund window"


def test_prime_serves_the_bullet_never_the_older_paragraph(stale_vault: Path) -> None:
    """Prime's answer is read unasked: a paragraph a newer bullet corrects is not served, even
    marked; the bullet stands in its place (keyword prime, as a cold worker answers)."""
    assert brain("reindex", "--vault", str(stale_vault)).code == 0  # prime never builds it
    for case in PLANTED:
        doc = brain("prime", "--vault", str(stale_vault), "--json", case["query"]).json()
        assert (_where(case), case["line"]) not in {(h["path"], h["line"]) for h in doc["hits"]}
        assert not any(h["superseded_by"] for h in doc["hits"]), case
        assert case["handle"] in {h["handle"] for h in doc["hits"]}, case


def test_prime_serves_nothing_of_a_note_whose_bullet_the_session_has(stale_vault: Path) -> None:
    case = next(c for c in PLANTED if c["handle"] == "search on-call")
    assert brain("reindex", "--vault", str(stale_vault)).code == 0
    env = {"BRAIN_SESSION": "s-given", "CLAUDECODE": "1"}
    given = brain("find", "--vault", str(stale_vault), "search on-call", env=env)
    assert given.out.startswith("AI/MEMORY.md:"), given.out
    doc = brain("prime", "--vault", str(stale_vault), "--json", case["query"], env=env).json()
    assert doc["repeated"] >= 1  # the bullet: given already
    assert _where(case) not in {h["path"] for h in doc["hits"]}


def test_the_cli_marks_the_note_in_every_format(stale_vault: Path) -> None:
    query = "refund window 90 days from purchase"
    terse = brain("find", "--vault", str(stale_vault), query)
    assert terse.code == 0, terse.err
    lines = terse.out.splitlines()
    assert lines[0].startswith("AI/MEMORY.md:")
    assert lines[1].startswith("notes/stale/2026-01-12-support-sync.md:5 ")
    assert lines[1].endswith(" — 2026-01-12 — older than **refund window**")
    doc = brain("find", "--vault", str(stale_vault), "--json", query).json()
    assert [h["superseded_by"] for h in doc["hits"][:2]] == [None, "refund window"]
    raw = brain("find", "--vault", str(stale_vault), "--raw", query).out.splitlines()
    assert raw[1].startswith(
        "notes/stale/2026-01-12-support-sync.md:5 (older than **refund window**): The refund"
    )


def test_either_side_changing_recomputes_the_relation(stale_vault: Path) -> None:
    note = ("notes/stale/2026-01-12-support-sync.md", "refund window")
    assert note in shadows(stale_vault)
    memory = stale_vault / "AI" / "MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text.replace("within 180 days", "within 90 days"), encoding="utf-8")
    assert note not in shadows(stale_vault)  # the bullet now agrees with the note
    memory.write_text(text, encoding="utf-8")
    assert note in shadows(stale_vault)
    path = stale_vault / note[0]
    path.write_text(path.read_text().replace("90 days", "180 days"), encoding="utf-8")
    assert note not in shadows(stale_vault)  # the note now agrees with the bullet
    path.unlink()
    assert note not in shadows(stale_vault)


def test_a_heading_that_names_the_subject_is_read_and_an_edit_of_it_recomputes(
    stale_vault: Path,
) -> None:
    """The paragraph under `## Payout limit` never says "payout limit": its heading does."""
    note = ("notes/stale/2026-03-15-risk-limits.md", "payout limit")
    assert note in shadows(stale_vault)
    path = stale_vault / note[0]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("## Payout limit", "## Withdrawals"), encoding="utf-8")
    assert note not in shadows(stale_vault)  # the paragraph itself did not change
    path.write_text(text, encoding="utf-8")
    assert note in shadows(stale_vault)


@pytest.mark.parametrize(
    ("text", "durations"),
    [
        ("kept for two weeks", {"1209600"}),
        ("kept for 14 days", {"1209600"}),
        ("a 14-day free trial", {"1209600"}),
        ("tokens expire after 15m, refresh tokens after 30d", {"900", "2592000"}),
        ("it moved from 90 to 180 days", {"7776000", "15552000"}),  # a range: both are days
        ("one month", {"2592000"}),
        ("snapshots run every 6 hours", None),  # how often, not how long
        ("the two reviewers met 3 times", None),
        ("deploys run from 10:00 to 16:00 hours", None),  # times of day
    ],
)
def test_a_duration_is_read_in_any_unit(text: str, durations: set[str] | None) -> None:
    assert supersede.quantities(text).get("duration") == durations


def test_a_name_is_found_in_any_order() -> None:
    bullet = supersede._bullet(
        (1, "export timeout", "", "the export gives up after 120 seconds", "2026-09-15")
    )
    for text, marked in (
        ("The timeout for exports is 60 seconds.", True),
        ("Exports time out after 60 seconds.", False),  # not the name: `time`, not `timeout`
        ("The timeout for webhooks is 60 seconds.", False),
    ):
        found = supersede._pairs([(7, text, "2026-01-01", "Notes")], [bullet])
        assert bool(found) == marked, text


def test_doctor_lists_the_notes_heaviest_first_and_not_a_note_that_cites_the_bullet(
    stale_vault: Path,
) -> None:
    listed = doctor(str(stale_vault)).superseded
    assert {n.path for n in listed} == {_where(c) for c in PLANTED}
    assert [n.weight for n in listed] == sorted((n.weight for n in listed), reverse=True)
    first = listed[0]
    assert first.path == "notes/stale/2026-03-01-warehouse-notes.md"
    assert [b.handle for b in first.bullets] == ["M#analytics warehouse"]
    cited = stale_vault / "notes" / "stale" / "2025-12-01-backups.md"
    cited.write_text(cited.read_text() + "\nSuperseded: see **backup retention**.\n")
    listed = doctor(str(stale_vault)).superseded
    assert _where({"note": "notes/2025-12-01-backups.md"}) not in {n.path for n in listed}
    # Cited, it is history the person kept on purpose; find still says it is older.
    hits = find(stale_vault, "backup retention 14 days").hits
    assert next(h for h in hits if h.path.endswith("backups.md")).superseded_by


def test_doctor_text_names_the_next_step(stale_vault: Path) -> None:
    run = brain("doctor", "--vault", str(stale_vault))
    assert "Notes older than a bullet that says otherwise (update the note" in run.out
    assert (
        "notes/stale/2026-03-01-warehouse-notes.md:3 (2026-03-01) 1 paragraph — older than "
        "M#analytics warehouse AI/MEMORY.md:" in run.out
    )


def test_doctor_escapes_a_superseded_notes_name(stale_vault: Path) -> None:
    """A newline or ESC in a note's file name is shown escaped, as the other doctor lists show
    names: it neither forges a line nor reaches the terminal."""
    folder = stale_vault / "notes" / "stale"
    odd = "2026-03-01-ware\nhouse\x1b[2J-notes.md"
    (folder / "2026-03-01-warehouse-notes.md").rename(folder / odd)
    run = brain("doctor", "--vault", str(stale_vault))
    assert "\x1b" not in run.out
    (line,) = [s for s in run.out.splitlines() if "2026-03-01-ware" in s]
    assert line.startswith(
        "  notes/stale/2026-03-01-ware\\nhouse\\x1b[2J-notes.md:3 (2026-03-01) 1 paragraph — "
        "older than M#analytics warehouse AI/MEMORY.md:"
    ), line


def test_pack_marks_a_handoff_a_newer_bullet_corrects(vault: Path) -> None:
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8")
        + "\n- **paynova webhook deadline** — the Paynova webhook handler answers within 30"
        " seconds — ops — 2026-11-30\n",
        encoding="utf-8",
    )
    handoff = vault / "projects" / "payments" / "handoffs" / "2026-11-28-webhooks.md"
    handoff.write_text(
        "# Webhooks\n\nThe paynova webhook deadline is 10 seconds, measured at the handler.\n",
        encoding="utf-8",
    )
    result = pack(vault, "payments")
    assert result.handoff == "projects/payments/handoffs/2026-11-28-webhooks.md"
    assert result.handoff_superseded_by == ("paynova webhook deadline",)
    assert (
        "Newest handoff: projects/payments/handoffs/2026-11-28-webhooks.md"
        " (older than **paynova webhook deadline**)" in result.text
    )
    doc = brain("pack", "payments", "--vault", str(vault), "--json", "--fresh").json()
    assert doc["handoff_superseded_by"] == ["paynova webhook deadline"]


# --- dates from git history ----------------------------------------------------------------------

UNDATED = "notes/pricing.md"
OLD_NOTE = "# Pricing\n\nThe refund window is 90 days from purchase, for every plan.\n"


@pytest.fixture
def git_stale_vault(stale_vault: Path) -> Path:
    """The stale vault as a git repository whose notes were committed on 2026-02-01, plus an
    undated note whose only date is its commit's."""
    (stale_vault / UNDATED).write_text(OLD_NOTE, encoding="utf-8")
    git(stale_vault, "init", "-q", "-b", "main")
    commit(stale_vault, "notes", "2026-02-01T10:00:00+01:00")
    return stale_vault


def _hit(vault: Path, query: str, path: str) -> tuple[str, str]:
    h = next(h for h in find(vault, query, ranked=True).hits if h.path == path)
    return h.date, h.superseded_by


def test_an_undated_note_takes_its_last_commits_date(git_stale_vault: Path) -> None:
    query = "refund window 90 days every plan"
    # A find never walks history: until a reindex reads it, the note has no date.
    assert _hit(git_stale_vault, query, UNDATED) == ("", "")
    run = brain("reindex", "--vault", str(git_stale_vault), "--json")
    assert run.code == 0, run.err
    assert _hit(git_stale_vault, query, UNDATED) == ("2026-02-01", "refund window")
    # A later commit of the note makes it newer than the bullet; the reindex after it says so.
    note = git_stale_vault / UNDATED
    note.write_text(OLD_NOTE + "\nReviewed again.\n", encoding="utf-8")
    commit(git_stale_vault, "review", "2026-11-30T09:00:00+00:00")
    assert _hit(git_stale_vault, query, UNDATED) == ("2026-02-01", "refund window")  # cached
    assert brain("reindex", "--vault", str(git_stale_vault)).code == 0
    assert _hit(git_stale_vault, query, UNDATED) == ("2026-11-30", "")
    # Dated notes keep the date in their name; a full rebuild keeps what history said.
    assert brain("reindex", "--full", "--vault", str(git_stale_vault)).code == 0
    assert _hit(git_stale_vault, query, UNDATED) == ("2026-11-30", "")
    assert _hit(git_stale_vault, "refund window 90 days", _where(PLANTED[0]))[0] == "2026-01-12"


def test_a_note_dated_in_the_future_takes_its_commits_date(git_stale_vault: Path) -> None:
    plan = "notes/stale/2027-03-01-warehouse-plan.md"
    query = "analytics warehouse postgres 17 next spring"
    assert _hit(git_stale_vault, query, plan) == ("", "")
    assert brain("reindex", "--vault", str(git_stale_vault)).code == 0
    assert _hit(git_stale_vault, query, plan) == ("2026-02-01", "analytics warehouse")


def test_history_read_only_walks_new_commits(git_stale_vault: Path) -> None:
    files = [UNDATED, "notes/stale/2025-12-01-backups.md"]
    first = note_dates.read(git_stale_vault, files, "")
    assert first is not None
    assert first.full
    assert first.dates == dict.fromkeys(files, "2026-02-01")
    assert note_dates.read(git_stale_vault, files, first.head) is None
    (git_stale_vault / UNDATED).write_text("changed\n", encoding="utf-8")
    commit(git_stale_vault, "edit", "2026-03-03T23:30:00-05:00")  # the committer's own date
    again = note_dates.read(git_stale_vault, files, first.head)
    assert again is not None
    assert (again.full, again.dates) == (False, {UNDATED: "2026-03-03"})
    # Rewritten history (an amend) is read again from the top.
    git(git_stale_vault, "commit", "-q", "--amend", "-m", "edited")
    assert note_dates.read(git_stale_vault, files, again.head).full  # type: ignore[union-attr]


def test_a_vault_in_a_folder_of_a_larger_repository(tmp_path: Path) -> None:
    repo = tmp_path / "dotfiles"
    (repo / "brain" / "AI").mkdir(parents=True)
    (repo / "brain" / "notes.md").write_text("# Notes\n\nSomething.\n", encoding="utf-8")
    (repo / "other.md").write_text("elsewhere\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "one", "2025-05-05T12:00:00+00:00")
    found = note_dates.read(repo / "brain", ["notes.md", "other.md"], "")
    assert found is not None
    assert found.dates == {"notes.md": "2025-05-05"}


def test_no_history_unborn_history_and_a_shallow_clone(tmp_path: Path, vault: Path) -> None:
    assert note_dates.read(vault, ["notes/ideas.md"], "") == note_dates.Dates("", True)
    assert brain("reindex", "--vault", str(vault)).code == 0
    git(vault, "init", "-q", "-b", "main")  # a repository without a commit
    assert note_dates.read(vault, ["notes/ideas.md"], "") == note_dates.Dates("", True)
    run = brain("reindex", "--vault", str(vault))
    assert (run.code, run.err) == (0, "")
    commit(vault, "first", "2025-01-01T00:00:00+00:00")
    (vault / "notes" / "later.md").write_text("# Later\n\nA later note.\n", encoding="utf-8")
    commit(vault, "second", "2026-06-01T00:00:00+00:00")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{vault}", str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    # The boundary commit stands for all that came before it: the latest each file can date from.
    found = note_dates.read(clone, ["notes/ideas.md", "notes/later.md"], "")
    assert found is not None
    assert found.dates == {"notes/ideas.md": "2026-06-01", "notes/later.md": "2026-06-01"}
    run = brain("reindex", "--vault", str(clone), "--json")
    assert (run.code, "Traceback" in run.err) == (0, False)
    conn = sqlite3.connect(config.index_path(clone))
    dates = dict(conn.execute("SELECT path, date FROM dates").fetchall())
    conn.close()
    assert dates["notes/ideas.md"] == "2026-06-01"


def test_an_edit_elsewhere_in_either_file_keeps_the_relation(stale_vault: Path) -> None:
    before = shadows(stale_vault)
    assert len(before) == len(PLANTED)
    memory = stale_vault / "AI" / "MEMORY.md"
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("Stripe for EU cards", "Stripe for all cards"),
        encoding="utf-8",
    )
    note = stale_vault / "notes" / "stale" / "2026-01-12-support-sync.md"
    note.write_text(note.read_text() + "\nA new paragraph about the coffee.\n", encoding="utf-8")
    # Both files were read again (their units have new ids); the shadows followed them.
    assert shadows(stale_vault) == before


def _relation(vault: Path) -> set[tuple[str, int, str, float]]:
    conn = index.open_index(vault)
    try:
        rows = conn.execute(
            "SELECT p.path, p.line, b.handle, s.weight FROM shadows s"
            " JOIN units p ON p.id = s.note JOIN units b ON b.id = s.bullet"
        ).fetchall()
    finally:
        conn.close()
    return set(rows)


def test_edits_leave_the_relation_a_full_rebuild_would_compute(tmp_path: Path) -> None:
    """A generated vault with the planted cases: after edits on both sides (the relation moved
    along, recomputed or carried), the index holds what a full rebuild computes."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from genvault import edit_bullet, generate

    vault = tmp_path / "vault"
    generate(vault, bullets=2000, notes=60)
    memory = vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + (STALE / "MEMORY.md").read_text())
    shutil.copytree(STALE / "notes", vault / "notes")
    index.sync(vault)
    assert len(_relation(vault)) == len(PLANTED)
    for n in range(3):
        edit_bullet(vault, n)
        edit_bullet(vault, n, "AI/MEMORY.md")
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text.replace("within 180 days", "within 90 days"), encoding="utf-8")
    for n, path in enumerate(sorted(vault.glob("projects/**/*.md"))[:6]):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(" the ", f" the edit{n} ", 3), encoding="utf-8")
    (vault / "notes" / "2025-12-01-backups.md").unlink()
    ci = vault / "notes" / "2026-01-20-ci-upgrade.md"
    ci.write_text(ci.read_text(encoding="utf-8").replace("Node 18", "Node 20"), encoding="utf-8")
    (vault / "notes" / "2026-04-01-queue.md").write_text(
        "# Queue\n\nThe api rate limit was 300 requests per minute per token.\n", encoding="utf-8"
    )
    index.sync(vault)
    incremental = _relation(vault)
    assert {(p, h) for p, _, h, _ in incremental} == {
        ("notes/2026-02-03-api-review.md", "api rate limit"),
        ("notes/2026-03-01-warehouse-notes.md", "analytics warehouse"),
        ("notes/2026-02-20-release-process.md", "deploy window"),
        ("notes/2026-02-10-search-team.md", "search on-call"),
        ("notes/2026-06-20-auth-rework.md", "session token lifetime"),
        ("notes/2026-01-20-ci-upgrade.md", "ci node version"),
        ("notes/2026-04-01-queue.md", "api rate limit"),
        ("notes/2026-01-15-refund-faq.md", "refund window"),  # 180 days, the bullet now 90
        ("notes/2026-03-15-risk-limits.md", "payout limit"),
        ("notes/2026-01-05-trial-length.md", "trial length"),
        ("notes/2026-02-18-pricing-review.md", "trial length"),
        ("notes/2026-01-28-logging.md", "log retention"),
        ("notes/2026-04-10-exports.md", "export timeout"),
    }
    index.rebuild(vault)
    assert incremental == _relation(vault)


@pytest.mark.slow
def test_hybrid_find_serves_every_planted_note_below_its_bullet(
    stale_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through the default model: vectors alone rank some notes above their bullet."""
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    monkeypatch.setenv("BRAIN_WORKER", "0")
    assert brain("reindex", "--vault", str(stale_vault), env={"BRAIN_EMBED": "onnx"}).code == 0
    for case in PLANTED:
        result = find(stale_vault, case["query"])
        assert result.mode == "hybrid"
        hits = result.hits
        note = next(i for i, h in enumerate(hits) if h.path == _where(case))
        bullet = next(i for i, h in enumerate(hits) if h.handle == case["handle"])
        assert bullet < note, case
        assert hits[note].superseded_by == case["handle"]


def test_head_is_read_from_gits_files_without_pygit2(tmp_path: Path, vault: Path) -> None:
    assert gitutil.head_hint(vault) == ""  # no repository: not even pygit2 is loaded
    git(vault, "init", "-q", "-b", "main")
    assert gitutil.head_hint(vault) is None  # unborn: pygit2 decides
    commit(vault, "one", "2025-01-01T00:00:00+00:00")
    head = git(vault, "rev-parse", "HEAD").strip()
    assert gitutil.head_hint(vault) == head
    assert gitutil.head_hint(vault / "notes") == head
    git(vault, "pack-refs", "--all")
    assert not (vault / ".git" / "refs" / "heads" / "main").exists()
    assert gitutil.head_hint(vault) == head
    git(vault, "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"))
    assert gitutil.head_hint(tmp_path / "wt") == head
    git(vault, "checkout", "-q", "--detach")
    assert gitutil.head_hint(vault) == head


def test_reindex_of_an_unchanged_history_does_not_load_pygit2(git_stale_vault: Path) -> None:
    assert brain("reindex", "--vault", str(git_stale_vault)).code == 0
    args = ["-X", "importtime", "-m", "brain", "reindex", "--vault", str(git_stale_vault)]
    proc = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "BRAIN_EMBED": "none"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| pygit2" not in proc.stderr
    assert "| brain.note_dates" in proc.stderr  # it did look
