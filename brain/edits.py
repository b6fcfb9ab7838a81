"""Changing the vault's own files (the inbox, the core files, AI/config.yaml): one writer at a
time per vault (a lock in the state dir), every change written as a change of what brain read
(`write(..., was=)`: a line a person added meanwhile is merged in, never overwritten; folders
opened from the vault down, so a folder swapped for a link cannot send the write outside), line
edits that leave a line alone when it moved, and the reader of the crash journals that make a
change of several files all or nothing (brain/commands/inbox.py, hygiene.py).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Container, Iterator, Sequence
from pathlib import Path

from brain.config import INBOX, index_path, state_dir
from brain.errors import BrainError
from brain.files import confine


def is_proposal(line: str) -> bool:
    """Whether an inbox line is a proposal (or tend's item): a list item."""
    return line.startswith("- ")


def with_proposals(text: str, lines: Sequence[str]) -> str:
    """The inbox `text` with `lines` (proposals, tend's items) appended: the starter inbox when
    there is none, and one blank line between its header and the first (`without` takes it
    again with the last)."""
    if not text:
        from brain.shipped import starter_file

        text = starter_file("INBOX.md")
    body = text.rstrip("\n")
    last = body.rsplit("\n", 1)[-1]
    gap = "" if not body else "\n" if is_proposal(last) else "\n\n"
    return body + gap + "\n".join(lines) + "\n"


def without(text: str, gone: Container[int]) -> str:
    """The inbox `text` without its lines numbered `gone` (from 1). Blank lines the removal leaves
    at the end go too: propose puts one between the header and the first proposal, and a drained
    inbox should be byte for byte what it was, not a change to commit."""
    kept = [line for i, line in enumerate(text.split("\n"), start=1) if i not in gone]
    body = "\n".join(kept)
    return body.rstrip("\n") + "\n" if body.endswith("\n\n") else body


def read(vault: Path, rel: str) -> str:
    """A vault file's text, "" when it does not exist. A core file that is a link out of the vault
    reads as absent, as the index skips it (approving into it is refused); an inbox that is one
    is an error."""
    from brain.files import outside, read_in
    from brain.vault import refuse_oversized

    try:
        away = outside(vault / rel, vault)
    except OSError as exc:  # a link swapped for a folder and back while it was resolved
        raise BrainError(f"{rel} changed while brain was reading it", "try again") from exc
    if away is not None:
        if rel != INBOX:
            return ""
        confine(vault / rel, vault)
    # a synced 200 MB inbox took every `brain inbox` 1.8 s and 640 MB; the index skips it already
    refuse_oversized(vault / rel, rel, "not read", f"trim or split {vault / rel}")
    try:
        # read as `write` will see it: from the vault down, no folder swapped for a link followed
        return (read_in(vault, rel) or b"").decode("utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else exc
        raise BrainError(f"cannot read {rel}: {why}", f"fix or re-save {vault / rel}") from exc


def write(vault: Path, rel: str, text: str, *, was: str) -> None:
    """Make the change `was` -> `text` to a vault file, `was` being what the caller read of it
    ("" for a file that was missing). A file that changed since (a person appending a bullet,
    an editor saving) gets the change merged in line by line, its own lines kept
    (brain.merge.carry): brain never overwrites what it did not read."""
    from brain.merge import carry

    try:
        carry(vault, rel, was.encode("utf-8"), text.encode("utf-8"))
    except OSError as exc:
        raise BrainError(
            f"cannot write {rel}: {exc.strerror}", f"make {vault / rel} writable and try again"
        ) from exc


def state_file(vault: Path, suffix: str) -> Path:
    """A file of this vault's in the state dir: its lock, its journals."""
    return state_dir() / "inbox" / f"{index_path(vault).stem}{suffix}"


@contextlib.contextmanager
def locked(vault: Path) -> Iterator[None]:
    """One writer at a time for this vault's inbox and core files (across processes)."""
    from brain.files import locked as file_lock

    with file_lock(state_file(vault, ".lock")):
        yield


def read_journal(path: Path) -> object | None:
    """A journal's JSON, None when there is none; one that cannot be read is deleted (a torn
    one cannot happen, it is written through os.replace: unreadable means foreign)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None


LineEdit = tuple[str, int, "Callable[[str], str | None]"]


def edit_lines(vault: Path, edits: list[LineEdit]) -> list[tuple[str, int]]:
    """Line edits of vault files, under the lock, each file written once and atomically: each
    edit is (file, 1-based line, a function of the line that gives its new text, or None to
    leave it). Returns (file, line) of those changed; the index follows."""
    done: list[tuple[str, int]] = []
    with locked(vault):
        by_path: dict[str, list[tuple[int, Callable[[str], str | None]]]] = {}
        for rel, line, fn in edits:
            by_path.setdefault(rel, []).append((line, fn))
        for rel, items in by_path.items():
            text = read(vault, rel)
            lines = text.split("\n")
            changed = False
            for line, fn in items:
                new = fn(lines[line - 1]) if 0 < line <= len(lines) else None
                if new is not None and new != lines[line - 1]:
                    lines[line - 1] = new
                    changed = True
                    done.append((rel, line))
            if changed:
                write(vault, rel, "\n".join(lines), was=text)
    if done:
        reindex(vault)
    return done


def reindex(vault: Path) -> None:
    """The index follows in-process: brain commits nothing here, and a commit made through libgit2
    would run no post-commit hook anyway."""
    from brain import index

    index.sync(vault)
