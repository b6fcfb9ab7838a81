"""Hostile remotes for `brain sync`: what another machine (or whoever can push) committed is
received through the real path, a bare repository as the remote and `brain sync` in its own
process. Nothing a remote holds may make brain write outside the work tree's files: not outside
the vault, not into `.git`."""

from __future__ import annotations

import contextlib
import random
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from conftest import git
from test_sync import (  # noqa: F401 -- the fixtures, by name
    Machine,
    bullet,
    killed_after_moving,
    make_machine,
    pair,
    remote,
    remote_history,
)

from brain import gitsync


def _tree(repo: Path, rows: list[tuple[str, str, str, str]]) -> str:
    """A tree object made with `git mktree`, which takes any entry name ('.git', '..')."""
    import subprocess

    text = "".join(f"{mode} {kind} {sha}\t{name}\n" for mode, kind, sha, name in rows)
    proc = subprocess.run(
        ["git", "-C", str(repo), "mktree"], input=text, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def _blob(repo: Path, data: str) -> str:
    import subprocess

    proc = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
        input=data,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


_ON_MACOS = pytest.mark.skipif(sys.platform != "darwin", reason="HFS+ reads it as .git")


def push_tree_with(a: Machine, name: str, sub: str) -> None:
    """a commits, on top of its branch, the branch's tree plus one entry `name` (a tree `sub`),
    and pushes it as a plain push."""
    top = [line.split(None, 3) for line in a.git("ls-tree", "HEAD").splitlines()]
    rows = [(m, k, s, n) for m, k, s, n in top] + [("040000", "tree", sub, name)]
    tree = _tree(a.vault, rows)
    commit = a.git("commit-tree", tree, "-p", "HEAD", "-m", "hostile").strip()
    a.git("update-ref", "refs/heads/main", commit)
    a.git("push", "-q", "origin", "main")


@pytest.mark.parametrize(
    "name",
    [
        ".git",
        "..",
        ".GIT",
        ".git. ",
        "GIT~1",
        ".git::$INDEX_ALLOCATION",
        pytest.param("\u200c.git", marks=_ON_MACOS),
    ],
)
def test_a_path_git_refuses_to_check_out_is_never_received(
    request: pytest.FixtureRequest, tmp_path: Path, name: str
) -> None:
    """A remote commit holding `.git/hooks/post-commit` (or `../hooks/...`): carried over, the
    hook ran at the next write-down, code from the remote run on this machine. Each pass, with
    this machine's own change waiting to go or not, refuses it in one line and moves nothing."""
    a, b = request.getfixturevalue("pair")
    pwned = tmp_path / "PWNED"
    hook = _blob(a.vault, f"#!/bin/sh\ntouch {pwned}\n")
    hooks = _tree(a.vault, [("100755", "blob", hook, "post-commit")])
    push_tree_with(a, name, _tree(a.vault, [("040000", "tree", hooks, "hooks")]))
    head = b.git("rev-parse", "HEAD")
    for typed in ("", bullet("typed on b")):
        b.add("AI/MEMORY.md", typed)
        doc = b.sync(code=1)
        assert doc["received"] == 0
        (line,) = doc["waiting"]
        assert line.startswith(f"{b.vault.parent / 'remote.git'} holds "), line
        assert "a path git itself refuses to check out" in line
        assert line.endswith(
            "Take the commit that added it out of the remote's history, then run brain sync"
        )
    assert b.git("rev-parse", "HEAD") != head  # b's bullet is written down, kept here
    assert bullet("typed on b") in b.text()
    assert not (b.vault / ".git" / "hooks" / "post-commit").exists()
    assert not (b.vault.parent / "hooks").exists()
    assert name in (".git", "..") or not (b.vault / name).exists()
    assert not pwned.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="git refuses some of these elsewhere")
def test_a_name_only_windows_or_macos_reads_as_git_is_received_on_linux(
    request: pytest.FixtureRequest,
) -> None:
    """git on Linux checks out a backslash, a colon and a joiner before `.git` in a name: so
    does sync (refused, every pass would stop for a file the person may have made on purpose)."""
    a, b = request.getfixturevalue("pair")
    names = ("notes/a\\b.md", "notes/x:y.md", "notes/\u200c.git/z.md")
    for rel in names:
        a.add(rel, "kept\n")
    a.sync()
    doc = b.sync()
    assert (doc["received"], doc["waiting"]) == (1, [])
    assert [b.text(rel) for rel in names] == ["kept\n"] * 3


