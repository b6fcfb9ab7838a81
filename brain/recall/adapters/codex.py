"""Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (root from CODEX_HOME).

Each line is a `RolloutLine`: `{"timestamp", "type", "payload"}`. `session_meta` names the session
(`payload.id`) and its `cwd`; `response_item` lines whose payload is a `message` with role `user`
or `assistant` are the conversation (content blocks `input_text` / `output_text`). Tool calls,
reasoning, `event_msg` (which repeats the messages), `turn_context` and `compacted` are skipped.
Older rollouts (before the envelope) put the session meta on line one and bare items after it;
both are read. Codex gives messages no id, so a turn's id is a hash of session, time, role and
text: the same turn read from a resumed or forked rollout is the same turn.
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
    env_root,
    iso,
    jsonl_lines,
    record,
    stable_id,
    text_blocks,
    walk,
    wrapper,
)

_TEXT = ("input_text", "output_text", "text")
_PREAMBLE = ("# AGENTS.md instructions", "<INSTRUCTIONS>")


class Codex:
    name = "codex"
    label = "Codex CLI"
    append_only = True

    def root(self) -> Path:
        return env_root("CODEX_HOME", ".codex") / "sessions"

    def files(self) -> Iterator[Path]:
        return walk(self.root(), "**/rollout-*.jsonl")

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        turns: list[Turn] = []
        skipped = 0
        end = start
        for end, line in jsonl_lines(data, start):  # noqa: B007 - `end` is the resume offset
            if not line.strip():
                continue
            rec = record(line)
            if rec is None:
                skipped += 1
                continue
            kind = rec.get("type")
            payload: Any = rec.get("payload")
            stamp = rec.get("timestamp")
            if kind is None and "payload" not in rec:  # the pre-envelope format
                if "id" in rec and ("instructions" in rec or "cwd" in rec):
                    kind, payload = "session_meta", rec
                else:
                    kind, payload = "response_item", rec
            if not isinstance(payload, dict):
                continue
            if kind == "session_meta":
                if isinstance(payload.get("id"), str) and not state.session:
                    state.session = payload["id"]
                if isinstance(payload.get("cwd"), str):
                    state.cwd = payload["cwd"]
            elif kind == "turn_context" and isinstance(payload.get("cwd"), str):
                state.cwd = payload["cwd"]
            elif kind == "response_item" and payload.get("type") == "message":
                turn = self._turn(payload, stamp, state, path)
                if turn is not None:
                    turns.append(turn)
        if not state.title:
            first = next((t.body for t in turns if t.role == "user"), "")
            state.title = clip_title(first.split("\n", 1)[0]) if first else ""
        return Chunk(turns, end, state, skipped)

    @staticmethod
    def _turn(payload: dict[str, Any], stamp: Any, state: FileState, path: Path) -> Turn | None:
        role = payload.get("role")
        if role not in ("user", "assistant"):
            return None  # system and developer messages are instructions, not conversation
        body = text_blocks(payload.get("content"), _TEXT)
        if not body.strip() or wrapper(body) or body.lstrip().startswith(_PREAMBLE):
            return None
        session = state.session or path.stem
        ts = iso(stamp)
        tid = payload.get("id") if isinstance(payload.get("id"), str) else ""
        return Turn(tid or stable_id(session, ts, role, body), ts, role, session, cap(body))
