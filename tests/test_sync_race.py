"""`brain sync` under the way people really use it: two machines append bullets while passes run,
and passes (and their git) are killed with SIGKILL at random moments. Nothing anyone wrote may be
lost, and no pass may be left stuck.

The real path throughout: a bare repository is the remote, two clones are two machines with their
own HOME and state dirs, every pass is the real `brain` in its own process.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from conftest import git
from test_sync import Machine, bullet, make_machine
from test_sync_hostile import a_kept_name_to_join

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="kills process trees through /proc"),
]

ROUNDS = 60  # passes per seed; four seeds: 240 passes, bullets typed during them, 2 in 5 killed


def _children(pid: int) -> list[int]:
    """Every process below `pid` (git, ssh, hooks a pass started in their own groups), but the
    remote's side of a push or fetch (receive-pack, upload-pack): a power cut here does not stop
    the server."""
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            if b"-pack" in (entry / "cmdline").read_bytes():
                continue
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for kid in kids.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def _kill_tree(proc: subprocess.Popen[bytes], rng: random.Random) -> None:
    """SIGKILL the pass, and half the time every process it started too (a power cut)."""
    victims = [proc.pid] + (_children(proc.pid) if rng.random() < 0.5 else [])
    for pid in victims:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class Typist:
    """A person appending bullets to a machine's core files, each the way `>>` does."""

    def __init__(self, machine: Machine, tag: str, rng: random.Random) -> None:
        self.machine, self.tag, self.rng = machine, tag, rng
        self.typed: list[str] = []

    def type(self, count: int, pause: float) -> None:
        for _ in range(count):
            line = bullet(f"{self.tag} {len(self.typed)}", f"typed on {self.machine.name}")
            rel = self.rng.choice(["AI/MEMORY.md", "AI/LEARNINGS.md"])
            with (self.machine.vault / rel).open("a", encoding="utf-8") as fh:
                fh.write(line)
            self.typed.append(line)
            time.sleep(self.rng.random() * pause)


def _start_pass(machine: Machine) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-P", "-m", "brain", "sync", "--vault", str(machine.vault), "--json"],
        env={**os.environ, **machine.env()},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def pass_while(machine: Machine, work: Callable[[], None], rng: random.Random, kill: float) -> bool:
    """A pass on `machine` while `work` (a person typing) runs beside it; with chance `kill`,
    the pass is killed at a random moment. Whether it was killed while it ran."""
    proc = _start_pass(machine)
    person = threading.Thread(target=work)
    person.start()
    killed = False
    if rng.random() < kill:
        time.sleep(rng.random() * 0.3)  # a pass takes 0.2 to 0.5 s here: most kills land
        _kill_tree(proc, rng)
        killed = proc.poll() is None or proc.returncode == -signal.SIGKILL
    try:
        _, err = proc.communicate(timeout=240)
    finally:
        person.join()
    assert proc.returncode in (0, 1, -signal.SIGKILL), err
    assert b"Traceback" not in err
    return killed


def _everything(machine: Machine) -> str:
    return "".join(
        (machine.vault / "AI" / name).read_text(encoding="utf-8")
        for name in ("MEMORY.md", "LEARNINGS.md")
    )


def _on_remote(remote: Path) -> str:
    return "".join(git(remote, "show", f"main:AI/{n}") for n in ("MEMORY.md", "LEARNINGS.md"))


