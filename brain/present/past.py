"""The presenter of `brain howto`, `brain lessons`, `brain day` and `brain week`: a compact rich
table for a person, terse lines for an agent or a pipe, and the JSON objects (key order is the
contract).

What the transcripts said (a command, a lesson, a session's title, a written file's name) leaves
through the output step of brain.present like every answer (credentials masked, controls escaped);
a name or title is made one line here (`printable`), as it is one field of a line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from brain.commands.day import DayResult, WeekResult
from brain.commands.howto import HowtoHit, HowtoResult
from brain.commands.lessons import LessonsResult
from brain.present import Answer, clip, echoed, json_text, render
from brain.recall import FULL, past
from brain.recall.activity import RepoDay
from brain.recall.search import SHORT_ID
from brain.text import plural, printable

if TYPE_CHECKING:
    from brain.caller import Caller
    from brain.commands.lessons import Proposal
    from brain.commands.propose import ProposeResult
    from brain.recall.lessons import Moment

T = TypeVar("T")

COMMAND_CHARS = 100  # a command's width in a table (the JSON has it whole)
SHOWN = 4  # sessions, files or commits listed per repository in a table cell


def short(ident: str | None) -> str:
    """A turn's id as `brain recall` lists it: enough of it for `brain recall full`."""
    return (ident or "")[:SHORT_ID]


def _where(cwd: str | None) -> str:
    return past.project_of(cwd) or cwd or "-"


# -- JSON ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HowtoDoc:
    """`brain howto --json` (docs/json.md): the result without its transcript sync."""

    query: str
    count: int
    hits: tuple[HowtoHit, ...]
    proposal: ProposeResult | None


@dataclass(frozen=True)
class LessonsDoc:
    since_at: str | None
    count: int
    moments: tuple[Moment, ...]
    proposals: tuple[Proposal, ...]


def howto_json(result: HowtoResult) -> str:
    query = echoed(result.query)  # masked, as the commands are
    return json_text(HowtoDoc(query, result.count, result.hits, result.proposal))


def lessons_json(result: LessonsResult) -> str:
    return json_text(LessonsDoc(result.since_at, result.count, result.moments, result.proposals))


def day_json(day: DayResult) -> str:
    return json_text(day)


def week_json(week: WeekResult) -> str:
    return json_text(week)


# -- terse lines (agents, pipes) -------------------------------------------------------------


def howto_lines(result: HowtoResult) -> str:
    """`date agent project turn-id $ command`, a failure's exit status after it."""
    lines = []
    for h in result.hits:
        status = "" if h.ok else f"  [{'exit ' + str(h.code) if h.code is not None else 'failed'}]"
        when = past.local_date(h.at)
        lines.append(f"{when} {h.agent} {_where(h.cwd)} {short(h.turn)} $ {h.command}{status}")
    if result.proposal:
        lines.append(
            _proposal_line(result.proposal.action, result.proposal.number, result.proposal.markdown)
        )
    return "\n".join(lines)


def _proposal_line(action: str, number: int | None, bullet: str | None) -> str:
    if action == "proposed":
        return f"proposed #{number}: {bullet}"
    if action == "remembered":
        return "already proposed once (not again)"
    return f"{action}: {bullet}"


def lessons_lines(result: LessonsResult) -> str:
    """`date kind agent session project: lesson (turns ids)`, one moment a line."""
    proposals = {p.key: p for p in result.proposals}
    lines = []
    for m in result.moments:
        ids = " ".join(short(t.id) for t in m.turns)
        head = f"{past.local_date(m.at)} {m.kind} {m.agent} {m.session[:8]} {_where(m.cwd)}"
        lines.append(f"{head}: {m.lesson}" + (f" (turns {ids})" if ids else ""))
        p = proposals.get(m.key)
        if p:
            lines.append("  " + _proposal_line(p.action, p.number, p.markdown))
    return "\n".join(lines)


