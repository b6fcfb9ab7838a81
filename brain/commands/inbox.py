"""`brain inbox`: the queue of proposed bullets in AI/INBOX.md, and approving or dropping them.

Agents propose (`brain propose`, `brain import`); a person approves. Every change to the inbox and
every approval runs under one lock per vault (a file in the state dir), and every file is
rewritten whole through a temp file swapped in only over what brain read (brain.edits.write: a line
a person typed meanwhile is merged in), so two agents proposing at once never lose a line, nor does
a person editing the file, and a reader never sees half a file.

An approval touches two files. It first records its intent in a journal beside the lock, then
writes the core file, then the inbox, then deletes the journal. Each step is idempotent (the core
file is checked for the bullet before it is added; the inbox line is removed only if present), so
a crash anywhere is finished by the next inbox command, which replays the journal before doing
anything else: the bullet never ends up in neither file, and never stays in both.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain.commands import hygiene
from brain.config import CORE_FILES, INBOX
from brain.edits import (
    is_proposal,
    locked,
    read,
    read_journal,
    reindex,
    state_file,
    without,
    write,
)
from brain.errors import BrainError, UsageError
from brain.files import confine
from brain.secrets import redact
from brain.text import controls, listed
from brain.vault import APPROVED_HEADING, keep_aliases
from brain.vocab import handle_key

if TYPE_CHECKING:
    from brain.vault import Unit

DESTINATIONS = {"MEMORY": CORE_FILES[0], "LEARNINGS": CORE_FILES[1], "TUNINGS": CORE_FILES[2]}


def destination(to: str | None) -> str:
    """`to` as a key of DESTINATIONS ("" for none), or a UsageError in words every surface can
    show: the CLI's --to, the desk's form and the MCP tool's argument all pass it."""
    dest = (to or "").upper()
    if dest and dest not in DESTINATIONS:
        raise UsageError(
            f"the destination {to!r} is not a core file", "use MEMORY, LEARNINGS or TUNINGS"
        )
    return dest


DEFAULT_DESTINATION = "MEMORY"
# A person reviews every proposal: past this many waiting, more are refused until some are
# approved or dropped (it also bounds what every propose reads to check for duplicates).
MAX_PENDING = 1000
FULL = (
    f"the inbox already holds {MAX_PENDING} proposals, the most it keeps; review them with "
    "`brain inbox` (approve or drop) before proposing more"
)
_MARK = re.compile(r"\s*<!-- brain:to=([A-Z]+) -->\s*$")
_HEADING = re.compile(r"^(#{1,6})\s")
_TEAM_ID = re.compile(r"(?=.*[a-f])[0-9a-f]{12}")  # brain.team.proposal_id's, not a number


# --- the approval's journal (brain.edits holds the files and the lock) ----------------------------


def journal_path(vault: Path) -> Path:
    return state_file(vault, ".approve.json")


# --- reading proposals ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    number: int  # 1-based position in the queue (what approve and drop take)
    line: int  # 1-based line in AI/INBOX.md
    markdown: str  # the bullet as proposed, without brain's destination marker
    to: str | None  # MEMORY | LEARNINGS | TUNINGS as the proposal asked, None for the default
    handle: str | None  # None for a line that does not parse
    problem: str | None  # why the line does not parse as a bullet
    updates: str | None  # "AI/MEMORY.md:12" when a core bullet has the same handle
    current: str | None  # that bullet's line as it is now
    # bullet (a proposed bullet) | hygiene (a `brain tend` item) | team (a proposal branch of
    # the shared remote, `proposals: team`) | unsent (a team proposal waiting here to be sent)
    kind: str = "bullet"
    by: str | None = None  # a team proposal's author, as its commit names them
    at: str | None = None  # when it was proposed
    branch: str | None = None  # its branch on the remote (brain/proposal-<id>)


def split_marker(line: str) -> tuple[str, str]:
    """(bullet, destination) of an inbox line; the destination is "" when none is marked."""
    m = _MARK.search(line)
    if not m or m.group(1) not in DESTINATIONS:
        return line.rstrip(), ""
    return line[: m.start()].rstrip(), m.group(1)


