"""The once-a-day update notice: "brain dev-2026-10 is available; run `brain update`".

Only a person at a terminal sees it: `cli.main` calls `after_command` once a command has written
its output, and nothing happens for `--json`, a pipe, a hook, an agent, a local build (`dev`) or
`BRAIN_NO_UPDATE=1`. Once a day (a failed check waits a day like any other) it starts a detached
`python -m brain.notice` that asks the release server with a 3 s timeout, checks the signature,
and writes what it found to `update.json` in the state dir; the command never waits for it. The
notice is then printed on stderr on every run until `brain update`. Nothing is ever downloaded
beyond the small signed files that name the release.

This module is on every command's path: it imports only the standard library, `brain.release`
and `brain.config`; httpx is imported by the background check alone.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from brain import config, release
from brain.settings import current

DAY = 24 * 60 * 60
CHECK_TIMEOUT = 3.0
QUIET_COMMANDS = ("update",)  # `brain update` says it all itself


def state_path() -> Path:
    from brain.config import state_dir

    return state_dir() / "update.json"


def read_state() -> dict[str, Any]:
    from brain.files import read_json_dict

    return read_json_dict(state_path())


def write_state(doc: dict[str, Any]) -> None:
    from brain.files import write_atomic

    write_atomic(state_path(), json.dumps(doc) + "\n")


def wanted(args: list[str]) -> bool:
    """Whether this run may check or show the notice at all."""
    if current().no_update or "--json" in args:
        return False
    if args[:1] and args[0] in QUIET_COMMANDS:
        return False
    from brain import caller

    if not (sys.stderr.isatty() and sys.stdout.isatty()) or caller.detect().agent:
        return False
    return release.parse_tag(release.installed_tag()) is not None  # a local build never asks


def message(state: dict[str, Any], installed: str) -> str | None:
    latest = state.get("latest")
    if not isinstance(latest, str) or latest == state.get("skip"):
        return None
    offer, have = release.parse_tag(latest), release.parse_tag(installed)
    if offer is None or have is None or offer.prerelease or not offer > have:
        return None
    return f"brain {latest} is available (this is {installed}); run `brain update` to install it"


def due(state: dict[str, Any], now: float) -> bool:
    checked = state.get("checked")
    return not isinstance(checked, (int, float)) or not 0 <= now - checked < DAY


def after_command(args: list[str]) -> None:
    """Start the daily check when it is due, and print the notice when a release is waiting."""
    try:
        if not wanted(args):
            return
        state = read_state()
        now = time.time()
        if due(state, now):
            state["checked"] = now  # stamped first: a failed check waits a day too
            write_state(state)
            _spawn_check()
        text = message(state, release.installed_tag())
        if text:
            from brain.text import say

            say(text)
    except OSError:
        return  # a notice is never worth an error


def _spawn_check() -> None:
    from brain.process import start_detached

    start_detached(config.python_command("brain.notice"))


def check_now(seconds: float = CHECK_TIMEOUT) -> str | None:
    """Ask the release server (signature checked) and record the newest tag; None on failure."""
    from brain.errors import BrainError

    try:
        with release.client(seconds) as http:
            tag = release.latest(http).info.tag
    except BrainError:
        return None
    remember_latest(tag)
    return tag


def remember_latest(tag: str) -> None:
    write_state({**read_state(), "checked": time.time(), "latest": tag})


def skip(tag: str) -> None:
    """After a rollback, do not offer the release just left until a newer one comes."""
    write_state({**read_state(), "skip": tag})


if __name__ == "__main__":
    with contextlib.suppress(Exception):
        check_now()
