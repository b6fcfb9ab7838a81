"""`brain settle`: at the end of a turn, ask once per session what it settled.

Runs as the agents' stop hook (Claude Code's and Codex's `Stop`, Gemini CLI's `AfterAgent`,
Copilot CLI's `agentStop`; brain.hook_event maps each to one `stop` event). When the session
wrote files and proposed nothing to the vault, the stop is blocked once with a reason that asks
the agent to `brain propose` each durable fact it settled, names the files it wrote (so it does
not propose what they say) and quotes the user's corrections that recall saw this session.
Otherwise, and whenever the stop already follows a block (`stop_hook_active`), it passes.

What the session did is read from its transcript, by bytes first (a tool call is a small share
of a transcript), in each agent's own format, as brain.recall.adapters.calls reads them: Claude
Code's `tool_use` blocks, Codex's rollout items, Gemini CLI's `toolCalls` (in its `session-*.jsonl`
lines, which its hooks name as `transcript_path`: gemini-cli hookEventHandler.ts
`createBaseInput`, 5411f113; or its older one-document `session-*.json`) and Copilot CLI's
`tool.execution_start` events. A proposal is a shell command running `brain propose`, or a call
of an MCP tool named `propose` (brain mcp's, whatever the agent calls the server).

This runs at every stop: nothing heavy is imported unless the stop is blocked.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from brain.hook_event import Event

if TYPE_CHECKING:
    from brain.recall.adapters.calls import Call

MAX_TRANSCRIPT = 256 * 1024 * 1024  # bytes one stop reads, at most: the rest waits for the next
PIECE = 8 * 1024 * 1024  # bytes read at a time: memory holds a piece and one line, never a file
# A line (or a one-document transcript) longer than this is passed over unread, and remembered
# as passed: parsing it would hold several times its size, and no tool call brain reads is one
LINE_MAX = 32 * 1024 * 1024
FILES_NAMED = 12  # files the reason names; the rest are counted
CORRECTIONS = 5
QUOTE_CAP = 200  # characters of one correction quoted

_PROPOSE = re.compile(r"\bbrain(?:\.exe)?['\"]?\s+propose\b")
_PROPOSE_TOOLS = ("__propose", "-propose", "/propose", ".propose")


@dataclass(frozen=True)
class Activity:
    files: tuple[str, ...]  # written, in the order first written
    proposed: bool


@dataclass(frozen=True)
class SettleResult:
    decision: str  # "block", or "" to let the stop pass
    # why: block | active | not-a-stop | no-session | asked | no-transcript | no-edits | proposed
    why: str
    reason: str  # what the agent is asked ("" when it passes)
    files: tuple[str, ...]
    corrections: tuple[str, ...]


# --- what the session did ------------------------------------------------------------------------


def _proposes(command: object) -> bool:
    return isinstance(command, str) and bool(_PROPOSE.search(command))


def _propose_tool(name: object) -> bool:
    return isinstance(name, str) and (name == "propose" or name.endswith(_PROPOSE_TOOLS))


class _Scan:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.files: dict[str, None] = {}
        self.proposed = False

    def wrote(self, path: str) -> None:
        if path:
            self.files.setdefault(path, None)

    def claude(self, rec: dict[str, Any]) -> None:
        from brain.recall.adapters.calls import CLAUDE_WRITES, resolve

        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        cwd = rec["cwd"] if isinstance(rec.get("cwd"), str) and rec["cwd"] else self.cwd
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            name, args = block.get("name"), block.get("input")
            if not isinstance(args, dict):
                continue
            if name in CLAUDE_WRITES and isinstance(args.get(CLAUDE_WRITES[str(name)]), str):
                self.wrote(resolve(args[CLAUDE_WRITES[str(name)]], cwd))
            elif (name == "Bash" and _proposes(args.get("command"))) or _propose_tool(name):
                self.proposed = True

    def codex(self, rec: dict[str, Any]) -> None:
        from brain.recall.adapters.calls import codex_call

        payload = rec.get("payload") if "payload" in rec else rec
        if not isinstance(payload, dict):
            return
        if rec.get("type") in ("session_meta", "turn_context") and isinstance(
            payload.get("cwd"), str
        ):
            self.cwd = payload["cwd"]
            return
        if _propose_tool(payload.get("name")) or (
            payload.get("type") == "mcp_tool_call" and payload.get("tool") == "propose"
        ):
            self.proposed = True
            return
        self.took(codex_call(payload, "", "", "", self.cwd))

    def copilot(self, rec: dict[str, Any]) -> None:
        from brain.recall.adapters.calls import copilot_call

        data = rec.get("data")
        if not isinstance(data, dict):
            return
        if _propose_tool(data.get("toolName")):
            self.proposed = True
        self.took(copilot_call(data, "", "", "", self.cwd))

    def gemini(self, rec: dict[str, Any]) -> None:
        """A Gemini CLI chat: its one document (`messages`), or a line of its JSONL form: a
        message, or a `$set` whose `messages` is a checkpoint of them all."""
        from brain.recall.adapters.calls import gemini_calls

        update = rec.get("$set")
        messages = (update if isinstance(update, dict) else rec).get("messages")
        for msg in messages if isinstance(messages, list) else [rec]:
            tool_calls = msg.get("toolCalls") if isinstance(msg, dict) else None
            if not isinstance(tool_calls, list):
                continue
            if any(isinstance(tc, dict) and _propose_tool(tc.get("name")) for tc in tool_calls):
                self.proposed = True
            self.took(gemini_calls(tool_calls, "", "", "", self.cwd)[0])

    def took(self, calls: list[Call]) -> None:
        for call in calls:
            if call.kind == "write":
                self.wrote(call.text)
            elif _proposes(call.text):
                self.proposed = True


# a line worth parsing holds one of these (JSON escapes quotes inside strings, so these byte
# strings only occur as structure); they are found in the whole file at C speed, and only the
# lines holding one are looked at
_CLAUDE = (b'"type":"tool_use"', b'"type": "tool_use"')
_CLAUDE_WANTED = (b'"Write"', b'"Edit"', b'"MultiEdit"', b'"NotebookEdit"', b"propose")
_CODEX = (b'"function_call"', b'"custom_tool_call"', b'"local_shell_call"', b'"mcp_tool_call"')
_CODEX_META = (b'"session_meta"', b'"turn_context"')
_COPILOT = (b"tool.execution_start",)
_GEMINI = (b'"toolCalls"',)  # a message of Gemini CLI's JSONL chat, or a checkpoint of them
_MARKERS = (b'tool_use"', b'_call"', *_CODEX_META, *_COPILOT, *_GEMINI)  # the fewest passes


def _lines_with(data: bytes | bytearray, markers: tuple[bytes, ...], stop: int) -> list[bytes]:
    """Each line of `data[:stop]` holding one of `markers`, once, in file order."""
    spans: set[tuple[int, int]] = set()
    for marker in markers:
        at = data.find(marker, 0, stop)
        while at >= 0:
            end = data.find(b"\n", at, stop)
            end = stop if end < 0 else end
            spans.add((data.rfind(b"\n", 0, at) + 1, end))
            at = data.find(marker, end, stop)
    return [bytes(data[a:b]) for a, b in sorted(spans)]


def _take(line: bytes, scan: _Scan) -> None:
    """Hand one line holding a marker to the reader of its agent's format."""
    if not any(m in line for m in (*_CLAUDE, *_CODEX, *_CODEX_META, *_COPILOT, *_GEMINI)):
        return  # `_call"` in a message's text
    if any(m in line for m in _CLAUDE):
        if not any(m in line for m in _CLAUDE_WANTED):
            return  # a read, a search, a command: the bulk of a session's tool calls
        how = scan.claude
    elif any(m in line for m in _GEMINI):  # structure: a quote in a text is escaped
        how = scan.gemini
    elif any(m in line for m in _COPILOT):
        how = scan.copilot
    else:
        how = scan.codex
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return
    if isinstance(rec, dict):
        how(rec)