def test_a_link_received_in_a_folder_this_machine_has_not_got_is_made_there(
    request: pytest.FixtureRequest,
) -> None:
    """The link was made with Path.symlink_to, whose folder did not exist: FileNotFoundError, an
    internal error on every pass after, since the branch had moved and the journal asked each
    next pass to carry the link again."""
    a, b = request.getfixturevalue("pair")
    (a.vault / "notes" / "new").mkdir(parents=True)
    (a.vault / "notes" / "new" / "link.md").symlink_to("../../AI/MEMORY.md")
    a.git("add", "-A")
    a.git("commit", "-qm", "a link")
    a.git("push", "-q", "origin", "main")
    assert b.sync()["received"] == 1
    assert (b.vault / "notes" / "new" / "link.md").readlink() == Path("../../AI/MEMORY.md")
    assert b.git("status", "--porcelain") == ""
    assert b.sync()["outcome"] == "up-to-date"


def test_a_submodule_another_machine_committed_is_kept_and_not_sent_back_deleted(
    request: pytest.FixtureRequest,
) -> None:
    """A gitlink received was left out of the index: the next write-down staged it as deleted
    and sent that, so the other machine's submodule was gone from the vault."""
    a, b = request.getfixturevalue("pair")
    sha = a.git("rev-parse", "HEAD").strip()
    (a.vault / "tools" / "mod").mkdir(parents=True)  # as a submodule not checked out
    a.git("update-index", "--add", "--cacheinfo", f"160000,{sha},tools/mod")
    a.git("commit", "-qm", "a submodule")
    a.git("push", "-q", "origin", "main")
    doc = b.sync()
    assert (doc["received"], doc["waiting"]) == (1, [])
    assert (b.vault / "tools" / "mod").is_dir()
    assert b.git("status", "--porcelain") == ""
    b.add("AI/MEMORY.md", bullet("typed on b"))
    assert b.sync()["sent"] == 1
    assert b.git("ls-tree", "HEAD", "tools/mod").split()[:3] == ["160000", "commit", sha]
    assert a.sync()["received"] == 1
    a.git("update-index", "--force-remove", "tools/mod")
    a.git("commit", "-qm", "no submodule")
    a.git("push", "-q", "origin", "main")
    assert b.sync()["waiting"] == []
    assert not (b.vault / "tools").exists()
    assert b.git("status", "--porcelain") == ""


class NoteWriter:
    """A person working on one machine's own notes while passes run: a line appended to a prose
    note, a new note (untracked), a note deleted, a note renamed. `want` is what the notes must
    hold in the end, on every machine and on the remote."""

    def __init__(self, machine: Machine, rng: random.Random) -> None:
        self.machine, self.rng = machine, rng
        self.want: dict[str, str] = {}
        self.made = 0

    def _new(self) -> None:
        rel = f"notes/{self.machine.name}/note {self.made}.md"
        self.made += 1
        text = f"# Note {self.made} on {self.machine.name}\n\nA paragraph of prose.\n"
        (self.machine.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.machine.vault / rel).write_text(text, encoding="utf-8")
        self.want[rel] = text

    def act(self, count: int, pause: float) -> None:
        for _ in range(count):
            what = self.rng.choice(["append", "append", "new", "delete", "rename"])
            if not self.want or what == "new":
                self._new()
            else:
                rel = self.rng.choice(sorted(self.want))
                path = self.machine.vault / rel
                if what == "append":
                    line = f"Typed on {self.machine.name}, edit {self.made}.\n"
                    self.made += 1
                    with path.open("a", encoding="utf-8") as fh:
                        fh.write(line)
                    self.want[rel] += line
                elif what == "delete":
                    path.unlink()
                    del self.want[rel]
                else:
                    new = f"notes/{self.machine.name}/renamed {self.made}.md"
                    self.made += 1
                    path.rename(self.machine.vault / new)
                    self.want[new] = self.want.pop(rel)
            time.sleep(self.rng.random() * pause)


