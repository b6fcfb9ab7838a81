"""`brain propose` and `brain inbox`: completing, refusing, queueing, approving, dropping, and
never losing or doubling a bullet (concurrent proposers, a crash in the middle of approve)."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import brain, git, today
from test_contract import KEYS

from brain.commands import inbox as inboxmod
from brain.commands.find import find
from brain.commands.propose import complete, propose

TODAY = dt.date.today().isoformat()  # for complete(), which is given the date
PROPOSE_KEYS = KEYS["`propose`"]
INBOX_KEYS = KEYS["`inbox`"]
PROPOSAL_KEYS = KEYS["`inbox` proposal"]
APPROVE_KEYS = KEYS["`inbox approve`"]
DROP_KEYS = KEYS["`inbox drop`"]


def lines_of(vault: Path, rel: str) -> list[str]:
    return (vault / rel).read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize(
    ("line", "bullet"),
    [
        (
            "helm timeouts — use --timeout 10m",
            f"- **helm timeouts** — use --timeout 10m — me — {TODAY}",
        ),
        ("**x** (aliases: y, z) — fact", f"- **x** (aliases: y, z) — fact — me — {TODAY}"),
        ("- **x** — fact — 2025-01-02", "- **x** — fact — me — 2025-01-02"),
        ("**x** — fact — docs — 2025-01-02", "- **x** — fact — docs — 2025-01-02"),
        ("**x** fact without a dash", f"- **x** — fact without a dash — me — {TODAY}"),
        ("a — b\n  wrapped", f"- **a** — b wrapped — me — {TODAY}"),
        # every form the README shows: with or without `- ` and `**`, aliases, source and date
        ("- **okapi backfill** — fact", f"- **okapi backfill** — fact — me — {TODAY}"),
        ("- okapi backfill — fact", f"- **okapi backfill** — fact — me — {TODAY}"),
        (
            "celery beat (aliases: scheduler) — fact",
            f"- **celery beat** (aliases: scheduler) — fact — me — {TODAY}",
        ),
        (
            "- celery beat (aliases: scheduler, beat) — fact — docs — 2025-01-02",
            "- **celery beat** (aliases: scheduler, beat) — fact — docs — 2025-01-02",
        ),
        (
            "- **handle** (aliases: what a searcher types) — the fact — source — 2025-01-02",
            "- **handle** (aliases: what a searcher types) — the fact — source — 2025-01-02",
        ),
        ("okapi — fact — 2025-01-02", "- **okapi** — fact — me — 2025-01-02"),
    ],
)
def test_complete(line: str, bullet: str) -> None:
    assert complete(line, "me", TODAY) == bullet


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("this is not a bullet", "it is not a bullet: it has no handle"),
        ("Postgres runs on Cloud SQL, always", "it is not a bullet: it has no handle"),
        ("helm timeouts - use a hyphen", "it is not a bullet: it has no handle"),
        ("**celery beat (aliases: scheduler)** — fact", "holds its aliases"),
        ("celery beat (aliases: scheduler — fact", "the aliases have no closing `)`"),
        ("okapi — 2025-01-02", "the line has no fact"),
        ("- ", "the line is empty"),
    ],
)
def test_complete_refuses_what_is_not_a_bullet(line: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        complete(line, "me", TODAY)


def test_propose_takes_the_readmes_forms_on_the_command_line(vault: Path) -> None:
    run = brain("propose", "--vault", str(vault), "- **okapi backfill** — backfill runs nightly")
    assert run.code == 0, run
    assert f"- **okapi backfill** — backfill runs nightly — script — {today()}" in run.out
    run = brain(
        "propose", "--vault", str(vault), "--json", "- okapi two — fact", "--to", "LEARNINGS"
    )
    assert (run.json()["markdown"], run.json()["to"]) == (
        f"- **okapi two** — fact — script — {today()}",
        "LEARNINGS",
    )
    run = brain("propose", "--vault", str(vault), "celery beat (aliases: scheduler) — runs cron")
    assert run.code == 0, run
    number = str(len(inboxmod.proposals(vault)))
    assert brain("inbox", "--vault", str(vault), "approve", number).code == 0
    for name in ("celery beat", "scheduler"):
        doc = brain("locate", "--vault", str(vault), "--json", name).json()
        assert doc["count"] == 1, name
        assert doc["matches"][0]["handle"] == "celery beat"
    assert brain("lint", "--vault", str(vault)).code == 0


def test_propose_refuses_a_line_that_is_not_a_bullet_with_the_reason(vault: Path) -> None:
    before = lines_of(vault, "AI/INBOX.md")
    run = brain("propose", "--vault", str(vault), "this is not a bullet")
    assert run.code == 1
    assert "it is not a bullet: it has no handle; write `handle — fact`" in run.err
    assert lines_of(vault, "AI/INBOX.md") == before


def test_propose_refuses_control_characters_and_never_prints_them(vault: Path) -> None:
    before = lines_of(vault, "AI/INBOX.md")
    for line in ("okapi — \x1b[31mred\x1b[0m", "okapi — bell\x07 rings"):
        run = brain("propose", "--vault", str(vault), "--json", line)
        assert run.code == 1
        assert "holds control characters" in run.json()["error"]
        assert "\x1b" not in run.out + run.err
    assert lines_of(vault, "AI/INBOX.md") == before


def test_propose_appends_to_the_inbox_which_find_never_searches(vault: Path) -> None:
    result = propose(vault, "zebra crossing — the zebra crossing on Elm St is the quick way")
    assert result.action == "proposed"
    assert result.number == 4  # the fixture's inbox holds three
    assert lines_of(vault, "AI/INBOX.md")[-2] == result.markdown
    assert result.markdown.endswith(f" — {today()}")
    assert find(vault, "zebra crossing").hits == ()


def test_propose_refuses_what_is_not_a_bullet_or_holds_a_credential(vault: Path) -> None:
    before = lines_of(vault, "AI/INBOX.md")
    run = brain("propose", "--vault", str(vault), "**x** — fact — me — 2025-13-45")
    assert run.code == 1
    assert "valid date" in run.err
    run = brain("propose", "--vault", str(vault), "aws key — AKIAZ7Q3XK2M9PLW4RTN in prod")
    assert run.code == 1
    assert "credential" in run.err
    assert "AKIAZ7Q3XK2M9PLW4RTN" not in run.err
    assert lines_of(vault, "AI/INBOX.md") == before


def test_the_caller_is_the_source(vault: Path) -> None:
    run = brain(
        "propose", "--vault", str(vault), "--json", "kiwi — a fact", env={"BRAIN_CALLER": "codex"}
    )
    doc = run.json()
    assert list(doc) == PROPOSE_KEYS
    assert doc["markdown"] == f"- **kiwi** — a fact — codex — {today()}"


def test_proposing_twice_adds_nothing(vault: Path) -> None:
    assert propose(vault, "kiwi — a fact", source="a").action == "proposed"
    assert propose(vault, "kiwi — a fact", source="b").action == "queued"
    assert propose(vault, "**libgit2** — " + _fact(vault, "libgit2"), source="b").action == "known"


def _fact(vault: Path, handle: str) -> str:
    from brain.vault import parse_bullet

    for line in lines_of(vault, "AI/LEARNINGS.md"):
        if line.startswith(f"- **{handle}**"):
            return parse_bullet(line).fact
    raise AssertionError(handle)


def test_inbox_numbers_the_queue_and_flags_updates(vault: Path) -> None:
    propose(vault, "brain cli — brain is written in Python 3.12", source="me", force=True)
    run = brain("inbox", "--vault", str(vault))
    assert run.code == 0
    assert "  1. - **zanzibar quota**" in run.out
    assert "  4. - **brain cli** — brain is written in Python 3.12" in run.out
    assert "updates AI/MEMORY.md:9: - **brain cli** (aliases: brain, memory cli)" in run.out
    doc = brain("inbox", "--vault", str(vault), "--json").json()
    assert list(doc) == INBOX_KEYS
    assert [list(p) for p in doc["proposals"]] == [PROPOSAL_KEYS] * 4
    assert doc["proposals"][3]["updates"] == "AI/MEMORY.md:9"


def test_approve_moves_a_proposal_and_reindexes(vault: Path) -> None:
    propose(vault, "zebra crossing — the quick way over Elm St", to="LEARNINGS", source="me")
    assert find(vault, "zebra").hits == ()
    run = brain("inbox", "--vault", str(vault), "approve", "4", "--json")
    doc = run.json()
    assert list(doc) == APPROVE_KEYS
    assert doc["path"] == "AI/LEARNINGS.md"
    assert "commit" in doc["commit"]
    learnings = lines_of(vault, "AI/LEARNINGS.md")
    assert learnings[doc["line"] - 1] == doc["markdown"]
    assert inboxmod.APPROVED_HEADING in learnings
    assert not any("zebra" in line for line in lines_of(vault, "AI/INBOX.md"))
    (hit,) = find(vault, "zebra crossing").hits  # the index followed without a reindex
    assert hit.path == "AI/LEARNINGS.md"
    assert hit.section == "From the inbox"
    text = brain("inbox", "--vault", str(vault), "approve", "1").out
    assert "Approved #1 in AI/MEMORY.md" in text
    assert "Not committed" in text


def test_approve_to_overrides_and_a_second_approval_joins_the_section(vault: Path) -> None:
    inboxmod.approve(vault, 1, "TUNINGS")
    inboxmod.approve(vault, 1, "tunings")
    tunings = lines_of(vault, "AI/TUNINGS.md")
    start = tunings.index(inboxmod.APPROVED_HEADING)
    assert tunings[start + 1 :] == [
        "",
        tunings[start + 2],
        tunings[start + 3],
        "",
    ]
    assert tunings[start + 2].startswith("- **zanzibar quota**")
    assert tunings[start + 3].startswith("- **brain find json**")
    run = brain("lint", "--vault", str(vault))
    assert run.code == 0, run


def test_approving_an_update_replaces_the_bullet_in_place(vault: Path) -> None:
    before = lines_of(vault, "AI/MEMORY.md")
    propose(vault, "brain cli — brain is written in Python 3.12", source="me", force=True)
    result = inboxmod.approve(vault, 4, "LEARNINGS")  # an update stays where its bullet is
    after = lines_of(vault, "AI/MEMORY.md")
    assert result.path == "AI/MEMORY.md"
    assert result.line == 9
    assert result.replaced == before[8]
    fact = "brain is written in Python 3.12"
    assert after[8] == f"- **brain cli** (aliases: brain, memory cli) — {fact} — me — {today()}"
    assert len(after) == len(before)
    assert sum(1 for line in after if line.startswith("- **brain cli**")) == 1


def test_drop(vault: Path) -> None:
    doc = brain("inbox", "--vault", str(vault), "drop", "2", "--json").json()
    assert list(doc) == DROP_KEYS
    assert doc["remaining"] == 2
    text = "\n".join(lines_of(vault, "AI/INBOX.md"))
    assert "brain find json" not in text
    assert "zanzibar quota" in text


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["approve", "9"], 2),
        (["approve", "0"], 2),
        (["approve"], 2),
        (["promote", "1"], 2),
        (["drop", "1", "--to", "MEMORY"], 2),
        (["approve", "1", "--to", "NOTES"], 2),
    ],
)
def test_bad_inbox_commands(vault: Path, args: list[str], code: int) -> None:
    run = brain("inbox", "--vault", str(vault), *args)
    assert run.code == code, run
    assert "Traceback" not in run.err


# --- several at once: `drop 1 2`, `approve 1-3`, `approve all` ---------------------------------


def _inbox_files(vault: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((vault / "AI").glob("*.md"))}


def test_drop_several_numbers_them_as_the_listing_before(vault: Path) -> None:
    run = brain("inbox", "drop", "1", "3", "--vault", str(vault))
    assert run.code == 0, run
    assert run.out.splitlines() == [
        "Dropped #1: - **zanzibar quota** (aliases: quota exhaustion) — the Paynova sandbox"
        " enforces a hidden zanzibar quota of 500 calls per hour per merchant key — claude"
        " — 2026-11-04",
        "Dropped #3: - **helm diff plugin** — run helm diff upgrade before every helm upgrade on"
        " staging-eu-1 — session 2026-11-06 — 2026-11-06",
        "1 left in the inbox.",
    ]
    (left,) = inboxmod.proposals(vault)
    assert left.handle == "brain find json"


def test_approve_a_range_in_one_command(vault: Path) -> None:
    doc = brain("inbox", "--vault", str(vault), "approve", "2-3", "--json").json()
    assert list(doc) == ["approved"]
    assert [d["number"] for d in doc["approved"]] == [2, 3]
    assert [list(d) for d in doc["approved"]] == [APPROVE_KEYS] * 2
    memory = lines_of(vault, "AI/MEMORY.md")
    for d in doc["approved"]:
        assert d["markdown"] in memory
    assert [p.handle for p in inboxmod.proposals(vault)] == ["zanzibar quota"]
    assert len(find(vault, "helm diff upgrade staging").hits) >= 1  # the index followed


def test_approve_all_empties_the_inbox(vault: Path) -> None:
    run = brain("inbox", "approve", "all", "--to", "LEARNINGS", "--vault", str(vault))
    assert run.code == 0, run
    assert [line.split(" in ")[0] for line in run.out.splitlines()[:3]] == [
        "Approved #1",
        "Approved #2",
        "Approved #3",
    ]
    assert "0 left in the inbox" in run.out
    assert inboxmod.proposals(vault) == []
    assert sum("**helm diff plugin**" in line for line in lines_of(vault, "AI/LEARNINGS.md")) == 1


def test_two_proposals_for_one_handle_approved_together_leave_one_bullet(vault: Path) -> None:
    """The second is read after the first went in: it updates that bullet, never doubles it."""
    propose(vault, "kiwi rule — first version", source="me")
    propose(vault, "kiwi rule — second version", source="me")
    assert brain("inbox", "approve", "4-5", "--vault", str(vault)).code == 0
    kiwi = [line for line in lines_of(vault, "AI/MEMORY.md") if "**kiwi rule**" in line]
    assert len(kiwi) == 1
    assert "second version" in kiwi[0]


@pytest.mark.parametrize(
    ("action", "words", "says"),
    [
        ("drop", ["1", "9"], "there is no proposal 9; the inbox holds 1 to 3"),
        ("approve", ["1-9"], "there is no proposal 9; the inbox holds 1 to 3"),
        ("approve", ["3-1"], "the range 3-1 runs backwards"),
        ("drop", ["1", "x"], "'x' is not a proposal number, a range such as 1-3, or all"),
        ("approve", ["1-"], "'1-' is not a proposal number"),
        ("drop", ["0-2"], "there is no proposal 0"),
    ],
)
def test_a_bad_number_among_several_changes_nothing(
    vault: Path, action: str, words: list[str], says: str
) -> None:
    before = _inbox_files(vault)
    run = brain("inbox", action, *words, "--vault", str(vault))
    assert run.code == 2, run
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert says in run.err
    assert _inbox_files(vault) == before


def test_approve_all_refuses_all_when_one_cannot_be_approved(vault: Path) -> None:
    inbox = vault / "AI" / "INBOX.md"
    inbox.write_text(inbox.read_text(encoding="utf-8") + "- not a bullet at all\n", "utf-8")
    before = _inbox_files(vault)
    run = brain("inbox", "approve", "all", "--vault", str(vault))
    assert run.code == 1, run
    assert run.err.count("\n") == 1
    assert "proposal 4 is not a valid bullet" in run.err
    assert _inbox_files(vault) == before


def test_an_empty_inbox(vault: Path) -> None:
    (vault / "AI" / "INBOX.md").unlink()
    assert brain("inbox", "--vault", str(vault)).out == "The inbox is empty.\n"
    assert brain("inbox", "--vault", str(vault), "approve", "1").code == 1
    propose(vault, "kiwi — a fact", source="me")
    assert lines_of(vault, "AI/INBOX.md")[0] == "# Inbox"  # the starter's header came back


# --- never lose a line, never keep one twice ---------------------------------------------------

_PROPOSER = """
import sys
from pathlib import Path
from brain.commands.propose import propose
vault, who = Path(sys.argv[1]), sys.argv[2]
for i in range(15):
    propose(vault, f"note {who} {i} — proposed by {who}, number {i}", source=who)