def day_lines(day: DayResult) -> str:
    head = f"day {day.date}: {plural(len(day.repos), 'repository', 'repositories')}, {_counts(day)}"
    return "\n".join([head, *(line for r in day.repos for line in _repo_lines(r))])


def week_lines(week: WeekResult) -> str:
    scope = f" ({week.project})" if week.project else ""
    head = f"week {week.first_date}..{week.last_date}{scope}: {_counts(week)}"
    return "\n".join([head, *(day_lines(d) for d in week.days if d.repos)])


def _counts(totals: DayResult | WeekResult, written: str = "") -> str:
    """`1 session, 3 turns, 2 files, 1 commit`: a day's or a week's totals."""
    return (
        f"{plural(totals.session_count, 'session')}, {plural(totals.turn_count, 'turn')}, "
        f"{plural(totals.file_count, 'file')}{written}, {plural(totals.commit_count, 'commit')}"
    )


def _repo_lines(r: RepoDay) -> list[str]:
    lines = [f"repo {r.repo or '(no folder)'}" + (f" ({r.project})" if r.project else "")]
    if r.note:
        lines.append(f"note {r.note}")
    for s in r.sessions:
        span = f"{past.local_time(s.start_at)}-{past.local_time(s.end_at)}"
        head = f"session {span} {s.agent} {s.session[:8]} {plural(s.turn_count, 'turn')}"
        lines.append(f"{head} {s.title or ''}".rstrip())
    lines += [f"file {f.path} {f.writes}" for f in r.files]
    for c in r.commits:
        lines.append(f"commit {past.local_time(c.at)} {c.sha[:10]} {c.author}: {c.summary}")
    # a file's name, a folder, a title or a commit's summary is one line, escaped: a newline in
    # a name the agent wrote must not forge a line, nor ESC drive the terminal
    return [printable(line) for line in lines]


# -- tables (a person at a terminal) ---------------------------------------------------------


