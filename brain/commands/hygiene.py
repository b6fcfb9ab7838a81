"""A `brain tend` hygiene item: the change it carries in an inbox line, and applying it once a
person approves it (`brain inbox approve N`). `brain tend` makes the items and queues them;
`brain inbox` lists and approves them; both import this module, which imports neither.

An item names its targets by the hash of their lines (a note by the hash of its text), never by
line number: approving one item moves the lines of the others. An item whose target changed
since the sweep is refused with the reason, and nothing is written. Applying touches several files
(the core file, AI/DROPPED.md, AI/TENDED.md, the inbox): the text read and the new text of each are
journalled first, then each change is written atomically (merged into a file a person changed
meanwhile, brain.edits.write), then the journal goes; a crash in between is finished by the next
inbox or tend command, so the vault ends before or after, never half-way.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from brain.config import DROPPED, INBOX, TENDED, index_path, state_dir
from brain.edits import locked, read, read_journal, without, write
from brain.errors import BrainError
from brain.files import write_atomic
from brain.text import noun, printable

OPS = ("supersede", "drop", "merge", "date", "alias", "check")
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
    op: str  # supersede | drop | merge | date | alias | check
    key: str  # the same change of the same lines: the same key
    summary: str  # one line for a person
    why: str
    targets: tuple[Target, ...]
    cite: tuple[str, ...] = ()  # supersede: the newer bullets' handles
    aliases: tuple[str, ...] = ()  # alias: the aliases the bullet gets

    def line(self) -> str:
        """The item as an inbox line: what a person reads, then brain's own part."""
        data = {
            "op": self.op,
            "key": self.key,
            "why": self.why,
            "targets": [[t.path, t.hash, t.line, t.handle] for t in self.targets],
            "cite": list(self.cite),
        }
        if self.aliases:
            data["aliases"] = list(self.aliases)
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
        aliases = tuple(str(a) for a in data.get("aliases", ()))
        if op == "alias" and not aliases:
            return None
        return Item(op, str(data["key"]), summary, str(data["why"]), targets, cite, aliases)
    except (ValueError, KeyError, TypeError):
        return None


def line_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _key(op: str, targets: list[Target], aliases: tuple[str, ...] = ()) -> str:
    joined = "|".join(f"{t.path}:{t.hash}" for t in targets) + "".join(f"|{a}" for a in aliases)
    return hashlib.sha256(f"{op}|{joined}".encode()).hexdigest()[:12]


def make(
    op: str,
    summary: str,
    why: str,
    targets: list[Target],
    cite: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
) -> Item:
    # The summary is the inbox line a person reads: a note's name in it is escaped, so a newline
    # or ESC in the name can neither tear the item in two nor reach a terminal (the targets keep
    # the exact name, in the payload's JSON).
    key = _key(op, targets, aliases)
    return Item(op, key, printable(summary), why, tuple(targets), cite, aliases)


def applied_keys(vault: Path) -> set[str]:
    return set(re.findall(r"\[tend ([0-9a-f]{12})\]", read(vault, TENDED)))


def log_tended(vault: Path, entries: list[str]) -> None:
    with locked(vault):
        current = read(vault, TENDED)
        write(vault, TENDED, tended_text(current, entries), was=current)


def tended_text(current: str, entries: list[str]) -> str:
    today = dt.date.today().isoformat()
    base = current if current.strip() else _TENDED_HEAD
    return base.rstrip("\n") + "\n" + "".join(f"- {today} {e}\n" for e in entries)


# --- what an item would change, for a person to read ---------------------------------------------


@dataclass(frozen=True)
class Shown:
    role: str  # what the item does to it: drops, keeps, dates today, gets the alias 'x', marks
    where: str  # path:line as the file is now (a note: its path)
    text: str  # the line as it is now (a note: its title), or why it cannot be shown


def target_text(vault: Path, rel: str) -> str:
    """The text of a file an item names (as brain.edits.read reads it), or a BrainError saying
    why it is not read: the name comes from an inbox line, which another machine or a person can
    write. A name that is not a path inside the vault (absolute, `..`, a NUL: the desk answered
    500), a link out of it, or a file over brain.vault.NOTE_MAX (read whole into the desk's
    page, as the index does not: brain.edits.read refuses it) is refused."""
    from brain.files import confine

    parts = rel.split("/")
    if not rel or "\0" in rel or rel.startswith("/") or ".." in parts:
        why = "drop the item (`brain inbox drop N`)"
        raise BrainError(f"{printable(rel)} is not a path inside the vault", why)
    confine(vault / rel, vault)  # a link out of the vault: refused, in one line
    return read(vault, rel)