def with_marker(bullet: str, to: str) -> str:
    return f"{bullet} <!-- brain:to={to} -->" if to else bullet


def core_bullets(vault: Path) -> list[Unit]:
    """Every parseable bullet of the three core files, with where it is (its fact whole)."""
    from brain.vault import Unit, parse_bullet

    out: list[Unit] = []
    for rel in CORE_FILES:
        for number, raw in enumerate(read(vault, rel).split("\n"), start=1):
            if not raw.startswith("- **"):
                continue
            try:
                b = parse_bullet(raw)
            except ValueError:
                continue
            out.append(
                Unit(rel, number, "bullet", b.fact, "", b.handle, b.aliases, b.source, b.date, raw)
            )
    return out


def proposals(vault: Path, text: str | None = None) -> list[Proposal]:
    from brain.vault import parse_bullet

    text = read(vault, INBOX) if text is None else text
    by_handle: dict[str, Unit] = {}
    for cb in core_bullets(vault):
        by_handle.setdefault(handle_key(cb.handle), cb)
    out: list[Proposal] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not is_proposal(raw):
            continue
        item = hygiene.parse_item(raw) if "<!-- brain:tend " in raw else None
        if item is not None:
            n = len(out) + 1
            out.append(
                Proposal(
                    n, number, f"tend: {item.summary}", None, None, None, None, None, "hygiene"
                )
            )
            continue
        bullet, to = split_marker(raw)
        try:
            b = parse_bullet(bullet)
        except ValueError as exc:
            out.append(
                Proposal(len(out) + 1, number, bullet, to or None, None, str(exc), None, None)
            )
            continue
        old = by_handle.get(handle_key(b.handle))
        where, current = (f"{old.path}:{old.line}", old.raw) if old else (None, None)
        # propose refuses these; a line pasted in by hand is named as approve would refuse it
        found = controls(bullet)
        problem = f"control characters ({', '.join(found)}); remove them" if found else None
        out.append(
            Proposal(len(out) + 1, number, bullet, to or None, b.handle, problem, where, current)
        )
    return out


def team_proposals(vault: Path, start: int) -> tuple[list[Proposal], dict[int, Any], str]:
    """The shared remote's open proposals and this clone's unsent ones (brain/team.py), numbered
    after the inbox's `start`; with them, by number, what approving and dropping need, and one
    line when the remote could not be asked. Nothing when the vault does not say `proposals:
    team`."""
    from brain.config import proposals_mode

    if proposals_mode(vault) != "team":  # brain.team is imported only for a team's vault
        return [], {}, ""
    from brain import team
    from brain.vault import parse_bullet

    listed_now = team.listing(vault)
    by_handle: dict[str, Unit] = {}
    for cb in core_bullets(vault):
        by_handle.setdefault(handle_key(cb.handle), cb)
    names = {path: name for name, path in DESTINATIONS.items()}
    out: list[Proposal] = []
    found: dict[int, Any] = {}
    for t in listed_now.proposals:
        number = start + len(out) + 1
        handle, where, current, problem = None, None, None, t.problem or None
        try:
            b = parse_bullet(t.markdown)
            handle = b.handle
            old = by_handle.get(handle_key(b.handle))
            if old is not None and old.path == t.target:
                where, current = f"{old.path}:{old.line}", old.raw
        except ValueError as exc:
            problem = problem or str(exc)
        if t.target not in names and not problem:
            problem = f"it changes {t.target}, which is not a core file"
        kind = "team" if t.sent else "unsent"
        to = names.get(t.target)
        out.append(
            Proposal(
                number,
                0,
                t.markdown,
                to,
                handle,
                problem,
                where,
                current,
                kind,
                t.by,
                t.at,
                t.branch,
            )
        )
        found[number] = t
    return out, found, listed_now.note


# --- the inbox command ---------------------------------------------------------------------------


