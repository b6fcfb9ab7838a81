"""The presenter of `brain recall`: terse lines, and the JSON objects (key order is the contract).

Transcripts are what was said, credentials pasted into a chat included: every answer passes the
output step of brain.present (credentials masked, controls escaped); a snippet, an excerpt cut at
`…`, is masked here first with what only an excerpt needs (a secret cut in two).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brain.present import Answer, Lookup, clip, echoed, json_text
from brain.recall import FULL, enable_command
from brain.text import noun, plural

if TYPE_CHECKING:
    from brain.caller import Caller
    from brain.commands.recall import (
        FullTurn,
        RecallResult,
        Session,
        SessionsResult,
        Source,
        Toggle,
    )
    from brain.recall.search import Hit
    from brain.recall.store import SyncReport

TITLE_CHARS = 32


def masked(hit: Hit) -> Hit:
    """The hit with a secret cut in two at its snippet's `…` masked too: the output step masks
    what the rules recognise, and a cut may have left only key material behind."""
    from brain.secrets import redact

    return dataclasses.replace(hit, snippet=redact(hit.snippet, clipped=True))


def hit_line(hit: Hit) -> str:
    """`id date role [title] snippet`: the id's shortest unique start, which --full takes."""
    hit = masked(hit)
    title = f" [{clip(hit.title, TITLE_CHARS)}]" if hit.title else ""
    return f"{hit.short or hit.id} {(hit.at or '')[:10]} {hit.role}{title} {hit.snippet}"


@dataclass(frozen=True)
class RecallDoc:
    query: str
    count: int
    hits: tuple[Hit, ...]  # masked; a hit's JSON keys are brain.recall.search.Hit's


@dataclass(frozen=True)
class SourcesDoc:
    sources: tuple[Source, ...]


def recall(result: RecallResult, who: Caller, query: str, *, as_json: bool = False) -> Answer:
    """`brain recall QUERY`: the JSON object, or a line per hit; exit 1 when nothing matches.
    Logged against transcripts.db (no units: turns are not the vault's)."""
    from brain.recall.store import db_path

    note = ""
    asked = echoed(query)  # masked, as the turns are
    if as_json:
        text = json_text(RecallDoc(asked, result.count, tuple(masked(h) for h in result.hits)))
    else:
        text = "\n".join(hit_line(h) for h in result.hits)
        if who.person:
            note = (
                f"`{FULL}` prints a whole turn"
                if result.hits
                else f"nothing in the transcripts matches {asked!r}"
            )
    lookup = Lookup("recall", who.name, who.session, query, result.count, db_path())
    return Answer(text, note, 0 if result.hits else 1, lookup)


def full(turn: FullTurn, *, as_json: bool = False) -> Answer:
    """`brain recall full ID`: one turn whole (credentials masked by the output step)."""
    if as_json:
        return Answer(json_text(turn))
    when = turn.at[:16].replace("T", " ") if turn.at else None
    parts = (when, turn.agent, turn.role, turn.title, turn.cwd)
    head = " · ".join(p for p in parts if p)
    return Answer(f"{turn.id}\n{head}\n\n{turn.body}")


def sources(docs: Sequence[Source], *, as_json: bool = False) -> Answer:
    """`brain recall sources`: each adapter, on or off, its turns and where it reads."""
    if as_json:
        return Answer(json_text(SourcesDoc(tuple(docs))))
    lines = []
    # columns as wide as their longest cell: "GitHub Copilot CLI" pushed its row out of line
    name_w = max((len(s.name) for s in docs), default=0)
    label_w = max((len(s.label) for s in docs), default=0)
    for s in docs:
        state = "on " if s.enabled else "off"
        where = s.root if s.exists else f"{s.root} (not found)"
        turns = noun(s.turn_count, "turn")
        lines.append(
            f"{state} {s.name:<{name_w}} {s.label:<{label_w}} {s.turn_count:>8} {turns:<5}  {where}"
        )
    note = "" if any(s.enabled for s in docs) else f"none enabled; opt in with `{enable_command()}`"
    return Answer("\n".join(lines), note)


def toggle(t: Toggle, *, as_json: bool = False) -> Answer:
    if as_json:
        return Answer(json_text(t))
    state = "enabled" if t.enabled else "disabled"
    gone = f"; {plural(t.removed_count, 'turn')} deleted from recall" if t.removed_count else ""
    on = ", ".join(t.sources) or "none"
    return Answer(f"{t.agent} transcripts {state}{gone} (enabled: {on})")


def sync(report: SyncReport, *, as_json: bool = False) -> Answer:
    if as_json:
        return Answer(json_text(report))
    skipped = f", {plural(report.skipped_count, 'line')} skipped" if report.skipped_count else ""
    files = plural(report.file_count, "transcript")
    new = plural(report.turn_count, "new turn")
    return Answer(
        f"Read {report.read} of {files} ({report.bytes / 1e6:.1f} MB), {new}{skipped}, "
        f"in {report.ms:.0f} ms."
    )


def session_line(s: Session) -> str:
    """`session date agent [title] N turns cwd`, and with a query the best turn's id (what
    `recall full` takes) before them."""
    title = f" [{clip(s.title, TITLE_CHARS)}]" if s.title else ""
    where = f" {s.cwd}" if s.cwd else ""
    best = f"{s.short or s.turn} " if s.turn else ""
    when = (s.start_at or "")[:10] or "-"
    return f"{best}{s.session} {when} {s.agent}{title} {plural(s.turn_count, 'turn')}{where}"


def sessions(result: SessionsResult, who: Caller, *, as_json: bool = False) -> Answer:
    """`brain recall sessions [QUERY]`: a line per session (or the JSON object); exit 1 when
    none. A search is logged as recall's are; a listing of the newest asks nothing."""
    from brain.recall.store import db_path

    code = 0 if result.sessions else 1
    note = ""
    if as_json:
        text = json_text(result)
    else:
        text = "\n".join(session_line(s) for s in result.sessions)
        if who.person and not result.sessions:
            asked = f" match {echoed(result.query)!r}" if result.query else " are recorded"
            note = f"no sessions{asked}"
        elif who.person and result.query:
            note = "each led by its best turn's id: `brain recall full ID` prints it"
    lookup = None
    if result.query:
        lookup = Lookup("recall", who.name, who.session, result.query, result.count, db_path())
    return Answer(text, note, code, lookup)