def shown(vault: Path, item: Item) -> tuple[Shown, ...]:
    """Each line an item changes, as the file holds it now, with what approving does to it: the
    text a person reads before approving (the desk's hygiene cards)."""
    out = []
    for k, t in enumerate(item.targets):
        try:
            lines = target_text(vault, t.path).split("\n")
        except BrainError as exc:
            role = "marks superseded" if item.op == "supersede" else _role(item, k)
            out.append(Shown(role, t.path, f"not shown: {exc.message}"))
            continue
        except OSError:
            lines = []
        if item.op == "supersede":
            title = next((x for x in lines if x.strip() and x.strip() != "---"), "")
            out.append(Shown("marks superseded", t.path, title.strip()))
            continue
        n = _find(lines, t.hash)
        where = f"{t.path}:{n + 1}" if n >= 0 else f"{t.path}:{t.line}"
        text = lines[n] if n >= 0 else "no longer there as the sweep saw it (approving refuses)"
        out.append(Shown(_role(item, k), where, text))
    return tuple(out)


def _role(item: Item, k: int) -> str:
    if item.op == "merge":
        return "keeps (with the others' aliases)" if k == 0 else "drops"
    if item.op == "alias":
        names = ", ".join(repr(a) for a in item.aliases)
        return f"gets the {noun(len(item.aliases), 'alias', 'aliases')} {names}"
    roles = {"drop": "drops", "date": "dates today", "check": "dates today (it still holds)"}
    return roles.get(item.op, item.op)


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


Check = Callable[[str, str], str]  # (core file, bullet line) -> why lint refuses it, or ""
Plan = dict[str, tuple[str, str]]  # a vault file -> (the text read, its new text)


def plan(vault: Path, item: Item, inbox_line: str, check: Check | None = None) -> Plan:
    """The text read and the new text of every file the item changes, or a BrainError saying
    why it no longer applies (or, with `check`, why a bullet line it would write is refused).
    Reads only; the caller holds the inbox's lock."""
    if item.key in applied_keys(vault):
        raise BrainError(
            f"this item was applied already ({TENDED} lists [tend {item.key}])",
            "drop it with `brain inbox drop N`",
        )
    read_: dict[str, str] = {}  # each file read once: its change is made to that text
    texts: dict[str, list[str]] = {}

    def got(rel: str) -> str:
        if rel not in read_:
            read_[rel] = target_text(vault, rel)
        return read_[rel]

    def lines_of(rel: str) -> list[str]:
        if rel not in texts:
            texts[rel] = got(rel).split("\n")
        return texts[rel]

    today = dt.date.today().isoformat()
    dropped: list[str] = []
    log = f"{item.op}: {item.summary} ({item.why}) [tend {item.key}]"
    if item.op == "supersede":
        t = item.targets[0]
        body = got(t.path)
        if line_hash(body) != t.hash:
            raise BrainError(
                f"{t.path} changed since the sweep, so it is not marked",
                "drop the item (`brain inbox drop N`); the next `brain tend` looks again",
            )
        texts[t.path] = supersede_header(body, item.cite, today).split("\n")
    else:
        dropped = _edit_bullets(item, lines_of, today)
    if dropped:
        base = got(DROPPED)
        base = base if base.strip() else _DROPPED_HEAD
        why = f"  <!-- dropped {today} by brain tend: {item.why} [tend {item.key}] -->"
        texts[DROPPED] = (
            base.rstrip("\n") + "\n" + "".join(f"{d}\n{why}\n" for d in dropped)
        ).split("\n")
    if check is not None and item.op in ("alias", "merge"):  # the ops that write new words
        _check_written(vault, texts, check)
    lines = lines_of(INBOX)
    if inbox_line in lines:  # as approve and drop take a proposal: edits.without
        texts[INBOX] = without("\n".join(lines), {lines.index(inbox_line) + 1}).split("\n")
    texts[TENDED] = tended_text(got(TENDED), [log]).split("\n")
    return {rel: (got(rel), "\n".join(ls)) for rel, ls in texts.items()}


