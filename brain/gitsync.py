"""One `brain sync` pass: one vault on every machine, over git, with nobody committing, pulling
or pushing.

A pass writes down (commits what changed in the vault, after brain's lint and secrets checks:
a file that carries a credential or a malformed bullet stays here, uncommitted, and is named),
receives (fetch, then this machine's unsent commits replayed onto the remote's, in git objects
only: the vault's Markdown merges line by line, see brain/merge.py) and sends (every commit about
to leave is scanned for credentials first; push; a push the remote rejects because another
machine sent first is received and tried again). Fetch, push and commit go through the git CLI
(brain/gitutil.py), so ssh keys, credential helpers and insteadOf rules work as they do for
`git`; the replay is made with pygit2, through gitutil.

The work tree belongs to the person: a pass never runs `rebase`, `reset --hard`, `checkout` or
`stash` over it. When the branch moves to what was received, each changed file is carried over
(brain.merge.carry): a file still as it was written down takes the new text; one changed since,
even while the pass runs, gets the received change merged into it, compared and then replaced,
never overwritten. A journal in the git dir names the move until every file is carried, so a pass
killed at any point is finished by the next one.

Passes run one at a time per vault (a lock file in the state dir), within a deadline, every git
call bounded in time and killed with everything it started when time is up. A remote that cannot
be reached leaves everything here and keeps background passes away for OFFLINE_BACKOFF seconds.
A remote whose history was rewritten (a leaked file scrubbed and force-pushed) is never repaired
by sending back what it dropped: the pass stops and says so until `brain sync follow`.

Hooks start passes in the background through brain/autosync.py, which stays small: the hook pays
for the spawn only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import re
import signal
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brain import config, files, gitutil
from brain.autosync import (
    MODES,
    OFF,
    OFFLINE_BACKOFF,
    env_off,
    fetch_time,
    iso,
    moment,
    read_state,
    vault_key,
    write_state,
)
from brain.errors import BrainError
from brain.settings import current
from brain.text import plural

NET_TIMEOUT = 60.0  # seconds for one fetch or push
LOCAL_TIMEOUT = 120.0  # one local git command (a commit runs the person's hooks)
BUDGET = {"foreground": 600.0, "background": 180.0}  # seconds for a whole pass
LOCK_WAIT = 60.0  # a pass (not a background receive) waits this long for another to end
PUSH_TRIES = 3  # push, rejected (another machine sent first), receive, push again
STALE_LOCK_S = 5.0  # a git lock file this old, left by an interrupted pass, is removed
ORPHAN_MAX_AGE = 3600.0  # an interrupted pass's git group is stopped only when this recent
MARKER = "brain-sync"  # in the git dir while a pass runs
MOVE = "brain-sync-move"  # in the git dir while a moved branch's files are carried over
BACKUP_REFS = "refs/brain/before-joining"
FOLLOW_REFS = "refs/brain/before-following"
SYNCED_REFS = "refs/brain/synced"  # per branch: the remote's head this machine last synced with
ZERO = "0" * 40
SSH = "ssh -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=10 -o ServerAliveCountMax=3"
NET_CONFIG = ("http.lowSpeedLimit=1000", "http.lowSpeedTime=30")
ATTRIBUTES_NOTE = "# brain sync: Markdown merges line by line, both machines' lines kept"
LOST_RACE = (b"[rejected]", b"failed to update ref", b"cannot lock ref", b"incorrect old value")
PROPOSAL_BRANCH = "brain/proposal-"  # a team proposal's branch on the remote (brain/team.py)
UNSENT = "refs/brain/proposals/"  # this clone's team proposals the remote has not received


@dataclass(frozen=True)
class Conflict:
    """Both machines changed the same lines of `path`: both versions kept from `line` on."""

    path: str
    line: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class SyncResult:
    vault: str
    mode: str  # full | receive | send
    outcome: str  # up-to-date | synced | waiting | off | not-connected | offline | busy
    remote: str | None  # the remote's URL, None when not connected
    branch: str | None  # None: not on a branch (or not connected)
    wrote: int  # files written down (committed) by this pass
    received: int  # commits received
    sent: int  # commits sent
    changed: tuple[str, ...]  # files the receive changed (reindexed)
    conflicts: tuple[Conflict, ...]
    waiting: tuple[str, ...]  # why changes stay here, one line each
    recovered: str | None  # what the pass finished of an interrupted one
    joined: str | None  # joined a remote vault of another history: the ref keeping ours, or "fresh"
    reason: str | None  # off, offline, busy: why
    retry_at: str | None  # offline: when background passes try again (brain.when.at)
    summary: str  # what happened, in one line
    ms: float


@dataclass
class _Pass:
    """One pass while it runs (mutable); frozen into a SyncResult at the end."""

    vault: Path
    mode: str
    gd: Path = Path()
    deadline: float = 0.0
    background: bool = False
    remote: str = ""
    branch: str = ""
    wrote: int = 0
    received: int = 0
    sent: int = 0
    changed: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    recovered: str = ""
    joined: str = ""
    reason: str = ""
    retry: str = ""
    follow: bool = False  # `brain sync follow`: take a remote whose history was rewritten
    stopped: bool = False  # the pass must not go on (said in waiting): nothing more is sent
    unwinding: bool = False  # an older brain's rebase is being unwound and is not done yet
    conf: dict[str, str] = field(default_factory=dict)  # the vault's git config (read_config)
    fetched: float | None = None  # when a fetch last worked, as this pass knows (`_fetch`)
    started: float = field(default_factory=time.perf_counter)

    def git(self, *args: str, most: float = LOCAL_TIMEOUT, check: bool = False, **kw: Any) -> Any:
        """A git command bounded by the pass's deadline, its process group noted in the marker
        so that the next pass can stop it if this one dies."""
        return gitutil.run(
            self.vault,
            *args,
            check=check,
            timeout=_left(self.deadline, most),
            started=self.note,
            **kw,
        )

    def note(self, group: int) -> None:
        with contextlib.suppress(OSError):
            (self.gd / MARKER).write_text(
                json.dumps({"pid": os.getpid(), "group": group}), encoding="utf-8"
            )

    def finish(self, outcome: str) -> SyncResult:
        """The result; outcome "done" becomes synced, waiting or up-to-date by what moved."""
        self.remote, self.reason = (
            unsaid(self.remote, self.remote),
            unsaid(self.reason, self.remote),
        )
        if outcome == "done":
            moved = self.wrote or self.received or self.sent or self.joined
            outcome = "synced" if moved else "waiting" if self.waiting else "up-to-date"
        result = SyncResult(
            str(self.vault),
            self.mode,
            outcome,
            self.remote or None,
            self.branch or None,
            self.wrote,
            self.received,
            self.sent,
            tuple(dict.fromkeys(self.changed)),
            tuple(self.conflicts),
            tuple(self.waiting),
            self.recovered or None,
            self.joined or None,
            self.reason or None,
            self.retry or None,
            "",
            round((time.perf_counter() - self.started) * 1000, 1),
        )
        return dataclasses.replace(result, summary=describe(result))


def describe(r: SyncResult) -> str:
    """The pass in one line: `up to date`, `wrote down 2 changes; sent 1`, `offline (...)`..."""
    reason = r.reason or ""
    if r.outcome == "off":
        back = "" if reason.startswith("BRAIN_SYNC") else "; `brain sync on` turns it back on"
        return f"off ({reason}){back}"
    if r.outcome == "busy":
        return f"busy: {reason}"
    parts = [r.recovered] if r.recovered else []
    if r.wrote:
        parts.append(f"wrote down {plural(r.wrote, 'change')}")
    if r.joined:
        kept = "" if r.joined == "fresh" else f", this machine's history kept as {r.joined}"
        parts.append(f"joined the vault at {r.remote}{kept}")
    if r.received:
        parts.append(f"received {r.received} ({plural(len(r.changed), 'file')})")
    if r.sent:
        parts.append(f"sent {r.sent}")
    if r.outcome == "not-connected":
        parts.append("not connected (`brain sync connect URL` says where the vault meets others)")
    if r.outcome == "offline":
        when = f"; background passes try again after {r.retry_at[11:16]}" if r.retry_at else ""
        parts.append(f"offline ({reason}): changes kept here{when}")
    parts += [
        f"both sides changed {c.path}: both kept at line {c.line}; keep one and run brain sync"
        for c in r.conflicts
    ]
    if r.waiting:
        more = f" (and {len(r.waiting) - 1} more)" if len(r.waiting) > 1 else ""
        parts.append(f"changes waiting: {r.waiting[0]}{more}")
    return "; ".join(parts) or "up to date"


# --- where things are ----------------------------------------------------------------------------


def git_dir(vault: Path) -> Path:
    proc = gitutil.run(vault, "rev-parse", "--absolute-git-dir", check=False)
    if proc.returncode != 0:
        raise BrainError(
            f"the vault {vault} is not a git repository, so it cannot sync",
            f"make it one: brain install --init {vault}",
        )
    return Path(proc.stdout.decode("utf-8", "replace").strip())


def read_config(vault: Path) -> dict[str, str]:
    """The git config as git sees it in the vault (every scope, the last value of each key), in
    one call. Section and key names are lower case, as git prints them."""
    proc = gitutil.run(vault, "config", "--list", "-z", check=False)
    conf = {}
    for entry in proc.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = entry.partition("\n")
        if key:
            conf[key] = value
    return conf


def enabled(conf: dict[str, str]) -> tuple[bool, str]:
    """Whether sync runs for the vault of `conf` on this machine, and if not, why."""
    if env_off():
        return False, "BRAIN_SYNC=off"
    if conf.get("brain.sync", "").strip().lower() in OFF:
        return False, "`brain sync off` for this vault on this machine"
    return True, ""


def set_enabled(vault: Path, on: bool) -> None:
    """`brain sync on|off`: a setting of this clone (its own git config), never synced."""
    git_dir(vault)
    if not on:
        gitutil.run(vault, "config", "--local", "brain.sync", "off")
        return
    proc = gitutil.run(vault, "config", "--local", "--unset-all", "brain.sync", check=False)
    if proc.returncode not in (0, 5):  # 5: it was not set
        gitutil.run(vault, "config", "--local", "--unset-all", "brain.sync")


# --- the background pass -------------------------------------------------------------------------


# --- one pass ------------------------------------------------------------------------------------


def run(
    vault: Path, mode: str = "full", *, background: bool = False, follow: bool = False
) -> SyncResult:
    """One pass over `vault`: write down, receive, send (or the part `mode` names). `follow`
    takes a remote whose history was rewritten (see `_rewritten`)."""
    if mode not in MODES:
        raise BrainError(f"unknown sync mode {mode!r}", f"use one of {', '.join(MODES)}")
    p = _Pass(vault, mode, background=background, follow=follow)
    p.gd = git_dir(vault)
    _own_repository(vault)
    p.conf = read_config(vault)
    on, why = enabled(p.conf)
    if not on:
        p.reason = why
        return p.finish("off")
    state = read_state(vault)
    until = moment(state.get("offline_until")) or 0.0
    if background and until > time.time():
        p.reason, p.retry = str(state.get("offline_reason", "")), iso(until)
        return p.finish("offline")
    p.deadline = time.monotonic() + BUDGET["background" if background else "foreground"]
    lock = config.state_dir() / "sync" / f"{vault_key(vault)}.lock"
    # A background receive that finds another pass running leaves the receiving to it; a send
    # waits its turn, or what the session wrote would stay here until the next one.
    wait = 0.0 if background and mode == "receive" else LOCK_WAIT
    with files.locked(lock, wait) as got, _terminated_cleanly():
        if not got:
            p.reason = "another sync of this vault is running; try again in a moment"
            return p.finish("busy")
        try:
            p.recovered = _recover(p)
            p.note(0)
            outcome = "done" if p.stopped else _pass(p)
        finally:  # a move still being carried keeps its journal: the next pass finishes it
            if p.unwinding:
                p.note(0)  # kept, naming no git to stop, so the next pass unwinds the rest
            else:
                with contextlib.suppress(OSError):
                    (p.gd / MARKER).unlink()
    now = time.time()
    if outcome == "offline":
        p.retry = iso(now + OFFLINE_BACKOFF)
    result = p.finish(outcome)
    doc = {**state, "last": result.summary, "last_at": iso(now)}
    if p.fetched:
        doc["fetched"] = p.fetched  # autosync.fetched: the last fetch that worked
    if outcome == "offline":
        doc.update(offline_until=now + OFFLINE_BACKOFF, offline_reason=p.reason)
    elif p.remote:
        doc.pop("offline_until", None)
        doc.pop("offline_reason", None)
    write_state(vault, doc)
    return result


def unsaid(text: str, url: str) -> str:
    """`text` with the password of the remote `url` masked, whole and each part of it between
    `@`s: one typed with a bare `@` (`https://me:pa@ss@host`, RFC 3986 wants `%40`) is no
    password the output's rules can tell, and git shows its tail as a user
    (`unable to access 'https://ss@host/'`)."""
    from brain.secrets import mask

    authority = url.partition("://")[2].partition("/")[0]
    _, colon, password = authority.rpartition("@")[0].partition(":")
    if not colon or not text:
        return text
    for secret in sorted({password, *password.split("@")}, key=len, reverse=True):
        if len(secret) >= 4:  # a shorter part would mask letters of every word
            text = text.replace(secret, mask(secret))
    return text


def _own_repository(vault: Path) -> None:
    """sync commits and pushes a whole repository: a vault that is a folder of a larger one (a
    project's `docs/brain`) would send the project's work in progress to the project's remote."""
    top = gitutil.toplevel(vault)
    if top is not None and files.resolved(top) != files.resolved(vault):
        from brain.text import printable

        raise BrainError(
            f"the vault {printable(str(vault))} is a folder inside the git repository "
            f"{printable(str(top))}: brain sync works only on a vault that is a repository of "
            "its own, so nothing was committed or sent",
            f"commit and push in {printable(str(top))} yourself, or make the vault its own "
            "repository (brain install --init NEW_FOLDER, then move the notes there)",
        )


@contextlib.contextmanager
def _terminated_cleanly() -> Iterator[None]:
    """SIGTERM and SIGHUP end the pass through its `finally` (git stopped, the rebase undone)
    rather than at once."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _left(deadline: float, most: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise gitutil.GitTimeout("the pass ran out of time", "run brain sync again")
    return min(most, left)


def _pass(p: _Pass) -> str:
    vault = p.vault
    if ensure_driver(vault, p.gd, p.conf):
        p.conf = read_config(vault)
    busy = _in_progress(vault, p.gd)
    if busy:
        p.waiting.append(busy)
        return "done"
    branch = _out(vault, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch is None:
        p.waiting.append("the vault is not on a branch (detached HEAD); `git switch BRANCH` there")
        return "done"
    p.branch = branch
    other = _other_branch(p)
    if other:
        p.waiting.append(other)
        return "done"
    try:
        if p.mode != "receive":
            with _core_files_locked(vault):
                _write_down(p)
        where = link(p.conf, branch)
        if where is None:
            return "not-connected"
        name, p.remote, upstream = where
        before = rev(vault, f"refs/remotes/{name}/{upstream}")
        failure = _fetch(p, name)
        if failure:
            p.reason = failure
            return "offline"
        upstream = _upstream(p, name, upstream)
        if _rewritten(p, name, upstream, before):
            return "done"
        with _core_files_locked(vault):
            _receive(p, name, upstream)
        if p.mode != "receive" and not p.stopped:
            failure = _send(p, name, upstream)
            if failure:
                p.reason = failure
                return "offline"
            _send_proposals(p, name)
        _mark_synced(p, name, upstream)
    except gitutil.GitTimeout as exc:  # a local command (a hook) that hung
        p.waiting.append(f"{exc.message}; nothing lost, run brain sync again")
    return "done"


def _other_branch(p: _Pass) -> str:
    """Why this pass leaves the vault alone because it is on a branch sync was not connected
    with ("" when it is the one). The branch is recorded (`brain.branch`, this clone's config)
    by connect, or by the first pass on a vault that has one branch or whose branch tracks the
    remote's; a person's own branch (`git switch -c experiment`) is never written down or sent,
    least of all into the remote's main."""
    recorded = p.conf.get("brain.branch", "")
    if recorded == p.branch:
        return ""
    if not recorded:
        heads = (_out(p.vault, "for-each-ref", "--format=%(refname)", "refs/heads/") or "").split()
        if f"branch.{p.branch}.remote" in p.conf or len(heads) <= 1:
            gitutil.run(p.vault, "config", "--local", "brain.branch", p.branch)
            p.conf["brain.branch"] = p.branch
            return ""
        return (
            f"the vault is on branch {p.branch}, and sync was never told which branch to sync: "
            "nothing written down or sent; run `brain sync connect URL` on the branch to sync"
        )
    return (
        f"the vault is on branch {p.branch}, and sync works on {recorded} (the branch it was "
        f"connected with): nothing written down or sent here; `git switch {recorded}` to sync"
    )


# --- locks and recovery --------------------------------------------------------------------------


@contextlib.contextmanager
def _core_files_locked(vault: Path) -> Iterator[None]:
    """The inbox's lock: `brain inbox approve` never edits a core file while sync rewrites it."""
    from brain.edits import locked

    with locked(vault):
        yield


def _recover(p: _Pass) -> str:
    """Finish what an interrupted pass left; "" when nothing. A killed pass leaves its marker
    (and perhaps a git still running, stopped here, and git's lock files); one killed while its
    files were carried leaves the move's journal; an older brain killed mid-rebase left a
    rebase, which is unwound here without touching what was typed since."""
    vault, gd = p.vault, p.gd
    marker = gd / MARKER
    done = []
    try:
        doc = json.loads(marker.read_text(encoding="utf-8") or "{}")
        age = time.time() - marker.stat().st_mtime
    except FileNotFoundError:
        doc, age = None, 0.0
    except (OSError, ValueError):
        doc, age = {}, 0.0
    if doc is not None:
        group = doc.get("group") if isinstance(doc, dict) else None
        if isinstance(group, int) and group > 0 and age < ORPHAN_MAX_AGE:
            _stop_orphan(group)
        _clear_leftovers(vault, gd)
        done.append("finished an interrupted sync")
    if (gd / MOVE).exists():
        moved = _finish_move(p)
        if moved and not done:
            done.append("finished an interrupted sync")
        if moved:
            done.append(moved)
    unwound = _unwind_rebase(p, brains=doc is not None)
    if unwound:
        done.append(unwound)
    if not p.unwinding:
        with contextlib.suppress(OSError):
            marker.unlink()
    if not done:
        return ""
    return done[0] + (f" ({'; '.join(done[1:])})" if len(done) > 1 else "")


def _stop_orphan(group: int) -> None:
    """Stop the git process group a killed pass left running (only when it is still git)."""
    if os.name != "posix":  # pragma: no cover - no process groups to stop
        return
    cmdline = Path(f"/proc/{group}/cmdline")
    with contextlib.suppress(OSError):
        if cmdline.parent.parent.is_dir() and not cmdline.read_bytes().startswith(b"git\0"):
            return  # the id now belongs to another program
    gitutil.stop_group(group)


def _clear_leftovers(vault: Path, gd: Path, ours_since: float = 0.0) -> None:
    """What a killed git leaves: lock files (a git still running would have touched them
    lately; those made since `ours_since` are this pass's own, whose git is known to be dead)
    and the files it handed a merge driver (`.merge_file_XXXXXX` at the top of the work tree),
    which would be written down next."""
    candidates = [gd / n for n in ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "packed-refs.lock")]
    candidates += list((gd / "refs").rglob("*.lock"))
    for path in candidates:
        for _ in range(int(STALE_LOCK_S * 10) + 1):
            try:
                made = path.stat().st_mtime
            except OSError:
                break
            if time.time() - made >= STALE_LOCK_S or (ours_since and made >= ours_since - 1):
                with contextlib.suppress(OSError):
                    path.unlink()
                break
            time.sleep(0.1)
    for name in _files(vault, "ls-files", "--others", "--", ".merge_file_*"):
        if "/" not in name:
            with contextlib.suppress(OSError):
                (vault / name).unlink()


def _in_progress(vault: Path, gd: Path) -> str:
    """A person's own git operation that sync must not step on, or ""."""
    for name, what, verb in (
        ("rebase-merge", "a rebase", "rebase"),
        ("rebase-apply", "a rebase", "rebase"),
        ("MERGE_HEAD", "a merge", "merge"),
        ("CHERRY_PICK_HEAD", "a cherry-pick", "cherry-pick"),
        ("REVERT_HEAD", "a revert", "revert"),
    ):
        if (gd / name).exists():
            return (
                f"{what} is in progress in the vault; finish it (git {verb} --continue) or "
                f"undo it (git {verb} --abort), then run brain sync"
            )
    proc = gitutil.run(vault, "ls-files", "--unmerged", "-z", check=False)
    unmerged = sorted({e.split(b"\t", 1)[-1].decode() for e in proc.stdout.split(b"\0") if e})
    if unmerged:
        return f"{unmerged[0]} has unresolved conflicts; resolve them (git add), then brain sync"
    return ""


# --- the merge driver and attributes -------------------------------------------------------------


def merge_config() -> list[str]:
    """`-c` settings naming brain's merge driver, for every git command that may merge."""
    from brain import merge

    return [f"merge.brain.driver={merge.driver_command()}", f"merge.brain.name={merge.DRIVER_NAME}"]


# brain's own temporary files (brain.files: `.NAME.` eight characters `.tmp`), which a write killed
# mid-way leaves in the vault: a pass committed one and sent it to every clone. Excluded in the
# clone's own `.git/info/exclude` (local, as the attributes), so git neither adds nor shows them.
TEMPORARY = ("# brain: its own temporary files, left by a stopped write", ".*.????????.tmp")


def ensure_driver(vault: Path, gd: Path | None = None, conf: dict[str, str] | None = None) -> bool:
    """Register `brain merge-driver` in the vault's git config and name it for the vault's
    Markdown in `.git/info/attributes` (local, never stashed away by a rebase), so that every
    merge git runs here, sync's or a person's, merges line by line. True when the config
    changed."""
    from brain import merge

    gd = gd or git_dir(vault)
    conf = read_config(vault) if conf is None else conf
    _add_lines(gd, "info/attributes", merge.ATTRIBUTES)
    _add_lines(gd, "info/exclude", TEMPORARY)
    want = merge.driver_command()
    if conf.get("merge.brain.driver") == want:
        return False
    gitutil.run(vault, "config", "--local", "merge.brain.driver", want)
    gitutil.run(vault, "config", "--local", "merge.brain.name", merge.DRIVER_NAME)
    return True


def forget_driver(vault: Path) -> None:
    """Undo `ensure_driver` (brain uninstall): git's own merge applies again. The committed
    `.gitattributes` lines stay (the vault is never touched); without the driver git ignores
    them."""
    from brain import merge

    for key in ("merge.brain.driver", "merge.brain.name"):
        gitutil.run(vault, "config", "--local", "--unset-all", key, check=False)
    gd = git_dir(vault)
    for name, ours in (
        ("attributes", {*merge.ATTRIBUTES, ATTRIBUTES_NOTE}),
        ("exclude", set(TEMPORARY)),
    ):
        path = gd / "info" / name
        with contextlib.suppress(OSError):
            lines = path.read_text(encoding="utf-8").splitlines()
            kept = [line for line in lines if line.strip() not in ours]
            if not any(line.strip() for line in kept):
                path.unlink()
            elif kept != lines:
                files.write_atomic(path, "\n".join(kept).strip("\n") + "\n")


def write_attributes(vault: Path) -> bool:
    """Add brain's merge lines to the vault's `.gitattributes` (committed, so every clone has
    them); True when the file changed."""
    from brain import merge

    return _add_lines(vault, ".gitattributes", merge.ATTRIBUTES)


def _add_lines(root: Path, rel: str, lines: tuple[str, ...]) -> bool:
    """Add `lines` missing from `root/rel`, as a change of what was read (brain.merge.carry): a
    line the person saved there meanwhile stays, and a link out of `root` is refused."""
    from brain import merge

    path = root / rel
    try:
        old = files.read_in(root, rel)
        text = (old or b"").decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BrainError(f"cannot read {path}: {exc}", f"fix or remove {path}") from exc
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if not missing:
        return False
    head = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text else "")
    new = head + "\n".join([ATTRIBUTES_NOTE, *missing]) + "\n"
    try:
        merge.carry(root, rel, old, new.encode("utf-8"))
    except OSError as exc:
        raise BrainError(f"cannot write {path}: {exc.strerror}", f"make {path} writable") from exc
    return True


