"""`brain propose 'LINE'`: queue a bullet in AI/INBOX.md for a person to approve.

The line is completed where it is short (a handle from its first words, the caller as source,
today as date), must parse as a bullet, and must hold no credential. A proposal the vault already
has (the same handle and fact, in the inbox or a core file) is not queued twice, which is also
what makes `brain import` safe to repeat. A line whose handle a core bullet has is a correction of
that bullet (approving it replaces the bullet), so it is queued only with `--force`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brain import edits
from brain.commands import inbox as inboxmod
from brain.config import INBOX
from brain.errors import BrainError
from brain.text import controls, has_surrogates, undecodable, visible
from brain.vault import keep_aliases
from brain.vocab import SEP, fold, handle_key

if TYPE_CHECKING:
    from brain.vault import Unit

HANDLE_WORDS = 4
_CLAUSE = re.compile(r"[:;,.!?(—]\s|\s[—–-]\s")


@dataclass(frozen=True)
class ProposeResult:
    vault: str
    markdown: str  # the line as queued (or as it would have been)
    to: str | None  # MEMORY | LEARNINGS | TUNINGS when the proposal names one
    action: str  # proposed | queued (already in the inbox) | known (in a core file) | refused
    number: int | None  # its number in `brain inbox`, None when nothing was added
    updates: str | None  # "AI/MEMORY.md:12" when it would replace the bullet of the same handle
    current: str | None  # that bullet as it is now
    problem: str | None  # why it was refused
    # `proposals: team` (brain/team.py): the proposal's branch on the shared remote, whether the
    # remote has it (False: it waits here for the next `brain sync`), the pull request `--pr`
    # opened, and one line on what did not happen (why it waits, why no pull request)
    branch: str | None = None
    sent: bool | None = None
    pr: str | None = None
    note: str | None = None


def first_words(text: str, n: int = HANDLE_WORDS) -> str:
    """A handle from the start of a text: up to `n` words, stopping at the first clause break."""
    head = _CLAUSE.split(text, maxsplit=1)[0]
    words = head.replace("*", "").replace("`", "").split()[:n]
    return " ".join(words).strip(" `_:;,.!?-—–()[]")


def complete(line: str, source: str, date: str) -> str:
    """`line` as a full bullet: `- **handle** — fact — source — date`, adding what is missing.

    The forms the README shows are accepted, with or without the leading `- ` and the `**`:
    `handle — fact`, `handle (aliases: a, b) — fact`, `**handle** fact`, and any of them with
    `— source — YYYY-MM-DD` or only `— YYYY-MM-DD` (the source is then added). A line with no
    handle (no `**` and no ` — `) is not a bullet and raises ValueError saying so, as does
    whatever `vault.parse_bullet`, the vault's one bullet grammar, refuses.
    """
    from brain.vault import parse_bullet, parse_head, valid_date

    text = " ".join(line.split())
    for prefix in ("- ", "* ", "+ "):
        text = text.removeprefix(prefix)
    text = text.strip()
    if text in ("", "-", "*", "+"):
        raise ValueError("the line is empty; write `handle — fact`")
    if not text.startswith("**"):
        head, sep, rest = text.partition(SEP)
        if not sep:
            raise ValueError(
                "it is not a bullet: it has no handle; write `handle — fact` (an em dash with a "
                "space each side) or `**handle** fact`"
            )
        name, paren, aliases = head.partition(" (aliases: ")
        bold = f"**{name.replace('*', '').strip()}**"
        text = f"{bold} (aliases: {aliases}{SEP}{rest}" if paren else f"{bold}{SEP}{rest}"
    handle, names, rest = parse_head("- " + text)
    rest = rest.strip()
    if rest.startswith("(aliases:"):
        raise ValueError("the aliases have no closing `)`; write `handle (aliases: a, b) — fact`")
    rest = rest.removeprefix("—").strip()
    parts = [p.strip() for p in rest.split(SEP)] if rest else []
    if not parts or not parts[0] or (len(parts) == 1 and valid_date(parts[0])):
        raise ValueError("the line has no fact; write `handle — fact`")
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", parts[-1]) and not valid_date(parts[-1]):
        raise ValueError(f"{parts[-1]!r} is not a valid date YYYY-MM-DD")
    if valid_date(parts[-1]):
        if len(parts) == 2:
            parts.insert(1, source)
    else:
        parts += [source, date]
    aliases = f" (aliases: {', '.join(names)})" if names else ""
    bullet = f"- **{handle}**{aliases}{SEP}{SEP.join(parts)}"
    parse_bullet(bullet)
    return bullet


def unfit(line: str) -> str:
    """Why `line` may not be written to the inbox at all ("" when it may): bytes that are not
    UTF-8 (a file cannot hold them), control characters (a terminal would act on them), or what
    the guard refuses (hidden or bidi characters, lookalike letters, images)."""
    if has_surrogates(line):
        return f"it is not valid UTF-8 text ({undecodable(line)})"
    found = controls(line)
    if found:
        return f"it holds control characters ({', '.join(found)}); remove them"
    from brain import guard

    return guard.reason(line)


def _key(handle: str, fact: str) -> tuple[str, str]:
    return handle_key(handle), " ".join(fold(fact).split())


@dataclass
class _Queue:
    """What the inbox and the core files hold, as propose_many checks each line against it."""

    text: str  # AI/INBOX.md
    pending: int  # proposals in it, parseable or not (they are numbered alike)
    known: dict[tuple[str, str], str]  # (handle, fact) key -> "known" (core file) | "queued"
    by_handle: dict[str, Unit]  # folded handle -> the core bullet of that handle
    added: list[str]  # inbox lines this call adds


def _queue(vault: Path) -> _Queue:
    """Read the inbox and the core files once. This runs on every propose: each inbox line is
    parsed once, and none when the inbox is full (every new proposal is refused then, so there
    is nothing to find duplicates of), so a hand-grown inbox of any size costs a line count."""
    from brain.vault import parse_bullet

    text = edits.read(vault, INBOX)
    waiting = [raw for raw in text.split("\n") if edits.is_proposal(raw)]
    q = _Queue(text, len(waiting), {}, {}, [])
    for cb in inboxmod.core_bullets(vault):
        q.known[_key(cb.handle, cb.text)] = "known"
        q.by_handle.setdefault(handle_key(cb.handle), cb)
    for raw in waiting if q.pending < inboxmod.MAX_PENDING else ():
        with contextlib.suppress(ValueError):
            b = parse_bullet(inboxmod.split_marker(raw)[0])
            q.known.setdefault(_key(b.handle, b.fact), "queued")
    return q


def _judge(
    v: str, q: _Queue, line: str, source: str, dest: str, date: str, force: bool
) -> ProposeResult:
    """One line's fate; a proposed line is added to `q.added`."""
    from brain.secrets import redact, scan_line
    from brain.vault import parse_bullet

    why = unfit(line)
    if why:
        from brain.guard import defuse

        return ProposeResult(
            v, defuse(visible(line.strip())), dest or None, "refused", None, None, None, why
        )
    try:
        bullet = complete(line, source, date)
        b = parse_bullet(bullet)
    except ValueError as exc:
        return ProposeResult(v, line.strip(), dest or None, "refused", None, None, None, str(exc))
    secret = scan_line(bullet)
    if secret:
        rule, masked = secret[0]
        why = f"it holds what looks like a credential ({rule}: {masked})"
        return ProposeResult(v, bullet, dest or None, "refused", None, None, None, why)
    old = q.by_handle.get(handle_key(b.handle))
    updates, current = (f"{old.path}:{old.line}", redact(old.raw)) if old else (None, None)
    key = _key(b.handle, b.fact)
    seen = q.known.get(key)
    if seen:
        return ProposeResult(v, bullet, dest or None, seen, None, updates, current, None)
    if old is not None and not force:
        # approving it would replace that bullet: a fact lost unless a correction was meant
        why = taken(b.handle, f"{old.path}:{old.line}")
        return ProposeResult(v, bullet, dest or None, "refused", None, updates, current, why)
    if q.pending + len(q.added) >= inboxmod.MAX_PENDING:
        return ProposeResult(v, bullet, dest or None, "refused", None, None, None, inboxmod.FULL)
    q.known[key] = "queued"
    q.added.append(inboxmod.with_marker(bullet, dest))
    number = q.pending + len(q.added)
    return ProposeResult(v, bullet, dest or None, "proposed", number, updates, current, None)


