"""What a hostile tester found still breaking through the real CLI, each pinned by a test.

Credentials are built at run time (test_masking's seeded generator): no token literal lives here.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import brain, brain_process, git
from test_masking import AWS, PASSWORD, assert_masked


def test_a_password_wrapped_onto_the_next_line_is_masked_and_named(git_vault: Path) -> None:
    # Hard-wrapped prose: the index joins the two lines into one unit, so the key name and its
    # value meet there; `brain secrets` must name the line before a commit, find must mask it.
    note = git_vault / "notes" / "okapi-wrap.md"
    note.write_text(f"# Okapi\n\nFor the okapi move the staging password is\n{PASSWORD} for now.\n")
    v = ("--vault", str(git_vault))
    for fmt in ("--raw", "--json", "--terse"):
        run = brain("find", *v, fmt, "okapi staging")
        assert run.code == 0, run
        assert "okapi" in run.out
        assert_masked(run.out + run.err, fmt)
    scan = brain("secrets", *v, "notes/okapi-wrap.md")
    assert scan.code == 1, scan
    assert "notes/okapi-wrap.md:3: generic-password" in scan.out + scan.err


def test_queries_that_held_a_credential_are_masked_where_they_are_listed(git_vault: Path) -> None:
    # The usage log keeps queries as asked (the state dir is yours alone); `brain log`, the
    # doctor's frequent bullets and `brain learn` list them, and must mask what they list.
    v = ("--vault", str(git_vault))
    miss = f"quokka xylophonist apikey={PASSWORD}"
    # reaches `staging environment` by its body, and stands out (doctor counts answers that do)
    hit = f"staging scaled to zero every night on weekends to save money password is {PASSWORD}"
    for s in ("s1", "s2", "s3", "s4", "s5"):  # doctor lists a bullet returned 5 times
        for query in (miss, hit):
            brain("find", *v, query, env={"CLAUDECODE": "1", "BRAIN_SESSION": s})
    log = brain("log", *v)
    assert "quokka xylophonist apikey=" in log.out, log
    shown = {"log": log.out + log.err, "log json": brain("log", *v, "--json").out}
    doctor = brain("doctor", *v)
    assert "weekends to save money password is" in doctor.out, doctor
    shown["doctor"] = doctor.out + doctor.err
    shown["doctor json"] = brain("doctor", *v, "--json").out
    learn = brain("learn", *v, "--apply", "--json")
    assert learn.code == 0, learn
    shown["learn"] = learn.out + learn.err
    for name, text in shown.items():
        assert_masked(text, name)
    # nothing of the credential became an alias in the vault (an alias is written folded)
    assert not learn.json()["applied"]
    assert_folded_masked((git_vault / "AI" / "MEMORY.md").read_text("utf-8"))


def assert_folded_masked(text: str) -> None:
    folded, secret = text.casefold(), PASSWORD.casefold()
    for i in range(len(secret) - 11):
        assert secret[i : i + 12] not in folded, text


def test_secrets_skips_a_named_pipe_instead_of_waiting_on_it(git_vault: Path) -> None:
    # The walk never reads a pipe; a pipe named on the command line (or a link to one) blocked
    # the read until something wrote to it: a pre-commit check that never returns.
    os.mkfifo(git_vault / "notes" / "pipe.md")
    (git_vault / "notes" / "to-pipe.md").symlink_to("pipe.md")
    run = brain_process(
        "secrets", "--vault", str(git_vault), "notes/pipe.md", "notes/to-pipe.md", timeout=30
    )
    assert run.code == 1, run  # not read is never clean
    for name in ("notes/pipe.md", "notes/to-pipe.md"):
        assert f"{name}: not a regular file (a pipe, a socket or a device); skipped" in run.err
    assert "2 files not read" in run.out + run.err
    assert brain("secrets", "--vault", str(git_vault)).code == 0  # the walk passes it by


def test_a_file_whose_name_holds_a_credential_is_named_masked_and_never_served(
    git_vault: Path,
) -> None:
    # Every hit prints its path (and a note without a title its name as the section): such a
    # file is skipped by the index, and secrets (so the pre-commit hook) and lint name it masked.
    (git_vault / "notes" / f"okapi-{AWS}.md").write_text("the okapi runner notes\n", "utf-8")
    v = ("--vault", str(git_vault))
    masked = f"notes/okapi-{AWS[:4]}…(20).md"
    shown = {}
    for fmt in ("--json", "--terse", "--raw"):
        run = brain("find", *v, fmt, "okapi runner")
        assert "okapi-" not in run.out, run
        shown[f"find {fmt}"] = run.out + run.err
    scan = brain("secrets", *v)
    assert scan.code == 1, scan
    assert f"{masked}: aws-access-key ({AWS[:4]}…(20))" in scan.out
    shown["secrets"] = scan.out + scan.err
    shown["secrets json"] = brain("secrets", *v, "--json").out
    git(git_vault, "add", "-A")
    staged = brain("secrets", *v, "--staged")
    assert staged.code == 1, staged
    shown["secrets staged"] = staged.out + staged.err
    lint = brain("lint", *v)
    assert lint.code == 1, lint
    assert f"{masked}: the name holds what looks like a credential; skipped" in lint.out + lint.err
    shown["lint"] = lint.out + lint.err
    shown["lint json"] = brain("lint", *v, "--json").out
    shown["reindex"] = brain("reindex", *v, "--full").err
    for name, text in shown.items():
        assert_masked(text, name)


def test_log_and_ledger_say_in_one_line_when_the_state_dir_cannot_be_made(
    vault: Path, tmp_path: Path
) -> None:
    # The state dir's parent is a file: the usage log cannot be opened. A read of the log names
    # it and the fix (exit 1), as the index does, instead of an internal error (exit 3).
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("not a folder\n", "utf-8")
    env = {"XDG_STATE_HOME": str(blocker)}
    for command in ("log", "ledger", "learn"):
        run = brain(command, "--vault", str(vault), env=env)
        assert run.code == 1, (command, run)
        assert run.err.startswith("brain: cannot open the usage log "), (command, run)
        assert "point XDG_STATE_HOME at a writable folder" in run.err
        assert "internal error" not in run.err
        assert not list(tmp_path.rglob("crashes"))


def test_a_credential_in_an_alias_is_named_by_lint_and_the_bullet_still_served(
    git_vault: Path,
) -> None:
    # The mask (`AKIA…(20)`) holds parentheses: inside `(aliases: ...)` it closed the list early,
    # so lint called the bullet malformed (not what it carries) and find lost it.
    memory = git_vault / "AI" / "MEMORY.md"
    head = f"- **okapi runner** (aliases: okapi ci, {AWS})"
    bullet = f"{head} — the okapi runner deploys — me — 2026-11-30"
    memory.write_text(memory.read_text("utf-8").rstrip("\n") + f"\n\n{bullet}\n", "utf-8")
    v = ("--vault", str(git_vault))
    lint = brain("lint", *v)
    assert lint.code == 1, lint
    assert f"bullet carries a credential (aws-access-key: {AWS[:4]}…(20))" in lint.out + lint.err
    assert "expected" not in lint.out + lint.err
    run = brain("find", *v, "--json", "okapi runner")
    (hit,) = [h for h in run.json()["hits"] if h["kind"] == "bullet"]
    assert (hit["handle"], hit["aliases"]) == ("okapi runner", ["okapi ci", f"{AWS[:4]}…(20)"])
    assert_masked(run.out + lint.out + lint.err)


def test_export_refuses_a_target_that_is_a_pipe_instead_of_waiting_on_it(
    vault: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "payments"
    repo.mkdir()
    git(repo, "init", "-q")
    os.mkfifo(repo / "CLAUDE.md")
    (repo / "GEMINI.md").symlink_to("CLAUDE.md")  # a link inside, to the pipe
    for agent in ("claude", "gemini"):
        run = brain_process("export", "--vault", str(vault), agent, cwd=repo, timeout=30)
        assert run.code == 1, run
        assert run.err.startswith(f"brain: {agent.upper()}.md is not a regular file"), run
        assert "then export again" in run.err
    assert not list(repo.glob("*.tmp*"))


def test_a_core_file_or_the_config_that_is_a_pipe_is_named_not_waited_on(git_vault: Path) -> None:
    # AI/config.yaml is read on the way to every find, the core files by lint and every edit:
    # a pipe there blocked each of them until something wrote to it.
    v = ("--vault", str(git_vault))
    config = git_vault / "AI" / "config.yaml"
    os.mkfifo(config)
    found = brain_process("find", *v, "libgit2", "--terse", timeout=30)
    assert found.code == 0, found
    assert "libgit2" in found.out
    config.unlink()
    memory = git_vault / "AI" / "MEMORY.md"
    memory.unlink()
    os.mkfifo(memory)
    pipe = "not a regular file (a pipe, a socket or a device)"
    lint = brain_process("lint", *v, timeout=30)
    assert lint.code == 1, lint
    assert f"AI/MEMORY.md: cannot read it ({pipe}); not checked" in lint.out + lint.err
    proposed = brain_process("propose", *v, "okapi runner — deploys at nine", timeout=30)
    assert proposed.code == 1, proposed
    assert proposed.err.startswith(f"brain: cannot read AI/MEMORY.md: {pipe}"), proposed


def test_import_of_a_named_pipe_nobody_writes_to_returns(git_vault: Path, tmp_path: Path) -> None:
    # Opening a named pipe waits for a writer: import blocked before it read a byte. A pipe that
    # is written to (`brain import <(cat list.md)`, stdin) is still read.
    pipe = tmp_path / "list.md"
    os.mkfifo(pipe)
    v = ("--vault", str(git_vault))
    run = brain_process("import", *v, str(pipe), timeout=30)
    assert run.code == 0, run
    assert "0 proposals added to the inbox" in run.out
    item = "- **okapi runner** — deploys at nine — me — 2026-11-30\n"
    piped = brain_process("import", *v, "/dev/stdin", input=item, timeout=30)
    assert piped.code == 0, piped
    assert "1 proposal added to the inbox" in piped.out


def test_a_vault_config_nested_past_pythons_stack_is_named_in_one_line(vault: Path) -> None:
    """AI/config.yaml travels with the vault from every machine: `[[[[…` a hundred thousand
    deep was a RecursionError, an internal error (exit 3) from every command."""
    (vault / "AI" / "config.yaml").write_text(
        "review: " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8"
    )
    run = brain("find", "deploy", "--vault", str(vault))
    assert run.code == 1, run
    assert run.err.splitlines() == [
        f"brain: {vault / 'AI' / 'config.yaml'} is not valid YAML (fix it (`key: value` lines))"
    ]