# --- git state -----------------------------------------------------------------------------------


def _out(vault: Path, *args: str) -> str | None:
    proc = gitutil.run(vault, *args, check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


def link(conf: dict[str, str], branch: str) -> tuple[str, str, str] | None:
    """(remote name, its URL, the remote's branch) this branch syncs with: its upstream's,
    else origin, else the only remote; None when the vault is not connected."""
    urls = {
        key[7:-4]: value
        for key, value in conf.items()
        if key.startswith("remote.") and key.endswith(".url")
    }
    chosen = conf.get(f"branch.{branch}.remote")
    if chosen not in urls:
        chosen = "origin" if "origin" in urls else next(iter(urls)) if len(urls) == 1 else None
    if chosen is None:
        return None
    upstream = conf.get(f"branch.{branch}.merge", "").removeprefix("refs/heads/") or branch
    return chosen, urls[chosen], upstream


def rev(vault: Path, ref: str) -> str | None:
    return _out(vault, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


def related(vault: Path, ours: str, theirs: str) -> bool:
    """Whether two commits share history."""
    return ours == theirs or _out(vault, "merge-base", ours, theirs) is not None


def counts(vault: Path, ours: str, theirs: str) -> tuple[int, int]:
    """(commits only in ours, commits only in theirs)."""
    out = _out(vault, "rev-list", "--left-right", "--count", f"{ours}...{theirs}") or "0 0"
    ahead, behind = out.split()
    return int(ahead), int(behind)


def _files(vault: Path, command: str, *args: str) -> list[str]:
    out = _out(vault, command, "-z", *args) or ""
    return [p for p in out.split("\0") if p]


def host() -> str:
    import socket

    name = socket.gethostname().split(".")[0]
    return re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-") or "localhost"


def _commit_config(conf: dict[str, str]) -> list[str]:
    """Unsigned, and `brain <brain@HOST>` for what git does not know about the person."""
    settings = ["commit.gpgsign=false"]
    if "user.name" not in conf:
        settings.append("user.name=brain")
    if "user.email" not in conf:
        settings.append(f"user.email=brain@{host()}")
    return settings


def _net(conf: dict[str, str]) -> dict[str, Any]:
    """Never ask for a password (nobody may be there to type it) and give up on a dead host in
    seconds; a person's own ssh command (GIT_SSH_COMMAND, core.sshCommand) is left as it is."""
    env = {"GIT_TERMINAL_PROMPT": "0"}
    said = current().env
    own = said.get("GIT_SSH_COMMAND") or said.get("GIT_SSH")
    if not own and "core.sshcommand" not in conf:
        env["GIT_SSH_COMMAND"] = SSH
    return {"env": env, "config": NET_CONFIG, "most": NET_TIMEOUT}


# --- write down ----------------------------------------------------------------------------------


def _write_down(p: _Pass) -> None:
    """Commit what changed in the vault, except files that fail brain's checks (named in
    p.waiting, left uncommitted). The vault's git hooks run, as for any commit."""
    vault = p.vault
    p.git("add", "--all", "--", ".", check=True)  # inside the vault only, whatever git finds
    stat = _staged_stat(vault)
    if not stat:
        return
    from brain.lint import lint  # the secrets rules take ~0.1 s to compile: only now
    from brain.secrets import redact
    from brain.secrets_scan import scan
    from brain.text import printable

    why: dict[str, str] = {}
    for problem in lint(vault, staged=True).problems:
        why.setdefault(problem.path, f"{problem.path}:{problem.line or 0}: {problem.message}")
    scanned = scan(vault, staged=True)
    for f in scanned.findings:  # f.path acts on the file; what is said shows it masked
        shown = printable(redact(f.path))
        where = f"{shown}:{f.line}" if f.line is not None else f"{shown} (its name)"
        why[f.path] = (
            f"{where}: looks like a credential ({f.rule}: {f.masked}); it stays here until it "
            "is removed"
        )
    p.waiting += [  # what cannot be read is said, and goes as it is (an encrypted archive)
        f"{printable(u.path)} could not be scanned for credentials ({u.message}): written down "
        "as it is"
        for u in scanned.not_scanned
        if u.path not in why
    ]
    if why:
        gitutil.run(vault, "reset", "--quiet", "--", *sorted(why))
        p.waiting += [why[path] for path in sorted(why)]
        stat = [row for row in stat if row[2] not in why]
    if not stat:
        return
    proc = p.git("commit", "--quiet", "--message", _message(stat), config=_commit_config(p.conf))
    if proc.returncode != 0:
        gitutil.run(vault, "reset", "--quiet")
        p.waiting.append(f"the commit was refused: {gitutil.complaint(proc, first=True)}")
        return
    p.wrote += len(stat)


def _staged_stat(vault: Path) -> list[tuple[str, str, str]]:
    """(lines added, lines deleted, path) per staged file; `-` counts for binary files."""
    proc = gitutil.run(vault, "diff", "--cached", "--numstat", "--no-renames", "-z")
    rows = []
    for entry in os.fsdecode(proc.stdout).split("\0"):  # a name's own bytes, as the checks see
        parts = entry.split("\t", 2)
        if len(parts) == 3:
            rows.append((parts[0], parts[1], parts[2]))
    return rows


def _message(stat: list[tuple[str, str, str]]) -> str:
    """`brain sync on HOST: AI/MEMORY.md +2 -1, notes/x.md +5`, every file in the body."""

    from brain.text import printable

    def one(added: str, deleted: str, path: str) -> str:
        signs = [f"+{added}"] if added not in ("0", "-") else []
        if deleted not in ("0", "-"):
            signs.append(f"-{deleted}")
        return " ".join([printable(path), *signs])

    shown = ", ".join(one(*row) for row in stat[:3])
    more = f" and {len(stat) - 3} more" if len(stat) > 3 else ""
    body = "\n".join(one(*row) for row in stat)
    return f"brain sync on {host()}: {shown}{more}\n\n{body}\n"


# --- receive -------------------------------------------------------------------------------------


def _fetch(p: _Pass, remote: str) -> str:
    """Fetch `remote`; "" when it worked, else why not (the pass reports offline). The time of
    the last fetch that worked is kept (`_Pass.fetched`): any fetch that fails, the person's own
    too, empties FETCH_HEAD, which holds it."""
    before = fetch_time(p.gd)
    try:
        proc = p.git("fetch", "--quiet", "--no-tags", remote, **_net(p.conf))
    except gitutil.GitTimeout as exc:
        p.fetched = before or p.fetched
        return exc.message
    if proc.returncode == 0:
        p.fetched = fetch_time(p.gd) or p.fetched
        return ""
    p.fetched = before or p.fetched
    return gitutil.complaint(proc)


def _upstream(p: _Pass, remote: str, upstream: str) -> str:
    """The remote's branch to sync with. A branch that does not track one yet follows the
    remote's default branch when the remote has no branch of its name (a fresh vault on
    `master` joining a vault on `main`), and tracks it from then on."""
    vault = p.vault
    if f"branch.{p.branch}.merge" in p.conf:
        return upstream
    if rev(vault, f"refs/remotes/{remote}/{upstream}") is not None:
        return upstream
    with contextlib.suppress(gitutil.GitTimeout):
        p.git("remote", "set-head", remote, "--auto", **_net(p.conf))
    prefix = f"refs/remotes/{remote}/"
    head = _out(vault, "symbolic-ref", "--quiet", f"{prefix}HEAD") or ""
    names = (_out(vault, "for-each-ref", "--format=%(refname)", prefix) or "").split()
    branches = [n.removeprefix(prefix) for n in names if n != f"{prefix}HEAD"]
    chosen = head.removeprefix(prefix) if head.startswith(prefix) else ""
    if not chosen:
        chosen = next((b for b in ("main", "master") if b in branches), "")
        chosen = chosen or (branches[0] if len(branches) == 1 else "")
    if not chosen:
        return upstream  # an empty remote: the send creates the branch
    for key, value in (("remote", remote), ("merge", f"refs/heads/{chosen}")):
        gitutil.run(vault, "config", "--local", f"branch.{p.branch}.{key}", value)
        p.conf[f"branch.{p.branch}.{key}"] = value
    return chosen


def _receive(p: _Pass, remote: str, upstream: str) -> None:
    """Replay what is written down here onto the remote's branch (or join the remote's vault),
    in git objects, then move the branch and carry the files over; the lines both sides changed
    are reported, the index follows."""
    vault = p.vault
    theirs = rev(vault, f"refs/remotes/{remote}/{upstream}")
    if theirs is None:
        return  # the remote has no such branch yet: the send creates it
    ours = rev(vault, "HEAD")
    if ours == theirs or _hostile(p, ours, theirs):
        return
    if ours is None or not related(vault, ours, theirs):
        if p.mode == "receive":
            p.waiting.append(f"{p.remote} holds a vault with another history; brain sync joins it")
            return
        _join(p, theirs)
        _reindex(p)
        return
    behind = counts(vault, ours, theirs)[1]
    if behind == 0:
        return
    mine = _out(vault, "rev-list", "--reverse", "--no-merges", ours, "--not", theirs) or ""
    replayed = _replay(p, mine.split(), theirs)
    if replayed is None:
        p.stopped = True
        return
    new, clashes = replayed
    if not _move(p, ours, new, "received"):
        return
    p.received += behind
    p.changed += _files(vault, "diff", "--name-only", "--no-renames", ours, new)
    p.conflicts += _located(vault, clashes)
    _reindex(p)


def _rewritten(p: _Pass, remote: str, upstream: str, before: str | None) -> bool:
    """Whether the remote's branch was rewritten (a leaked file scrubbed, then force-pushed)
    while this branch still holds commits it dropped: replaying or pushing them would put back
    what the person removed. The pass stops and says so, every pass, until `brain sync follow`
    (which keeps only this machine's unsent work). A machine where the person rewrote the branch
    themselves holds none of them and goes on."""
    vault = p.vault
    theirs = rev(vault, f"refs/remotes/{remote}/{upstream}")
    known = rev(vault, f"{SYNCED_REFS}/{p.branch}") or before
    if theirs is None or known is None or known == theirs or _ancestor(vault, known, theirs):
        return False
    mine = int(_out(vault, "rev-list", "--count", "HEAD", "--not", theirs) or 0)
    new = int(_out(vault, "rev-list", "--count", "HEAD", "--not", theirs, known) or 0)
    if mine == new:  # none of the dropped commits is here
        return False
    if p.follow:
        _follow(p, known, theirs)
        return p.stopped
    gitutil.run(vault, "update-ref", f"{SYNCED_REFS}/{p.branch}", known)  # the stop holds
    p.waiting.append(
        f"the history of {p.remote} ({upstream}) was rewritten: it no longer holds "
        f"{plural(mine - new, 'commit')} this machine has; nothing received or sent, so "
        "nothing it dropped goes back. If that was meant (a leaked file scrubbed), run "
        "`brain sync follow`: this machine takes the new history and keeps only its own unsent "
        "changes on top"
    )
    p.stopped = True
    return True


def _follow(p: _Pass, known: str, theirs: str) -> None:
    """Take the remote's rewritten history: this machine's commits that were never sent (not in
    what it last synced with) are replayed on top of it; the old branch is kept under
    refs/brain/before-following/, and the files move as in a receive."""
    vault = p.vault
    ours = rev(vault, "HEAD")
    if ours is None or _hostile(p, ours, theirs):
        return
    mine = _out(vault, "rev-list", "--reverse", "--no-merges", ours, "--not", known, theirs) or ""
    replayed = _replay(p, mine.split(), theirs)
    if replayed is None:
        p.stopped = True
        return
    new, clashes = replayed
    kept = f"{FOLLOW_REFS}/{time.strftime('%Y%m%d-%H%M%S')}"
    gitutil.run(vault, "update-ref", kept, ours)
    if not _move(p, ours, new, "followed the remote's rewritten history"):
        return
    p.recovered = (
        f"followed the rewritten history of {p.remote}, this machine's old one kept as {kept}"
    )
    p.changed += _files(vault, "diff", "--name-only", "--no-renames", ours, new)
    p.conflicts += _located(vault, clashes)
    _reindex(p)


def _mark_synced(p: _Pass, remote: str, upstream: str) -> None:
    """Remember the remote head this pass ended in step with (see `_rewritten`)."""
    if p.stopped:
        return
    theirs = rev(p.vault, f"refs/remotes/{remote}/{upstream}")
    ours = rev(p.vault, "HEAD")
    if theirs and ours and (ours == theirs or _ancestor(p.vault, theirs, ours)):
        gitutil.run(p.vault, "update-ref", f"{SYNCED_REFS}/{p.branch}", theirs, check=False)


def _ancestor(vault: Path, older: str, newer: str) -> bool:
    proc = gitutil.run(vault, "merge-base", "--is-ancestor", older, newer, check=False)
    return proc.returncode == 0


# --- the replay: this machine's commits on top of the remote's, in git objects --------------------

Entry = tuple[Any, int]  # (object id, file mode) of a path in a tree


@dataclass(frozen=True)
class _Clash:
    path: str
    clash: Any  # brain.merge.Clash


def _aside(idx: Any, path: str, also: Collection[str] = ()) -> str:
    """`path`, or where to put it when the index holds a folder of its name, or a file named as
    one of its folders: that name with ` (from HOST)` before its extension (` (from HOST 2)`,
    ... when that is taken in the index or in `also`: a second clash, or the other machine's
    own file of that name, was overwritten). pygit2 adds such an entry beside the others and
    write_tree leaves it out without a word: a note edited here that the other machine made a
    folder was dropped from the replay, then deleted."""
    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        name = "/".join(parts[:i])
        if (i < len(parts) and name in idx) or (
            i == len(parts) and any(e.path.startswith(f"{name}/") for e in idx)
        ):
            for n in itertools.count(1):
                aside = "/".join([*parts[: i - 1], _tagged(parts[i - 1], n), *parts[i:]])
                if _free(idx, aside, also):
                    return aside
    return path


def _tagged(name: str, n: int) -> str:
    """`name` kept aside: ` (from HOST)` before its extension, ` (from HOST n)` past the first."""
    stem, dot, ext = name.rpartition(".")
    tag = f"from {host()}" if n == 1 else f"from {host()} {n}"
    # no extension, or only a leading dot (`.plan`: a hidden file stays hidden): the tag goes last
    return f"{stem} ({tag}){dot}{ext}" if stem else f"{name} ({tag})"


def _free(idx: Any, path: str, also: Collection[str]) -> bool:
    """Whether `path` can be added to the index without replacing or hiding anything: no entry
    (in `idx` or `also`) of its name, under it, or named as one of its folders."""
    parts = path.split("/")
    folders = ["/".join(parts[:i]) for i in range(1, len(parts))]
    for names in (idx, also):
        if path in names or any(f in names for f in folders):
            return False
    under = f"{path}/"
    return not any(e.path.startswith(under) for e in idx) and not any(
        a.startswith(under) for a in also
    )


def _aside_line(path: str, aside: str, *, link: bool = False) -> str:
    from brain.text import printable

    if link:  # `_make_way`: a link to the other kind (or a loop) stood where the received goes
        return (
            f"{printable(path)} is a link here where the other machine has a file or folder: "
            f"the link is kept as {printable(aside)}"
        )
    return (
        f"{printable(path)} is a file on one machine and a folder on the other: this machine's "
        f"is kept as {printable(aside)}"
    )


def _replay(p: _Pass, commits: list[str], onto: str) -> tuple[str, list[_Clash]] | None:
    """`commits` (oldest first) made again on top of `onto`, as `git rebase` would but without
    a work tree: each commit's change applied to the tip, a file both sides changed merged
    line by line (brain.merge) where the vault's attributes say `merge=brain`, else only when
    git merges it cleanly. A commit left with nothing to change is dropped. None (said in
    p.waiting) when a file cannot be merged: nothing has moved."""
    repo = gitutil.open_git(p.gd)
    tip = gitutil.commit_of(repo, onto)
    clashes: list[_Clash] = []
    committer = _signature(p.conf, "COMMITTER")
    # A path kept aside stays where it was put for the later commits that change it again (not
    # a new name each); a name this machine's own files hold is never picked.
    moved: dict[str, str] = {}
    ours = (
        {e[0] for e in gitutil.tree_blobs(gitutil.commit_of(repo, commits[-1]).tree)}
        if commits
        else set()
    )
    for sha in commits:
        commit = gitutil.commit_of(repo, sha)
        idx = gitutil.new_index()
        idx.read_tree(tip.tree)
        parent = commit.parents[0].tree if commit.parents else None
        for path, before, after in _changes(parent, commit.tree):
            where = moved.get(path, path)
            now = (idx[where].id, int(idx[where].mode)) if where in idx else None
            if now == after:
                continue
            take: Entry | None = after
            if now != before:
                merged = _merge_path(p, repo, path, before, now, after)
                if merged is None:
                    return None
                take, found = merged
                clashes += [_Clash(path, c) for c in found]
            if take is None:
                idx.remove(where)
            else:
                aside = where if where != path else _aside(idx, path, ours - {path})
                if aside != path:
                    moved[path] = aside
                    p.waiting.append(_aside_line(path, aside))
                idx.add(gitutil.index_entry(aside, take[0], take[1]))
        tree = idx.write_tree(repo)
        if tree == tip.tree_id:
            continue  # the remote has this change already
        made = repo.create_commit(None, commit.author, committer, commit.message, tree, [tip.id])
        tip = gitutil.commit_of(repo, made)
    return str(tip.id), clashes


def _changes(old: Any, new: Any) -> Iterator[tuple[str, Entry | None, Entry | None]]:
    """(path, its entry in `old`, in `new`) for each path that differs (None: absent)."""
    diff = new.diff_to_tree(swap=True) if old is None else old.diff_to_tree(new)
    for delta in diff.deltas:
        before = None if delta.status_char() == "A" else (delta.old_file.id, delta.old_file.mode)
        after = None if delta.status_char() == "D" else (delta.new_file.id, delta.new_file.mode)
        yield delta.new_file.path if after else delta.old_file.path, before, after


_REGULAR = (0o100644, 0o100755)


def _merge_path(
    p: _Pass, repo: Any, path: str, base: Entry | None, ours: Entry | None, theirs: Entry | None
) -> tuple[Entry | None, tuple[Any, ...]] | None:
    """One path both sides changed: (its merged entry, the clashes), or None (said in
    p.waiting) when it cannot be merged. A side that deleted it loses to one that changed it:
    nothing is lost."""
    from brain import merge

    if ours is None or theirs is None:
        return (ours or theirs), ()
    if ours[1] not in _REGULAR or theirs[1] not in _REGULAR:
        _unmerged(p, path)
        return None
    data = [repo[e[0]].read_raw() if e else b"" for e in (base, ours, theirs)]
    how = _merge_attribute(p.vault, path)
    try:
        if how == "brain":
            result = merge.merge(*data)
            return (repo.create_blob(result.data), theirs[1]), result.clashes
        driver = p.conf.get(f"merge.{how}.driver")
        if how in ("unset", "binary"):
            clean = None
        elif driver:
            clean = merge.by_driver(driver, *data, path=path, cwd=p.vault, timeout=LOCAL_TIMEOUT)
        else:
            clean = merge.clean(*data, union=how == "union")
    except ValueError:
        clean = None
    if clean is None:
        _unmerged(p, path)
        return None
    return (repo.create_blob(clean), theirs[1]), ()


def _unmerged(p: _Pass, path: str) -> None:
    from brain.text import printable

    p.waiting.append(
        f"both sides changed {printable(path)}: not merged, nothing lost; merge it by hand "
        f"(git -C {printable(str(p.vault))} pull --rebase)"
    )


def _merge_attribute(vault: Path, path: str) -> str:
    """The `merge` attribute the vault's attributes give `path`, as git would merge it: `brain`
    (line by line), `union`, `unset` (binary), a driver's name, or `unspecified`."""
    proc = gitutil.run(vault, "check-attr", "-z", "merge", "--", path, check=False)
    fields = proc.stdout.split(b"\0")
    return fields[2].decode("utf-8", "replace") if len(fields) >= 3 else "unspecified"


def _located(vault: Path, clashes: list[_Clash]) -> list[Conflict]:
    """Each clash at the line where its lines are now (a later commit, or a carry, may have
    moved them)."""
    found = []
    for item in clashes:
        kept = [*item.clash.ours, *item.clash.theirs]
        line = item.clash.line
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = (vault / item.path).read_text(encoding="utf-8").split("\n")
            line = next((text.index(k) + 1 for k in kept if k in text), line)
        found.append(Conflict(item.path, line, tuple(kept)))
    return found


# --- moving the branch, carrying the files over ------------------------------------------------


def _move(p: _Pass, old: str | None, new: str, why: str) -> bool:
    """Point the branch at `new` (only if it still is at `old`) and carry the work tree's files
    from `old`'s content to `new`'s, keeping every change made here since. A journal names the
    move until every file is carried: a pass killed halfway is finished by the next one."""
    vault, journal = p.vault, p.gd / MOVE
    ref = f"refs/heads/{p.branch}"
    if _hostile(p, old, new):
        return False
    files.write_atomic(journal, json.dumps({"ref": ref, "old": old, "new": new}) + "\n")
    proc = gitutil.run(
        vault, "update-ref", "-m", f"brain sync: {why}", ref, new, old or ZERO, check=False
    )
    if proc.returncode != 0:
        with contextlib.suppress(OSError):
            journal.unlink()
        p.waiting.append(
            f"the branch {p.branch} moved while brain synced (a commit made meanwhile?): nothing "
            "lost, run brain sync again"
        )
        p.stopped = True
        return False
    if not _carry(p, old, new):
        return False
    with contextlib.suppress(OSError):
        journal.unlink()
    return True


# A path component git refuses in a work tree (read-cache.c verify_path, path.c is_ntfs_dotgit and
# is_hfs_dotgit in git's source): "", "." and "..", and ".git" in any case or in a spelling NTFS
# reads as it (trailing dots or spaces, the 8.3 name git~1, a stream `.git::$INDEX_ALLOCATION`,
# a backslash as a folder's end: core.protectNTFS, on by default everywhere since git 2.24.1);
# on macOS also with the characters HFS+ ignores (core.protectHFS, on by default there only).
_HFS_IGNORED = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)


def _refused_component(name: str) -> bool:
    import sys

    if name in ("", ".", ".."):
        return True
    for part in name.split("\\"):
        folded = part.rstrip(" .").lower()
        if folded in (".git", "git~1") or folded.startswith(".git:"):
            return True
    return sys.platform == "darwin" and name.translate(_HFS_IGNORED).lower() == ".git"


def _hostile(p: _Pass, old: str | None, new: str) -> bool:
    """Whether a path that changes between the commits `old` and `new` is one git would never
    check out (said in p.waiting, the pass stopped). A remote can hold one (`git mktree` takes
    any name and a push is not checked by default): carried over, `.git/hooks/x` would be a hook
    the next write-down runs, `../x` a file outside the vault."""
    from brain.text import printable

    repo = gitutil.open_git(p.gd)
    before = gitutil.commit_of(repo, old).tree if old else None
    for path, _, _ in _changes(before, gitutil.commit_of(repo, new).tree):
        if any(_refused_component(part) for part in path.split("/")):
            p.waiting.append(
                f"{p.remote} holds {printable(path)}, a path git itself refuses to check out (it "
                "would write into .git or outside the vault): nothing received. Take the commit "
                "that added it out of the remote's history, then run brain sync"
            )
            p.stopped = True
            return True
    return False


def _finish_move(p: _Pass) -> str:
    """Finish the move an interrupted pass journaled; what was done, "" when nothing was owed."""
    journal = p.gd / MOVE
    try:
        doc = json.loads(journal.read_text(encoding="utf-8"))
        ref, old, new = str(doc["ref"]), doc["old"], str(doc["new"])
    except (OSError, ValueError, KeyError, TypeError):
        with contextlib.suppress(OSError):
            journal.unlink()
        return ""
    at = rev(p.vault, ref)
    if at == old or at is None:  # killed before the branch moved: nothing to finish
        with contextlib.suppress(OSError):
            journal.unlink()
        return ""
    if at != new and not _ancestor(p.vault, new, at):
        with contextlib.suppress(OSError):
            journal.unlink()
        p.waiting.append(
            f"an interrupted sync had moved {ref.removeprefix('refs/heads/')} and the branch has "
            "moved again since: check `git status` for files still as they were before"
        )
        return ""
    if not _carry(p, old, new):
        return ""
    with contextlib.suppress(OSError):
        journal.unlink()
    return "its received files carried over"


def _carry(p: _Pass, old: str | None, new: str, *, index: bool = True) -> bool:
    """Carry each file that differs between the commits `old` and `new` into the work tree
    (brain.merge.carry), then (with `index`) point the index at `new` for them. False (said in
    p.waiting, the journal kept for the next pass) when a file could not be carried."""
    from brain import merge

    repo = gitutil.open_git(p.gd)
    before = gitutil.commit_of(repo, old).tree if old else None
    after = gitutil.commit_of(repo, new).tree
    done: list[tuple[str, Entry | None]] = []
    # deletions first: a folder that became a file (or the reverse) is out of the way before
    # the new one takes its name (in path order, notes/x.md came before notes/x.md/y.md went)
    for path, a, b in sorted(_changes(before, after), key=lambda change: change[2] is not None):
        if (a and a[1] not in _REGULAR) or (b and b[1] not in _REGULAR):
            if not _carry_link(p, repo, path, a, b):
                continue
            done.append((path, b))
            continue
        base = repo[a[0]].read_raw() if a else None
        data = repo[b[0]].read_raw() if b else None
        try:
            blocker = _in_the_way(p.vault, path)
            if blocker is not None and b is None:
                done.append((path, b))  # gone here already: a folder or a file holds its name
                continue
            if blocker is not None:
                _make_way(p, blocker, (before, after))
            carried = merge.carry(
                p.vault, path, base, data, mode=0o755 if b and b[1] == 0o100755 else None
            )
        except BrainError as exc:
            p.waiting.append(f"{exc.message}; the next brain sync finishes it")
            p.stopped = True
            return False
        except OSError as exc:
            p.waiting.append(
                f"cannot write {path}: {exc.strerror}; the next brain sync finishes it"
            )
            p.stopped = True
            return False
        if carried.how == "kept" and b is not None:
            p.waiting.append(
                f"{path} changed here and on the other machine and cannot be merged: this "
                f"machine's kept, the other's is in commit {new[:10]}"
            )
        p.conflicts += _located(p.vault, [_Clash(path, c) for c in carried.clashes])
        done.append((path, b))
        if b is None and carried.how == "written":
            _prune(p.vault, path)
    if index:
        _index_follows(repo, done)
    return True


def _in_the_way(vault: Path, path: str) -> str | None:
    """What in the work tree holds `path`'s place as the other kind: a folder of its name, or a
    file named as one of its folders. Made here since the last write-down (a person turned the
    note into a folder), or a change here kept from a deletion there: no carry could ever write
    `path`, and every pass would stop on it. A link leading to the other kind (or in a loop) is
    in the way itself, as a folder is: nothing could be written through it, and the pass said
    `Is a directory` on every pass. None when nothing is, or a link leads to the kind the path
    needs or to nothing: brain.files decides (one out of the vault is refused, with what to do)."""
    import stat

    parts = path.split("/")
    for i in range(1, len(parts) + 1):
        rel = "/".join(parts[:i])
        try:
            mode = (vault / rel).lstat().st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            try:
                mode = (vault / rel).stat().st_mode
            except FileNotFoundError:
                return None
            except OSError:  # a loop: nothing could ever be written through it
                return rel
        if stat.S_ISDIR(mode) == (i == len(parts)):
            return rel
    return None


def _make_way(p: _Pass, blocker: str, trees: tuple[Any, ...]) -> None:
    """Move this machine's `blocker` (see `_in_the_way`) to the first free `NAME (from HOST)`
    beside it, free in the work tree and in `trees`, as a clash in a replay is kept, and say so;
    the next write-down sends it. A rename: what was typed into it is all there."""
    from brain import files

    if _dropped_empty(p.vault / blocker):
        return
    # git's own ignore rules: under a new name their files would no longer be ignored, and the
    # next write-down would send what the person kept out of the vault's history
    ignored = _out(
        p.vault, "ls-files", "--others", "--ignored", "--exclude-standard", "--", blocker
    )
    if ignored != "":  # None: git could not tell, and nothing moves
        from brain.text import printable

        raise BrainError(
            f"{printable(blocker)} holds files git ignores here, where a received file goes: brain "
            "does not rename it (under a new name they would be sent); move it out of the vault",
            "move it, then run brain sync",
        )
    head, _, name = blocker.rpartition("/")
    link = (p.vault / blocker).is_symlink()
    for n in range(1, 1000):
        aside = "/".join(filter(None, (head, _tagged(name, n))))
        if any(t is not None and aside in t for t in trees) or os.path.lexists(p.vault / aside):
            continue
        if files.rename_new(p.vault, blocker, aside.rpartition("/")[2]):
            p.waiting.append(_aside_line(blocker, aside, link=link))
            return
    raise OSError(17, "no free name to keep it aside", blocker)


def _dropped_empty(folder: Path) -> bool:
    """Remove `folder` when it holds no file, only folders (git keeps none, a person's editor
    may leave them); rmdir refuses one that a file reached meanwhile, which then stays."""
    if not folder.is_dir() or folder.is_symlink():
        return False
    for where, _, names in os.walk(folder, topdown=False):
        try:
            if names:
                return False
            Path(where).rmdir()
        except OSError:
            return False
    return True


def _unwind_rebase(p: _Pass, *, brains: bool) -> str:
    """Unwind a rebase an older brain's pass left when it was killed (`brains`: its marker was
    there), or the husk git leaves when it dies while putting the autostash back (`rebase-merge/`
    holding nothing but `autostash`, which neither `--continue` nor `--abort` can end). Never
    `rebase --abort`: that resets the work tree over what was typed since. The branch is taken
    back where it was (the files carried, what was typed kept), the autostash is stored in
    `git stash list` first, then applied line by line and dropped. A person's own rebase is left
    alone. What was done, "" when nothing."""
    import shutil

    vault, state = p.vault, p.gd / "rebase-merge"
    if not state.is_dir():
        return ""

    def field(name: str) -> str:
        try:
            return (state / name).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return ""

    husk = {f.name for f in state.iterdir()} <= {"autostash"}
    if not husk and not brains:
        return ""
    head, auto = field("head-name"), field("autostash")
    if auto and rev(vault, auto) is None:
        auto = ""
    if auto and _out(vault, "rev-parse", "--verify", "--quiet", "refs/stash") != auto:
        gitutil.run(vault, "stash", "store", "-m", "brain sync: put aside by a rebase", auto)
    p.unwinding = True  # until it is done, the marker stays: the next pass goes on with it
    if head.startswith("refs/heads/"):
        target = rev(vault, head) or field("orig-head")
        here = rev(vault, "HEAD")
        if here and target and here != target and not _carry(p, here, target, index=False):
            return ""
        gitutil.run(vault, "symbolic-ref", "HEAD", head)
        gitutil.run(vault, "reset", "--quiet")  # the index only: HEAD's entries, no conflicts
    if auto:
        base = _out(vault, "rev-parse", "--verify", "--quiet", f"{auto}^1")
        if base is None or not _carry(p, base, auto, index=False):
            return ""
    shutil.rmtree(state, ignore_errors=True)
    p.unwinding = False
    if auto and _out(vault, "rev-parse", "--verify", "--quiet", "refs/stash") == auto:
        gitutil.run(vault, "stash", "drop", "--quiet", check=False)
    return "its rebase unwound" + (", the changes it had put aside applied" if auto else "")


def _prune(vault: Path, path: str) -> None:
    """The folders a deleted file leaves empty go too, as git's checkout would remove them."""
    folder = (vault / path).parent
    while folder != vault and folder.is_relative_to(vault):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


_GITLINK = 0o160000  # a submodule's entry: a commit of another repository, no content here


def _carry_gitlink(p: _Pass, path: str, b: Entry | None) -> bool:
    """A submodule entry that came or went: its empty folder made or removed, as git's checkout
    does, and the index follows. Left out of the index, it was staged as deleted and sent by the
    next write-down: another machine's submodule was lost."""
    try:
        folder = files.confine(p.vault / path, p.vault)
        if b is None:
            with contextlib.suppress(OSError):
                folder.rmdir()  # a checked-out submodule's files are the person's
                _prune(p.vault, path)
        else:
            folder.mkdir(parents=True, exist_ok=True)
    except (BrainError, OSError) as exc:
        why = exc.message if isinstance(exc, BrainError) else exc.strerror or str(exc)
        p.waiting.append(f"{path} is a submodule whose folder cannot be made here ({why})")
        return False
    return True


def _link_text(repo: Any, entry: Entry | None) -> str | None:
    """Where the link `entry` points (None: no entry, or not a link)."""
    if entry is None or entry[1] != 0o120000:
        return None
    return str(repo[entry[0]].read_raw().decode("utf-8", "surrogateescape"))


def _carry_link(p: _Pass, repo: Any, path: str, a: Entry | None, b: Entry | None) -> bool:
    """A symbolic link (or a submodule) that changed: replaced only where it is still as it
    was; otherwise left, and said. True when the index is to follow."""
    target = p.vault / path
    if {a and a[1], b and b[1]} <= {None, _GITLINK}:
        return _carry_gitlink(p, path, b)
    try:
        now = str(target.readlink()) if target.is_symlink() else None
    except OSError:
        now = None
    was = _link_text(repo, a)
    if (now != was or (now is None and target.exists())) or (b and b[1] != 0o120000):
        p.waiting.append(f"{path} is a link or a submodule that changed: left as it is here")
        return False
    try:
        # through brain.files: a link in a folder the vault does not have yet gets the folder,
        # and a folder that is a link out of the vault is never written through
        files.relink(p.vault, path, _link_text(repo, b))
    except (BrainError, OSError) as exc:
        why = exc.message if isinstance(exc, BrainError) else exc.strerror or str(exc)
        p.waiting.append(f"{path} is a link that could not be made here ({why}): left as it is")
        return False
    return True


def _index_follows(repo: Any, done: list[tuple[str, Entry | None]]) -> None:
    """The index's entries for the carried files are the new commit's: `git status` then shows
    only what was changed here. A person's git holding the index now leaves it as it was; the
    next write-down stages the work tree anyway."""
    gitutil.point_index(repo, done)


def _reindex(p: _Pass) -> None:
    """The index follows the receive before the next find: incrementally, the changed files
    only. A background pass embeds them too (nobody waits on it)."""
    try:
        if p.background:
            from brain import semantic

            semantic.reindex(p.vault)
        else:
            from brain import index

            index.sync(p.vault)
    except BrainError as exc:
        p.waiting.append(f"received, but the index could not follow: {exc}")


def _join(p: _Pass, theirs: str) -> None:
    """Join a remote vault whose history is not ours (a fresh vault connecting to one that
    exists): the remote's history becomes ours, with this machine's files merged in, line by
    line, on top (the starter files as the common ancestor of the core files). This machine's
    previous history stays under refs/brain/, nothing is lost.

    The merged commit is made with pygit2 (no hooks run), so its content is checked here: a
    file that would carry a credential stops the join."""
    vault = p.vault
    repo = gitutil.open_git(vault)
    remote_commit = gitutil.commit_of(repo, theirs)
    unborn = repo.head_is_unborn
    dirty = bool(_out(vault, "status", "--porcelain", "-uall"))
    if unborn and dirty:
        p.waiting.append(
            f"this machine's files are not written down yet, so the vault at {p.remote} cannot "
            "be joined; fix what is named above and run brain sync"
        )
        return
    idx = gitutil.new_index()
    idx.read_tree(remote_commit.tree)
    merged: list[str] = []
    if not unborn and not _merge_into(p, repo, idx, gitutil.head_commit(repo).tree, merged):
        return
    new = theirs
    tree = idx.write_tree(repo)
    if tree != remote_commit.tree_id:
        sig = _signature(p.conf)
        more = f" and {len(merged) - 3} more" if len(merged) > 3 else ""
        message = f"brain sync on {host()}: joined {p.remote}, keeping {', '.join(merged[:3])}"
        new = str(repo.create_commit(None, sig, sig, f"{message}{more}\n", tree, [theirs]))
    old = None if unborn else str(repo.head.target)
    kept = "fresh"
    if old is not None:
        kept = f"{BACKUP_REFS}/{time.strftime('%Y%m%d-%H%M%S')}"
        gitutil.run(vault, "update-ref", kept, old)
    if not _move(p, old, new, f"joined {p.remote}"):
        return
    p.joined = kept
    p.received += int(_out(vault, "rev-list", "--count", theirs) or 0)
    p.changed += (
        _files(vault, "diff", "--name-only", "--no-renames", old, new)
        if old
        else _files(vault, "ls-tree", "-r", "--name-only", new)
    )


def _merge_into(p: _Pass, repo: Any, idx: Any, tree: Any, merged: list[str]) -> bool:
    """Add this machine's files (`tree`) to the remote's (`idx`), merging those both have;
    False when one would carry a credential (named in p.waiting)."""
    from brain import merge, secrets, shipped

    blobs = list(gitutil.tree_blobs(tree))
    ours = {path for path, _, _ in blobs}
    for path, oid, mode in blobs:
        entry = idx[path] if path in idx else None  # noqa: SIM401 - pygit2's Index has no get
        if entry is not None and entry.id == oid:
            continue
        data = repo[oid].read_raw()
        if entry is not None:
            name = path.removeprefix("AI/")
            starter = path.startswith("AI/") and name in shipped.STARTER_FILES
            base = shipped.starter_file(name).encode("utf-8") if starter else b""
            try:
                result = merge.merge(base, repo[entry.id].read_raw(), data)
            except ValueError:
                continue  # a binary file both have: the remote's stays, ours is in the ref
            data = result.data
            p.conflicts += [Conflict(path, c.line, (*c.ours, *c.theirs)) for c in result.clashes]
        found = secrets.scan_text(data.decode("utf-8", "replace"), path)
        if found:
            p.waiting.append(
                f"{path}:{found[0].line}: looks like a credential ({found[0].rule}: "
                f"{found[0].masked}); remove it from this machine's history before joining"
            )
            return False
        aside = _aside(idx, path, ours - {path})
        if aside != path:
            p.waiting.append(_aside_line(path, aside))
        idx.add(gitutil.index_entry(aside, repo.create_blob(data), mode))
        merged.append(aside)
    return True


def _signature(conf: dict[str, str], who: str = "AUTHOR") -> Any:
    """The person as git would name them (GIT_AUTHOR_* or GIT_COMMITTER_*, then user.*), else
    brain on this host."""

    def get(key: str, env: str, default: str) -> str:
        return current().env.get(env) or conf.get(key) or default

    name = get("user.name", f"GIT_{who}_NAME", "brain")
    return gitutil.signature(name, get("user.email", f"GIT_{who}_EMAIL", f"brain@{host()}"))


# --- send ----------------------------------------------------------------------------------------


def _send(p: _Pass, remote: str, upstream: str) -> str:
    """Push what is written down; "" when done (or nothing to send), else why not (offline)."""
    vault = p.vault
    last = ""
    for _ in range(PUSH_TRIES):
        ours = rev(vault, "HEAD")
        theirs = rev(vault, f"refs/remotes/{remote}/{upstream}")
        if ours is None or (theirs and not related(vault, ours, theirs)):
            return ""  # nothing written down, or not joined yet (the receive said why)
        ahead = (
            counts(vault, ours, theirs)[0]
            if theirs
            else int(_out(vault, "rev-list", "--count", ours) or 0)
        )
        if ahead == 0:
            return ""
        if _holds_credentials(p, ours, remote):
            return ""
        track = [] if f"branch.{p.branch}.remote" in p.conf else ["-u"]
        try:
            proc = p.git(  # the commit scanned, not HEAD: a commit made meanwhile waits
                "push",
                "--porcelain",
                "--quiet",
                *track,
                remote,
                f"{ours}:refs/heads/{upstream}",
                **_net(p.conf),
            )
        except gitutil.GitTimeout as exc:
            return exc.message
        if proc.returncode == 0:
            p.sent += ahead
            if track:
                p.conf = read_config(vault)
            return ""
        said = proc.stdout + proc.stderr
        last = gitutil.complaint(proc)
        if not any(sign in said for sign in LOST_RACE):
            if b"[remote rejected]" in said:
                p.waiting.append(f"the remote refused the push: {gitutil.complaint(proc)}")
                return ""
            return gitutil.complaint(proc)
        # Another machine sent first: receive what it sent, then send again.
        failure = _fetch(p, remote)
        if failure:
            return failure
        with _core_files_locked(vault):
            _receive(p, remote, upstream)
        if p.stopped:
            return ""
    p.waiting.append(  # git's last word: a lock a dead push left on the remote says so
        f"the remote kept changing or stayed locked while this machine sent ({last}); nothing "
        "lost, run brain sync again"
    )
    return ""


def _send_proposals(p: _Pass, remote: str) -> None:
    """Team proposals made while the remote could not be reached (brain/team.py) go with the
    pass that reaches it, counted among the commits sent."""
    if not unsent_proposals(p.vault):
        return
    sent, why = send_proposals(p.vault, remote, p.conf)
    p.sent += sent
    if why:
        p.waiting.append(f"team proposals wait here: {why}")


def unsent_proposals(vault: Path) -> list[str]:
    """This clone's team proposals the remote has not received: their refs under UNSENT."""
    out = _out(vault, "for-each-ref", "--format=%(refname)", UNSENT) or ""
    return [ref for ref in out.split() if ref.startswith(UNSENT)]


def send_proposals(
    vault: Path, remote: str, conf: dict[str, str], only: Sequence[str] = ()
) -> tuple[int, str]:
    """Push this clone's unsent team proposals (brain/team.py: those in `only`, or all) to
    `remote` in one push, after the
    credential scan; (how many the remote took, "" or why the rest wait). A branch the remote
    has already (another machine proposed the same fact) counts as sent."""
    from brain import secrets

    pids = list(only) or [ref.removeprefix(UNSENT) for ref in unsent_proposals(vault)]
    shas = {pid: sha for pid in pids if (sha := rev(vault, UNSENT + pid))}
    if not shas:
        return 0, ""
    theirs = (
        _out(vault, "for-each-ref", "--format=%(refname)", f"refs/remotes/{remote}/") or ""
    ).split()
    held = ""
    for pid, sha in list(shas.items()):
        scan = secrets.scan_commits(vault, sha, theirs)
        if scan.first_bad is not None:
            f = scan.findings[0]
            del shas[pid]
            held = (
                f"proposal {pid} is not sent: {f.path}:{f.line} looks like a credential "
                f"({f.rule}: {f.masked}); drop it (`brain inbox drop N`)"
            )
    if not shas:
        return 0, held
    specs = [f"{sha}:refs/heads/{PROPOSAL_BRANCH}{pid}" for pid, sha in shas.items()]
    try:
        net = _net(conf)
        proc = gitutil.run(
            vault,
            "push",
            "--porcelain",
            remote,
            *specs,
            check=False,
            env=net["env"],
            config=net["config"],
            timeout=net["most"],
        )
    except gitutil.GitTimeout as exc:
        return 0, exc.message
    said = proc.stdout.decode("utf-8", "replace")
    sent = 0
    for pid, sha in shas.items():
        line = next((x for x in said.split("\n") if f"refs/heads/{PROPOSAL_BRANCH}{pid}" in x), "")
        # `*` new, ` ` fast-forward, `=` up to date; `!` rejected: the remote holds this
        # proposal from another machine (the same id is the same fact)
        if line[:1] in ("*", " ", "=", "!") and "remote rejected" not in line:
            gitutil.run(vault, "update-ref", "-d", UNSENT + pid, sha, check=False)
            sent += line[:1] != "!"
    if proc.returncode != 0 and not any(
        x[:1] == "!" and "remote rejected" not in x for x in said.split("\n")
    ):
        return sent, gitutil.complaint(proc)
    return sent, held


def _holds_credentials(p: _Pass, ours: str, remote: str) -> bool:
    """Scan every commit about to be sent (those no branch of the remote holds): a commit made
    with `--no-verify`, or by another tool, is checked here as the write-down checks its own.
    One that holds a credential stops the send (said in p.waiting, with how to take it out)."""
    from brain import secrets
    from brain.text import printable

    theirs = _out(p.vault, "for-each-ref", "--format=%(objectname)", f"refs/remotes/{remote}/")
    scan = secrets.scan_commits(p.vault, ours, (theirs or "").split())
    p.waiting += [  # said once, by the pass that sends them
        f"{printable(u.path)} in commit {u.commit[:10]} could not be scanned for credentials "
        f"({u.why}): sent as it is"
        for u in scan.unscanned
        if scan.first_bad is None
    ]
    if scan.first_bad is None:
        return False
    p.waiting.append(f"nothing sent: {scan.hint}")
    p.stopped = True
    return True


# --- connect -------------------------------------------------------------------------------------


def connect(vault: Path, url: str) -> SyncResult:
    """Make `url` the remote (origin) this vault syncs with, then run a pass, which joins the
    vault already there, if any."""
    url = url.strip()
    if not url:
        raise BrainError("connect needs the remote's URL", "brain sync connect git@host:vault.git")
    gd = git_dir(vault)
    before = _out(vault, "remote", "get-url", "origin")
    if before is None:
        gitutil.run(vault, "remote", "add", "origin", url)
    elif before != url:
        gitutil.run(vault, "remote", "set-url", "origin", url)
    branch = _out(vault, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch and _out(vault, "config", "--get", f"branch.{branch}.remote") not in (None, "origin"):
        gitutil.run(vault, "config", "--local", f"branch.{branch}.remote", "origin")
    if branch:  # the branch sync works on from now on (see _other_branch)
        gitutil.run(vault, "config", "--local", "brain.branch", branch)
    ensure_driver(vault, gd)
    write_attributes(vault)
    was = f" (was {before})" if before and before != url else ""
    result = run(vault, "full")
    return dataclasses.replace(result, summary=f"connected to {url}{was}; {result.summary}")
