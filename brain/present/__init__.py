"""The presenter layer: the one place that turns a command's result into output.

A command (brain/commands/*) returns a frozen dataclass and never prints. Its presenter, a module
of this package, turns the result into text for a person, terse lines for an agent, or the JSON
object, and names the usage-log row the answer makes; the CLI (brain.app, brain.cli) and the MCP
server (brain.mcp_server) both call the command and then the presenter, so their answers cannot
drift. `data` is the one JSON builder: a result's fields in their declared order (the order is
part of the contract: docs/json.md, tests/test_contract.py).

Everything brain lets out passes one output step here, so a command added later is covered
without calling anything: `out` and `err` write text `sanitized` (brain.text: credentials masked,
control and bidi characters escaped, lines kept), `dumps` builds every JSON text with each string
value masked and no raw control or bidi character in it (a `\\u` escape: the data is kept
exactly), `render` gives rich every string sanitized before it lays out a table, and the MCP
server (brain.mcp_server) passes a tool's text and structure through `sanitized` and `scrubbed`.
Text that has passed (`Sanitized`) is not filtered twice.

This module and the presenters of the hot commands (find, prime, pack) import only the standard
library at module level: `brain find` starts in tens of milliseconds.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from brain import text as textmod
from brain.text import mask_secrets

T = TypeVar("T")


def json_fields(value: Any) -> list[dataclasses.Field[Any]]:
    """A dataclass's fields that are JSON keys: all of them, in order, but one marked
    `metadata={"json": False}` (a value kept for the text listing, such as recall's short id)."""
    return [f for f in dataclasses.fields(value) if f.metadata.get("json", True)]


def data(value: Any) -> Any:
    """`value` as JSON data: a dataclass as an object of its fields (`json_fields`) in their
    declared order, tuples and lists as lists, recursively; anything else as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: data(getattr(value, f.name)) for f in json_fields(value)}
    if isinstance(value, list | tuple):
        return [data(v) for v in value]
    if isinstance(value, dict):
        return {k: data(v) for k, v in value.items()}
    return value


class Sanitized(str):
    """Text that has passed the output step: `out` writes it as it is. What is made of it by
    concatenation or slicing is a plain str again, and passes again."""

    __slots__ = ()


def sanitized(text: str) -> Sanitized:
    """`text` through the output step (brain.text.sanitized), once."""
    return text if isinstance(text, Sanitized) else Sanitized(textmod.sanitized(text))


def with_own_url(text: str, url: str) -> Sanitized:
    """`text` through the output step, then `url` as it is: a URL brain made itself whose token
    the person needs whole (the desk's), which the step would mask as a credential."""
    return Sanitized(sanitized(text) + url)


def scrubbed(doc: Any) -> Any:
    """JSON data with every string value masked (brain.text.mask_secrets; keys are the program's
    own names and stay): what `dumps` writes and an MCP tool returns as its structure."""
    if isinstance(doc, str):
        return mask_secrets(doc)
    if isinstance(doc, list | tuple):
        return [scrubbed(v) for v in doc]
    if isinstance(doc, dict):
        return {k: scrubbed(v) for k, v in doc.items()}
    return doc


# What json.dumps (ensure_ascii=False) leaves raw that a terminal acts on: DEL and C1 controls, the
# bidi controls, the line and paragraph separators, lone surrogates. In JSON text they can stand
# only inside a string, where `\\u202e` is the same character to every reader.
_JSON_UNSHOWN = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def dumps(doc: Any) -> str:
    """`doc` as one line of JSON through the output step (a `Sanitized`): credentials masked in
    every string value (the walk only when the text holds a credential hint), no raw control or
    bidi character (escaped as JSON escapes them, so the data is kept exactly)."""
    text = json.dumps(doc, ensure_ascii=False)
    if textmod.has_hint(text):
        text = json.dumps(scrubbed(doc), ensure_ascii=False)
    return Sanitized(_JSON_UNSHOWN.sub(_json_escape, text))


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m[0]):04x}"


def json_text(result: Any) -> str:
    """A result as its JSON object, on one line."""
    return dumps(data(result))


def error_json(message: str) -> str:
    return dumps({"error": message})


def out(text: str) -> int:
    """Write `text` to stdout through the output step (`sanitized`); return the bytes written,
    which the usage log records."""
    text = sanitized(text)
    data = text if text.endswith("\n") or not text else text + "\n"
    sys.stdout.write(data)
    sys.stdout.flush()
    return size(text)


def size(text: str) -> int:
    """The bytes `out(text)` writes (with its closing newline), as cli.main set stdout to."""
    text = sanitized(text)
    data = text if text.endswith("\n") or not text else text + "\n"
    return len(data.encode("utf-8", "backslashreplace"))


def err(text: str) -> None:
    """A line (or lines) for a person on stderr, through the output step (`sanitized`)."""
    if text:
        text = sanitized(text)
        sys.stderr.write(text if text.endswith("\n") else text + "\n")