@dataclass(frozen=True)
class InboxResult:
    vault: str
    path: str  # AI/INBOX.md
    proposals: tuple[Proposal, ...]
    recovered: str | None  # an interrupted approval this run finished
    note: str | None = None  # `proposals: team`: the remote could not be asked (one line)


@dataclass(frozen=True)
class ApproveResult:
    vault: str
    number: int
    markdown: str
    path: str  # the core file it went into
    line: int  # where it is there
    replaced: str | None  # the bullet it replaced (an update), None for a new one
    remaining: int  # proposals still in the inbox
    commit: str  # the person commits: brain never does (a team approval: what was pushed)
    # every file it changed (a hygiene item may change several), for one line of advice when
    # several are approved at once; not a JSON key (`commit` names them)
    files: tuple[str, ...] = field(default=(), metadata={"json": False})
    pushed: str | None = None  # a team approval: the remote, branch and merge commit it pushed


@dataclass(frozen=True)
class DropResult:
    vault: str
    number: int
    markdown: str
    remaining: int


def inbox(vault: Path, *, remember: bool = True) -> InboxResult:
    """The proposals, numbered as approve and drop take them. In a team's vault the listing is
    kept as the one this machine's person read (brain.team.remember_listed) unless `remember`
    is False: a look-up no one reads (the desk finding a click's proposal) keeps the last."""
    from dataclasses import replace

    with locked(vault):
        recovered = recover(vault)
        found = proposals(vault)
    shared, _, note = team_proposals(vault, len(found))
    found += shared
    if remember:
        _remember(vault, [listed_as(p) for p in found])
    strict = _listing_strict(vault)
    # a listing: a credential in a hand-edited inbox or in the bullet it updates is masked; a
    # proposal a strict vault's lint would refuse says why, as approve will
    shown = [
        replace(
            p,
            markdown=redact(p.markdown),
            current=p.current and redact(p.current),
            problem=p.problem or (_lint_refusal(p, None, strict) or None),
        )
        for p in found
    ]
    return InboxResult(str(vault), INBOX, tuple(shown), recovered or None, note or None)


def _stop_if_recovered(bullet: str) -> None:
    """After finishing an interrupted approval the numbers have moved: act on none of them."""
    if bullet:
        raise BrainError(
            f"finished an approval a crash had interrupted ({bullet}); the numbers have changed",
            "run `brain inbox` to see them, then approve or drop again",
        )


def pick(words: Sequence[str], count: int) -> list[int]:
    """The proposal numbers `words` name, each `N`, `N-M` (both ends included) or `all`, among
    `count` proposals: ascending, each once. A word that names none is a UsageError."""
    if not count:
        raise BrainError("the inbox is empty", "agents add to it with `brain propose`")
    chosen: set[int] = set()
    for word in words:
        if word == "all":
            chosen.update(range(1, count + 1))
            continue
        low, dash, high = word.partition("-")
        if not (low.isdecimal() and (high.isdecimal() or not dash)):
            raise UsageError(
                f"{word!r} is not a proposal number, a range such as 1-3, or all",
                "run `brain inbox` to see the numbers",
            )
        first, last = int(low), int(high) if dash else int(low)
        if first > last:
            raise UsageError(f"the range {word} runs backwards", f"write it {last}-{first}")
        if first < 1 or last > count:
            wrong = first if first < 1 else last
            raise UsageError(
                f"there is no proposal {wrong}; the inbox holds 1 to {count}",
                "run `brain inbox` to see the numbers",
            )
        chosen.update(range(first, last + 1))
    return sorted(chosen)


