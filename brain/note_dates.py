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

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path


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
    from brain import gitutil

    hint = gitutil.head_hint(vault)
    if hint == "":
        return Dates("", full=True)  # no repository holds the vault
    if hint is not None and hint == seen:
        return None  # nothing committed since: no need to load pygit2 (~0.2 s) at all
    found = gitutil.last_changed(vault, wanted, seen)
    return None if found is None else Dates(*found)