def taken(handle: str, where: str) -> str:
    """Why a line whose handle a core bullet has is refused, and the two ways on."""
    return (
        f"**{handle}** is already a bullet ({where}); to correct that bullet, propose the line "
        "again with --force (`force` over MCP: approving it replaces the bullet); for another "
        "fact, give it a handle of its own"
    )


def propose_many(
    vault: Path,
    items: Sequence[tuple[str, str]],
    *,
    to: str | None = None,
    date: str = "",
    force: bool = False,
    pr: bool = False,
) -> list[ProposeResult]:
    """Queue each (line, source); one lock and one write for all. Nothing raises for one bad item:
    its result says `refused` and why. A line whose handle a core bullet has is refused unless
    `force`: approving it would replace that bullet (a correction), and a proposer that only
    happened on the same handle would lose the bullet's fact. With `proposals: team` each goes
    to the shared remote as a branch of its own instead (`_to_team`), `pr` opening a pull
    request for it where `gh` can."""
    from brain.config import proposals_mode  # brain.team only when the vault says so

    dest = inboxmod.destination(to)
    date = date or dt.date.today().isoformat()
    shared = proposals_mode(vault) == "team"
    with edits.locked(vault):
        inboxmod.recover(vault)
        q = _queue(vault)
        results = [_judge(str(vault), q, line, source, dest, date, force) for line, source in items]
        if q.added and not shared:
            edits.write(vault, INBOX, edits.with_proposals(q.text, q.added), was=q.text)
    if shared:
        return _to_team(vault, q, results, pr)
    return results


