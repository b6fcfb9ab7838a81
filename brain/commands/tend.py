"""`brain tend`: the sweep that keeps the vault true, with a person approving every change of
meaning.

It reads verify's claims, learn's aliases and doctor's findings, then queues in the inbox, as
hygiene items a person approves like a proposal (`brain inbox approve N`):

  - `alias`: give a bullet the words several sessions reached it by (its body, never its names).
    Query words are what agents typed, so they are proposed, not written: only a vault whose
    AI/config.yaml says `aliases: apply` has them applied at once (a line edit, logged in
    AI/TENDED.md), and then only when the bullet's new line passes `brain lint --strict`. An
    alias the guard or strict lint flags is neither proposed nor applied;
  - `supersede`: mark a note that newer bullets correct (a header citing them; brain/supersede.py's
    shadow relation finds the notes),
  - `drop`: move a bullet whose every claim failed (two failed claims at least) to AI/DROPPED.md,
  - `merge`: bullets that share a handle and say the same thing (`same_thing`) become the newest
    one (the others' aliases join it; the others go to AI/DROPPED.md, their lines quoted in the
    item); bullets that only share a handle are left alone (lint and doctor name them),
  - `date`: date today the bullets whose every claim checked here passed and whose date is older
    than `DATE_AFTER_DAYS`,
  - `check`: a bullet whose code moved (commits touched the files it names after its date,
    brain/drift.py): a person reads the code and approves (the bullet is dated today, it still
    holds) or edits the bullet and drops the item.

The items, and applying one once approved, are brain/commands/hygiene.py's. `--dry-run` computes
the same plan as a real run (`_plan`) and writes nothing.

`--daily` is the quiet sweep the hooks start: at most once a day (a stamp in the state dir), one
at a time (a lock), bounded in time (`DAILY_SECONDS`; it stops early and records so), exit 0;
`BRAIN_NO_TEND` turns it off (a person's `brain tend` still sweeps). `--quick` is the same
bounded pass (the budget, learning by keyword alone) run by a person: any time, with its report.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brain import edits
from brain.commands.hygiene import (
    Item,
    Target,
    applied_keys,
    line_hash,
    log_tended,
    make,
    parse_item,
    with_aliases,
)
from brain.config import CORE_FILES, DROPPED, INBOX, index_path, state_dir, vault_settings
from brain.text import noun, plural

if TYPE_CHECKING:
    import sqlite3

    from brain.commands.advisories import Superseded
    from brain.commands.learn import AliasProposal
    from brain.drift import Drift
    from brain.vault import Unit

DATE_AFTER_DAYS = 30  # a bullet verified again within a month keeps its date
DROP_MIN_FAILED = 2  # failed claims before a bullet whose every claim failed is proposed dropped
# Two bullets of one handle say the same thing when the kept one's fact holds this share of the
# dropped one's telling words (the handle's words aside), or their stored vectors' cosine (on
# MiniLM's scale) reaches COSINE_SAME. Measured on 20 pairs of bullets sharing a handle
# (tests/test_tend.py SAME_HANDLE: 10 restatements, 10 other facts about the same thing): the
# restatements hold .50-1.00 of the words and .85-.99 by cosine (all-MiniLM-L6-v2, handle and
# fact as the index embeds them), the other facts .00-.14 and .29-.70.
COVERAGE_SAME = 0.4
COSINE_SAME = 0.8
ITEMS_MAX = 20  # new hygiene items one sweep adds (a person reviews every one)
# The daily sweep's budget, counted from the process's start: it stops early rather than overrun
# 2 s (what is left after the budget: writing the items, the log line, the exit).
# `BRAIN_TEND_SECONDS` overrides it (the tests do: a loaded machine is not what they measure).
DAILY_SECONDS = 1.3
# AI/config.yaml's `aliases:`: what the sweep does with the aliases it learns (anything else:
# propose, the default; words from queries reach a core bullet only through a person).
ALIAS_POLICIES = ("propose", "apply")


# --- the sweep -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Applied:
    kind: str  # alias
    path: str
    line: int
    handle: str
    detail: str


@dataclass(frozen=True)
class Proposed:
    op: str
    key: str
    summary: str
    why: str
    targets: tuple[str, ...]  # path:line


@dataclass(frozen=True)
class TendResult:
    vault: str
    dry_run: bool
    daily: bool
    quick: bool  # bounded as the daily sweep is, run now (`--quick`)
    ran: bool  # False: the daily sweep ran today or is off (BRAIN_NO_TEND), or another was running
    applied: tuple[Applied, ...]
    proposed: tuple[Proposed, ...]  # hygiene items added to the inbox (dry run: that would be)
    waiting_count: int  # items found that already wait in the inbox (or were proposed before)
    checked: int  # bullets read
    stopped: str | None  # why the sweep stopped early
    ms: int


@dataclass
class _Found:
    items: list[Item] = field(default_factory=list)
    aliases: list[AliasProposal] = field(default_factory=list)
    checked: int = 0
    stopped: str = ""
    raw_at: dict[tuple[str, int], str] = field(default_factory=dict)  # bullet lines as on disk


def _file_bullets(vault: Path) -> dict[str, list[tuple[int, str]]]:
    """Each core file's bullet lines as they are on disk (the index masks credentials; the
    hashes must be of the file's own bytes)."""
    out: dict[str, list[tuple[int, str]]] = {}
    for rel in CORE_FILES:
        out[rel] = [
            (n, raw)
            for n, raw in enumerate(edits.read(vault, rel).split("\n"), start=1)
            if raw.startswith("- **")
        ]
    return out


