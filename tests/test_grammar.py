"""Every count brain prints agrees with its noun: `1 session`, never `1 sessions`, `1 item(s)` or
`1 problem; fix them`. One helper (brain.text.plural) makes them; a sweep of commands, each run
where the count it prints is one, holds the output to it."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

from conftest import brain, git

from brain.text import noun, plural

# words that end in `s` in the singular: after `1 ` they are no plural
_SINGULAR_S = {"is", "was", "has", "does", "this", "its", "plus", "status", "alias", "process"}
_SINGULAR_S |= {"access", "class", "less", "across", "always", "yes", "ms", "unless", "thus"}
_COUNT = re.compile(r"(?<![\d.,:/-])\b1 (?:[a-z]+ )?([a-z]+s)\b")
_THEM = re.compile(r"(?<![\d.,:/-])\b1 [a-z ]+[;,:]? (?:\w+ )?(?:fix|see|remove|review) them\b")


def agreement(text: str) -> list[str]:
    """What in `text` counts one thing with a plural noun or pronoun, or hedges with `(s)`."""
    found = [m.group(0) for m in _COUNT.finditer(text) if m.group(1) not in _SINGULAR_S]
    found += [m.group(0) for m in _THEM.finditer(text)]
    found += re.findall(r"\w+\((?:s|es)\)", text)
    return found


def test_the_check_finds_what_the_issue_saw_and_passes_good_counts() -> None:
    for bad in (
        "day 2026-12-01: 1 repositories, 1 sessions",
        "Deleted 1 files",
        "1 commits not sent",
        "1 problem; fix them and run `brain lint` again",
        "date 1 verified bullet(s) today",
        "1 new turns",
    ):
        assert agreement(bad), bad
    for good in (
        "1 session, 2 turns, 1 file, 1 commit",
        "1 of 3 bullets make a claim",
        "it took 1 ms",
        "1 is left",
        "1 problem; fix it and run `brain lint` again",
        "version 2.1 files",
        "2026-12-01 sessions",
    ):
        assert not agreement(good), good


def test_plural_and_noun() -> None:
    assert [plural(n, "session") for n in (0, 1, 2)] == ["0 sessions", "1 session", "2 sessions"]
    assert plural(1, "query", "queries") == "1 query"
    assert plural(3, "query", "queries") == "3 queries"
    assert (noun(1, "it", "them"), noun(2, "it", "them")) == ("it", "them")


# --- the sweep -----------------------------------------------------------------------------------


def _one_session_today(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A repository with one commit made today and a Claude Code session in it that wrote one
    file (the transcript in Claude Code's JSONL shape, as tests/test_history_cli.py's fixture)."""
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("shop\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "readme")
    now = dt.datetime.now(dt.UTC)
    at = [(now - dt.timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%S.000Z") for m in (3, 2, 1)]
    session = "c0ffee00-0001-4000-8000-000000000001"
    base = {"sessionId": session, "cwd": str(repo), "version": "2.0.30", "isSidechain": False}
    lines = [
        {**base, "type": "user", "uuid": "u1", "timestamp": at[0],
         "message": {"role": "user", "content": "Write the readme."}},
        {**base, "type": "assistant", "uuid": "a1", "timestamp": at[1],
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "Write",
              "input": {"file_path": str(repo / "README.md"), "content": "shop\n"}}]}},
        {**base, "type": "user", "uuid": "u2", "timestamp": at[2],
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "written"}]}},
        {"type": "ai-title", "aiTitle": "Write the readme", "sessionId": session},
    ]  # fmt: skip
    claude = tmp_path / "claude"
    folder = claude / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    folder.mkdir(parents=True)
    (folder / f"{session}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    env = {"CLAUDE_CONFIG_DIR": str(claude)}
    assert brain("recall", "enable", "claude", env=env).code == 0
    return env, repo


def _checked(*args: str, env: dict[str, str] | None = None, code: int = 0) -> str:
    run = brain(*args, env=env)
    assert run.code == code, (args, run.out, run.err)
    text = run.out + run.err
    assert not agreement(text), (args, agreement(text), text)
    return text


def test_day_and_week_count_one_session_file_and_commit(tmp_path: Path) -> None:
    env, _ = _one_session_today(tmp_path)
    day = _checked("day", env=env)
    assert "1 repository, 1 session, 1 turn, 1 file, 1 commit" in day, day
    week = _checked("week", env=env)
    assert "1 session, 1 turn, 1 file, 1 commit" in week, week


def test_doctor_lint_reindex_and_sync_status_count_one(git_vault: Path, tmp_path: Path) -> None:
    v = str(git_vault)
    memory = git_vault / "AI" / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- **broken bullet\n", encoding="utf-8")
    lint = _checked("lint", "--vault", v, code=1)
    assert "1 problem; fix it and run `brain lint` again" in lint
    reindex = _checked("reindex", "--vault", v)
    assert "1 problem in the vault; run `brain lint` to see it" in reindex
    doctor = _checked("doctor", "--vault", v, code=1)  # no git hooks: one check broken
    assert "1 uncommitted change" in doctor
    assert "1 check broken; run the fix under it" in doctor
    git(git_vault, "checkout", "--", "AI/MEMORY.md")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    assert brain("sync", "connect", str(remote), "--vault", v).code == 0
    memory.write_text(memory.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    git(git_vault, "commit", "-q", "-am", "one more")
    (git_vault / "AI" / "TUNINGS.md").write_text("# Tunings\n", encoding="utf-8")
    status = _checked("sync", "status", "--vault", v)
    assert "Here: 1 changed file not written down, 1 commit not sent" in status


def test_install_uninstall_and_tend_count_one(tmp_path: Path, vault: Path) -> None:
    assert brain("install", str(tmp_path / "v")).code == 0
    uninstall = _checked("uninstall")
    assert "deleted 3 hooks" in uninstall
    assert "(1 index file)" in uninstall
    (vault / "AI" / "INBOX.md").write_text("# Inbox\n", encoding="utf-8")
    tend = _checked("tend", "--dry-run", "--vault", str(vault))
    assert re.search(r"\d+ bullets swept", tend), tend


def test_approving_proposals_for_two_files_says_its_advice_once(vault: Path) -> None:
    (vault / "AI" / "INBOX.md").write_text("# Inbox\n", encoding="utf-8")
    v = str(vault)
    assert brain("propose", "gadget port — the gadget listens on 7001", "--vault", v).code == 0
    line = "gadget timeout — the gadget times out after 9 s"
    assert brain("propose", line, "--to", "LEARNINGS", "--vault", v).code == 0
    out = _checked("inbox", "approve", "all", "--vault", v)
    assert out.count("in the vault yourself") == 1, out
    assert (
        f"Not committed: review and commit AI/MEMORY.md and AI/LEARNINGS.md in the vault "
        f"yourself (git -C {vault} add -- AI/MEMORY.md AI/LEARNINGS.md"
        f" && git -C {vault} commit -v)."
    ) in out


def test_learn_counts_one_lookup(vault: Path) -> None:
    assert brain("find", "libgit2", "--vault", str(vault)).code == 0
    learn = _checked("learn", "--vault", str(vault))
    assert "1 lookup read" in learn, learn
    assert os.environ["HOME"]  # the usage log is this test's own


def test_import_of_one_item_says_review_it(vault: Path, tmp_path: Path) -> None:
    notes = tmp_path / "one.md"
    notes.write_text("- quokka feeder runs at noon\n", encoding="utf-8")
    out = _checked("import", str(notes), "--vault", str(vault))
    assert "1 proposal added to the inbox from" in out
    assert "(1 found); review it with `brain inbox`" in out
