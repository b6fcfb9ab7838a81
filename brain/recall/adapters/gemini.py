"""Gemini CLI: `~/.gemini/tmp/<project-hash>/chats/session-*.json`.

One JSON document per session (rewritten as the session goes, so it is read whole when it
changes): `sessionId`, `startTime`, `lastUpdated`, `messages` and sometimes `summary`. A message has
`id`, `timestamp`, `type` (`user`, `gemini`; `info`, `error`, `warning` are the CLI's own notices
and are skipped) and `content` (a string or a list of parts with `text`). The project is stored as
a hash of its path, so a Gemini turn has no cwd. The title is `summary`, else the first prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from brain.recall.adapters import (
    Chunk,
    FileState,
    Turn,
    cap,
    clip_title,
    iso,
    walk,
    wrapper,
)
from brain.recall.adapters.calls import Call, Outcome, gemini_calls
from brain.text import json_loads

_ROLES = {"user": "user", "gemini": "assistant", "model": "assistant"}


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


class Gemini:
    name = "gemini"
    label = "Gemini CLI"
    append_only = False

    def root(self) -> Path:
        return Path.home() / ".gemini" / "tmp"

    def files(self) -> Iterator[Path]:
        return walk(self.root(), "*/chats/*.json")

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        try:
            doc = json_loads(data)
        except ValueError:
            return Chunk([], 0, state, skipped=1, titled=False)
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            return Chunk([], len(data), state, skipped=1, titled=False)
        session = doc.get("sessionId")
        state.session = session if isinstance(session, str) and session else path.stem
        turns: list[Turn] = []
        chunk_calls: list[Call] = []
        outcomes: list[Outcome] = []
        last = ""  # the turn a tool call follows
        skipped = 0
        for msg in doc["messages"]:
            if not isinstance(msg, dict):
                skipped += 1
                continue
            role = _ROLES.get(str(msg.get("type")))
            body = _text(msg.get("content"))
            mid = msg.get("id")
            if msg.get("toolCalls"):  # they follow the message's own text, when it has any
                anchor = mid if role and body.strip() and isinstance(mid, str) else last
                got = gemini_calls(
                    msg["toolCalls"], iso(msg.get("timestamp")), state.session, anchor
                )
                chunk_calls += got[0]
                outcomes += got[1]
            if role is None or not body.strip() or wrapper(body) or not isinstance(mid, str):
                continue
            turns.append(Turn(mid, iso(msg.get("timestamp")), role, state.session, cap(body)))
            last = mid
        summary = doc.get("summary")
        first = next((t.body for t in turns if t.role == "user"), "")
        title = summary if isinstance(summary, str) and summary.strip() else first
        state.title = clip_title(title.split("\n", 1)[0]) if title else ""
        return Chunk(turns, len(data), state, skipped, calls=chunk_calls, outcomes=outcomes)
