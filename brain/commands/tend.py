"""`brain tend`: the sweep that keeps the vault true, with a person approving every change of
meaning.

It reads verify's claims, learn's aliases and doctor's findings, then:

- applies what costs nothing to undo: an alias that several sessions already asked by (a line
  edit, logged in AI/TENDED.md);
- queues in the inbox, as hygiene items a person approves like a proposal (`brain inbox approve
  N`), everything that changes meaning:
  - `supersede`: mark a note that newer bullets correct (a header citing them; brain/retell.py's
    shadow relation finds the notes),
  - `drop`: move a bullet whose every claim failed (two failed claims at least) to AI/DROPPED.md,
  - `merge`: bullets that share a handle become the newest one (the others' aliases join it; the
    others go to AI/DROPPED.md),
  - `date`: date today the bullets whose every claim passed and whose date is older than
    `DATE_AFTER_DAYS`.

An item names its targets by the hash of their lines (a note by the hash of its text), never by
line number: approving one item moves the lines of the others. An item whose target changed
since the sweep is refused with the reason, and nothing is written. Applying touches several files
(the core file, AI/DROPPED.md, AI/TENDED.md, the inbox): the new text of each is journalled first,
then each is written atomically, then the journal goes; a crash in between is finished by the next
inbox or tend command, so the vault ends before or after, never half-way.

`--daily` is the quiet sweep the hooks start: at most once a day (a stamp in the state dir), one
at a time (a lock), bounded in time (`DAILY_SECONDS`; it stops early and records so), exit 0.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain.config import CORE_FILES, DROPPED, INBOX, TENDED, index_path, state_dir
from brain.errors import BrainError

if TYPE_CHECKING:
    from brain.advisories import Superseded
    from brain.commands.learn import AliasProposal
    from brain.vault import Unit

DATE_AFTER_DAYS = 30  # a bullet verified again within a month keeps its date
DROP_MIN_FAILED = 2  # failed claims before a bullet whose every claim failed is proposed dropped
ITEMS_MAX = 20  # new hygiene items one sweep adds (a person reviews every one)
# The daily sweep's budget, counted from the process's start: it stops early rather than overrun
# 2 s (what is left after the budget: writing the items, the log line, the exit).
# `BRAIN_TEND_SECONDS` overrides it (the tests do: a loaded machine is not what they measure).
DAILY_SECONDS = 1.3
OPS = ("supersede", "drop", "merge", "date")
_ITEM = re.compile(r"\s*<!-- brain:tend (\{.*\}) -->\s*$")
_DROPPED_HEAD = (
    "# Dropped\n\n<!-- Bullets `brain tend` took out of the core files, newest last, each with why."
    " brain searches nothing here; copy a line back to restore it. -->\n"
)
_TENDED_HEAD = (
    "# Tended\n\n<!-- What `brain tend` changed in this vault, newest last: aliases it added and"
    " the hygiene items a person approved. brain searches nothing here. -->\n"
)


# --- items ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    path: str
    hash: str  # of the bullet's line, or of the note's whole text
    line: int  # where it was at the sweep (shown; the hash finds it)
    handle: str  # the bullet's handle ("" for a note)


@dataclass(frozen=True)
class Item:
    op: str  # supersede | drop | merge | date
    key: str  # the same change of the same lines: the same key
    summary: str  # one line for a person
    why: str
    targets: tuple[Target, ...]
    cite: tuple[str, ...] = ()  # supersede: the newer bullets' handles

    def line(self) -> str:
        """The item as an inbox line: what a person reads, then brain's own part."""
        data = {
            "op": self.op,
            "key": self.key,
            "why": self.why,
            "targets": [[t.path, t.hash, t.line, t.handle] for t in self.targets],
            "cite": list(self.cite),
        }
        # `>` escaped: the payload can never close the comment that carries it
        payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace(
            ">", "\\u003e"
        )
        return f"- tend: {self.summary} <!-- brain:tend {payload} -->"