def _document(fh: BinaryIO, scan: _Scan) -> bool:
    """Gemini CLI's older one-JSON-document session (rewritten whole), read whole when it is
    one (and LINE_MAX at most); False for anything else."""
    head = fh.read(4096)
    fh.seek(0)
    if head.lstrip()[:1] != b"{" or b'"messages"' not in head:
        return False
    if os.fstat(fh.fileno()).st_size > LINE_MAX:
        return False
    with contextlib.suppress(ValueError, RecursionError):
        doc = json.loads(fh.read())
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            scan.gemini(doc)
            return True
    fh.seek(0)
    return False


def _read_lines(fh: BinaryIO, offset: int, passing: bool, scan: _Scan) -> tuple[int, bool]:
    """Read whole lines from `offset`, PIECE bytes at a time and MAX_TRANSCRIPT at most, into
    `scan`. Returns where the next read starts (after the last whole line, or past the bytes
    of a line over LINE_MAX) and whether it starts inside such a line (`passing`: what comes
    before its next newline is passed over)."""
    fh.seek(offset)
    held = bytearray()  # the line the last piece ended in, at `offset`
    budget = MAX_TRANSCRIPT
    while budget > 0:
        piece = fh.read(min(PIECE, budget))
        if not piece:
            break
        budget -= len(piece)
        if passing:
            newline = piece.find(b"\n")
            if newline < 0:
                offset += len(piece)
                continue
            offset += newline + 1
            piece, passing = piece[newline + 1 :], False
        held += piece
        whole = held.rfind(b"\n") + 1
        if whole:
            for line in _lines_with(held, _MARKERS, whole):
                _take(line, scan)
            del held[:whole]
            offset += whole
        if len(held) > LINE_MAX:
            offset += len(held)
            held.clear()
            passing = True
    return offset, passing


