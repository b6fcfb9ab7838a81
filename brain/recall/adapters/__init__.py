"""Adapters: one small unit per agent that finds its transcripts and turns one into turns.

An adapter knows two things about its agent: where the transcripts live on this machine
(`files()`), and how to read one (`read(path, data, state)`), from a byte offset when the format is
append-only JSONL. Everything else (storage, incremental sync, search) is the agent-blind rest of
`brain.recall`. Unknown record types are skipped, never fatal: agents change their formats.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from brain.recall.adapters.calls import Call, Outcome
from brain.text import json_loads

BODY_CAP = 16_000  # characters kept of one turn; a pasted log or a huge answer is bounded
TITLE_CAP = 120

# Bodies that are machinery, not conversation: hook output, slash-command plumbing, context dumps.
_WRAPPERS = re.compile(
    r"\s*<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|user-prompt-submit-hook|environment_context|"
    r"user_instructions|user_shell_command|turn_aborted|bash-input|bash-stdout|bash-stderr|"
    r"task-notification)\b"
)


@dataclass(frozen=True)
class Turn:
    id: str  # the agent's own id for this turn (or a stable hash when it has none)
    ts: str  # ISO 8601, UTC, `YYYY-MM-DDTHH:MM:SS.fffZ`
    role: str  # "user" or "assistant"
    session: str
    body: str


@dataclass
class FileState:
    """What an adapter carries from one read of a file to the next (append-only formats)."""

    session: str = ""
    title: str = ""
    cwd: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chunk:
    turns: list[Turn]
    end: int  # bytes consumed: the next read starts here
    state: FileState
    skipped: int = 0  # malformed or undecodable lines
    titled: bool = True  # False: nothing in it is a conversation (yet)
    calls: list[Call] = field(default_factory=list)  # shell commands run, files written
    outcomes: list[Outcome] = field(default_factory=list)  # how calls (here or earlier) ended


class Adapter(Protocol):
    name: str
    label: str
    append_only: bool

    def root(self) -> Path: ...

    def files(self) -> Iterator[Path]: ...

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk: ...


def wrapper(text: str) -> bool:
    """True for a body that begins with a system or command wrapper rather than words."""
    return bool(_WRAPPERS.match(text))


def cap(text: str) -> str:
    text = text.strip()
    return text if len(text) <= BODY_CAP else text[:BODY_CAP] + " …"


def clip_title(text: str) -> str:
    """A session's title as one line of at most TITLE_CAP characters, as stored: a long one is
    masked before its cut (brain.text.cut), or half a key would be kept past every mask."""
    from brain.text import cut

    return cut(" ".join(text.split()), TITLE_CAP)


def iso(value: Any) -> str:
    """An agent's timestamp as UTC ISO 8601 with milliseconds; '' when it is not one (a string
    that is no date, NaN, 1e308, a year before 1 or after 9999: the turn is kept, undated)."""
    try:
        if isinstance(value, (int, float)):
            stamp = datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        elif isinstance(value, str) and value:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=UTC)
            stamp = stamp.astimezone(UTC)
        else:
            return ""
    except (ValueError, OverflowError, OSError):  # what datetime raises for each of those
        return ""
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def stable_id(*parts: str) -> str:
    """An id for agents whose turns carry none: the same turn always hashes the same."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def text_blocks(content: Any, kinds: tuple[str, ...] = ("text",)) -> str:
    """The text of a message's content: a string, or the text of its blocks of these kinds."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in kinds:
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n\n".join(parts)


def walk(root: Path, pattern: str) -> Iterator[Path]:
    """Files under `root` matching a glob, tolerant of folders that vanish or cannot be read."""
    if not root.is_dir():
        return
    try:
        yield from sorted(p for p in root.glob(pattern) if p.is_file())
    except OSError:
        return


def env_root(var: str, default: str) -> Path:
    value = os.environ.get(var, "").strip()
    return Path(value).expanduser() if value else Path.home() / default


def jsonl_lines(data: bytes, start: int) -> Iterator[tuple[int, bytes]]:
    """Complete lines from `start` with the offset just past each; a last line with no newline is
    a record still being written and is left for the next read."""
    pos = start
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return
        yield nl + 1, data[pos:nl]
        pos = nl + 1


def record(line: bytes) -> dict[str, Any] | None:
    """One JSONL line as a JSON object; None when it is malformed, not UTF-8, nested too deeply or
    not an object (the caller counts it as skipped)."""
    try:
        rec = json_loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None
