"""`brain sync` through the real path: a bare repository on local disk is the remote, two clones
are two machines, each with its own HOME, config and state dirs, and every pass is the real
`brain` in its own process.

Credentials are built at run time: no token literal lives in this file.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import statistics
import string
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, brain, git

from brain import autosync as syncmod
from brain import config, gitsync, shipped

RNG = random.Random(18_018)  # noqa: S311 -- reproducible fake credentials, not crypto


def bullet(handle: str, fact: str = "a fact") -> str:
    return f"- **{handle}** — {fact} — test — 2026-12-01\n"


def token() -> str:
    return (
        "ghp" + "_" + "".join(RNG.choice(string.ascii_letters + string.digits) for _ in range(36))
    )


@dataclass
class Machine:
    """One machine: its vault (a clone) and its own HOME, config and state dirs."""

    name: str
    home: Path
    vault: Path

    def env(self) -> dict[str, str]:
        home = self.home
        return {
            "HOME": str(home),
            "USERPROFILE": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "GIT_AUTHOR_NAME": f"Person {self.name}",
            "GIT_COMMITTER_NAME": f"Person {self.name}",
        }

    def brain(self, *args: str, env: dict[str, str] | None = None, **kw: Any) -> Run:
        return brain(*args, env={**self.env(), **(env or {})}, **kw)

    def sync(self, *args: str, code: int = 0, env: dict[str, str] | None = None) -> Any:
        run = self.brain("sync", *args, "--vault", str(self.vault), "--json", env=env)
        assert run.code == code, run
        assert "Traceback" not in run.err, run.err
        return run.json()

    def add(self, rel: str, text: str) -> None:
        path = self.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text)

    def text(self, rel: str = "AI/MEMORY.md") -> str:
        return (self.vault / rel).read_text(encoding="utf-8")

    def git(self, *args: str) -> str:
        return git(self.vault, *args)

    def start(self) -> None:
        """Make this machine's vault: a new repository holding the starter files."""
        git(self.vault.parent, "init", "-q", "-b", "main", str(self.vault))
        for name in shipped.STARTER_FILES:
            self.add(f"AI/{name}", shipped.starter_file(name))
        self.git("add", "-A")
        self.git("commit", "-qm", "starter")

    def activate(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Be this machine in-process (for calls that read the state dir from the env)."""
        for key, value in self.env().items():
            monkeypatch.setenv(key, value)


def make_machine(tmp_path: Path, name: str) -> Machine:
    home = tmp_path / f"home-{name}"
    home.mkdir()
    return Machine(name, home, tmp_path / f"vault-{name}")


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(path))
    return path


@pytest.fixture
def pair(tmp_path: Path, remote: Path) -> tuple[Machine, Machine]:
    """Machine a made the vault (the starter files) and pushed it; machine b cloned it."""
    a, b = make_machine(tmp_path, "a"), make_machine(tmp_path, "b")
    a.start()
    a.git("remote", "add", "origin", str(remote))
    a.git("push", "-qu", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(b.vault))
    return a, b


def remote_history(remote: Path) -> str:
    """Every byte the remote holds, as a patch of its whole history."""
    return git(remote, "log", "--all", "-p", "--format=%H %an %s")


def wait_for(check: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def pass_running(machine: Machine) -> bool:
    """Whether a background pass holds this machine's sync lock."""
    import fcntl

    env = machine.env()
    state = Path(env["XDG_STATE_HOME"]) / "brain" / "sync"
    for lock in state.glob("*.lock"):
        with lock.open("a") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return False


def settle(machine: Machine) -> None:
    """Let background passes this test started finish (they are never left running)."""
    time.sleep(0.5)
    wait_for(lambda: not pass_running(machine), "the background pass to finish")


def slow_remote(machine: Machine, remote: Path, folder: Path, seconds: int) -> dict[str, str]:
    """Point `machine` at `remote` through an ssh that waits `seconds` before each connection;
    the variables git needs for it."""
    ssh = folder / f"slow-ssh-{seconds}"
    ssh.write_text(
        f'#!/bin/sh\nsleep {seconds}\nexec sh -c "$(echo "$2" | sed "s/^git-/git /")"\n', "utf-8"
    )
    ssh.chmod(0o755)
    machine.git("remote", "set-url", "origin", f"fakehost:{remote}")
    return {"GIT_SSH_COMMAND": str(ssh), "GIT_SSH_VARIANT": "simple"}


# --- the everyday path ---------------------------------------------------------------------------


@pytest.mark.parametrize("first", ["a", "b"])
def test_both_add_bullets_and_sync_in_either_order(
    pair: tuple[Machine, Machine], first: str
) -> None:
    a, b = pair
    a.add("AI/MEMORY.md", bullet("from a"))
    b.add("AI/MEMORY.md", bullet("from b"))
    b.add("AI/LEARNINGS.md", bullet("learnt on b"))
    one, two = (a, b) if first == "a" else (b, a)
    doc = one.sync()
    assert (doc["outcome"], doc["wrote"], doc["sent"], doc["received"]) == (
        "synced",
        1 + (one is b),
        1,
        0,
    )
    doc = two.sync()
    assert (doc["outcome"], doc["wrote"], doc["received"], doc["sent"]) == (
        "synced",
        1 + (two is b),
        1,
        1,
    )
    assert doc["conflicts"] == []
    assert "AI/MEMORY.md" in doc["changed"]
    assert one.sync()["received"] == 1
    for m in (a, b):
        text = m.text()
        assert text.count(bullet("from a")) == 1
        assert text.count(bullet("from b")) == 1
        assert "<<<<<<<" not in text
        assert ">>>>>>>" not in text
        assert bullet("learnt on b") in m.text("AI/LEARNINGS.md")
    assert a.text() == b.text()
    assert a.git("rev-parse", "HEAD") == b.git("rev-parse", "HEAD")
    again = a.sync()
    assert (again["outcome"], again["summary"]) == ("up-to-date", "up to date")


def test_a_receive_keeps_changes_not_written_down_yet(pair: tuple[Machine, Machine]) -> None:
    """The session-start receive does not write down: what the person (or agent) is editing
    stays uncommitted, merged line by line with what arrives."""
    a, b = pair
    a.add("AI/MEMORY.md", bullet("from a"))
    a.sync()
    b.add("AI/MEMORY.md", bullet("being edited on b"))
    doc = b.brain("sync", "--background", "receive", "--vault", str(b.vault), "--json").json()
    assert (doc["mode"], doc["wrote"], doc["received"], doc["sent"]) == ("receive", 0, 1, 0)
    text = b.text()
    assert bullet("from a") in text
    assert bullet("being edited on b") in text
    assert "<<<<<<<" not in text
    assert b.git("status", "--porcelain").strip() == "M AI/MEMORY.md"
    assert b.git("stash", "list") == ""


def test_the_one_line_says_what_happened(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.add("AI/MEMORY.md", bullet("one"))
    a.add("notes/plan.md", "A plan.\n")
    run = a.brain("sync", "--vault", str(a.vault))
    assert (run.code, run.out) == (0, "wrote down 2 changes; sent 1\n")
    run = b.brain("sync", "--vault", str(b.vault))
    assert (run.code, run.out) == (0, "received 1 (2 files)\n")
    assert b.brain("sync", "--vault", str(b.vault)).out == "up to date\n"


def test_both_edit_the_same_bullet_keeps_both_lines_and_names_the_next_step(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.add("AI/MEMORY.md", bullet("deploy window", "tuesdays"))
    a.sync()
    b.sync()
    for m, fact in ((a, "wednesdays, said a"), (b, "thursdays, said b")):
        text = m.text().replace(bullet("deploy window", "tuesdays"), bullet("deploy window", fact))
        (m.vault / "AI" / "MEMORY.md").write_text(text, encoding="utf-8")
    a.sync()
    doc = b.sync(code=1)  # b receives a's edit on top of its own: both kept, and it says so
    assert doc["sent"] == 1
    [conflict] = doc["conflicts"]
    assert conflict["path"] == "AI/MEMORY.md"
    lines = b.text().split("\n")
    assert lines[conflict["line"] - 1] == bullet("deploy window", "wednesdays, said a").strip()
    assert lines[conflict["line"]] == bullet("deploy window", "thursdays, said b").strip()
    assert "both sides changed AI/MEMORY.md: both kept at line" in doc["summary"]
    assert "keep one and run brain sync" in doc["summary"]
    assert "<<<<<<<" not in b.text()
    assert a.sync()["received"] == 1
    assert a.text() == b.text()
    # The person keeps one; that is written down and sent like any change.
    text = b.text().replace(bullet("deploy window", "wednesdays, said a"), "")
    (b.vault / "AI" / "MEMORY.md").write_text(text, encoding="utf-8")
    assert b.sync()["sent"] == 1
    assert a.sync()["received"] == 1
    assert a.text().count("deploy window") == 1


def test_an_offline_machine_keeps_its_changes_and_backs_off(
    pair: tuple[Machine, Machine], remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = pair
    moved = remote.with_name("moved-away.git")
    remote.rename(moved)
    a.add("AI/MEMORY.md", bullet("written offline"))
    doc = a.sync(code=1)
    assert (doc["outcome"], doc["wrote"], doc["sent"]) == ("offline", 1, 0)
    assert "does not appear to be a git repository" in doc["reason"]
    assert doc["summary"].startswith("wrote down 1 change; offline (")
    assert "changes kept here; background passes try again after" in doc["summary"]
    assert a.git("status", "--porcelain") == ""  # written down, waiting to be sent
    a.activate(monkeypatch)
    until = syncmod.read_state(a.vault)["offline_until"]
    assert 590 < until - time.time() <= 600
    assert syncmod.background(a.vault, "send") is False  # no spawn for ten minutes
    quiet = a.brain("sync", "--background", "send", "--vault", str(a.vault), "--json").json()
    assert (quiet["outcome"], quiet["ms"] < 1000) == ("offline", True)  # no network tried
    moved.rename(remote)
    doc = a.sync()  # a person's sync always tries
    assert (doc["outcome"], doc["sent"]) == ("synced", 1)
    assert "offline_until" not in syncmod.read_state(a.vault)
    assert bullet("written offline").strip() in remote_history(remote)


def test_a_push_rejected_because_the_other_machine_sent_first(
    pair: tuple[Machine, Machine], remote: Path, tmp_path: Path
) -> None:
    """b sends between a's fetch and a's push (a fake ssh lets b push as a's push connects):
    a's push is rejected, a receives b's commit and sends again, in the same pass."""
    a, b = pair
    b.add("AI/MEMORY.md", bullet("sent first by b"))
    b.git("commit", "-qam", "b's change")
    a.add("AI/MEMORY.md", bullet("sent second by a"))
    race = tmp_path / "race"
    race.touch()
    ssh = tmp_path / "fake-ssh"
    ssh.write_text(
        "#!/bin/sh\n"
        "# GIT_SSH_VARIANT=simple: $1 is the host, $2 the command to run there\n"
        f'case "$2" in git-receive-pack*) if [ -f {race} ]; then rm -f {race}; '
        f"git -C {b.vault} push -q origin main; fi ;; esac\n"
        'exec sh -c "$(echo "$2" | sed "s/^git-/git /")"\n',
        encoding="utf-8",
    )
    ssh.chmod(0o755)
    a.git("remote", "set-url", "origin", f"fakehost:{remote}")
    doc = a.sync(env={"GIT_SSH_COMMAND": str(ssh), "GIT_SSH_VARIANT": "simple"})
    assert not race.exists(), "the race was not staged"
    assert (doc["wrote"], doc["received"], doc["sent"], doc["waiting"]) == (1, 1, 1, [])
    log = git(remote, "log", "--format=%s", "main").splitlines()
    assert log[:2] == [f"brain sync on {gitsync.host()}: AI/MEMORY.md +1", "b's change"]
    text = git(remote, "show", "main:AI/MEMORY.md")
    assert bullet("sent first by b") in text
    assert bullet("sent second by a") in text


def with_driver(pair: tuple[Machine, Machine], name: str, first: str) -> None:
    """`name`, in both machines' vault, merges on a through a driver of the person's that runs
    the shell line `first`, then git's union merge."""
    a, b = pair
    driver = a.home / f"{name}-driver"
    driver.write_text(
        f'#!/bin/sh\n{first}\nexec git merge-file --union "$2" "$1" "$3"\n', encoding="utf-8"
    )
    driver.chmod(0o755)
    a.add(".gitattributes", f"{name} merge=custom\n")
    a.add(name, "base\n")
    a.sync()
    b.sync()
    a.git("config", "merge.custom.driver", f"{driver} %O %A %B")


@pytest.fixture
def slow_merge(pair: tuple[Machine, Machine], tmp_path: Path) -> tuple[Path, Path]:
    """slow.txt merges through a driver that stalls while `hold` exists (touching `started`): a
    rebase (as brain ran before 2026-12) can be killed while git is in the middle of it. a and
    b each changed it; a has a bullet written down and another not written down yet."""
    a, b = pair
    hold, started = tmp_path / "hold", tmp_path / "started"
    with_driver(pair, "slow.txt", f"if [ -f {hold} ]; then echo $$ > {started}; sleep 120; fi")
    b.add("slow.txt", "from b\n")
    b.sync()
    a.add("slow.txt", "from a\n")
    a.add("AI/MEMORY.md", bullet("written before the kill"))
    a.git("commit", "-qam", "a's change")
    a.add("AI/LEARNINGS.md", bullet("not written down before the kill"))
    a.git("fetch", "-q")
    hold.touch()
    return hold, started


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def killed_mid_rebase(a: Machine, hold: Path, started: Path) -> Path:
    """What brain before 2026-12 left when killed in its rebase (`git rebase --autostash`, in the
    work tree, with its marker): the rebase stopped in the slow merge. Its git dir."""
    rebase = subprocess.Popen(
        ["git", "-C", str(a.vault), "rebase", "--quiet", "--autostash", "origin/main"],
        env={**os.environ, **a.env()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(started.exists, "the rebase to reach the slow merge")
    finally:
        os.killpg(rebase.pid, signal.SIGKILL)  # the power cut: the pass and its git
        rebase.wait(timeout=60)
    gd = a.vault / ".git"
    assert (gd / "rebase-merge" / "autostash").exists()
    (gd / "brain-sync").write_text(json.dumps({"pid": 1, "group": rebase.pid}), "utf-8")
    hold.unlink()
    return gd


def test_an_unwind_that_cannot_finish_is_finished_by_the_next_pass(
    pair: tuple[Machine, Machine], slow_merge: tuple[Path, Path], remote: Path, tmp_path: Path
) -> None:
    """A file the unwind must put back cannot be written (a link out of the vault stands where
    it goes; a folder there is kept aside now): the pass says so and keeps its marker, nothing
    is lost, and once the link is gone the next pass unwinds the rest (the rebase it must not
    take for a person's own)."""
    a, _ = pair
    a.add("notes/new.md", "A note of a's.\n")
    a.git("add", "notes/new.md")
    a.git("commit", "-qm", "a's note")
    gd = killed_mid_rebase(a, *slow_merge)
    outside = tmp_path / "outside.md"
    outside.write_text("not the vault's\n", encoding="utf-8")
    (a.vault / "notes" / "new.md").unlink(missing_ok=True)
    (a.vault / "notes").mkdir(exist_ok=True)
    (a.vault / "notes" / "new.md").symlink_to(outside)
    doc = a.sync(code=1)
    assert doc["sent"] == 0
    assert "notes/new.md is a symbolic link to" in doc["waiting"][0]
    assert (gd / "rebase-merge").is_dir()
    assert (gd / "brain-sync").exists()
    assert outside.read_text(encoding="utf-8") == "not the vault's\n"
    (a.vault / "notes" / "new.md").unlink()
    doc = a.sync()
    assert doc["recovered"].startswith("finished an interrupted sync (its rebase unwound")
    assert (doc["waiting"], doc["sent"]) == ([], 3)
    assert not (gd / "rebase-merge").exists()
    assert a.git("stash", "list") == ""
    assert git(remote, "show", "main:notes/new.md") == "A note of a's.\n"
    text = git(remote, "show", "main:AI/LEARNINGS.md")
    assert bullet("not written down before the kill") in text


def test_a_rebase_an_older_brain_left_is_unwound_keeping_what_was_typed_since(
    pair: tuple[Machine, Machine], slow_merge: tuple[Path, Path], remote: Path
) -> None:
    """brain before 2026-12 rebased in the work tree; killed mid-rebase, it left a detached
    HEAD, `rebase-merge/` with an autostash, and its marker. The next pass unwinds it without
    `rebase --abort` (which would reset what was typed since): the bullet typed after the kill,
    the one the autostash held and the commit all survive and are sent."""
    a, b = pair
    gd = killed_mid_rebase(a, *slow_merge)
    a.add("AI/MEMORY.md", bullet("typed after the kill"))
    doc = a.sync()
    assert doc["recovered"] == (
        "finished an interrupted sync (its rebase unwound, the changes it had put aside applied)"
    )
    assert (doc["received"], doc["sent"], doc["waiting"]) == (1, 2, [])
    assert not (gd / "rebase-merge").exists()
    assert a.git("stash", "list") == ""
    assert a.git("status", "--porcelain") == ""
    for rel, line in (
        ("AI/MEMORY.md", bullet("written before the kill")),
        ("AI/MEMORY.md", bullet("typed after the kill")),
        ("AI/LEARNINGS.md", bullet("not written down before the kill")),
    ):
        assert a.text(rel).count(line) == 1
        assert line in git(remote, "show", f"main:{rel}")
    assert set(a.text("slow.txt").split()) >= {"base", "from", "a", "b"}
    b.sync()
    assert a.text("slow.txt") == b.text("slow.txt")


def test_a_rebase_husk_holding_only_its_autostash_is_recovered(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    """git killed while it put the autostash back leaves `rebase-merge/` holding nothing but
    `autostash`: neither `git rebase --continue` nor `--abort` ends it, and a bullet lives only
    in that stash. The next pass applies it and goes on."""
    a, _ = pair
    a.add("AI/MEMORY.md", bullet("only in the autostash"))
    stash = a.git("stash", "create").strip()
    a.git("checkout", "--", "AI/MEMORY.md")  # the rebase had taken it away
    a.add("AI/TUNINGS.md", bullet("typed while it was stuck"))
    husk = a.vault / ".git" / "rebase-merge"
    husk.mkdir()
    (husk / "autostash").write_text(stash + "\n", encoding="utf-8")
    doc = a.sync()
    assert doc["recovered"] == "its rebase unwound, the changes it had put aside applied"
    assert (doc["wrote"], doc["sent"], doc["waiting"]) == (2, 1, [])
    assert not husk.exists()
    assert a.git("stash", "list") == ""
    assert bullet("only in the autostash") in git(remote, "show", "main:AI/MEMORY.md")
    assert bullet("typed while it was stuck") in git(remote, "show", "main:AI/TUNINGS.md")


def killed_after_moving(b: Machine) -> None:
    """b fetches and moves its branch to what it received, then is killed before it carried
    the files over: its journal says so, the work tree is still the old one."""
    b.git("fetch", "-q")
    old, new = b.git("rev-parse", "HEAD").strip(), b.git("rev-parse", "origin/main").strip()
    journal = {"ref": "refs/heads/main", "old": old, "new": new}
    (b.vault / ".git" / "brain-sync-move").write_text(json.dumps(journal), "utf-8")
    b.git("update-ref", "refs/heads/main", new, old)


def test_a_pass_killed_after_moving_the_branch_is_finished_by_the_next_one(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    """Killed after it moved the branch to what it received and before it carried the files
    over (its journal says so), a pass left the work tree behind the branch. The next pass
    carries them, keeping the bullet typed since, and never writes down the old text as a
    change (which would undo what was received)."""
    a, b = pair
    a.add("AI/MEMORY.md", bullet("from a"))
    a.sync()
    killed_after_moving(b)
    gd = b.vault / ".git"
    (gd / "brain-sync").write_text(json.dumps({"pid": 1, "group": 0}), "utf-8")
    b.add("AI/MEMORY.md", bullet("typed after the kill"))
    doc = b.sync()
    assert doc["recovered"] == "finished an interrupted sync (its received files carried over)"
    assert (doc["wrote"], doc["sent"], doc["waiting"]) == (1, 1, [])
    assert not (gd / "brain-sync-move").exists()
    text = git(remote, "show", "main:AI/MEMORY.md")
    assert text.count(bullet("from a")) == 1
    assert text.count(bullet("typed after the kill")) == 1
    assert b.text() == text


def test_a_pass_stopped_with_sigterm_stops_its_git_and_leaves_nothing_behind(
    pair: tuple[Machine, Machine], remote: Path, tmp_path: Path
) -> None:
    a, _ = pair
    slow = slow_remote(a, remote, tmp_path, 60)
    a.add("AI/MEMORY.md", bullet("written before the stop"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "brain", "sync", "--vault", str(a.vault)],
        env={**os.environ, **a.env(), **slow},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    marker = a.vault / ".git" / "brain-sync"

    groups: list[int] = []

    def fetching() -> bool:
        """The fetch's git is running (the marker names its group; the write-down is done).
        The group seen is kept: read again, the marker may name none by then."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            group = int(json.loads(marker.read_text(encoding="utf-8"))["group"])
            if group > 0 and a.git("status", "--porcelain") == "":
                groups.append(group)
        return bool(groups)

    wait_for(fetching, "the fetch")
    group = groups[0]
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    wait_for(lambda: not alive(group), "its git to be stopped", timeout=5)
    assert not marker.exists()
    assert not (a.vault / ".git" / "index.lock").exists()
    a.git("remote", "set-url", "origin", str(remote))
    doc = a.sync()
    assert (doc["recovered"], doc["sent"]) == (None, 1)
    assert bullet("written before the stop") in git(remote, "show", "main:AI/MEMORY.md")


def test_a_bullet_typed_while_a_pass_receives_is_kept(
    pair: tuple[Machine, Machine], remote: Path, tmp_path: Path
) -> None:
    """a has many commits not sent, b has sent one; a bullet is typed on a while its pass
    merges what it received (a merge driver of the person's, for notes.txt, types it: it runs
    in the middle of the receive). It stays in the work tree, uncommitted, through the receive,
    and the next pass sends it. (brain before 2026-12 rebased in the work tree: the rebase
    failed on the file changed under it, and its abort reset the file.)"""
    a, b = pair
    typed = bullet("typed during the pass")
    with_driver(pair, "notes.txt", f'printf "%s" "{typed}" >> {a.vault}/AI/MEMORY.md')
    a.add("notes.txt", "from a\n")
    for i in range(6):
        a.add("AI/MEMORY.md", bullet(f"unsent {i}"))
        a.git("add", "-A")
        a.git("commit", "-qm", f"unsent {i}")
    b.add("notes.txt", "from b\n")
    b.add("AI/MEMORY.md", bullet("sent by b"))
    b.sync()
    doc = a.sync()
    assert (doc["received"], doc["sent"]) == (1, 6)
    assert a.text().count(typed) == 1
    assert a.git("status", "--porcelain").strip() == "M AI/MEMORY.md"
    assert typed not in git(remote, "show", "main:AI/MEMORY.md")
    assert a.sync()["sent"] == 1
    text = git(remote, "show", "main:AI/MEMORY.md")
    for line in [typed, bullet("sent by b"), *(bullet(f"unsent {i}") for i in range(6))]:
        assert text.count(line) == 1
    assert set(git(remote, "show", "main:notes.txt").split()) == {"base", "from", "a", "b"}


def test_sync_on_a_branch_of_ones_own_does_nothing_but_say_so(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    a, _ = pair
    assert a.sync()["outcome"] == "up-to-date"  # the branch it syncs is recorded: main
    a.git("switch", "-qc", "experiment")
    a.add("AI/MEMORY.md", bullet("an experiment"))
    a.git("commit", "-qam", "experiment")
    a.add("notes/draft.md", "Not written down.\n")
    before = git(remote, "rev-parse", "main")
    doc = a.sync(code=1)
    assert (doc["wrote"], doc["sent"], doc["received"]) == (0, 0, 0)
    assert doc["waiting"] == [
        "the vault is on branch experiment, and sync works on main (the branch it was "
        "connected with): nothing written down or sent here; `git switch main` to sync"
    ]
    assert git(remote, "rev-parse", "main") == before
    assert git(remote, "branch", "--format=%(refname:short)").split() == ["main"]
    assert "?? notes/" in a.git("status", "--porcelain")


def test_sync_on_an_unrecorded_branch_of_ones_own_does_nothing(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    """A vault connected by an older brain never recorded its branch: a branch of the person's
    own, with main beside it, is not taken for the one to sync."""
    a, _ = pair
    a.git("switch", "-qc", "experiment")
    a.add("AI/MEMORY.md", bullet("an experiment"))
    a.git("commit", "-qam", "experiment")
    before = git(remote, "rev-parse", "main")
    doc = a.sync(code=1)
    assert doc["sent"] == 0
    assert doc["waiting"][0].startswith("the vault is on branch experiment, and sync was never")
    assert git(remote, "rev-parse", "main") == before
    assert bullet("an experiment").strip() not in remote_history(remote)


def test_a_vault_inside_a_larger_repository_is_refused(tmp_path: Path) -> None:
    """A vault that is a folder of a project's repository: sync would commit the project's work
    in progress and push it to the project's remote. Nothing is committed or pushed."""
    project, origin = tmp_path / "project", tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "init", "-q", "-b", "main", str(project))
    (project / "src").mkdir()
    (project / "src" / "main.py").write_text("print('hello')\n", encoding="utf-8")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    git(project, "remote", "add", "origin", str(origin))
    git(project, "push", "-qu", "origin", "main")
    (project / "src" / "main.py").write_text("print('work in progress')\n", encoding="utf-8")
    (project / "src" / ".env.local").write_text("DEBUG=1\n", encoding="utf-8")
    vault = project / "docs" / "brain"
    (vault / "AI").mkdir(parents=True)
    (vault / "AI" / "MEMORY.md").write_text(bullet("in the project"), encoding="utf-8")
    run = brain("sync", "--vault", str(vault))
    assert run.code == 1
    assert f"is a folder inside the git repository {project}" in run.err
    assert "Traceback" not in run.err
    assert git(project, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(origin, "rev-list", "--count", "main").strip() == "1"
    assert git(project, "status", "--porcelain").count("\n") == 3  # all still there, unstaged


def test_a_remote_whose_history_was_rewritten_is_not_repaired(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    """a wrote a file that must not be shared, b received it; a scrubbed it from the remote's
    history (reset, force-push). b's next passes must not put it back; `brain sync follow`
    takes the new history, keeps b's unsent bullet and drops the file from b's work tree."""
    a, b = pair
    a.add("private/salaries.md", "Not for sharing.\n")
    a.sync()
    b.sync()
    assert (b.vault / "private" / "salaries.md").exists()
    a.git("reset", "-q", "--hard", "HEAD~1")  # the person scrubs it (not brain)
    a.git("push", "-qf", "origin", "main")
    b.add("AI/MEMORY.md", bullet("typed on b afterwards"))
    for _ in range(2):  # it holds, pass after pass
        doc = b.sync(code=1)
        assert doc["sent"] == 0
        assert doc["waiting"][0].startswith(
            f"the history of {remote} (main) was rewritten: it no longer holds 1 commit this "
            "machine has; nothing received or sent"
        )
        assert "Not for sharing" not in remote_history(remote)
    doc = b.sync("follow")
    assert doc["recovered"].startswith(f"followed the rewritten history of {remote}")
    assert doc["sent"] == 1
    assert "Not for sharing" not in remote_history(remote)
    assert bullet("typed on b afterwards") in git(remote, "show", "main:AI/MEMORY.md")
    assert not (b.vault / "private").exists()
    assert b.git("status", "--porcelain") == ""
    assert b.sync()["outcome"] == "up-to-date"
    assert a.sync()["received"] == 1


@pytest.mark.parametrize("kind", ["credential", "malformed bullet"])
def test_a_refused_line_is_never_sent_and_says_why(
    pair: tuple[Machine, Machine], remote: Path, kind: str
) -> None:
    a, b = pair
    secret = token()
    bad = bullet("ci token", secret) if kind == "credential" else "- **broken** — no date here\n"
    a.add("AI/MEMORY.md", bad)
    a.add("notes/plan.md", "A clean note.\n")
    run = a.brain("sync", "--vault", str(a.vault), "--json")
    assert run.code == 1, run
    assert secret not in run.out + run.err
    doc = run.json()
    assert (doc["outcome"], doc["wrote"], doc["sent"]) == ("synced", 1, 1)
    [why] = doc["waiting"]
    assert why.startswith("AI/MEMORY.md:")
    assert ("credential" if kind == "credential" else "YYYY-MM-DD") in why
    assert "changes waiting: AI/MEMORY.md:" in doc["summary"]
    assert a.git("status", "--porcelain").strip() == "M AI/MEMORY.md"  # kept here
    assert bad in a.text()
    assert b.sync()["received"] == 1
    assert bad not in b.text()
    assert (b.vault / "notes" / "plan.md").exists()
    assert bad.strip() not in remote_history(remote)
    assert secret not in remote_history(remote)
    # Fixed here, it goes.
    (a.vault / "AI" / "MEMORY.md").write_text(
        a.text().replace(bad, bullet("ci token", "in the vault")), "utf-8"
    )
    assert a.sync()["sent"] == 1


def test_a_sync_checks_what_it_writes_down_without_brains_hooks(
    pair: tuple[Machine, Machine],
) -> None:
    """The clones have no git hooks at all: the checks are sync's own."""
    a, _ = pair
    assert not (a.vault / ".git" / "hooks" / "pre-commit").exists()
    a.add("AI/TUNINGS.md", bullet("api key", token()))
    doc = a.sync(code=1)
    assert (doc["wrote"], doc["sent"]) == (0, 0)
    assert doc["waiting"][0].startswith("AI/TUNINGS.md:")


def test_one_pass_at_a_time_per_vault(
    pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background receive finding another pass running leaves at once; a person's pass (and
    a background send) waits for it."""
    import threading

    from brain import files

    a, _ = pair
    a.add("AI/MEMORY.md", bullet("after the wait"))
    a.activate(monkeypatch)
    lock = config.state_dir() / "sync" / f"{config.index_path(a.vault.resolve()).stem}.lock"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with files.locked(lock):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)  # not a sleep: a loaded machine may start the thread later
        busy = a.brain("sync", "--background", "receive", "--vault", str(a.vault), "--json")
        assert busy.json()["outcome"] == "busy"
        threading.Timer(1.5, release.set).start()
        start = time.perf_counter()
        doc = a.sync()
        assert time.perf_counter() - start > 1.0
        assert (doc["wrote"], doc["sent"]) == (1, 1)
    finally:
        release.set()
        holder.join()


def test_commits_are_unsigned_and_authored_by_brain_when_no_identity_is_set(
    pair: tuple[Machine, Machine],
) -> None:
    a, _ = pair
    (a.home / ".gitconfig").write_text(
        "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n", encoding="utf-8"
    )
    a.add("AI/MEMORY.md", bullet("anonymous"))
    nobody = {"GIT_AUTHOR_NAME": "", "GIT_COMMITTER_NAME": "", "EMAIL": ""}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    proc = subprocess.run(
        [sys.executable, "-m", "brain", "sync", "--vault", str(a.vault), "--json"],
        env={**env, **{k: v for k, v in a.env().items() if k not in nobody}},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["sent"] == 1
    author = a.git("log", "-1", "--format=%an <%ae>|%G?|%s").strip()
    name, signed, subject = author.split("|")
    assert name == f"brain <brain@{gitsync.host()}>"
    assert signed == "N"
    assert subject == f"brain sync on {gitsync.host()}: AI/MEMORY.md +1"


# --- the index follows ---------------------------------------------------------------------------


def _indexed_handles(machine: Machine, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    machine.activate(monkeypatch)
    conn = sqlite3.connect(config.index_path(machine.vault.resolve()))
    try:
        return {row[0] for row in conn.execute("SELECT handle FROM units WHERE kind = 'bullet'")}
    finally:
        conn.close()


def test_a_receive_reindexes_the_changed_files_before_the_next_find(
    pair: tuple[Machine, Machine], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    assert b.brain("reindex", "--vault", str(b.vault)).code == 0
    a.add("AI/MEMORY.md", bullet("zanzibar ferry", "leaves at nine"))
    a.sync()
    assert "zanzibar ferry" not in _indexed_handles(b, monkeypatch)
    doc = b.sync()
    assert doc["changed"] == ["AI/MEMORY.md"]
    assert "zanzibar ferry" in _indexed_handles(b, monkeypatch)  # before any find
    found = b.brain("find", "zanzibar", "--vault", str(b.vault))
    assert (found.code, "zanzibar ferry" in found.out) == (0, True)


def test_find_is_fresh_after_a_pull_brain_did_not_make(pair: tuple[Machine, Machine]) -> None:
    """The index's freshness check covers receives made by plain git too."""
    a, b = pair
    assert b.brain("reindex", "--vault", str(b.vault)).code == 0
    a.add("AI/MEMORY.md", bullet("quokka census", "every march"))
    a.sync()
    b.git("pull", "-q", "--rebase")
    found = b.brain("find", "quokka", "--vault", str(b.vault))
    assert (found.code, "quokka census" in found.out) == (0, True)


# --- background passes from hooks ----------------------------------------------------------------


def test_background_send_for_the_stop_hook(
    pair: tuple[Machine, Machine],
    remote: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The send returns at once, before the pass: its remote answers in 3 s. (What the spawn
    costs is test_the_hook_pays_for_the_spawn_only's: one timing of it on a loaded machine is
    noise.)"""
    a, _ = pair
    a.activate(monkeypatch)
    for name, value in slow_remote(a, remote, tmp_path, 3).items():
        monkeypatch.setenv(name, value)
    a.add("AI/MEMORY.md", bullet("settled at stop"))
    start = time.perf_counter()
    assert syncmod.background(a.vault, "send") is True
    assert time.perf_counter() - start < 3.0
    wait_for(lambda: "settled at stop" in git(remote, "show", "main:AI/MEMORY.md"), "the send")
    settle(a)
    assert syncmod.read_state(a.vault)["last"] == "wrote down 1 change; sent 1"


def test_the_session_start_hook_receives_in_the_background_and_returns_at_once(
    pair: tuple[Machine, Machine], tmp_path: Path, remote: Path
) -> None:
    """The pack hook spawns a receive and returns while the pass is still running: the remote
    answers through an ssh that takes three seconds, the hook does not wait for it."""
    a, b = pair
    a.add("AI/MEMORY.md", bullet("arrives next prompt"))
    a.sync()
    slow = {**slow_remote(b, remote, tmp_path, 3), "BRAIN_VAULT": str(b.vault)}
    event = json.dumps({"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(b.vault)})
    start = time.perf_counter()
    run = b.brain("pack", input=event, cwd=b.vault, env=slow)
    took = time.perf_counter() - start
    assert run.code == 0, run
    assert took < 3.0, f"the hook waited for the pass ({took:.2f} s)"
    assert "arrives next prompt" not in b.text()
    wait_for(lambda: "arrives next prompt" in b.text(), "the background receive")
    settle(b)
    state = syncmod.state_path  # the pass recorded itself in b's state dir
    del state
    assert b.git("status", "--porcelain") == ""


def test_the_hook_pays_for_the_spawn_only(
    pair: tuple[Machine, Machine], tmp_path: Path, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the pack hook runs for sync (`receive_in_background`: find the vault, read its git
    config and the sync state, spawn) takes well under 100 ms, and starts a pass indeed. The
    whole hook, end to end, is timed by tools/bench_sync.py: on this shared machine a
    subprocess's wall time moves by 100 ms on its own."""
    from brain.commands import pack as packmod

    _, b = pair
    b.sync()
    slow = slow_remote(b, remote, tmp_path, 2)
    b.activate(monkeypatch)
    for name, value in slow.items():
        monkeypatch.setenv(name, value)
    before = syncmod.read_state(b.vault).get("last_at")
    took = []
    for _ in range(5):
        start = time.perf_counter()
        packmod.receive_in_background(str(b.vault))
        took.append(time.perf_counter() - start)
        wait_for(lambda: pass_running(b), "the spawned pass to take the lock", timeout=30)
        settle(b)
    assert statistics.median(took) < 0.1, took
    assert syncmod.read_state(b.vault)["last_at"] != before


def test_nothing_is_spawned_when_sync_is_off_or_not_connected(
    pair: tuple[Machine, Machine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = pair
    a.activate(monkeypatch)
    monkeypatch.setenv("BRAIN_SYNC", "off")
    assert syncmod.background(a.vault) is False
    assert a.sync()["summary"] == "off (BRAIN_SYNC=off)"
    monkeypatch.delenv("BRAIN_SYNC")
    run = a.brain("sync", "off", "--vault", str(a.vault), "--json")
    assert (run.code, run.json()["sync"]) == (0, "off")
    assert syncmod.background(a.vault) is False
    a.add("AI/MEMORY.md", bullet("not sent while off"))
    doc = a.sync()
    assert (doc["outcome"], doc["wrote"]) == ("off", 0)
    assert "`brain sync on` turns it back on" in doc["summary"]
    assert a.brain("sync", "on", "--vault", str(a.vault), "--json").json()["sync"] == "on"
    assert a.sync()["sent"] == 1
    lonely = tmp_path / "lonely"
    git(tmp_path, "init", "-q", "-b", "main", str(lonely))
    (lonely / "AI").mkdir()
    assert syncmod.background(lonely) is False


# --- connect, join, status -----------------------------------------------------------------------


def test_connect_joins_an_existing_vault_keeping_local_bullets(
    pair: tuple[Machine, Machine], remote: Path, tmp_path: Path
) -> None:
    """A fresh vault (installed on a new machine, bullets already added) connects to a remote
    that holds a vault: it adopts the remote's history and keeps its own bullets on top. Its
    branch is `master` (git's default here), the remote's `main`: it follows `main`."""
    a, _ = pair
    a.add("AI/MEMORY.md", bullet("known everywhere"))
    a.sync()
    c = make_machine(tmp_path, "c")
    run = c.brain("install", str(c.vault), "--json")
    assert run.code == 0, run
    c.add("AI/MEMORY.md", bullet("only on c"))
    c.add("notes/c.md", "A note from c.\n")
    run = c.brain("sync", "connect", str(remote), "--vault", str(c.vault), "--json")
    assert run.code == 0, run
    doc = run.json()
    assert doc["summary"].startswith(f"connected to {remote}; wrote down ")
    assert doc["joined"].startswith("refs/brain/before-joining/")
    assert doc["sent"] == 1
    text = c.text()
    assert bullet("known everywhere") in text
    assert bullet("only on c") in text
    assert text.count("# Memory") == 1  # the starter's heading once, not twice
    assert c.git("rev-parse", doc["joined"])  # the old history is kept
    assert git(remote, "branch", "--format=%(refname:short)").split() == ["main"]
    assert a.sync()["received"] == 1
    assert bullet("only on c") in a.text()
    assert (a.vault / "notes" / "c.md").exists()
    assert ".gitattributes" in git(remote, "ls-tree", "--name-only", "main")
    assert "*.md merge=brain" in a.text(".gitattributes")
    assert c.git("config", "merge.brain.driver").strip().endswith("merge-driver %O %A %B %P")


def test_brain_connect_at_install_connects(remote: Path, tmp_path: Path, pair: Any) -> None:
    c = make_machine(tmp_path, "c")
    run = c.brain("install", str(c.vault), "--json", env={"BRAIN_CONNECT": str(remote)})
    assert run.code == 0, run
    assert run.json()["sync"].startswith(f"connected to {remote}; ")
    assert c.git("remote", "get-url", "origin").strip() == str(remote)
    assert c.git("config", "merge.brain.driver").strip().endswith("merge-driver %O %A %B %P")
    # brain's own pre-commit hook is installed here and runs on what sync writes down
    c.add("AI/MEMORY.md", bullet("via the hooks"))
    doc = c.sync()
    assert (doc["wrote"], doc["sent"]) == (1, 1)
    # ... and so does the hook the vault had before brain, which brain's hook chains to
    refuse = c.vault / ".git" / "hooks" / "pre-commit"
    refuse.write_text("#!/bin/sh\necho 'no commits on fridays' >&2\nexit 1\n", encoding="utf-8")
    refuse.chmod(0o755)
    c.add("AI/MEMORY.md", bullet("refused by a hook"))
    doc = c.sync(code=1)
    assert (doc["wrote"], doc["sent"]) == (0, 0)
    assert doc["waiting"] == ["the commit was refused: no commits on fridays"]
    assert c.git("status", "--porcelain").strip() == "M AI/MEMORY.md"


def test_install_registers_the_merge_driver_and_uninstall_forgets_it(git_vault: Path) -> None:
    attributes = git_vault / ".git" / "info" / "attributes"
    assert not attributes.exists()
    assert brain("install", str(git_vault), "--json").code == 0
    assert git(git_vault, "config", "merge.brain.driver").strip().endswith("%O %A %B %P")
    assert "*.md merge=brain" in attributes.read_text("utf-8")
    assert brain("uninstall", "--json").code == 0
    proc = subprocess.run(
        ["git", "-C", str(git_vault), "config", "--get-regexp", "^merge\\.brain\\."],
        capture_output=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (1, b"")
    assert not attributes.exists()


def test_status_says_what_waits_on_either_side(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.add("AI/MEMORY.md", bullet("pending"))
    run = a.brain("sync", "status", "--vault", str(a.vault))
    assert run.code == 0
    assert run.out.splitlines()[:3] == [
        "Sync: on",
        f"Remote: origin {a.git('remote', 'get-url', 'origin').strip()} (branch main)",
        "Here: 1 changed file not written down, 0 commits not sent",
    ]
    a.sync()
    b.git("fetch", "-q")
    doc = b.brain("sync", "status", "--vault", str(b.vault), "--json").json()
    assert (doc["sync"], doc["changes"], doc["ahead"], doc["behind"]) == ("on", 0, 0, 1)
    doc = a.brain("sync", "status", "--vault", str(a.vault), "--json").json()
    assert doc["last_summary"] == "wrote down 1 change; sent 1"


def test_status_dates_the_last_fetch_that_worked(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    """git touches FETCH_HEAD on a fetch that fails too: status said "as of the fetch at" the
    moment the remote could not be reached, as if what it counted were fresh."""
    a, b = pair
    b.sync()
    worked = b.brain("sync", "status", "--vault", str(b.vault), "--json").json()["fetched_at"]
    assert worked
    a.add("AI/MEMORY.md", bullet("sent while b is offline"))
    a.sync()
    time.sleep(1.1)  # the times are said to the second
    moved = remote.with_name("moved-away.git")
    remote.rename(moved)
    own = subprocess.run(
        ["git", "-C", str(b.vault), "fetch", "-q"], check=False, capture_output=True
    )
    assert own.returncode != 0  # the person's own fetch fails too, and empties FETCH_HEAD
    doc = b.brain("sync", "status", "--vault", str(b.vault), "--json").json()
    assert doc["fetched_at"] == worked
    assert b.sync(code=1)["outcome"] == "offline"
    doc = b.brain("sync", "status", "--vault", str(b.vault), "--json").json()
    assert (doc["fetched_at"], doc["behind"]) == (worked, 0)  # behind: as of then
    moved.rename(remote)
    time.sleep(1.1)
    b.git("fetch", "-q")  # the person's own fetch counts too: FETCH_HEAD is its record
    doc = b.brain("sync", "status", "--vault", str(b.vault), "--json").json()
    assert doc["fetched_at"] > worked
    assert doc["behind"] == 1


def test_sync_without_a_remote_writes_down_and_says_not_connected(git_vault: Path) -> None:
    (git_vault / "AI" / "MEMORY.md").open("a", encoding="utf-8").write(bullet("local only"))
    run = brain("sync", "--vault", str(git_vault))
    assert run.code == 1
    assert run.out == (
        "wrote down 1 change; not connected (`brain sync connect URL` says where the vault meets "
        "others)\n"
    )


def test_a_persons_own_rebase_is_left_alone(pair: tuple[Machine, Machine]) -> None:
    a, _ = pair
    a.add("AI/MEMORY.md", bullet("one"))
    a.git("commit", "-qam", "one")
    a.add("AI/MEMORY.md", bullet("two"))
    a.git("commit", "-qam", "two")
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"}
    subprocess.run(
        ["git", "-C", str(a.vault), "rebase", "-qi", "HEAD~2"],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
    )
    doc = a.sync(code=1)
    assert doc["waiting"][0].startswith("a rebase is in progress in the vault")
    assert (a.vault / ".git" / "rebase-merge").is_dir()  # still there, for the person


def test_a_conflict_in_a_file_the_driver_does_not_merge_is_left_whole(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.add("diagram.bin", "v0\0")
    a.sync()
    b.sync()
    (a.vault / "diagram.bin").write_bytes(b"a\0")
    (b.vault / "diagram.bin").write_bytes(b"b\0")
    a.sync()
    doc = b.sync(code=1)
    assert doc["waiting"][0].startswith("both sides changed diagram.bin: not merged, nothing lost")
    assert (b.vault / "diagram.bin").read_bytes() == b"b\0"
    assert not (b.vault / ".git" / "rebase-merge").exists()
    assert b.git("status", "--porcelain") == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["connect"], "connect needs the remote's URL"),
        (["fetch"], "unknown sync action 'fetch'"),
        (["status", "x"], "`brain sync status` takes no URL"),
    ],
)
def test_bad_sync_arguments_say_what_to_type(
    git_vault: Path, args: list[str], message: str
) -> None:
    run = brain("sync", *args, "--vault", str(git_vault))
    assert run.code == 2
    assert message in run.err
    assert "Traceback" not in run.err


def test_a_commit_that_holds_a_key_is_never_sent_whoever_made_it(
    pair: tuple[Machine, Machine], remote: Path
) -> None:
    """A commit made with `git commit --no-verify` (or by any other program) skipped the checks
    a write-down makes; the pass scans every commit it is about to send, compressed files too,
    and sends none while one holds a credential. Its hint, followed, keeps every change."""
    import gzip

    a, _ = pair
    secret = token()
    (a.vault / "backup.md.gz").write_bytes(gzip.compress(bullet("ci token", secret).encode()))
    a.git("add", "-A")
    a.git("commit", "-q", "--no-verify", "-m", "a backup")
    bad = a.git("rev-parse", "HEAD").strip()
    a.add("AI/MEMORY.md", bullet("clean, written after"))
    run = a.brain("sync", "--vault", str(a.vault), "--json")
    assert run.code == 1, run
    assert secret not in run.out + run.err
    doc = run.json()
    assert (doc["wrote"], doc["sent"]) == (1, 0)
    [why] = doc["waiting"]
    assert why.startswith(f"nothing sent: commit {bad[:12]} put a credential in backup.md.gz[")
    assert f"git -C {a.vault} reset --soft {bad[:12]}~1" in why
    assert secret not in remote_history(remote)
    assert "clean, written after" not in remote_history(remote)
    # The hint, followed: the commits undone from that one on, the file fixed, then sync.
    a.git("reset", "--soft", f"{bad}~1")
    (a.vault / "backup.md.gz").unlink()
    doc = a.sync()
    assert (doc["wrote"], doc["sent"], doc["waiting"]) == (1, 1, [])
    assert secret not in remote_history(remote)
    assert bullet("clean, written after") in git(remote, "show", "main:AI/MEMORY.md")


def test_connect_keeps_what_gitattributes_held_and_refuses_a_link_out(
    git_vault: Path, remote: Path, tmp_path: Path
) -> None:
    """connect adds brain's merge lines to the vault's `.gitattributes` as a change of what it
    read (the person's own lines stay) and never writes through a link out of the vault."""
    (git_vault / ".gitattributes").write_text("*.png binary\n", encoding="utf-8")
    assert brain("sync", "connect", str(remote), "--vault", str(git_vault)).code == 0
    text = (git_vault / ".gitattributes").read_text(encoding="utf-8")
    assert text.startswith("*.png binary\n")
    assert "*.md merge=brain" in text
    other, elsewhere = tmp_path / "other", tmp_path / "elsewhere.txt"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    (other / "AI").mkdir()
    elsewhere.write_text("not the vault's\n", encoding="utf-8")
    (other / ".gitattributes").symlink_to(elsewhere)
    run = brain("sync", "connect", str(remote), "--vault", str(other))
    assert run.code == 1
    assert "outside the vault" in run.err
    assert elsewhere.read_text(encoding="utf-8") == "not the vault's\n"


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_a_git_that_is_stopped_may_remove_its_locks_first(tmp_path: Path) -> None:
    """A pass stops a git it started (out of time, or left by a killed pass) with SIGTERM
    first: git removes its lock files on it. A push to a remote on local disk runs the remote's
    receive-pack in the same group, so a plain SIGKILL left the remote's branch locked."""
    from brain import gitutil

    lock = tmp_path / "main.lock"
    proc = subprocess.Popen(
        ["sh", "-c", f'trap "rm -f {lock}; exit 143" TERM; touch {lock}; sleep 60 & wait'],
        start_new_session=True,
    )
    wait_for(lock.exists, "the lock")
    start = time.monotonic()
    gitutil.stop_group(proc.pid, reap=proc.poll)
    assert proc.wait(timeout=5) == 143
    assert not lock.exists()
    assert time.monotonic() - start < 3.0
    stubborn = subprocess.Popen(["sh", "-c", 'trap "" TERM; sleep 60'], start_new_session=True)
    time.sleep(0.2)
    gitutil.stop_group(stubborn.pid, reap=stubborn.poll)  # SIGKILL after the grace
    assert stubborn.wait(timeout=5) == -signal.SIGKILL


@pytest.mark.parametrize(
    "url",
    [
        "https://alice:hunter2@SECRETword99@127.0.0.1:9/vault.git",  # an @ not written %40
        "https://alice:SECRETword99@127.0.0.1:9/vault.git",
    ],
)
def test_a_password_in_the_remote_url_is_never_shown_even_with_a_bare_at(
    git_vault: Path, isolated_env: Path, url: str
) -> None:
    """Neither the password nor any part of it between `@`s is shown by the pass (its remote and
    git's complaint, which names the part after the bare `@` as a user), by `sync status` or
    kept in the state dir: the part after the `@` went out whole everywhere."""
    git(git_vault, "remote", "add", "origin", url)
    env = {"BRAIN_VAULT": str(git_vault)}
    said = [brain("sync", env=env), brain("sync", "--json", env=env)]
    said += [brain("sync", "status", env=env), brain("sync", "status", "--json", env=env)]
    assert said[1].json()["outcome"] == "offline"
    for run in said:
        assert "SECRETword99" not in run.out + run.err
        assert "hunter2" not in run.out + run.err
    assert "127.0.0.1:9/vault.git" in said[3].json()["url"]  # the rest of it still shown
    for path in (isolated_env / ".local" / "state").rglob("*"):
        if path.is_file():
            assert b"SECRETword99" not in path.read_bytes(), path