def activity(transcript: Path, cwd: str = "", session: str = "") -> Activity:
    """The files a session wrote and whether it proposed, from its transcript (any agent's).
    With `session`, an append-only transcript is read from where the last stop left off (what
    was seen before is kept in the state dir): a long session costs each stop its new lines,
    and a stop reads MAX_TRANSCRIPT at most (the next goes on from there)."""
    seen = _seen(session, transcript) if session else None
    offset, passing, scan = seen if seen else (0, False, _Scan(cwd))
    with transcript.open("rb") as fh:
        if not offset and _document(fh, scan):
            return Activity(tuple(scan.files), scan.proposed)
        # a last line still being written is read again next time (reading is idempotent)
        offset, passing = _read_lines(fh, offset, passing, scan)
    if session:
        _save_seen(session, transcript, offset, passing, scan)
    return Activity(tuple(scan.files), scan.proposed)


def _seen_path(session: str) -> Path:
    from brain import marks

    return marks.path("settle", session).with_suffix(".seen")


def _seen(session: str, transcript: Path) -> tuple[int, bool, _Scan] | None:
    """(offset, whether it is inside a line passed over, what was seen up to it) from the last
    stop of this session, when the transcript is the same file and has only grown since."""
    from brain.files import read_json_dict

    doc = read_json_dict(_seen_path(session))
    if doc.get("transcript") != str(transcript):
        return None
    try:
        size = transcript.stat().st_size
    except OSError:
        return None
    offset, files = doc.get("offset"), doc.get("files")
    if not isinstance(offset, int) or not 0 < offset <= size or not isinstance(files, list):
        return None
    scan = _Scan(str(doc.get("cwd") or ""))
    for path in files:
        scan.wrote(str(path))
    scan.proposed = doc.get("proposed") is True
    return offset, doc.get("passing") is True, scan


def _save_seen(session: str, transcript: Path, offset: int, passing: bool, scan: _Scan) -> None:
    from brain.files import write_atomic

    path = _seen_path(session)
    doc = {
        "transcript": str(transcript),
        "offset": offset,
        "passing": passing,
        "cwd": scan.cwd,
        "files": list(scan.files),
        "proposed": scan.proposed,
    }
    new = not path.exists()
    with contextlib.suppress(OSError):
        write_atomic(path, json.dumps(doc, ensure_ascii=False) + "\n")
    if new:
        from brain import marks

        marks.prune(path.parent)


# --- once per session (brain.marks) --------------------------------------------------------------


def asked(session: str) -> bool:
    from brain import marks

    return marks.made("settle", session)


