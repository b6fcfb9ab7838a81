"""`brain propose 'LINE'`: queue a bullet in AI/INBOX.md for a person to approve.

The line is completed where it is short (a handle from its first words, the caller as source,
today as date), must parse as a bullet, and must hold no credential. A proposal the vault already
has (the same handle and fact, in the inbox or a core file) is not queued twice, which is also
what makes `brain import` safe to repeat.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from brain.commands import inbox as inboxmod
from brain.config import INBOX
from brain.errors import BrainError, UsageError

HANDLE_WORDS = 4
_BOLD = re.compile(r"^\*\*(?P<handle>[^*]+?)\*\*(?P<aliases> \(aliases: [^)]*\))?(?P<rest>.*)$")
_CLAUSE = re.compile(r"[:;,.!?(—]\s|\s[—–-]\s")
SEP = " — "


@dataclass(frozen=True)
class ProposeResult:
    vault: str
    bullet: str  # the line as queued (or as it would have been)
    to: str  # MEMORY | LEARNINGS | TUNINGS when the proposal names one, else ""
    action: str  # proposed | queued (already in the inbox) | known (in a core file) | refused
    number: int  # its number in `brain inbox`, 0 when nothing was added
    updates: str  # "AI/MEMORY.md:12" when it would replace the bullet of the same handle
    current: str  # that bullet as it is now
    problem: str  # why it was refused, "" otherwise


def first_words(text: str, n: int = HANDLE_WORDS) -> str:
    """A handle from the start of a text: up to `n` words, stopping at the first clause break."""
    head = _CLAUSE.split(text, maxsplit=1)[0]
    words = head.replace("*", "").replace("`", "").split()[:n]
    return " ".join(words).strip(" `_:;,.!?-—–()[]")


def complete(line: str, source: str, date: str) -> str:
    """`line` as a full bullet: `- **handle** — fact — source — date`, adding what is missing.

    `**handle** fact`, `handle — fact` and a bare `fact` (handle from its first words) are all
    accepted; a last part that is a date is kept, and a source is added when only a date was
    given. The result is not validated here (see `vault.parse_bullet`).
    """
    from brain.vault import valid_date

    text = " ".join(line.split())
    for prefix in ("- ", "* ", "+ "):
        text = text.removeprefix(prefix)
    text = text.strip()
    if not text:
        raise ValueError("the line is empty; write `handle — fact`")
    m = _BOLD.match(text)
    if m:
        head = f"**{m['handle'].strip()}**{m['aliases'] or ''}"
        rest = m["rest"].strip().removeprefix("—").strip()
    elif SEP in text:
        handle, rest = text.split(SEP, 1)
        head = f"**{handle.replace('*', '').strip()}**"
    else:
        handle = first_words(text)
        if not handle:
            raise ValueError("the line has no words to make a handle of; write `handle — fact`")
        head, rest = f"**{handle}**", text
    parts = [p.strip() for p in rest.split(SEP)] if rest else []
    if not parts or not parts[0]:
        raise ValueError("the line has no fact; write `handle — fact`")
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", parts[-1]) and not valid_date(parts[-1]):
        raise ValueError(f"{parts[-1]!r} is not a valid date YYYY-MM-DD")
    if valid_date(parts[-1]):
        if len(parts) == 2:
            parts.insert(1, source)
    else:
        parts += [source, date]
    return f"- {head}{SEP}{SEP.join(parts)}"


def _key(handle: str, fact: str) -> tuple[str, str]:
    from brain.commands.pack import fold

    return inboxmod.fold_handle(handle), " ".join(fold(fact).split())


def propose_many(
    vault: Path, items: Sequence[tuple[str, str]], *, to: str | None = None, date: str = ""
) -> list[ProposeResult]:
    """Queue each (line, source); one lock and one write for all. Nothing raises for one bad item:
    its result says `refused` and why."""
    from brain.secrets import redact, scan_line
    from brain.vault import parse_bullet

    dest = (to or "").upper()
    if dest and dest not in inboxmod.DESTINATIONS:
        raise UsageError(f"--to {to} is not a core file", "use MEMORY, LEARNINGS or TUNINGS")
    date = date or dt.date.today().isoformat()
    results: list[ProposeResult] = []
    with inboxmod.locked(vault):
        inboxmod.recover(vault)
        text = inboxmod.read(vault, INBOX)
        queued = inboxmod.proposals(vault, text)
        known: dict[tuple[str, str], str] = {}
        by_handle: dict[str, inboxmod.CoreBullet] = {}
        for cb in inboxmod.core_bullets(vault):
            known[_key(cb.handle, cb.fact)] = "known"
            by_handle.setdefault(inboxmod.fold_handle(cb.handle), cb)
        for p in queued:
            if not p.problem:
                known.setdefault(_key(p.handle, parse_bullet(p.text).fact), "queued")
        added: list[str] = []
        for line, source in items:
            v = str(vault)
            try:
                bullet = complete(line, source, date)
                b = parse_bullet(bullet)
            except ValueError as exc:
                results.append(ProposeResult(v, line.strip(), dest, "refused", 0, "", "", str(exc)))
                continue
            secret = scan_line(bullet)
            if secret:
                rule, masked = secret[0]
                why = f"it holds what looks like a credential ({rule}: {masked})"
                results.append(ProposeResult(v, bullet, dest, "refused", 0, "", "", why))
                continue
            old = by_handle.get(inboxmod.fold_handle(b.handle))
            updates, current = (f"{old.path}:{old.line}", redact(old.raw)) if old else ("", "")
            seen = known.get(_key(b.handle, b.fact))
            if seen:
                results.append(ProposeResult(v, bullet, dest, seen, 0, updates, current, ""))
                continue
            known[_key(b.handle, b.fact)] = "queued"
            added.append(inboxmod.with_marker(bullet, dest))
            number = len(queued) + len(added)
            results.append(ProposeResult(v, bullet, dest, "proposed", number, updates, current, ""))
        if added:
            if not text:
                from brain.hooks import starter_file

                text = starter_file("INBOX.md")
            body = text.rstrip("\n")
            last = body.rsplit("\n", 1)[-1]
            gap = "" if not body else "\n" if inboxmod.is_proposal(last) else "\n\n"
            inboxmod.write(vault, INBOX, body + gap + "\n".join(added) + "\n")
    return results


def propose(vault: Path, line: str, *, to: str | None = None, source: str = "") -> ProposeResult:
    """Queue one line; a line that cannot be a bullet or holds a credential is an error."""
    if not source:
        from brain import caller

        source = caller.detect().name
    (result,) = propose_many(vault, [(line, source)], to=to)
    if result.action == "refused":
        raise BrainError(f"not proposed: {result.problem}", "fix the line and propose it again")
    return result
