"""`brain import claude` and `brain import FILE`: propose what another tool remembered.

Claude Code keeps memories of its own in `~/.claude/projects/<project>/memory/` (under
`$CLAUDE_CONFIG_DIR` when that is set): one Markdown file per memory with front matter (`name`,
`description`, `type`) and `MEMORY.md` as their index (Claude Code's memory docs, "Auto
memory", code.claude.com/docs/en/memory, read 2026-12). `<project>` is the repository's absolute
path with every character that is not a letter or digit turned into `-`. A memory's handle is its
`name`, its source `claude-code memory FILE.md` (its `type` says what kind of memory it is, not
where it came from).

Any other Markdown list is read with mistune 3: each item (at any depth) is one proposal, its
inline Markdown rendered to plain text, its handle a short noun phrase made of it
(brain.handles: `redis in staging`, not `Redis in staging is`) unless it opens with one in bold.
Everything goes through the inbox (`brain propose`), which refuses credentials and skips what the
vault already has.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from brain import guard, handles
from brain.commands.propose import ProposeResult, propose_many
from brain.errors import BrainError
from brain.settings import current
from brain.text import repair, strip_controls
from brain.vocab import SEP

# What one import reads at most: 1 MB of Markdown is some ten thousand items, ten times what the
# inbox keeps waiting (inbox.MAX_PENDING); a bigger file is surely not a list of facts to review.
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class ImportResult:
    vault: str
    origin: str  # the memory folder or file read
    found_count: int  # memories or list items read
    proposed_count: int  # of them, added to the inbox
    stripped: int  # control characters and ESC sequences removed from what was read
    items: tuple[ProposeResult, ...]
    # where each item was read, `FILE:LINE` (`FILE` alone where the line is not known): the text
    # listing names it by it, as it shows only the start of a long item
    places: tuple[str, ...] = field(default=(), metadata={"json": False})


def _open_unblocked(path: Path) -> BinaryIO:
    """`path` opened for reading without waiting for a writer: opening a named pipe nobody
    writes to blocks for ever, while reading one reads what is written (`<(cat list.md)`), or
    nothing once no writer is left."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | nonblock | getattr(os, "O_BINARY", 0))
    if nonblock:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~nonblock)
    return os.fdopen(fd, "rb")


def read_text(path: Path) -> str:
    """A file to import, as text: at most MAX_BYTES (a device such as /dev/zero or a pipe is read
    only that far), UTF-8. Anything else is a BrainError naming the file."""
    try:
        with _open_unblocked(path) as fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISREG(st.st_mode) and st.st_size > MAX_BYTES:
                raise _too_big(path, f"is {st.st_size / 1e6:.1f} MB, more")
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise BrainError(
            f"{path} does not exist", "name a Markdown file, or `claude` for Claude Code's memory"
        ) from None
    except OSError as exc:
        raise BrainError(f"cannot read {path}: {exc.strerror}", "name a Markdown file") from exc
    if len(data) > MAX_BYTES:
        raise _too_big(path, "holds more")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BrainError(
            f"{path}:{line} is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
            "save it as UTF-8 Markdown",
        ) from None


def _too_big(path: Path, what: str) -> BrainError:
    return BrainError(
        f"{path} {what} than the {MAX_BYTES // (1 << 20)} MB brain imports at once",
        "split it, or import the list you mean to review",
    )


# --- Markdown to plain text ----------------------------------------------------------------------


def _markdown() -> Any:
    import mistune

    return mistune.create_markdown(renderer=None)


def inline_text(tokens: list[dict[str, Any]]) -> str:
    """Inline tokens as plain text: emphasis unwrapped, a link as `text (url)`, code spans kept in
    backticks (they are commands and names), HTML tags dropped, line breaks as spaces. An image
    (or an HTML tag that loads a URL) is kept as written, so the item is refused by name."""
    out: list[str] = []
    for tok in tokens:
        kind = tok.get("type")
        if kind == "text":
            out.append(tok.get("raw", ""))
        elif kind == "codespan":
            out.append(f"`{tok.get('raw', '')}`")
        elif kind in ("softbreak", "linebreak"):
            out.append(" ")
        elif kind == "link":
            label = inline_text(tok.get("children", []))
            url = str(tok.get("attrs", {}).get("url", ""))
            out.append(
                label if not url or url in (label, f"mailto:{label}") else f"{label} ({url})"
            )
        elif kind == "image":  # kept as written, for the guard to refuse the item by name
            url = str(tok.get("attrs", {}).get("url", ""))
            out.append(f"![{inline_text(tok.get('children', []))}]({url})")
        elif kind == "inline_html":
            raw = str(tok.get("raw", ""))
            if guard.check(raw):  # an <img> and its like: the guard refuses the item
                out.append(raw)
            continue
        elif "children" in tok:
            out.append(inline_text(tok["children"]))
        elif "raw" in tok:
            out.append(str(tok["raw"]))
    return " ".join("".join(out).split())


