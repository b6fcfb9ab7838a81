"""When each note last changed, from the vault's git history (read with pygit2, never a subprocess).

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

import datetime as dt
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    try:
        import pygit2
    except ImportError:  # pragma: no cover - a dependency; never fatal here
        return None
    try:
        found = pygit2.discover_repository(str(vault))
        if not found:
            return Dates("", full=True)
        repo = pygit2.Repository(found)
        if repo.is_bare or repo.head_is_unborn:
            return Dates("", full=True)
        head = repo.head.target
        if str(head) == seen:
            return None
        prefix = _prefix(vault, repo.workdir)
        if prefix is None:
            return Dates("", full=True)
        since = _ancestor(repo, seen, head)
        return Dates(str(head), since is None, _walk(repo, head, since, prefix, set(wanted)))
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None  # a damaged repository: keep what the index has


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


def _prefix(vault: Path, workdir: str | None) -> str | None:
    """The vault's folder inside the repository's work tree ("" at its top), else None."""
    if not workdir:
        return None
    try:
        rel = vault.resolve().relative_to(Path(workdir).resolve())
    except ValueError:
        return None
    return "" if str(rel) == "." else rel.as_posix()


def _ancestor(repo: Any, seen: str, head: Any) -> Any:
    """The commit last read, when `head` descends from it (else history was rewritten: None)."""
    if not seen:
        return None
    import pygit2

    try:
        old = pygit2.Oid(hex=seen)
        return old if repo.descendant_of(head, old) else None
    except (pygit2.GitError, KeyError, ValueError):
        return None


def _subtree(repo: Any, commit: Any, prefix: str) -> Any:
    tree = commit.tree
    if not prefix:
        return tree
    try:
        entry = tree[prefix]
    except KeyError:
        return None
    obj = repo[entry.id]
    return obj if obj.type_str == "tree" else None


def _date(commit: Any) -> str:
    zone = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, zone).date().isoformat()


def _walk(repo: Any, head: Any, since: Any, prefix: str, wanted: set[str]) -> dict[str, str]:
    """Newest first along first parents: the first commit seen to touch a path is its last."""
    import pygit2

    walker = repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    walker.simplify_first_parent()
    if since is not None:
        walker.hide(since)
    dates: dict[str, str] = {}
    for commit in walker:
        tree = _subtree(repo, commit, prefix)
        try:
            parent = commit.parents[0] if commit.parent_ids else None
        except (KeyError, pygit2.GitError):
            parent = None  # a shallow clone's boundary: its parents are not there
        before = _subtree(repo, parent, prefix) if parent is not None else None
        if tree is not None and before is not None and tree.id == before.id:
            continue  # nothing in the vault changed
        if tree is None and before is None:
            continue
        if before is None:
            diff = tree.diff_to_tree(swap=True)  # everything in it is new
        elif tree is None:
            diff = before.diff_to_tree()  # the vault's folder was removed
        else:
            diff = before.diff_to_tree(tree)
        date = _date(commit)
        for delta in diff.deltas:
            for path in {delta.old_file.path, delta.new_file.path}:
                if path in wanted and path not in dates:
                    dates[path] = date
        if since is None and len(dates) == len(wanted):
            break  # every file has its date; older commits cannot change it
    return dates
