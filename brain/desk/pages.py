"""What each desk page shows, as plain data read through the command functions on every request."""

from __future__ import annotations

import dataclasses
import difflib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain.commands import hygiene
from brain.commands import inbox as inboxmod
from brain.commands.hygiene import Shown
from brain.config import INBOX
from brain.desk.actions import editable
from brain.errors import BrainError

SESSIONS = 20  # sessions the ledger page lists (the latest)
QUERIES = 20  # top queries it lists
HITS = 20  # hits a search shows
MISSES = 200  # open misses the page lists, most asked first
SHOWN = 50  # rows of each of doctor's advisories the health page lists (a big vault has thousands)
# What the inbox page shows of a proposal by name (the line itself, `markdown`, as its fields: it
# was shown a second time, raw, as a further row); any other field a newer brain adds to an inbox
# item (a hygiene item's kind, its target) is shown too, as a labelled row.
_SHOWN = {"number", "line", "markdown", "text", "to", "handle", "problem", "updates", "current"}


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool


@dataclass(frozen=True)
class Item:
    key: str  # the text the page shows: actions find the proposal again by it
    number: int
    text: str  # the line as it stands in the inbox (what an edit starts from)
    to: str
    handle: str
    fact: str  # what the card shows of a bullet: its fact ("" for a line that does not parse)
    aliases: str
    source: str
    date: str
    problem: str
    updates: str  # path:line of the bullet it replaces
    old: tuple[Segment, ...]  # that bullet, words that differ marked
    new: tuple[Segment, ...]  # this one, likewise
    extra: tuple[tuple[str, str], ...]  # further fields of the item, by name
    editable: bool  # a proposed bullet (or a line meant as one); not another kind of item
    why: str = ""  # a hygiene item's reason
    changes: tuple[Shown, ...] = ()  # a hygiene item's lines, as they are now, and its effect


@dataclass(frozen=True)
class Read:
    stamp: str  # the vault's stamp when the reading started
    context: dict[str, Any]
    at: str  # local time it finished, HH:MM:SS
    took: float  # seconds


class Background:
    """A page whose reading can take minutes on a big vault (doctor's near-duplicate scan, `brain
    log` asking every missed query again): read in a thread, never in the request, and the latest
    reading kept with the stamp of the vault it read. A request waits `wait` seconds for a fresh
    reading, then shows the latest one (marked when the vault changed since) or that it is on
    its way; the other pages are served meanwhile."""

    def __init__(self, read: Callable[[Path], dict[str, Any]], *, usage: bool = True) -> None:
        self.read = read
        self.usage = usage  # whether the usage log is part of what it reads
        self.lock = threading.Lock()
        self.latest: Read | None = None
        self.running: threading.Event | None = None
        self.started = 0.0

    def get(self, vault: Path, wait: float) -> dict[str, Any]:
        now = stamp(vault, usage=self.usage)
        with self.lock:
            fresh = self.latest is not None and self.latest.stamp == now
            if not fresh and self.running is None:
                self.running, self.started = threading.Event(), time.monotonic()
                threading.Thread(target=self._run, args=(vault, now), daemon=True).start()
            running = self.running
        if not fresh and running is not None:
            running.wait(wait)
        with self.lock:
            latest, busy = self.latest, self.running is not None
            started = self.started
        if latest is None:
            return {"pending": round(time.monotonic() - started)}
        return {
            **latest.context,
            "checked": latest.at,
            "took": latest.took,
            "stale": latest.stamp != now,
            "rechecking": busy,
        }

    def _run(self, vault: Path, at: str) -> None:
        start = time.monotonic()
        try:
            context = self.read(vault)
        except BrainError as exc:
            context = {"error": exc}
        except Exception as exc:  # a crash would leave the page waiting forever: say it
            context = {"error": BrainError(f"reading the page failed: {exc!r}", "")}
        done = Read(at, context, time.strftime("%H:%M:%S"), round(time.monotonic() - start, 1))
        with self.lock:
            self.latest, event, self.running = done, self.running, None
        if event is not None:
            event.set()


