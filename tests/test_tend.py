"""A vault that keeps itself true: `brain verify`, `brain learn`, `brain tend` and its hygiene
items approved through the inbox, `brain review`, and doctor's additions. Real git vaults with
history, real processes for the hook and the daily sweep."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_VAULT, brain, git, today
from test_contract import KEYS

from brain import config, usage
from brain.commands import hygiene
from brain.commands import inbox as inboxmod
from brain.commands import learn as learnmod
from brain.commands import tend as tendmod
from brain.commands import verify as verifymod
from brain.commands.doctor import doctor
from brain.commands.propose import propose
from brain.errors import BrainError

OLD = "2025-01-02"
# the fixture's **payments service**, and restated with a newer Go
PAYMENTS_122 = (
    "payments is a Go 1.22 service in front of Postgres 15 that talks to two providers, Stripe"
    " for EU cards and Paynova for Turkish cards"
)
PAYMENTS_123 = (
    "payments is a Go 1.23 service in front of Postgres 15 that talks to two providers, Stripe"
    " for EU cards and Paynova for Turkish cards"
)


def add(vault: Path, *lines: str, rel: str = "AI/MEMORY.md") -> None:
    path = vault / rel
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(text + "\n" + "".join(f"{line}\n" for line in lines), encoding="utf-8")


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def snapshot(vault: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(vault)): p.read_bytes()
        for p in sorted(vault.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def claims(vault: Path, handle: str) -> dict[str, str]:
    result = verifymod.verify(vault, [handle])
    (checked,) = result.bullets
    return {c.text: c.status for c in checked.claims}


@pytest.fixture
def history_vault(git_vault: Path) -> Path:
    """The fixture vault with a second commit on top of the first (a vault with history)."""
    add(git_vault, f"- **scratch** — a second commit — test — {OLD}")
    commit_all(git_vault, "second")
    return git_vault


# --- verify --------------------------------------------------------------------------------------


def test_verify_knows_brains_own_commands(vault: Path) -> None:
    add(vault, f"- **brain cmds** — run `brain find x`, not `brain frobnicate --now` — me — {OLD}")
    assert claims(vault, "brain cmds") == {
        "brain find": verifymod.PASSED,
        "brain frobnicate": verifymod.FAILED,
    }


def test_verify_paths_pass_fail_and_cannot_check(history_vault: Path, tmp_path: Path) -> None:
    here = tmp_path / "tool.sh"
    here.write_text("echo\n")
    add(
        history_vault,
        f"- **local tool** — the tool is {here} and {tmp_path}/gone.sh — me — {OLD}",
        f"- **bob laptop** — the build lives in /Users/bob/work/build.sh and "
        f"/home/nobody-here-xyz/src/app.py — me — {OLD}",
        f"- **home file** — settings live in ~/.brain-test-missing/settings.toml — me — {OLD}",
    )
    got = claims(history_vault, "local tool")
    assert got == {str(here): "passed", f"{tmp_path}/gone.sh": "failed"}
    # A path on another machine is never "failed"
    assert set(claims(history_vault, "bob laptop").values()) == {verifymod.UNKNOWN}
    # its folder ~/.brain-test-missing is not here either, and no repository here holds it
    assert set(claims(history_vault, "home file").values()) == {verifymod.UNKNOWN}


def test_verify_vault_files_commits_commands_and_brain_subcommands(history_vault: Path) -> None:
    head = git(history_vault, "rev-parse", "HEAD").strip()
    first = git(history_vault, "rev-list", "--max-parents=0", "HEAD").strip()
    # a hash is told from a number by its letters (brain.claims): the shortest prefix of twelve
    # or more that holds one (all twelve were digits in one run of 300: 004122324249)
    short = next(first[:n] for n in range(12, 41) if re.search("[a-f]", first[:n]))
    name = history_vault.name  # the vault names its own repository by its folder's name
    add(
        history_vault,
        f"- **release commit** — the {name} fixture landed in {short} and {head};"
        f" `git log --oneline` shows both — me — {OLD}",
        f"- **ghost commit** — the {name} fix is 0123abc4567 — me — {OLD}",
        f"- **elsewhere commit** — fixed upstream in 89ab12cd34ef — me — {OLD}",
        f"- **tools** — `nosuchtool-xyz run --fast` and `brain serve --port 1` and"
        f" `brain find --json` — me — {OLD}",
        f"- **files** — see AI/INBOX.md, AI/NOPE.md and TUNINGS.md — me — {OLD}",
    )
    assert claims(history_vault, "release commit") == {
        short: "passed",
        head: "passed",
        "git": "passed",
    }
    assert claims(history_vault, "ghost commit") == {"0123abc4567": "failed"}
    assert claims(history_vault, "elsewhere commit") == {"89ab12cd34ef": verifymod.UNKNOWN}
    assert claims(history_vault, "tools") == {
        "nosuchtool-xyz": "failed",
        "brain serve": "failed",
        "brain find": "passed",
    }
    assert claims(history_vault, "files") == {
        "AI/INBOX.md": "passed",
        "AI/NOPE.md": "failed",
        "TUNINGS.md": "passed",
    }


def test_verify_reads_no_claim_from_plain_prose(vault: Path) -> None:
    add(
        vault,
        f"- **prose only** — CI/CD and/or TCP/IP in Europe/Istanbul, 24/7, see"
        f" https://example.com/a/b.html and next/image — me — {OLD}",
    )
    result = verifymod.verify(vault, ["prose only"])
    assert (result.checked, result.with_claims, result.bullets) == (1, 0, ())


def test_verify_cli_json_exit_code_and_apply(history_vault: Path) -> None:
    add(history_vault, f"- **inbox file** — proposals wait in AI/INBOX.md — me — {OLD}")
    run = brain("verify", "inbox file", "--vault", str(history_vault), "--json")
    assert run.code == 0, run.err
    doc = run.json()
    assert list(doc) == [
        "vault",
        "checked",
        "with_claims",
        "passed_count",
        "failed_count",
        "bullets",
        "dated",
        "repositories",
    ]
    assert list(doc["bullets"][0]) == ["path", "line", "handle", "date", "claims", "verdict"]
    assert list(doc["bullets"][0]["claims"][0]) == ["kind", "text", "status", "detail"]
    assert doc["bullets"][0]["verdict"] == "passed"
    assert doc["dated"] == []
    run = brain("verify", "inbox file", "--apply", "--vault", str(history_vault))
    assert run.code == 0, run.err
    assert f"- **inbox file** — proposals wait in AI/INBOX.md — me — {today()}" in (
        history_vault / "AI/MEMORY.md"
    ).read_text(encoding="utf-8")
    add(history_vault, f"- **gone file** — it lived in AI/GONE.md — me — {OLD}")
    run = brain("verify", "gone file", "--vault", str(history_vault))
    assert run.code == 1
    assert "failed" in run.out


# --- learn ---------------------------------------------------------------------------------------


def log_finds(vault: Path, query: str, sessions: list[str]) -> None:
    for s in sessions:
        usage.record("find", "claude-code", s, query, 1, 100, vault)


def test_learn_proposes_what_people_search_with_and_lists_unused_aliases(vault: Path) -> None:
    # "heater" is only in the fact: the query reaches the bullet by its body, not by a name
    add(
        vault,
        f"- **zebrafish tank** (aliases: fish) — the heater is set to 26 degrees — me — {OLD}",
    )
    log_finds(vault, "heater degrees", ["s1", "s2"])
    log_finds(vault, "zebrafish tank", ["s1"])  # by its handle: teaches nothing
    result = learnmod.learn(vault, mode="keyword")
    (p,) = [p for p in result.proposed if p.handle == "zebrafish tank"]
    assert p.alias == "heater degrees"
    assert (p.lookups, p.session_count) == (2, 2)
    assert ("zebrafish tank", "fish") in {(u.handle, u.alias) for u in result.unused}
    run = brain("learn", "--apply", "--vault", str(vault), "--json")
    assert run.code == 0, run.err
    doc = run.json()
    assert list(doc) == [
        "vault",
        "lookups",
        "query_count",
        "proposed",
        "unused",
        "applied",
        "stopped",
    ]
    assert any(a.endswith("heater degrees") for a in doc["applied"])
    text = (vault / "AI/MEMORY.md").read_text(encoding="utf-8")
    assert "- **zebrafish tank** (aliases: fish, heater degrees) — the heater is set" in text


# --- tend: the sweep -----------------------------------------------------------------------------


@pytest.fixture
def tended(history_vault: Path, tmp_path: Path) -> Path:
    """A vault with one of each: a bullet restated under its handle, a bullet whose claims all
    fail, a verified bullet with an old date, committed."""
    add(
        history_vault,
        f"- **payments service** — {PAYMENTS_123} — me — 2026-11-20",
        f"- **old deploy** — run `deployctl-xyz push` from {tmp_path}/deploy.sh — me — {OLD}",
        f"- **inbox file** — proposals wait in AI/INBOX.md — me — {OLD}",
    )
    commit_all(history_vault, "things to tend")
    return history_vault


def test_dry_run_writes_nothing_and_says_what_and_why(tended: Path) -> None:
    before = snapshot(tended)
    result = tendmod.tend(tended, dry_run=True)
    assert snapshot(tended) == before
    ops = {p.op: p for p in result.proposed}
    assert set(ops) == {"merge", "drop", "date"}
    assert "every claim failed" in ops["drop"].why
    assert "deployctl-xyz" in ops["drop"].why
    assert "payments service" in ops["merge"].summary
    assert "inbox file" in ops["date"].summary


def test_tend_queues_items_once_and_approve_applies_each(tended: Path) -> None:
    result = tendmod.tend(tended)
    assert len(result.proposed) == 3
    again = tendmod.tend(tended)
    assert again.proposed == ()
    assert again.waiting_count == 3
    listing = inboxmod.inbox(tended)
    items = [p for p in listing.proposals if p.kind == "hygiene"]
    assert [p.markdown.split(":")[1].strip().split()[0] for p in items] == ["merge", "drop", "date"]
    memory = tended / "AI/MEMORY.md"
    # merge: the newest stays (with the older one's aliases), the older goes to AI/DROPPED.md
    done = inboxmod.approve(tended, items[0].number)
    assert done.path == "AI/MEMORY.md"
    assert done.replaced is None  # a hygiene item replaces no one bullet: null in JSON, not ""
    text = memory.read_text(encoding="utf-8")
    assert text.count("**payments service**") == 1
    assert f"- **payments service** (aliases: payments api, payments) — {PAYMENTS_123}" in text
    dropped = (tended / config.DROPPED).read_text(encoding="utf-8")
    assert "payments is a Go 1.22 service" in dropped
    # drop (numbers moved up by one)
    items = [p for p in inboxmod.inbox(tended).proposals if p.kind == "hygiene"]
    inboxmod.approve(tended, items[0].number)
    assert "**old deploy**" not in memory.read_text(encoding="utf-8")
    assert "**old deploy**" in (tended / config.DROPPED).read_text(encoding="utf-8")
    # date
    items = [p for p in inboxmod.inbox(tended).proposals if p.kind == "hygiene"]
    inboxmod.approve(tended, items[0].number)
    assert f"- **inbox file** — proposals wait in AI/INBOX.md — me — {today()}" in memory.read_text(
        encoding="utf-8"
    )
    log = (tended / config.TENDED).read_text(encoding="utf-8")
    assert [line.split()[2] for line in log.splitlines() if line.startswith("- ")] == [
        "merge:",
        "drop:",
        "date:",
    ]
    assert not [p for p in inboxmod.inbox(tended).proposals if p.kind == "hygiene"]
    # nothing left to do, and nothing applied comes back
    assert tendmod.tend(tended, dry_run=True).proposed == ()


def test_the_commit_advice_of_an_approval_commits_every_file_it_changed(tended: Path) -> None:
    """The advice's command, run as printed, leaves nothing behind: AI/TENDED.md and
    AI/DROPPED.md are new files, which `git commit -p` (the old advice) passes over."""
    tendmod.tend(tended)
    drop = next(p for p in inboxmod.inbox(tended).proposals if "drop" in p.markdown)
    run = brain("inbox", "approve", str(drop.number), "--vault", str(tended))
    assert run.code == 0, run.err
    assert "AI/DROPPED.md" in run.out
    assert "AI/TENDED.md" in run.out
    command = run.out.rsplit("yourself (", 1)[1].rstrip().removesuffix(").")
    # the editor `commit -v` opens: a person writes the message (here, sed does)
    env = {**os.environ, "GIT_EDITOR": "sed -i 1s/^/tended/"}
    subprocess.run(["sh", "-c", command], check=True, env=env, stdin=subprocess.DEVNULL)
    assert git(tended, "status", "--porcelain") == ""
    assert git(tended, "log", "-1", "--format=%s").strip() == "tended"


def test_dropped_and_tended_files_are_searched_by_nothing(tended: Path) -> None:
    tendmod.tend(tended)
    drop = next(p for p in inboxmod.inbox(tended).proposals if p.markdown.startswith("tend: drop"))
    inboxmod.approve(tended, drop.number)
    assert "deployctl" in (tended / config.DROPPED).read_text(encoding="utf-8")
    found = brain("find", "--vault", str(tended), "--json", "deployctl-xyz")
    assert found.code == 1, found.out
    found = brain("find", "--vault", str(tended), "--json", "Go 1.22 service")
    assert all(h["path"] != config.DROPPED for h in found.json()["hits"])


def test_a_drained_inbox_of_tend_items_is_byte_for_byte_as_before(tended: Path) -> None:
    """tend queues its items as propose queues a proposal, and approving one takes its line as
    approve takes a proposal's (brain.edits.with_proposals, without): the blank line before
    the first goes with the last, whichever kind it is."""
    from brain.shipped import starter_file

    inbox = tended / config.INBOX
    inbox.write_text(starter_file("INBOX.md"), encoding="utf-8")
    commit_all(tended, "the starter inbox")
    before = inbox.read_bytes()
    v = ("--vault", str(tended))
    assert brain("propose", *v, "okapi one — the first fact here").code == 0
    assert len(tendmod.tend(tended).proposed) == 3
    listed = inboxmod.inbox(tended).proposals
    assert [p.kind for p in listed] == ["bullet", "hygiene", "hygiene", "hygiene"]
    while inboxmod.inbox(tended).proposals:  # the proposal first, tend's items last
        inboxmod.approve(tended, 1)
    assert inbox.read_bytes() == before


def test_an_item_approved_twice_is_refused_the_second_time(tended: Path) -> None:
    """Two copies of one item (a sync that kept both lines, two machines): the second is
    refused with the reason and changes nothing."""
    tendmod.tend(tended)
    inbox_file = tended / config.INBOX
    lines = inbox_file.read_text(encoding="utf-8").split("\n")
    drop_line = next(line for line in lines if line.startswith("- tend: drop"))
    inbox_file.write_text(inbox_file.read_text(encoding="utf-8") + drop_line + "\n")
    items = [p for p in inboxmod.inbox(tended).proposals if p.markdown.startswith("tend: drop")]
    assert len(items) == 2
    inboxmod.approve(tended, items[0].number)
    before = snapshot(tended)
    items = [p for p in inboxmod.inbox(tended).proposals if p.markdown.startswith("tend: drop")]
    run = brain("inbox", "approve", str(items[0].number), "--vault", str(tended))
    assert run.code == 1
    assert "applied already" in run.err
    assert f"brain inbox drop {items[0].number}" in run.err
    assert "Traceback" not in run.err
    assert snapshot(tended) == before


def test_an_item_whose_target_changed_is_refused_and_nothing_is_half_applied(
    tended: Path,
) -> None:
    tendmod.tend(tended)
    memory = tended / "AI/MEMORY.md"
    # the person edits the older payments bullet after the sweep: the merge no longer applies
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text.replace("Go 1.22 service", "Go 1.22.5 service"), encoding="utf-8")
    before = snapshot(tended)
    listed = inboxmod.inbox(tended).proposals
    merge = next(p for p in listed if p.markdown.startswith("tend: merge"))
    with pytest.raises(BrainError) as err:
        inboxmod.approve(tended, merge.number)
    assert "no longer holds the bullet **payments service**" in err.value.message
    assert snapshot(tended) == before
    assert not (tended / config.DROPPED).exists()


def test_a_crash_in_the_middle_of_an_apply_leaves_before_or_after(
    tended: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tendmod.tend(tended)
    before = snapshot(tended)
    listed = inboxmod.inbox(tended).proposals
    merge = next(p for p in listed if p.markdown.startswith("tend: merge"))

    def crash(rel: str) -> None:
        raise KeyboardInterrupt  # the process dies between two files

    with monkeypatch.context() as patch:
        patch.setattr(hygiene, "_between_writes", crash)
        with pytest.raises(KeyboardInterrupt):
            inboxmod.approve(tended, merge.number)
    middle = snapshot(tended)
    assert middle != before  # one file was written ...
    for rel, data in middle.items():  # ... each file whole (written through os.replace)
        assert not rel.endswith(".tmp"), rel
        data.decode("utf-8")
    # the next inbox command finishes it: the vault is as after a clean apply
    listing = inboxmod.inbox(tended)
    assert (listing.recovered or "").startswith("a tend item")
    after = snapshot(tended)
    assert after[config.TENDED].count(b"[tend ") == 1
    assert after["AI/MEMORY.md"].count(b"**payments service**") == 1
    assert b"payments is a Go 1.22 service" in after[config.DROPPED]
    assert not any(p.markdown.startswith("tend: merge") for p in listing.proposals)


def refund_note(vault: Path, name: str) -> Path:
    """A dated note `name` that a newer bullet (committed with it) says otherwise than."""
    note = vault / "notes" / name
    note.write_text(
        "# Refund notes\n\nThe refund window is 90 days for Stripe refunds per the policy.\n",
        encoding="utf-8",
    )
    add(
        vault,
        "- **refund window** (aliases: refund period) — the refund window is 180 days for"
        " Stripe refunds — priya — 2026-06-01",
    )
    commit_all(vault, "refunds")
    return note


def test_a_note_newer_bullets_correct_is_marked_superseded(git_vault: Path) -> None:
    note = refund_note(git_vault, "2025-03-01-refunds.md")
    result = tendmod.tend(git_vault)
    sup = [p for p in result.proposed if p.op == "supersede"]
    assert [p.targets for p in sup] == [("notes/2025-03-01-refunds.md:3",)]
    item = next(p for p in inboxmod.inbox(git_vault).proposals if "superseded" in p.markdown)
    inboxmod.approve(git_vault, item.number)
    text = note.read_text(encoding="utf-8")
    assert text.startswith(
        "# Refund notes\n\n> Superseded: newer bullets say otherwise: **refund window**"
    )
    assert "90 days" in text  # kept as history
    assert not doctor(str(git_vault)).superseded  # cited: doctor no longer lists it
    assert not [p for p in tendmod.tend(git_vault, dry_run=True).proposed if p.op == "supersede"]


def test_a_note_with_a_newline_or_esc_in_its_name_is_one_inbox_item(git_vault: Path) -> None:
    """The item's summary names the note escaped: a newline in the name tore the inbox line in
    two (the approval refused it as a bullet without a handle) and ESC reached the terminal."""
    note = refund_note(git_vault, "2025-03-01-re\nfunds\x1b[2J.md")
    run = brain("tend", "--vault", str(git_vault))
    assert run.code == 0, run
    assert "\x1b" not in run.out
    escaped = "notes/2025-03-01-re\\nfunds\\x1b[2J.md"
    assert f"proposed: supersede: mark {escaped} superseded by **refund window**" in run.out
    inbox = (git_vault / "AI" / "INBOX.md").read_text(encoding="utf-8")
    (line,) = [s for s in inbox.splitlines() if "refund window" in s]
    assert line.startswith(f"- tend: mark {escaped} superseded")
    listed = brain("inbox", "--vault", str(git_vault), "--json").json()
    (item,) = [p for p in listed["proposals"] if "refund" in p["markdown"]]
    assert brain("inbox", "--vault", str(git_vault), "approve", str(item["number"])).code == 0
    text = note.read_text(encoding="utf-8")
    assert text.startswith("# Refund notes\n\n> Superseded: newer bullets say otherwise")


def aliases_policy(vault: Path, policy: str) -> None:
    (vault / config.VAULT_CONFIG).write_text(f"aliases: {policy}\n", encoding="utf-8")


def test_tend_applies_aliases_several_sessions_asked_by_when_the_vault_says_so(
    vault: Path,
) -> None:
    aliases_policy(vault, "apply")
    add(vault, f"- **zebrafish tank** — the heater is set to 26 degrees — me — {OLD}")
    log_finds(vault, "heater degrees", ["s1", "s2", "s3"])
    log_finds(vault, "heater celsius", ["s1", "s2"])  # two sessions: proposed, not applied
    result = tendmod.tend(vault)
    assert [(a.handle, a.kind) for a in result.applied] == [("zebrafish tank", "alias")]
    text = (vault / "AI/MEMORY.md").read_text(encoding="utf-8")
    assert "- **zebrafish tank** (aliases: heater degrees) — the heater" in text
    assert "heater degrees" in (vault / config.TENDED).read_text(encoding="utf-8")
    assert "celsius" not in text


def test_a_daily_sweep_past_its_budget_leaves_the_aliases_for_another_day(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewriting a core file of a large vault is what made the daily sweep overrun its 2 s: past
    its budget it applies nothing, and the next sweep with time left does."""
    aliases_policy(vault, "apply")
    add(vault, f"- **zebrafish tank** — the heater is set to 26 degrees — me — {OLD}")
    log_finds(vault, "heater degrees", ["s1", "s2", "s3"])
    real = tendmod.find_items

    def slow(v: Path, *, deadline: float | None = None, quick: bool = False) -> Any:
        found = real(v, deadline=None, quick=quick)
        time.sleep(0.3)  # the budget runs out after the aliases were found
        return found

    monkeypatch.setattr(tendmod, "find_items", slow)
    late = tendmod.tend(vault, daily=True, budget=0.1)
    assert late.applied == ()
    assert "heater degrees" not in (vault / "AI/MEMORY.md").read_text(encoding="utf-8")
    assert [a.handle for a in tendmod.tend(vault).applied] == ["zebrafish tank"]


