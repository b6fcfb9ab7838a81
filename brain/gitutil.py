"""The one place brain touches git: the git CLI run (`run`), and git's objects read with pygit2
(imported late, inside the function that reads: it costs ~0.2 s to load).

Hooks export GIT_* variables that would redirect every git call (GIT_DIR, GIT_INDEX_FILE, ...);
they are scrubbed so that a command means the repository it names. The one exception is the
index a commit hook is handed (`hook_index`): staged reads must see what is being committed.
The variables that say how to reach a remote (GIT_SSH_COMMAND, GIT_ASKPASS, ...) are the user's
and are kept, so that `brain sync` fetches and pushes as `git` would.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain.errors import BrainError
from brain.settings import current

# Variables that identify the person committing, or say how to reach a remote, are kept; the ones
# that point git at another repository, index or object store are not.
_KEEP = {
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
    "GIT_EXEC_PATH",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_ASKPASS",
    "GIT_TERMINAL_PROMPT",
    "GIT_SSL_CAINFO",
    "GIT_SSL_NO_VERIFY",
    "GIT_HTTP_PROXY_AUTHMETHOD",
    "GIT_ALLOW_PROTOCOL",
    "GIT_PROTOCOL_FROM_USER",
}


class GitTimeout(BrainError):
    """A git command ran past its time and was stopped (with everything it started)."""


def no_git_env() -> dict[str, str]:
    """The command's environment (brain.settings: the worker runs its client's) without the
    GIT_* variables git exports into hooks, but for those that tune transport."""
    env = current().env
    return {k: v for k, v in env.items() if not k.startswith("GIT_") or k in _KEEP}


def run(
    repo: Path,
    *args: str,
    check: bool = True,
    index: str | None = None,
    config: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    started: Callable[[int], None] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git -C repo [-c KEY=VALUE]... ARGS` with GIT_* scrubbed and stdin closed.

    `index` sets GIT_INDEX_FILE (see `hook_index`); `env` adds variables; with `timeout` git runs
    in its own process group, which is killed whole (ssh, hooks, merge drivers) when time is up
    or the caller is interrupted; `started` is told that group's id.
    """
    full_env = no_git_env()
    if index:
        full_env["GIT_INDEX_FILE"] = index
    full_env.update(env or {})
    argv = ["git", "-C", str(repo)]
    for item in config:
        argv += ["-c", item]
    argv += args
    try:
        if timeout is None:
            proc = subprocess.run(
                argv, capture_output=True, env=full_env, check=False, stdin=subprocess.DEVNULL
            )
        else:
            proc = _run_bounded(argv, full_env, timeout, args[0], started)
    except FileNotFoundError as exc:
        raise BrainError("git is not installed", "install git and try again") from exc
    if check and proc.returncode != 0:
        raise BrainError(
            f"git {args[0]} failed in {repo}: {complaint(proc)}",
            "check that the vault is a git repository (`git status` there)",
        )
    return proc


def _run_bounded(
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    name: str,
    started: Callable[[int], None] | None,
) -> subprocess.CompletedProcess[bytes]:
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    else:
        kwargs["start_new_session"] = True
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        **kwargs,  # type: ignore[call-overload]
    )
    try:
        if started is not None:
            started(proc.pid)
        out, err = proc.communicate(timeout=max(timeout, 0.1))
    except BaseException as exc:  # the timeout, or Ctrl-C: never leave git running behind us
        _kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=5)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise GitTimeout(
                f"git {name} took longer than {timeout:.0f} s and was stopped",
                "check the network and the remote, then try again",
            ) from None
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        with contextlib.suppress(OSError):
            proc.kill()
        return
    stop_group(proc.pid, reap=proc.poll)