def by_branch(words: Sequence[str], shared: Sequence[Proposal]) -> list[str]:
    """`words` with each that names a team proposal by its branch (`brain/proposal-<id>`) or id
    turned into its number: a number moves when a proposal before it goes, a branch never does."""
    numbers: dict[str, str] = {}
    named = [w for w in words if w.startswith("brain/") or _TEAM_ID.fullmatch(w)]
    if not shared and not named:
        return list(words)  # numbers: brain.team is not imported (a vault without a team)
    from brain.team import PREFIX

    for p in shared:
        if p.branch:
            numbers[p.branch] = numbers[p.branch.removeprefix(PREFIX)] = str(p.number)
    for word in named:
        # one approved or dropped elsewhere says so, even when no other is open
        if word not in numbers:
            branch = word if word.startswith(PREFIX) else PREFIX + word
            raise BrainError(
                f"no open proposal is on {branch}: approved or dropped already, or never sent",
                "run `brain inbox` to see what is open",
            )
    return [numbers.get(word, word) for word in words]


def listed_as(p: Proposal) -> str:
    """What a listing keeps of proposal `p` to know it again: a team proposal's branch, else
    that it is a line of the inbox, of its kind. Only how many there are counts for those (one
    that came or left moves every number after it): a person rewrites a line, as a refusal
    tells them to, and it is still the proposal at that number."""
    if p.kind in ("team", "unsent") and p.branch:
        return p.branch
    return f"{INBOX}:{p.kind}"


def _remembered(vault: Path) -> tuple[str, ...] | None:
    from brain.config import proposals_mode

    if proposals_mode(vault) != "team":  # brain.team is imported only for a team's vault
        return None
    from brain import team

    return team.remembered(vault)


def _remember(vault: Path, keys: Sequence[str]) -> None:
    """What a listing showed (`listed_as` of each, by number), for the numbers typed after it."""
    from brain.config import proposals_mode

    if proposals_mode(vault) != "team":
        return
    from brain import team

    with contextlib.suppress(OSError):  # a state dir that cannot be written: numbers as now
        team.remember_listed(vault, keys)


def _forget(vault: Path, shown: Sequence[str] | None, acted: Sequence[Proposal]) -> None:
    """The listing the person read, less the proposals this command approved or dropped: the
    numbers move up as the inbox's own do."""
    if shown is None:
        return
    left = list(shown)
    for key in map(listed_as, acted):
        if key in left:
            left.remove(key)  # one each: two inbox lines may read alike
    _remember(vault, left)


def as_listed(
    words: Sequence[str], shown: Sequence[str] | None, now: Sequence[Proposal], verb: str
) -> None:
    """Refuse, before anything changes, numbers that name other proposals than the listing the
    person read (`shown`, brain.team.remembered; `now`: every proposal as numbered now): the
    fetch before approve or drop renumbers the remote's when one was approved or dropped on
    another machine meanwhile (`drop 1` would drop what was #2) or when one arrived (`drop all`
    would drop one never read), and a line that came into or left AI/INBOX.md, numbered before
    them, shifts them all. A clone that never listed (None) takes the numbers as they are now;
    a branch or id never moves."""
    plain = [w for w in words if not (w.startswith("brain/") or _TEAM_ID.fullmatch(w))]
    if shown is None or not plain:
        return
    keys = [listed_as(p) for p in now]
    chosen = pick(plain, max(len(shown), len(keys)))  # `drop 2` of two listed, one left: why
    upto = len(keys) if "all" in plain else max(chosen, default=0)
    if list(shown[:upto]) == keys[:upto] and ("all" not in plain or len(shown) == upto):
        return
    both = min(len(shown), len(keys))
    first = next((i for i in range(upto) if i >= both or shown[i] != keys[i]), upto)
    if first >= len(shown):
        why = f"{len(keys) - len(shown)} more arrived"
    elif not shown[first].startswith("brain/") or (
        first < len(keys) and not keys[first].startswith("brain/")
    ):
        why = f"a line came into or left {INBOX}"
    elif shown[first] in keys:
        why = f"#{first + 1} was {shown[first]}, now #{keys.index(shown[first]) + 1}"
    else:
        why = f"#{first + 1}, {shown[first]}, was approved or dropped on another machine"
    raise BrainError(
        f"the proposals changed since the inbox was listed ({why}): nothing {verb}",
        "run `brain inbox` to read them as they are now, or name a proposal by its branch",
    )


def drop(vault: Path, number: int) -> DropResult:
    return drop_many(vault, [str(number)])[0]


