"""The presenter of `brain pack`: the briefing as text, as JSON, or in the form a session-start
hook hands context to its agent program. On the hot path: standard library only."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from brain.crash import hook_run
from brain.present import Answer, Lookup, echoed, json_text

if TYPE_CHECKING:
    from brain.caller import Caller
    from brain.commands.pack import PackResult
    from brain.hook_event import Event


def hook_text(text: str, harness: str = "claude") -> str:
    """The form in which each agent program reads context a session-start hook adds (Claude
    Code's "SessionStart decision control", which Codex CLI, Gemini CLI and VS Code read too)."""
    from brain.hook_event import context_for
    from brain.present import dumps

    return dumps(context_for(harness, "SessionStart", text))


def pack(
    result: PackResult,
    who: Caller,
    vault: Path,
    asked: str,
    *,
    as_json: bool = False,
    hook: Event | None = None,
) -> Answer:
    """The pack of the project `asked` for: for the hook, as JSON, or as text; logged with what
    the caller (`who`: for a hook, the program that sent it) received."""
    if hook is not None:
        text = hook_text(result.text, hook.harness) if result.text else ""
    elif as_json:
        text = json_text(result)
    else:
        text = result.text
    note = ""
    if not text and who.person and hook is None:
        note = f"brain: not even the first line of the pack of {echoed(asked)!r} fits --budget"
    session = hook.session if hook is not None and hook.session else who.session
    given = (*result.bullets, *result.rules) if text else ()
    from brain.usage import unit_key

    units = tuple(unit_key(b.path, b.line, b.handle) for b in given)
    lookup = Lookup("pack", who.name, session, asked, len(given), vault, units)
    trace = ""
    if hook is not None:
        what = f"served {asked or 'the working rules'}" if text else "nothing fits the budget"
        trace = hook_run("pack", hook.harness, session, what)
    return Answer(text, note, 0, lookup, trace)
