"""Team review on the shared remote (`proposals: team`, brain/team.py), through the real path:
a bare repository on local disk is the remote, three clones are three machines (two propose,
one approves), each with its own HOME and git identity. Faults are injected into the real
remote: a branch deleted or rewritten while an approval runs, a hook refusing the push, the
remote gone mid-push, a push cut off after the remote took it.

Credentials are built at run time: no token literal lives in this file.
"""

from __future__ import annotations

import os
import random
import shutil
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, git
from test_sync import Machine, make_machine

CONFIG = "proposals: team\n"


ALNUM = string.ascii_letters + string.digits


def fake_token(seed: int) -> str:
    rng = random.Random(seed)  # noqa: S311 -- a reproducible fake credential, not crypto
    return (
        "ghp" + "_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    )


def ls_remote(remote: Path) -> dict[str, str]:
    out = git(remote, "for-each-ref", "--format=%(refname) %(objectname)")
    return {ref: sha for ref, _, sha in (line.partition(" ") for line in out.splitlines())}


def proposal_branches(remote: Path) -> list[str]:
    return [ref for ref in ls_remote(remote) if ref.startswith("refs/heads/brain/proposal-")]


def remote_file(remote: Path, rel: str = "AI/MEMORY.md") -> str:
    return git(remote, "show", f"main:{rel}")


def approvals(remote: Path, pid: str) -> int:
    """Merge commits on the remote's main that approved proposal `pid`."""
    out = git(remote, "log", "--format=%H", f"--grep=^Brain-Approved: {pid}$", "main")
    return len(out.split())


class Team:
    def __init__(self, remote: Path, machines: dict[str, Machine]) -> None:
        self.remote = remote
        self.m = machines

    def run(self, who: str, *args: str, code: int | None = 0, **env: str) -> Run:
        m = self.m[who]
        result = m.brain(*args, "--vault", str(m.vault), env={"BRAIN_WORKER": "0", **env})
        assert "Traceback" not in result.err, result.err
        if code is not None:
            assert result.code == code, result
        return result

    def propose(self, who: str, line: str, *extra: str, code: int = 0) -> Any:
        return self.run(who, "propose", line, *extra, "--json", code=code).json()

    def inbox(self, who: str) -> Any:
        return self.run(who, "inbox", "--json").json()

    def process(self, who: str, *args: str) -> subprocess.Popen[str]:
        """`brain ARGS` on machine `who` in a process of its own (for races)."""
        m = self.m[who]
        env = {**os.environ, **m.env(), "BRAIN_WORKER": "0"}
        argv = [sys.executable, "-m", "brain", *args, "--vault", str(m.vault)]
        return subprocess.Popen(
            argv, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )


@pytest.fixture
def crew(tmp_path: Path) -> Team:
    """Machine a made the vault (`proposals: team`) and pushed it; b and c cloned it."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a, b, c = (make_machine(tmp_path, n) for n in "abc")
    a.start()
    a.add("AI/config.yaml", CONFIG)
    a.git("add", "-A")
    a.git("commit", "-qm", "team proposals")
    a.git("remote", "add", "origin", str(remote))
    a.git("push", "-qu", "origin", "main")
    for m in (b, c):
        git(tmp_path, "clone", "-q", str(remote), str(m.vault))
    return Team(remote, {"a": a, "b": b, "c": c})


def test_two_machines_propose_a_third_approves(crew: Team) -> None:
    a = crew.m["a"]
    head, status = a.git("rev-parse", "HEAD"), a.git("status", "--porcelain")
    inbox_before = a.text("AI/INBOX.md")
    one = crew.propose("a", "deploy window — deploys go out on Tuesdays")
    two = crew.propose("b", "db backups — backups run nightly at 02:00", "--to", "LEARNINGS")
    assert one["action"] == two["action"] == "proposed"
    assert one["sent"] is True
    assert two["sent"] is True
    branches = sorted([f"refs/heads/{one['branch']}", f"refs/heads/{two['branch']}"])
    assert sorted(proposal_branches(crew.remote)) == branches
    # the proposer's work tree, index, branch and inbox are as they were
    assert a.git("rev-parse", "HEAD") == head
    assert a.git("status", "--porcelain") == status
    assert a.text("AI/INBOX.md") == inbox_before
    # each branch is one commit on the remote's head changing the file approving it would
    branch = one["branch"]
    assert git(crew.remote, "rev-parse", f"{branch}^") == git(crew.remote, "rev-parse", "main")
    changed = git(crew.remote, "diff", "--name-only", "main", branch).split()
    assert changed == ["AI/MEMORY.md"]

    listed = crew.inbox("c")["proposals"]
    assert [(p["kind"], p["by"], p["markdown"]) for p in listed] == [
        ("team", "Person a", one["markdown"]),
        ("team", "Person b", two["markdown"]),
    ]
    assert listed[1]["to"] == "LEARNINGS"
    assert listed[0]["at"]
    human = crew.run("c", "inbox").out
    assert "by Person a" in human
    assert one["branch"] in human

    done = crew.run("c", "inbox", "approve", "1-2", "--json").json()["approved"]
    assert [d["path"] for d in done] == ["AI/MEMORY.md", "AI/LEARNINGS.md"]
    assert all(d["pushed"] for d in done)
    assert proposal_branches(crew.remote) == []
    assert remote_file(crew.remote).count(one["markdown"]) == 1
    assert remote_file(crew.remote, "AI/LEARNINGS.md").count(two["markdown"]) == 1
    # the approver's vault received the merge (a receive pass), nothing left to commit there
    c = crew.m["c"]
    assert one["markdown"] in c.text()
    assert two["markdown"] in c.text("AI/LEARNINGS.md")
    assert crew.inbox("a")["proposals"] == []


def test_the_same_fact_from_two_machines_is_one_proposal(crew: Team) -> None:
    line = "cache ttl — the CDN caches pages for 5 minutes — ops — 2026-12-01"
    first = crew.propose("a", line)
    second = crew.propose("b", line)
    assert first["action"] == "proposed"
    assert second["action"] == "queued"
    assert first["branch"] == second["branch"]
    assert len(proposal_branches(crew.remote)) == 1


def test_offline_proposal_waits_and_goes_with_the_next_pass(crew: Team) -> None:
    crew.m["a"].sync()
    worked = crew.run("a", "sync", "status", "--json").json()["fetched_at"]
    assert worked
    time.sleep(1.1)  # said to the second: a failed fetch's time would differ
    away = crew.remote.with_name("away.git")
    crew.remote.rename(away)
    out = crew.propose("a", "release train — releases leave every second Thursday")
    assert out["action"] == "proposed"
    assert out["sent"] is False
    assert "waits on this machine" in out["note"]
    assert crew.m["a"].git("for-each-ref", "refs/brain/proposals/")
    listed = crew.inbox("a")
    assert [p["kind"] for p in listed["proposals"]] == ["unsent"]
    assert "could not be reached" in listed["note"]
    # the person's listing does not say it is on the remote: it waits here
    said = crew.run("a", "inbox").out
    assert "1 proposal (0 in AI/INBOX.md, 1 waiting here to be sent):" in said
    # an unsent proposal cannot be approved, only sent or dropped
    refused = crew.run("a", "inbox", "approve", "1", code=1)
    assert "waits on this machine" in refused.err
    status = crew.run("a", "sync", "status", "--json").json()
    assert status["ahead"] == 1  # the proposal is a commit the next pass sends
    assert status["fetched_at"] == worked  # the failed fetches emptied FETCH_HEAD, not the record
    away.rename(crew.remote)
    result = crew.m["a"].sync()
    assert result["sent"] >= 1, result
    assert proposal_branches(crew.remote) == [f"refs/heads/{out['branch']}"]
    assert crew.m["a"].git("for-each-ref", "refs/brain/proposals/") == ""
    assert [p["kind"] for p in crew.inbox("c")["proposals"]] == ["team"]


def test_a_credential_guarded_text_or_lint_refusal_is_never_pushed(crew: Team) -> None:
    token = fake_token(7)
    secret = crew.run("a", "propose", f"ci token — the CI uses {token}", code=1)
    assert "credential" in secret.err
    assert token not in secret.err
    hidden = crew.run("a", "propose", "zero width — a\u200bb is hidden", code=1)
    assert "U+200B" in hidden.err
    crew.m["a"].add("AI/config.yaml", "lint: strict\n")
    strict = crew.run("a", "propose", "run tests — run `just test` before pushing", code=1)
    assert "lint" in strict.err
    assert proposal_branches(crew.remote) == []
    assert token not in git(crew.remote, "log", "--all", "-p")


def test_a_waiting_proposal_holding_a_credential_is_never_sent(crew: Team) -> None:
    """A proposal commit made by hand (or by another tool) is scanned before any pass sends it."""
    a = crew.m["a"]
    token = fake_token(11)
    a.add("AI/MEMORY.md", f"- **leak** — {token} — x — 2026-12-01\n")
    a.git("add", "-A")
    tree_id = a.git("write-tree").strip()
    parent = a.git("rev-parse", "HEAD").strip()
    pid = "0123456789ab"
    message = f"brain propose: - **leak** — x\n\nBrain-Proposal: {pid}\nBrain-To: AI/MEMORY.md\n"
    sha = a.git("commit-tree", tree_id, "-p", parent, "-m", message).strip()
    a.git("reset", "-q", "--hard", parent)
    a.git("update-ref", f"refs/brain/proposals/{pid}", sha)
    result = a.sync(code=1)  # something waits: said, exit 1
    assert any("credential" in w for w in result["waiting"]), result
    assert proposal_branches(crew.remote) == []
    assert token not in git(crew.remote, "log", "--all", "-p")


def test_drop_deletes_the_branch(crew: Team) -> None:
    crew.propose("a", "old host — the build host is ci-3")
    dropped = crew.run("c", "inbox", "drop", "1", "--json").json()
    assert dropped["number"] == 1
    assert proposal_branches(crew.remote) == []
    gone = crew.run("c", "inbox", "drop", "1", code=1)
    assert "the inbox is empty" in gone.err


# --- faults: the remote changes, refuses or goes away while an approval runs ---------------------


def _approve_in_process(crew: Team, who: str, monkeypatch: pytest.MonkeyPatch, fault: Any) -> str:
    """Approve proposal 1 on `who` in this process, `fault` run just before the push; the error
    line, or "" when it was approved."""
    from brain import team
    from brain.commands import inbox as inboxmod
    from brain.errors import BrainError

    crew.m[who].activate(monkeypatch)
    monkeypatch.setattr(team, "_before_push", lambda _vault: fault())
    try:
        inboxmod.approve_many(crew.m[who].vault, ["1"])
    except BrainError as exc:
        return exc.message
    finally:
        monkeypatch.setattr(team, "_before_push", lambda _vault: None)
    return ""


def test_faults_lose_nothing_and_merge_nothing_twice(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = crew.remote
    counts = {"deleted": 0, "rewritten": 0, "rejected": 0, "unreachable": 0, "cut off": 0}

    # the branch deleted on the remote while the approval runs
    p = crew.propose("a", "fault one — the branch is deleted under the approval")
    pid = p["branch"].removeprefix("brain/proposal-")
    main = ls_remote(remote)["refs/heads/main"]
    said = _approve_in_process(
        crew, "c", monkeypatch, lambda: git(remote, "update-ref", "-d", f"refs/heads/{p['branch']}")
    )
    assert "no longer on the remote" in said
    assert "nothing merged" in said
    assert ls_remote(remote)["refs/heads/main"] == main
    counts["deleted"] += 1

    # the branch rewritten (force-pushed) while the approval runs
    p = crew.propose("a", "fault two — the branch is rewritten under the approval")
    b = crew.m["b"]

    def rewrite() -> None:
        b.git("fetch", "-q", "origin")
        b.git("commit", "-q", "--allow-empty", "-m", "elsewhere")
        b.git("push", "-qf", "origin", f"HEAD:refs/heads/{p['branch']}")
        b.git("reset", "-q", "--hard", "origin/main")

    said = _approve_in_process(crew, "c", monkeypatch, rewrite)
    assert "changed on the remote" in said
    assert "nothing merged" in said
    assert ls_remote(remote)["refs/heads/main"] == main
    assert f"refs/heads/{p['branch']}" in ls_remote(remote)
    crew.run("c", "inbox", "drop", "1")
    counts["rewritten"] += 1

    # a hook on the remote refuses the push
    p = crew.propose("b", "fault three — a hook refuses the approval")
    pid = p["branch"].removeprefix("brain/proposal-")
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'frozen for the release' >&2\nexit 1\n")
    hook.chmod(0o755)
    refused = crew.run("c", "inbox", "approve", "1", code=1)
    assert "refused" in refused.err
    assert "nothing merged" in refused.err
    assert ls_remote(remote)["refs/heads/main"] == main
    counts["rejected"] += 1
    hook.unlink()

    # the remote unreachable mid-push
    away = remote.with_name("away.git")
    said = _approve_in_process(crew, "c", monkeypatch, lambda: remote.rename(away))
    away.rename(remote)
    assert "nothing merged" in said, said
    assert ls_remote(remote)["refs/heads/main"] == main
    counts["unreachable"] += 1
    crew.run("c", "inbox", "approve", "1")
    assert approvals(remote, pid) == 1

    # the push cut off after the remote took it (the client never hears back)
    post = remote / "hooks" / "post-receive"
    post.write_text("#!/bin/sh\nsleep 30\n")
    post.chmod(0o755)
    p = crew.propose("a", "fault five — the push is cut off after the remote took it")
    pid = p["branch"].removeprefix("brain/proposal-")
    from brain import gitsync

    monkeypatch.setattr(gitsync, "NET_TIMEOUT", 3.0)  # the client gives up; the remote goes on
    said = _approve_in_process(crew, "c", monkeypatch, lambda: None)
    monkeypatch.setattr(gitsync, "NET_TIMEOUT", 60.0)
    post.unlink()
    assert "may or may not" in said, said
    again = crew.run("c", "inbox", "--json").json()
    assert again["proposals"] == []  # the remote took it: nothing left to approve
    assert approvals(remote, pid) == 1
    counts["cut off"] += 1

    merged = remote_file(remote)
    for line in ("fault three", "fault five"):
        assert sum(line in x for x in merged.split("\n")) == 1
    assert "fault one" not in merged
    assert "fault two" not in merged
    print("faults:", counts)


# --- races: two approvers at once ----------------------------------------------------------------


def test_two_approver_processes_of_one_proposal_merge_it_once(crew: Team) -> None:
    """Two real `brain inbox approve` processes on two machines, started a few milliseconds
    apart (by seed): whichever way they overlap, the proposal is merged once."""
    import time

    tally = {"approved": 0, "already approved": 0, "gone when listed": 0}
    for seed in range(1, 5):
        rng = random.Random(seed)  # noqa: S311 -- an order, not crypto
        p = crew.propose("a", f"race {seed} — two machines approve this at once")
        pid = p["branch"].removeprefix("brain/proposal-")
        first, second = ("b", "c") if rng.random() < 0.5 else ("c", "b")
        procs = [crew.process(first, "inbox", "approve", "1")]
        time.sleep(rng.random() * 0.3)
        procs.append(crew.process(second, "inbox", "approve", "1"))
        results = [(proc.wait(timeout=120), *proc.communicate()) for proc in procs]
        assert sorted(code for code, _, _ in results) == [0, 1], results
        (lost,) = [err for code, _, err in results if code]
        assert "Traceback" not in lost
        if "already approved" in lost:
            assert "nothing merged twice" in lost
            tally["already approved"] += 1
        else:  # it listed after the other had pushed: nothing open to approve
            assert "the inbox is empty" in lost, lost
            tally["gone when listed"] += 1
        tally["approved"] += 1
        assert approvals(crew.remote, pid) == 1
        assert remote_file(crew.remote).count(p["markdown"]) == 1
        assert proposal_branches(crew.remote) == []
    print("process races:", tally)


@pytest.mark.parametrize("seed", [4, 5])
def test_two_approvers_of_two_proposals_merge_both(crew: Team, seed: int) -> None:
    one = crew.propose("a", f"pair {seed} one — approved on machine b")
    two = crew.propose("b", f"pair {seed} two — approved on machine c")
    # by branch: a number moves when the proposal before it goes (the other approval may land
    # before this one lists), which is why approve takes a branch
    procs = [
        crew.process("b", "inbox", "approve", one["branch"]),
        crew.process("c", "inbox", "approve", two["branch"]),
    ]
    results = [(proc.wait(timeout=120), *proc.communicate()) for proc in procs]
    assert [code for code, _, _ in results] == [0, 0], results
    text = remote_file(crew.remote)
    assert text.count(one["markdown"]) == 1
    assert text.count(two["markdown"]) == 1
    assert proposal_branches(crew.remote) == []


# --- --pr: a pull request through gh, when there is one ------------------------------------------


def test_pr_opens_a_pull_request_through_gh_on_github(crew: Team, tmp_path: Path) -> None:
    a = crew.m["a"]
    no_gh = crew.propose("a", "no gh — the remote is on disk", "--pr")
    assert no_gh["pr"] is None
    assert "not on GitHub" in no_gh["note"]
    # the remote as GitHub names it, reached on disk (git's insteadOf), and a gh that records
    url = "https://github.com/team/vault.git"
    a.git("config", f"url.{crew.remote}.insteadOf", url)
    a.git("remote", "set-url", "origin", url)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    said = tmp_path / "gh-args"
    (bin_dir / "gh").write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {said}\necho https://github.com/team/vault/pull/7\n'
    )
    (bin_dir / "gh").chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    out = crew.run("a", "propose", "with gh — a pull request opens", "--pr", "--json", PATH=path)
    doc = out.json()
    assert doc["pr"] == "https://github.com/team/vault/pull/7"
    args = said.read_text().split("\n")
    assert args[:5] == ["pr", "create", "--head", doc["branch"], "--base"]
    assert args[5] == "main"
    shutil.rmtree(bin_dir)


def test_the_desk_lists_the_remote_s_proposals(crew: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    from brain.desk import actions, pages

    one = crew.propose("a", "desk view — the desk lists proposal branches")
    c = crew.m["c"]
    c.activate(monkeypatch)
    page = pages.inbox(c.vault)
    (item,) = page["items"]
    extra = dict(item.extra)
    assert extra["kind"] == "team"
    assert extra["by"] == "Person a"
    assert extra["branch"] == one["branch"]
    assert not item.editable  # a branch of the remote is approved or dropped as it stands
    away = crew.remote.with_name("away.git")
    crew.remote.rename(away)
    assert "could not be reached" in pages.inbox(c.vault)["remote_note"]
    away.rename(crew.remote)
    done = actions.approve(c.vault, item.key)
    assert done.ok
    assert remote_file(crew.remote).count(one["markdown"]) == 1
    assert proposal_branches(crew.remote) == []


def _at_once(
    crew: Team, monkeypatch: pytest.MonkeyPatch, jobs: dict[str, str], seed: int
) -> dict[str, str]:
    """Approve on several machines at once, in threads of this process: each fetches, merges,
    then waits for the others before pushing (a barrier in the seam before the push), so the
    pushes meet at the remote; `seed` staggers them by a few milliseconds. What each said."""
    import threading
    import time

    from brain import team
    from brain.commands import inbox as inboxmod
    from brain.errors import BrainError

    rng = random.Random(seed)  # noqa: S311 -- an order, not crypto
    barrier = threading.Barrier(len(jobs), timeout=60)
    met: set[str] = set()
    delay = {str(crew.m[who].vault): rng.random() * 0.05 for who in jobs}

    def meet(vault: Path) -> None:
        if str(vault) not in met:  # the first push only: a retry goes on its own
            met.add(str(vault))
            barrier.wait()
            time.sleep(delay[str(vault)])

    monkeypatch.setattr(team, "_before_push", meet)
    said: dict[str, str] = {}

    def approve(who: str, number: str) -> None:
        try:
            inboxmod.approve_many(crew.m[who].vault, [number])
            said[who] = "approved"
        except BrainError as exc:
            said[who] = exc.message

    threads = [threading.Thread(target=approve, args=item) for item in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    monkeypatch.setattr(team, "_before_push", lambda _vault: None)
    return said


def test_pushes_that_meet_at_the_remote_merge_once(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    crew.m["c"].activate(monkeypatch)  # one process for both approvers: its state dir
    tally = {"approved": 0, "already approved": 0, "both merged": 0}
    for seed in range(6):
        p = crew.propose("a", f"meet {seed} — two approvals of this meet at the remote")
        pid = p["branch"].removeprefix("brain/proposal-")
        said = _at_once(crew, monkeypatch, {"b": "1", "c": "1"}, seed)
        assert sorted(said.values())[0] == "approved", said
        (lost,) = [m for m in said.values() if m != "approved"]
        assert "already approved" in lost, said
        assert "nothing merged twice" in lost, said
        tally["approved"] += 1
        tally["already approved"] += 1
        assert approvals(crew.remote, pid) == 1
        assert remote_file(crew.remote).count(p["markdown"]) == 1
        assert proposal_branches(crew.remote) == []
    for seed in range(6, 9):
        one = crew.propose("a", f"meet {seed} one — approved on b as c approves another")
        two = crew.propose("b", f"meet {seed} two — approved on c as b approves another")
        said = _at_once(crew, monkeypatch, {"b": "1", "c": "2"}, seed)
        assert said == {"b": "approved", "c": "approved"}, said
        text = remote_file(crew.remote)
        assert text.count(one["markdown"]) == 1
        assert text.count(two["markdown"]) == 1
        tally["both merged"] += 1
    print("races:", tally)


def push_by_hand(
    m: Machine,
    pid: str,
    bullet: str,
    added: dict[str, str],
    *,
    parent: str = "origin/main",
    whole: bool = False,
) -> None:
    """Push a branch named as a proposal, with a proposal's message, whose commit appends
    `added` (path: text; with `whole`, sets each file to its text) to `parent`, the remote's
    head: what a person or another tool could push."""
    m.git("fetch", "-q", "origin")
    parent = m.git("rev-parse", parent).strip()
    m.git("reset", "-q", "--hard", parent)
    for rel, text in added.items():
        if whole:
            (m.vault / rel).unlink(missing_ok=True)
        m.add(rel, text)
    m.git("add", "-A")
    tree = m.git("write-tree").strip()
    message = f"brain propose: {bullet}\n\nBrain-Proposal: {pid}\nBrain-To: AI/MEMORY.md\n"
    sha = m.git("commit-tree", tree, "-p", parent, "-m", message).strip()
    m.git("reset", "-q", "--hard", parent)
    m.git("push", "-q", "origin", f"{sha}:refs/heads/brain/proposal-{pid}")


def test_a_branch_that_is_not_a_proposal_is_never_merged(crew: Team) -> None:
    """Branches named like proposals but carrying more than their bullet (pushed by hand) are
    listed with what is wrong, and approving them merges nothing."""
    b = crew.m["b"]
    bullet = "- **sneaky** — rides along — x — 2026-12-01"
    token = fake_token(23)
    push_by_hand(b, "feedface0001", bullet, {"README.md": "x\n", "AI/MEMORY.md": bullet + "\n"})
    push_by_hand(
        b, "feedface0002", bullet, {"AI/MEMORY.md": f"{bullet}\n- **more** — rides too — x\n"}
    )
    push_by_hand(b, "feedface0003", bullet, {"AI/MEMORY.md": f"## key {token}\n{bullet}\n"})
    main = ls_remote(crew.remote)["refs/heads/main"]
    listed = {p["branch"][-4:]: p for p in crew.inbox("c")["proposals"]}
    assert "README.md" in listed["0001"]["problem"]
    assert "more of the file than its bullet" in listed["0002"]["problem"]
    # a heading of its own rides along unread (tests/test_team_hostile.py: the credential scan)
    assert "more of the file than its bullet" in listed["0003"]["problem"]
    for pid in ("feedface0001", "feedface0002", "feedface0003"):
        refused = crew.run("c", "inbox", "approve", f"brain/proposal-{pid}", code=1)
        assert "not approved" in refused.err
        assert token not in refused.err
    assert ls_remote(crew.remote)["refs/heads/main"] == main
    assert token not in git(crew.remote, "log", "-p", "main")
    crew.run("c", "inbox", "drop", "all")
    assert proposal_branches(crew.remote) == []


def test_a_team_vault_that_is_not_a_repository_lists_its_own_inbox(tmp_path: Path) -> None:
    from conftest import brain

    from brain import shipped

    vault = tmp_path / "plain"
    (vault / "AI").mkdir(parents=True)
    for name in shipped.STARTER_FILES:
        (vault / "AI" / name).write_text(shipped.starter_file(name), encoding="utf-8")
    (vault / "AI" / "config.yaml").write_text(CONFIG, encoding="utf-8")
    listed = brain("inbox", "--vault", str(vault), "--json", env={"BRAIN_WORKER": "0"})
    assert listed.code == 0, listed
    assert "not a git repository" in listed.json()["note"]
    said = brain("propose", "x — y", "--vault", str(vault), env={"BRAIN_WORKER": "0"})
    assert said.code == 1
    assert "not a git repository" in said.err
    assert "Traceback" not in said.err


def test_approve_and_drop_take_a_branch_whose_number_moved(crew: Team) -> None:
    first = crew.propose("a", "by branch one — dropped by its id")
    second = crew.propose("b", "by branch two — approved by its branch")
    crew.run("c", "inbox", "approve", second["branch"])
    assert remote_file(crew.remote).count(second["markdown"]) == 1
    again = crew.run("c", "inbox", "approve", second["branch"], code=1)
    assert "no open proposal is on" in again.err
    crew.run("c", "inbox", "drop", first["branch"].removeprefix("brain/proposal-"))
    assert proposal_branches(crew.remote) == []
    assert first["markdown"] not in remote_file(crew.remote)


def test_a_number_read_before_another_machine_dropped_that_proposal_acts_on_none(
    crew: Team,
) -> None:
    """b lists two proposals; c drops #1 meanwhile. b's `drop 1` meant the one c dropped: the
    fetch before it renumbered the rest, and it dropped what b had read as #2."""
    one = crew.propose("a", "number one — dropped on machine c")
    two = crew.propose("a", "number two — read on machine b as the second")
    listed = [p["branch"] for p in crew.inbox("b")["proposals"]]
    assert sorted(listed) == sorted([one["branch"], two["branch"]])
    crew.run("c", "inbox", "drop", "1")
    for verb in ("drop", "approve"):
        refused = crew.run("b", "inbox", verb, "1", code=1)
        assert f"#1, {listed[0]}, was approved or dropped on another machine" in refused.err
        assert "run `brain inbox`" in refused.err
    assert proposal_branches(crew.remote) == [f"refs/heads/{listed[1]}"]
    # `drop 2` of the two read: said the same, not "there is no proposal 2"
    assert "on another machine" in crew.run("b", "inbox", "drop", "2", code=1).err
    # listed again, the numbers are the remote's now
    assert [p["branch"] for p in crew.inbox("b")["proposals"]] == [listed[1]]
    crew.run("b", "inbox", "approve", "1")
    kept = next(p["markdown"] for p in (one, two) if p["branch"] == listed[1])
    assert remote_file(crew.remote).count(kept) == 1


def test_drop_all_never_drops_a_proposal_that_arrived_after_the_listing(crew: Team) -> None:
    crew.propose("a", "read one — listed on machine b")
    crew.inbox("b")
    late = crew.propose("c", "late one — proposed after b listed")
    refused = crew.run("b", "inbox", "drop", "all", code=1)
    assert "changed since the inbox was listed" in refused.err  # arrived, or sorts before
    assert "nothing dropped" in refused.err
    assert f"refs/heads/{late['branch']}" in proposal_branches(crew.remote)
    assert len(proposal_branches(crew.remote)) == 2
    crew.inbox("b")
    crew.run("b", "inbox", "drop", "all")
    assert proposal_branches(crew.remote) == []


def test_a_proposal_push_cut_off_after_the_remote_took_it_is_sent_once(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client gives up on a push the remote went on with: the proposal still waits here,
    and the next pass finds the remote holding it, so it is one branch, not two, and nothing
    waits after."""
    from brain import gitsync
    from brain.commands.propose import propose

    post = crew.remote / "hooks" / "post-receive"
    post.write_text("#!/bin/sh\nsleep 30\n")
    post.chmod(0o755)
    a = crew.m["a"]
    a.activate(monkeypatch)
    monkeypatch.setattr(gitsync, "NET_TIMEOUT", 3.0)  # the client gives up; the remote goes on
    out = propose(a.vault, "cut off — the remote took it, the client never heard", source="t")
    post.unlink()
    monkeypatch.setattr(gitsync, "NET_TIMEOUT", 60.0)
    assert out.sent is False
    assert "waits on this machine" in (out.note or "")
    assert proposal_branches(crew.remote) == [f"refs/heads/{out.branch}"]
    result = a.sync()
    assert a.git("for-each-ref", "refs/brain/proposals/") == ""
    assert proposal_branches(crew.remote) == [f"refs/heads/{out.branch}"]
    assert "team proposals" not in " ".join(result["waiting"])
    (listed,) = crew.inbox("c")["proposals"]
    assert listed["kind"] == "team"


def test_a_remote_without_atomic_pushes_merges_nothing(crew: Team) -> None:
    """Merging once rests on the atomic push: a remote that does not take one is said, and
    nothing is merged (git's receive.advertiseAtomic turns it off on the remote)."""
    p = crew.propose("a", "no atomic — this remote cannot take both refs at once")
    git(crew.remote, "config", "receive.advertiseAtomic", "false")
    main = ls_remote(crew.remote)["refs/heads/main"]
    said = crew.run("c", "inbox", "approve", "1", code=1)
    assert "atomic" in said.err
    assert "nothing merged" in said.err
    assert ls_remote(crew.remote)["refs/heads/main"] == main
    assert proposal_branches(crew.remote) == [f"refs/heads/{p['branch']}"]


def test_the_remote_holds_at_most_max_pending_open_proposals(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runaway agent cannot fill the team's remote with branches: past MAX_PENDING open
    proposals (here lowered to 2), more are refused until some are approved or dropped."""
    from brain.commands import inbox as inboxmod
    from brain.commands.propose import propose_many

    a = crew.m["a"]
    a.activate(monkeypatch)
    monkeypatch.setattr(inboxmod, "MAX_PENDING", 2)
    lines = [(f"flood {n} — one of many proposals", "t") for n in range(4)]
    results = [propose_many(a.vault, [line])[0] for line in lines]  # one call each
    assert [r.action for r in results] == ["proposed", "proposed", "refused", "refused"]
    assert results[2].problem == inboxmod.FULL
    assert len(proposal_branches(crew.remote)) == 2
    inboxmod.drop_many(a.vault, ["1"])
    (again,) = propose_many(a.vault, [lines[2]])
    assert again.action == "proposed"
    assert len(proposal_branches(crew.remote)) == 2


def test_two_hundred_proposals_are_listed_in_one_pass_over_the_refs(
    crew: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inbox of a team with 200 proposal branches on the remote (one pushed by hand carrying
    more than its bullet) and one waiting here asks git a bounded number of times: its fetch and
    a few, never once a branch (it ran `git rev-parse` for each). Every check still holds: the
    hand-pushed branch says what is wrong, the waiting one is listed unsent, and a ref of this
    clone to something that is no commit is left out."""
    from brain import team
    from brain.commands.propose import propose_many

    a, c = crew.m["a"], crew.m["c"]
    a.activate(monkeypatch)
    lines = [(f"many{n:03} — one of two hundred proposals", "t") for n in range(199)]
    assert {r.action for r in propose_many(a.vault, lines)} == {"proposed"}
    bullet = "- **sneaky** — rides along — x — 2026-12-01"
    push_by_hand(c, "feedface0001", bullet, {"README.md": "x\n", "AI/MEMORY.md": bullet + "\n"})
    c.git("fetch", "-q", "origin")
    tip = c.git("rev-parse", "origin/brain/proposal-feedface0001").strip()
    c.git("update-ref", f"{team.WAITING}0123456789ab", tip)  # waiting here, its trailer not its id
    blob = c.git("rev-parse", "HEAD:AI/MEMORY.md").strip()
    c.git("update-ref", f"{team.WAITING}abcdefabcdef", blob)

    c.activate(monkeypatch)
    spawned: list[Any] = []

    class Counted(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kw: Any) -> None:
            spawned.append(args[0] if args else kw.get("args"))
            super().__init__(*args, **kw)

    monkeypatch.setattr(subprocess, "Popen", Counted)
    listed = team.listing(c.vault)
    monkeypatch.undo()
    assert listed.note == ""
    # the git dir, the remote's config and branch, the fetch: none a branch (it was 209)
    assert len(spawned) <= 4, spawned
    by_id = {p.id: p for p in listed.proposals}
    assert len(by_id) == 201
    assert all(
        p.sent and p.problem == "" for p in by_id.values() if p.markdown.startswith("- **many")
    )
    assert "README.md" in by_id["feedface0001"].problem
    waiting = by_id["0123456789ab"]
    assert (waiting.sent, "not a brain proposal" in waiting.problem) == (False, True)
    assert "abcdefabcdef" not in by_id