def _notes(root: Path, name: str) -> dict[str, str]:
    folder = root / "notes" / name
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in folder.rglob("*.md")}


def _remote_notes(bare: Path, name: str) -> dict[str, str]:
    names = git(bare, "ls-tree", "-r", "--name-only", "main", f"notes/{name}/").splitlines()
    return {n: git(bare, "show", f"main:{n}") for n in names}


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="kills process trees through /proc")
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_notes_written_renamed_and_deleted_while_passes_are_killed_are_never_lost(
    tmp_path: Path, seed: int
) -> None:
    from test_sync_race import connected_pair, pass_while

    rng = random.Random(seed)  # noqa: S311 -- reproducible timings, not crypto
    bare, a, b = connected_pair(tmp_path)
    people = {m.name: NoteWriter(m, rng) for m in (a, b)}
    for _ in range(30):
        machine = rng.choice([a, b])
        person = people[machine.name]
        pass_while(machine, partial(person.act, rng.randint(0, 4), 0.15), rng, 0.5)
    for _ in range(3):
        for machine in (a, b):
            doc = machine.sync(code=0)
            assert (doc["waiting"], doc["conflicts"]) == ([], []), doc
    for machine in (a, b):
        for name, person in people.items():
            assert _notes(machine.vault, name) == person.want, (machine.name, name)
        assert machine.git("status", "--porcelain") == ""
    for name, person in people.items():
        assert _remote_notes(bare, name) == person.want


def reshaped(a: Machine, b: Machine, old: str, new: str) -> None:
    """`old` made on a and received by b; then a moves it to `new` (a file turned into a
    folder's file, or the reverse) and sends that."""
    a.add(old, "plan\n")
    a.sync()
    b.sync()
    a.git("rm", "-q", old)
    a.add(new, "plan\n")
    a.sync()


def kept_aside(b: Machine, path: str, kept: str, *, link: bool = False) -> tuple[int, int]:
    """A pass on b that keeps b's `path` (a `link`) as `kept` and says so; (received, sent)."""
    doc = b.sync(code=1)
    said = (
        f"{path} is a link here where the other machine has a file or folder: the link is kept "
        if link
        else f"{path} is a file on one machine and a folder on the other: this machine's is kept "
    )
    assert doc["waiting"] == [f"{said}as {kept}"]
    return doc["received"], doc["sent"]


@pytest.mark.parametrize("killed", [False, True])
def test_a_note_edited_here_that_the_other_machine_made_a_folder_is_not_lost(
    request: pytest.FixtureRequest, killed: bool
) -> None:
    """b edits notes/plan.md while a turns it into a folder (notes/plan.md/part.md). pygit2
    left b's file out of the replayed tree without a word, the commit was dropped as empty, and
    the carry then deleted b's file: what b typed was gone on every machine. `killed`: b's pass
    was killed once it moved its branch there, then b typed; the deletion keeps b's change,
    and the folder could not be made over it (`cannot write`, every pass after)."""
    a, b = request.getfixturevalue("pair")
    reshaped(a, b, "notes/plan.md", "notes/plan.md/part.md")
    if killed:
        killed_after_moving(b)
    b.add("notes/plan.md", "typed on b\n")
    kept = f"notes/plan (from {gitsync.host()}).md"
    assert kept_aside(b, "notes/plan.md", kept) == (0 if killed else 1, 1)
    assert b.text(kept) == "plan\ntyped on b\n"
    assert b.text("notes/plan.md/part.md") == "plan\n"
    assert b.git("status", "--porcelain") == ""
    assert b.sync()["outcome"] == "up-to-date"
    assert a.sync()["received"] == 1
    assert a.text(kept) == "plan\ntyped on b\n"