def test_learnt_aliases_are_proposed_and_a_person_approves_them(vault: Path) -> None:
    """Query words are what agents typed: by default the sweep writes none of them into a core
    bullet, it queues them as one item per bullet, which approving applies."""
    add(vault, f"- **zebrafish tank** — the heater is set to 26 degrees — me — {OLD}")
    log_finds(vault, "heater degrees", ["s1", "s2", "s3"])
    memory = vault / "AI/MEMORY.md"
    before = memory.read_bytes()
    result = tendmod.tend(vault)
    assert result.applied == ()
    assert memory.read_bytes() == before
    (item,) = [p for p in result.proposed if p.op == "alias"]
    assert item.summary.startswith("give **zebrafish tank** (AI/MEMORY.md:")
    assert item.summary.endswith("the alias 'heater degrees'")
    assert "3 sessions reached it by its body" in item.why
    listed = next(
        p for p in inboxmod.inbox(vault).proposals if p.markdown == f"tend: {item.summary}"
    )
    inboxmod.approve(vault, listed.number)
    text = memory.read_text(encoding="utf-8")
    assert "- **zebrafish tank** (aliases: heater degrees) — the heater" in text
    assert f"[tend {item.key}]" in (vault / config.TENDED).read_text(encoding="utf-8")
    assert [p for p in tendmod.tend(vault, dry_run=True).proposed if p.op == "alias"] == []


