"""The presenter layer: the one place that turns a command's result into output.

A command (brain/commands/*) returns a frozen dataclass and never prints. Its presenter, a module
of this package, turns the result into text for a person, terse lines for an agent, or the JSON
object, and names the usage-log row the answer makes; the CLI (brain.app, brain.cli) and the MCP
server (brain.mcp_server) both call the command and then the presenter, so their answers cannot
drift. `data` is the one JSON builder: a result's fields in their declared order (the order is
part of the contract: README, tests/test_contract.py).

This module and the presenters of the hot commands (find, prime, pack) import only the standard
library at module level: `brain find` starts in tens of milliseconds.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

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


def dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def json_text(result: Any) -> str:
    """A result as its JSON object, on one line."""
    return dumps(data(result))


def error_json(message: str) -> str:
    return dumps({"error": message})


def out(text: str) -> int:
    """Write to stdout; return the bytes written, which the usage log records."""
    data = text if text.endswith("\n") or not text else text + "\n"
    sys.stdout.write(data)
    sys.stdout.flush()
    return size(text)


def size(text: str) -> int:
    """The bytes `out(text)` writes (with its closing newline), as cli.main set stdout to."""
    data = text if text.endswith("\n") or not text else text + "\n"
    return len(data.encode("utf-8", "backslashreplace"))


def err(text: str) -> None:
    """A line (or lines) for a person on stderr."""
    if text:
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


@dataclasses.dataclass(frozen=True)
class Answer:
    """What a command says: `text` for stdout (with no closing newline; "" for nothing), a `note`
    for a person on stderr, the exit code, and the usage-log row the answer makes."""

    text: str = ""
    note: str = ""
    code: int = 0
    lookup: Lookup | None = None


def emit(answer: Answer) -> int:
    """Write `answer` (stdout, then the note on stderr), log it; return its exit code."""
    written = out(answer.text) if answer.text else 0
    err(answer.note)
    record(answer.lookup, written)
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
    """`text` cut to `limit` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


ECHO_CHARS = 200  # of a query an answer echoes: a pasted log is searched, not printed back


def echoed(query: str) -> str:
    """`query` as an answer echoes it: any credential in it masked (before the cut, so a cut
    cannot hide one from the mask), then cut at ECHO_CHARS characters. A whole pasted log used to
    come back in find's JSON, which then could not fit its byte budget and failed."""
    return clip(mask_secrets(query), ECHO_CHARS)


def rich_text(markup: str) -> str:
    """Rich markup rendered as a person's terminal shows it (colours, bold)."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    with console.capture() as cap:
        console.print(markup)
    return cap.get()


def print_rich(markup: str) -> int:
    return out(rich_text(markup))


def noun(n: int, word: str, many: str = "") -> str:
    """`word` for a count of `n`: as given for one, else `many` (default: `word` + "s")."""
    return word if n == 1 else many or word + "s"


def plural(n: int, word: str, many: str = "") -> str:
    """`1 file`, `2 files`: every count brain prints agrees with its noun."""
    return f"{n} {noun(n, word, many)}"