def parse_item(line: str) -> Item | None:
    """The hygiene item an inbox line carries, or None (a proposal, or a torn item)."""
    m = _ITEM.search(line)
    if not m:
        return None
    try:
        data = json.loads(m.group(1))
        targets = tuple(
            Target(str(p), str(h), int(n), str(name)) for p, h, n, name in data["targets"]
        )
        op = str(data["op"])
        if op not in OPS or not targets:
            return None
        summary = line[: m.start()].removeprefix("- tend: ").strip()
        cite = tuple(str(c) for c in data.get("cite", ()))
        return Item(op, str(data["key"]), summary, str(data["why"]), targets, cite)
    except (ValueError, KeyError, TypeError):
        return None


def line_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _key(op: str, targets: list[Target]) -> str:
    joined = "|".join(f"{t.path}:{t.hash}" for t in targets)
    return hashlib.sha256(f"{op}|{joined}".encode()).hexdigest()[:12]


def make(
    op: str, summary: str, why: str, targets: list[Target], cite: tuple[str, ...] = ()
) -> Item:
    return Item(op, _key(op, targets), summary, why, tuple(targets), cite)


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
    ran: bool  # False: the daily sweep had already run today, or another sweep was running
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


def _file_bullets(vault: Path) -> dict[str, list[tuple[int, str]]]:
    """Each core file's bullet lines as they are on disk (the index masks credentials; the
    hashes must be of the file's own bytes)."""
    from brain.commands import inbox

    out: dict[str, list[tuple[int, str]]] = {}
    for rel in CORE_FILES:
        out[rel] = [
            (n, raw)
            for n, raw in enumerate(inbox.read(vault, rel).split("\n"), start=1)
            if raw.startswith("- **")
        ]
    return out


def find_items(vault: Path, *, deadline: float | None = None, quick: bool = False) -> _Found:
    """Every hygiene item the vault calls for now, and the aliases to apply."""
    from brain import advisories, index
    from brain.commands import learn, verify

    found = _Found()
    lines = _file_bullets(vault)
    raw_at = {(rel, n): raw for rel, rows in lines.items() for n, raw in rows}
    conn = index.open_index(vault)
    try:
        rows = verify.bullets(conn)
        notes = advisories.superseded(conn)
    finally:
        conn.close()
    found.checked = len(rows)
    found.items += _supersede_items(vault, notes)
    found.items += _merge_items(rows, raw_at)
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
        said = f"{note.paragraphs} paragraph(s) dated {note.date}"
        out.append(
            make(
                "supersede",
                f"mark {note.path} superseded by {names}",
                f"{said} say otherwise than newer bullets",
                [Target(note.path, line_hash(body), note.line, "")],
                cites,
            )
        )
    return out


def _merge_items(rows: list[Unit], raw_at: RawAt) -> list[Item]:
    """One item per handle that several bullets share: keep the newest."""
    from brain.vocab import handle_key

    groups: dict[str, list[Unit]] = {}
    for r in rows:
        groups.setdefault(handle_key(r.handle), []).append(r)
    out = []
    for same in groups.values():
        if len(same) < 2:
            continue
        ordered = sorted(same, key=lambda r: (r.date, r.path, r.line))
        keep = ordered[-1]
        ts = [_target(raw_at, r.path, r.line, r.handle) for r in (keep, *ordered[:-1])]
        targets = [t for t in ts if t is not None]
        if len(targets) != len(ts):
            continue
        where = ", ".join(f"{r.path}:{r.line}" for r in ordered[:-1])
        out.append(
            make(
                "merge",
                f"merge {len(same)} bullets named **{keep.handle}** into the newest, "
                f"{keep.path}:{keep.line} ({keep.date})",
                f"one handle, {len(same)} bullets; the older ({where}) go to {DROPPED}",
                targets,
            )
        )
    return out