def find_items(vault: Path, *, deadline: float | None = None, quick: bool = False) -> _Found:
    """Every hygiene item the vault calls for now, and the aliases to apply."""
    from brain import index
    from brain.commands import advisories, learn, verify

    found = _Found()
    lines = _file_bullets(vault)
    raw_at = {(rel, n): raw for rel, rows in lines.items() for n, raw in rows}
    found.raw_at = raw_at
    conn = index.open_index(vault)
    try:
        rows = verify.bullets(conn)
        notes = advisories.superseded(conn)
        groups = _shared_handles(rows)
        cosine = _cosines(conn, [u for g in groups for u in g])
        moved = _moved(conn, rows)
    finally:
        conn.close()
    found.checked = len(rows)
    found.items += _supersede_items(vault, notes)
    found.items += _merge_items(groups, raw_at, cosine)
    found.items += _check_items(moved, raw_at)
    if deadline is not None and time.monotonic() > deadline:
        found.stopped = "out of time before verifying the bullets' claims"
        return found
    claimed, stopped = _claim_items(vault, rows, raw_at, deadline)
    found.items += claimed
    if stopped:
        found.stopped = "out of time while verifying the bullets' claims (the rest wait a day)"
        return found
    if deadline is not None and time.monotonic() > deadline:
        found.stopped = "out of time before reading the usage log for aliases"
        return found
    learnt = learn.learn(vault, mode="keyword" if quick else "", deadline=deadline, unused=False)
    found.aliases = [p for p in learnt.proposed if p.session_count >= learn.SESSIONS_MIN]
    found.stopped = learnt.stopped or ""
    return found


RawAt = dict[tuple[str, int], str]


def _target(raw_at: RawAt, path: str, line: int, handle: str) -> Target | None:
    raw = raw_at.get((path, line))
    return Target(path, line_hash(raw), line, handle) if raw is not None else None