def remember(session: str) -> bool:
    """Mark the session asked; False when another stop of it got there first."""
    from brain import marks

    return marks.make("settle", session)


# --- the reason ----------------------------------------------------------------------------------


def shown(path: str, cwd: str) -> str:
    """A written path as the agent knows it: relative to its folder when inside it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _quote(text: str) -> str:
    """A correction as the reason quotes it: one line, masked before a cut (brain.text.cut)."""
    from brain.text import cut

    return cut(" ".join(text.split()).replace('"', "'"), QUOTE_CAP)


def reason(files: Iterable[str], corrections: Iterable[str]) -> str:
    names = list(files)
    listed = ", ".join(names[:FILES_NAMED])
    if len(names) > FILES_NAMED:
        listed += f" and {len(names) - FILES_NAMED} more"
    text = (
        f"Before you stop: this session wrote {listed} and proposed nothing to the user's "
        "memory. For each durable fact you settled here (a decision and why, a path, a command "
        "that worked, a constraint), run `brain propose 'handle — fact'`, one bullet each; a "
        "person approves them. Do not propose what the files you wrote already say. If nothing "
        "durable was settled, say so in one line and stop."
    )
    quotes = [f'"{_quote(c)}"' for c in corrections]
    if quotes:
        text += " The user corrected you this session: " + "; ".join(quotes) + "."
    return text


def _corrections(session: str) -> tuple[str, ...]:
    from brain.commands.lessons import corrections

    found = []
    for moment in corrections(session, limit=CORRECTIONS):
        said = moment.turns[-1].text if moment.turns else moment.lesson
        found.append(_quote(said))
    return tuple(found)


# --- the decision --------------------------------------------------------------------------------


def _pass(why: str, files: tuple[str, ...] = ()) -> SettleResult:
    return SettleResult("", why, "", files, ())


def settle(event: Event | None) -> SettleResult:
    """Whether to block this stop, and the reason to give."""
    if event is None or event.kind != "stop":
        return _pass("not-a-stop")
    if event.stop_active:
        return _pass("active")
    if not event.session:
        return _pass("no-session")  # "once" needs a session to remember
    if asked(event.session):
        return _pass("asked")
    if not event.transcript or not Path(event.transcript).expanduser().is_file():
        return _pass("no-transcript")
    did = activity(Path(event.transcript).expanduser(), event.cwd, event.session)
    files = tuple(shown(f, event.cwd) for f in did.files)
    if not files:
        return _pass("no-edits")
    if did.proposed:
        return _pass("proposed", files)
    if not remember(event.session):
        return _pass("asked", files)
    quoted = _corrections(event.session)
    return SettleResult("block", "block", reason(files, quoted), files, quoted)


def after(event: Event | None, result: SettleResult, vault_option: str | None = None) -> None:
    """What a stop does once the decision is out: the one place for the stop's chores (quiet,
    bounded, in the background): send the vault (`--vault`, else BRAIN_VAULT or the recorded
    one), and the daily sweep (`brain tend --daily`). A blocked stop leaves them to the stop that
    follows; a run that was no stop has none. Every stop is a line in the hooks' log."""
    if event is not None and event.kind == "stop":
        from brain.crash import HOOKS_LOG, hook_run, log_text

        named = f"blocked, {len(result.files)} files named" if result.decision else ""
        what = named or f"passed ({result.why})"
        log_text(HOOKS_LOG, hook_run("settle", event.harness, event.session, what))
    if result.decision or event is None or event.kind != "stop":
        return
    from brain import autosync
    from brain.config import resolve_vault
    from brain.errors import BrainError

    try:
        vault = resolve_vault(vault_option)
    except BrainError as exc:
        if vault_option:
            log_error(exc)  # a --vault that is wrong is a mistake to find in the log, not silence
        return  # no vault on this machine: nothing to send
    with contextlib.suppress(OSError):
        autosync.background(vault, "send")  # write down what the session changed, and send it
    from brain.commands import tend

    tend.background(vault)  # the daily sweep: at most once a day, detached, quiet


def log_error(exc: BaseException) -> None:
    """A line in the state dir's logs/settle.log: the hook itself never fails."""
    from brain.crash import log_line

    log_line("settle", exc)
