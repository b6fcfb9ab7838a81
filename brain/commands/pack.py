"""`brain pack [PROJECT]`: the briefing an agent opens a project with.

The pack is the bullets that name or mention the project (terse, newest first), then the vault's
working rules (AI/TUNINGS.md) while the budget lasts, then one line naming the project's newest
handoff and one counting the files in its state folder. For a project the vault knows nothing
about (and, as a session-start hook, outside any repository) it is one line saying that brain is
there and how to ask it, then the working rules: the starter tells agents they read TUNINGS at the
start of every session, so every session gets them. It never exceeds `--budget` tokens (bytes
/ 4, as everywhere in brain).

It is cached in the state dir against the index's build stamp: a SessionStart hook runs it at
every session start, so serving a cached pack must cost little more than starting Python. This
module therefore imports only the standard library, `brain.index`, `brain.drift`, `brain.vocab`
and `brain.hook_event` at module level.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from brain import drift, index
from brain.config import CORE_FILES, index_path
from brain.errors import UsageError
from brain.files import read_json_dict
from brain.hook_event import Event
from brain.text import plural
from brain.vocab import BYTES_PER_TOKEN, SEP, fold, fts_phrase, split_aliases, tokens, words

DEFAULT_BUDGET = 1500  # tokens; a token is 4 bytes of output
PACK_FORMAT = "6"  # bump when the text or the cached shape changes
RULES_FILE = CORE_FILES[2]  # AI/TUNINGS.md: how the agent should work, every session


@dataclass(frozen=True)
class PackBullet:
    path: str
    line: int
    handle: str
    aliases: tuple[str, ...]
    text: str
    section: str | None  # the heading it is under (None before any heading)
    source: str
    date: str
    code_changed: drift.Drift | None = None  # commits to the files it names since

    def terse(self) -> str:
        """One line, as `brain find` gives an agent: locator, handle, fact, date (and how the
        code it names changed since)."""
        line = f"{self.path}:{self.line} {self.handle}{SEP}{self.text}{SEP}{self.date}"
        return f"{line}{SEP}{self.code_changed.line()}" if self.code_changed else line


@dataclass(frozen=True)
class PackResult:
    project: str | None  # None: outside a repository, with no project named
    vault: str | None  # None with the project
    budget: int  # tokens
    tokens: int  # tokens the text uses (bytes / 4, rounded up)
    bullets: tuple[PackBullet, ...]  # the project's bullets that fit
    rules: tuple[PackBullet, ...]  # working rules (AI/TUNINGS.md) that fit after them
    omitted: int  # matching bullets and rules left out to stay within the budget
    handoff: str | None  # vault-relative path of the newest handoff
    handoff_superseded_by: tuple[str, ...]  # handles of newer bullets the handoff is older than
    state_files: int | None  # files in projects/<name>/state/ (None: no such folder)
    built_at: str | None  # the index build the pack was made from (None: no pack was made)
    cached: bool  # served from the cache
    text: str  # the briefing itself ("" only when not even its first line fits the budget)
    # whether the vault knows the project (a bullet names it, or it has a projects/ folder); not
    # a JSON key: `bullets`, `handoff` and `state_files` say it there
    known: bool = field(default=False, metadata={"json": False})

    @property
    def empty(self) -> bool:
        """The vault knows nothing about the project: the pack holds the working rules only."""
        return not self.known


def name_pattern(project: str) -> re.Pattern[str] | None:
    """Matches the project's name as whole words of folded text; `my-repo` also as `my repo`."""
    found = words(project)
    if not found:
        return None
    body = r"[\W_]+".join(re.escape(w) for w in found)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])")


# --- the project's folder ------------------------------------------------------------------------


def project_dir(vault: Path, project: str) -> str:
    """`projects/<name>` as it is spelt in the vault (matched case- and accent-blind), or "".
    Never a folder out of the vault: a name with `/` or `..` in it (`brain pack ../../x` named
    a handoff out there for the agent to read and counted its files), nor a link out of it (the
    index skips those too)."""
    if "/" in project or "\\" in project or "\0" in project or project in (".", ".."):
        return ""
    if _inside(vault, vault / "projects" / project) and (vault / "projects" / project).is_dir():
        return f"projects/{project}"
    wanted = fold(project)
    try:
        names = sorted(p.name for p in (vault / "projects").iterdir() if p.is_dir())
    except OSError:
        return ""
    return next(
        (
            f"projects/{name}"
            for name in names
            if fold(name) == wanted and _inside(vault, vault / "projects" / name)
        ),
        "",
    )


def _inside(vault: Path, path: Path) -> bool:
    from brain.files import outside

    try:
        return outside(path, vault) is None
    except OSError:
        return False


