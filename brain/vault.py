"""The vault's shape: bullets in the three core files, paragraphs everywhere else.

Parsing is line-based on purpose: every unit must carry the line it starts on, and a hard-wrapped
paragraph must become one unit so that words on different physical lines are found together.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from brain.config import CORE_FILES, NOT_SEARCHED, SYNONYMS
from brain.files import outside
from brain.text import printable
from brain.vocab import SEP

# The heading an approved bullet goes under when its handle is new to the file (brain inbox
# approve, and a team proposal's commit, which is built as approving would write it).
APPROVED_HEADING = "## From the inbox"
MAX_UNIT_CHARS = 16_000  # a pasted log of a megabyte stays searchable by its start, not a hazard

_BULLET = re.compile(
    r"^- \*\*(?P<handle>[^*]+?)\*\*(?: \(aliases: (?P<aliases>(?:…\(\d+\)|[^)])*)\))?(?P<rest>.*)$"
)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FILE_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*([-*_=])(?:\s*\1){2,}\s*$")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")
# The instruction paragraphs of the starter core files from before they were HTML comments (first
# 16 hex digits of the sha256 of each paragraph's text): vaults made then still hold them, and
# they are how to write a bullet, not something the vault knows.
OLD_STARTER = frozenset(
    """5f145cc906c790f8 410cd55f6eca449f c6c4662768ca97a7 6e16726e829149b7 9df4aa743f8bb992
    594c15507d86eee6""".split()
)


class Unit(NamedTuple):
    """One searchable thing: a bullet, or a paragraph/list item of prose; the one row type for
    a bullet (the index's units, verify's and tend's sweep, the core bullets inbox matches).
    A tuple, not a dataclass: a sweep of a large vault builds 10,000 of them, 4-6x faster.
    """

    path: str  # vault-relative, '/'-separated
    line: int  # 1-based line the unit starts on
    kind: str  # "bullet" | "prose"
    text: str  # the fact of a bullet; the paragraph of prose, joined into one line
    section: str = ""  # heading breadcrumb ("Title > Section" for prose, "Section" for bullets)
    handle: str = ""
    aliases: tuple[str, ...] = ()
    source: str = ""
    date: str = ""  # YYYY-MM-DD or ""
    raw: str = ""  # the line(s) as written


@dataclass(frozen=True)
class Problem:
    path: str
    line: int | None  # None: the file as a whole (a link skipped, a file that cannot be read)
    message: str

    def __str__(self) -> str:
        where = f"{printable(self.path)}:{self.line}" if self.line else printable(self.path)
        return f"{where}: {self.message}"


@dataclass
class Parsed:
    units: list[Unit] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True)
class Bullet:
    handle: str
    aliases: tuple[str, ...]
    fact: str
    source: str
    date: str


def valid_date(text: str) -> bool:
    if not _DATE.match(text):
        return False
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def parse_head(line: str) -> tuple[str, tuple[str, ...], str]:
    """(handle, aliases, rest) of a bullet line `- **handle** (aliases: a, b)...`, or ValueError."""
    m = _BULLET.match(line.rstrip())
    if not m:
        raise ValueError(
            "bullet has no **handle**; write `- **handle** — fact — source — YYYY-MM-DD`"
        )
    handle = m["handle"].strip()
    if not handle:
        raise ValueError("bullet has an empty **handle**")
    if "(aliases:" in handle:
        name = handle.split("(aliases:", 1)[0].strip()
        raise ValueError(
            f"the handle {handle!r} holds its aliases; close the bold before them: "
            f"`- **{name}** (aliases: ...) — fact`"
        )
    aliases = tuple(a.strip() for a in (m["aliases"] or "").split(",") if a.strip())
    return handle, aliases, m["rest"]


def parse_bullet(line: str) -> Bullet:
    """Parse one core-file bullet or raise ValueError saying what is wrong with it."""
    handle, aliases, rest = parse_head(line)
    if not rest.startswith(SEP):
        if re.match(r"\s*\(\s*alias", rest, re.IGNORECASE):  # `(aliases x)`, `(aliases: x —`
            raise ValueError(
                f"the alias list of {handle!r} is not closed or lacks its colon; write"
                f" `- **{handle}** (aliases: a, b) — fact`"
            )
        raise ValueError(f"expected ` — ` after the handle of {handle!r}")
    parts = rest[len(SEP) :].split(SEP)
    if len(parts) < 3:
        last = parts[-1].strip()
        dated = valid_date(last)
        if len(parts) == 2:  # the next step for the part a person most often leaves out
            add = "its source before the date" if dated else f"` — YYYY-MM-DD` after {last!r}"
        else:
            add = "the fact and its source before the date" if dated else "` — source — YYYY-MM-DD`"
        raise ValueError(f"bullet {handle!r} needs `fact — source — YYYY-MM-DD`: add {add}")
    date = parts[-1].strip()
    if not valid_date(date):
        raise ValueError(f"bullet {handle!r} must end in a valid date YYYY-MM-DD, not {date!r}")
    source = parts[-2].strip()
    fact = SEP.join(parts[:-2]).strip()
    if not fact:
        raise ValueError(f"bullet {handle!r} has an empty fact")
    if not source:
        raise ValueError(f"bullet {handle!r} has an empty source")
    return Bullet(handle, aliases, fact, source, date)


def format_bullet(b: Bullet) -> str:
    aliases = f" (aliases: {', '.join(b.aliases)})" if b.aliases else ""
    return f"- **{b.handle}**{aliases}{SEP}{b.fact}{SEP}{b.source}{SEP}{b.date}"


def keep_aliases(bullet: str, current: str) -> str:
    """An update that names no aliases keeps the old bullet's: they are how it is found."""
    from dataclasses import replace

    if not current:
        return bullet
    new, old = parse_bullet(bullet), parse_bullet(current)
    if new.aliases or not old.aliases:
        return bullet
    return format_bullet(replace(new, aliases=old.aliases))


_MARKER = re.compile(r"\s*<!-- brain:[^>]*-->\s*$")


def parse_inbox(text: str, path: str) -> list[Unit]:
    """The inbox's proposals as bullets (review mode `after`: they answer finds, marked
    unreviewed). Lines that are not bullets (a `brain tend` item, a broken line) are left out."""
    units = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.startswith("- **") or "<!-- brain:tend " in line:
            continue
        bullet = _MARKER.sub("", line)
        try:
            b = parse_bullet(bullet)
        except ValueError:
            continue
        fact = _clip(b.fact)
        units.append(
            Unit(path, number, "bullet", fact, "", b.handle, b.aliases, b.source, b.date, bullet)
        )
    return units


def file_date(path: str) -> str:
    m = _FILE_DATE.match(path.rsplit("/", 1)[-1])
    return m.group(1) if m and valid_date(m.group(1)) else ""


# A file is binary, not text, when this share of its first bytes is what no text holds: NUL and
# the other control bytes, and bytes that are not UTF-8 (random data: about half; UTF-16: a NUL
# every other byte). A text file with a stray byte or two stays text and gets its line named.
BINARY_SAMPLE = 8192  # git's own look is the first 8000 bytes
BINARY_SHARE = 0.10
_NOT_TEXT = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")


def binary(data: bytes) -> bool:
    sample = data[:BINARY_SAMPLE]
    if not sample:
        return False
    odd = len(_NOT_TEXT.findall(sample))
    # a multi-byte character cut at the sample's end is not a bad byte
    text = sample.decode("utf-8", errors="replace").rstrip("\ufffd")
    odd += text.count("\ufffd")
    return odd > BINARY_SHARE * len(sample)


def decode(data: bytes, path: str) -> tuple[str, list[Problem]]:
    """Text of a file; bytes that are not UTF-8 are replaced and reported, never fatal. A binary
    file (or UTF-16) reads as empty, named once rather than as thousands of odd lines."""
    if binary(data):
        why = "not a UTF-8 text file (binary, or UTF-16); skipped: re-save it as UTF-8 text"
        return "", [Problem(path, None, why)]
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problem = Problem(path, line, "not valid UTF-8; re-save the file as UTF-8")
        return data.decode("utf-8", errors="replace"), [problem]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_UNIT_CHARS else text[:MAX_UNIT_CHARS] + "…"


def _blocks(text: str) -> Iterator[tuple[int, str, list[str], list[str]]]:
    """Yield (line, kind, lines, headings) for each block; kind is heading, item, para or code.

    `headings` is the heading stack (level-indexed text) in force for the block.
    """
    lines = text.split("\n")
    stack: list[tuple[int, str]] = []
    i, n = 0, len(lines)
    if n and lines[0].strip() == "---":  # front matter is metadata, not prose
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    while i < n:
        line = lines[i]
        if not line.strip() or _RULE.match(line):
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            start, body = i, []
            i += 1
            while i < n and not lines[i].lstrip().startswith(fence.group(1)):
                body.append(lines[i])
                i += 1
            i += 1
            if any(b.strip() for b in body):
                yield start + 1, "code", body, [h for _, h in stack]
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, heading.group(2))]
            yield i + 1, "heading", [line], [h for _, h in stack]
            i += 1
            continue
        start, body = i, [line]
        is_item = bool(_LIST_ITEM.match(line))
        i += 1
        while i < n:
            nxt = lines[i]
            if (
                not nxt.strip()
                or _HEADING.match(nxt)
                or _FENCE.match(nxt)
                or _RULE.match(nxt)
                or _LIST_ITEM.match(nxt)
            ):
                break
            body.append(nxt)
            i += 1
        yield start + 1, "item" if is_item else "para", body, [h for _, h in stack]


