"""brain.files.replace and brain.merge.carry: compare, then replace; a write made while brain
writes is merged in, never overwritten; nothing is written outside the vault."""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path

import pytest

from brain import files, merge
from brain.errors import BrainError

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="links and dir_fd are POSIX here")


def test_replace_writes_only_over_what_was_read(tmp_path: Path) -> None:
    (tmp_path / "AI").mkdir()
    note = tmp_path / "AI" / "MEMORY.md"
    note.write_bytes(b"one\n")
    files.replace(tmp_path, "AI/MEMORY.md", b"two\n", was=b"one\n")
    assert note.read_bytes() == b"two\n"
    with pytest.raises(files.Changed) as caught:
        files.replace(tmp_path, "AI/MEMORY.md", b"three\n", was=b"one\n")
    assert caught.value.now == b"two\n"
    assert note.read_bytes() == b"two\n"
    assert sorted(p.name for p in (tmp_path / "AI").iterdir()) == ["MEMORY.md"]  # no temp left


def test_replace_creates_only_where_nothing_is_and_deletes_only_what_was_read(
    tmp_path: Path,
) -> None:
    files.replace(tmp_path, "notes/new.md", b"made\n", was=None)
    assert (tmp_path / "notes" / "new.md").read_bytes() == b"made\n"
    with pytest.raises(files.Changed) as caught:
        files.replace(tmp_path, "notes/new.md", b"again\n", was=None)
    assert caught.value.now == b"made\n"
    with pytest.raises(files.Changed):
        files.replace(tmp_path, "notes/new.md", None, was=b"something else\n")
    assert (tmp_path / "notes" / "new.md").read_bytes() == b"made\n"
    files.replace(tmp_path, "notes/new.md", None, was=b"made\n")
    assert not (tmp_path / "notes" / "new.md").exists()
    assert list((tmp_path / "notes").iterdir()) == []
    with pytest.raises(files.Changed):
        files.replace(tmp_path, "notes/gone.md", b"x\n", was=b"it was here\n")


def test_replace_keeps_the_mode_and_writes_through_a_hard_link(tmp_path: Path) -> None:
    note = tmp_path / "MEMORY.md"
    note.write_bytes(b"one\n")
    note.chmod(0o640)
    elsewhere = tmp_path / "linked.md"
    os.link(note, elsewhere)
    files.replace(tmp_path, "MEMORY.md", b"two\n", was=b"one\n")
    assert elsewhere.read_bytes() == b"two\n"  # still one file under two names
    assert note.stat().st_ino == elsewhere.stat().st_ino
    solo = tmp_path / "solo.md"
    solo.write_bytes(b"a\n")
    solo.chmod(0o640)
    files.replace(tmp_path, "solo.md", b"b\n", was=b"a\n")
    assert solo.stat().st_mode & 0o777 == 0o640


@posix_only
def test_replace_refuses_a_link_out_of_the_root(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    vault.mkdir()
    outside.mkdir()
    (vault / "AI").symlink_to(outside)
    with pytest.raises(BrainError, match="outside"):
        files.replace(vault, "AI/INBOX.md", b"x\n", was=None)
    assert list(outside.iterdir()) == []


def _exchange(one: Path, other: Path) -> None:
    """Swap two names at once (renameat2 RENAME_EXCHANGE), so AI/ always exists: as the folder
    or as the link."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    at_cwd = -100  # AT_FDCWD
    if libc.renameat2(at_cwd, bytes(one), at_cwd, bytes(other), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_folder_flipped_to_a_link_while_brain_writes_never_sends_a_write_outside(
    tmp_path: Path, seed: int
) -> None:
    """A thread swaps AI/ for a link out of the vault and back as fast as it can while files
    are written into AI/: every write lands inside or is refused with one line; nothing is
    written outside, no temp file is left."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "AI").mkdir(parents=True)
    outside.mkdir()
    real, link = vault / "AI", vault / "AI-link"
    link.symlink_to(outside)
    stop = threading.Event()
    rng = random.Random(seed)  # noqa: S311 -- reproducible timings, not crypto
    flips = 0

    def flip() -> None:
        nonlocal flips
        while not stop.is_set():
            _exchange(real, link)  # AI/ is the link to outside now
            time.sleep(rng.random() / 5000)
            _exchange(real, link)  # and the folder again, most of the time: writes land
            time.sleep(rng.random() / 500)
            flips += 1

    flipper = threading.Thread(target=flip)
    flipper.start()
    written = refused = 0
    try:
        for i in range(300):
            try:
                files.replace(vault, f"AI/n{i}.md", b"x\n", was=None)
                written += 1
            except BrainError:
                refused += 1
    finally:
        stop.set()
        flipper.join()
    assert not real.is_symlink()
    assert list(outside.iterdir()) == []
    assert written + refused == 300
    assert written > 0, (written, refused, flips)  # not a test of nothing
    assert len(list(real.iterdir())) == written  # and no temp file left


def _appender(path: Path, lines: list[str], stop: threading.Event, rng: random.Random) -> None:
    """A person appending bullets, each written the way a shell's `>>` does."""
    for line in lines:
        if stop.is_set():
            return
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
        time.sleep(rng.random() / 2000)


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_carry_under_a_person_appending_loses_nothing(tmp_path: Path, seed: int) -> None:
    """brain carries 100 changes (a line added near the top, as a receive does) into a file a
    person appends to all the while: every line of both ends up in the file, once."""
    rng = random.Random(seed)  # noqa: S311 -- reproducible timings, not crypto
    note = tmp_path / "MEMORY.md"
    note.write_text("# Memory\n\n- **first** — a fact — test — 2026-12-01\n", encoding="utf-8")
    typed = [f"- **typed{i}** — typed by hand — test — 2026-12-01\n" for i in range(400)]
    stop = threading.Event()
    person = threading.Thread(target=_appender, args=(note, typed, stop, rng))
    person.start()
    theirs = []
    try:
        for i in range(100):
            base = note.read_bytes()  # what brain read (the person goes on appending)
            line = f"- **remote{i}** — from another machine — test — 2026-12-01\n".encode()
            head, _, tail = base.partition(b"\n\n")
            new = head + b"\n\n" + line + tail
            theirs.append(line.decode())
            merge.carry(tmp_path, "MEMORY.md", base, new)
    finally:
        person.join()
        stop.set()
    text = note.read_text(encoding="utf-8")
    for line in typed + theirs:
        assert text.count(line) == 1, line


def test_carry_makes_the_folders_a_new_file_needs(tmp_path: Path) -> None:
    assert files.read_in(tmp_path, "notes/deep/plan.md") is None
    assert merge.carry(tmp_path, "notes/deep/plan.md", None, b"A plan.\n").how == "written"
    assert (tmp_path / "notes" / "deep" / "plan.md").read_bytes() == b"A plan.\n"
