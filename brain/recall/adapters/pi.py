"""pi (badlogic/pi-mono's coding agent): `~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`.

The format is pi-mono's packages/coding-agent/docs/session.md (session version 3; 83378aad,
2026-03-15), the agent dir follows PI_CODING_AGENT_DIR (src/config.ts `getAgentDir`). Each line is
an entry: the first a `session` header (`id`: the session's uuid, `cwd`); then entries with an
8-hex `id` and a `parentId` forming a tree (branches stay in the file, and all are read, as Claude
Code's are). `message` entries hold the conversation: `message.role` `user` (content: a string or
text blocks), `assistant` (`text` blocks are the answer, `toolCall` blocks the calls),
`toolResult` (how a call ended) and `bashExecution` (a command the person ran with `!`, with its
`exitCode`). Compactions, branch summaries and extensions' messages are not conversation. The
title is the last `session_info` entry's `name`, else the first prompt.

An entry's 8-hex id is unique in its file only: a turn's id is that id and a hash of its time and
text, so two sessions never share one, and the same entry copied into a fork is the same turn.
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
    stable_id,
    text_blocks,
    walk,
    wrapper,
)
from brain.recall.adapters.calls import (
    Call,
    Outcome,
    clip_command,
    clip_output,
    pi_calls,
    pi_outcome,
)


class Pi:
    name = "pi"
    label = "pi"

    def root(self) -> Path:
        return env_root("PI_CODING_AGENT_DIR", ".pi/agent") / "sessions"

    def files(self) -> Iterator[Path]:
        return walk(self.root(), "*/*.jsonl")

    def may_hold(self, path: Path, session: str) -> bool:
        return path.stem.endswith(session)  # <time>_<session uuid>.jsonl

    def read(self, path: Path, data: bytes, start: int, state: FileState) -> Chunk:
        turns: list[Turn] = []
        calls: list[Call] = []
        outcomes: list[Outcome] = []
        lines = Records(data, start)
        for rec in lines:
            kind = rec.get("type")
            if kind == "session":
                if isinstance(rec.get("id"), str) and rec["id"]:
                    state.session = rec["id"]
                if isinstance(rec.get("cwd"), str):
                    state.cwd = rec["cwd"]
            elif kind == "session_info" and isinstance(rec.get("name"), str):
                state.extra["name"] = clip_title(rec["name"])
            elif kind == "message" and isinstance(rec.get("message"), dict):
                if not state.session:
                    state.session = path.stem.rsplit("_", 1)[-1]
                self._message(rec, state, turns, calls, outcomes)
        state.title = str(state.extra.get("name") or state.extra.get("first") or "")
        return lines.chunk(turns, state, calls, outcomes, titled=bool(state.title))

    @staticmethod
    def _message(
        rec: dict[str, Any],
        state: FileState,
        turns: list[Turn],
        calls: list[Call],
        outcomes: list[Outcome],
    ) -> None:
        message: dict[str, Any] = rec["message"]
        role = message.get("role")
        ts = iso(rec.get("timestamp") or message.get("timestamp"))
        eid = rec.get("id") if isinstance(rec.get("id"), str) else ""
        if role == "toolResult":
            done = pi_outcome(message)
            if done is not None:
                outcomes.append(done)
            return
        if role == "bashExecution" and isinstance(message.get("command"), str) and eid:
            cid = f"{eid}-{stable_id(state.session, eid)[:12]}"
            command = clip_command(message["command"])
            turn = str(state.extra.get("turn", ""))
            calls.append(Call(cid, 0, ts, state.session, turn, state.cwd, "shell", "!", command))
            code = message.get("exitCode")
            code = code if isinstance(code, int) and not isinstance(code, bool) else None
            ok = None if message.get("cancelled") or code is None else code == 0
            outcomes.append(Outcome(cid, ok, code, clip_output(str(message.get("output") or ""))))
            return
        if role not in ("user", "assistant"):
            return  # extensions' messages, summaries: not what was said
        body = text_blocks(message.get("content"))
        if body.strip() and not wrapper(body):
            tid = f"{eid}-{stable_id(eid, ts, str(role), body)[:12]}" if eid else ""
            tid = tid or stable_id(state.session, ts, str(role), body)
            turns.append(Turn(tid, ts, str(role), state.session, cap(body)))
            state.extra["turn"] = tid
            if role == "user" and not state.extra.get("first"):
                state.extra["first"] = clip_title(body.split("\n", 1)[0])
        if role == "assistant":
            turn = str(state.extra.get("turn", ""))
            calls += pi_calls(message.get("content"), ts, state.session, turn, state.cwd)
