"""One internal event for every agent program's hook JSON: the commands know no harness.

Each agent sends its own JSON on stdin, checked against each one's current source or reference:
- Claude Code and Codex CLI: the same event names and snake_case keys (`hook_event_name`,
  `session_id`, `transcript_path`, `stop_hook_active`; Codex adds `turn_id` and `model`:
  openai/codex codex-rs/hooks/src/schema.rs, `*CommandInput`);
- Gemini CLI: its own event names (`BeforeAgent` for a prompt, `AfterAgent` for the end of a
  turn) with the same keys and a `timestamp` (google-gemini/gemini-cli docs/hooks/reference.md,
  "Base input schema");
- GitHub Copilot CLI: camelCase keys and no event name (`sessionId`, `transcriptPath`,
  `stopReason`) under its camelCase event names; under Claude's PascalCase names (brain's file
  uses them) snake_case keys with an ISO `timestamp`, `stop_reason` at a stop and `source`
  startup | resume | new at a start (github/docs content/copilot/reference/hooks-reference.md,
  "Hook event input payloads");
- VS Code's agent mode (which runs the hooks of ~/.claude/settings.json and ~/.copilot/hooks):
  camelCase `hookEventName` and `sessionId` beside `transcript_path`, `timestamp`, `cwd`; its
  SessionStart `source` is always "new" (microsoft/vscode-docs
  docs/copilot/customization/hooks.md at 9f2e2ab6, "Common input fields").

`parse` maps each to an `Event` whose `kind` is `start`, `prompt` or `stop` (`""` for anything
else) and whose `harness` names the program, so that `brain settle` (and `prime`, `pack`) read
one shape; `block` and `context_for` answer in the shape each program reads.

Hot path: this runs at every prompt and every stop, so it imports nothing beyond the standard
library's smallest modules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from brain.stdin import HOOK_WAIT_S, STDIN_MAX, read_stdin

WAIT_S = HOOK_WAIT_S  # the agent writes the event before the hook has even started Python
MAX_BYTES = STDIN_MAX

# native event name -> internal kind (Claude Code, Codex CLI, Gemini CLI, Copilot in Claude form)
KINDS = {
    "SessionStart": "start",
    "UserPromptSubmit": "prompt",
    "BeforeAgent": "prompt",
    "Stop": "stop",
    "AfterAgent": "stop",
}

# The programs that read no context from a prompt hook: VS Code's UserPromptSubmit takes the
# common output only (continue, stopReason, systemMessage: docs/copilot/customization/hooks.md,
# "UserPromptSubmit"), so prime serves it nothing rather than log what nobody received.
NO_PROMPT_CONTEXT = frozenset({"vscode"})


@dataclass(frozen=True)
class Event:
    kind: str  # start | prompt | stop | "" (an event brain does not handle)
    harness: str  # claude | codex | gemini | copilot | vscode
    name: str  # the program's own event name
    session: str
    cwd: str
    transcript: str  # the session's transcript file ("" when the program names none)
    prompt: str  # a prompt event's text
    source: str  # a start event's startup | resume | clear | compact | new
    stop_active: bool  # a stop that a hook's earlier block already continued


def _text(doc: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = doc.get(key)
        if isinstance(value, str):
            return value
    return ""


def harness_of(doc: dict[str, Any]) -> str:
    """Which program sent `doc`, told by the keys only that program sends."""
    if isinstance(doc.get("hookEventName"), str):
        return "vscode"  # the only one that names the event in camelCase
    name = doc.get("hook_event_name")
    if name is None and ("sessionId" in doc or "stopReason" in doc):
        return "copilot"  # its camelCase form
    if name in ("BeforeAgent", "AfterAgent") or "prompt_response" in doc:
        return "gemini"
    transcript = _text(doc, "transcript_path").replace("\\", "/")
    if "turn_id" in doc or transcript.rsplit("/", 1)[-1].startswith("rollout-"):
        return "codex"  # its start has no turn_id: its transcript is a rollout file (schema.rs)
    if "stop_reason" in doc or "initial_prompt" in doc or doc.get("source") == "new":
        return "copilot"  # in Claude's form: keys of its own (Claude Code's start has no "new")
    if "timestamp" in doc and name in KINDS:
        # Gemini and Copilot (in Claude's form) stamp every event; Claude Code does not
        # (Gemini's transcript lives under its `.gemini` folder, as chats/session-*.json or,
        # since gemini-cli PR #23749, session-*.jsonl: packages/core/src/services/
        # chatRecordingService.ts)
        return "gemini" if "/.gemini/" in transcript or transcript.endswith(".json") else "copilot"
    return "claude"


def parse(doc: Any) -> Event | None:
    """The internal event of one program's hook JSON; None for what is not a JSON object."""
    if not isinstance(doc, dict):
        return None
    harness = harness_of(doc)
    name = _text(doc, "hook_event_name", "hookEventName")
    kind = KINDS.get(name, "")
    if harness == "copilot" and not name:  # camelCase: the keys say which event it is
        if "stopReason" in doc:
            kind, name = "stop", "agentStop"
        elif "prompt" in doc:
            kind, name = "prompt", "userPromptSubmitted"
        elif "source" in doc:
            kind, name = "start", "sessionStart"
    active = doc.get("stop_hook_active", doc.get("stopHookActive"))
    return Event(
        kind=kind,
        harness=harness,
        name=name,
        session=_text(doc, "session_id", "sessionId"),
        cwd=_text(doc, "cwd"),
        transcript=_text(doc, "transcript_path", "transcriptPath"),
        prompt=_text(doc, "prompt"),
        source=_text(doc, "source", "trigger"),
        stop_active=active is True,
    )