def _join(lines: list[str]) -> str:
    out = []
    for k, line in enumerate(lines):
        s = line.strip()
        if k == 0:
            s = _LIST_ITEM.sub("", s, count=1)
        s = s.lstrip("> ").strip() if s.startswith(">") else s
        out.append(s)
    return " ".join(p for p in out if p)


def parse_prose(text: str, path: str) -> list[Unit]:
    title = ""
    date = file_date(path)
    units: list[Unit] = []
    for line, kind, body, heads in _blocks(text):
        if kind == "heading":
            if not title and line and body[0].startswith("# "):
                title = heads[0]
            continue
        crumbs = heads[1:] if title and heads and heads[0] == title else heads
        name = printable(path.rsplit("/", 1)[-1].removesuffix(".md"))
        breadcrumb = " > ".join([title or name, *crumbs])
        if kind == "para" and len(body) > 1 and all(_SENTENCE_END.search(b.rstrip()) for b in body):
            # One sentence per line (a log, a list of observations): each line stands alone.
            # Hard-wrapped prose breaks mid-sentence, so it never takes this branch.
            pieces = [(line + k, [b]) for k, b in enumerate(body)]
        else:
            pieces = [(line, body)]
        for start, lines in pieces:
            joined = "\n".join(lines) if kind == "code" else _join(lines)
            units.append(
                Unit(
                    path,
                    start,
                    "prose",
                    _clip(joined),
                    section=breadcrumb,
                    date=date,
                    raw=_clip("\n".join(lines)),
                )
            )
    return units


