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
    Records,
    Turn,
    calls,
    cap,
    clip_title,
    env_root,
    iso,
    stable_id,
    text_blocks,
    walk,
    wrapper,
)
from brain.recall.adapters.calls import Call, Outcome

_TEXT = ("input_text", "output_text", "text")
_PREAMBLE = ("# AGENTS.md instructions", "<INSTRUCTIONS>")


class Codex:
    name = "codex"
    label = "Codex CLI"

    def root(self) -> Path:
        return env_root("CODEX_HOME", ".codex") / "sessions"

    def files(self) -> Iterator[Path]:
        return walk(self.root(), "**/rollout-*.jsonl")

    def may_hold(self, path: Path, session: str) -> bool:
        return path.stem.endswith(session)  # rollout-<time>-<session id>.jsonl

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        turns: list[Turn] = []
        chunk_calls: list[Call] = []
        outcomes: list[Outcome] = []
        lines = Records(data, start)
        for rec in lines:
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
                    state.extra["turn"] = turn.id
            elif kind in ("response_item", "event_msg"):
                self._tools(kind, payload, stamp, state, path, chunk_calls, outcomes)
        if not state.title:
            first = next((t.body for t in turns if t.role == "user"), "")
            state.title = clip_title(first.split("\n", 1)[0]) if first else ""
        return lines.chunk(turns, state, chunk_calls, outcomes)

    @staticmethod
    def _tools(
        kind: str,
        payload: dict[str, Any],
        stamp: Any,
        state: FileState,
        path: Path,
        chunk_calls: list[Call],
        outcomes: list[Outcome],
    ) -> None:
        """Shell commands and patches (response items) and how they ended (their outputs, and
        the exec/patch end events)."""
        item = payload.get("type")
        if kind == "event_msg":
            done = calls.codex_event(payload)
        elif item in ("function_call_output", "custom_tool_call_output"):
            done = calls.codex_outcome(payload)
        else:
            session = state.session or path.stem
            turn = str(state.extra.get("turn", ""))
            chunk_calls += calls.codex_call(payload, iso(stamp), session, turn, state.cwd)
            return
        if done is not None:
            outcomes.append(done)

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