def stamp(vault: Path, *, usage: bool = True) -> str:
    """A digest of what the pages read (the AI/ files, the index, with `usage` the usage log): an
    open page polls it and offers a reload when it changes, so a change made elsewhere shows.

    The databases count by their main file only: SQLite in WAL mode makes and deletes the -wal
    file as connections open and close, even to read, but the main file changes only when what
    was written is checkpointed into it (at the latest when the writer's connection closes)."""
    import hashlib

    from brain.config import index_path, usage_log_path

    try:
        paths = sorted((vault / "AI").iterdir())
    except OSError:
        paths = []
    paths += [index_path(vault), *([usage_log_path()] if usage else [])]
    parts = []
    for p in paths:
        try:
            st = p.stat()
            parts.append(f"{p}\0{st.st_mtime_ns}\0{st.st_size}")
        except OSError:
            parts.append(f"{p}\0-")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def side_by_side(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """Both lines cut into runs of words, the runs that differ marked (a word diff)."""
    a, b = re.findall(r"\S+\s*", old), re.findall(r"\S+\s*", new)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if i2 > i1:
            left.append(Segment("".join(a[i1:i2]), op != "equal"))
        if j2 > j1:
            right.append(Segment("".join(b[j1:j2]), op != "equal"))
    return tuple(left), tuple(right)


def inbox(vault: Path) -> dict[str, Any]:
    from brain.vault import keep_aliases, parse_bullet

    listing = inboxmod.inbox(vault)
    items = []
    for p in listing.proposals:
        try:
            b = parse_bullet(p.markdown)
            fact, aliases, source, date = b.fact, ", ".join(b.aliases), b.source, b.date
        except ValueError:
            fact = aliases = source = date = ""
        why, changes = _hygiene(vault, p) if p.kind == "hygiene" else ("", ())
        # an update shows the line approve will write: it keeps the old aliases when it names none
        current = p.current or ""
        written = keep_aliases(p.markdown, current) if current and not p.problem else ""
        old, new = side_by_side(current, written) if written else ((), ())
        extra = tuple(
            (f.name, str(getattr(p, f.name)))
            for f in dataclasses.fields(p)
            if f.name not in _SHOWN and getattr(p, f.name) not in ("", None, (), 0)
        )
        items.append(
            Item(
                p.markdown,
                p.number,
                p.markdown,
                p.to or "",
                p.handle or "",
                fact,
                aliases,
                source,
                date,
                p.problem or "",
                p.updates or "",
                old,
                new,
                extra,
                editable(p),
                why,
                changes,
            )
        )
    return {
        "items": items,
        "path": listing.path,
        "recovered": listing.recovered,
        "remote_note": listing.note,  # `proposals: team`: the remote could not be asked
        "destinations": list(inboxmod.DESTINATIONS),
        "default_to": inboxmod.DEFAULT_DESTINATION,
    }


def _hygiene(vault: Path, p: inboxmod.Proposal) -> tuple[str, tuple[Shown, ...]]:
    """A hygiene item's reason and the lines it changes as they are now (the card showed only
    its summary: not why, nor the text a drop takes out)."""
    from brain.edits import read

    try:
        raw = read(vault, INBOX).split("\n")[p.line - 1]
    except (BrainError, OSError, IndexError):
        return "", ()
    item = hygiene.parse_item(raw)
    return (item.why, hygiene.shown(vault, item)) if item is not None else ("", ())


def misses(vault: Path) -> dict[str, Any]:
    from brain.commands.log import log

    result = log(vault)
    return {"log": result, "shown": MISSES}


def ledger(vault: Path) -> dict[str, Any]:
    from brain.commands.ledger import ledger as read_ledger
    from brain.commands.ledger import top_queries

    result = read_ledger(vault)
    chart = {
        "days": [d.date for d in result.days],
        "served": [d.tokens for d in result.days],
        "saved": [d.saved for d in result.days],
        "callers": [c.caller for c in result.callers],
        "caller_served": [c.tokens for c in result.callers],
        "caller_saved": [c.saved for c in result.callers],
    }
    whole = result.lookups * result.core_tokens
    return {
        "ledger": result,
        "whole": whole,
        "share": 100 * result.saved / whole if whole > 0 else 0.0,
        "sessions": result.sessions[:SESSIONS],
        "queries": top_queries(vault, limit=QUERIES),
        "chart": chart,
    }


def health(vault: Path) -> dict[str, Any]:
    from brain.commands.advisories import cite
    from brain.commands.doctor import doctor

    result = doctor(str(vault))
    return {"doctor": result, "cite": cite, "shown": SHOWN, "others": others(result)}


# What the health page lays out by hand; any other list doctor's result grows (a newer brain's
# failed claims) is shown as a plain table of its fields, so it appears when it exists.
_LAID_OUT = {"ok", "vault", "checks", "frequent", "older_notes", "duplicates", "superseded"}


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]  # the headers a person reads, not the JSON keys
    rows: tuple[tuple[str, ...], ...]
    more: int  # rows left out
    fix: str = ""  # what to do about them, as `brain doctor` says it


# Headers for the JSON keys that do not read as one (`claim_count`); any other key is shown with
# its underscores as spaces.
_HEADERS = {
    "path": "file",
    "claim_count": "claims",
    "session_count": "sessions",
    "locators": "where",
    "dates": "dated",
    "failures": "what failed",
    "said": "what the person said",
}


def others(result: Any) -> tuple[Table, ...]:
    from brain.present.upkeep import ADVICE

    out = []
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if f.name in _LAID_OUT or not isinstance(value, tuple) or not value:
            continue
        if not all(dataclasses.is_dataclass(v) for v in value):
            continue
        keys = tuple(c.name for c in dataclasses.fields(value[0]))
        rows = tuple(tuple(_cell(getattr(v, c, "")) for c in keys) for v in value[:SHOWN])
        title, fix = ADVICE.get(f.name, (f.name.replace("_", " ").capitalize(), ""))
        columns = tuple(_HEADERS.get(k, k.replace("_", " ")) for k in keys)
        out.append(Table(title, columns, rows, max(0, len(value) - SHOWN), fix))
    return tuple(out)


def _cell(value: Any) -> str:
    if value is None:  # JSON's null: nothing to show
        return ""
    if isinstance(value, tuple | list):
        return ", ".join(_cell(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return " ".join(_cell(getattr(value, f.name)) for f in dataclasses.fields(value))
    return str(value)


def search(vault: Path, query: str, where: str) -> dict[str, Any]:
    """find (the vault) or recall (the transcripts) for `query`; an error is shown, not raised."""
    out: dict[str, Any] = {"query": query, "where": where, "hits": [], "turns": [], "error": None}
    if not query.strip():
        return out
    try:
        if where == "transcripts":
            from brain.commands.recall import recall

            out["turns"] = list(recall(query, limit=HITS).hits)
        else:
            from brain.commands.find import find

            found = find(vault, query, limit=HITS)
            out["hits"], out["mode"] = list(found.hits), found.mode
    except BrainError as exc:
        out["error"] = exc
    return out
