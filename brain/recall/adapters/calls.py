"""Tool calls in transcripts: the shell commands an agent ran, the files it wrote, how they ended.

Each adapter turns its agent's own records into `Call`s (a shell command, or one file written)
and `Outcome`s (how a call ended: exit status, success, a clipped snippet of its output), linked
by the agent's call id. A call and its outcome may sit in different reads of an append-only file,
so they are stored apart and joined by id (brain.recall.store). Only what decides success and
shows a snippet is kept: an output is clipped to OUTPUT_CAP characters (its start and its end,
where an error message usually is) and a command to COMMAND_CAP.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

OUTPUT_CAP = 400  # characters kept of a tool's output
OUTPUT_HEAD = 120  # of which from its start (the rest from its end)
COMMAND_CAP = 4000  # characters kept of a command (a heredoc can be a whole file)
PENDING_CAP = 256  # call ids an append-only adapter remembers while it waits for their outcome


@dataclass(frozen=True)
class Call:
    id: str  # the agent's id for the tool call (Claude's tool_use id, Codex's call_id, ...)
    n: int  # 0, 1, ...: a call that writes several files is one Call per file
    ts: str
    session: str
    turn: str  # the id of the conversation turn just before it ('' before the first)
    cwd: str  # where it ran ('' when the agent does not say)
    kind: str  # "shell" or "write"
    tool: str  # the agent's name for the tool
    text: str  # the command, or the path written


@dataclass(frozen=True)
class Outcome:
    id: str  # the call it answers
    ok: bool | None  # None: not known (rejected, cancelled, still running in the background)
    code: int | None  # the exit status, when the output says
    output: str  # clipped


def clip_output(text: str) -> str:
    """A tool's output bounded to OUTPUT_CAP characters: its start and its end."""
    text = text.strip()
    if len(text) <= OUTPUT_CAP:
        return text
    tail = OUTPUT_CAP - OUTPUT_HEAD - 3
    return text[:OUTPUT_HEAD].rstrip() + " … " + text[-tail:].lstrip()


def result_text(content: Any) -> str:
    """A tool result's text: a string, or its `text` blocks a line apart (Claude Code, pi)."""
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return content if isinstance(content, str) else ""


def clip_command(text: str) -> str:
    text = text.strip()
    return text if len(text) <= COMMAND_CAP else text[:COMMAND_CAP] + " …"


def argv_text(argv: Any) -> str:
    """A command given as an argument list, as a person would type it; `bash -lc SCRIPT` is the
    script."""
    if isinstance(argv, str):
        return argv
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not argv:
        return ""
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in _SHELLS and argv[1] in _SCRIPT_FLAGS:
        return str(argv[2])
    return shlex.join(argv)


_SHELLS = {"bash", "sh", "zsh", "dash", "fish", "pwsh", "powershell", "powershell.exe", "cmd"}
_SCRIPT_FLAGS = {"-c", "-lc", "-lic", "-ic", "-Command", "/c"}

# Exit statuses as the agents print them: Claude Code's "Exit code 2", Codex's freeform
# "Exit code: 2", its unified exec's "Process exited with code 2", Gemini's "Exit Code: 2", pi's
# "Command exited with code 2" (pi-mono packages/coding-agent/src/core/tools/bash.ts, at the end).
_EXIT = re.compile(
    r"^(?:Error: )?Exit code:? (-?\d+)\b|^Process exited with code (-?\d+)\b|^Exit Code: (-?\d+)\b"
    r"|^Command exited with code (-?\d+)\b",
    re.MULTILINE,
)


def exit_code(text: str) -> int | None:
    m = _EXIT.search(text)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Move to): (.+?)\s*$", re.MULTILINE)


def patch_files(patch: str) -> list[str]:
    """The files an `apply_patch` envelope writes (added, updated or moved to)."""
    return list(dict.fromkeys(m.strip() for m in _PATCH_FILE.findall(patch)))


def resolve(path: str, cwd: str) -> str:
    """A path as written by a tool, made absolute against the folder it ran in when it can be."""
    if not path or path.startswith(("/", "~")) or re.match(r"[A-Za-z]:[\\/]", path) or not cwd:
        return path
    return cwd.rstrip("/") + "/" + path.removeprefix("./")


# -- Codex CLI -------------------------------------------------------------------------------

CODEX_SHELLS = {"shell", "container.exec", "shell_command", "exec_command", "local_shell"}