def _supersede_items(vault: Path, notes: list[Superseded]) -> list[Item]:
    """One item per note that newer bullets correct, heaviest first."""
    out = []
    for note in notes:
        try:
            body = (vault / note.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        cites = tuple(re.sub(r"^[MLT]#", "", b.handle) for b in note.bullets)  # not M#handle
        names = ", ".join(f"**{c}**" for c in cites)
        said = f"{plural(note.paragraphs, 'paragraph')} dated {note.date}"
        out.append(
            make(
                "supersede",
                f"mark {note.path} superseded by {names}",
                f"{said} {noun(note.paragraphs, 'says', 'say')} otherwise than newer bullets",
                [Target(note.path, line_hash(body), note.line, "")],
                cites,
            )
        )
    return out


def _moved(conn: sqlite3.Connection, rows: list[Unit]) -> list[tuple[Unit, Drift]]:
    """The bullets whose code changed since their date, from the index (`brain reindex` read
    the histories; the sweep walks none)."""
    from brain import drift

    keys = [drift.key(r.path, r.section, r.handle, r.text, r.date) for r in rows]
    found = drift.lookup(conn, keys)
    return [(r, found[k]) for r, k in zip(rows, keys, strict=True) if k in found]


def _check_items(moved: list[tuple[Unit, Drift]], raw_at: RawAt) -> list[Item]:
    """One `check` item per bullet whose code moved, the most changed first."""
    out = []
    for r, d in sorted(moved, key=lambda m: (-m[1].commit_count, m[0].path, m[0].line)):
        t = _target(raw_at, r.path, r.line, r.handle)
        if t is None:
            continue
        out.append(
            make(
                "check",
                f"check **{r.handle}** ({r.path}:{r.line}) against its code: {d.line()}",
                f"the files it names changed after {r.date}; approving dates it today",
                [t],
            )
        )
    return out


def _shared_handles(rows: list[Unit]) -> list[list[Unit]]:
    """The bullets of each handle several bullets share, oldest first."""
    from brain.vocab import handle_key

    groups: dict[str, list[Unit]] = {}
    for r in rows:
        groups.setdefault(handle_key(r.handle), []).append(r)
    return [
        sorted(same, key=lambda r: (r.date, r.path, r.line))
        for same in groups.values()
        if len(same) > 1
    ]


Cosine = Callable[["Unit", "Unit"], "float | None"]  # of two bullets' stored vectors


def _cosines(conn: sqlite3.Connection, units: list[Unit]) -> Cosine:
    """The cosine of two of `units` from their stored vectors (None when either has none: no
    embedder, or not embedded yet). numpy is imported only for a vault with a shared handle."""
    vecs: dict[tuple[str, int], bytes] = {}
    for u in units:
        row = conn.execute(
            "SELECT v.vec FROM units u JOIN vectors v ON v.hash = u.vhash"
            " WHERE u.path = ? AND u.line = ? AND u.kind = 'bullet'",
            (u.path, u.line),
        ).fetchone()
        if row is not None:
            vecs[(u.path, u.line)] = row[0]
    if not vecs:
        return lambda a, b: None
    import numpy as np

    from brain.semantic import index_model, stretch

    model = index_model(conn)

    def cosine(a: Unit, b: Unit) -> float | None:
        va, vb = vecs.get((a.path, a.line)), vecs.get((b.path, b.line))
        if va is None or vb is None:
            return None
        dot = np.frombuffer(va, dtype=np.float32) @ np.frombuffer(vb, dtype=np.float32)
        return float(stretch(np.array([dot], dtype=np.float32), model)[0])

    return cosine


def _telling(fact: str, handle: str) -> set[str]:
    """A fact's telling words, plurals folded, less its handle's (two bullets of one handle
    share those by definition)."""
    from brain.vocab import STOPWORDS, words

    def stem(w: str) -> str:
        return w[:-1] if len(w) > 3 and w.endswith("s") else w

    named = {stem(w) for w in words(handle)}
    return {stem(w) for w in words(fact) if w not in STOPWORDS and len(w) > 1} - named


def same_thing(kept: Unit, dropped: Unit, cosine: float | None = None) -> bool:
    """Whether dropping `dropped` for `kept` loses no fact: the kept fact holds COVERAGE_SAME of
    the dropped one's telling words, or their vectors' cosine reaches COSINE_SAME."""
    said = _telling(dropped.text, dropped.handle)
    held = len(said & _telling(kept.text, kept.handle)) / len(said) if said else 1.0
    return held >= COVERAGE_SAME or (cosine is not None and cosine >= COSINE_SAME)


def _merge_items(groups: list[list[Unit]], raw_at: RawAt, cosine: Cosine) -> list[Item]:
    """One item per handle whose older bullets say what its newest says: keep the newest, drop
    those (each quoted in the item); an older bullet with another fact stays."""
    out = []
    for ordered in groups:
        keep = ordered[-1]
        same = [r for r in ordered[:-1] if same_thing(keep, r, cosine(keep, r))]
        if not same:
            continue
        ts = [_target(raw_at, r.path, r.line, r.handle) for r in (keep, *same)]
        targets = [t for t in ts if t is not None]
        if len(targets) != len(ts):
            continue
        drops = "; ".join(f"{r.path}:{r.line} “{raw_at[(r.path, r.line)]}”" for r in same)
        out.append(
            make(
                "merge",
                f"merge {len(same) + 1} bullets named **{keep.handle}** into the newest, "
                f"{keep.path}:{keep.line} ({keep.date}), dropping {drops}",
                f"they say the same thing; the older go to {DROPPED}",
                targets,
            )
        )
    return out


def _claim_items(
    vault: Path, rows: list[Unit], raw_at: RawAt, deadline: float | None
) -> tuple[list[Item], bool]:
    """Drop the bullets whose every claim failed (two at least); date, in one item, those whose
    every claim this machine can check passed (verify's `passed`) and whose date is older than
    DATE_AFTER_DAYS."""
    from brain.commands import verify

    ctx = verify.context(vault, verify.repositories(vault))
    old = (dt.date.today() - dt.timedelta(days=DATE_AFTER_DAYS)).isoformat()
    out: list[Item] = []
    dating: list[Target] = []
    checked, stopped = verify.check_rows(rows, ctx, deadline)
    for c in checked:
        failed = [x for x in c.claims if x.status == verify.FAILED]
        t = _target(raw_at, c.path, c.line, c.handle)
        if t is None:
            continue
        # dropping is for a bullet every claim of which failed here, none left unchecked
        if len(failed) == len(c.claims) >= DROP_MIN_FAILED:
            said = "; ".join(f"{x.text}: {x.detail}" for x in failed)
            summary = f"drop **{c.handle}** ({c.path}:{c.line}) to {DROPPED}"
            out.append(make("drop", summary, f"every claim failed ({said})", [t]))
        elif c.verdict == "passed" and c.date < old:
            dating.append(t)
    if dating and not stopped:  # a part of them today would be another item than all tomorrow
        names = ", ".join(f"**{t.handle}**" for t in dating[:5])
        more = f" and {len(dating) - 5} more" if len(dating) > 5 else ""
        out.append(
            make(
                "date",
                f"date {plural(len(dating), 'verified bullet')} today: {names}{more}",
                f"every claim they make that this machine can check passed; their dates were "
                f"older than {DATE_AFTER_DAYS} days",
                dating,
            )
        )
    return out, stopped


def _proposed_path(vault: Path) -> Path:
    return state_dir() / "tend" / f"{index_path(vault).stem}.proposed"


def _remembered(vault: Path) -> set[str]:
    try:
        return set(_proposed_path(vault).read_text(encoding="utf-8").split())
    except OSError:
        return set()


def daily_seconds() -> float:
    """The daily sweep's budget: `BRAIN_TEND_SECONDS`, else DAILY_SECONDS."""
    from brain.settings import current

    return current().tend_seconds(DAILY_SECONDS)


def alias_policy(vault: Path) -> str:
    """`propose` (the default) or `apply`: AI/config.yaml's `aliases:`."""
    said = vault_settings(vault).get("aliases", "")
    return said if said in ALIAS_POLICIES else "propose"


@dataclass(frozen=True)
class _AliasEdit:
    """Learnt aliases a bullet gets without asking (policy `apply`): its line before and after."""

    path: str
    line: int
    raw: str
    new: str
    picked: tuple[AliasProposal, ...]


@dataclass(frozen=True)
class _Plan:
    edits: tuple[_AliasEdit, ...]  # written at once
    items: tuple[Item, ...]  # every item the vault calls for, the aliases' included


def _plan(vault: Path, found: _Found, *, late: bool) -> _Plan:
    """What a sweep does with what it found, the same for a real run and a dry run: the aliases
    applied (policy `apply`, time left, the new line passing strict lint) or proposed, and the
    items, their targets hashed as the lines will be once the aliases are written."""
    from brain.lint import check_bullet
    from brain.vault import parse_head

    apply = alias_policy(vault) == "apply"
    by_bullet: dict[tuple[str, int], list[AliasProposal]] = {}
    for p in found.aliases:
        by_bullet.setdefault((p.path, p.line), []).append(p)
    alias_edits: list[_AliasEdit] = []
    alias_items: list[Item] = []
    for (path, n), group in by_bullet.items():
        raw = found.raw_at.get((path, n))
        if raw is None:
            continue
        try:
            handle, have, _ = parse_head(raw)
        except ValueError:
            continue
        picked: dict[str, AliasProposal] = {}
        for p in group:
            if p.handle == handle and p.alias not in have:  # learn proposes no unfit alias
                picked.setdefault(p.alias, p)
        if not picked:
            continue
        new = with_aliases(raw, list(picked))
        if apply and not check_bullet(path, new, strict=True):
            if not late:  # past its budget the quick sweep leaves even these to another day
                alias_edits.append(_AliasEdit(path, n, raw, new, tuple(picked.values())))
            continue
        alias_items.append(_alias_item(path, n, raw, handle, tuple(picked.values())))
    moved = {(e.path, e.line): e.new for e in alias_edits}
    items = [_rehash(it, moved) for it in (*found.items, *alias_items)]
    return _Plan(tuple(alias_edits), tuple(items))


def _alias_item(
    path: str, n: int, raw: str, handle: str, picked: tuple[AliasProposal, ...]
) -> Item:
    from brain.text import printable

    names = ", ".join(repr(p.alias) for p in picked)
    sessions = max(p.session_count for p in picked)
    asked = printable(picked[0].queries[0] if picked[0].queries else picked[0].alias)
    asked = asked if len(asked) <= 60 else asked[:57] + "..."
    return make(
        "alias",
        f"give **{handle}** ({path}:{n}) the {noun(len(picked), 'alias', 'aliases')} {names}",
        f"{plural(sessions, 'session')} reached it by its body, never by its names "
        f"(asked: {asked!r})",
        [Target(path, line_hash(raw), n, handle)],
        aliases=tuple(p.alias for p in picked),
    )


def _rehash(item: Item, moved: dict[tuple[str, int], str]) -> Item:
    """`item` with the targets whose lines an alias edit rewrites named by their new lines."""
    if not any((t.path, t.line) in moved for t in item.targets):
        return item
    targets = [
        Target(t.path, line_hash(moved[(t.path, t.line)]), t.line, t.handle)
        if (t.path, t.line) in moved
        else t
        for t in item.targets
    ]
    return make(item.op, item.summary, item.why, targets, item.cite, item.aliases)


def tend(
    vault: Path,
    *,
    dry_run: bool = False,
    daily: bool = False,
    quick: bool = False,
    budget: float | None = None,
) -> TendResult:
    """Sweep the vault: apply what the policy lets it, queue the rest (nothing written with
    dry_run, which lists the same plan). `daily` and `quick` learn aliases by keyword alone
    (no model to load within a budget); `daily` runs once a day, and not at all with
    BRAIN_NO_TEND."""
    from brain.commands import inbox
    from brain.files import locked, write_atomic
    from brain.settings import current

    start = time.monotonic()
    deadline = start + budget if budget is not None else None
    if daily and current().tend_off:
        said = "BRAIN_NO_TEND is set: the daily sweep is off"
        return TendResult(str(vault), dry_run, daily, quick, False, (), (), 0, 0, said, _ms(start))
    stamp = _stamp_path(vault)
    today = dt.date.today().isoformat()
    with locked(stamp.with_suffix(".lock"), wait=0 if daily else None) as got:
        if not got or (daily and _stamped(stamp) == today):
            return TendResult(
                str(vault), dry_run, daily, quick, False, (), (), 0, 0, None, _ms(start)
            )
        found = find_items(vault, deadline=deadline, quick=daily or quick)
        late = deadline is not None and time.monotonic() > deadline
        plan = _plan(vault, found, late=late)
        applied = _apply_aliases(vault, plan.edits, dry_run=dry_run)
        proposed: list[Proposed] = []
        waiting = 0
        with edits.locked(vault):
            if not dry_run:
                inbox.recover(vault)
            text = edits.read(vault, INBOX)
            queued = {it.key for raw in text.split("\n") if (it := parse_item(raw))}
            seen = queued | _remembered(vault) | applied_keys(vault)
            # the inbox keeps at most MAX_PENDING waiting, hygiene items included
            room = min(ITEMS_MAX, inbox.MAX_PENDING - len(inbox.proposals(vault, text)))
            new: list[Item] = []
            for item in plan.items:
                if item.key in seen:
                    waiting += 1
                    continue
                if len(new) < room:
                    new.append(item)
            for item in new:
                proposed.append(
                    Proposed(
                        item.op,
                        item.key,
                        item.summary,
                        item.why,
                        tuple(f"{t.path}:{t.line}" for t in item.targets),
                    )
                )
            if new and not dry_run:
                body = edits.with_proposals(text, [it.line() for it in new])
                edits.write(vault, INBOX, body, was=text)
                keys = sorted(_remembered(vault) | {it.key for it in new})
                write_atomic(_proposed_path(vault), "\n".join(keys) + "\n", 0o600)
        if daily and not dry_run:
            write_atomic(stamp, today + "\n", 0o600)
    return TendResult(
        str(vault),
        dry_run,
        daily,
        quick,
        True,
        tuple(applied),
        tuple(proposed),
        waiting,
        found.checked,
        found.stopped or None,
        _ms(start),
    )


def _stamp_path(vault: Path) -> Path:
    return state_dir() / "tend" / f"{index_path(vault).stem}.daily"


def background(vault: Path) -> bool:
    """Start the daily sweep detached and return at once; True when one was started. What a hook
    calls (the Stop hook, `brain settle`): a file read and, at most once a day, the spawn. The
    sweep takes its lock itself: a second one started meanwhile leaves at once."""
    from brain.config import python_command
    from brain.process import start_detached
    from brain.settings import current

    if current().tend_off or _stamped(_stamp_path(vault)) == dt.date.today().isoformat():
        return False
    return start_detached(python_command("brain", "tend", "--daily", "--vault", str(vault)))


def _stamped(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _ms(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def _apply_aliases(vault: Path, planned: tuple[_AliasEdit, ...], *, dry_run: bool) -> list[Applied]:
    """Write the planned alias edits (each only if its line is still as the sweep read it) and
    log them; with `dry_run`, what would be written."""
    done = planned
    if planned and not dry_run:
        by_line = {(e.path, e.line): e for e in planned}
        changed = set(edits.edit_lines(vault, [(e.path, e.line, _rewrite(e)) for e in planned]))
        done = tuple(e for key, e in by_line.items() if key in changed)
    applied = [
        Applied(
            "alias",
            e.path,
            e.line,
            p.handle,
            f"+ {p.alias!r} ({plural(p.session_count, 'session')} asked by it)",
        )
        for e in done
        for p in e.picked
    ]
    if applied and not dry_run:
        log_tended(
            vault, [f"alias **{a.handle}** {a.detail} at {a.path}:{a.line}" for a in applied]
        )
    return applied


def _rewrite(e: _AliasEdit) -> Callable[[str], str | None]:
    """The line edit of `e`: only a line still as the sweep read it is rewritten."""
    return lambda current: e.new if current == e.raw else None


# --- text ----------------------------------------------------------------------------------------