def test_a_folder_made_here_where_the_other_machine_kept_a_file_is_not_lost(
    request: pytest.FixtureRequest,
) -> None:
    """The other way round: b makes notes/plan.md a folder while a edits the file."""
    a, b = request.getfixturevalue("pair")
    a.add("notes/plan.md", "plan\n")
    a.sync()
    b.sync()
    a.add("notes/plan.md", "typed on a\n")
    a.sync()
    b.git("rm", "-q", "notes/plan.md")
    b.add("notes/plan.md/part.md", "part typed on b\n")
    kept = f"notes/plan (from {gitsync.host()}).md/part.md"
    assert kept_aside(b, "notes/plan.md/part.md", kept) == (1, 1)
    assert b.text("notes/plan.md") == "plan\ntyped on a\n"
    assert b.text(kept) == "part typed on b\n"
    assert b.git("status", "--porcelain") == ""
    assert a.sync()["received"] == 1
    assert a.text(kept) == "part typed on b\n"


def edited_on_a_while_b_was_killed(a: Machine, b: Machine, path: str = "notes/plan.md") -> None:
    """`path` made on a and received by b; a types into it and sends that, and b's next pass is
    killed once it moved its branch there (`killed_after_moving`)."""
    a.add(path, "plan\n")
    a.sync()
    b.sync()
    a.add(path, "typed on a\n")
    a.sync()
    killed_after_moving(b)


@pytest.mark.parametrize(
    ("name", "kept_as"), [("plan.md", "plan (from {})"), (".plan", ".plan (from {})")]
)
def test_a_folder_typed_here_while_a_pass_was_killed_is_kept_beside_the_file_received(
    request: pytest.FixtureRequest, name: str, kept_as: str
) -> None:
    """a changes notes/plan.md; b's pass is killed once it moved its branch there, and b's
    person then turns the note into a folder. The next pass could never write the file over
    the folder (`cannot write notes/plan.md: Is a directory` on every pass after): b's folder
    is kept aside, the file received is written, nothing typed is lost. A hidden name stays
    hidden (`.plan` was kept as `plan (from HOST)`)."""
    a, b = request.getfixturevalue("pair")
    path = f"notes/{name}"
    edited_on_a_while_b_was_killed(a, b, path)
    (b.vault / path).unlink()
    b.add(f"{path}/part.md", "plan\npart typed on b\n")
    kept = "notes/" + kept_as.format(gitsync.host()) + (".md" if name.endswith(".md") else "")
    assert kept_aside(b, path, kept) == (0, 1)  # received before the kill
    assert b.text(path) == "plan\ntyped on a\n"
    assert b.text(f"{kept}/part.md") == "plan\npart typed on b\n"
    assert b.git("status", "--porcelain") == ""
    assert b.sync()["outcome"] == "up-to-date"
    assert a.sync()["received"] == 1
    assert a.text(f"{kept}/part.md") == "plan\npart typed on b\n"


def test_a_folder_made_here_while_a_pass_was_killed_where_the_file_went_is_kept(
    request: pytest.FixtureRequest,
) -> None:
    """a turns notes/plan.md into a folder; b's pass is killed once it moved there, and b's
    person had made the note a folder too, holding another file. Deleting the file found a
    folder (`Is a directory` on every pass): it is gone here already, and both folders' files
    are there after."""
    a, b = request.getfixturevalue("pair")
    reshaped(a, b, "notes/plan.md", "notes/plan.md/part.md")
    killed_after_moving(b)
    (b.vault / "notes" / "plan.md").unlink()
    b.add("notes/plan.md/mine.md", "mine typed on b\n")
    b.sync()
    assert b.text("notes/plan.md/part.md") == "plan\n"
    assert b.text("notes/plan.md/mine.md") == "mine typed on b\n"
    assert b.git("status", "--porcelain") == ""
    assert a.sync()["received"] == 1
    assert a.text("notes/plan.md/mine.md") == "mine typed on b\n"


def test_an_empty_folder_where_a_received_file_goes_is_taken_away(
    request: pytest.FixtureRequest,
) -> None:
    """An empty folder (git keeps none: nothing was typed into it) in the received file's
    place is removed, not kept aside with a line about it."""
    a, b = request.getfixturevalue("pair")
    edited_on_a_while_b_was_killed(a, b)
    (b.vault / "notes" / "plan.md").unlink()
    (b.vault / "notes" / "plan.md" / "empty").mkdir(parents=True)
    assert b.sync()["waiting"] == []
    assert b.text("notes/plan.md") == "plan\ntyped on a\n"
    assert sorted(f.name for f in (b.vault / "notes").iterdir()) == ["plan.md"]