def read_bytes(stream: Any = None) -> bytes:
    """stdin's bytes, or b"": never blocks on a terminal, an empty or a silent stdin (it waits at
    most WAIT_S for each chunk), never fails."""
    import sys

    stream = sys.stdin if stream is None else stream
    try:
        if stream is None or stream.isatty():
            return b""
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    return read_stdin(fd, MAX_BYTES, WAIT_S)[0]


def read(stream: Any = None) -> Event | None:
    """The hook event on stdin, or None (no event, not JSON, not an object)."""
    data = read_bytes(stream)
    if not data.strip():
        return None
    try:
        return parse(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


# --- what a hook answers, in the form each program reads -----------------------------------------


def context(event: Event, text: str) -> dict[str, Any]:
    """Context a start or prompt hook adds beside the session or the prompt: Claude Code, Codex
    CLI, Gemini CLI and VS Code all read `hookSpecificOutput.additionalContext` under the event's
    own name (Gemini only JSON: plain text on its stdout is an error)."""
    return context_for(event.harness, event.name, text)


def context_for(harness: str, name: str, text: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
    if harness == "copilot":  # Copilot CLI reads `additionalContext` at the top (Codex refuses
        doc["additionalContext"] = text  # a key its schema does not know: Copilot's alone)
    return doc


def block(reason: str, harness: str = "claude") -> dict[str, Any]:
    """A stop held back, `reason` becoming the agent's next instruction, in the form each program
    reads at its stop:
    - Claude Code: top-level `decision`/`reason` ("Stop decision control" in its hooks
      reference); its output schema refuses `hookSpecificOutput` for Stop
      (anthropics/claude-code#60993), so guidance through `additionalContext` is no option;
    - Codex CLI: the same two keys, and nothing else its schema does not list
      (codex-rs/hooks/schema/generated/stop.command.output.schema.json: additionalProperties
      false);
    - Gemini CLI: "block" is its alias of "deny" (packages/core/src/hooks/types.ts,
      isBlockingDecision), the reason sent as a new prompt;
    - Copilot CLI: `decision: "block"` forces another turn with `reason` as its prompt
      (hooks-reference.md, "agentStop / subagentStop decision control");
    - VS Code: its Stop reads `hookSpecificOutput.decision`/`reason` (docs/copilot/customization/
      hooks.md, "Stop output"), its SubagentStop the top-level keys: it gets both."""
    doc: dict[str, Any] = {"decision": "block", "reason": reason}
    if harness == "vscode":
        doc["hookSpecificOutput"] = {"hookEventName": "Stop", **doc}
    return doc
