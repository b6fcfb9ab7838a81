"""`brain sync [status | connect URL | follow | on | off]`: the command layer over brain.autosync.

With no action, one pass: write down, receive, send; `follow` is that pass taking a remote whose
history was rewritten. The engine (brain/autosync.py) does the work;
this module picks the part to run and returns frozen results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from brain import autosync
from brain import gitsync as engine
from brain.errors import UsageError
from brain.gitsync import SyncResult

ACTIONS = ("status", "connect", "follow", "on", "off")


@dataclass(frozen=True)
class SyncStatus:
    vault: str
    sync: str  # on | off
    why: str | None  # why it is off
    remote: str | None  # the remote's name, None when not connected
    url: str | None
    branch: str | None  # None: no branch checked out (a detached HEAD)
    changes: int  # files changed here and not written down yet
    ahead: int  # commits written down and not sent yet (team proposals made offline too)
    behind: int  # commits on the remote not received yet, as of the last fetch
    fetched_at: str | None  # the last fetch that worked (brain.when.at), None: none known
    retry_at: str | None  # background passes wait until then
    last_summary: str | None  # the last pass, in one line
    last_at: str | None


def sync(
    vault: Path, *, mode: str = "full", background: bool = False, follow: bool = False
) -> SyncResult:
    """One pass; `background` is the detached pass a hook started (it never waits for the lock,
    respects the offline back-off, and embeds what it received); `follow` takes a remote whose
    history was rewritten, keeping only this machine's unsent changes on top."""
    return engine.run(vault, mode, background=background, follow=follow)


def connect(vault: Path, url: str) -> SyncResult:
    return engine.connect(vault, url)


def status(vault: Path) -> SyncStatus:
    """Where sync stands for `vault`, from what is on disk (no network)."""
    from brain import gitutil

    gd = engine.git_dir(vault)
    conf = engine.read_config(vault)
    on, why = engine.enabled(conf)
    head = gitutil.run(vault, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    branch = head.stdout.decode("utf-8", "replace").strip() if head.returncode == 0 else ""
    name, url, upstream = (engine.link(conf, branch) if branch else None) or ("", "", "")
    porcelain = gitutil.run(vault, "status", "--porcelain", "-z", "--no-renames", "-uall")
    changes = sum(1 for entry in porcelain.stdout.split(b"\0") if entry)
    ahead = behind = 0
    ours = engine.rev(vault, "HEAD")
    theirs = engine.rev(vault, f"refs/remotes/{name}/{upstream}") if name else None
    if ours and theirs and engine.related(vault, ours, theirs):
        ahead, behind = engine.counts(vault, ours, theirs)
    elif ours and name:
        ahead = _all(vault, ours)  # the remote has no such branch yet: everything waits
    ahead += len(engine.unsent_proposals(vault))  # team proposals made offline: sent next pass
    worked = autosync.fetched(vault, gd)
    fetched = autosync.iso(worked) if worked is not None else ""
    state = autosync.read_state(vault)
    until = autosync.moment(state.get("offline_until")) or 0.0
    return SyncStatus(
        str(vault),
        "on" if on else "off",
        why or None,
        name or None,
        engine.unsaid(url, url) or None,
        branch or None,
        changes,
        ahead,
        behind,
        fetched or None,
        autosync.iso(until) if until > time.time() else None,
        str(state.get("last") or "") or None,
        str(state.get("last_at") or "") or None,
    )


def _all(vault: Path, ours: str) -> int:
    from brain import gitutil

    proc = gitutil.run(vault, "rev-list", "--count", ours, check=False)
    return int(proc.stdout.strip() or 0) if proc.returncode == 0 else 0


def switch(vault: Path, on: bool) -> SyncStatus:
    """`brain sync on|off`: for this vault on this machine (the clone's own git config)."""
    engine.set_enabled(vault, on)
    return status(vault)


def check_action(action: str | None, url: str | None) -> None:
    """The words after `brain sync`, or a usage error that names the right ones."""
    if action is None:
        return
    if action not in ACTIONS:
        raise UsageError(
            f"unknown sync action {action!r}",
            "use status, connect URL, follow, on or off (or nothing)",
        )
    if action == "connect" and not url:
        raise UsageError("connect needs the remote's URL", "brain sync connect git@host:vault.git")
    if action != "connect" and url is not None:
        raise UsageError(f"`brain sync {action}` takes no URL", f"brain sync {action}")
