"""The presenters of proposals: `brain propose` and `brain inbox` (list, approve, drop)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from brain.present import Answer, data, dumps, json_text
from brain.text import plural, printable

if TYPE_CHECKING:
    from brain.commands.inbox import ApproveResult, DropResult, InboxResult
    from brain.commands.propose import ProposeResult


# Of a proposed line, what the text answer echoes: an item of 100,000 characters (an import of a
# pasted log) was printed back whole. `--json` keeps it whole.
LINE_CHARS = 300
WHY_CHARS = 200  # of why it was refused
REVIEW_CHARS = 1000  # of a proposal `brain inbox` lists: enough to judge it, not a whole log


def echo(text: str, limit: int = LINE_CHARS) -> str:
    """`text` as an answer echoes a line: masked, then cut at `limit` (brain.present.clip)."""
    from brain.present import clip

    return clip(text, limit)


def propose_line(r: ProposeResult) -> str:
    to = f" (for {r.to})" if r.to else ""
    if r.branch is not None:  # `proposals: team`: a branch of the shared remote
        return _team_line(r, to)
    line = echo(r.markdown)
    if r.action == "proposed":
        head = f"Proposed as #{r.number}{to}: {line}"
    elif r.action == "queued":
        head = f"Already in the inbox: {line}"
    elif r.action == "known":
        head = f"Already in the vault: {line}"
    else:
        head = f"Refused ({echo(r.problem or '', WHY_CHARS)}): {line}"
    if r.updates and r.action == "proposed":
        head += f"\n  updates {r.updates}: {echo(r.current or '')}"
    return head


def _team_line(r: ProposeResult, to: str) -> str:
    line = echo(r.markdown)
    if r.action == "proposed":
        where = "on the shared remote" if r.sent else "here, not sent yet"
        head = f"Proposed {where} as {r.branch}{to}: {line}"
    elif r.action == "queued":
        head = f"Already proposed ({r.branch}): {line}"
    else:
        return f"Refused ({echo(r.problem or '', WHY_CHARS)}): {line}"
    if r.updates and r.action == "proposed":
        head += f"\n  updates {r.updates}: {echo(r.current or '')}"
    if r.pr:
        head += f"\n  pull request: {r.pr}"
    if r.note:
        head += f"\n  {r.note}"
    return head


def propose(result: ProposeResult, *, as_json: bool = False) -> Answer:
    return Answer(json_text(result) if as_json else propose_line(result))


def inbox(listing: InboxResult, *, as_json: bool = False) -> Answer:
    """The queue, a proposal a line (with what it updates or why it is not a bullet)."""
    recovered = (
        f"finished an interrupted approval: {listing.recovered}" if listing.recovered else ""
    )
    if as_json:
        return Answer(json_text(listing))
    note = [listing.note] if listing.note else []
    if not listing.proposals:
        return Answer("\n".join(["The inbox is empty.", *note]), recovered)
    lines = []
    for p in listing.proposals:
        # printable: propose refuses control characters, but a line pasted in by hand may hold ESC
        to_note = f"  (for {printable(p.to)})" if p.to else ""
        shown = echo(p.markdown, REVIEW_CHARS)
        if shown != p.markdown and p.kind in ("bullet", "hygiene"):
            shown += f" ({len(p.markdown):,} characters: read it whole at {listing.path}:{p.line})"
        lines.append(f"{p.number:>3}. {printable(shown)}{to_note}")
        if p.kind == "team":
            lines.append(f"     by {printable(p.by or '?')}, {(p.at or '')[:16]}, on {p.branch}")
        elif p.kind == "unsent":
            lines.append(f"     by {printable(p.by or '?')}: waits here; `brain sync` sends it")
        if p.problem:
            lines.append(f"     not a valid bullet: {printable(p.problem)}")
        elif p.updates:
            lines.append(f"     updates {printable(p.updates)}: {printable(p.current or '')}")
    sent = sum(p.kind == "team" for p in listing.proposals)
    unsent = sum(p.kind == "unsent" for p in listing.proposals)
    where = f"in {listing.path}"
    if sent or unsent:  # `proposals: team`: branches of the shared remote, or sent later
        own = len(listing.proposals) - sent - unsent
        parts = [f"{own} in {listing.path}"]
        parts += [f"{sent} on the shared remote"] if sent else []
        parts += [f"{unsent} waiting here to be sent"] if unsent else []
        where = f"({', '.join(parts)})"
    lines.append(
        f"{plural(len(listing.proposals), 'proposal')} {where}: `brain inbox approve N "
        "[--to MEMORY|LEARNINGS|TUNINGS]` or `brain inbox drop N`"
    )
    return Answer("\n".join([*lines, *note]), recovered)


def approved(results: Sequence[ApproveResult], *, one: bool, as_json: bool = False) -> Answer:
    """What `inbox approve` did; `one` (a single number given) answers as one object."""
    if as_json:
        docs = [data(r) for r in results]
        return Answer(dumps(docs[0] if one else {"approved": docs}))
    lines = []
    for r in results:
        verb = "Replaced" if r.replaced else "Approved"
        lines.append(f"{verb} #{r.number} in {r.path}:{r.line}: {printable(echo(r.markdown))}")
        if r.replaced:
            lines.append(f"  was: {printable(echo(r.replaced))}")
        if r.pushed:
            lines.append(f"  merged and pushed ({r.pushed}); {r.commit}")
    if all(r.pushed for r in results):
        return Answer("\n".join([*lines, f"{results[-1].remaining} left in the inbox."]))
    from brain.commands.inbox import commit_advice

    # one piece of advice for them all, naming each file once (one each repeated it per file)
    here = [r for r in results if not r.pushed]  # the team's were committed, and said so
    commit = (
        commit_advice(here[0].vault, [f for r in here for f in r.files or (r.path,)])
        if len(here) > 1
        else here[0].commit
    )
    lines.append(
        f"Index updated; {results[-1].remaining} left in the inbox. Not committed: {commit}."
    )
    return Answer("\n".join(lines))


def dropped(results: Sequence[DropResult], *, one: bool, as_json: bool = False) -> Answer:
    """What `inbox drop` did; `one` (a single number given) answers as one object."""
    if as_json:
        docs = [data(r) for r in results]
        return Answer(dumps(docs[0] if one else {"dropped": docs}))
    if one:
        (r,) = results
        return Answer(f"Dropped #{r.number}: {echo(r.markdown)} ({r.remaining} left)")
    lines = [f"Dropped #{r.number}: {echo(r.markdown)}" for r in results]
    return Answer("\n".join([*lines, f"{results[-1].remaining} left in the inbox."]))