def blank_comments(text: str) -> str:
    """`text` with each HTML comment block (from a line that starts with `<!--` to the line that
    holds `-->`) blanked, line numbers kept: Markdown shows no comment, so brain serves none."""
    if "<!--" not in text:
        return text
    lines = text.split("\n")
    fence = ""
    inside = False
    for k, line in enumerate(lines):
        stripped = line.lstrip()
        if inside:
            inside = "-->" not in line
            lines[k] = ""
        elif fence:
            fence = "" if stripped.startswith(fence) else fence
        elif m := _FENCE.match(line):
            fence = m.group(1)
        elif stripped.startswith("<!--"):
            inside = "-->" not in stripped[4:]
            lines[k] = ""
    return "\n".join(lines)


def _old_starter(unit: Unit) -> bool:
    if unit.kind != "prose":
        return False
    return hashlib.sha256(unit.text.encode("utf-8")).hexdigest()[:16] in OLD_STARTER


def parse_core(text: str, path: str) -> Parsed:
    """Bullets of a core file; other text there is prose, a broken bullet a problem."""
    parsed = Parsed()
    sections = _sections(text)
    prose_lines: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not (line.startswith("- **") or (line.startswith("- ") and SEP in line)):
            prose_lines.append(line)
            continue
        prose_lines.append("")  # keeps the line numbers of the remaining prose aligned
        try:
            b = parse_bullet(line)
        except ValueError as exc:
            # still searchable as prose; lint names the line
            parsed.problems.append(Problem(path, number, str(exc)))
            parsed.units.append(
                Unit(path, number, "prose", _clip(line[2:].strip()), raw=_clip(line))
            )
            continue
        parsed.units.append(
            Unit(
                path,
                number,
                "bullet",
                _clip(b.fact),
                sections.get(number, ""),
                b.handle,
                b.aliases,
                b.source,
                b.date,
                _clip(line),
            )
        )
    parsed.units += [u for u in parse_prose("\n".join(prose_lines), path) if not _old_starter(u)]
    parsed.units.sort(key=lambda u: u.line)
    return parsed