def _check_written(vault: Path, texts: dict[str, list[str]], check: Check) -> None:
    """Every bullet line the item writes that the file did not hold passes `check` (lint's)."""
    from brain.config import CORE_FILES

    for rel in CORE_FILES:
        if rel not in texts:
            continue
        was = set(read(vault, rel).split("\n"))
        for line in texts[rel]:
            if line.startswith("- **") and line not in was:
                why = check(rel, line)
                if why:
                    raise BrainError(f"the bullet it would write in {rel} is refused: {why}")


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
    if item.op in ("date", "check"):  # a person says the fact still holds, its code moved or not
        from brain.commands.verify import redate

        for t, k in found:
            lines_of(t.path)[k] = redate(lines_of(t.path)[k], today)
        return []
    if item.op == "alias":
        t, k = found[0]
        lines_of(t.path)[k] = with_aliases(lines_of(t.path)[k], item.aliases)
        return []
    if item.op == "merge":
        from brain.vault import parse_head

        keep, kk = found[0]
        others = [a for t, k in found[1:] for a in parse_head(lines_of(t.path)[k])[1]]
        lines_of(keep.path)[kk] = with_aliases(lines_of(keep.path)[kk], others)
        found = found[1:]
    dropped = []
    # bottom up in each file, so that the line numbers found stay true
    for t, k in sorted(found, key=lambda x: (x[0].path, -x[1])):
        dropped.append(lines_of(t.path).pop(k))
    return dropped


def with_aliases(line: str, new: Sequence[str]) -> str:
    """A bullet's line with each alias of `new` it lacks added, in order (learn.with_alias: the
    rest of the line is kept byte for byte)."""
    from brain.commands.learn import with_alias
    from brain.vault import parse_head

    handle, aliases, _ = parse_head(line)
    for alias in new:
        if alias not in aliases:
            line = with_alias(line, handle, alias)
            aliases = (*aliases, alias)
    return line


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


def apply(vault: Path, item: Item, inbox_line: str, check: Check | None = None) -> Outcome:
    """Apply an approved item (the caller holds the inbox's lock): plan every file (each bullet
    line it writes passing `check`), journal the plan, write each file atomically, delete the
    journal."""
    texts = plan(vault, item, inbox_line, check)
    first = item.targets[0].path
    was, now = (t.split("\n") for t in texts[first])
    # where the file changed first: the bullet dated or kept, the line dropped, the header added
    line = next((k for k, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), len(now))
    write_atomic(_journal(vault), json.dumps(texts, ensure_ascii=False), 0o600)
    _write_all(vault, texts)
    return Outcome(item.summary, first, line + 1, tuple(texts))


def _write_all(vault: Path, texts: Plan) -> None:
    for n, (rel, (was, body)) in enumerate(texts.items()):
        if n:
            _between_writes(rel)
        write(vault, rel, body, was=was)
    with contextlib.suppress(FileNotFoundError):
        _journal(vault).unlink()


def _between_writes(rel: str) -> None:
    """A seam for the crash test: nothing happens here."""


def recover(vault: Path) -> str:
    """Finish an apply a crash interrupted (the caller holds the inbox's lock): make every change
    the journal holds again (a file that holds its new text already is left alone). Returns what
    it finished, "" when there was nothing."""
    path = _journal(vault)
    doc = read_journal(path)
    if doc is None:
        return ""
    texts: Plan = {}
    for rel, held in doc.items() if isinstance(doc, dict) else ():
        if not (isinstance(rel, str) and _vault_relative(rel)):
            texts = {}
            break
        # an older brain's journal holds only the new text: made over what the file holds now
        pair = [read(vault, rel), held] if isinstance(held, str) else held
        if not _pair(pair):
            texts = {}
            break
        texts[rel] = (pair[0], pair[1])
    if not texts:
        with contextlib.suppress(OSError):
            path.unlink()
        return ""
    _write_all(vault, texts)
    return f"a tend item ({', '.join(texts)})"


def _pair(v: object) -> TypeGuard[list[str]]:
    return isinstance(v, list) and len(v) == 2 and all(isinstance(s, str) for s in v)


def _vault_relative(rel: str) -> bool:
    """A journal's file name is a vault file's (writes are confined to the vault anyway)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and rel.endswith(".md")