def newest_handoff(vault: Path, folder: str) -> str:
    """The handoff whose file name sorts last (they start with YYYY-MM-DD), or "". A handoff
    the index does not read is never the agent's either: a link out of the vault, or a file over
    brain.vault.NOTE_MAX."""
    from brain.vault import oversized

    if not folder:
        return ""
    try:
        names = [
            p
            for p in (vault / folder / "handoffs").iterdir()
            if p.name.endswith(".md") and not p.name.startswith(".")
        ]
    except OSError:
        return ""
    for p in sorted(names, key=lambda p: p.name, reverse=True):
        with contextlib.suppress(OSError):
            if _inside(vault, p) and p.is_file() and oversized(p) is None:
                return f"{folder}/handoffs/{p.name}"
    return ""


def state_count(vault: Path, folder: str) -> int:
    """Files in the state folder, at any depth, hidden ones aside; -1 when there is none."""
    if not folder or not (vault / folder / "state").is_dir():
        return -1
    count = 0
    for _root, dirs, files in os.walk(vault / folder / "state"):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        count += sum(1 for f in files if not f.startswith("."))
    return count


# --- choosing the bullets ------------------------------------------------------------------------

_COLUMNS = "u.path, u.line, u.handle, u.aliases, u.text, u.section, u.source, u.date"


def _bullet(row: tuple[Any, ...]) -> PackBullet:
    path, line, handle, aliases, text, section, source, date = row
    names = split_aliases(str(aliases))
    return PackBullet(path, line, handle, names, text, section or None, source, date)


def _candidates(conn: sqlite3.Connection, project: str) -> list[PackBullet]:
    """Bullets whose words could name the project: an FTS phrase query (a superset, as FTS stems
    and folds), or every bullet when FTS cannot take the query."""
    phrase = fts_phrase(words(project))
    try:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM fts JOIN units u ON u.id = fts.rowid"  # noqa: S608
            " WHERE fts MATCH ? AND u.kind = 'bullet' AND u.path != 'AI/INBOX.md'",
            (phrase,),
        ).fetchall()
    except sqlite3.OperationalError:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM units u WHERE u.kind = 'bullet'"  # noqa: S608
            " AND u.path != 'AI/INBOX.md'"  # proposals (review after) answer finds, not packs
        ).fetchall()
    return [_bullet(r) for r in rows]


def _tier(b: PackBullet, pattern: re.Pattern[str], wanted: str) -> int | None:
    """0: the bullet is filed under the project or names it; 1: it mentions it; None: neither."""
    section = b.section or ""
    crumbs = [fold(c.strip()) for c in section.split(">")]
    if wanted in crumbs:
        return 0
    if pattern.search(fold(b.handle)) or any(pattern.search(fold(a)) for a in b.aliases):
        return 0
    if pattern.search(fold(section)) or pattern.search(fold(b.text)):
        return 1
    return None


def project_bullets(conn: sqlite3.Connection, project: str) -> list[PackBullet]:
    """The bullets that name or mention the project, strongest first, newest first within."""
    pattern = name_pattern(project)
    if pattern is None:
        return []
    wanted = " ".join(words(project))
    ranked: list[tuple[int, str, PackBullet]] = []
    for b in _candidates(conn, project):
        tier = _tier(b, pattern, wanted)
        if tier is not None:
            ranked.append((tier, b.date, b))
    # tier ascending, date descending, then file order: sort by the stable keys in two passes
    ranked.sort(key=lambda t: (t[2].path, t[2].line))
    ranked.sort(key=lambda t: t[1], reverse=True)
    ranked.sort(key=lambda t: t[0])
    return [b for _, _, b in ranked]


def working_rules(conn: sqlite3.Connection) -> list[PackBullet]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM units u WHERE u.kind = 'bullet' AND u.path = ?"  # noqa: S608
        " ORDER BY u.line",
        (RULES_FILE,),
    ).fetchall()
    return [_bullet(r) for r in rows]


# --- the text ------------------------------------------------------------------------------------


def _size(line: str) -> int:
    return len(line.encode("utf-8")) + 1  # and its newline


def _trailer(
    project: str, handoff: str, folder: str, state_files: int, newer: tuple[str, ...] = ()
) -> tuple[str, str]:
    """The two closing lines: the newest handoff (marked when newer bullets correct it), and the
    state folder's file count."""
    if handoff:
        from brain.text import printable

        handoff_line = f"Newest handoff: {printable(handoff)}"
        if newer:
            handoff_line += " (older than " + ", ".join(f"**{h}**" for h in newer) + ")"
    elif folder:
        handoff_line = f"Newest handoff: none in {folder}/handoffs/"
    else:
        handoff_line = f"Newest handoff: none (the vault has no projects/{project}/ folder)"
    if state_files >= 0:
        state_line = f"State: {plural(state_files, 'file')} in {folder}/state/"
    elif folder:
        state_line = f"State: no {folder}/state/ folder"
    else:
        state_line = "State: no state folder"
    return handoff_line, state_line


