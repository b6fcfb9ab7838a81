"""Sync from the hooks' side: start a pass over the vault in the background and return at once.

The SessionStart pack hook starts a receive, a stop hook a write-down and send
(`background(vault, "send")`). This module is all a hook imports: a look at the vault's git config
file and at the back-off state, then the spawn of `python -P -m brain sync --background MODE`.
The pass itself (write down, receive, send) is brain/gitsync.py.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any

from brain import config

MODES = ("full", "receive", "send")
OFFLINE_BACKOFF = 600.0  # background passes leave an unreachable remote alone this long
OFF = config.OFF
LAST_TIME = 253_402_300_800  # 10000-01-01: datetime says no later time


def vault_key(vault: Path) -> str:
    return config.index_path(vault).stem


def state_path(vault: Path) -> Path:
    return config.state_dir() / "sync" / f"{vault_key(vault)}.json"


def log_path(vault: Path) -> Path:
    return config.state_dir() / "logs" / f"{vault_key(vault)}-sync.log"


def read_state(vault: Path) -> dict[str, Any]:
    """What the passes remember: the last one's line and time, the offline back-off."""
    from brain.files import read_json_dict

    return read_json_dict(state_path(vault))


def write_state(vault: Path, doc: dict[str, Any]) -> None:
    from brain.files import write_atomic

    with contextlib.suppress(OSError):
        # ASCII escapes: a path that is not UTF-8 (a surrogate) in a waiting line stays writable
        write_atomic(state_path(vault), json.dumps(doc) + "\n")


def fetch_time(gd: Path) -> float | None:
    """When a fetch last worked in the git dir `gd`: FETCH_HEAD's time while it holds what was
    fetched. git truncates FETCH_HEAD at every fetch and writes it only when the fetch works
    (2.39), so an empty one marks a fetch that failed, made at a time that says nothing."""
    try:
        st = (gd / "FETCH_HEAD").stat()
    except OSError:
        return None
    return st.st_mtime if st.st_size else None


def fetched(vault: Path, gd: Path) -> float | None:
    """The time of the last fetch here that worked (brain's or a person's): FETCH_HEAD's, else
    the last one brain kept (`keep_fetched`), which a failed fetch since did not change."""
    worked = fetch_time(gd)
    return worked if worked is not None else moment(read_state(vault).get("fetched"))


def keep_fetched(vault: Path, gd: Path, before: float | None) -> None:
    """After a fetch outside a sync pass (a team's listing, proposing): keep the time of the last
    fetch that worked, FETCH_HEAD's now when this one worked, else `before` (what it said before
    this one emptied it). A pass keeps it in its own state write (brain.gitsync.run)."""
    when = fetch_time(gd) or before
    if when is not None:
        write_state(vault, {**read_state(vault), "fetched": when})


def moment(value: object) -> float | None:
    """`value` as a time the state file keeps (seconds since the epoch), None when it is none:
    the file is brain's own, but a crash or an editor may leave anything there, and a NaN, a
    year past 9999 or `true` is no time to say (datetime raises, or says 1970)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 < value < LAST_TIME else None


def iso(ts: float) -> str:
    """Local ISO 8601 with its offset (JSON's `..._at`, brain.when)."""
    from brain.when import at_epoch

    return at_epoch(ts)


def own_git_dir(vault: Path) -> Path | None:
    """The vault's git dir (a linked worktree's own), found without running git: `.git`, or the
    folder a `.git` file names."""
    dot = vault / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (vault / text[7:].strip()).resolve()


def _config_file(vault: Path) -> Path | None:
    """The vault's git config file, found without running git (for the hooks' cheap check)."""
    folder = own_git_dir(vault)
    if folder is None:
        return None
    with contextlib.suppress(OSError):
        folder = (folder / (folder / "commondir").read_text(encoding="utf-8").strip()).resolve()
    return folder / "config"


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"(.*)")?\s*\]')
_SYNC_KEY = re.compile(r"^\s*sync\s*=\s*(\S+)", re.IGNORECASE)


def _config_facts(text: str) -> tuple[bool, bool]:
    """(a remote is configured, `brain.sync` is off), read from git config text without git:
    the hooks' pre-filter. The pass itself asks git."""
    remote = off = False
    section = ""
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.group(1).lower()
            remote = remote or (section == "remote" and m.group(2) is not None)
            continue
        k = _SYNC_KEY.match(line) if section == "brain" else None
        if k:
            off = k.group(1).strip('"').lower() in OFF
    return remote, off


def env_off() -> bool:
    from brain.settings import current

    return current().sync_off


def background(vault: Path, mode: str = "receive") -> bool:
    """Start a detached pass over `vault` and return at once; True when one was started.

    What hooks call: the SessionStart pack hook `background(vault, "receive")`, the stop hook
    `background(vault, "send")` (write down, receive, send). It costs a file read or two and the
    spawn: nothing starts when sync is off, the vault has no remote, or the remote was
    unreachable less than OFFLINE_BACKOFF seconds ago. The pass takes the lock itself: a second
    one started meanwhile exits at once.
    """
    if mode not in MODES:
        raise ValueError(f"unknown sync mode {mode!r}")
    if env_off():
        return False
    conf = _config_file(vault)
    try:
        text = conf.read_text(encoding="utf-8", errors="replace") if conf else ""
    except OSError:
        return False
    has_remote, off = _config_facts(text)
    if not has_remote or off:
        return False
    if (moment(read_state(vault).get("offline_until")) or 0.0) > time.time():
        return False
    return _spawn(vault, mode)


def _spawn(vault: Path, mode: str) -> bool:
    from brain.process import start_detached

    log = log_path(vault)
    argv = config.python_command("brain", "sync", "--background", mode, "--vault", str(vault))
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if log.stat().st_size > 256_000:
                log.unlink()
        with log.open("ab") as out:
            return start_detached(argv, stdout=out, stderr=out)
    except OSError:
        return False
