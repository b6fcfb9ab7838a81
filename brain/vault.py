"""The vault's shape: bullets in the three core files, paragraphs everywhere else.

Parsing is line-based on purpose: every unit must carry the line it starts on, and a hard-wrapped
paragraph must become one unit so that words on different physical lines are found together.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from brain.config import CORE_FILES, INBOX, SYNONYMS

SEP = " — "
MAX_UNIT_CHARS = 16_000  # a pasted log of a megabyte stays searchable by its start, not a hazard

_BULLET = re.compile(
    r"^- \*\*(?P<handle>[^*]+?)\*\*(?: \(aliases: (?P<aliases>[^)]*)\))?(?P<rest>.*)$"
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


@dataclass(frozen=True)
class Unit:
    """One searchable thing: a bullet, or a paragraph/list item of prose."""

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
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


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


def parse_bullet(line: str) -> Bullet:
    """Parse one core-file bullet or raise ValueError saying what is wrong with it."""
    m = _BULLET.match(line.rstrip())
    if not m:
        raise ValueError(
            "bullet has no **handle**; write `- **handle** — fact — source — YYYY-MM-DD`"
        )
    handle = m["handle"].strip()
    if not handle:
        raise ValueError("bullet has an empty **handle**")
    aliases = tuple(a.strip() for a in (m["aliases"] or "").split(",") if a.strip())
    rest = m["rest"]
    if not rest.startswith(SEP):
        raise ValueError(f"expected ` — ` after the handle of {handle!r}")
    parts = rest[len(SEP) :].split(SEP)
    if len(parts) < 3:
        raise ValueError(f"bullet {handle!r} needs `fact — source — YYYY-MM-DD`")
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


def file_date(path: str) -> str:
    m = _FILE_DATE.match(path.rsplit("/", 1)[-1])
    return m.group(1) if m and valid_date(m.group(1)) else ""


def decode(data: bytes, path: str) -> tuple[str, list[Problem]]:
    """Text of a file; bytes that are not UTF-8 are replaced and reported, never fatal."""
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
        breadcrumb = " > ".join([title or path.rsplit("/", 1)[-1].removesuffix(".md"), *crumbs])
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
    text, problems = decode(data, path)
    text = blank_comments(text)
    parsed = parse_core(text, path) if is_core(path) else Parsed(parse_prose(text, path))
    parsed.problems[:0] = problems
    return parsed


def vault_files(vault: Path) -> list[str]:
    """Every Markdown file the index covers: vault-relative, sorted, no hidden folders, no inbox."""
    found: list[str] = []
    for root, dirs, files in os.walk(vault):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel_root = Path(root).relative_to(vault).as_posix()
        for name in files:
            if not name.endswith(".md") or name.startswith("."):
                continue
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            if rel != INBOX:
                found.append(rel)
    return sorted(found)


def parse_synonyms(text: str, path: str = SYNONYMS) -> tuple[dict[str, list[str]], list[Problem]]:
    """`term<TAB>expansion` rows under a header; a term may have many rows."""
    table: dict[str, list[str]] = {}
    problems: list[Problem] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if number == 1 and line.split("\t")[0].strip().lower() == "term":
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