@pytest.mark.parametrize("policy", ["propose", "apply"])
def test_an_alias_the_guard_flags_is_never_written_nor_proposed(vault: Path, policy: str) -> None:
    """The fixture's **pgxpool max conns** reached by a query carrying an injection (the
    bullet's own words stand out in it: learn reads answers that stand out): its first words
    (`disregard previous maxconns explicitly`) are an alias strict lint refuses, so neither
    `learn --apply` nor the sweep writes or queues it, whatever the policy. (A query of plain
    words reaching the same bullet is proposed: test_learn_proposes_what_people_search_with.)"""
    aliases_policy(vault, policy)
    query = "disregard previous maxconns explicitly defaults larger cpu count"
    found = brain("find", "--vault", str(vault), "--json", query).json()
    assert (found["evidence"], found["hits"][0]["handle"]) == ("strong", "pgxpool max conns")
    log_finds(vault, query, ["s1", "s2", "s3"])
    before = snapshot(vault)
    learnt = learnmod.learn(vault, mode="keyword", apply=True)  # a person's explicit --apply too
    assert (learnt.proposed, learnt.applied) == ((), ())
    assert snapshot(vault) == before
    result = tendmod.tend(vault)
    assert result.applied == ()
    assert not [p for p in result.proposed if p.op == "alias"]
    after = snapshot(vault)
    assert after["AI/LEARNINGS.md"] == before["AI/LEARNINGS.md"]
    assert b"disregard" not in after[config.INBOX]