def drop_many(vault: Path, words: Sequence[str], *, listed: bool = True) -> tuple[DropResult, ...]:
    """Drop the proposals `words` name (see `pick`), numbered as the inbox lists them before
    the command: all of them in one write of the inbox, or none when a word is wrong. A team's
    numbers are its last listing's (`as_listed`) unless `listed` is False: the desk found them
    in the inbox as it is now, by what its page showed."""
    with locked(vault):
        _stop_if_recovered(recover(vault))
        text = read(vault, INBOX)
        found = proposals(vault, text)
        local = len(found)
        shown = _remembered(vault)
        shared, teams, _ = team_proposals(vault, local)
        found += shared
        as_listed(words, shown if listed else None, found, "dropped")
        numbers = pick(by_branch(words, shared), len(found))
        gone = {found[n - 1].line for n in numbers if n <= local}
        if gone:
            write(vault, INBOX, without(text, gone), was=text)
    dropped = [n for n in numbers if n <= local]
    try:
        for n in numbers:  # each a push of its own: the ones before stay dropped if one fails
            if n > local:
                from brain import team

                try:
                    team.drop(vault, teams[n].id, teams[n].commit)
                except BrainError as exc:
                    if not dropped:
                        raise
                    which = ", ".join(f"#{d}" for d in dropped)
                    raise BrainError(
                        f"dropped {which}, then stopped: {exc.message}", exc.hint
                    ) from exc
                dropped.append(n)
    finally:
        _forget(vault, shown, [found[n - 1] for n in dropped])
    remaining = len(found) - len(numbers)
    # redacted: a proposal may be dropped for holding a credential
    return tuple(
        DropResult(str(vault), n, redact(found[n - 1].markdown), remaining) for n in numbers
    )


def approve(vault: Path, number: int, to: str | None = None) -> ApproveResult:
    """Move proposal `number` into a core file (an update replaces the bullet of the same handle
    in place, wherever it is), remove it from the inbox, and bring the index up to date."""
    return approve_many(vault, [str(number)], to)[0]


def approve_many(
    vault: Path, words: Sequence[str], to: str | None = None, *, listed: bool = True
) -> tuple[ApproveResult, ...]:
    """Approve the proposals `words` name (see `pick`), numbered as the inbox lists them before
    the command (`listed`: as `drop_many`), in that order. Every one is checked first, so a
    wrong word or a proposal that cannot be approved changes nothing; each approval is then
    journalled on its own (a crash is finished by the next inbox command), and a hygiene item
    that fails to apply stops the run, saying which were approved."""
    destination(to)
    done: list[ApproveResult] = []
    found: list[Proposal] = []
    local, shown = 0, None
    try:
        with locked(vault):
            _stop_if_recovered(recover(vault))
            text = read(vault, INBOX)
            found = proposals(vault, text)
            local = len(found)
            shown = _remembered(vault)
            shared, teams, _ = team_proposals(vault, local)
            found += shared
            as_listed(words, shown if listed else None, found, "approved")
            numbers = pick(by_branch(words, shared), len(found))
            strict = policy_strict(vault)
            for n in numbers:
                _check(vault, n, found[n - 1], to, strict)
            lines = text.split("\n")
            for n, raw in [(n, lines[found[n - 1].line - 1]) for n in numbers if n <= local]:
                done.append(_approve_one(vault, n, _now(vault, raw), to, strict))
        # the inbox's first, then the remote's, each merged and pushed on its own (not under
        # the lock: the pass that brings the merge here takes it)
        left = len(found) - len(done)
        for n in numbers:
            if n > local:
                left -= 1
                done.append(_approve_team(vault, n, found[n - 1], teams[n], left))
    except BrainError as exc:
        if not done:
            raise
        which = ", ".join(f"#{r.number}" for r in done)
        raise BrainError(f"approved {which}, then stopped: {exc.message}", exc.hint) from exc
    finally:
        _forget(vault, shown, [found[r.number - 1] for r in done])
        if done:
            reindex(vault)
    return tuple(done)


