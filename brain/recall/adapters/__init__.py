"""Adapters: one small unit per agent that finds its transcripts and turns one into turns.

An adapter knows two things about its agent: where the transcripts live on this machine
(`files()`), and how to read one (`read(path, data, start, state)`), from the byte offset the last
read returned when the format is append-only JSONL (a read that returns offset 0 is read whole next
time). Everything else (storage, incremental sync, search) is the agent-blind rest of
`brain.recall`. Unknown record types are skipped, never fatal: agents change their formats.

An agent that keeps its sessions in a database rather than in files (OpenCode) is a `Virtual`
adapter: `files()` names one path per session under the database's path, and the adapter stats
and loads those itself, as bytes its `read` parses.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from brain.recall.adapters.calls import Call, Outcome
from brain.settings import current
from brain.text import json_loads

BODY_CAP = 16_000  # characters kept of one turn; a pasted log or a huge answer is bounded
TITLE_CAP = 120

# Bodies that are machinery, not conversation: hook output, slash-command plumbing, context dumps.
_WRAPPERS = re.compile(
    r"\s*<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|local-command-caveat|user-prompt-submit-hook|environment_context|"
    r"user_instructions|user_shell_command|turn_aborted|bash-input|bash-stdout|bash-stderr|"
    r"task-notification|session_context|hook_context)\b"
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
    end: int  # bytes consumed: the next read starts here (0: read the file whole next time)
    state: FileState
    skipped: int = 0  # malformed or undecodable lines
    titled: bool = True  # False: nothing in it is a conversation (yet)
    calls: list[Call] = field(default_factory=list)  # shell commands run, files written
    outcomes: list[Outcome] = field(default_factory=list)  # how calls (here or earlier) ended
    # True: a turn here may be a new version of one stored under the same id (the agent rewrites
    # its messages: Gemini CLI, OpenCode); False: a turn stored once stands (append-only logs)
    rewrites: bool = False


class Adapter(Protocol):
    name: str
    label: str

    def root(self) -> Path: ...

    def files(self) -> Iterator[Path]: ...

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk: ...

    def may_hold(self, path: Path, session: str) -> bool:
        """Whether this transcript may be the session's (told by its name: a hook reads only
        its own session's file first)."""
        ...


@runtime_checkable
class Virtual(Protocol):
    """An adapter whose "files" are sessions in a database: it stats and loads them itself."""

    def signature(self, path: Path) -> tuple[int, int]:
        """What stands for (size, mtime_ns): it changes whenever the session does. OSError when
        the session or its database is gone."""
        ...

    def load(self, path: Path) -> bytes:
        """The session as bytes for `read`. OSError when it cannot be read."""
        ...


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
    value = current().get(var)
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


class Records:
    """The JSON objects of a JSONL transcript's complete lines from `start`, blank lines passed
    over; after the loop `end` is where the next read starts and `skipped` counts the lines that
    were no JSON object."""

    def __init__(self, data: bytes, start: int) -> None:
        self.data, self.end, self.skipped = data, start, 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for end, line in jsonl_lines(self.data, self.end):
            self.end = end  # where the next read starts
            if not line.strip():
                continue
            rec = record(line)
            if rec is None:
                self.skipped += 1
                continue
            yield rec

    def chunk(
        self,
        turns: list[Turn],
        state: FileState,
        calls: list[Call],
        outcomes: list[Outcome],
        *,
        titled: bool = True,
    ) -> Chunk:
        """What the read found, to resume where it stopped."""
        return Chunk(turns, self.end, state, self.skipped, titled, calls, outcomes)


def document(data: bytes) -> dict[str, Any] | None:
    """A transcript that is one JSON document with a `messages` list; None when it is not
    (the caller counts it as skipped)."""
    try:
        doc = json_loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("messages"), list) else None


def record(line: bytes) -> dict[str, Any] | None:
    """One JSONL line as a JSON object; None when it is malformed, not UTF-8, nested too deeply or
    not an object (the caller counts it as skipped)."""
    try:
        rec = json_loads(line)
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None