def _sections(text: str) -> dict[int, str]:
    """Map each line of a core file to its section: the headings above it, less the file's title."""
    out: dict[int, str] = {}
    stack: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        m = _HEADING.match(line)
        if m:
            level = len(m.group(1))
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, m.group(2))]
        out[number] = " > ".join(h for lv, h in stack if lv > 1)
    return out


def is_core(path: str) -> bool:
    return path in CORE_FILES


def parse(path: str, data: bytes) -> Parsed:
    """A file's units. Credentials are masked before parsing (lines kept), so that nothing read
    from the index (find in every format, pack, export, locate, MCP) can print one; what the guard
    flags is defused (made visible, images removed) and named as a problem."""
    from brain import guard
    from brain.secrets import redact

    named = name_problem(path)
    if named is not None:
        return Parsed([], [named])
    text, problems = decode(data, path)
    text, flags = guard.screen(redact(blank_comments(text)))
    problems += [Problem(path, n, str(flag)) for n, flag in flags]
    parsed = parse_core(text, path) if is_core(path) else Parsed(parse_prose(text, path))
    parsed.problems[:0] = problems
    return parsed


def name_problem(path: str) -> Problem | None:
    """A file whose name holds a credential is never read: every hit prints its path. The
    problem names it masked."""
    from brain.secrets import redact, scan_name

    if not scan_name(path):
        return None
    return Problem(redact(path), 0, "the name holds what looks like a credential; skipped")


def guarded(text: str, path: str) -> list[Problem]:
    """What the guard finds in the lines of a file the index reads (see brain/guard.py): the
    index serves those lines defused, lint names them. The guard reads them masked, as `parse`
    does: a flag quotes what it flags (a lookalike's plain reading), and a line of a private key's
    body is no credential on its own to the output step's rules."""
    from brain import guard
    from brain.secrets import redact

    return [Problem(path, n, str(flag)) for n, flag in guard.scan(redact(text))]


# A note larger than this is not read (by the index, by lint): a received 138 MB note took a
# full reindex 8 minutes and 4.8 GB, and every find waits on the index. 4 MB is some 700,000
# words (War and Peace is 3.2 MB): past it a file is a dump or a log, not a note a person reads.
NOTE_MAX = 4 * 1024 * 1024


def oversized(path: Path) -> int | None:
    """`path`'s size when it is over NOTE_MAX; None when it is not, or cannot be told (absent,
    unreadable: the read that follows says why)."""
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return size if size > NOTE_MAX else None


def over_max(size: int) -> str:
    """How a file of `size` bytes over NOTE_MAX is said, by every command that will not read it."""
    mb = f"{size / (1 << 20):,.2f}".rstrip("0").rstrip(".")  # 4.02, 5, 1,234
    return f"{mb} MB, over the {NOTE_MAX >> 20} MB brain reads of a file"


def refuse_oversized(path: Path, rel: str, outcome: str, next_step: str) -> None:
    """A BrainError (`REL is N MB, over ...: OUTCOME`, then `next_step`) when `path` is over
    NOTE_MAX: for the commands that would read it whole and write it back."""
    from brain.errors import BrainError

    size = oversized(path)
    if size is not None:
        raise BrainError(f"{rel} is {over_max(size)}: {outcome}", next_step)


def too_big(rel: str, size: int) -> Problem:
    """Why `rel`, `size` bytes, over NOTE_MAX, is not read (the index, lint, the desk)."""
    why = f"{over_max(size)}: not read (split it into smaller notes, or move it out of the vault)"
    return Problem(rel, None, why)