def stop_group(group: int, reap: Callable[[], object] | None = None) -> None:
    """Stop a process group git runs in: SIGTERM first, so that git removes its lock files as it
    goes (a push to a remote on local disk runs the remote's receive-pack in the same group: a
    SIGKILL left the remote's branch locked for every machine), SIGKILL after a second. `reap`
    collects a child of ours, so that it does not linger as a zombie and count as running."""
    import time

    for sig, wait in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 2.5)):
        try:
            os.killpg(group, sig)
        except OSError:
            return  # gone already, or not ours
        end = time.monotonic() + wait
        while time.monotonic() < end:
            if reap is not None:
                reap()
            try:
                os.killpg(group, 0)
            except OSError:
                return
            time.sleep(0.02)


def complaint(proc: subprocess.CompletedProcess[bytes], *, first: bool = False) -> str:
    """Git's reason in one line: its first `fatal:` or `error:` line (the later ones are
    advice), else its last line (its first with `first`: what a refusing hook said first)."""
    lines = [
        line.strip()
        for stream in (proc.stderr, proc.stdout)
        for line in (stream or b"").decode("utf-8", "replace").splitlines()
        if line.strip() and not line.lstrip().startswith("hint:")
    ]
    for line in lines:
        for prefix in ("fatal: ", "error: "):
            if line.startswith(prefix):
                return line.removeprefix(prefix)
    return lines[0 if first else -1] if lines else f"exit {proc.returncode}"