def _claim_items(
    vault: Path, rows: list[Unit], raw_at: RawAt, deadline: float | None
) -> tuple[list[Item], bool]:
    """Drop the bullets whose every claim failed (two at least); date, in one item, those whose
    every claim passed and whose date is older than DATE_AFTER_DAYS."""
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
        if c.verdict == "failed" and len(failed) >= DROP_MIN_FAILED:
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
                f"date {len(dating)} verified bullet(s) today: {names}{more}",
                f"every claim they make passed; their dates were older than {DATE_AFTER_DAYS} days",
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


def _applied_keys(vault: Path) -> set[str]:
    from brain.commands import inbox

    return set(re.findall(r"\[tend ([0-9a-f]{12})\]", inbox.read(vault, TENDED)))


def daily_seconds() -> float:
    """The daily sweep's budget: `BRAIN_TEND_SECONDS`, else DAILY_SECONDS."""
    from brain.thin import env_number

    return env_number("BRAIN_TEND_SECONDS", DAILY_SECONDS)


def tend(
    vault: Path, *, dry_run: bool = False, daily: bool = False, budget: float | None = None
) -> TendResult:
    """Sweep the vault: apply the free changes, queue the rest (nothing written with dry_run)."""
    from brain.commands import inbox
    from brain.files import locked, write_atomic

    start = time.monotonic()
    deadline = start + budget if budget is not None else None
    stamp = _stamp_path(vault)
    today = dt.date.today().isoformat()
    with locked(stamp.with_suffix(".lock"), wait=0 if daily else None) as got:
        if not got or (daily and _stamped(stamp) == today):
            return TendResult(str(vault), dry_run, daily, False, (), (), 0, 0, None, _ms(start))
        found = find_items(vault, deadline=deadline, quick=daily)
        applied: list[Applied] = []
        # past its budget the quick sweep leaves even the free edits to another day: rewriting a
        # core file of a large vault is what would make it overrun
        late = deadline is not None and time.monotonic() > deadline
        if found.aliases and not dry_run and not late:
            applied = _apply_aliases(vault, found.aliases)
        proposed: list[Proposed] = []
        waiting = 0
        with inbox.locked(vault):
            if not dry_run:
                inbox.recover(vault)
            text = inbox.read(vault, INBOX)
            queued = {it.key for raw in text.split("\n") if (it := parse_item(raw))}
            seen = queued | _remembered(vault) | _applied_keys(vault)
            # the inbox keeps at most MAX_PENDING waiting, hygiene items included
            room = min(ITEMS_MAX, inbox.MAX_PENDING - len(inbox.proposals(vault, text)))
            new: list[Item] = []
            for item in found.items:
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
                base = text if text.strip() else "# Inbox\n"
                body = base.rstrip("\n") + "\n" + "".join(f"{it.line()}\n" for it in new)
                inbox.write(vault, INBOX, body)
                keys = sorted(_remembered(vault) | {it.key for it in new})
                write_atomic(_proposed_path(vault), "\n".join(keys) + "\n", 0o600)
        if daily and not dry_run:
            write_atomic(stamp, today + "\n", 0o600)
    return TendResult(
        str(vault),
        dry_run,
        daily,
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
    import subprocess
    import sys

    from brain.config import python_command

    if _stamped(_stamp_path(vault)) == dt.date.today().isoformat():
        return False
    kwargs: dict[str, Any] = {"start_new_session": True}
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        flags = ("DETACHED_PROCESS", "CREATE_NEW_PROCESS_GROUP")
        kwargs = {"creationflags": sum(getattr(subprocess, f, 0) for f in flags)}
    try:
        subprocess.Popen(
            python_command("brain", "tend", "--daily", "--vault", str(vault)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            **kwargs,
        )
    except OSError:
        return False
    return True


def _stamped(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _ms(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def _apply_aliases(vault: Path, picked: list[AliasProposal]) -> list[Applied]:
    from brain.commands import learn

    written = learn.add_aliases(vault, picked)
    if not written:
        return []
    done = []
    for p in picked:
        if f"{p.path}:{p.line} {p.alias}" in written:
            done.append(
                Applied(
                    "alias",
                    p.path,
                    p.line,
                    p.handle,
                    f"+ {p.alias!r} ({p.session_count} sessions asked by it)",
                )
            )
    log = [f"alias **{a.handle}** {a.detail} at {a.path}:{a.line}" for a in done]
    _log_tended(vault, log)
    return done


def _log_tended(vault: Path, entries: list[str]) -> None:
    from brain.commands import inbox

    with inbox.locked(vault):
        inbox.write(vault, TENDED, _tended_text(inbox.read(vault, TENDED), entries))


def _tended_text(current: str, entries: list[str]) -> str:
    today = dt.date.today().isoformat()
    base = current if current.strip() else _TENDED_HEAD
    return base.rstrip("\n") + "\n" + "".join(f"- {today} {e}\n" for e in entries)


# --- applying an approved item -------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    summary: str
    path: str  # the first file it changed
    line: int
    files: tuple[str, ...]  # every file it wrote


def _journal(vault: Path) -> Path:
    return state_dir() / "inbox" / f"{index_path(vault).stem}.tend.json"


def _find(lines: list[str], digest: str) -> int:
    return next((k for k, raw in enumerate(lines) if line_hash(raw) == digest), -1)


def plan(vault: Path, item: Item, inbox_line: str) -> dict[str, str]:
    """The new text of every file the item changes, or a BrainError saying why it no longer
    applies. Reads only; the caller holds the inbox's lock."""
    from brain.commands import inbox

    if item.key in _applied_keys(vault):
        raise BrainError(
            f"this item was applied already ({TENDED} lists [tend {item.key}])",
            "drop it with `brain inbox drop N`",
        )
    texts: dict[str, list[str]] = {}

    def lines_of(rel: str) -> list[str]:
        if rel not in texts:
            texts[rel] = inbox.read(vault, rel).split("\n")
        return texts[rel]

    today = dt.date.today().isoformat()
    dropped: list[str] = []
    log = f"{item.op}: {item.summary} ({item.why}) [tend {item.key}]"
    if item.op == "supersede":
        t = item.targets[0]
        body = inbox.read(vault, t.path)
        if line_hash(body) != t.hash:
            raise BrainError(
                f"{t.path} changed since the sweep, so it is not marked",
                "drop the item (`brain inbox drop N`); the next `brain tend` looks again",
            )
        texts[t.path] = supersede_header(body, item.cite, today).split("\n")
    else:
        dropped = _edit_bullets(item, lines_of, today)
    if dropped:
        base = inbox.read(vault, DROPPED)
        base = base if base.strip() else _DROPPED_HEAD
        why = f"  <!-- dropped {today} by brain tend: {item.why} [tend {item.key}] -->"
        texts[DROPPED] = (
            base.rstrip("\n") + "\n" + "".join(f"{d}\n{why}\n" for d in dropped)
        ).split("\n")
    inbox_lines = lines_of(INBOX)
    if inbox_line in inbox_lines:
        inbox_lines.remove(inbox_line)
    texts[TENDED] = _tended_text(inbox.read(vault, TENDED), [log]).split("\n")
    return {rel: "\n".join(ls) for rel, ls in texts.items()}


def _edit_bullets(item: Item, lines_of: Callable[[str], list[str]], today: str) -> list[str]:
    """Date, drop or merge the item's bullets in the files' lines (edited in place); returns the
    lines dropped. Every target must still be there as the sweep saw it, else nothing changes."""
    found: list[tuple[Target, int]] = []
    for t in item.targets:
        k = _find(lines_of(t.path), t.hash)
        if k < 0:
            raise BrainError(
                f"{t.path} no longer holds the bullet **{t.handle}** as the sweep saw it "
                f"(line {t.line}); nothing was changed",
                "drop the item (`brain inbox drop N`); the next `brain tend` looks again",
            )
        found.append((t, k))
    if item.op == "date":
        from brain.commands.verify import redate

        for t, k in found:
            lines_of(t.path)[k] = redate(lines_of(t.path)[k], today)
        return []
    if item.op == "merge":
        from brain.commands.learn import with_alias
        from brain.vault import parse_head

        keep, kk = found[0]
        line = lines_of(keep.path)[kk]
        handle, aliases, _ = parse_head(line)
        for t, k in found[1:]:
            for a in parse_head(lines_of(t.path)[k])[1]:
                if a not in aliases:
                    line = with_alias(line, handle, a)
                    aliases = (*aliases, a)
        lines_of(keep.path)[kk] = line
        found = found[1:]
    dropped = []
    # bottom up in each file, so that the line numbers found stay true
    for t, k in sorted(found, key=lambda x: (x[0].path, -x[1])):
        dropped.append(lines_of(t.path).pop(k))
    return dropped


def supersede_header(body: str, cites: tuple[str, ...], today: str) -> str:
    """The note with a line under its title citing the newer bullets (a note that cites them is
    history: doctor no longer lists it, and find still serves it below them)."""
    names = ", ".join(f"**{c}**" for c in cites)
    header = f"> Superseded: newer bullets say otherwise: {names} (brain tend, {today})."
    lines = body.split("\n")
    at = 0
    if lines and lines[0].strip() == "---":  # front matter stays first
        end = next((k for k in range(1, len(lines)) if lines[k].strip() in ("---", "...")), -1)
        at = end + 1 if end > 0 else 0
    if at < len(lines) and lines[at].startswith("# "):
        at += 1
    return (
        "\n".join([*lines[:at], "", header, *lines[at:]]) if at else "\n".join([header, "", *lines])
    )


def apply(vault: Path, item: Item, inbox_line: str) -> Outcome:
    """Apply an approved item (the caller holds the inbox's lock): plan every file, journal the
    plan, write each file atomically, delete the journal."""
    from brain.commands import inbox
    from brain.files import write_atomic

    texts = plan(vault, item, inbox_line)
    first = item.targets[0].path
    was = inbox.read(vault, first).split("\n")
    now = texts[first].split("\n")
    # where the file changed first: the bullet dated or kept, the line dropped, the header added
    line = next((k for k, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), len(now))
    write_atomic(_journal(vault), json.dumps(texts, ensure_ascii=False), 0o600)
    _write_all(vault, texts)
    return Outcome(item.summary, first, line + 1, tuple(texts))


def _write_all(vault: Path, texts: dict[str, str]) -> None:
    from brain.commands import inbox

    for n, (rel, body) in enumerate(texts.items()):
        if n:
            _between_writes(rel)
        inbox.write(vault, rel, body)
    with contextlib.suppress(FileNotFoundError):
        _journal(vault).unlink()


def _between_writes(rel: str) -> None:
    """A seam for the crash test: nothing happens here."""


def recover(vault: Path) -> str:
    """Finish an apply a crash interrupted (the caller holds the inbox's lock): write every file
    the journal holds again. Returns what it finished, "" when there was nothing."""
    from brain.commands.inbox import read_journal

    path = _journal(vault)
    texts = read_journal(path)
    if texts is None:
        return ""
    if not isinstance(texts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and _vault_relative(k) for k, v in texts.items()
    ):
        with contextlib.suppress(OSError):
            path.unlink()
        return ""
    _write_all(vault, texts)
    return f"a tend item ({', '.join(texts)})"


def _vault_relative(rel: str) -> bool:
    """A journal's file name is a vault file's (writes are confined to the vault anyway)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and rel.endswith(".md")


# --- text ----------------------------------------------------------------------------------------