@pytest.mark.parametrize("policy", ["propose", "apply"])
def test_dry_run_lists_exactly_what_a_real_run_then_applies_and_proposes(
    tended: Path, policy: str
) -> None:
    """`--dry-run` reported 0 applied where the real run then wrote an alias: both now compute
    one plan."""
    aliases_policy(tended, policy)
    add(tended, f"- **zebrafish tank** — the heater is set to 26 degrees — me — {OLD}")
    log_finds(tended, "heater degrees", ["s1", "s2", "s3"])
    before = snapshot(tended)
    dry = tendmod.tend(tended, dry_run=True)
    assert snapshot(tended) == before
    real = tendmod.tend(tended)
    assert (dry.applied, dry.proposed) == (real.applied, real.proposed)
    ops = sorted(p.op for p in real.proposed)
    if policy == "apply":
        assert [a.handle for a in real.applied] == ["zebrafish tank"]
        assert ops == ["date", "drop", "merge"]
    else:
        assert real.applied == ()
        assert ops == ["alias", "date", "drop", "merge"]
    assert snapshot(tended) != before


def test_an_alias_applied_leaves_the_items_on_that_bullet_applicable(tended: Path) -> None:
    """An alias written at once rewrites the line another item (here: date it) names by its
    hash; the item is queued naming the line as it is after the alias, so it still applies."""
    aliases_policy(tended, "apply")
    memory = tended / "AI/MEMORY.md"
    text = memory.read_text(encoding="utf-8")
    memory.write_text(text.replace("in AI/INBOX.md —", "in AI/INBOX.md for quokka review —"))
    commit_all(tended, "quokka")
    log_finds(tended, "quokka review", ["s1", "s2", "s3"])
    result = tendmod.tend(tended)
    assert [a.handle for a in result.applied] == ["inbox file"]
    date = next(p for p in inboxmod.inbox(tended).proposals if p.markdown.startswith("tend: date"))
    inboxmod.approve(tended, date.number)
    assert (
        f"- **inbox file** (aliases: quokka review) — proposals wait in AI/INBOX.md for quokka"
        f" review — me — {today()}" in memory.read_text(encoding="utf-8")
    )


