"""What the desk's forms do. Each action calls the command function the CLI calls (`brain inbox
approve`, `drop`, `brain propose`), so a click makes exactly the file change the command makes.

A page lists proposals by number, but the inbox may change between the page and the click (an
agent proposes, a person approves at a terminal). So a form names its proposal by the text it
showed (`key`), and the action finds that text's number in the inbox as it is now: a click never
acts on another proposal than the one it showed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from brain import edits
from brain.commands import inbox as inboxmod
from brain.config import INBOX
from brain.errors import BrainError, UsageError
from brain.secrets import redact

GONE_HINT = "the list shows the inbox as it is now"
DESK_SOURCE = "desk"  # the source of a bullet proposed from the desk without one


@dataclass(frozen=True)
class Done:
    """One line saying what an action did, for the page's notice."""

    message: str
    ok: bool = True


def editable(p: inboxmod.Proposal) -> bool:
    """Only a proposed bullet is edited (and sent to a chosen file); an item of another kind (a
    `brain tend` hygiene item says so in its `kind`) is approved or dropped as it stands."""
    return str(getattr(p, "kind", "bullet")) == "bullet"


def number_of(vault: Path, key: str) -> str:
    """The word approve and drop take for the proposal the page showed as `key`: a team
    proposal's branch (the fetch before the action may renumber the remote's), else its number
    now. A look-up, not a listing the person read: the terminal's numbers stay as it listed
    them (brain.commands.inbox.as_listed)."""
    for p in inboxmod.inbox(vault, remember=False).proposals:
        if p.markdown == key:
            return p.branch if p.kind in ("team", "unsent") and p.branch else str(p.number)
    raise BrainError(
        f"that proposal is no longer in the inbox (approved, dropped or changed elsewhere): {key}",
        GONE_HINT,
    )


def _destination(to: str) -> str | None:
    """A form's destination: "" keeps the proposal's own (as `brain inbox approve` without --to)."""
    return to.upper() if to else None


def approve(vault: Path, key: str, to: str = "") -> Done:
    (r,) = inboxmod.approve_many(vault, [number_of(vault, key)], _destination(to), listed=False)
    verb = "Replaced" if r.replaced else "Approved"
    return Done(f"{verb} in {r.path}:{r.line}: {r.markdown}. Not committed: {r.commit}.")


def drop(vault: Path, key: str) -> Done:
    (r,) = inboxmod.drop_many(vault, [number_of(vault, key)], listed=False)
    return Done(f"Dropped: {r.markdown} ({r.remaining} left)")


def edit_then_approve(vault: Path, key: str, text: str, to: str = "") -> Done:
    """Rewrite the proposal's inbox line as the person edited it, then approve it as
    `brain inbox approve` does. The edit is completed and checked as `brain propose` checks a line
    (a short form gets the proposal's source and date); a refused edit changes nothing."""
    from brain.commands.propose import complete, unfit
    from brain.vault import parse_bullet

    problem = unfit(text)
    if problem:
        raise UsageError(f"the edited bullet was not saved: {problem}", "fix it and try again")
    with edits.locked(vault):
        current = edits.read(vault, INBOX)  # once: the line numbers are this text's
        found = inboxmod.proposals(vault, current)
        match = [p for p in found if redact(p.markdown) == key]
        if not match:
            raise BrainError(f"that proposal is no longer in the inbox: {key}", GONE_HINT)
        p = match[0]
        if not editable(p):
            raise UsageError(
                "only a proposed bullet can be edited", "approve or drop this item as it is"
            )
        try:
            old = parse_bullet(p.markdown)
            source, date = old.source, old.date
        except ValueError:
            source, date = DESK_SOURCE, dt.date.today().isoformat()
        try:
            bullet = complete(text, source, date)
        except ValueError as exc:
            raise UsageError(f"the edited bullet was not saved: {exc}", "fix it") from None
        lines = current.split("\n")
        lines[p.line - 1] = inboxmod.with_marker(bullet, p.to or "")
        edits.write(vault, INBOX, "\n".join(lines), was=current)
        number = p.number
    (r,) = inboxmod.approve_many(vault, [str(number)], _destination(to), listed=False)
    where = f"{r.path}:{r.line}"
    return Done(f"Edited and approved in {where}: {r.markdown}. Not committed: {r.commit}.")


def bulk(vault: Path, keys: Sequence[str], action: str, to: str = "") -> Done:
    """Approve or drop several proposals, one after another (each finds its number anew, as
    the numbers move after every one). Stops at the first that fails, saying how far it got."""
    if action not in ("approve", "drop"):
        raise UsageError(f"unknown bulk action {action!r}", "approve or drop")
    if not keys:
        raise UsageError("no proposal is ticked", "tick the proposals to approve or drop")
    done = 0
    for key in keys:
        try:
            if action == "approve":
                approve(vault, key, to)
            else:
                drop(vault, key)
        except BrainError as exc:
            verb = "approved" if action == "approve" else "dropped"
            raise BrainError(
                f"{done} of {len(keys)} {verb}; then: {exc.message}", exc.hint
            ) from None
        done += 1
    verb = "Approved" if action == "approve" else "Dropped"
    tail = " Not committed: review and commit the vault yourself." if action == "approve" else ""
    return Done(f"{verb} {done} of {len(keys)}.{tail}")


def propose(vault: Path, line: str, to: str = "") -> Done:
    from brain.commands.propose import propose as propose_line

    r = propose_line(vault, line, to=_destination(to), source=DESK_SOURCE)
    if r.action == "proposed":
        return Done(f"Proposed as #{r.number}: {r.markdown}")
    where = "the inbox" if r.action == "queued" else "the vault"
    return Done(f"Already in {where}: {r.markdown}", ok=False)


def add_synonym(vault: Path, term: str, expansion: str) -> Done:
    """Append `term<TAB>expansion` to AI/synonyms.tsv (made with its header when missing) and
    bring the index up to date, so the next find widens `term` at once."""
    from brain import index
    from brain.config import SYNONYMS
    from brain.text import controls
    from brain.vault import parse_synonyms

    term, expansion = " ".join(term.split()), " ".join(expansion.split())
    if not term or not expansion:
        raise UsageError("a synonym row needs a term and its expansion", "fill in both")
    if controls(term + expansion):
        raise UsageError("the row holds control characters", "remove them")
    with edits.locked(vault):
        current = edits.read(vault, SYNONYMS)
        known, _ = parse_synonyms(current)
        if expansion.casefold() in (e.casefold() for e in known.get(term.lower(), [])):
            return Done(f"{SYNONYMS} already widens {term!r} to {expansion!r}", ok=False)
        body = current if current.strip() else "term\texpansion\n"
        if not body.endswith("\n"):
            body += "\n"
        edits.write(vault, SYNONYMS, f"{body}{term}\t{expansion}\n", was=current)
    index.sync(vault)
    return Done(f"Added to {SYNONYMS}: {term} → {expansion}. Not committed.")