def _leading_strong(tokens: list[dict[str, Any]]) -> str:
    """The text of a strong (or emphasis) span that opens an item: its handle, as in the vault."""
    for tok in tokens:
        if tok.get("type") == "text" and not tok.get("raw", "").strip():
            continue
        if tok.get("type") in ("strong", "emphasis"):
            return inline_text(tok.get("children", []))
        return ""
    return ""


def block_text(tokens: list[dict[str, Any]]) -> str:
    """Plain text of block tokens (paragraphs, quotes, code), nested lists left out."""
    parts: list[str] = []
    for tok in tokens:
        kind = tok.get("type")
        if kind == "list":
            continue
        if kind in ("paragraph", "block_text", "heading"):
            parts.append(inline_text(tok.get("children", [])))
        elif kind == "block_code":
            parts.append(" ".join(str(tok.get("raw", "")).split()))
        elif "children" in tok:
            parts.append(block_text(tok["children"]))
    return " ".join(p for p in parts if p)


def list_items(text: str) -> list[str]:
    """Every list item of a Markdown text, as a line to propose: `**handle** — fact`.

    A nested item's fact starts with its parent's handle (`parent: fact`), so that `- Postgres`
    over `- version 15` proposes `version 15` about Postgres rather than alone.
    """
    return [item for item, _ in list_items_at(text)]


def list_items_at(text: str) -> list[tuple[str, int]]:
    """`list_items`, each with the line (from 1) its item starts on, 0 where it is not known:
    mistune gives no positions, so the items are matched in order with the lines that start
    one, and when those do not add up to the items it parsed no line is named."""
    items: list[tuple[str, int]] = []  # (line to propose, which list item of the text)
    seen = 0

    def walk(tokens: list[dict[str, Any]], parent: str) -> None:
        nonlocal seen
        for tok in tokens:
            if tok.get("type") == "list":
                for item in tok.get("children", []):
                    seen += 1
                    kids = item.get("children", [])
                    first = next((k for k in kids if k.get("type") != "list"), None)
                    words = block_text(kids)
                    handle = ""
                    if first is not None:
                        handle = _leading_strong(first.get("children", []))
                    if words:
                        items.append((_line(words, handle, parent), seen - 1))
                    here = handle or handles.from_prose(words) or parent
                    walk(kids, here)
            elif "children" in tok:
                walk(tok["children"], parent)

    walk(_markdown()(text), "")
    starts = _item_lines(text)
    if len(starts) != seen:
        return [(item, 0) for item, _ in items]
    return [(item, starts[k]) for item, k in items]