def _now(vault: Path, raw: str) -> Proposal:
    """The proposal on inbox line `raw` as it reads now: an approval before it in the same run
    moved the lines, and may have added the handle it updates."""
    lines = read(vault, INBOX).split("\n")
    for p in proposals(vault, "\n".join(lines)):
        if lines[p.line - 1] == raw:
            return p
    raise BrainError(f"{raw!r} left {INBOX} while it was being approved", "run `brain inbox`")


def _target(p: Proposal, to: str | None) -> str:
    if p.kind in ("team", "unsent"):  # its file was chosen when it was proposed
        return DESTINATIONS[p.to or DEFAULT_DESTINATION]
    if p.updates:
        return p.updates.rsplit(":", 1)[0]
    return DESTINATIONS[(to or p.to or DEFAULT_DESTINATION).upper()]


def _check(vault: Path, number: int, p: Proposal, to: str | None, strict: bool) -> None:
    """What would refuse proposal `number`, before anything is written: what `brain lint` (strict
    when the vault's policy says so) would refuse in the bullet as it would be written."""
    if p.kind == "hygiene":
        if to is not None:
            raise UsageError("--to goes with a proposed bullet, not a hygiene item", "drop --to")
        return
    if p.kind in ("team", "unsent"):
        if to is not None:
            raise UsageError(
                f"proposal {number} is a branch of the shared remote, whose file was chosen when "
                "it was proposed",
                "drop --to",
            )
        if p.kind == "unsent":
            raise BrainError(
                f"proposal {number} waits on this machine to be sent to the remote: nothing "
                "approved",
                "`brain sync` sends it; approve it then",
            )
        if p.problem:
            raise BrainError(
                f"proposal {number} ({p.branch}) is not approved: {p.problem}",
                f"drop it with `brain inbox drop {number}`",
            )
    if p.problem:
        raise BrainError(
            f"proposal {number} is not a valid bullet: {p.problem}",
            f"fix line {p.line} of {INBOX}, or drop it with `brain inbox drop {number}`",
        )
    _check_secret(p.markdown, number)
    _check_guard(p, number)
    why = _lint_refusal(p, to, strict)
    if why:
        raise BrainError(
            f"proposal {number} is not approved: {why}",
            _next_step(
                p,
                number,
                f"rewrite line {p.line} of {INBOX} as plain prose, or drop it with "
                f"`brain inbox drop {number}`",
            ),
        )
    confine(vault / _target(p, to), vault)  # before any journal: a refused write leaves none


def policy_strict(vault: Path) -> bool:
    """Whether the vault's lint is strict (brain/lint.py decides, for both)."""
    from brain.lint import policy_strict as strict

    return strict(vault)


def _listing_strict(vault: Path) -> bool:
    """The policy for a listing: a policy file that does not parse lists nothing as refused
    (approve says what is wrong with the file)."""
    try:
        return policy_strict(vault)
    except BrainError:
        return False


def _lint_refusal(p: Proposal, to: str | None, strict: bool) -> str:
    """Why `brain lint` would refuse proposal `p` once written where approve writes it ("" when
    it would pass), so that approving never writes a line the next commit's lint refuses."""
    if p.kind == "hygiene" or p.handle is None:
        return ""
    return lint_says(_target(p, to), keep_aliases(p.markdown, p.current or ""), strict)


def lint_says(rel: str, bullet: str, strict: bool) -> str:
    """Why `brain lint` refuses `bullet` in core file `rel` ("" when it passes): lint's own check
    of one bullet (brain/lint.py `check_bullet`), not a copy of it."""
    from brain.lint import POLICY, check_bullet

    problems = check_bullet(rel, bullet, strict=strict)
    if not problems:
        return ""
    said = "; ".join(dict.fromkeys(x.message for x in problems))
    if strict:
        return f"`brain lint --strict` ({POLICY} says `lint: strict`) would refuse it: {said}"
    return f"`brain lint` would refuse it: {said}"


