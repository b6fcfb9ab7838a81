"""When each note last changed, from the vault's git history (read with pygit2 through
brain/gitutil.py, never a subprocess).

A note's date is the date in its file name, else the committer date of the last commit that
touched it, else none. Walking history costs time on a long-lived vault, so only `brain reindex`
(which the post-commit hook runs after every commit) reads it, and only the commits added since the
last read; the dates are cached in the index, and a find never walks history.

A vault may be a folder of a larger repository: only that folder's subtree is compared, and paths
are vault-relative. A shallow clone ends at its boundary commit, which is treated as touching
every file it holds: its date is the latest a file there can have changed, so "older than a bullet"
judged on it is never wrong, only sometimes not said.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


@dataclass(frozen=True)
class Dates:
    """What a read of history found. `full` means `dates` replaces the cache rather than
    updating it (the first read, or history was rewritten)."""

    head: str  # the commit the dates reflect; "" when the vault has no history
    full: bool
    dates: dict[str, str] = field(default_factory=dict)  # vault-relative path -> YYYY-MM-DD


def read(vault: Path, wanted: Collection[str], seen: str) -> Dates | None:
    """The last-change dates of `wanted` paths, walking only the commits since `seen` (a commit
    id from the last read, or ""). None when nothing changed since or history cannot be read."""
    hint = head_hint(vault)
    if hint == "":
        return Dates("", full=True)  # no repository holds the vault
    if hint is not None and hint == seen:
        return None  # nothing committed since: no need to load pygit2 (~0.2 s) at all
    from brain import gitutil

    found = gitutil.last_changed(vault, wanted, seen)
    return None if found is None else Dates(*found)


def head_hint(vault: Path) -> str | None:
    """The commit HEAD names, read from the files git keeps it in; "" when no folder at or
    above the vault holds `.git`; None when it cannot be told this way (pygit2 decides)."""
    try:
        here = vault.resolve()
        dot = next((d / ".git" for d in (here, *here.parents) if (d / ".git").exists()), None)
        if dot is None:
            return ""
        if dot.is_file():  # a worktree or submodule: "gitdir: <path>"
            line = dot.read_text(encoding="utf-8").strip()
            if not line.startswith("gitdir: "):
                return None
            git_dir = (dot.parent / line[len("gitdir: ") :]).resolve()
        else:
            git_dir = dot
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head if _HEX.fullmatch(head) else None
        ref = head[len("ref: ") :]
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = (
                git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()
            ).resolve()
        for folder in (git_dir, common):
            if (folder / ref).is_file():
                value = (folder / ref).read_text(encoding="utf-8").strip()
                return value if _HEX.fullmatch(value) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for row in packed.read_text(encoding="utf-8").splitlines():
                value, _, name = row.partition(" ")
                if name == ref and _HEX.fullmatch(value):
                    return value
    except (OSError, UnicodeDecodeError):
        return None
    return None