@dataclasses.dataclass(frozen=True)
class Lookup:
    """The usage-log row an answer makes: who asked what, and the units they received
    (`brain.usage.unit_key`s). Its byte count is the answer's size, known once it is written."""

    command: str
    caller: str
    session: str
    query: str
    count: int
    vault: Path
    units: tuple[str, ...] = ()
    # how sure the answer was (brain.search.answer: strong, weak, none); "" where nothing judges
    evidence: str = ""


@dataclasses.dataclass(frozen=True)
class Answer:
    """What a command says: `text` for stdout (with no closing newline; "" for nothing), a `note`
    for a person on stderr, the exit code, and the usage-log row the answer makes."""

    text: str = ""
    note: str = ""
    code: int = 0
    lookup: Lookup | None = None
    # a hook's run as the hooks' log keeps it (what it served, or why nothing), "" by hand
    trace: str = ""


def emit(answer: Answer) -> int:
    """Write `answer` (stdout, then the note on stderr), log it; return its exit code."""
    written = out(answer.text) if answer.text else 0
    err(answer.note)
    record(answer.lookup, written)
    if answer.trace:
        from brain.crash import HOOKS_LOG, log_text

        log_text(HOOKS_LOG, f"{answer.trace}; {written} bytes to the agent")
    return answer.code


def record(lookup: Lookup | None, written: int) -> None:
    """The one place a presented answer reaches the usage log (CLI and MCP alike)."""
    if lookup is None:
        return
    from brain import usage

    usage.record(
        lookup.command,
        lookup.caller,
        lookup.session,
        lookup.query,
        lookup.count,
        written,
        lookup.vault,
        lookup.units,
        lookup.evidence,
    )


def fit(items: Sequence[T], size: Callable[[T], int], budget: int) -> tuple[list[T], int]:
    """The leading items whose sizes add up to at most `budget` (none when the first is bigger:
    a budget is never exceeded)."""
    kept: list[T] = []
    used = 0
    for item in items:
        cost = size(item)
        if used + cost > budget:
            break
        kept.append(item)
        used += cost
    return kept, len(items) - len(kept)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis marking the cut, masked before the cut
    (brain.text.cut)."""
    return textmod.cut(text, limit)


ECHO_CHARS = 200  # of a query an answer echoes: a pasted log is searched, not printed back


def echoed(query: str) -> str:
    """`query` as an answer echoes it: any credential in it masked (before the cut, so a cut
    cannot hide one from the mask), then cut at ECHO_CHARS characters. A whole pasted log used to
    come back in find's JSON, which then could not fit its byte budget and failed."""
    return clip(mask_secrets(query), ECHO_CHARS)


# The escape sequences rich adds for colour and bold (SGR); any other is escaped after rendering.
_SGR = re.compile(r"(\x1b\[[0-9;]*m)")

# `brain --color auto|always|never` of the command being run (brain.cli sets it around the
# command and clears it after: a worker runs many commands in one process).
COLOR_GIVEN: list[str] = []


def colour_choice() -> str:
    """`auto`, `always` or `never`: `--color`, else BRAIN_COLOR, else `auto`."""
    from brain.settings import current

    return COLOR_GIVEN[0] if COLOR_GIVEN else current().color


def colour() -> bool:
    """Whether what brain writes for a person carries colour and bold (`colour_choice`); in
    `auto`, not when NO_COLOR is set and not empty (https://no-color.org: a command-line flag
    or brain's own setting overrides it), not when an agent runs brain (its variables,
    brain.caller) or stdout is not a terminal; rich then leaves TERM=dumb plain."""
    from brain.settings import current

    choice = colour_choice()
    if choice != "auto":
        return choice == "always"
    if current().env.get("NO_COLOR", ""):
        return False
    from brain import caller

    return caller.detect().person


def colour_options() -> dict[str, Any]:
    """A rich Console's options that colour as `colour()` says, whatever rich would detect:
    forced for `always` (through NO_COLOR, a pipe and TERM=dumb), none at all when off."""
    if not colour():
        return {"color_system": None, "no_color": True}
    system = "standard" if colour_choice() == "always" else "auto"
    return {"force_terminal": True, "color_system": system, "no_color": False}


def render(*renderables: Any) -> Sanitized:
    """Rich markup and renderables (tables) as a person's terminal shows them (colours, bold).
    Every string rich is given (markup, a table's cells) passes the output step before rich
    parses it, so a credential is masked before a narrow column folds it over two lines; in what
    comes out, rich's colour sequences are the only escapes left raw."""
    from rich.console import Console

    class Filtered(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(textmod.sanitized(text), **kwargs)

    console = Filtered(highlight=False, soft_wrap=False, **colour_options())
    with console.capture() as cap:
        for r in renderables:
            console.print(r)
    parts = _SGR.split(cap.get())
    return Sanitized("".join(p if i % 2 else textmod.visible(p) for i, p in enumerate(parts)))


def rich_text(markup: str) -> Sanitized:
    """Rich markup rendered as a person's terminal shows it (`render`)."""
    return render(markup)
