"""The runners behind `brain howto`, `brain lessons`, `brain day` and `brain week`: call the
command module, pick the output (JSON, a table for a person, terse lines for an agent or a pipe)
and return the exit code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _emit(
    result: T,
    as_json: bool,
    to_json: Callable[[T], dict[str, Any]],
    table: Callable[[T], str],
    lines: Callable[[T], str],
) -> int:
    from brain import caller
    from brain import present as render

    if as_json:
        return render.out(render.dumps(to_json(result)))
    text = table(result) if caller.detect().person else lines(result)
    return render.out(text) if text else 0


def run_howto(
    terms: list[str],
    *,
    limit: int,
    failed: bool,
    since: str,
    agent: str,
    cwd: str,
    propose: bool,
    to: str | None,
    vault: str | None,
    as_json: bool,
) -> int:
    import sys

    from brain import caller
    from brain.commands.howto import howto
    from brain.config import resolve_vault
    from brain.recall import history_render as hr

    text = " ".join(terms).strip()
    result = howto(
        text,
        limit=limit,
        failed=failed,
        since=since,
        agent=agent,
        cwd=cwd,
        propose_to=resolve_vault(vault) if propose else None,
        to=to,
    )
    _emit(result, as_json, hr.howto_json, hr.howto_table, hr.howto_lines)
    if not result.hits and not as_json and caller.detect().person:
        sys.stderr.write(f"no command in the transcripts did {text!r}\n")
    return 0 if result.hits else 1


def run_lessons(
    *, since: str, kind: str, agent: str, propose: bool, vault: str | None, as_json: bool
) -> int:
    import sys

    from brain import caller
    from brain.commands.lessons import find_lessons
    from brain.config import resolve_vault
    from brain.recall import history_render as hr

    result = find_lessons(
        since=since,
        kind=kind,
        agent=agent,
        propose_to=resolve_vault(vault) if propose else None,
    )
    _emit(result, as_json, hr.lessons_json, hr.lessons_table, hr.lessons_lines)
    if not result.moments and not as_json and caller.detect().person:
        sys.stderr.write("no corrections or retries in that window\n")
    return 0


def run_day(day: str, *, git: bool, project: str, agent: str, as_json: bool) -> int:
    from brain.commands import day as daymod
    from brain.recall import history_render as hr

    result = daymod.day(day, git=git, project=project, agent=agent)
    _emit(result, as_json, hr.day_json, hr.day_table, hr.day_lines)
    return 0


def run_week(since: str, *, git: bool, project: str, agent: str, as_json: bool) -> int:
    from brain.commands import day as daymod
    from brain.recall import history_render as hr

    result = daymod.week(since, git=git, project=project, agent=agent)
    _emit(result, as_json, hr.week_json, hr.week_table, hr.week_lines)
    return 0
