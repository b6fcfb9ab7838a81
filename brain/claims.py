"""The claims a bullet makes that a machine can check, read from its words (paths, vault files,
`brain` subcommands, commit hashes, commands: the table of `brain verify`, whose docstring says
how each is read): the parser verify checks and `brain.drift` follows into the repositories'
histories. In the core (commands and the index both read it) and light: pygit2 is never imported
here."""

from __future__ import annotations

import re
from pathlib import Path

from brain.vault import Problem, Unit

SPAN = re.compile(r"`([^`\n]+)`")
# A path token: not preceded by a word character, a slash, a colon (URLs) or a dot.
_PATH = re.compile(
    r"(?<![\w/.~:@-])(~/[^\s`'\"<>|;,()\[\]]*|/[A-Za-z0-9._~-][^\s`'\"<>|;,()\[\]]*"
    r"|\.{0,2}/?[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)+/?)"
)
EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")
_MD = re.compile(r"(?<![\w/.-])([A-Za-z0-9_-][A-Za-z0-9._-]*\.md)\b")
_HASH = re.compile(r"(?<![\w-])([0-9a-f]{7,40})(?![\w-])")
_PROGRAM = re.compile(r"^[a-z][a-z0-9._+-]*$")
_SUBCOMMAND = re.compile(r"^[a-z][a-z-]*$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_TRAIL = ".,:;!?)'\""
# `REPO:PATH` in a code span: REPO a folder name (two characters at least: `C:/x` is a drive);
# a line or lines after it, as agents, editors and compilers cite them (`:42`, `:42-60`,
# `:42:7`, `#L42-L60`), name the file all the same
EXPLICIT = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]+):([A-Za-z0-9._-][A-Za-z0-9._/-]*)"
    r"(?::\d+(?::\d+|-\d+)?|#L\d+(?:-L?\d+)?)?$"
)
_FRONT_KEY = re.compile(r"^code:\s*(.*)$")


def claims_of(row: Unit) -> list[tuple[str, str]]:
    """(kind, text) of each claim the bullet makes, each once, in order."""
    text = row.text
    spans = [m.group(1).strip() for m in SPAN.finditer(text)] if "`" in text else []
    out: list[tuple[str, str]] = []

    def add(kind: str, token: str) -> None:
        if (kind, token) not in out:
            out.append((kind, token))

    for span in spans:
        named = EXPLICIT.match(span)
        if named and (EXT.search(named.group(2)) or "/" in named.group(2)):
            add("path", span)  # `payments:src/retry.py`: a file of the repository named
            continue
        words = [w for w in span.split() if not _ASSIGN.match(w)]
        if not words:
            continue
        if words[0] == "brain" and len(words) > 1 and _SUBCOMMAND.match(words[1]):
            add("brain", f"brain {words[1]}")
        elif len(words) > 1 and _PROGRAM.match(words[0]) and words[0] != "brain":
            add("command", words[0])
    # `brain X --flag` in plain text names a subcommand as surely as a code span does
    for m in re.finditer(r"(?<![\w-])brain ([a-z][a-z-]*) --?[a-z]", text):
        add("brain", f"brain {m.group(1)}")
    for m in _PATH.finditer(text) if "/" in text else ():
        token = m.group(1).rstrip(_TRAIL)
        if token in ("", "/", "~/") or "://" in token:
            continue
        absolute = token.startswith(("/", "~/"))
        backticked = any(token in s for s in spans)
        if not absolute:
            if not re.search(r"[A-Za-z]", token):
                continue  # 24/7, 1/2
            if not (backticked or EXT.search(token) or token.startswith((".", "AI/"))):
                continue
        add("path", token)
    for m in _MD.finditer(text) if ".md" in text else ():
        if not any(m.group(1) in t for k, t in out if k == "path"):
            add("vault-file", m.group(1))
    for m in _HASH.finditer(text):
        h = m.group(1)
        if re.search(r"\d", h) and re.search(r"[a-f]", h) and not any(h in t for _, t in out):
            add("commit", h)
    return out


def named_repos(row: Unit, repos: dict[str, Path]) -> list[Path]:
    """The repositories of `repos` that the bullet names (a word of its handle, aliases, fact or
    section that is a repository's folder name)."""
    if not repos:
        return []
    from brain.vocab import words

    said = set(words(" ".join((row.handle, *row.aliases, row.text, row.section))))
    return [path for name, path in repos.items() if name in said]


def front_matter(data: bytes) -> tuple[str, ...]:
    """The entries of a note's front matter `code:` key: an inline list (`code: a, b` or
    `code: [a, b]`) or `- entry` lines below it; () when it has none."""
    entries, closed = _code_entries(data)
    return tuple(dict.fromkeys(e for _, e in entries if e)) if closed else ()


def front_matter_problems(data: bytes, rel: str) -> list[Problem]:
    """What makes a note's `code:` list name less than its writer meant (brain lint): drift
    reads nothing from an unclosed front matter, an entry with a space (`payments: src/a.py`),
    or a path that climbs out of its repository."""
    entries, closed = _code_entries(data)
    if not entries:
        return []
    if not closed:
        return [
            Problem(
                rel,
                1,
                "the front matter is never closed, so its `code:` list is ignored; "
                "end it with a line `---`",
            )
        ]
    out = []
    for line, entry in entries:
        if not entry:
            continue
        absolute = entry.startswith(("/", "~/"))
        if not absolute and re.search(r"\s", entry):
            out.append(
                Problem(
                    rel,
                    line,
                    f"`code:` entry `{entry}` is not REPO:PATH or a path; write it as "
                    "`payments:src/retry.py` (no space)",
                )
            )
        elif ".." in entry.split(":", 1)[-1].split("/"):
            out.append(
                Problem(
                    rel,
                    line,
                    f"`code:` entry `{entry}` climbs out of its repository (`..`); "
                    "name the file from the repository's root",
                )
            )
    return out


def _code_entries(data: bytes) -> tuple[list[tuple[int, str]], bool]:
    """The `code:` entries of a note's front matter, each with its line number, and whether
    the front matter is closed."""
    if not data.startswith(b"---"):
        return [], False
    lines = data[:8192].decode("utf-8", errors="replace").split("\n")
    if lines[0].strip() != "---":
        return [], False
    out: list[tuple[int, str]] = []
    listing = False
    for n, line in enumerate(lines[1:], start=2):
        if line.strip() in ("---", "..."):
            return out, True
        m = _FRONT_KEY.match(line)
        if m:
            listing = not m.group(1).strip()
            out += [(n, e.strip().strip("'\"")) for e in m.group(1).strip().strip("[]").split(",")]
        elif listing and line.lstrip().startswith("- "):
            out.append((n, line.lstrip()[2:].strip().strip("'\"")))
        elif line[:1].strip():
            listing = False  # the next key
    return out, False  # no closing line: not front matter