@dataclass
class Walk:
    """What a walk of the vault found: files to read, and what it skipped and why."""

    files: list[str] = field(default_factory=list)  # vault-relative, '/'-separated, sorted
    skipped: list[Problem] = field(default_factory=list)


def _utf8(name: str) -> bool:
    """False for a name the file system gave as bytes that are not UTF-8 (surrogate escapes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def link_problem(path: Path, root: Path) -> str:
    """Why a path that may be a symbolic link is not followed ("" when it leads nowhere out of
    `root`: to a file or folder inside it, or to nothing)."""
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop; skipped"
    target = outside(path, root)
    if target is not None:
        return f"a symbolic link to {printable(str(target))}, outside the vault; skipped"
    return ""


def walk(
    vault: Path, keep: Callable[[str, bool], bool], start: str = "", *, any_name: bool = False
) -> Walk:
    """The files under `vault` (or its folder `start`) that `keep(rel, is_dir)` accepts.

    Links are followed only to files inside the vault: one that leads out of it (or in a loop) is
    skipped with a line saying so, and a linked folder is never entered (one inside is walked at
    its own path anyway). A name that is not UTF-8, or a folder that cannot be read, is skipped
    with a line too, unless `any_name` (`brain secrets` reads such a file by its bytes).
    `os.scandir` tells links from files without a stat per file: this runs on every `brain find`.
    """
    found = Walk()
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        folder = vault / rel_dir if rel_dir else vault
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            why = f"cannot read this folder ({exc.strerror}); its files are skipped"
            found.skipped.append(Problem(rel_dir or ".", None, why))
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                link = entry.is_symlink()
                is_dir = entry.is_dir()  # a link's target; no stat for anything else
            except OSError:
                link, is_dir = True, False  # a loop: is_dir cannot tell
            if not keep(rel, is_dir):
                continue
            if not any_name and not _utf8(entry.name):
                why = "the name is not valid UTF-8; skipped (rename it to index it)"
                found.skipped.append(Problem(rel, None, why))
                continue
            if link:
                why = link_problem(Path(entry.path), vault)
                if why:
                    found.skipped.append(Problem(rel, None, why))
                elif not is_dir and Path(entry.path).is_file():
                    found.files.append(rel)
            elif is_dir:
                stack.append(rel)
            elif entry.is_file(follow_symlinks=False):
                found.files.append(rel)
    found.files.sort()
    found.skipped.sort(key=lambda p: p.path)
    return found


def _indexed(rel: str, is_dir: bool) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if name.startswith("."):
        return False
    return is_dir or (name.endswith(".md") and rel not in NOT_SEARCHED) or rel == SYNONYMS


def indexed(vault: Path) -> Walk:
    """Every file the index covers (Markdown, no hidden folders, no inbox, no AI/DROPPED.md or
    AI/TENDED.md; AI/synonyms.tsv)."""
    return walk(vault, _indexed)


def vault_files(vault: Path) -> list[str]:
    """Every Markdown file the index covers: vault-relative, sorted, no hidden folders, no inbox."""
    return [rel for rel in indexed(vault).files if rel != SYNONYMS]


def parse_synonyms(text: str, path: str = SYNONYMS) -> tuple[dict[str, list[str]], list[Problem]]:
    """`term<TAB>expansion` rows under a header; a term may have many rows. A row the guard flags
    is named and left out."""
    from brain import guard

    table: dict[str, list[str]] = {}
    problems: list[Problem] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if number == 1 and line.split("\t")[0].strip().lower() == "term":
            continue
        flags = guard.check(line)
        if flags:  # a row nobody can read right steers every search: it is left out
            problems += [Problem(path, number, str(f)) for f in flags]
            continue
        cells = line.split("\t")
        if len(cells) != 2 or not cells[0].strip() or not cells[1].strip():
            problems.append(Problem(path, number, "expected `term<TAB>expansion`"))
            continue
        term, expansion = cells[0].strip(), cells[1].strip()
        table.setdefault(term.lower(), [])
        if expansion not in table[term.lower()]:
            table[term.lower()].append(expansion)
    return table, problems