def connected_pair(tmp_path: Path) -> tuple[Path, Machine, Machine]:
    """A bare remote, machine a connected to it (its vault sent), machine b a clone of it."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a, b = make_machine(tmp_path, "a"), make_machine(tmp_path, "b")
    a.start()
    assert a.sync("connect", str(remote))["outcome"] == "synced"
    git(tmp_path, "clone", "-q", str(remote), str(b.vault))
    return remote, a, b


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_nothing_typed_is_lost_while_passes_run_and_are_killed(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(seed)  # noqa: S311 -- reproducible timings, not crypto
    remote, a, b = connected_pair(tmp_path)
    typists = {m.name: Typist(m, f"race {seed} {m.name}", rng) for m in (a, b)}
    killed = passes = 0
    for _ in range(ROUNDS):
        machine = rng.choice([a, b])
        typist = typists[machine.name]
        passes += 1
        killed += pass_while(machine, partial(typist.type, rng.randint(0, 4), 0.15), rng, 0.4)
        if rng.random() < 0.3:  # the other machine gets a bullet with no pass running
            other = b if machine is a else a
            typists[other.name].type(1, 0)
    # Every machine syncs in turn until both are in step: nobody may be stuck.
    for _ in range(3):
        for machine in (a, b):
            doc = machine.sync(code=0)
            assert doc["waiting"] == [], doc
            assert doc["conflicts"] == [], doc
    wanted = typists["a"].typed + typists["b"].typed
    for machine in (a, b):
        text = _everything(machine)
        lost = [line for line in wanted if text.count(line) != 1]
        assert lost == [], f"{machine.name} lost or doubled {len(lost)}: {lost[:3]}"
        gd = machine.vault / ".git"
        assert not (gd / "rebase-merge").exists()
        assert not (gd / "brain-sync").exists()
        assert not (gd / "brain-sync-move").exists()
        assert machine.git("status", "--porcelain") == ""
        assert machine.git("stash", "list") == ""
    on_remote = _on_remote(remote)
    assert [line for line in wanted if on_remote.count(line) != 1] == []
    assert a.git("rev-parse", "HEAD") == b.git("rev-parse", "HEAD")
    with capsys.disabled():
        print(f"\nseed {seed}: {passes} passes, {killed} killed, {len(wanted)} bullets typed")


def _reshape_or_type(machine: Machine, line: str, rng: random.Random) -> None:
    """A person on `machine` types `line` into notes/plan.md, which is a file or a folder:
    appended to it (or a file kept aside from it), or it is made a folder holding its text (or
    a file holding its folder's text) and the line."""
    notes = machine.vault / "notes"
    plan = notes / "plan.md"
    kept = sorted(f for f in notes.rglob("plan (from *") if f.is_file()) if notes.is_dir() else []
    roll = rng.random()
    if kept and roll < 0.2:
        target = rng.choice(kept)
    elif plan.is_dir():
        parts = sorted(f for f in plan.rglob("*") if f.is_file())
        if roll < 0.6 and parts:
            target = rng.choice(parts)
        else:
            text = "".join(f.read_text(encoding="utf-8") for f in parts)
            shutil.rmtree(plan)
            plan.write_text(text + line, encoding="utf-8")
            return
    elif plan.is_file() and roll >= 0.6:
        text = plan.read_text(encoding="utf-8")
        plan.unlink()
        plan.mkdir()
        (plan / "part.md").write_text(text + line, encoding="utf-8")
        return
    else:
        notes.mkdir(exist_ok=True)
        target = plan
    with target.open("a", encoding="utf-8") as fh:
        fh.write(line)


def _notes(machine: Machine) -> str:
    root = machine.vault / "notes"
    return "".join(f.read_text(encoding="utf-8") for f in sorted(root.rglob("*")) if f.is_file())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_nothing_is_lost_when_a_file_and_a_folder_clash_again_and_again(
    tmp_path: Path, seed: int
) -> None:
    """Both machines turn notes/plan.md into a folder and back and type into it, and into the
    files kept aside from it, while passes are killed at random moments: a clash kept aside
    under a name a former clash (or the other machine) already held replaced that file."""
    rng = random.Random(seed)  # noqa: S311 -- reproducible timings, not crypto
    _, a, b = connected_pair(tmp_path)
    written: list[str] = []
    for n in range(40):
        machine = rng.choice([a, b])
        line = f"line {n} typed on {machine.name}\n"
        _reshape_or_type(machine, line, rng)
        written.append(line)
        pass_while(machine, lambda: None, rng, 0.4)
    for _ in range(2):  # a clash kept aside by a pass ends in 1 and says so: then in step
        for machine in (a, b):
            assert machine.brain("sync", "--vault", str(machine.vault)).code in (0, 1)
    for machine in (a, b):
        assert machine.sync()["waiting"] == []
    for machine in (a, b):
        text = _notes(machine)
        lost = [line for line in written if line not in text]
        assert lost == [], f"{machine.name} lost {len(lost)} of {len(written)}: {lost[:3]}"
        assert machine.git("status", "--porcelain") == ""
    assert a.git("rev-parse", "HEAD") == b.git("rev-parse", "HEAD")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_joining_killed_at_random_moments_keeps_every_kept_file(tmp_path: Path, seed: int) -> None:
    """A new machine joins where the remote holds notes/plan.md/ and a file of the name its own
    notes/plan.md would be kept as; each `sync connect` is killed at a random moment until one
    ends: the remote's file and this machine's are both there, on both machines."""
    from brain import gitsync

    rng = random.Random(seed)  # noqa: S311 -- reproducible timings, not crypto
    remote, a, _ = connected_pair(tmp_path)
    kept = f"notes/plan (from {gitsync.host()}).md"
    ours = {"notes/plan.md/part.md": "part typed on a\n", kept: "kept typed on a\n"}
    c = a_kept_name_to_join(tmp_path, a, ours)
    c.add("notes/plan.md", "plan typed on c\n")
    c.add(kept, "kept typed on c\n")
    args = [sys.executable, "-P", "-m", "brain", "sync", "connect", str(remote)]
    for _ in range(6):
        proc = subprocess.Popen(
            [*args, "--vault", str(c.vault)],
            env={**os.environ, **c.env()},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(rng.random() * 0.6)
        _kill_tree(proc, rng)
        _, err = proc.communicate(timeout=240)
        assert b"Traceback" not in err
    for _ in range(2):
        assert c.brain("sync", "connect", str(remote), "--vault", str(c.vault)).code in (0, 1)
    assert c.sync()["waiting"] == []
    a.sync()
    for machine in (a, c):
        text = _notes(machine)
        for line in ("part typed on a", "kept typed on a", "plan typed on c", "kept typed on c"):
            assert line in text, (machine.name, line)
        assert machine.git("status", "--porcelain") == ""
