"""The runners behind `brain howto`, `brain lessons`, `brain day` and `brain week`: call the
command module and hand the result to its presenter (brain.present.past); return the exit
code."""

from __future__ import annotations


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
    from brain import caller
    from brain.commands.howto import howto
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import past as hr

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
    return emit(hr.howto(result, caller.detect(), text, as_json=as_json))


def run_lessons(
    *, since: str, kind: str, agent: str, propose: bool, vault: str | None, as_json: bool
) -> int:
    from brain import caller
    from brain.commands.lessons import find_lessons
    from brain.config import resolve_vault
    from brain.present import emit
    from brain.present import past as hr

    result = find_lessons(
        since=since,
        kind=kind,
        agent=agent,
        propose_to=resolve_vault(vault) if propose else None,
    )
    return emit(hr.lessons(result, caller.detect(), as_json=as_json))


def run_day(day: str, *, git: bool, project: str, agent: str, as_json: bool) -> int:
    from brain import caller
    from brain.commands import day as daymod
    from brain.present import emit
    from brain.present import past as hr

    result = daymod.day(day, git=git, project=project, agent=agent)
    return emit(hr.day(result, caller.detect(), as_json=as_json))


def run_week(since: str, *, git: bool, project: str, agent: str, as_json: bool) -> int:
    from brain import caller
    from brain.commands import day as daymod
    from brain.present import emit
    from brain.present import past as hr

    result = daymod.week(since, git=git, project=project, agent=agent)
    return emit(hr.week(result, caller.detect(), as_json=as_json))
