"""A team vault's inbox numbers mean what this machine's last `brain inbox` showed
(brain.team.remember_listed, brain.commands.inbox.as_listed), attacked: proposals in the vault's
own AI/INBOX.md numbered before the remote's, the desk's clicks, several machines at once. A
number never acts on a proposal the person did not read at that number. Real clones of one bare
remote, real `brain` subprocesses (tests/test_team.py's crew).
"""

from __future__ import annotations

import pytest
from test_team import Team, crew, proposal_branches, remote_file

__all__ = ["crew"]  # the fixture, imported for pytest
LOCAL = "- **local line** — added to this clone's inbox by hand after the listing — x — 2026-12-01"


def _add_local(team: Team, who: str) -> None:
    """A proposal lands in `who`'s own AI/INBOX.md (a `brain tend` item, a line pasted in)."""
    team.m[who].add("AI/INBOX.md", f"\n{LOCAL}\n")


def test_a_local_proposal_arriving_after_the_listing_shifts_no_number(crew: Team) -> None:
    """b lists the remote's two as #1 and #2; then a line arrives in b's own inbox, numbered
    before them. `approve 2` meant the second branch, not the first (now #2), and `drop 1`
    meant the first branch, not the new local line b never read."""
    one = crew.propose("a", "shifted one — read on machine b as number one")
    two = crew.propose("a", "shifted two — read on machine b as number two")
    listed = [p["branch"] for p in crew.inbox("b")["proposals"]]
    assert sorted(listed) == sorted([one["branch"], two["branch"]])
    _add_local(crew, "b")
    refused = crew.run("b", "inbox", "approve", "2", code=1)
    assert "changed since the inbox was listed" in refused.err
    assert "nothing approved" in refused.err
    refused = crew.run("b", "inbox", "drop", "1", code=1)
    assert "nothing dropped" in refused.err
    assert LOCAL in crew.m["b"].text("AI/INBOX.md")
    assert len(proposal_branches(crew.remote)) == 2
    for p in (one, two):
        assert p["markdown"] not in remote_file(crew.remote)
    # listed again, the local line is #1 and the branches follow it
    now = crew.inbox("b")["proposals"]
    assert [p["kind"] for p in now] == ["bullet", "team", "team"]
    crew.run("b", "inbox", "approve", "3")
    assert remote_file(crew.remote).count(
        next(p["markdown"] for p in (one, two) if p["branch"] == listed[1])
    )


def test_a_local_proposal_gone_after_the_listing_shifts_no_number(crew: Team) -> None:
    """b lists its own line as #1 and the remote's as #2 and #3; the line leaves the inbox (a
    person deletes it): `drop 2` meant the first branch, not the second."""
    _add_local(crew, "b")
    crew.propose("a", "gone one — read on machine b as number two")
    crew.propose("a", "gone two — read on machine b as number three")
    listed = crew.inbox("b")["proposals"]
    assert [p["kind"] for p in listed] == ["bullet", "team", "team"]
    inbox = crew.m["b"].vault / "AI" / "INBOX.md"
    inbox.write_text(inbox.read_text(encoding="utf-8").replace(LOCAL, ""), encoding="utf-8")
    refused = crew.run("b", "inbox", "drop", "2", code=1)
    assert "nothing dropped" in refused.err
    assert len(proposal_branches(crew.remote)) == 2


def test_a_local_line_edited_after_the_listing_keeps_its_number(crew: Team) -> None:
    """b lists its own line as #1 and rewrites it, as a refusal says to (`rewrite line N of
    AI/INBOX.md`, strict lint): `approve 1` still means that line, and the remote's #2 is
    still the branch b read."""
    _add_local(crew, "b")
    one = crew.propose("a", "after edit — read on machine b as number two")
    crew.inbox("b")
    inbox = crew.m["b"].vault / "AI" / "INBOX.md"
    edited = LOCAL.replace("by hand", "by hand, then reworded")
    inbox.write_text(inbox.read_text(encoding="utf-8").replace(LOCAL, edited), encoding="utf-8")
    crew.run("b", "inbox", "approve", "1")
    assert "then reworded" in crew.m["b"].text()
    crew.run("b", "inbox", "drop", "1")
    assert proposal_branches(crew.remote) == []
    assert one["markdown"] not in remote_file(crew.remote)


def test_local_numbers_approved_here_keep_the_remote_s_as_read(crew: Team) -> None:
    """Approving the local #1 moves the remote's numbers up by one, as the inbox's own move:
    `drop 1` next drops the branch read as #2, and the record follows."""
    _add_local(crew, "b")
    one = crew.propose("a", "after local — read on machine b as number two")
    crew.inbox("b")
    crew.run("b", "inbox", "approve", "1")
    assert LOCAL.removeprefix("- ") in crew.m["b"].text()
    crew.run("b", "inbox", "drop", "1")
    assert proposal_branches(crew.remote) == []
    assert one["markdown"] not in remote_file(crew.remote)


def test_a_desk_click_keeps_the_terminal_s_numbers(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """b lists three at the terminal; c drops #1; a click in b's desk drops #3 by what its page
    showed. The click's own look-up is no listing b read: the terminal's `approve 1` still
    means the one c dropped, and approves nothing."""
    from brain.desk import actions

    made = [
        crew.propose("a", f"desk {n} — proposal number {n} read at b's terminal") for n in "123"
    ]
    listed = [p["branch"] for p in crew.inbox("b")["proposals"]]
    by_branch = {p["branch"]: p["markdown"] for p in made}
    crew.run("c", "inbox", "drop", listed[0].removeprefix("brain/proposal-"))
    crew.m["b"].activate(monkeypatch)
    assert actions.drop(crew.m["b"].vault, by_branch[listed[2]]).ok
    refused = crew.run("b", "inbox", "approve", "1", code=1)
    assert "nothing approved" in refused.err
    assert by_branch[listed[1]] not in remote_file(crew.remote)
    assert proposal_branches(crew.remote) == [f"refs/heads/{listed[1]}"]


def test_a_listing_that_cannot_be_kept_leaves_no_older_one_to_refuse_by(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state dir's disk is full when b lists again: the listing before it stayed, and every
    number b then typed from what it read was refused against one it no longer showed."""
    import errno

    from brain import files
    from brain.commands import inbox as inboxmod

    one = crew.propose("a", "kept one — listed on b before the disk filled")
    two = crew.propose("a", "kept two — listed on b before the disk filled")
    b = crew.m["b"]
    b.activate(monkeypatch)
    first, _ = (p.branch for p in inboxmod.inbox(b.vault).proposals)
    gone, kept = (one, two) if one["branch"] == first else (two, one)
    crew.run("c", "inbox", "drop", gone["branch"])
    real = files.write_atomic

    def full(path: object, *args: object, **kw: object) -> None:
        if str(path).endswith(".listed"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "write_atomic", full)
    (now,) = inboxmod.inbox(b.vault).proposals
    assert now.branch == kept["branch"]
    monkeypatch.setattr(files, "write_atomic", real)
    (dropped,) = inboxmod.drop_many(b.vault, ["1"])  # as the listing b read showed it
    assert dropped.markdown == kept["markdown"]
    assert proposal_branches(crew.remote) == []