def codex_call(payload: dict[str, Any], ts: str, session: str, turn: str, cwd: str) -> list[Call]:
    """The Calls of one Codex `response_item`: a function call to a shell tool, a local shell
    call, or an apply_patch (as a custom tool, a function, or a shell command)."""
    kind = payload.get("type")
    cid = payload.get("call_id") or payload.get("id")
    if not isinstance(cid, str) or not cid:
        return []
    name = str(payload.get("name") or "")
    where = cwd
    command = ""
    patch = ""
    if kind == "local_shell_call":
        action = payload.get("action")
        if isinstance(action, dict):
            command = argv_text(action.get("command"))
            if isinstance(action.get("working_directory"), str) and action["working_directory"]:
                where = action["working_directory"]
        name = "local_shell"
    elif kind == "custom_tool_call" and name == "apply_patch":
        patch = str(payload.get("input") or "")
    elif kind == "function_call":
        try:
            args = _nested(str(payload.get("arguments") or "{}"))
        except ValueError:
            return []
        if not isinstance(args, dict):
            return []
        if name == "apply_patch":
            patch = str(args.get("input") or "")
        elif name in CODEX_SHELLS:
            command = argv_text(args.get("command", args.get("cmd")))
            folder = args.get("workdir")
            if isinstance(folder, str) and folder:
                where = resolve(folder, cwd)
        else:
            return []
    else:
        return []
    if command and "*** Begin Patch" in command:  # apply_patch run through the shell tool
        patch = command
    if patch:
        return [
            Call(cid, i, ts, session, turn, where, "write", "apply_patch", resolve(f, where))
            for i, f in enumerate(patch_files(patch))
        ]
    if not command.strip():
        return []
    return [Call(cid, 0, ts, session, turn, where, "shell", name, clip_command(command))]


def _nested(text: str) -> Any:
    """JSON held in a transcript's string (a call's arguments, its output) as the transcript's
    own lines are read: a lone surrogate it spells out (`\\ud800`) comes back as U+FFFD, else
    the command or output that holds it would reach SQLite, which cannot store it."""
    from brain.text import json_loads

    return json_loads(text.encode("utf-8"))