"""


def test_concurrent_proposers_lose_nothing(vault: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PROPOSER, str(vault), f"agent{n}"],
            env=os.environ.copy(),
            stderr=subprocess.PIPE,
        )
        for n in range(6)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    found = [p.handle for p in inboxmod.proposals(vault)]
    wanted = {f"note agent{n} {i}" for n in range(6) for i in range(15)}
    assert wanted <= set(found)
    assert len(found) == len(set(found)) == 3 + len(wanted)


class Crash(Exception):
    pass


def test_a_crash_between_the_two_writes_is_finished_next_time(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    propose(vault, "zebra crossing — the quick way over Elm St", source="me")

    def crash(_vault: Path) -> None:
        raise Crash

    with monkeypatch.context() as patch:
        patch.setattr(inboxmod, "_after_core_write", crash)
        with pytest.raises(Crash):
            inboxmod.approve(vault, 4)
    assert inboxmod.journal_path(vault).exists()
    listing = inboxmod.inbox(vault)  # any inbox command finishes the approval first
    assert (listing.recovered or "").startswith("- **zebra crossing**")
    memory = lines_of(vault, "AI/MEMORY.md")
    assert sum(1 for line in memory if line.startswith("- **zebra crossing**")) == 1
    assert [p.handle for p in listing.proposals] == [
        "zanzibar quota",
        "brain find json",
        "helm diff plugin",
    ]
    assert not inboxmod.journal_path(vault).exists()
    assert len(find(vault, "zebra crossing").hits) == 1


def test_a_crash_before_the_core_write_is_finished_by_the_next_approve(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = inboxmod.write

    def crash(vault_: Path, rel: str, text: str, *, was: str) -> None:
        raise Crash

    monkeypatch.setattr(inboxmod, "write", crash)
    with pytest.raises(Crash):
        inboxmod.approve(vault, 1)
    monkeypatch.setattr(inboxmod, "write", real_write)
    assert inboxmod.journal_path(vault).exists()
    assert not any("zanzibar" in line for line in lines_of(vault, "AI/MEMORY.md"))
    run = brain("inbox", "--vault", str(vault), "approve", "1")  # re-run: finishes, then stops
    assert run.code == 1
    assert "numbers have changed" in run.err
    assert sum(1 for line in lines_of(vault, "AI/MEMORY.md") if "zanzibar" in line) == 1
    assert not any("zanzibar" in line for line in lines_of(vault, "AI/INBOX.md"))
    assert not inboxmod.journal_path(vault).exists()


def test_replaying_a_journal_twice_changes_nothing(vault: Path) -> None:
    intent = {
        "bullet": "- **kiwi** — a fact — me — 2025-01-01",
        "target": "AI/MEMORY.md",
        "replace": "",
        "inbox": "- **zanzibar quota** (aliases: quota exhaustion) — the Paynova sandbox enforces a"
        " hidden zanzibar quota of 500 calls per hour per merchant key — claude — 2026-11-04",
    }
    inboxmod._apply(vault, intent)
    once = (lines_of(vault, "AI/MEMORY.md"), lines_of(vault, "AI/INBOX.md"))
    inboxmod._apply(vault, intent)
    assert (lines_of(vault, "AI/MEMORY.md"), lines_of(vault, "AI/INBOX.md")) == once


def test_a_hand_edited_inbox_line_with_control_characters_is_listed_escaped(vault: Path) -> None:
    """`propose` refuses control characters, but a person may paste one into AI/INBOX.md by hand:
    the listing must not send ESC to the terminal that reads it."""
    inbox = vault / "AI" / "INBOX.md"
    with inbox.open("a", encoding="utf-8") as fh:
        fh.write("- **okapi** — \x1b[2Jred\x1b[0m stripes — me — 2026-11-30\n")
    run = brain("inbox", "--vault", str(vault))
    assert run.code == 0, run.err
    assert "\x1b" not in run.out + run.err
    assert "\\x1b[2Jred" in run.out
    assert "not a valid bullet: control characters (ESC); remove them" in run.out  # as approve says
    number = next(line for line in run.out.splitlines() if "okapi" in line).split(".")[0].strip()
    approve = brain("inbox", "approve", number, "--vault", str(vault))
    assert "\x1b" not in approve.out + approve.err
    assert approve.code == 1
    assert "not a valid bullet: control characters (ESC)" in approve.err


# --- a person editing the files while brain writes them -----------------------------------------


class Person:
    """Types a bullet at the end of `rel` each time brain has just read it: brain's next write
    is of a file that changed since it was read. Everything typed must be kept."""

    def __init__(self, vault: Path, rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
        from brain import edits
        from brain.commands import hygiene

        self.vault, self.rel, self.typed = vault, rel, list[str]()
        real = edits.read

        def read(vault_: Path, rel_: str) -> str:
            text = real(vault_, rel_)
            if rel_ == self.rel:
                line = f"- **typed {len(self.typed)}** — typed by hand — me — {TODAY}"
                with (self.vault / self.rel).open("a", encoding="utf-8") as fh:
                    fh.write(("" if text.endswith("\n") or not text else "\n") + line + "\n")
                self.typed.append(line)
            return text

        for module in (edits, inboxmod, hygiene):
            monkeypatch.setattr(module, "read", read)

    def kept(self) -> None:
        text = (self.vault / self.rel).read_text(encoding="utf-8")
        assert self.typed
        for line in self.typed:
            assert text.count(line) == 1, (line, text)


def test_a_bullet_typed_into_memory_while_approve_writes_it_is_kept(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = Person(vault, "AI/MEMORY.md", monkeypatch)
    result = inboxmod.approve(vault, 1)
    person.kept()
    memory = lines_of(vault, "AI/MEMORY.md")
    assert memory.count(result.markdown) == 1
    assert memory[result.line - 1] == result.markdown  # where it is, the typed lines merged in
    assert not any(result.markdown == line for line in lines_of(vault, "AI/INBOX.md"))


def test_a_line_typed_into_the_inbox_while_propose_and_drop_write_it_is_kept(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = Person(vault, "AI/INBOX.md", monkeypatch)
    propose(vault, "kept okapi — proposed while a person types", source="me")
    inboxmod.drop(vault, 1)
    person.kept()
    inbox = lines_of(vault, "AI/INBOX.md")
    assert f"- **kept okapi** — proposed while a person types — me — {TODAY}" in inbox
    assert not any("zanzibar quota" in line for line in inbox)  # proposal 1 was dropped


def test_approve_writes_through_a_hard_linked_memory(vault: Path, tmp_path: Path) -> None:
    """A MEMORY.md hard-linked elsewhere (a backup tool's, a second checkout's) stays one file:
    the approved bullet is in both names, the link is not split into two files."""
    memory = vault / "AI" / "MEMORY.md"
    elsewhere = tmp_path / "MEMORY-link.md"
    os.link(memory, elsewhere)
    result = inboxmod.approve(vault, 1)
    assert memory.stat().st_ino == elsewhere.stat().st_ino
    assert memory.stat().st_nlink == 2
    assert result.markdown in elsewhere.read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize(
    "steps", [[("approve", "all")], [("drop", "all")], [("approve", "2"), ("drop", "1")]]
)
def test_a_drained_inbox_is_byte_for_byte_as_before_the_first_proposal(
    git_vault: Path, steps: list[tuple[str, str]]
) -> None:
    """propose puts a blank line between the inbox's header and its first proposal; approving or
    dropping the last one takes that line too, so a drained inbox leaves `git status` clean and
    the approval's "review and commit" names every file that changed."""
    from brain.shipped import starter_file

    (git_vault / "AI/INBOX.md").write_text(starter_file("INBOX.md"), encoding="utf-8")
    git(git_vault, "commit", "-qam", "the starter inbox")
    before = (git_vault / "AI/INBOX.md").read_bytes()
    v = ("--vault", str(git_vault))
    assert brain("propose", *v, "okapi one — the first fact here").code == 0
    assert brain("propose", *v, "okapi two — the second fact here").code == 0
    for verb, which in steps:
        run = brain("inbox", *v, verb, which)
        assert run.code == 0, run
    assert (git_vault / "AI/INBOX.md").read_bytes() == before
    assert "AI/INBOX.md" not in git(git_vault, "status", "--porcelain")


def test_an_inbox_over_the_size_brain_reads_is_refused_in_one_line(vault: Path) -> None:
    """A synced 200 MB AI/INBOX.md took every `brain inbox` 1.8 s and 640 MB, and propose read it
    whole to append a line: over vault.NOTE_MAX it is named in one line, with what to do, and
    nothing is written."""
    from brain.vault import NOTE_MAX

    inbox = vault / "AI" / "INBOX.md"
    line = "- **filler** — a proposal that came in bulk — bot — 2026-01-01\n"
    inbox.write_text("# Inbox\n\n" + line * (NOTE_MAX // len(line) + 10), encoding="utf-8")
    before = inbox.read_bytes()
    for args in (
        ("inbox",),
        ("propose", "- **okapi** — okapi backfill runs nightly"),
        ("inbox", "approve", "1"),
    ):
        run = brain(*args, "--vault", str(vault))
        assert run.code != 0, (args, run)
        assert "Traceback" not in run.err
        said = run.err.strip().splitlines()
        assert len(said) == 1, (args, run.err)
        assert re.search(r"AI/INBOX\.md is 4\.\d+ MB, over the 4 MB brain reads of a file", said[0])
        assert "trim or split" in said[0]
    assert inbox.read_bytes() == before