def _table(*columns: str) -> Any:
    """A borderless table whose columns are never narrower than their heading (nor a date)."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for name in columns:
        table.add_column(
            name, overflow="fold", min_width=max(len(name), 10 if name == "day" else 0)
        )
    return table


def _listing(items: list[str], more: int) -> str:
    from rich.markup import escape

    text = "\n".join(escape(i) for i in items)
    return text + (f"\n[dim]+{more} more[/dim]" if more > 0 else "")


def howto_table(result: HowtoResult) -> str:
    from rich.markup import escape

    table = _table("", "command", "when", "where", "recall id")
    for h in result.hits:
        mark = "[green]✓[/green]" if h.ok else "[red]✗[/red]"
        runs = f" [dim](×{h.runs})[/dim]" if h.runs > 1 else ""
        table.add_row(
            mark,
            escape(clip(h.command, COMMAND_CHARS)) + runs,
            past.local_date(h.at),
            escape(_where(h.cwd)),
            short(h.turn),
        )
    parts: list[Any] = [table]
    if result.proposal:
        p = result.proposal
        parts.append(escape(_proposal_line(p.action, p.number, p.markdown)))
    parts.append(f"[dim]`{FULL}` shows the turn a command followed[/dim]")
    return render(*parts)


def lessons_table(result: LessonsResult) -> str:
    from rich.markup import escape

    proposals = {p.key: p for p in result.proposals}
    table = _table("when", "kind", "where", "lesson")
    for m in result.moments:
        said = [f"[dim]{escape(t.role)}: {escape(t.text)}[/dim]" for t in m.turns]
        cell = "\n".join([escape(m.lesson), *said])
        p = proposals.get(m.key)
        if p:
            cell += f"\n[cyan]{escape(_proposal_line(p.action, p.number, p.markdown))}[/cyan]"
        table.add_row(past.local_date(m.at), m.kind, escape(_where(m.cwd)), cell)
    return render(table)


def day_table(day: DayResult) -> str:
    return render(_day_grid([day], with_day=False), _summary(day.date, day))


def week_table(week: WeekResult) -> str:
    busy = [d for d in week.days if d.repos]
    scope = f" in {week.project}" if week.project else ""
    return render(
        _day_grid(busy, with_day=True),
        _summary(f"{week.first_date} to {week.last_date}{scope}", week),
    )


def _summary(label: str, totals: DayResult | WeekResult) -> str:
    from rich.markup import escape

    return f"[dim]{escape(label)}: {_counts(totals, ' written')}[/dim]"


def _day_grid(days: list[DayResult], *, with_day: bool) -> Any:
    """One row per repository and day; each list clipped to its share of the terminal's width
    (one item a line, cut with an ellipsis, so a long title never wraps the table)."""
    from rich.console import Console
    from rich.markup import escape

    columns = ("day",) if with_day else ()
    table = _table(*columns, "repository", "sessions", "files written", "commits")
    repos = [r for d in days for r in d.repos]
    weight = {  # the room goes to the lists that have something in them
        "sessions": 4,
        "files": 3 if any(r.files for r in repos) else 0,
        "commits": 3 if any(r.commits for r in repos) else 0,
    }
    empty = (len("files written") if not weight["files"] else 0) + (
        len("commits") if not weight["commits"] else 0
    )
    # the day (10 + 2), the repository (16 + 2), the gaps between the three lists
    room = max(Console().width - (12 if with_day else 0) - 18 - 6 - empty, 45)
    wide = {k: max(room * w // sum(weight.values()), 12) for k, w in weight.items()}
    for d in days:
        for r in d.repos:
            sessions = [
                f"{past.local_time(s.start_at)}-{past.local_time(s.end_at)} {s.agent} "
                f"{s.title or s.session[:8]} ({s.turn_count})"
                for s in r.sessions
            ]
            files = [f.path + (f" ×{f.writes}" if f.writes > 1 else "") for f in r.files]
            commits = [f"{c.sha[:7]} {c.summary}" for c in r.commits]
            name = escape(clip(printable(r.project or r.repo or "(no folder)"), 16))
            if r.note:
                name += f"\n[dim]{escape(clip(printable(r.note), 16))}[/dim]"
            row = [
                _listing([clip(printable(x), wide[k]) for x in xs[:SHOWN]], len(xs) - SHOWN)
                for k, xs in (("sessions", sessions), ("files", files), ("commits", commits))
            ]
            table.add_row(*([d.date] if with_day else []), name, *row)
    return table


def _answer(
    result: T,
    who: Caller,
    as_json: bool,
    to_json: Callable[[T], str],
    table: Callable[[T], str],
    lines: Callable[[T], str],
) -> str:
    """JSON, a table for a person, or terse lines for an agent or a pipe."""
    if as_json:
        return to_json(result)
    return table(result) if who.person else lines(result)


def howto(result: HowtoResult, who: Caller, asked: str, *, as_json: bool = False) -> Answer:
    """The commands that did a task; exit 1 when none did."""
    text = _answer(result, who, as_json, howto_json, howto_table, howto_lines)
    note = ""
    if not result.hits and not as_json and who.person:
        note = f"no command in the transcripts did {echoed(asked)!r}"
    return Answer(text, note, 0 if result.hits else 1)


def lessons(result: LessonsResult, who: Caller, *, as_json: bool = False) -> Answer:
    text = _answer(result, who, as_json, lessons_json, lessons_table, lessons_lines)
    quiet = result.moments or as_json or not who.person
    return Answer(text, "" if quiet else "no corrections or retries in that window")


def day(result: DayResult, who: Caller, *, as_json: bool = False) -> Answer:
    return Answer(_answer(result, who, as_json, day_json, day_table, day_lines))


def week(result: WeekResult, who: Caller, *, as_json: bool = False) -> Answer:
    return Answer(_answer(result, who, as_json, week_json, week_table, week_lines))