def repo_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a folder, or a worktree's file),
    found without running git: the pack hook asks it on every session start."""
    try:
        here = start.resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def is_repo(path: Path) -> bool:
    return run(path, "rev-parse", "--git-dir", check=False).returncode == 0


def toplevel(path: Path) -> Path | None:
    proc = run(path, "rev-parse", "--show-toplevel", check=False)
    return Path(proc.stdout.decode().strip()) if proc.returncode == 0 else None


def hook_index(repo: Path) -> str | None:
    """The index git handed to a hook running for `repo`, as an absolute path; else None.

    `git commit -a` and `git commit PATHS` stage into a temporary index (`index.lock`,
    `next-index-<pid>.lock`) and export it to the hooks as GIT_INDEX_FILE. Scrubbed, brain would
    read `.git/index` and check content other than what is being committed. The variable is kept
    only when it names a file inside `repo`'s own git directory, so a hook running in one
    repository never redirects brain's reads of another.
    """
    said = current()
    value = said.env.get("GIT_INDEX_FILE")
    return _hook_index(str(repo), str(Path(said.cwd) / value)) if value else None


@functools.lru_cache(maxsize=8)
def _hook_index(repo: str, index: str) -> str | None:
    proc = run(Path(repo), "rev-parse", "--absolute-git-dir", check=False)
    if proc.returncode != 0:
        return None
    git_dir = Path(proc.stdout.decode("utf-8", "replace").strip()).resolve()
    return index if Path(index).resolve().is_relative_to(git_dir) else None


def staged_paths(repo: Path) -> list[str]:
    """Files added, copied, modified or renamed in the index (what the commit will hold), relative
    to `repo` and only those inside it: a vault may be a folder of a larger repository."""
    proc = run(
        repo,
        "diff",
        "--cached",
        "--name-only",
        "--relative",
        "-z",
        "--diff-filter=ACMR",
        index=hook_index(repo),
    )
    return [p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p]


def staged_files(repo: Path) -> list[tuple[str, str]]:
    """(path, blob id) of each file added, copied, modified or renamed in the index, as
    `staged_paths`; a name that is not UTF-8 keeps its bytes (`os.fsdecode`, so it can be handed
    back to git or the file system), and a submodule, which holds no file here, is left out."""
    proc = run(
        repo,
        "diff",
        "--cached",
        "--raw",
        "-z",
        "--no-abbrev",
        "--relative",
        "--diff-filter=ACMR",
        index=hook_index(repo),
    )
    # `:OLDMODE NEWMODE OLDID NEWID STATUS` NUL PATH NUL, a copy or a rename with two paths
    fields = proc.stdout.split(b"\0")
    found: list[tuple[str, str]] = []
    at = 0
    while at < len(fields) and fields[at].startswith(b":"):
        meta = fields[at][1:].split()
        paths = 2 if meta[4][:1] in (b"C", b"R") else 1
        if meta[1] != b"160000":
            found.append((os.fsdecode(fields[at + paths]), meta[3].decode("ascii")))
        at += 1 + paths
    return found


def blob(repo: Path, oid: str) -> bytes | None:
    """The content of the blob `oid` (a staged file's: `staged_files`); None when git has none."""
    proc = run(repo, "cat-file", "blob", oid, check=False)
    return proc.stdout if proc.returncode == 0 else None


def staged_blob(repo: Path, path: str) -> bytes | None:
    """The staged content of `path`, relative to `repo` (`:./path`; `:path` is from the top)."""
    proc = run(repo, "show", f":./{path}", check=False, index=hook_index(repo))
    return proc.stdout if proc.returncode == 0 else None


# --- git's objects, read with pygit2 ---------------------------------------------------------


def head_file(vault: Path, rel: str) -> bytes | None:
    """`rel` (vault-relative) as the last commit holds it; None: no repository, no commit, no
    such file."""
    import pygit2

    try:
        repo = pygit2.Repository(str(vault))
        if repo.head_is_unborn or repo.workdir is None:
            return None
        top = Path(repo.workdir).resolve()
        name = (vault.resolve() / rel).relative_to(top).as_posix()
        obj = repo.head.peel(pygit2.Commit).tree[name]
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return obj.data if isinstance(obj, pygit2.Blob) else None


def commit_ids(root: Path, most: int) -> list[str] | None:
    """Every commit id reachable from the repository's refs, sorted (a prefix is then one
    bisect); None when the repository cannot be read, [] past `most` (ask `is_commit`)."""
    import pygit2

    try:
        repo = pygit2.Repository(str(root))
        tips = []
        for name in repo.references:
            try:
                tips.append(repo.references[name].peel(pygit2.Commit).id)
            except (pygit2.GitError, ValueError, KeyError, TypeError, AttributeError):
                continue
        seen: set[str] = set()
        if tips:
            walker = repo.walk(tips[0])
            for tip in tips[1:]:
                walker.push(tip)
            for commit in walker:
                seen.add(str(commit.id))
                if len(seen) > most:
                    break
    except (pygit2.GitError, OSError):
        return None
    return sorted(seen) if len(seen) <= most else []


def is_commit(root: Path, sha: str) -> bool:
    """Whether `sha` (a prefix of 7 or more hex digits) names a commit of the repository."""
    import pygit2

    try:
        return isinstance(pygit2.Repository(str(root)).revparse_single(sha), pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, OSError):
        return False


def commits_between(
    repo: str, low: int, high: int, *, slack: int, most: int
) -> tuple[list[tuple[str, int, str, str]], str | None]:
    """(id, committer time, author, summary line) of the commits on the repository's local
    branches committed in [low, high) (epoch seconds), newest first, `most` at most; the walk by
    time stops `slack` seconds before `low` (clock skew, rebases). And a note when they could not
    be read."""
    import pygit2

    try:
        handle = pygit2.Repository(repo)
        heads = [handle.branches.local[name].target for name in handle.branches.local]
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        return [], f"cannot read its history: {exc}"
    if not heads:
        return [], None
    out: list[tuple[str, int, str, str]] = []
    try:
        walker = handle.walk(heads[0], pygit2.enums.SortMode.TIME)
        for head in heads[1:]:
            walker.push(head)
        for commit in walker:
            when = commit.commit_time
            if when < low - slack:
                break
            if low <= when < high:
                summary = (commit.message or "").strip().split("\n", 1)[0]
                out.append((str(commit.id), when, commit.author.name, summary))
                if len(out) >= most:
                    break
    except pygit2.GitError as exc:
        return out, f"cannot read its history: {exc}"
    return out, None


def last_changed(
    vault: Path, wanted: Collection[str], seen: str
) -> tuple[str, bool, dict[str, str]] | None:
    """When each of `wanted` (vault-relative) last changed, by the commits since `seen` (all of
    them when `seen` is no ancestor of HEAD): (HEAD, whether the dates are of all history, path
    -> YYYY-MM-DD). ("", True, {}) when no repository holds the vault or it has no commit; None
    when nothing was committed since `seen`, or the repository cannot be read."""
    try:
        import pygit2
    except ImportError:  # pragma: no cover - a dependency; never fatal here
        return None
    try:
        found = pygit2.discover_repository(str(vault))
        if not found:
            return "", True, {}
        repo = pygit2.Repository(found)
        if repo.is_bare or repo.head_is_unborn:
            return "", True, {}
        head = repo.head.target
        if str(head) == seen:
            return None
        prefix = _prefix(vault, repo.workdir)
        if prefix is None:
            return "", True, {}
        since = _ancestor(repo, seen, head)
        return str(head), since is None, _walk(repo, head, since, prefix, set(wanted))
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None  # a damaged repository: keep what the index has


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


def in_history(repo: Any, sha: str, head: str) -> bool:
    """Whether commit `sha` is `head` or one of its ancestors."""
    return sha == head or _ancestor(repo, sha, head) is not None


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


@dataclass(frozen=True)
class Revision:
    """A commit as the history scans read it."""

    id: str
    date: str  # the author date (YYYY-MM-DD in the author's time zone), as `git log` shows it
    root: bool  # it has no parent
    # (path, blob id) of each file it adds or changes, submodules left out; a name that is not
    # UTF-8 keeps its bytes (`os.fsdecode`)
    changes: tuple[tuple[str, bytes], ...]


def repository(path: Path) -> Any | None:
    """The repository at `path`, to hand to the reads below; None when there is none."""
    import pygit2

    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError:
        return None


def commit_id(repo: Any, name: str) -> str | None:
    """The commit `name` (a ref, an id, `HEAD~2`) peels to, else None."""
    import pygit2

    try:
        return str(repo.revparse_single(name).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def every_tip(repo: Any) -> list[str]:
    """The commits every ref points to (branches, tags, remotes, the stash) and a detached HEAD;
    a ref to a tree or a blob, or a broken one, holds no commit."""
    import pygit2

    tips = []
    for ref in repo.references.iterator():
        try:
            tips.append(str(ref.peel(pygit2.Commit).id))
        except (pygit2.GitError, ValueError, TypeError):
            continue
    if not repo.head_is_unborn and repo.head_is_detached:
        tips.append(str(repo.head.target))
    return tips


def tips_under(repo: Any, *prefixes: str) -> dict[str, str]:
    """The commit each ref whose name starts with one of `prefixes` peels to, by name, in one
    pass over the refs (no git process a ref); a ref to a tree or a blob, or a broken one, holds
    no commit and is left out, as `git rev-parse REF^{commit}` would refuse it."""
    import pygit2

    tips = {}
    for ref in repo.references.iterator():
        try:
            if ref.name.startswith(prefixes):
                tips[ref.name] = str(ref.peel(pygit2.Commit).id)
        except (pygit2.GitError, ValueError, TypeError, KeyError):
            continue
    return tips


def revisions(
    repo: Any,
    tips: Sequence[str],
    hide: Sequence[str] = (),
    *,
    by_time: bool = False,
    every_parent: bool = False,
) -> Iterator[Revision]:
    """The commits reachable from `tips` and from none of `hide`, oldest first (parents before
    children; with `by_time`, older before newer among the rest). A commit's changes are against
    its first parent, or with `every_parent` those that differ from every parent (what a merge
    takes whole from one side is that side's commits')."""
    import pygit2
    from pygit2.enums import SortMode

    if not tips:
        return
    order = SortMode.TOPOLOGICAL | SortMode.REVERSE
    walker = repo.walk(None, order | SortMode.TIME if by_time else order)
    for tip in tips:
        walker.push(pygit2.Oid(hex=tip))
    for name in hide:
        walker.hide(pygit2.Oid(hex=name))
    for commit in walker:
        parents = commit.parents if every_parent else commit.parents[:1]
        author = commit.author
        when = dt.timezone(dt.timedelta(minutes=author.offset))
        date = dt.datetime.fromtimestamp(author.time, when).date().isoformat()
        yield Revision(str(commit.id), date, not commit.parents, _changed(commit, parents))


def _changed(commit: Any, parents: Sequence[Any]) -> tuple[tuple[str, bytes], ...]:
    import pygit2
    from pygit2.enums import DeltaStatus

    diffs = [parent.tree.diff_to_tree(commit.tree) for parent in parents]
    sides: list[dict[tuple[bytes, bytes], None]] = []
    for diff in diffs or [commit.tree.diff_to_tree(swap=True)]:
        side: dict[tuple[bytes, bytes], None] = {}
        for delta in diff.deltas:
            new = delta.new_file
            if delta.status != DeltaStatus.DELETED and new.mode != pygit2.enums.FileMode.COMMIT:
                side[(new.raw_path, new.id.raw)] = None
        sides.append(side)
    return tuple(
        (os.fsdecode(raw), key)
        for raw, key in sides[0]
        if all((raw, key) in side for side in sides[1:])
    )


def blob_size(repo: Any, oid: bytes) -> int | None:
    """The size of the blob `oid` (a Revision's change); None when it is no blob."""
    import pygit2

    blob = repo[pygit2.Oid(raw=oid)]
    return blob.size if isinstance(blob, pygit2.Blob) else None


def blob_data(repo: Any, oid: bytes) -> bytes:
    """The content of the blob `oid`; b"" when it is no blob."""
    import pygit2

    blob = repo[pygit2.Oid(raw=oid)]
    return blob.data if isinstance(blob, pygit2.Blob) else b""


# --- git's objects written in memory (the sync's replay and join: no work tree, no hooks) -----


def open_git(path: Path) -> Any:
    """The repository at `path` (a work tree or a git dir) for the sync's replay; pygit2.GitError
    when there is none."""
    import pygit2

    return pygit2.Repository(str(path))


def commit_of(repo: Any, name: Any) -> Any:
    """The commit `name` (an id, a ref) peels to."""
    import pygit2

    return repo[name].peel(pygit2.Commit)


def head_commit(repo: Any) -> Any:
    import pygit2

    return repo.head.peel(pygit2.Commit)


def new_index() -> Any:
    """An index in memory, to build a tree in."""
    import pygit2

    return pygit2.Index()


def index_entry(path: str, oid: Any, mode: int) -> Any:
    import pygit2

    return pygit2.IndexEntry(path, oid, pygit2.enums.FileMode(mode))


def signature(name: str, email: str) -> Any:
    import pygit2

    return pygit2.Signature(name, email)


def tree_blobs(tree: Any, prefix: str = "") -> Iterator[tuple[str, Any, int]]:
    """(path, blob id, file mode) of every file in `tree`, at any depth."""
    import pygit2

    for entry in tree:
        path = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            yield from tree_blobs(entry, f"{path}/")
        elif isinstance(entry, pygit2.Blob):
            yield path, entry.id, entry.filemode


def point_index(repo: Any, entries: Iterable[tuple[str, tuple[Any, int] | None]]) -> None:
    """The repository's own index holds these (path, (blob id, mode)) entries, a path with None
    removed. A person's git holding the index now leaves it as it was: nothing is changed."""
    import pygit2

    try:
        index = repo.index
        index.read(force=True)
        for path, entry in entries:
            if entry is None:
                if path in index:
                    index.remove(path)
            else:
                index.add(index_entry(path, entry[0], entry[1]))
        index.write()
    except (pygit2.GitError, OSError):
        return


# --- which files each commit touched (pygit2, imported when a history is read) --------------------


@dataclass(frozen=True)
class Change:
    """A commit that is not a merge, and the paths it touched (a merge brings in commits that are
    read on their own: counting it too would count each change twice, as `git log --no-merges`
    does not)."""

    sha: str
    at: int  # committer time, seconds since the epoch
    day: str  # its committer date in its own time zone, YYYY-MM-DD
    paths: tuple[str, ...]  # every path it added, changed or deleted, or renamed from or to
    moves: tuple[tuple[str, str], ...]  # (old, new) of each rename it made


@dataclass(frozen=True)
class Log:
    """What a read of a repository's history found since the last read."""

    head: str  # the commit read up to
    full: bool  # the first read, or history was rewritten: `changes` replace what was read
    changes: tuple[Change, ...]  # newest first
    floor: str  # a full read that stopped early: the oldest day it reached ("" all of it)
    bounded: bool  # stopped by the commit bound (older days than `floor` may hold changes)


def read_log(root: Path, seen: str, *, since_day: str = "", max_commits: int) -> Log | None:
    """The commits of `root`'s HEAD since the commit `seen` (read before, or ""), newest first,
    each with the paths it touched; a full read when `seen` is not an ancestor of HEAD. A full
    read stops at the first commit dated before `since_day` and after `max_commits` commits, an
    incremental one that would pass the bound reads in full (bounded) instead. None when `root`
    holds no readable repository or no commit."""
    if seen and head_hint(root) == seen:
        return Log(seen, full=False, changes=(), floor="", bounded=False)
    import pygit2

    try:
        repo = pygit2.Repository(str(root))
        if repo.is_bare or repo.head_is_unborn:
            return None
        head = repo.head.target
        if str(head) == seen:
            return Log(seen, full=False, changes=(), floor="", bounded=False)
        old = _ancestor(repo, seen, head)
        if old is not None:
            got = _walk_changes(repo, head, old, "", max_commits)
            if got is not None:
                return Log(str(head), full=False, changes=got[0], floor="", bounded=False)
        changes, floor, bounded = _walk_changes(repo, head, None, since_day, max_commits) or (
            (),
            "",
            False,
        )
        return Log(str(head), full=True, changes=changes, floor=floor, bounded=bounded)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def _walk_changes(
    repo: Any, head: Any, hide: Any, since_day: str, max_commits: int
) -> tuple[tuple[Change, ...], str, bool] | None:
    """(changes newest first, floor, bounded); None when an incremental walk (`hide` given)
    passes `max_commits`."""
    import datetime as dt

    import pygit2

    walker = repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    if hide is not None:
        walker.hide(hide)
    out: list[Change] = []
    for commit in walker:
        zone = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
        day = dt.datetime.fromtimestamp(commit.commit_time, zone).date().isoformat()
        if hide is None and since_day and day < since_day:
            return tuple(out), since_day, False
        if len(out) >= max_commits:
            return None if hide is not None else (tuple(out), out[-1].day, True)
        if len(commit.parent_ids) > 1:
            continue
        out.append(_change(repo, commit, day))
    return tuple(out), "", False


def _change(repo: Any, commit: Any, day: str) -> Change:
    import pygit2

    try:
        parent = commit.parents[0].tree if commit.parent_ids else None
    except (KeyError, pygit2.GitError):
        parent = None  # a shallow clone's boundary: its parents are not there
    diff = (
        commit.tree.diff_to_tree(swap=True) if parent is None else parent.diff_to_tree(commit.tree)
    )
    status = pygit2.enums.DeltaStatus
    kinds = {d.status for d in diff.deltas}
    moves: list[tuple[str, str]] = []
    if parent is not None and status.ADDED in kinds and status.DELETED in kinds:
        diff.find_similar(flags=pygit2.enums.DiffFind.FIND_RENAMES)  # git's 50 % similarity
        moves = [
            (d.old_file.path, d.new_file.path) for d in diff.deltas if d.status == status.RENAMED
        ]
    paths = dict.fromkeys(p for d in diff.deltas for p in (d.old_file.path, d.new_file.path))
    return Change(str(commit.id), commit.commit_time, day, tuple(paths), tuple(moves))


_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


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