def test_an_alias_whose_bullet_strict_lint_refuses_is_proposed_not_applied(vault: Path) -> None:
    """Under `aliases: apply`, nothing the sweep writes unasked may fail `lint --strict`: a
    bullet whose line strict refuses (a web address) gets its alias through a person."""
    aliases_policy(vault, "apply")
    add(
        vault,
        f"- **zebrafish tank** — the heater is set to 26 degrees, manual at"
        f" https://example.com/heater — me — {OLD}",
    )
    log_finds(vault, "heater degrees", ["s1", "s2", "s3"])
    before = (vault / "AI/MEMORY.md").read_bytes()
    result = tendmod.tend(vault)
    assert result.applied == ()
    assert [p.op for p in result.proposed if p.op == "alias"] == ["alias"]
    assert (vault / "AI/MEMORY.md").read_bytes() == before


# Bullets sharing a handle: (handle, older fact, newer fact, whether they say the same thing).
# What COVERAGE_SAME and COSINE_SAME were measured on (brain/commands/tend.py).
SAME_HANDLE = [
    ("pnpm", "we use pnpm, never npm", "pnpm needs --frozen-lockfile in CI", False),
    (
        "payments service",
        PAYMENTS_122,
        "payments moved to Go 1.23",
        False,
    ),
    (
        "payments service",
        PAYMENTS_122,
        PAYMENTS_123,
        True,
    ),
    (
        "staging deploy",
        "staging deploys run from the deploy-staging job on every merge to main",
        "every merge to main deploys staging through the deploy-staging job",
        True,
    ),
    (
        "redis",
        "redis is the session store for the web app",
        "redis holds the web app's sessions",
        True,
    ),
    (
        "redis",
        "redis is the session store for the web app",
        "redis must run with maxmemory-policy allkeys-lru in production",
        False,
    ),
    (
        "ci cache",
        "CI caches node_modules keyed on the lockfile hash",
        "the CI cache for node_modules is keyed on the hash of the lockfile",
        True,
    ),
    (
        "ci cache",
        "CI caches node_modules keyed on the lockfile hash",
        "the CI cache is wiped every Sunday night",
        False,
    ),
    (
        "release day",
        "we release on Tuesdays after the standup",
        "releases go out on Tuesday, after standup",
        True,
    ),
    (
        "release day",
        "we release on Tuesdays after the standup",
        "a release needs two approvals from the core team",
        False,
    ),
    ("node version", "the frontend builds with Node 18", "the frontend builds with Node 20", True),
    (
        "node version",
        "the frontend builds with Node 18",
        "Node 20 breaks the old webpack config of the admin panel",
        False,
    ),
    (
        "test db",
        "integration tests use a throwaway Postgres started by testcontainers",
        "integration tests start a throwaway Postgres with testcontainers",
        True,
    ),
    (
        "test db",
        "integration tests use a throwaway Postgres started by testcontainers",
        "the test database needs the pg_trgm extension",
        False,
    ),
    (
        "feature flags",
        "feature flags live in LaunchDarkly, one project per service",
        "feature flags are kept in LaunchDarkly with a project for each service",
        True,
    ),
    (
        "feature flags",
        "feature flags live in LaunchDarkly, one project per service",
        "stale feature flags are removed within two sprints",
        False,
    ),
    (
        "oncall",
        "the oncall rotation changes every Monday at 10:00",
        "oncall rotates weekly, Mondays at 10:00",
        True,
    ),
    (
        "oncall",
        "the oncall rotation changes every Monday at 10:00",
        "oncall pages go to the #payments-alerts channel first",
        False,
    ),
    (
        "api timeout",
        "the public API times out requests after 30 seconds",
        "public API requests time out after 30 s",
        True,
    ),
    (
        "api timeout",
        "the public API times out requests after 30 seconds",
        "the public API timeout is configured in gateway.yaml",
        False,
    ),
]


