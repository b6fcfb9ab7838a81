"""The runner behind `brain recall`: picks the mode, calls brain.commands.recall, renders."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator
from typing import Any

from brain.errors import UsageError

ProgressFactory = Callable[..., contextlib.AbstractContextManager[Any]]


@contextlib.contextmanager
def _none(*_: object, **__: object) -> Iterator[None]:
    yield None


def _show_sources(as_json: bool) -> int:
    from brain import render
    from brain.commands import recall as cmd

    docs = cmd.sources()
    if as_json:
        render.out(render.dumps({"sources": [dataclasses.asdict(s) for s in docs]}))
        return 0
    lines = []
    for s in docs:
        state = "on " if s.enabled else "off"
        where = s.root if s.exists else f"{s.root} (not found)"
        turns = render.noun(s.turn_count, "turn")
        lines.append(f"{state} {s.name:<8} {s.label:<12} {s.turn_count:>8} {turns:<5}  {where}")
    render.out("\n".join(lines))
    if not any(s.enabled for s in docs):
        sys.stderr.write("none enabled; opt in with `brain recall --enable NAME`\n")
    return 0


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
    from brain import render
    from brain.cli import argv_text
    from brain.commands import recall as cmd

    text = argv_text(" ".join(query).strip())
    full = None if full is None else argv_text(full, "the turn id")
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
            f"brain recall takes one of QUERY, --full, --sync, --sources, --enable, --disable "
            f"({what})",
            "see `brain recall --help`",
        )
    mode = modes[0]
    if mode in ("--enable", "--disable"):
        name = enable if mode == "--enable" else disable
        t = cmd.toggle(name or "", mode == "--enable")
        if as_json:
            render.out(render.dumps(dataclasses.asdict(t)))
        else:
            state = "enabled" if t.enabled else "disabled"
            gone = render.plural(t.removed_count, "turn")
            gone = f"; {gone} deleted from recall" if t.removed_count else ""
            on = ", ".join(t.sources) or "none"
            render.out(f"{t.agent} transcripts {state}{gone} (enabled: {on})")
        return 0
    if mode == "--sources":
        return _show_sources(as_json)
    if mode == "--sync":
        with progress("Reading transcripts", enabled=not as_json) as bar:
            report = cmd.sync(full=True, progress=bar)
        if as_json:
            doc = dataclasses.asdict(report)
            doc["agents"] = list(report.agents)
            render.out(render.dumps(doc))
        else:
            skipped = render.plural(report.skipped_count, "line")
            skipped = f", {skipped} skipped" if report.skipped_count else ""
            files = render.plural(report.file_count, "transcript")
            new = render.plural(report.turn_count, "new turn")
            render.out(
                f"Read {report.read} of {files} ({report.bytes / 1e6:.1f} MB), {new}{skipped}, "
                f"in {report.ms:.0f} ms."
            )
        return 0
    if mode == "--full":
        from brain.recall.render import masked_turn

        turn = masked_turn(cmd.full(full or ""))
        if as_json:
            render.out(render.dumps(dataclasses.asdict(turn)))
        else:
            head = " · ".join(
                p
                for p in (
                    turn.at[:16].replace("T", " "),
                    turn.agent,
                    turn.role,
                    turn.title,
                    turn.cwd,
                )
                if p
            )
            render.out(f"{turn.id}\n{head}\n\n{turn.body}")
        return 0
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
    from brain import render, usage
    from brain.commands import recall as cmd
    from brain.recall import render as rr
    from brain.recall.store import db_path

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
    if as_json:
        doc = {"query": text, "count": result.count, "hits": [rr.hit_json(h) for h in result.hits]}
        written = render.out(render.dumps(doc))
    elif result.hits:
        written = render.out("\n".join(rr.hit_line(h) for h in result.hits))
        if who.person:
            sys.stderr.write("`brain recall --full ID` prints a whole turn\n")
    else:
        written = 0
        if who.person:
            sys.stderr.write(f"nothing in the transcripts matches {text!r}\n")
    usage.record("recall", who.name, who.session, text, result.count, written, db_path())
    return 0 if result.hits else 1