def codex_outcome(payload: dict[str, Any]) -> Outcome | None:
    """The Outcome in a Codex `function_call_output` / `custom_tool_call_output`: the output is a
    JSON string with `metadata.exit_code` (older), freeform text opening "Exit code: N" (newer),
    the unified exec's "Process exited with code N", or an object with `success` (oldest)."""
    cid = payload.get("call_id")
    if not isinstance(cid, str) or not cid:
        return None
    out = payload.get("output")
    success: bool | None = None
    if isinstance(out, dict):
        success = out.get("success") if isinstance(out.get("success"), bool) else None
        out = out.get("content")
    if isinstance(out, list):  # content items
        out = "\n".join(str(i.get("text", "")) for i in out if isinstance(i, dict))
    text = out if isinstance(out, str) else ""
    code: int | None = None
    if text.startswith("{"):
        try:
            doc = _nested(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
            meta = doc["metadata"]
            code = meta["exit_code"] if isinstance(meta.get("exit_code"), int) else None
            text = str(doc.get("output", ""))
    if code is None:
        code = exit_code(text[:2000])
    if code is not None:
        ok: bool | None = code == 0
    elif success is not None:
        ok = success
    elif text.startswith("Process running with session ID"):
        ok = None
    elif re.match(r"(?:apply_patch verification failed|failed to |error: |Error: )", text):
        ok = False
    else:
        ok = None if not text else True
    return Outcome(cid, ok, code, clip_output(_after_header(text)))


def codex_event(payload: dict[str, Any]) -> Outcome | None:
    """An `event_msg` that ends a command (`exec_command_end`) or a patch (`patch_apply_end`)."""
    cid = payload.get("call_id")
    if not isinstance(cid, str) or not cid:
        return None
    if payload.get("type") == "exec_command_end" and isinstance(payload.get("exit_code"), int):
        code = payload["exit_code"]
        text = payload.get("aggregated_output") or payload.get("stderr") or payload.get("stdout")
        return Outcome(cid, code == 0, code, clip_output(str(text or "")))
    if payload.get("type") == "patch_apply_end" and isinstance(payload.get("success"), bool):
        text = payload.get("stderr") or payload.get("stdout") or ""
        return Outcome(cid, payload["success"], None, clip_output(str(text)))
    return None


def _after_header(text: str) -> str:
    """The output without the "Exit code / Wall time / Output:" header Codex puts above it."""
    head, sep, rest = text.partition("\nOutput:\n")
    return rest if sep and len(head) < 300 else text


# -- Claude Code -----------------------------------------------------------------------------

CLAUDE_WRITES = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path"}
CLAUDE_WRITES["NotebookEdit"] = "notebook_path"
_REJECTED = ("The user doesn't want to proceed", "The user doesn't want to take this action")
_TOOL_USE_ID = re.compile(rb'"tool_use_id":\s?"([^"\\]{1,200})"')


def claude_calls(
    content: Any, ts: str, session: str, turn: str, cwd: str, pending: dict[str, bool]
) -> list[Call]:
    """The Calls in a Claude Code assistant message's `tool_use` blocks; each id goes into
    `pending` (value: whether it runs in the background) until its result is read."""
    out: list[Call] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        cid, name, args = block.get("id"), block.get("name"), block.get("input")
        if not isinstance(cid, str) or not isinstance(args, dict):
            continue
        if name == "Bash" and isinstance(args.get("command"), str) and args["command"].strip():
            text = clip_command(args["command"])
            out.append(Call(cid, 0, ts, session, turn, cwd, "shell", "Bash", text))
            pending[cid] = bool(args.get("run_in_background"))
        elif name in CLAUDE_WRITES and isinstance(args.get(CLAUDE_WRITES[name]), str):
            path = resolve(args[CLAUDE_WRITES[name]], cwd)
            out.append(Call(cid, 0, ts, session, turn, cwd, "write", name, path))
            pending[cid] = False
    while len(pending) > PENDING_CAP:  # a call whose result never came (the session died)
        del pending[next(iter(pending))]
    return out


def claude_waiting(line: bytes, pending: dict[str, bool]) -> bool:
    """True when a raw tool-result line answers a call we wait for (told before parsing: most
    tool results are file reads and searches, the bulk of a transcript)."""
    return bool(pending) and any(
        m.decode("utf-8", "replace") in pending for m in _TOOL_USE_ID.findall(line)
    )


def claude_outcomes(content: Any, pending: dict[str, bool]) -> list[Outcome]:
    """The Outcomes in a Claude Code user message's `tool_result` blocks for pending calls."""
    out: list[Outcome] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        cid = block.get("tool_use_id")
        if not isinstance(cid, str) or cid not in pending:
            continue
        background = pending.pop(cid)
        text = result_text(block.get("content"))
        code = exit_code(text[:200])
        ok: bool | None = not block.get("is_error")
        if text.startswith(_REJECTED) or (background and ok):
            ok = None  # never ran, or still running: neither success nor failure
        elif code is not None:
            ok = code == 0
        out.append(Outcome(cid, ok, code, clip_output(text)))
    return out


# -- Gemini CLI ------------------------------------------------------------------------------

GEMINI_SHELLS = {"run_shell_command"}
GEMINI_WRITES = {"write_file": "file_path", "replace": "file_path", "edit": "file_path"}


def gemini_calls(
    tool_calls: Any, ts: str, session: str, turn: str, project: str = ""
) -> tuple[list[Call], list[Outcome]]:
    """The Calls and Outcomes in a Gemini CLI message's `toolCalls` (a call carries its result
    and status). A call's cwd is its `dir_path` when that is absolute, else the project's folder
    ('' when the chat does not say)."""
    calls: list[Call] = []
    outcomes: list[Outcome] = []
    for tc in tool_calls if isinstance(tool_calls, list) else []:
        if not isinstance(tc, dict):
            continue
        cid, name, args = tc.get("id"), tc.get("name"), tc.get("args")
        if not isinstance(cid, str) or not cid or not isinstance(args, dict):
            continue
        when = str(tc.get("timestamp") or ts)
        folder = args.get("dir_path") or args.get("directory") or ""
        cwd = folder if isinstance(folder, str) and folder.startswith("/") else project
        if name in GEMINI_SHELLS and isinstance(args.get("command"), str):
            text = clip_command(args["command"])
            calls.append(Call(cid, 0, when, session, turn, cwd, "shell", str(name), text))
        elif name in GEMINI_WRITES and isinstance(args.get(GEMINI_WRITES[name]), str):
            path = resolve(args[GEMINI_WRITES[name]], project)
            calls.append(Call(cid, 0, when, session, turn, cwd, "write", str(name), path))
        else:
            continue
        outcomes.append(_gemini_outcome(cid, tc))
    return calls, outcomes


def _gemini_outcome(cid: str, tc: dict[str, Any]) -> Outcome:
    text = _gemini_text(tc.get("result"))
    status = tc.get("status")
    code = exit_code(text)
    if status == "error":
        ok: bool | None = False
    elif status != "success":  # cancelled, or still awaiting approval
        ok = None
    elif code is not None:
        ok = code == 0
    else:
        ok = not re.search(r"^Error: (?!\(none\))", text, re.MULTILINE)
    return Outcome(
        cid, ok, code, clip_output(_GEMINI_TRAILER.sub("", text).removeprefix("Output: "))
    )


# The lines Gemini's shell tool adds after a command's output (and before it: older versions).
_GEMINI_TRAILER = re.compile(
    r"^(?:Command|Directory|Error: \(none\)|Exit Code|Signal|Background PIDs|Process Group PGID)"
    r"(?::.*)?$\n?",
    re.MULTILINE,
)


def _gemini_text(result: Any) -> str:
    """The text of a Gemini tool result: parts holding a functionResponse whose response has an
    `output` (or `error`), or plain text parts."""
    parts = result if isinstance(result, list) else [result]
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            response = part.get("functionResponse", {})
            response = response.get("response") if isinstance(response, dict) else None
            if isinstance(response, dict):
                for key in ("output", "error"):
                    if isinstance(response.get(key), str):
                        texts.append(response[key])
    return "\n".join(texts)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# -- GitHub Copilot CLI ----------------------------------------------------------------------

# Tool names from docs.github.com "GitHub Copilot CLI hooks reference", "Tool names for hook
# matching" (github/docs content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md:
# bash, powershell, create, edit); `str_replace_editor` and `write` are earlier releases' names.
# Their `path` and `command` arguments are not in a published schema: read from sessions.
COPILOT_SHELLS = {"bash", "powershell"}
COPILOT_WRITES = {"create": "path", "edit": "path", "str_replace_editor": "path", "write": "path"}


def copilot_call(data: dict[str, Any], ts: str, session: str, turn: str, cwd: str) -> list[Call]:
    """The Call in a Copilot CLI `tool.execution_start` event's data (`toolCallId`, `toolName`,
    `arguments`: github/copilot-sdk nodejs/src/generated/session-events.ts)."""
    cid, name, args = data.get("toolCallId"), data.get("toolName"), data.get("arguments")
    if isinstance(args, str):
        try:
            args = _nested(args)
        except ValueError:
            return []
    if not isinstance(cid, str) or not cid or not isinstance(args, dict):
        return []
    command = args.get("command")
    if name in COPILOT_SHELLS and isinstance(command, str) and command.strip():
        return [Call(cid, 0, ts, session, turn, cwd, "shell", str(name), clip_command(command))]
    key = COPILOT_WRITES.get(str(name))
    if key and isinstance(args.get(key), str) and command != "view":  # the old editor also reads
        return [Call(cid, 0, ts, session, turn, cwd, "write", str(name), resolve(args[key], cwd))]
    return []


def copilot_outcome(data: dict[str, Any]) -> Outcome | None:
    """How a call ended, from a `tool.execution_complete` event's data: `success`, `result`
    (`content`, and `contents` whose `shell_exit` or older `terminal` block has `exitCode`) and
    `error.message`."""
    cid = data.get("toolCallId")
    if not isinstance(cid, str) or not cid:
        return None
    result, error = _obj(data.get("result")), _obj(data.get("error"))
    code: int | None = None
    for block in result.get("contents") or []:
        if isinstance(block, dict) and block.get("type") in ("shell_exit", "terminal"):
            got = block.get("exitCode")
            code = got if isinstance(got, int) and not isinstance(got, bool) else code
    text = result.get("content") or error.get("message") or ""
    text = text if isinstance(text, str) else ""
    success = data.get("success")
    if code is not None:
        ok: bool | None = code == 0
    else:
        ok = success if isinstance(success, bool) else None
    return Outcome(cid, ok, code, clip_output(text))


# -- OpenCode --------------------------------------------------------------------------------

# Tools and their inputs in anomalyco/opencode (formerly sst/opencode) packages/opencode/src/tool:
# bash.ts (`command`, `workdir`; its metadata's `exit` is the exit status), write.ts, edit.ts
# (`filePath`), apply_patch.ts (`patchText`).
OPENCODE_SHELLS = {"bash"}
OPENCODE_WRITES = {"write": "filePath", "edit": "filePath", "multiedit": "filePath"}
OPENCODE_PATCHES = {"apply_patch": "patchText", "patch": "patchText"}


def opencode_call(
    part: dict[str, Any], ts: str, session: str, turn: str, cwd: str
) -> tuple[list[Call], Outcome | None]:
    """The Calls of one OpenCode tool part (`callID`, `tool`, `state`: status, input, output,
    metadata, error; packages/core/src/v1/session.ts ToolPart) and how it ended (None while it
    is pending or running)."""
    cid, tool, state = part.get("callID"), str(part.get("tool") or ""), part.get("state")
    if not isinstance(cid, str) or not cid or not isinstance(state, dict):
        return [], None
    args = _obj(state.get("input"))
    calls: list[Call] = []
    if tool in OPENCODE_SHELLS and isinstance(args.get("command"), str) and args["command"].strip():
        folder = args.get("workdir")
        where = resolve(folder, cwd) if isinstance(folder, str) and folder else cwd
        calls.append(
            Call(cid, 0, ts, session, turn, where, "shell", tool, clip_command(args["command"]))
        )
    elif tool in OPENCODE_WRITES and isinstance(args.get(OPENCODE_WRITES[tool]), str):
        path = resolve(args[OPENCODE_WRITES[tool]], cwd)
        calls.append(Call(cid, 0, ts, session, turn, cwd, "write", tool, path))
    elif tool in OPENCODE_PATCHES and isinstance(args.get(OPENCODE_PATCHES[tool]), str):
        for i, name in enumerate(patch_files(args[OPENCODE_PATCHES[tool]])):
            calls.append(Call(cid, i, ts, session, turn, cwd, "write", tool, resolve(name, cwd)))
    if not calls:
        return [], None
    status = state.get("status")
    meta = _obj(state.get("metadata"))
    if status == "error":
        return calls, Outcome(cid, False, None, clip_output(str(state.get("error") or "")))
    if status != "completed":
        return calls, None
    got = meta.get("exit")
    code = got if isinstance(got, int) and not isinstance(got, bool) else None
    text = state.get("output") if isinstance(state.get("output"), str) else meta.get("output")
    return calls, Outcome(
        cid, True if code is None else code == 0, code, clip_output(str(text or ""))
    )


# -- pi --------------------------------------------------------------------------------------

# badlogic/pi-mono packages/coding-agent/src/core/tools: bash.ts (`command`), write.ts and
# edit.ts (`path`, relative to the session's folder or absolute).
PI_SHELLS = {"bash"}
PI_WRITES = {"write": "path", "edit": "path"}


def pi_calls(content: Any, ts: str, session: str, turn: str, cwd: str) -> list[Call]:
    """The Calls in a pi assistant message's `toolCall` blocks (`id`, `name`, `arguments`)."""
    out: list[Call] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        cid, name, args = block.get("id"), str(block.get("name") or ""), block.get("arguments")
        if not isinstance(cid, str) or not cid or not isinstance(args, dict):
            continue
        if name in PI_SHELLS and isinstance(args.get("command"), str) and args["command"].strip():
            out.append(
                Call(cid, 0, ts, session, turn, cwd, "shell", name, clip_command(args["command"]))
            )
        elif name in PI_WRITES and isinstance(args.get(PI_WRITES[name]), str):
            path = resolve(args[PI_WRITES[name]], cwd)
            out.append(Call(cid, 0, ts, session, turn, cwd, "write", name, path))
    return out


def pi_outcome(message: dict[str, Any]) -> Outcome | None:
    """How a call ended, from a pi `toolResult` message (`toolCallId`, `isError`, `content`):
    a bash command that failed ends its text with "Command exited with code N"."""
    cid = message.get("toolCallId")
    if not isinstance(cid, str) or not cid:
        return None
    text = result_text(message.get("content"))
    code = exit_code(text[-200:])
    failed = message.get("isError")
    if code is not None:
        ok: bool | None = code == 0
    else:
        ok = not failed if isinstance(failed, bool) else None
    return Outcome(cid, ok, code, clip_output(text))