def intro(project: str | None) -> str:
    """The line a pack opens with when the vault knows nothing about the project (or there is
    none): brain is there, and how to ask it."""
    where = f"has nothing on {project} yet" if project else "is at hand"
    return (
        f"brain: the user's memory vault {where}; `brain find WORDS` searches it, "
        "`brain propose 'handle — fact'` files what you settle"
    )


def compose(
    project: str | None,
    bullets: list[PackBullet],
    rules: list[PackBullet],
    handoff: str,
    folder: str,
    state_files: int,
    budget: int,
    newer: tuple[str, ...] = (),
) -> tuple[str, list[PackBullet], list[PackBullet], int]:
    """The briefing within `budget` tokens: (text, bullets kept, rules kept, omitted).

    The handoff and state lines and the header are placed first (in that order, each only if it
    fits), then a worst-case line for what is left out is reserved, then bullets and rules fill
    what remains; a bullet too long for the space left is skipped, not cut. For a project the
    vault does not know (no bullet names it, no projects/ folder) or none, the header is `intro`
    and only the working rules follow: nothing at all when not even that line fits.
    """
    limit = budget * BYTES_PER_TOKEN
    seen = {(b.path, b.line) for b in bullets}
    rules = [r for r in rules if (r.path, r.line) not in seen]
    known = bool(bullets or folder)
    rules_header = f"Working rules ({RULES_FILE}):"
    total = len(bullets) + len(rules)
    if known:
        header = f"brain: what the vault knows about {project} (terse; `brain find WORDS` for more)"
        handoff_line, state_line = _trailer(str(project), handoff, folder, state_files, newer)
        more = f"`brain find {project}`"
    else:
        header, handoff_line, state_line, more = intro(project), "", "", RULES_FILE

    def omitted_line(n: int) -> str:
        return f"({n} more over the budget: {more}, or raise --budget)"

    avail = limit
    placed: dict[str, bool] = {}
    for key, line in (("handoff", handoff_line), ("state", state_line), ("header", header)):
        placed[key] = bool(line) and _size(line) <= avail
        if placed[key]:
            avail -= _size(line)
    if not known and not placed["header"]:
        return "", [], [], total
    reserve = _size(omitted_line(total)) if total else 0
    reserved = reserve <= avail
    if reserved:
        avail -= reserve
    kept: list[PackBullet] = []
    for b in bullets:
        if _size(b.terse()) <= avail:
            kept.append(b)
            avail -= _size(b.terse())
    kept_rules: list[PackBullet] = []
    for r in rules:
        cost = _size(r.terse()) + (0 if kept_rules else _size(rules_header))
        if cost <= avail:
            kept_rules.append(r)
            avail -= cost
    omitted = total - len(kept) - len(kept_rules)
    lines = [header] if placed["header"] else []
    lines += [b.terse() for b in kept]
    if kept_rules:
        lines.append(rules_header)
        lines += [r.terse() for r in kept_rules]
    if placed["handoff"]:
        lines.append(handoff_line)
    if placed["state"]:
        lines.append(state_line)
    if omitted and reserved:
        lines.append(omitted_line(omitted))
    text = "".join(line + "\n" for line in lines)
    return text, kept, kept_rules, omitted


# --- the cache -----------------------------------------------------------------------------------


def cache_path(vault: Path, project: str | None, budget: int) -> Path:
    """The cached pack's file; `-` for the pack of no project (a slug is never `-`)."""
    slug = (re.sub(r"[^a-z0-9]+", "-", fold(project)).strip("-") or "project") if project else "-"
    ix = index_path(vault)
    return ix.parent.parent / "packs" / ix.stem / f"{slug}-{budget}.json"


def _key(vault: Path, project: str | None, budget: int, built: str, folder: str, state: int) -> str:
    name = "" if project is None else project
    return "\x1f".join((PACK_FORMAT, str(vault), name, str(budget), built, folder, str(state)))


def _load(path: Path, key: str) -> PackResult | None:
    doc = read_json_dict(path)
    if doc.get("key") != key:
        return None  # missing, unreadable, or another vault's or version's
    try:
        data = doc["pack"]
        data["bullets"] = tuple(_from_doc(b) for b in data["bullets"])
        data["rules"] = tuple(_from_doc(b) for b in data["rules"])
        data["handoff_superseded_by"] = tuple(data["handoff_superseded_by"])
        data["cached"] = True
        return PackResult(**data)
    except (KeyError, TypeError, AttributeError):
        return None  # torn or from another version: rebuild


