"""GitHub Copilot CLI: `~/.copilot/session-state/<session id>/events.jsonl` ($COPILOT_HOME).

Where: github/copilot-sdk docs/features/session-persistence.md and docs/setup/multi-tenancy.md
(`COPILOT_HOME/session-state/{sessionId}`), agent-loop.md (`events.jsonl` in it); COPILOT_HOME
from docs.github.com "GitHub Copilot CLI configuration directory". The shape of each line is the
session event of github/copilot-sdk nodejs/src/generated/session-events.ts (cc0438d6, 2026-08-21),
generated from the CLI's own schema: `{"type", "data", "id", "timestamp", "parentId", "agentId"?}`.

- `session.start` (`data.sessionId`, `data.context.cwd`), `session.resume` and
  `session.context_changed` (`data.cwd`) say where the session runs;
- `session.title_changed` (`data.title`) names it; else the first prompt does;
- `user.message` (`data.content`, as the person sees it) and `assistant.message`
  (`data.content`) are the conversation; a message a skill or another agent injected
  (`data.source` `skill-…`, `agent-…`) or autopilot's continuation is not the person's;
- `tool.execution_start` and `tool.execution_complete` are the tool calls (brain.recall.adapters.
  calls); events of a sub-agent (`agentId`, or the older `data.parentToolCallId`) are left out, as
  Claude Code's side chains are.

Older releases kept one `session-state/<session id>.jsonl` with the same events (as
qiaolei81/copilot-session-viewer's README describes; not verified against the CLI): read too.
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
    env_root,
    iso,
    walk,
    wrapper,
)
from brain.recall.adapters.calls import Call, Outcome, copilot_call, copilot_outcome

_NOT_TYPED = ("skill-", "agent-")  # session-events.ts UserMessageData.source's examples


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class Copilot:
    name = "copilot"
    label = "GitHub Copilot CLI"

    def root(self) -> Path:
        return env_root("COPILOT_HOME", ".copilot") / "session-state"

    def files(self) -> Iterator[Path]:
        yield from walk(self.root(), "*/events.jsonl")
        yield from walk(self.root(), "*.jsonl")

    def may_hold(self, path: Path, session: str) -> bool:
        return session in (path.parent.name, path.stem)

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        if not state.session:
            state.session = path.parent.name if path.name == "events.jsonl" else path.stem
        turns: list[Turn] = []
        calls: list[Call] = []
        outcomes: list[Outcome] = []
        lines = Records(data, start)
        for rec in lines:
            event = rec.get("data")
            if not isinstance(event, dict):
                continue
            if rec.get("agentId") or event.get("parentToolCallId"):
                continue  # a sub-agent's
            kind, stamp = rec.get("type"), iso(rec.get("timestamp"))
            if kind in ("session.start", "session.resume"):
                if kind == "session.start" and _text(event.get("sessionId")):
                    state.session = event["sessionId"]
                context = event.get("context")
                if isinstance(context, dict) and _text(context.get("cwd")):
                    state.cwd = context["cwd"]
            elif kind == "session.context_changed" and _text(event.get("cwd")):
                state.cwd = event["cwd"]
            elif kind == "session.title_changed" and _text(event.get("title")).strip():
                state.extra["title"] = clip_title(event["title"])
            elif kind in ("user.message", "assistant.message"):
                turn = self._turn(rec, event, stamp, state)
                if turn is not None:
                    turns.append(turn)
                    state.extra["turn"] = turn.id
            elif kind == "tool.execution_start":
                turn_id = str(state.extra.get("turn", ""))
                calls += copilot_call(event, stamp, state.session, turn_id, state.cwd)
            elif kind == "tool.execution_complete":
                done = copilot_outcome(event)
                if done is not None:
                    outcomes.append(done)
        state.title = str(state.extra.get("title") or state.extra.get("first") or "")
        return lines.chunk(turns, state, calls, outcomes, titled=bool(state.title))

    @staticmethod
    def _turn(
        rec: dict[str, Any], event: dict[str, Any], stamp: str, state: FileState
    ) -> Turn | None:
        body = _text(event.get("content"))
        eid = rec.get("id")
        if not body.strip() or wrapper(body) or not isinstance(eid, str) or not eid:
            return None
        role = "user" if rec.get("type") == "user.message" else "assistant"
        if role == "user":
            if _text(event.get("source")).startswith(_NOT_TYPED):
                return None
            if event.get("isAutopilotContinuation") is True:
                return None
            if not state.extra.get("first"):
                state.extra["first"] = clip_title(body.split("\n", 1)[0])
        return Turn(eid, stamp, role, state.session, cap(body))