def _approve_one(
    vault: Path, number: int, p: Proposal, to: str | None, strict: bool
) -> ApproveResult:
    """Approve `p` (under the lock, checked); the index follows afterwards."""
    if p.kind == "hygiene":
        return _approve_item(vault, number, p, strict)
    _check(vault, number, p, to, strict)
    target = _target(p, to)
    raw = read(vault, INBOX).split("\n")[p.line - 1]
    bullet = keep_aliases(p.markdown, p.current or "")
    intent = {"bullet": bullet, "target": target, "replace": p.current or "", "inbox": raw}
    _write_journal(vault, intent)
    line = _apply(vault, intent)
    remaining = len(proposals(vault))
    return ApproveResult(
        str(vault),
        number,
        bullet,
        target,
        line,
        redact(p.current) if p.current else None,
        remaining,
        commit_advice(vault, [target]),
        (target,),
    )


def _approve_team(vault: Path, number: int, p: Proposal, t: Any, left: int) -> ApproveResult:
    """Merge a proposal branch of the shared remote into the vault's branch there and push
    (brain/team.py), then bring it here with a receive pass."""
    from brain import gitsync, team

    merged = team.approve(vault, t.id, t.commit)
    lines = merged.text.split("\n")
    line = lines.index(merged.bullet) + 1 if merged.bullet in lines else 0
    r = team.remote(vault)
    pushed = f"{r.name if r else 'the remote'} {r.branch if r else ''} {merged.commit[:10]}"
    try:
        here = gitsync.run(vault, "receive").summary
    except BrainError as exc:
        here = exc.message
    advice = f"nothing to commit; on this machine: {here}"
    return ApproveResult(
        str(vault),
        number,
        merged.bullet,
        merged.target,
        line,
        # the branch's own word: this clone may not have received the bullet it replaced yet
        redact(merged.replaced or p.current or "") or None,
        left,
        advice,
        (merged.target,),
        pushed,
    )


def _approve_item(vault: Path, number: int, p: Proposal, strict: bool) -> ApproveResult:
    """Apply a `brain tend` hygiene item (under the lock): every file it changes, or none."""
    raw = read(vault, INBOX).split("\n")[p.line - 1]
    item = hygiene.parse_item(raw)
    if item is None:  # proposals() parsed it a moment ago under this lock
        raise BrainError(
            f"line {p.line} of {INBOX} is no longer a hygiene item", "run `brain inbox`"
        )
    try:
        done = hygiene.apply(vault, item, raw, lambda rel, line: lint_says(rel, line, strict))
    except BrainError as exc:
        raise BrainError(
            f"hygiene item {number} was not applied: {exc.message}",
            f"drop it with `brain inbox drop {number}`; the next `brain tend` looks again",
        ) from exc
    remaining = len(proposals(vault))
    return ApproveResult(
        str(vault),
        number,
        p.markdown,
        done.path,
        done.line,
        None,  # a hygiene item replaces no one bullet
        remaining,
        commit_advice(vault, done.files),
        done.files,
    )


def commit_advice(vault: Path | str, files: Sequence[str]) -> str:
    """What the person does after an approval (brain never commits), naming the files once:
    `review and commit AI/MEMORY.md and AI/LEARNINGS.md in the vault yourself (...)`. The
    command adds the files by name: a file brain made (AI/TENDED.md, AI/DROPPED.md) is new to
    git, and `commit -p` or `add -p` pass over a file git does not track yet. `commit -v` shows
    the diff in the editor, for the review."""
    unique = list(dict.fromkeys(files))
    where = shlex.quote(str(vault))
    paths = " ".join(shlex.quote(f) for f in unique)
    command = f"git -C {where} add -- {paths} && git -C {where} commit -v"
    return f"review and commit {listed(unique)} in the vault yourself ({command})"


def _check_secret(bullet: str, number: int) -> None:
    from brain.secrets import scan_line

    found = scan_line(bullet)
    if found:
        rule, masked = found[0]
        raise BrainError(
            f"proposal {number} holds what looks like a credential ({rule}: {masked})",
            f"drop it with `brain inbox drop {number}` and keep secrets in a password manager",
        )