def _to_team(vault: Path, q: _Queue, results: list[ProposeResult], pr: bool) -> list[ProposeResult]:
    """Each proposed result as a proposal branch of the shared remote (brain/team.py): the core
    file it changes as approving it would, checked by lint there first (a refusal is said as
    propose's own); offline, it waits here for the next pass."""
    from dataclasses import replace

    from brain import team
    from brain.vault import parse_bullet

    strict = inboxmod.policy_strict(vault)
    drafts: list[team.Draft] = []
    out = list(results)
    at: list[int] = []
    held = team.open_count(vault)  # as last fetched: the remote is bounded as the inbox is
    for i, r in enumerate(results):
        if r.action != "proposed":
            continue
        if held + len(drafts) >= inboxmod.MAX_PENDING:
            out[i] = replace(r, action="refused", number=None, problem=inboxmod.FULL)
            continue
        b = parse_bullet(r.markdown)
        old = q.by_handle.get(handle_key(b.handle))
        target = old.path if old else inboxmod.DESTINATIONS[r.to or inboxmod.DEFAULT_DESTINATION]
        bullet = keep_aliases(r.markdown, old.raw if old else "")
        why = inboxmod.lint_says(target, bullet, strict)
        if why:
            out[i] = replace(r, action="refused", number=None, problem=why)
            continue
        key = "\0".join(_key(b.handle, b.fact))
        drafts.append(team.Draft(key, bullet, target, _placing(bullet, old.raw if old else "")))
        at.append(i)
    for i, sent in zip(at, team.propose(vault, drafts), strict=True):
        r = out[i]
        url, said = None, sent.note
        if pr and sent.sent and sent.action == "proposed":
            url, why = team.open_pr(vault, team.remote(vault), sent.branch, r.markdown)
            said = said or why or ""
        out[i] = replace(
            r,
            markdown=drafts[at.index(i)].markdown,
            action=sent.action,
            number=None,
            branch=sent.branch,
            sent=sent.sent,
            pr=url,
            note=said or None,
        )
    return out


def _placing(bullet: str, old: str) -> Callable[[str], str]:
    """How a core file's text takes `bullet`: in place of `old` where the file has it, else
    under `## From the inbox`, as `brain inbox approve` writes it."""

    def place(text: str) -> str:
        lines = text.split("\n")
        if old and old in lines:
            lines[lines.index(old)] = bullet
        else:
            lines = inboxmod.insert_approved(lines, bullet)[0]
        return "\n".join(lines)

    return place


def propose(
    vault: Path,
    line: str,
    *,
    to: str | None = None,
    source: str = "",
    force: bool = False,
    pr: bool = False,
) -> ProposeResult:
    """Queue one line; a line that cannot be a bullet or holds a credential is an error, and so
    is one whose handle a bullet has, unless `force` (a deliberate correction of that bullet)."""
    if not source:
        from brain import caller

        source = caller.detect().name
    (result,) = propose_many(vault, [(line, source)], to=to, force=force, pr=pr)
    if result.action == "refused":
        # the inbox's being full, and a handle taken, say what to do themselves
        said = result.problem == inboxmod.FULL or result.updates is not None
        hint = "" if said else "fix the line and propose it again"
        raise BrainError(f"not proposed: {result.problem}", hint)
    return result