@pytest.mark.parametrize(("handle", "older", "newer", "same"), SAME_HANDLE)
def test_same_thing_tells_a_restatement_from_another_fact(
    handle: str, older: str, newer: str, same: bool
) -> None:
    from brain.vault import Unit

    old = Unit("AI/MEMORY.md", 3, "bullet", older, handle=handle, date=OLD)
    new = Unit("AI/MEMORY.md", 9, "bullet", newer, handle=handle, date="2026-01-02")
    assert tendmod.same_thing(new, old) is same


@pytest.mark.slow
def test_the_cosine_bar_tells_them_apart_too() -> None:
    """With the bundled model (handle and fact, as the index embeds a bullet), the cosine bar
    alone sorts the same pairs."""
    from brain import embed

    model = embed.load_embedder("onnx")
    assert model is not None
    for handle, older, newer, same in SAME_HANDLE:
        a, b = model.embed([f"{handle}: {older}", f"{handle}: {newer}"])
        assert (float(a @ b) >= tendmod.COSINE_SAME) is same, (handle, newer)


@pytest.mark.slow
def test_with_the_models_vectors_a_paraphrase_is_merged_and_another_fact_is_not(
    history_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A paraphrase shares few words (`clock skew exceeds five minutes` / `clock drift over 5
    min`: .17 of them) but the stored vectors say the same thing (.87); the pnpm pair says two
    things by both measures."""
    add(
        history_vault,
        f"- **login bug** — logins fail when the clock skew exceeds five minutes — me — {OLD}",
        "- **login bug** — a clock drift over 5 min breaks signing in — me — 2026-03-01",
        f"- **pnpm** — we use pnpm, never npm — me — {OLD}",
        "- **pnpm** — pnpm needs --frozen-lockfile in CI — me — 2026-03-01",
    )
    commit_all(history_vault, "pairs")
    monkeypatch.setenv("BRAIN_EMBED", "onnx")
    run = brain("reindex", "--vault", str(history_vault), env={"BRAIN_EMBED": "onnx"})
    assert run.code == 0, run.err
    merges = [p for p in tendmod.tend(history_vault, dry_run=True).proposed if p.op == "merge"]
    assert [m.summary.split("**")[1] for m in merges] == ["login bug"]
    # by words alone (no vectors) the paraphrase is not merged: a miss costs nothing, a wrong
    # merge drops a fact
    from brain.vault import Unit

    older, newer = (
        Unit("AI/MEMORY.md", n, "bullet", fact, handle="login bug")
        for n, fact in (
            (1, "logins fail when the clock skew exceeds five minutes"),
            (2, "a clock drift over 5 min breaks signing in"),
        )
    )
    assert not tendmod.same_thing(newer, older)


def test_bullets_that_only_share_a_handle_are_not_merged(history_vault: Path) -> None:
    """`we use pnpm, never npm` and `pnpm needs --frozen-lockfile in CI` share the handle
    `pnpm`: a merge moved the second to AI/DROPPED.md. They say different things: no merge."""
    add(
        history_vault,
        f"- **pnpm** — we use pnpm, never npm — me — {OLD}",
        "- **pnpm** — pnpm needs --frozen-lockfile in CI — me — 2026-03-01",
    )
    commit_all(history_vault, "pnpm")
    result = tendmod.tend(history_vault)
    assert [p for p in result.proposed if p.op == "merge"] == []
    text = (history_vault / "AI/MEMORY.md").read_text(encoding="utf-8")
    assert "we use pnpm, never npm" in text
    assert "--frozen-lockfile in CI" in text
    assert [d.handle for d in doctor(str(history_vault)).duplicate_handles] == ["pnpm"]


def test_a_merge_quotes_the_line_it_drops_in_the_inbox_and_on_the_desk(tended: Path) -> None:
    import html

    from test_desk import PORT, signed_in

    from brain.desk.server import Desk

    older = next(
        line
        for line in (tended / "AI/MEMORY.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("- **payments service**") and "Go 1.22" in line
    )
    (merge,) = [p for p in tendmod.tend(tended).proposed if p.op == "merge"]
    assert merge.summary.endswith(f"dropping AI/MEMORY.md:20 “{older}”")
    inbox_line = next(
        line
        for line in (tended / config.INBOX).read_text(encoding="utf-8").splitlines()
        if line.startswith("- tend: merge")
    )
    assert f"“{older}” <!-- brain:tend " in inbox_line
    page = signed_in(Desk(tended, PORT)).get("/inbox").text
    assert html.escape(f"“{older}”", quote=False) in page


def test_tend_respects_what_the_inbox_keeps(tended: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inboxmod, "MAX_PENDING", 4)  # the fixture's inbox holds three already
    assert len(tendmod.tend(tended).proposed) == 1
    assert len(tendmod.tend(tended).proposed) == 0


def test_tend_json_keys(tended: Path) -> None:
    run = brain("tend", "--dry-run", "--json", "--vault", str(tended))
    assert run.code == 0, run.err
    doc = run.json()
    assert list(doc) == KEYS["`tend`"]
    assert list(doc["proposed"][0]) == KEYS["`tend` proposed"]


# --- the daily sweep -----------------------------------------------------------------------------


def test_daily_runs_once_a_day_quietly_and_always_exits_0(tended: Path, tmp_path: Path) -> None:
    run = brain("tend", "--daily", "--vault", str(tended))
    assert (run.code, run.out, run.err) == (0, "", "")
    assert "- tend: " in (tended / config.INBOX).read_text(encoding="utf-8")
    log = config.state_dir() / "logs" / "tend.log"
    assert "3 proposed" in log.read_text(encoding="utf-8")
    before = snapshot(tended)
    second = tendmod.tend(tended, daily=True, budget=tendmod.DAILY_SECONDS)
    assert not second.ran
    assert snapshot(tended) == before
    # bad input: still exit 0, still quiet, the reason in the log
    run = brain("tend", "--daily", "--vault", str(tmp_path / "no-such-vault"))
    assert (run.code, run.out, run.err) == (0, "", "")
    assert "not swept" in log.read_text(encoding="utf-8")


def test_background_starts_the_daily_sweep_once_a_day(tended: Path) -> None:
    """What the Stop hook calls: a detached sweep, then nothing more that day."""
    assert tendmod.background(tended)
    stamp = tendmod._stamp_path(tended)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not stamp.exists():
        time.sleep(0.2)
    assert stamp.read_text(encoding="utf-8").strip() == today()
    assert not tendmod.background(tended)


def test_daily_stops_early_when_out_of_time(tended: Path) -> None:
    result = tendmod.tend(tended, daily=True, budget=0.0)
    assert result.ran
    assert (result.stopped or "").startswith("out of time")


def test_the_daily_budget_is_daily_seconds_unless_the_environment_says(
    tended: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """conftest gives every test BRAIN_TEND_SECONDS=30; a sweep with a budget that ends at once
    (through the hook's own path) stops early and logs so."""
    monkeypatch.delenv("BRAIN_TEND_SECONDS")
    assert tendmod.daily_seconds() == tendmod.DAILY_SECONDS == 1.3
    monkeypatch.setenv("BRAIN_TEND_SECONDS", "0.5")
    assert tendmod.daily_seconds() == 0.5
    run = brain("tend", "--daily", "--vault", str(tended), env={"BRAIN_TEND_SECONDS": "1e-9"})
    assert (run.code, run.out, run.err) == (0, "", "")
    log = (config.state_dir() / "logs" / "tend.log").read_text(encoding="utf-8")
    assert "stopped early: out of time" in log


def test_post_commit_hook_starts_the_daily_sweep(git_vault: Path) -> None:
    run = brain("install", str(git_vault), "--json")
    assert run.code == 0, run.err + run.out
    add(git_vault, f"- **inbox file** — proposals wait in AI/INBOX.md — me — {OLD}")
    git(git_vault, "add", "-A")
    done = subprocess.run(
        ["git", "-C", str(git_vault), "commit", "-q", "-m", "x"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    stamp = config.state_dir() / "tend" / f"{config.index_path(git_vault.resolve()).stem}.daily"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not stamp.exists():
        time.sleep(0.2)
    assert stamp.read_text(encoding="utf-8").strip() == today()
    queued = (git_vault / config.INBOX).read_text(encoding="utf-8")
    assert "- tend: date 4 verified bullets today: " in queued
    assert "**inbox file**" in queued


# --- review mode ---------------------------------------------------------------------------------


def test_review_after_serves_proposals_marked_unreviewed(git_vault: Path) -> None:
    v = str(git_vault)
    run = brain("propose", "quokka feeding — the quokka is fed at noon", "--vault", v)
    assert run.code == 0, run.err
    assert brain("find", "--vault", v, "--json", "quokka feeding").code == 1
    run = brain("review", "after", "--vault", v, "--json")
    assert run.code == 0, run.err
    assert run.json() == {
        "vault": str(git_vault.resolve()),
        "mode": "after",
        "mode_changed": True,
        "path": config.VAULT_CONFIG,
        "unreviewed_count": 4,  # the fixture's three and this one
        "set_by": config.VAULT_CONFIG,
        "proposals_mode": "local",
    }
    assert "review: after" in (git_vault / config.VAULT_CONFIG).read_text(encoding="utf-8")
    found = brain("find", "--vault", v, "--json", "quokka feeding")
    assert found.code == 0, found.err
    hit = found.json()["hits"][0]
    assert (hit["path"], hit["handle"], hit["unreviewed"]) == (config.INBOX, "quokka feeding", True)
    terse = brain("find", "--vault", v, "--terse", "quokka feeding").out
    assert terse.splitlines()[0].endswith("— unreviewed")
    # approved: a fact like any other, no longer marked
    inboxmod.approve(git_vault, 4)
    hit = brain("find", "--vault", v, "--json", "quokka feeding").json()["hits"][0]
    assert (hit["path"], hit["unreviewed"]) == ("AI/MEMORY.md", False)
    # another machine agrees: the mode is in the committed config
    commit_all(git_vault, "review after")
    assert "AI/config.yaml" in git(git_vault, "show", "--stat", "HEAD")
    run = brain("review", "before", "--vault", v)
    assert run.code == 0
    brain("propose", "wombat bedtime — the wombat sleeps at nine", "--vault", v)
    assert brain("find", "--vault", v, "--json", "wombat bedtime").code == 1


def test_review_after_says_team_proposals_answer_only_once_approved(vault: Path) -> None:
    """With `proposals: team` a proposal is a branch of the shared remote, which no index reads:
    `review after` must not promise that proposals answer finds at once."""
    (vault / config.VAULT_CONFIG).write_text("proposals: team\n", encoding="utf-8")
    run = brain("review", "after", "--vault", str(vault))
    assert run.code == 0, run.err
    assert "shared remote" in run.out
    assert "answer finds at once" not in run.out
    doc = brain("review", "--vault", str(vault), "--json").json()
    assert (doc["mode"], doc["proposals_mode"]) == ("after", "team")


def test_review_rejects_an_unknown_mode(vault: Path) -> None:
    run = brain("review", "sometimes", "--vault", str(vault))
    assert run.code == 2
    assert "use `brain review before` or `after`" in run.err


# --- doctor --------------------------------------------------------------------------------------


def test_doctor_lists_failed_claims_and_shared_handles(tended: Path) -> None:
    result = doctor(str(tended))
    assert [f.handle for f in result.failed_claims][:1] == ["old deploy"]
    (same,) = result.duplicate_handles
    assert same.handle == "payments service"
    assert same.dates == ("2026-11-20", "2025-02-04")


def test_doctor_names_bullets_served_just_before_a_correction(vault: Path) -> None:
    from brain.commands.advisories import _served_before

    t = time.time()
    usage.record("find", "claude-code", "sess-1", "settlement job", 1, 100, vault)
    events = [e for e in usage.events(usage.connect(), 0) if e.session == "sess-1"]
    by_session = {"sess-1": [(t + 60, "no, it runs at 03:00 now")]}
    found = _served_before(vault, events, by_session)
    assert found[0].handle == "settlement job"
    assert found[0].said == ("no, it runs at 03:00 now",)
    # a correction long after the lookup is not one it caused
    assert _served_before(vault, events, {"sess-1": [(t + 3600, "no")]}) == []


def test_fixture_vault_proposals(vault: Path) -> None:
    """What the sweep proposes on testdata/vault (docs/commands.md's figures say why each)."""
    before = snapshot(FIXTURE_VAULT)
    result = tendmod.tend(vault, dry_run=True)
    assert [(p.op, len(p.targets)) for p in result.proposed] == [("date", 3)]
    assert snapshot(FIXTURE_VAULT) == before


def test_lines_typed_while_tend_queues_and_approve_applies_are_kept(
    tended: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person types into the inbox while `brain tend` queues its items, then into MEMORY.md
    while an item is applied: each file gets brain's change and keeps every typed line."""
    from test_inbox import Person

    with monkeypatch.context() as patch:
        person = Person(tended, "AI/INBOX.md", patch)
        assert len(tendmod.tend(tended).proposed) == 3
        person.kept()
    items = [p for p in inboxmod.inbox(tended).proposals if p.kind == "hygiene"]
    assert len(items) == 3
    with monkeypatch.context() as patch:
        person = Person(tended, "AI/MEMORY.md", patch)
        inboxmod.approve(tended, items[0].number)  # merge: MEMORY, DROPPED, TENDED, the inbox
        person.kept()
    text = (tended / "AI/MEMORY.md").read_text(encoding="utf-8")
    assert text.count("**payments service**") == 1
    assert "payments is a Go 1.22 service" in (tended / config.DROPPED).read_text("utf-8")


PERSON = """
import os, sys, time, random
memory, inbox, stop, date = sys.argv[1:5]
rng = random.Random(int(sys.argv[5]))
i = 0
while not os.path.exists(stop):
    # as a shell's `>>` does: open for appending, write the line, close
    with open(memory if i % 2 == 0 else inbox, "a", encoding="utf-8") as fh:
        fh.write(f"- **typed {i}** — typed by hand — me — {date}\\n")
    i += 1
    time.sleep(rng.random() / 25)  # a line every 20 ms or so
print(i)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_a_person_appending_while_propose_approve_and_tend_run_loses_nothing(
    tended: Path, tmp_path: Path, seed: int
) -> None:
    """Another process appends bullets to MEMORY.md and the inbox, as fast as a shell loop,
    while brain proposes, approves (bullets and tend's items) and tends, again and again:
    every line it typed is in its file once, and so is everything brain wrote."""
    stop = tmp_path / "stop"
    memory, inbox = tended / "AI/MEMORY.md", tended / "AI/INBOX.md"
    person = subprocess.Popen(
        [sys.executable, "-c", PERSON, str(memory), str(inbox), str(stop), today(), str(seed)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for k in range(10):
            if k % 3 == 0:
                tendmod.tend(tended)
            propose(tended, f"stress {k} — proposed while a person typed {k}", source="me")
            listed = inboxmod.inbox(tended).proposals
            mine = next(p.number for p in listed if p.handle == f"stress {k}")
            inboxmod.approve(tended, mine)
            item = next((p.number for p in listed if p.kind == "hygiene"), None)
            if item is not None:
                inboxmod.approve(tended, item if item < mine else item - 1)
    finally:
        stop.touch()
        out, _ = person.communicate(timeout=60)
    typed = int(out)
    assert typed > 10
    text = {memory: memory.read_text("utf-8"), inbox: inbox.read_text("utf-8")}
    for i in range(typed):
        line = f"- **typed {i}** — typed by hand — me — {today()}\n"
        assert text[memory if i % 2 == 0 else inbox].count(line) == 1, line
    for k in range(10):
        assert text[memory].count(f"- **stress {k}** — proposed while a person typed {k}") == 1
    assert not any(p.kind == "hygiene" for p in inboxmod.inbox(tended).proposals)
    assert text[memory].count("**payments service**") == 1  # the merge was applied


# --- tend --quick and BRAIN_NO_TEND ---------------------------------------------------------------


def test_quick_is_the_bounded_pass_run_now_with_its_report(tended: Path) -> None:
    """`tend --quick`: the daily sweep's budget (BRAIN_TEND_SECONDS) and keyword-only learning,
    but any time (no stamp: twice a day runs twice) and with the report a person reads; a plain
    `brain tend` under the same budget setting is not bounded by it."""
    v = str(tended)
    short = {"BRAIN_TEND_SECONDS": "1e-9"}
    run = brain("tend", "--quick", "--dry-run", "--json", "--vault", v, env=short)
    assert run.code == 0, run.err
    doc = run.json()
    assert (doc["quick"], doc["daily"], doc["ran"]) == (True, False, True)
    assert (doc["stopped"] or "").startswith("out of time")
    whole = brain("tend", "--dry-run", "--json", "--vault", v, env=short).json()
    assert (whole["quick"], whole["stopped"]) == (False, None)
    first = brain("tend", "--quick", "--vault", v)
    assert first.code == 0, first.err
    assert "3 proposed; review them with `brain inbox`" in first.out
    again = brain("tend", "--quick", "--json", "--vault", v).json()
    assert again["ran"] is True  # not once a day: it ran again, and found them waiting
    assert again["waiting_count"] == 3
    assert not tendmod._stamp_path(tended).exists()


@pytest.mark.parametrize("value", ["1", "yes"])
def test_brain_no_tend_keeps_the_hooks_from_sweeping(
    tended: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """BRAIN_NO_TEND: the post-commit hook's `tend --daily` and the stop hook's background start
    sweep nothing (the log says why), while a person's `brain tend` still sweeps."""
    inbox = tended / config.INBOX
    before = inbox.read_bytes()
    run = brain("tend", "--daily", "--vault", str(tended), env={"BRAIN_NO_TEND": value})
    assert (run.code, run.out, run.err) == (0, "", "")
    assert inbox.read_bytes() == before
    assert not tendmod._stamp_path(tended).exists()
    log = (config.state_dir() / "logs" / "tend.log").read_text(encoding="utf-8")
    assert "not swept: BRAIN_NO_TEND is set" in log
    monkeypatch.setenv("BRAIN_NO_TEND", value)
    assert not tendmod.background(tended)
    said = brain("tend", "--daily", "--dry-run", "--vault", str(tended))
    assert said.out == "Not swept: BRAIN_NO_TEND is set: the daily sweep is off.\n"
    person = brain("tend", "--json", "--vault", str(tended)).json()
    assert person["ran"] is True
    assert len(person["proposed"]) == 3


def test_brain_no_tend_set_to_no_leaves_the_daily_sweep_on(tended: Path) -> None:
    run = brain("tend", "--daily", "--vault", str(tended), env={"BRAIN_NO_TEND": "0"})
    assert (run.code, run.out, run.err) == (0, "", "")
    assert tendmod._stamp_path(tended).read_text(encoding="utf-8").strip() == today()