def test_a_folder_the_other_machine_made_a_file_is_received(
    request: pytest.FixtureRequest,
) -> None:
    """a turns the folder notes/plan.md/ into a file: the new file was carried before the
    folder's files were removed ("Is a directory"), and so again by every next pass."""
    a, b = request.getfixturevalue("pair")
    reshaped(a, b, "notes/plan.md/part.md", "notes/plan.md")
    assert b.sync()["received"] == 1
    assert b.text("notes/plan.md") == "plan\n"
    assert b.git("status", "--porcelain") == ""


def test_joining_keeps_a_file_named_as_a_folder_of_the_remote(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A new machine's notes/plan.md joins a vault where notes/plan.md/ is a folder."""
    a, _ = request.getfixturevalue("pair")
    a.add("notes/plan.md/part.md", "plan\n")
    a.sync()
    c = make_machine(tmp_path, "c")
    assert c.brain("install", str(c.vault), "--json").code == 0
    c.add("notes/plan.md", "typed on c\n")
    kept = f"notes/plan (from {gitsync.host()}).md"
    run = c.brain("sync", "connect", str(tmp_path / "remote.git"), "--vault", str(c.vault))
    assert run.code == 1, run
    assert gitsync._aside_line("notes/plan.md", kept) in run.out
    assert c.text(kept) == "typed on c\n"
    assert c.text("notes/plan.md/part.md") == "plan\n"
    assert c.git("status", "--porcelain") == ""
    assert a.sync()["received"] == 1
    assert a.text(kept) == "typed on c\n"


def test_a_second_clash_keeps_both_kept_files(request: pytest.FixtureRequest) -> None:
    """notes/plan.md clashes twice with a folder of its name: the second time, the name kept
    aside the first time was taken, and b's first kept text was overwritten by its second."""
    a, b = request.getfixturevalue("pair")
    reshaped(a, b, "notes/plan.md", "notes/plan.md/part.md")
    b.add("notes/plan.md", "first typed on b\n")
    kept = f"notes/plan (from {gitsync.host()}).md"
    kept_aside(b, "notes/plan.md", kept)
    a.sync()
    # a makes it a file again, b receives that, then a makes it a folder again while b edits.
    a.git("rm", "-qr", "notes/plan.md")
    a.add("notes/plan.md", "plan again\n")
    a.sync()
    b.sync()
    a.git("rm", "-q", "notes/plan.md")
    a.add("notes/plan.md/part.md", "plan again\n")
    a.sync()
    b.add("notes/plan.md", "second typed on b\n")
    second = f"notes/plan (from {gitsync.host()} 2).md"
    kept_aside(b, "notes/plan.md", second)
    assert b.text(kept) == "plan\nfirst typed on b\n"
    assert b.text(second) == "plan again\nsecond typed on b\n"
    assert b.git("status", "--porcelain") == ""
    a.sync()
    assert a.text(kept) == "plan\nfirst typed on b\n"
    assert a.text(second) == "plan again\nsecond typed on b\n"


def test_a_kept_name_the_other_machine_holds_is_not_overwritten(
    request: pytest.FixtureRequest,
) -> None:
    """a has a file of the very name b's clash would be kept as (its own, or a kept file of its
    own clash): b's pass replaced a's text with b's."""
    a, b = request.getfixturevalue("pair")
    kept = f"notes/plan (from {gitsync.host()}).md"
    reshaped(a, b, "notes/plan.md", "notes/plan.md/part.md")
    a.add(kept, "typed on a\n")
    a.sync()
    b.add("notes/plan.md", "typed on b\n")
    second = f"notes/plan (from {gitsync.host()} 2).md"
    kept_aside(b, "notes/plan.md", second)
    for machine in (b, a):
        machine.sync()
        assert (machine.text(kept), machine.text(second)) == ("typed on a\n", "plan\ntyped on b\n")


def test_a_note_edited_in_several_commits_is_kept_aside_once(
    request: pytest.FixtureRequest,
) -> None:
    """b's file changed in two commits the other machine's folder clashes with: both go to the
    one kept file (the later commit's change on top), not one kept file per commit."""
    a, b = request.getfixturevalue("pair")
    reshaped(a, b, "notes/plan.md", "notes/plan.md/part.md")
    b.add("notes/plan.md", "one\n")
    b.git("commit", "-qam", "one")
    b.add("notes/plan.md", "two\n")
    kept = f"notes/plan (from {gitsync.host()}).md"
    doc = b.sync(code=1)
    assert set(doc["waiting"]) == {gitsync._aside_line("notes/plan.md", kept)}
    assert b.text(kept) == "plan\none\ntwo\n"
    assert not (b.vault / f"notes/plan (from {gitsync.host()} 2).md").exists()


def a_kept_name_to_join(tmp_path: Path, a: Machine, files: dict[str, str]) -> Machine:
    """a sends `files` (a folder notes/plan.md/ and a file of the name a clash of it is kept
    as); machine c, a fresh install, is to join."""
    for rel, text in files.items():
        a.add(rel, text)
    a.sync()
    c = make_machine(tmp_path, "c")
    assert c.brain("install", str(c.vault), "--json").code == 0
    return c


def test_joining_where_the_remote_has_the_kept_name_keeps_both(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A new machine joins a vault that holds notes/plan.md/ and a file of the name its
    notes/plan.md would be kept as: the remote's file was replaced by the joining one's."""
    a, _ = request.getfixturevalue("pair")
    kept = f"notes/plan (from {gitsync.host()}).md"
    c = a_kept_name_to_join(tmp_path, a, {"notes/plan.md/part.md": "plan\n", kept: "typed on a\n"})
    c.add("notes/plan.md", "typed on c\n")
    run = c.brain("sync", "connect", str(tmp_path / "remote.git"), "--vault", str(c.vault))
    assert run.code == 1, run
    second = f"notes/plan (from {gitsync.host()} 2).md"
    assert gitsync._aside_line("notes/plan.md", second) in run.out
    assert c.text(kept) == "typed on a\n"
    assert c.text(second) == "typed on c\n"
    assert a.sync()["received"] == 1
    assert a.text(kept) == "typed on a\n"
    assert a.text(second) == "typed on c\n"


def test_a_temporary_file_a_stopped_write_left_is_never_sent(tmp_path: Path) -> None:
    """A write killed mid-way (brain.files' `.NAME.xxxxxxxx.tmp`) left its temporary file in the
    vault, and the next pass committed it and sent it to every clone (seen in the kill -9 race
    above). The clone's own exclude file keeps git from adding or showing it; uninstall's
    forget_driver takes the lines out again."""
    from test_sync_race import connected_pair

    bare, a, _ = connected_pair(tmp_path)
    notes = a.vault / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "kept.md").write_text("# Kept\n\nA note.\n", encoding="utf-8")
    (notes / ".kept.md.6bfd14a8.tmp").write_text("# Kept\n\nA note, half", encoding="utf-8")
    (notes / ".kept.md.k2j4_x9q.tmp").write_text("half", encoding="utf-8")  # tempfile.mkstemp's
    assert a.sync(code=0)["outcome"] == "synced"
    sent = git(bare, "ls-tree", "-r", "--name-only", "main", "notes/").splitlines()
    assert sent == ["notes/kept.md"]
    assert a.git("status", "--porcelain") == ""
    gitsync.forget_driver(a.vault)
    exclude = gitsync.git_dir(a.vault) / "info" / "exclude"
    assert ".*.????????.tmp" not in (exclude.read_text() if exclude.exists() else "")


@pytest.mark.parametrize(
    ("received", "to"),
    [
        ("notes/plan.md", "other"),
        ("notes/plan.md", "outside"),
        ("notes/plan.md/part.md", "other/mine.md"),
    ],
)
def test_a_link_where_a_received_file_goes_is_kept_aside(
    request: pytest.FixtureRequest, tmp_path: Path, received: str, to: str
) -> None:
    """a changes `received`; b's pass is killed once it moved its branch there, and b's person
    then puts a link in the place of notes/plan.md, to the other kind: a folder (in the vault or
    out of it) where the file goes, a file where its folder goes. The carry could never write
    through it (`Is a directory`, `brain does not follow it`, `changed into a link or a file`),
    and every pass after stopped there: nothing written down, received or sent again. The link
    is kept aside like a folder, nothing is written outside the vault."""
    a, b = request.getfixturevalue("pair")
    edited_on_a_while_b_was_killed(a, b, received)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside if to == "outside" else b.vault / to
    b.add("other/mine.md", "typed on b\n")
    place = b.vault / "notes" / "plan.md"
    (place / "part.md" if place.is_dir() else place).unlink()
    with contextlib.suppress(OSError):
        place.rmdir()
    place.symlink_to(target, target_is_directory=target.is_dir())
    kept = f"notes/plan (from {gitsync.host()}).md"
    kept_aside(b, "notes/plan.md", kept, link=True)
    assert (b.vault / kept).readlink() == target
    assert b.text(received) == "plan\ntyped on a\n"
    assert (list(outside.iterdir()), b.text("other/mine.md")) == ([], "typed on b\n")
    assert b.git("status", "--porcelain") == ""
    assert b.sync()["outcome"] == "up-to-date"
    assert a.sync()["received"] == 1
    assert a.text("other/mine.md") == "typed on b\n"
    assert a.git("ls-files", "-s", kept).startswith("120000 ")
    assert a.git("rev-parse", "HEAD") == b.git("rev-parse", "HEAD")


def test_a_note_edited_two_folders_down_that_became_a_file_is_kept_aside(
    request: pytest.FixtureRequest,
) -> None:
    """a turns notes/a.md/b.md/c.md into the file notes/a.md; b's pass is killed once it moved
    there, and b's person types into c.md: the folder two levels up is kept aside whole, the
    file received is written, and a receives what b typed."""
    a, b = request.getfixturevalue("pair")
    reshaped(a, b, "notes/a.md/b.md/c.md", "notes/a.md")
    killed_after_moving(b)
    b.add("notes/a.md/b.md/c.md", "typed on b\n")
    kept = f"notes/a (from {gitsync.host()}).md"
    assert kept_aside(b, "notes/a.md", kept) == (0, 1)
    assert (b.text("notes/a.md"), b.text(f"{kept}/b.md/c.md")) == ("plan\n", "plan\ntyped on b\n")
    assert b.git("status", "--porcelain") == ""
    assert a.sync()["received"] == 1
    assert a.text(f"{kept}/b.md/c.md") == "plan\ntyped on b\n"
    assert a.git("rev-parse", "HEAD") == b.git("rev-parse", "HEAD")


def test_a_folder_git_ignores_here_is_never_renamed_into_a_name_that_is_sent(
    request: pytest.FixtureRequest,
) -> None:
    """b keeps notes/plan.md/ out of git (its own .git/info/exclude) and a makes a note of that
    name. Kept aside as `notes/plan (from HOST).md/`, b's private files were no longer ignored,
    and the next write-down sent them. The pass leaves the folder where it is and says what to
    do; once it is moved, the next pass carries a's note."""
    a, b = request.getfixturevalue("pair")
    bare = request.getfixturevalue("remote")
    (b.vault / ".git" / "info" / "exclude").write_text("notes/plan.md/\n", encoding="utf-8")
    b.add("notes/plan.md/private.md", "kept out of git on b\n")
    a.add("notes/plan.md", "plan typed on a\n")
    a.sync()
    doc = b.sync(code=1)
    assert doc["waiting"] == [
        "notes/plan.md holds files git ignores here, where a received file goes: brain does not "
        "rename it (under a new name they would be sent); move it out of the vault; the next "
        "brain sync finishes it"
    ]
    b.sync(code=1)
    assert "kept out of git" not in remote_history(bare)
    assert b.text("notes/plan.md/private.md") == "kept out of git on b\n"
    (b.vault / "notes" / "plan.md").rename(b.vault.parent / "moved-out")
    assert b.sync()["waiting"] == []
    assert b.text("notes/plan.md") == "plan typed on a\n"
    assert "kept out of git" not in remote_history(bare)