def _check_guard(p: Proposal, number: int) -> None:
    """A proposal edited by hand is checked as `brain propose` checks a new one (brain/guard.py)."""
    from brain.guard import reason

    why = reason(p.markdown)
    if why:
        raise BrainError(
            f"proposal {number} is not approved: {why}",
            _next_step(
                p,
                number,
                f"fix line {p.line} of {INBOX}, or drop it with `brain inbox drop {number}`",
            ),
        )


def _next_step(p: Proposal, number: int, here: str) -> str:
    """`here`, the next step for a proposal approve refuses, unless it is a team proposal: a
    branch of the shared remote has no inbox line to fix (its `line` is 0)."""
    if p.kind in ("team", "unsent"):
        return f"drop it with `brain inbox drop {number}`, then propose it again as it should read"
    return here


def _write_journal(vault: Path, intent: dict[str, str]) -> None:
    from brain.files import write_atomic

    write_atomic(journal_path(vault), json.dumps(intent, ensure_ascii=False))


def _apply(vault: Path, intent: dict[str, str]) -> int:
    """Carry out a journalled approval, each step only if still needed; returns the bullet's line
    in the core file. Deletes the journal last."""
    target, bullet, old = intent["target"], intent["bullet"], intent["replace"]
    core = read(vault, target)
    lines = core.split("\n")
    if bullet in lines:
        at = lines.index(bullet)
    else:
        if old and old in lines:
            at = lines.index(old)
            lines[at] = bullet
        else:
            lines, at = insert_approved(lines, bullet)
        write(vault, target, "\n".join(lines), was=core)
        # where the bullet is now: a line a person added meanwhile may have been merged in above
        now = read(vault, target).split("\n")
        at = now.index(bullet) if bullet in now else at
    _after_core_write(vault)
    inbox_text = read(vault, INBOX)
    inbox_lines = inbox_text.split("\n")
    if intent["inbox"] in inbox_lines:
        gone = {inbox_lines.index(intent["inbox"]) + 1}
        write(vault, INBOX, without(inbox_text, gone), was=inbox_text)
    with contextlib.suppress(FileNotFoundError):
        journal_path(vault).unlink()
    return at + 1


def _after_core_write(vault: Path) -> None:
    """A seam for the crash test: nothing happens here."""


def insert_approved(lines: list[str], bullet: str) -> tuple[list[str], int]:
    """`lines` with `bullet` at the end of the `## From the inbox` section (made at the end of the
    file when missing), so an approved bullet never lands in an unrelated section; the person moves
    it where it belongs when they commit. Returns the lines and the bullet's 0-based index."""
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    if APPROVED_HEADING not in lines:
        lines += ["", APPROVED_HEADING, ""] if lines else [APPROVED_HEADING, ""]
        lines += [bullet, ""]
        return lines, len(lines) - 2
    start = lines.index(APPROVED_HEADING)
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if (m := _HEADING.match(lines[i])) and len(m.group(1)) <= 2
        ),
        len(lines),
    )
    at = end
    while at > start + 1 and not lines[at - 1].strip():
        at -= 1
    if at == start + 1:
        lines.insert(at, "")
        at += 1
    lines.insert(at, bullet)
    if at + 1 < len(lines) and lines[at + 1].strip():
        lines.insert(at + 1, "")
    lines.append("")
    return lines, at


def recover(vault: Path) -> str:
    """Finish an approval a crash interrupted (call under the lock); returns its bullet or ""."""
    finished = hygiene.recover(vault)
    if finished:
        reindex(vault)
        return finished
    path = journal_path(vault)
    intent = read_journal(path)
    if intent is None:
        return ""
    if not isinstance(intent, dict) or not all(
        isinstance(intent.get(k), str) for k in ("bullet", "target", "replace", "inbox")
    ):
        with contextlib.suppress(OSError):
            path.unlink()
        return ""
    _apply(vault, intent)
    reindex(vault)
    return str(intent["bullet"])