def _from_doc(doc: dict[str, Any]) -> PackBullet:
    doc["aliases"] = tuple(doc["aliases"])
    if doc.get("code_changed") is not None:
        doc["code_changed"] = drift.Drift(**doc["code_changed"])
    return PackBullet(**doc)


def _marked(conn: sqlite3.Connection, bullets: list[PackBullet]) -> list[PackBullet]:
    """`bullets` with the drift of each that has any (read from the index, never history)."""
    keys = [drift.key(b.path, b.section, b.handle, b.text, b.date) for b in bullets]
    found = drift.lookup(conn, keys)
    return [
        dataclasses.replace(b, code_changed=found[k]) if k in found else b
        for b, k in zip(bullets, keys, strict=True)
    ]


def _store(path: Path, key: str, result: PackResult) -> None:
    """Write the cache atomically; a failure only costs a rebuild next time."""
    from brain.files import write_atomic

    with contextlib.suppress(OSError):
        write_atomic(path, json.dumps({"key": key, "pack": asdict(result)}), mode=0o600)


# --- the command ---------------------------------------------------------------------------------


def pack(
    vault: Path, project: str | None, *, budget: int = DEFAULT_BUDGET, fresh: bool = False
) -> PackResult:
    """The pack of `project` from `vault` (None: no project, the working rules only), from the
    cache when the index has not changed since."""
    if budget < 1:
        raise UsageError("--budget must be a positive number of tokens", "pass e.g. --budget 1500")
    if project is not None:
        project = project.strip()
        if not words(project):
            raise UsageError(
                f"{project!r} is not a project name", "name it, e.g. brain pack payments"
            )
    folder = project_dir(vault, project) if project else ""
    state = state_count(vault, folder)
    conn = index.open_index(vault)
    try:
        built = index.built(conn)
        key = _key(vault, project, budget, built, folder, state)
        where = cache_path(vault, project, budget)
        if not fresh:
            hit = _load(where, key)
            if hit is not None:
                return hit
        found = _marked(conn, project_bullets(conn, project)) if project else []
        rules = _marked(conn, working_rules(conn))
        handoff = newest_handoff(vault, folder)
        newer: tuple[str, ...] = ()
        if handoff:
            from brain.superseded import newer_than_file

            newer = newer_than_file(conn, handoff)
    finally:
        conn.close()
    text, kept, kept_rules, omitted = compose(
        project, found, rules, handoff, folder, state, budget, newer
    )
    size = len(text.encode("utf-8"))
    result = PackResult(
        project=project,
        vault=str(vault),
        budget=budget,
        tokens=tokens(size),
        bullets=tuple(kept),
        rules=tuple(kept_rules),
        omitted=omitted,
        handoff=handoff or None,
        handoff_superseded_by=newer,
        state_files=state if state >= 0 else None,
        built_at=built,
        cached=False,
        text=text,
        known=bool(found or folder),
    )
    _store(where, key, result)
    return result


def empty(budget: int) -> PackResult:
    """The pack outside a repository with no project named: no project, no vault, no text."""
    return PackResult(None, None, budget, 0, (), (), 0, None, (), None, None, False, "")


# --- the session-start hook ---------------------------------------------------------------------

MOMENT_S = 10.0  # the same session's start within this long is one moment run twice
# A resumed or forked session's conversation holds the pack it started with (Claude Code saves
# what a hook injects in the transcript and replays it on resume: its hooks reference); brain
# registers no resume matcher, and answers nothing where a program runs it anyway.
RESUMED = frozenset({"resume", "fork"})


def first_of_moment(event: Event) -> bool:
    """Whether this session start is the first to answer its moment. VS Code runs the hooks of
    both ~/.claude/settings.json and ~/.copilot/hooks and ignores matchers (microsoft/vscode-docs
    docs/copilot/customization/hooks.md, "How does VS Code handle Claude Code hook
    configurations?"), so one start runs pack four times: only the first answers. A start of the
    same session and source after MOMENT_S is a new moment (another /clear); a compaction always
    answers, as the context it summarized lost the pack; so does a start that names no session
    or no source (no agent sends such a start: a script's)."""
    if not event.session or not event.source or event.source == "compact":
        return True
    from brain import marks

    try:
        return marks.make("packed", f"{event.source}\x1f{event.session}", fresh_for=MOMENT_S)
    except OSError:
        return True  # no state dir to mark in: answering twice beats answering never


def receive_in_background(vault_option: str | None) -> None:
    """At session start, a sync receive starts in the background: what other machines sent
    reaches the agent on its next prompt. The hook pays for the spawn only and never fails."""
    from brain import autosync
    from brain.config import resolve_vault
    from brain.errors import BrainError

    with contextlib.suppress(BrainError, OSError):
        autosync.background(resolve_vault(vault_option), "receive")