_ITEM_START = re.compile(r"(?:[ \t]*>)*[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_RULE = re.compile(r"[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")


def _item_lines(text: str) -> list[int]:
    """The lines (from 1) that start a list item, outside fenced code, rules left out."""
    out, fence = [], ""
    for n, line in enumerate(text.split("\n"), start=1):
        m = _FENCE.match(line)
        if m and (not fence or m.group(1) == fence):
            fence = "" if fence else m.group(1)
            continue
        if not fence and _ITEM_START.match(line) and not _RULE.match(line):
            out.append(n)
    return out


def _line(text: str, handle: str, parent: str) -> str:
    if handle:
        rest = text[len(handle) :].strip() if text.startswith(handle) else text
        rest = rest.lstrip("—–-:;,. ").strip() or text
    else:  # a short noun phrase, not the first words: `redis in staging`, not `Redis in staging is`
        handle, rest = handles.from_prose(text), text
    handle = handle.replace("*", "")
    if rest.startswith("(aliases:") and ")" in rest:  # a vault bullet, as brain writes them
        aliases, _, rest = rest.partition(")")
        rest = rest.lstrip("—–-:;,. ").strip()
        if parent:
            rest = f"{parent}: {rest}"
        return f"**{handle}** {aliases}){SEP}{rest}"
    if parent:
        rest = f"{parent}: {rest}"
    return f"**{handle}**{SEP}{rest}"


# --- Claude Code's memories ----------------------------------------------------------------------


def claude_root() -> Path:
    configured = current().env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def project_slug(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def claude_memory_dir(cwd: Path) -> Path:
    from brain.gitutil import repo_root

    start = cwd.resolve()
    root = repo_root(start) or start
    projects = claude_root() / "projects"
    for folder in dict.fromkeys((root, start)):
        candidate = projects / project_slug(folder) / "memory"
        if candidate.is_dir():
            return candidate
    raise BrainError(
        f"Claude Code has no memories for {root} (looked in {projects / project_slug(root)})",
        "run it in the repository Claude Code worked in, or pass --dir MEMORY_FOLDER",
    )


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """(fields, body) of a memory file; fields are the `key: value` lines between `---` fences."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        return {}, text
    fields: dict[str, str] = {}
    import yaml

    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except (yaml.YAMLError, RecursionError):  # `[[[[…` nested past Python's stack: none either
        data = None
    if isinstance(data, dict):
        # scalars only: str() of a list made of aliases nine times over, nine deep (a "billion
        # laughs" in a few hundred bytes), spelt out 9**9 items and took every byte of memory
        fields = {str(k): str(v) for k, v in data.items() if _scalar(k) and _scalar(v)}
    return fields, "\n".join(lines[end + 1 :])


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float | dt.date)


def _memory_line(path: Path) -> tuple[str, str, int, int] | None:
    """A memory file as (line to propose, source, control characters stripped, the line its
    text starts on)."""
    text, stripped = strip_controls(read_text(path))
    fields, body = front_matter(text)
    fact = block_text(_markdown()(body))
    if not fact:
        return None
    head = len(text) - len(body.lstrip())
    start = text.count("\n", 0, head) + 1
    handle = _memory_name(fields.get("name", "")) or handles.from_prose(fact)
    # where it came from, to the file: the `type` (user, feedback, project, reference) says what
    # kind of memory it is, not its source
    source = f"claude-code memory {repair(path.name)}"
    date = dt.date.fromtimestamp(path.stat().st_mtime).isoformat()
    return f"**{handle}**{SEP}{fact}{SEP}{source}{SEP}{date}", source, stripped, start


def _memory_name(name: str) -> str:
    """A memory's `name` as a handle: its words lower-cased as the vault's handles are, a name
    written as an identifier (`deploy_process`) read as words."""
    words = name.replace("*", "")
    if " " not in words.strip():
        words = words.replace("_", " ")
    return " ".join(handles.styled(w) for w in words.split())


def import_claude(
    vault: Path, cwd: Path, memory_dir: Path | None = None, *, to: str | None = None
) -> ImportResult:
    folder = memory_dir or claude_memory_dir(cwd)
    if not folder.is_dir():
        raise BrainError(f"{folder} is not a folder", "pass --dir with Claude Code's memory folder")
    lines: list[tuple[str, str]] = []
    places: list[str] = []
    stripped = 0
    for path in sorted(folder.glob("*.md")):
        if path.name == "MEMORY.md" or not path.is_file():
            continue  # the index (one line per memory file, nothing of its own), or no file
        found = _memory_line(path)
        if found:
            lines.append(found[:2])
            places.append(f"{path}:{found[3]}")
            stripped += found[2]
    results = propose_many(vault, lines, to=to)
    return _result(vault, folder, results, stripped, places)


def import_file(vault: Path, path: Path, *, to: str | None = None) -> ImportResult:
    text, stripped = strip_controls(read_text(path))
    source = f"import {repair(path.name)}"
    found = list_items_at(text)
    results = propose_many(vault, [(line, source) for line, _ in found], to=to)
    places = [f"{path}:{n}" if n else str(path) for _, n in found]
    return _result(vault, path, results, stripped, places)


def _result(
    vault: Path, origin: Path, results: list[ProposeResult], stripped: int, places: list[str]
) -> ImportResult:
    proposed = sum(1 for r in results if r.action == "proposed")
    return ImportResult(
        str(vault), str(origin), len(results), proposed, stripped, tuple(results), tuple(places)
    )
