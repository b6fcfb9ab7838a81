"""Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.jsonl`, and the older `*.json`.

Read from gemini-cli's packages/core/src/services/chatRecordingService.ts and chatRecordingTypes.ts
(google-gemini/gemini-cli at 5411f113, 2026-08-21; the JSONL form since its PR #23749, 2026-04-09):

- `session-<time>-<first 8 of the session id>.jsonl` is appended to as the session goes: a first
  line of metadata (`sessionId`, `projectHash`, `startTime`, ...), then message records; a
  message whose tool calls or tokens change is appended again whole under the same `id` (the last
  one stands), `{"$set": {...}}` updates the metadata (`summary`; `messages` replaces them all: a
  checkpoint) and `{"$rewindTo": id}` drops that message and the ones after it from what Gemini
  resumes. Recall keeps what was said before a rewind (as it keeps Claude Code's abandoned
  branches). Sub-agents write into `chats/<parent session>/`, which is not read (not conversation
  with the person, as Claude Code's side chains).
- `session-*.json`, the form before it: one JSON document (`sessionId`, `messages`, `summary`),
  rewritten whole as the session goes. Resuming one writes its `.jsonl` beside it with the same
  message ids, so nothing is stored twice.

A message has `id`, `timestamp`, `type` (`user`, `gemini`; `info`, `error`, `warning` are the
CLI's own notices and are skipped), `content` (a string or parts with `text`: for a prompt, what
the model got, with @-files expanded) and `displayContent` (what the person typed, when it
differs: preferred). The project folder is a short name now (a hash before): its `.project_root`
file holds the project's path (config/projectRegistry.ts), which becomes the turns' folder; a
folder without one gives no cwd. The title is `summary`, else the first prompt. The root follows
GEMINI_CLI_HOME (utils/paths.ts `homedir()`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from brain.recall.adapters import (
    Chunk,
    FileState,
    Records,
    Turn,
    cap,
    clip_title,
    document,
    env_root,
    iso,
    walk,
    wrapper,
)
from brain.recall.adapters.calls import Call, Outcome, gemini_calls

_ROLES = {"user": "user", "gemini": "assistant", "model": "assistant"}
_MARKER = ".project_root"  # gemini-cli config/projectRegistry.ts PROJECT_ROOT_FILE


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    return "\n\n".join(
        p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _project(path: Path) -> str:
    """The project folder a chat belongs to, from its project dir's `.project_root` ('' when
    there is none: a folder from before the project registry)."""
    try:
        text = (path.parent.parent / _MARKER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    folder = text.strip()
    return folder if folder.startswith("/") or folder[1:3] in (":\\", ":/") else ""


class _Reader:
    """What one read makes of a chat's messages: turns (the last version of each id, in the
    order first seen), tool calls and their outcomes."""

    def __init__(self, state: FileState) -> None:
        self.state = state
        self.turns: dict[str, Turn] = {}
        self.calls: dict[tuple[str, int], Call] = {}  # a message appended again repeats its calls
        self.outcomes: list[Outcome] = []
        self.skipped = 0

    def metadata(self, meta: dict[str, Any]) -> None:
        """A record of the session's metadata: the first line, a `$set` (whose `messages` is a
        checkpoint of them all), or the older form's whole document."""
        state = self.state
        if isinstance(meta.get("sessionId"), str) and meta["sessionId"] and not state.session:
            state.session = meta["sessionId"]
        if isinstance(meta.get("summary"), str):
            state.extra["summary"] = meta["summary"]
        for msg in meta["messages"] if isinstance(meta.get("messages"), list) else []:
            self.message(msg)

    def message(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            self.skipped += 1
            return
        state = self.state
        role = _ROLES.get(str(msg.get("type")))
        shown = _text(msg.get("displayContent")) if role == "user" else ""
        body = shown if shown.strip() else _text(msg.get("content"))
        mid = msg.get("id")
        last = str(state.extra.get("turn", ""))
        if msg.get("toolCalls"):  # they follow the message's own text, when it has any
            anchor = mid if role and body.strip() and isinstance(mid, str) else last
            when = iso(msg.get("timestamp"))
            got = gemini_calls(msg["toolCalls"], when, state.session, anchor, state.cwd)
            self.calls.update(((c.id, c.n), c) for c in got[0])
            self.outcomes += got[1]
        if role is None or not body.strip() or wrapper(body) or not isinstance(mid, str):
            return
        turn = Turn(mid, iso(msg.get("timestamp")), role, state.session, cap(body))
        self.turns[mid] = turn  # a message appended again: its last version stands
        state.extra["turn"] = mid
        if role == "user" and not state.extra.get("first"):
            state.extra["first"] = clip_title(body.split("\n", 1)[0])

    def chunk(self, end: int) -> Chunk:
        state = self.state
        summary = state.extra.get("summary")
        title = summary if isinstance(summary, str) and summary.strip() else ""
        title = title.split("\n", 1)[0] or str(state.extra.get("first") or "")
        state.title = clip_title(title)
        return Chunk(
            list(self.turns.values()),
            end,
            state,
            self.skipped,
            titled=bool(state.title),
            calls=list(self.calls.values()),
            outcomes=self.outcomes,
            rewrites=True,
        )


class Gemini:
    name = "gemini"
    label = "Gemini CLI"

    def root(self) -> Path:
        return env_root("GEMINI_CLI_HOME", "") / ".gemini" / "tmp"

    def files(self) -> Iterator[Path]:
        yield from walk(self.root(), "*/chats/*.json")
        yield from walk(self.root(), "*/chats/session-*.jsonl")

    def may_hold(self, path: Path, session: str) -> bool:
        # named session-<time>-<the session id's first 8>.json(l) (chatRecordingService.ts)
        return path.stem.endswith(f"-{session[:8]}") or session in path.name

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        if not state.cwd:
            state.cwd = _project(path)
        if path.suffix == ".jsonl":
            return self._lines(path, data, start, state)
        return self._document(path, data, state)

    @staticmethod
    def _lines(path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        """The JSONL form, from where the last read stopped."""
        reader = _Reader(state)
        lines = Records(data, start)
        for rec in lines:
            if isinstance(rec.get("$set"), dict):
                reader.metadata(rec["$set"])
            elif isinstance(rec.get("id"), str):
                reader.message(rec)
            elif "$rewindTo" not in rec:  # what was said before a rewind stays said
                reader.metadata(rec)
        if not state.session:
            state.session = path.stem
        reader.skipped += lines.skipped
        return reader.chunk(lines.end)

    @staticmethod
    def _document(path: Path, data: bytes, state: FileState) -> Chunk:
        """The older form: one JSON document, read whole whenever it changes (offset 0)."""
        doc = document(data)
        if doc is None:
            return Chunk([], 0, state, skipped=1, titled=False)
        if not isinstance(doc.get("sessionId"), str) or not doc["sessionId"]:
            state.session = path.stem
        reader = _Reader(state)
        reader.metadata(doc)
        chunk = reader.chunk(0)
        chunk.titled = True  # a document read whole: an untitled one is stored as it is
        return chunk
