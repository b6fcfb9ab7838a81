"""The runner behind `brain recall`: picks the mode, calls brain.commands.recall, and hands the
result to its presenter (brain.present.recall)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from brain.errors import UsageError

ProgressFactory = Callable[..., contextlib.AbstractContextManager[Any]]


@contextlib.contextmanager
def _none(*_: object, **__: object) -> Iterator[None]:
    yield None


def mode_of(
    text: str,
    full: str | None = None,
    sync: bool = False,
    sources: bool = False,
    enable: str | None = None,
    disable: str | None = None,
) -> str:
    """The one mode asked for (QUERY, --full, --sync, --sources, --enable, --disable); a usage
    error for none or several (the CLI and the MCP tool alike)."""
    modes = [
        name
        for name, on in (
            ("QUERY", bool(text)),
            ("--full", full is not None),
            ("--sync", sync),
            ("--sources", sources),
            ("--enable", enable is not None),
            ("--disable", disable is not None),
        )
        if on
    ]
    if len(modes) != 1:
        what = " and ".join(modes) if modes else "nothing to do"
        raise UsageError(
            "brain recall takes one of QUERY, full ID, sync, sources, enable NAME, disable NAME "
            f"({what})",
            "see `brain recall --help`",
        )
    return modes[0]


def run_recall(
    query: list[str],
    *,
    full: str | None = None,
    sync: bool = False,
    sources: bool = False,
    enable: str | None = None,
    disable: str | None = None,
    all_sessions: bool = False,
    limit: int = 10,
    since: str = "",
    agent: str = "",
    cwd: str = "",
    as_json: bool = False,
    progress: ProgressFactory = _none,
) -> int:
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present
    from brain.run import argv_text

    text = argv_text(" ".join(query).strip())
    full = None if full is None else argv_text(full, "the turn id")
    mode = mode_of(text, full, sync, sources, enable, disable)
    if mode in ("--enable", "--disable"):
        name = enable if mode == "--enable" else disable
        return emit(present.toggle(cmd.toggle(name or "", mode == "--enable"), as_json=as_json))
    if mode == "--sources":
        return emit(present.sources(cmd.sources(), as_json=as_json))
    if mode == "--sync":
        with progress("Reading transcripts", enabled=not as_json) as bar:
            report = cmd.sync(full=True, progress=bar)
        return emit(present.sync(report, as_json=as_json))
    if mode == "--full":
        return emit(present.full(cmd.full(full or ""), as_json=as_json))
    return _query(text, limit, since, agent, cwd, all_sessions, as_json, progress)


def _query(
    text: str,
    limit: int,
    since: str,
    agent: str,
    cwd: str,
    all_sessions: bool,
    as_json: bool,
    progress: ProgressFactory,
) -> int:
    from brain import caller as callermod
    from brain.commands import recall as cmd
    from brain.present import emit
    from brain.present import recall as present

    who = callermod.detect()
    with progress("Reading transcripts", enabled=not as_json) as bar:
        result = cmd.recall(
            text,
            limit=limit,
            since=since,
            agent=agent,
            cwd=cwd,
            exclude_session="" if all_sessions else who.session,
            progress=bar,
        )
    return emit(present.recall(result, who, text, as_json=as_json))
