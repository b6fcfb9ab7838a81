"""`brain lint`: bullets parse, dates are real, handles are unique, no credential slips in."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
from conftest import Run, brain, git


def append(vault: Path, rel: str, *lines: str) -> int:
    """Append lines to a file; return the 1-based line number of the first one."""
    path = vault / rel
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        text += "\n"
    first = text.count("\n") + 1
    path.write_text(text + "".join(f"{line}\n" for line in lines), encoding="utf-8")
    return first


def lint(vault: Path, *args: str, cwd: Path | None = None) -> Run:
    run = brain("lint", "--vault", str(vault), *args, cwd=cwd)
    assert "Traceback" not in run.err
    return run


def github_token() -> str:
    """A GitHub-shaped token, built at run time so that no scanner flags this file."""
    rng = random.Random(20260302)  # noqa: S311 - a fixed fake, not a secret
    return (
        "ghp" + "_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    )


def test_clean_vault_passes(vault: Path) -> None:
    run = lint(vault)
    assert run.code == 0, run
    assert run.out == "151 bullets in 37 files: all good.\n"
    doc = lint(vault, "--json").json()
    assert doc["ok"] is True
    assert doc["problems"] == []
    core = ["AI/MEMORY.md", "AI/LEARNINGS.md", "AI/TUNINGS.md", "AI/synonyms.tsv"]
    assert doc["files"][:4] == core
    # and every note the index reads, for the guard (brain/guard.py)
    assert doc["files"][4:] == sorted(
        p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if p.parent.name != "AI"
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("- a fact with no handle — docs — 2026-01-01", "no **handle**"),
        ("- **bad month** — a fact — docs — 2026-13-40", "valid date"),
        ("- **bad day** — a fact — docs — 2025-02-29", "valid date"),
        (
            "- **no date** — a fact — docs",
            "needs `fact — source — YYYY-MM-DD`: add ` — YYYY-MM-DD` after 'docs'",
        ),
        (
            "- **no source** — a fact — 2026-01-01",
            "needs `fact — source — YYYY-MM-DD`: add its source before the date",
        ),
        ("- **a fact alone** — a fact", "add ` — source — YYYY-MM-DD`"),
        ("- **a date alone** — 2026-01-01", "add the fact and its source before the date"),
        ("- **words for a date** — a fact — docs — last tuesday", "valid date"),
        ("- **no separator** a fact — docs — 2026-01-01", "expected ` — ` after the handle"),
        ("- **** — a fact — docs — 2026-01-01", "no **handle**"),
        (
            "- **celery beat (aliases: scheduler)** — a fact — docs — 2026-01-01",
            "holds its aliases; close the bold before them: `- **celery beat** (aliases: ...)",
        ),
        (  # the alias list never closed: it ran into the fact
            "- **gpu box** (aliases: gpu server, — the box is gpu01 — notes — 2026-01-01",
            "the alias list of 'gpu box' is not closed or lacks its colon; write"
            " `- **gpu box** (aliases: a, b) — fact`",
        ),
        (
            "- **ssh keys** (aliases ssh, keys) — keys live in ~/.ssh — notes — 2026-01-01",
            "the alias list of 'ssh keys' is not closed or lacks its colon",
        ),
    ],
)
def test_malformed_bullet_is_reported_at_its_line(vault: Path, line: str, says: str) -> None:
    number = append(vault, "AI/TUNINGS.md", line)
    run = lint(vault)
    assert run.code == 1, run
    assert run.out.splitlines() == [f"AI/TUNINGS.md:{number}: " + run.out.split(": ", 1)[1].strip()]
    assert says in run.out
    assert run.err.startswith("1 problem; ")  # one problem, not "1 problems"
    (problem,) = lint(vault, "--json").json()["problems"]
    assert (problem["path"], problem["line"]) == ("AI/TUNINGS.md", number)
    assert says in problem["message"]


def test_every_problem_is_listed_in_file_and_line_order(vault: Path) -> None:
    a = append(vault, "AI/TUNINGS.md", "- **late** — x — y — 2026-99-01")
    b = append(vault, "AI/MEMORY.md", "- **early** — x — y")
    c = append(vault, "AI/MEMORY.md", "- **earlier** — x — y — 2026-00-10")
    run = lint(vault)
    assert run.code == 1
    assert [line.split(": ", 1)[0] for line in run.out.splitlines()] == [
        f"AI/MEMORY.md:{b}",
        f"AI/MEMORY.md:{c}",
        f"AI/TUNINGS.md:{a}",
    ]


@pytest.mark.parametrize("spelling", ["libgit2", "LibGit2", "LIBGIT2", "  libgit2  "])
def test_duplicate_handle_across_files_points_at_the_first(vault: Path, spelling: str) -> None:
    number = append(vault, "AI/TUNINGS.md", f"- **{spelling}** — a second fact — me — 2026-01-01")
    run = lint(vault)
    assert run.code == 1, run
    (line,) = run.out.splitlines()
    assert line.startswith(f"AI/TUNINGS.md:{number}: duplicate handle")
    assert "first at AI/LEARNINGS.md:7" in line


def test_duplicate_handle_in_one_file_is_reported_at_the_second(vault: Path) -> None:
    first = append(vault, "AI/MEMORY.md", "- **twin** — one — me — 2026-01-01")
    second = append(vault, "AI/MEMORY.md", "- **Twin** — two — me — 2026-01-02")
    (line,) = lint(vault).out.splitlines()
    assert line.startswith(f"AI/MEMORY.md:{second}: duplicate handle 'Twin'")
    assert f"first at AI/MEMORY.md:{first}" in line


def test_duplicate_is_found_even_when_paths_limit_the_check(vault: Path) -> None:
    number = append(vault, "AI/TUNINGS.md", "- **kestrel** — again — me — 2026-01-01")
    run = lint(vault, str(vault / "AI" / "TUNINGS.md"))
    assert run.code == 1
    assert run.out.startswith(f"AI/TUNINGS.md:{number}: duplicate handle 'kestrel'")
    assert lint(vault, str(vault / "AI" / "MEMORY.md")).code == 0  # the first one is fine


def test_bullet_with_a_credential_is_refused(vault: Path) -> None:
    token = github_token()
    number = append(
        vault, "AI/MEMORY.md", f"- **ci token** — the CI uses {token} — me — 2026-01-01"
    )
    run = lint(vault)
    assert run.code == 1, run
    (line,) = run.out.splitlines()
    assert line.startswith(f"AI/MEMORY.md:{number}: bullet carries a credential (github-token")
    assert token not in run.out + run.err  # reported masked, never echoed
    assert token not in lint(vault, "--json").out


def test_placeholder_token_is_not_a_credential(vault: Path) -> None:
    append(vault, "AI/MEMORY.md", "- **ci token** — tokens look like ghp_xxxx — me — 2026-01-01")
    assert lint(vault).code == 0


def test_non_utf8_core_file_is_a_problem_at_its_line(vault: Path) -> None:
    memory = vault / "AI" / "MEMORY.md"
    lines = memory.read_bytes().split(b"\n")
    lines[2] = lines[2] + b" caf\xe9"
    memory.write_bytes(b"\n".join(lines))
    run = lint(vault)
    assert run.code == 1
    assert "AI/MEMORY.md:3: not valid UTF-8" in run.out


def test_non_utf8_named_note_is_a_problem_at_its_line(vault: Path) -> None:
    note = vault / "notes" / "latin1.md"
    note.write_bytes(b"# Notes\n\nfine\n\nna\xefve\n")
    run = lint(vault, str(note))
    assert run.code == 1
    assert run.out.startswith("notes/latin1.md:5: not valid UTF-8")


def test_bad_synonyms_row_is_a_problem(vault: Path) -> None:
    number = append(vault, "AI/synonyms.tsv", "no tab here")
    run = lint(vault)
    assert run.code == 1
    assert run.out.startswith(f"AI/synonyms.tsv:{number}: expected `term<TAB>expansion`")


def test_paths_limit_the_check(vault: Path, tmp_path: Path) -> None:
    number = append(vault, "AI/MEMORY.md", "- **broken** — no date — me")
    assert lint(vault, "AI/TUNINGS.md", cwd=tmp_path).code == 0  # relative to the vault
    run = lint(vault, "AI/MEMORY.md", cwd=tmp_path)
    assert run.code == 1
    assert run.out.startswith(f"AI/MEMORY.md:{number}: ")
    inside = lint(vault, "TUNINGS.md", cwd=vault / "AI")  # relative to the working directory
    assert inside.code == 0, inside
    doc = lint(vault, "--json", str(vault / "AI" / "TUNINGS.md")).json()
    assert doc["files"] == ["AI/TUNINGS.md"]
    tunings = (vault / "AI" / "TUNINGS.md").read_text(encoding="utf-8")
    assert doc["bullet_count"] == tunings.count("\n- **")


@pytest.mark.parametrize("spelling", ["absolute", "dot-dot", "missing"])
def test_path_outside_the_vault_is_an_error(vault: Path, tmp_path: Path, spelling: str) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("- **x** — y\n", encoding="utf-8")
    arg = {"absolute": str(outside), "dot-dot": "../elsewhere.md", "missing": "nope.md"}[spelling]
    run = lint(vault, arg, cwd=vault if spelling == "dot-dot" else tmp_path)
    assert run.code == 1, run
    assert run.out == ""
    assert run.err.startswith("brain: ")
    assert ("no such file" if spelling == "missing" else "not inside the vault") in run.err
    assert run.err.count("\n") == 1


# --- staged -------------------------------------------------------------------------------------


def test_staged_checks_the_index_not_the_work_tree(git_vault: Path) -> None:
    tunings = git_vault / "AI" / "TUNINGS.md"
    clean = tunings.read_text(encoding="utf-8")
    number = append(git_vault, "AI/TUNINGS.md", "- **staged bad** — no date — me")
    git(git_vault, "add", "AI/TUNINGS.md")
    tunings.write_text(clean, encoding="utf-8")  # fixed in the work tree, not in the index

    staged = lint(git_vault, "--staged")
    assert staged.code == 1, staged
    assert staged.out.startswith(f"AI/TUNINGS.md:{number}: ")
    assert lint(git_vault).code == 0


def test_staged_passes_when_only_the_work_tree_is_bad(git_vault: Path) -> None:
    append(git_vault, "AI/TUNINGS.md", "- **good one** — a fact — me — 2026-01-01")
    git(git_vault, "add", "AI/TUNINGS.md")
    number = append(git_vault, "AI/TUNINGS.md", "- **unstaged bad** — 2026-01-01")

    staged = lint(git_vault, "--staged")
    assert staged.code == 0, staged
    assert "in 1 file: all good" in staged.out
    work = lint(git_vault)
    assert work.code == 1
    assert work.out.startswith(f"AI/TUNINGS.md:{number}: ")


def test_staged_secret_is_refused(git_vault: Path) -> None:
    append(
        git_vault, "AI/LEARNINGS.md", f"- **key** — deploy with {github_token()} — me — 2026-01-01"
    )
    git(git_vault, "add", "-A")
    run = lint(git_vault, "--staged")
    assert run.code == 1
    assert "github-token" in run.out


def test_nothing_staged_is_clean(git_vault: Path) -> None:
    append(git_vault, "AI/MEMORY.md", "- **unstaged** — broken")
    run = lint(git_vault, "--staged", "--json")
    assert run.code == 0, run
    assert run.json()["files"] == []


def test_staged_outside_git_is_an_error(vault: Path) -> None:
    run = lint(vault, "--staged")
    assert run.code == 1
    assert "not a git repository" in run.err
    assert run.err.count("\n") == 1


def test_a_named_file_that_does_not_exist_is_an_error_not_a_pass(vault: Path) -> None:
    run = brain("lint", "--vault", str(vault), "AI/MEMROY.md")
    assert run.code == 1
    assert run.err.strip() == "brain: no such file in the vault: AI/MEMROY.md (check the path)"


def test_staged_in_a_vault_that_is_a_folder_of_a_larger_repository(
    vault: Path, tmp_path: Path
) -> None:
    """Git names staged files from the repository's top; lint reads them as the vault's own."""
    import shutil

    repo = tmp_path / "project"
    repo.mkdir()
    shutil.move(vault, repo / "notes")
    inner = repo / "notes"
    (repo / "README.md").write_text("# project\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    number = append(inner, "AI/TUNINGS.md", "- **staged bad** — no date — me")
    git(repo, "add", "-A")

    staged = lint(inner, "--staged")
    assert staged.code == 1, staged
    assert staged.out.startswith(f"AI/TUNINGS.md:{number}: ")
    secret = f"- **key** — deploy with {github_token()} — me — 2026-01-01"
    append(inner, "AI/LEARNINGS.md", secret)
    git(repo, "add", "-A")
    found = brain("secrets", "--staged", "--vault", str(inner))
    assert found.code == 1
    assert "AI/LEARNINGS.md:" in found.out


@pytest.mark.parametrize(
    ("front", "line", "says"),
    [
        ("---\ncode: payments: src/retry.py\n---\n", 2, "is not REPO:PATH or a path"),
        ("---\ntitle: t\ncode:\n  - pay:src/a.py\n  - pay src/b.py\n---\n", 5, "no space"),
        ("---\ncode: payments:../other/x.py\n---\n", 2, "climbs out of its repository"),
        ("---\ncode: payments:src/retry.py\n# Retry\n", 1, "never closed"),
    ],
)
def test_a_notes_code_list_that_drift_cannot_read_is_reported(
    vault: Path, front: str, line: int, says: str
) -> None:
    """brain reindex reads a note's front matter `code:` list to say when its code moved
    (brain/drift.py); an entry it cannot read was ignored without a word."""
    note = vault / "projects" / "payments-notes.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(front + "\nThe retry policy backs off twice.\n", encoding="utf-8")
    run = lint(vault)
    assert run.code == 1, run
    (problem,) = lint(vault, "--json").json()["problems"]
    assert (problem["path"], problem["line"]) == ("projects/payments-notes.md", line)
    assert says in problem["message"]


def test_a_well_formed_code_list_passes(vault: Path) -> None:
    note = vault / "projects" / "pool-notes.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(
        "---\ncode:\n  - payments:src/pool.py\n  - src/retry.py\n  - /srv/app/main.py\n---\n"
        "# Pool\n\nThe pool holds ten.\n",
        encoding="utf-8",
    )
    assert lint(vault).code == 0
