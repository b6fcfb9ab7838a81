"""Claude Code: `~/.claude/projects/<cwd-slug>/<session-id>.jsonl` (root from CLAUDE_CONFIG_DIR).

Each line is a record. `user` and `assistant` records carry `uuid`, `timestamp`, `sessionId`,
`cwd` and `message` (content: a string, or blocks of which the `text` ones are kept). Side chains
(sub-agents), meta records, non-external users and bodies that open with a system or command
wrapper are not conversation. The title is the last `custom-title` record, else the last
`ai-title`; a transcript that never gets one is a headless run and yields nothing.

A prompt the person types while Claude is mid-turn is written as an `attachment` record only,
`{"attachment": {"type": "queued_command", "prompt", "commandMode": "prompt", "origin": {"kind":
"human"}}}`, with no `user` record after it (Claude Code 2.1.x; its `queue-operation` records
are the queue's bookkeeping and repeat the same words). It is a user turn. A queued command of
another mode or origin (a background task's `<task-notification>`) is the harness's, not the
person's. Claude Code's transcript format is not published: the shape is the one its 2.1.x
transcripts hold, as transcript readers record them (e.g. claude-code-log-format's
source-docs/JSONL_LOGGING.md on queue-operation, and readers that index queued_command).
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
from brain.recall.adapters.calls import (
    Call,
    Outcome,
    claude_calls,
    claude_outcomes,
    claude_waiting,
)

_TOOL_RESULT = (b'"type":"tool_result"', b'"type": "tool_result"')
_TEXT_BLOCK = (b'"type":"text"', b'"type": "text"')


def _tool_output(line: bytes) -> bool:
    """A record holding a tool's output and no text block: the bulk of a transcript, and never a
    turn. Told by bytes before any JSON is parsed (a quote inside a JSON string is escaped, so
    these byte strings only occur as structure)."""
    return any(m in line for m in _TOOL_RESULT) and not any(m in line for m in _TEXT_BLOCK)


class Claude:
    name = "claude"
    label = "Claude Code"

    def root(self) -> Path:
        return env_root("CLAUDE_CONFIG_DIR", ".claude") / "projects"

    def files(self) -> Iterator[Path]:
        return walk(self.root(), "*/*.jsonl")

    def may_hold(self, path: Path, session: str) -> bool:
        return path.stem == session  # named by the session's id

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        turns: list[Turn] = []
        skipped = 0
        end = start
        custom = state.extra.get("custom", "")
        ai = state.extra.get("ai", "")
        pending: dict[str, bool] = state.extra.setdefault("pending", {})
        calls: list[Call] = []
        outcomes: list[Outcome] = []
        for end, line in jsonl_lines(data, start):  # noqa: B007 - `end` is the resume offset
            if not line.strip() or (_tool_output(line) and not claude_waiting(line, pending)):
                continue
            rec = record(line)
            if rec is None:
                skipped += 1
                continue
            kind = rec.get("type")
            if kind == "custom-title" and isinstance(rec.get("customTitle"), str):
                custom = rec["customTitle"]
            elif kind == "ai-title" and isinstance(rec.get("aiTitle"), str):
                ai = rec["aiTitle"]
            elif kind in ("user", "assistant"):
                turn = self._turn(rec, kind, state)
                if turn is not None:
                    turns.append(turn)
                    state.extra["turn"] = turn.id
                self._tools(rec, kind, state, calls, outcomes)
            elif kind == "attachment":
                turn = self._queued(rec, state)
                if turn is not None:
                    turns.append(turn)
                    state.extra["turn"] = turn.id
        state.extra["custom"], state.extra["ai"] = custom, ai
        state.title = clip_title(custom or ai)
        if not state.session:
            state.session = path.stem
        chunk = Chunk(turns, end, state, skipped, titled=bool(state.title))
        chunk.calls, chunk.outcomes = calls, outcomes
        return chunk

    @staticmethod
    def _tools(
        rec: dict[str, Any], kind: str, state: FileState, calls: list[Call], out: list[Outcome]
    ) -> None:
        """The shell commands and file writes in an assistant record's tool_use blocks, and the
        results of those in a user record's tool_result blocks."""
        message = rec.get("message")
        if rec.get("isSidechain") or not isinstance(message, dict):
            return
        content = message.get("content")
        if not isinstance(content, list):  # a prompt or an answer in plain text: no tools
            return
        pending: dict[str, bool] = state.extra["pending"]
        if kind == "user":
            if pending:
                out += claude_outcomes(content, pending)
            return
        if not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
            return
        cwd = rec["cwd"] if isinstance(rec.get("cwd"), str) and rec["cwd"] else state.cwd
        session = rec["sessionId"] if isinstance(rec.get("sessionId"), str) else state.session
        turn = str(state.extra.get("turn", ""))
        ts = iso(rec.get("timestamp"))
        calls += claude_calls(content, ts, session, turn, cwd, pending)

    @staticmethod
    def _queued(rec: dict[str, Any], state: FileState) -> Turn | None:
        """A prompt typed while Claude worked: an attachment holding a queued command the
        person gave (no origin, from before it was recorded, counts as theirs)."""
        item = rec.get("attachment")
        if not isinstance(item, dict) or item.get("type") != "queued_command":
            return None
        origin = item.get("origin")
        kind = origin.get("kind") if isinstance(origin, dict) else "human"
        if item.get("commandMode", "prompt") != "prompt" or kind != "human":
            return None
        if rec.get("isSidechain") or rec.get("userType", "external") != "external":
            return None
        body = text_blocks(item.get("prompt"))
        if not body.strip() or wrapper(body):
            return None
        if isinstance(rec.get("cwd"), str) and rec["cwd"]:
            state.cwd = rec["cwd"]
        if isinstance(rec.get("sessionId"), str) and rec["sessionId"] and not state.session:
            state.session = rec["sessionId"]
        session = rec["sessionId"] if isinstance(rec.get("sessionId"), str) else state.session
        ts = iso(rec.get("timestamp"))
        uid = rec.get("uuid")
        tid = uid if isinstance(uid, str) and uid else stable_id(str(session), ts, "user", body)
        return Turn(tid, ts, "user", str(session), cap(body))

    @staticmethod
    def _turn(rec: dict[str, object], kind: str, state: FileState) -> Turn | None:
        if rec.get("isSidechain") or rec.get("isMeta"):
            return None
        if rec.get("userType", "external") != "external":
            return None
        if isinstance(rec.get("cwd"), str) and rec["cwd"]:
            state.cwd = str(rec["cwd"])
        if isinstance(rec.get("sessionId"), str) and rec["sessionId"] and not state.session:
            state.session = str(rec["sessionId"])
        message = rec.get("message")
        if not isinstance(message, dict):
            return None
        body = text_blocks(message.get("content"))
        uid = rec.get("uuid")
        if not body.strip() or wrapper(body) or not isinstance(uid, str) or not uid:
            return None
        role = message.get("role") if message.get("role") in ("user", "assistant") else kind
        session = rec.get("sessionId") if isinstance(rec.get("sessionId"), str) else state.session
        return Turn(uid, iso(rec.get("timestamp")), str(role), str(session), cap(body))
