"""The presenter of vault hits: `brain find` and `brain prime` (lines for agents, a listing for
people, JSON), within a byte budget. On the hot path: standard library only at module level."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brain.caller import MCP_CALLER
from brain.crash import hook_run
from brain.drift import Drift  # light (standard library); the MCP schema reads HitDoc's fields
from brain.errors import UsageError
from brain.present import Answer, Lookup, clip, data, dumps, echoed, fit, rich_text
from brain.text import plural, printable
from brain.vocab import SEP, tokens

if TYPE_CHECKING:
    from brain.caller import Caller
    from brain.commands.find import FindResult
    from brain.commands.prime import PrimeResult
    from brain.search import Hit  # annotations only: `brain pack` never loads the ranking

PROSE_CHARS = 280  # a paragraph is shown by its start; `--raw` or the file has the rest


def locator(hit: Hit) -> str:
    """`path:line`, the path escaped: a file name cannot forge a line or reorder one."""
    return f"{printable(hit.path)}:{hit.line}"


def older(hit: Hit) -> str:
    """The marker of a note's paragraph that a newer bullet says otherwise than."""
    return f"older than **{hit.superseded_by}**" if hit.superseded_by else ""


UNREVIEWED = "unreviewed"


def unreviewed(hit: Hit) -> bool:
    """A proposal still in the inbox, answering finds in review mode `after`."""
    return hit.path == "AI/INBOX.md"


def hit_line(hit: Hit) -> str:
    """One terse line: locator, handle (or breadcrumb), fact, date, and `older than **handle**`
    when a newer bullet corrects it."""
    name = hit.handle or hit.section
    # a fenced code unit keeps its newlines in `text`; the terse form is one line per hit
    text = hit.text if hit.kind == "bullet" else clip(" ".join(hit.text.split()), PROSE_CHARS)
    parts = [f"{locator(hit)} {name}" if name else locator(hit), text]
    if hit.date:
        parts.append(hit.date)
    if hit.superseded_by:
        parts.append(older(hit))
    if hit.code_changed:
        parts.append(hit.code_changed.line())
    if unreviewed(hit):
        parts.append(UNREVIEWED)
    return SEP.join(parts)


def raw_line(hit: Hit) -> str:
    moved = hit.code_changed.line() if hit.code_changed else ""
    marks = [m for m in (older(hit), moved, UNREVIEWED if unreviewed(hit) else "") if m]
    mark = f" ({'; '.join(marks)})" if marks else ""
    return f"{locator(hit)}{mark}: {hit.raw}"


@dataclass(frozen=True)
class HitDoc:
    """A hit as `find --json` and `prime --json` give it (docs/json.md); what a paragraph
    does not have (a handle, a date...) is null, and so is `code_changed` when the files it
    names did not change after its date (brain/drift.py)."""

    path: str
    line: int
    kind: str
    handle: str | None
    aliases: tuple[str, ...]
    text: str
    section: str | None
    source: str | None
    date: str | None
    score: float
    match: tuple[str, ...]
    superseded_by: str | None
    unreviewed: bool
    code_changed: Drift | None


def hit_json(hit: Hit) -> dict[str, Any]:
    doc = HitDoc(
        hit.path,
        hit.line,
        hit.kind,
        hit.handle or None,
        hit.aliases,
        hit.text,
        hit.section or None,
        hit.source or None,
        hit.date or None,
        hit.score,
        hit.match,
        hit.superseded_by or None,
        unreviewed(hit),
        hit.code_changed,
    )
    return data(doc)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class FindDoc:
    query: str
    count: int
    omitted: int
    hits: list[dict[str, Any]]
    evidence: str  # strong, weak or none (brain.search.answer)
    cut_count: int  # ranked hits the cut left out (`--all` lists them)


def find_json(result: FindResult, budget: int) -> tuple[str, int]:
    """The JSON answer within `budget` bytes, and how many hits were left out. The query is
    echoed masked and cut (present.echoed), as every listing of queries shows it."""
    query = echoed(result.query)
    hits = result.hits
    docs = [hit_json(h) for h in hits]
    # the envelope and the closing newline count against the budget too (counts at their widest)
    n = len(docs)

    def doc(count: int, omitted: int, kept: list[dict[str, Any]]) -> FindDoc:
        return FindDoc(query, count, omitted, kept, result.evidence, result.cut_count)

    envelope = len(dumps(data(doc(n, n, []))).encode()) + 1
    if envelope > budget:
        raise UsageError(
            f"--budget {budget} cannot hold even an empty JSON answer ({envelope} bytes)",
            "raise --budget",
        )

    def size(d: dict[str, Any]) -> int:
        return len(dumps(d).encode("utf-8")) + 2

    kept, omitted = fit(docs, size, budget - envelope)
    if not kept and docs:  # the best hit alone is too long: its text is cut to fit, as in lines
        room = budget - envelope - size({**docs[0], "text": ""})
        text = _clip_json(docs[0]["text"], room)
        if text:
            kept, omitted = [{**docs[0], "text": text}], n - 1
    return dumps(data(doc(len(kept), omitted, kept))), omitted


def _clip_json(text: str, room: int) -> str:
    """`text` cut (an ellipsis marking the cut) so that it takes at most `room` bytes inside a
    JSON string; "" when not even one character fits."""
    data = text.encode("utf-8")
    keep = room - 3
    while keep > 0:
        cut = data[:keep].decode("utf-8", errors="ignore") + "…"
        over = len(json.dumps(cut, ensure_ascii=False).encode("utf-8")) - 2 - room
        if over <= 0:
            return cut
        keep -= over
    return ""


ALL = "--all lists them"
MCP_ALL = "the limit argument lists them"  # an MCP client's find has no --all


def status(result: FindResult, see: str = ALL) -> str:
    """The line that follows an answer's hits when there is something to say: that it is weak
    (brain.search.answer: nothing stands out), and how many hits the cut left out and how to see
    them (`see`). "" for a strong answer that left nothing out, and for the ranked list
    (--limit, --all), which is cut by nothing."""
    if result.ranked:
        return ""
    more = ""
    if result.cut_count:
        more = f"; {plural(result.cut_count, 'weaker hit')} left out ({see})"
    if result.evidence == "weak":
        return f"brain: weak answer, nothing stands out{more}"
    if result.evidence == "strong":
        return f"brain: strong answer{more}" if more else ""
    return f"brain: nothing stands out{more}" if more else ""


def find_lines(hits: Sequence[Hit], budget: int, *, raw: bool, footer: str = "") -> tuple[str, int]:
    """One line per hit, then the `footer` line (`status`), within `budget` bytes; and how many
    hits were left out. The hits come first: the footer goes when it leaves no room for them."""
    lines = [raw_line(h) if raw else hit_line(h) for h in hits]
    tail = len(footer.encode("utf-8")) + 1 if footer else 0
    if tail and budget - tail < (5 if lines else 0):
        footer, tail = "", 0
    room = budget - tail
    kept, omitted = fit(lines, lambda s: len(s.encode("utf-8")) + 1, room)
    if not kept and lines and room >= 5:  # the best hit alone is too long: cut it to fit
        kept, omitted = [_clip_bytes(lines[0], room)], len(lines) - 1
    if footer:
        kept.append(footer)
    return "\n".join(kept), omitted


def _clip_bytes(text: str, budget: int) -> str:
    """`text` cut to fit `budget` bytes with its ellipsis (3 bytes) and newline."""
    data = text.encode("utf-8")[: budget - 4]
    return data.decode("utf-8", errors="ignore") + "…"


def find_listing(query: str, hits: Sequence[Hit], budget: int, said: str = "") -> tuple[str, int]:
    """A readable listing for a person at a terminal (rich markup, rendered by the caller),
    closed by the line `said` (`status`)."""
    from rich.markup import escape

    kept, omitted = fit(list(hits), lambda h: len(hit_line(h).encode("utf-8")) + 1, budget)
    blocks = []
    for h in kept:
        title = escape(h.handle or h.section or printable(h.path))
        meta = " · ".join(p for p in (h.date, h.source) if p)
        head = f"[bold]{title}[/bold]  [dim]{escape(locator(h))}[/dim]"
        if meta:
            head += f"  [dim]{escape(meta)}[/dim]"
        if h.superseded_by:
            head += f"  [yellow]{escape(older(h))}[/yellow]"
        if h.code_changed:
            head += f"  [yellow]{escape(h.code_changed.line())}[/yellow]"
        if unreviewed(h):
            head += f"  [red]{UNREVIEWED}[/red]"
        body = h.text if h.kind == "bullet" else clip(h.text, PROSE_CHARS * 2)
        blocks.append(f"{head}\n  {escape(body)}")
    asked = escape(printable(echoed(query)))
    footer = f"[dim]{len(kept)} of {plural(len(hits), 'hit')} for {asked}"
    if omitted:
        footer += f"; {omitted} more over the budget (raise --budget)"
    if said:  # on a line of its own, as the agent's, without the name an agent needs
        footer += f"\n{escape(said.removeprefix('brain: '))}"
    blocks.append(footer + "[/dim]")
    return "\n".join(blocks), omitted


PRIME_HEADER = (
    "From brain, the user's memory vault: what it holds on this prompt"
    ' (more: `brain find "WORDS"`)'
)
PRIME_HINT = (
    "brain: the user's memory vault has nothing on this prompt; `brain find WORDS` searches it,"
    " `brain recall WORDS` searches past sessions"
)


# The agent programs whose hooks must answer JSON (Claude Code and Codex CLI add a prompt hook's
# plain stdout to the context as it is; Gemini CLI parses stdout as JSON and fails on text).
JSON_ONLY = frozenset({"gemini"})


def prime_text(hits: Sequence[Hit], budget: int, *, hint: bool) -> tuple[str, int]:
    """What `brain prime` prints (the header, then one terse line per hit) within `budget`
    bytes, and how many hits it holds; the hint line instead when there are no hits and `hint`.
    Nothing at all when not even the header and the best hit fit."""
    if not hits:
        text = PRIME_HINT if hint else ""
        return (text, 0) if len(text.encode("utf-8")) + 1 <= budget else ("", 0)
    room = budget - len(PRIME_HEADER.encode("utf-8")) - 1
    lines = [hit_line(h) for h in hits]
    kept, _ = fit(lines, lambda s: len(s.encode("utf-8")) + 1, room)
    if not kept and room >= 40:  # the best hit alone is too long: cut it to fit
        kept = [_clip_bytes(lines[0], room)]
    if not kept:
        return "", 0
    return "\n".join([PRIME_HEADER, *kept]), len(kept)


@dataclass(frozen=True)
class PrimeDoc:
    """`brain prime --json`: the result, with the hits `text` holds and `text` itself."""

    query: str | None
    mode: str | None
    session: str | None
    count: int
    omitted: int
    repeated: int
    hint: bool
    tokens: int
    hits: list[dict[str, Any]]
    text: str


def prime_json(result: PrimeResult, session: str, text: str, shown: int) -> str:
    hits = result.hits[:shown]
    doc = PrimeDoc(
        query=result.query or None,
        mode=result.mode or None,
        session=session or None,
        count=len(hits),
        omitted=len(result.hits) - len(hits),
        repeated=result.repeated,
        hint=result.hint and not hits and bool(text),
        tokens=tokens(len(text.encode("utf-8"))),
        hits=[hit_json(h) for h in hits],
        text=text,
    )
    return dumps(data(doc))


def units(hits: Sequence[Hit]) -> tuple[str, ...]:
    """The usage log's keys of the hits an answer holds."""
    from brain.usage import unit_key

    return tuple(unit_key(h.path, h.line, h.handle) for h in hits)


def find(
    result: FindResult,
    who: Caller,
    vault: Path,
    *,
    budget: int,
    raw: bool = False,
    terse: bool = False,
    as_json: bool = False,
) -> Answer:
    """`brain find`: JSON, terse lines (agents, `--terse`, `--raw` lines as written) or a listing
    for a person, within `budget` bytes; exit 1 when nothing matches, as grep does."""
    text, note, omitted = "", "", 0
    said = status(result, MCP_ALL if who.name.startswith(MCP_CALLER) else ALL)
    if as_json:
        text, omitted = find_json(result, budget)
    elif not result.hits:
        asked = echoed(result.query)
        if who.person and result.cut_count:  # weaker hits were left out: how to see them
            weaker = plural(result.cut_count, "weaker hit")
            note = f"nothing in the vault stands out for {asked!r}; {weaker} ({ALL})"
        elif who.person:
            note = f"nothing in the vault matches {asked!r}"
        elif said and not raw:
            text, _ = find_lines((), budget, raw=raw, footer=said)
    elif raw or terse or who.agent:  # --raw: the lines as written, nothing else
        text, omitted = find_lines(result.hits, budget, raw=raw, footer="" if raw else said)
    else:
        markup, omitted = find_listing(result.query, result.hits, budget, said)
        text = rich_text(markup)
    shown = result.hits[: len(result.hits) - omitted]  # what the caller actually received
    lookup = Lookup(
        "find",
        who.name,
        who.session,
        result.query,
        len(shown),
        vault,
        units(shown),
        result.evidence,
    )
    return Answer(text, note, 0 if result.hits else 1, lookup)


def prime(
    result: PrimeResult,
    caller: str,
    session: str,
    vault: Path,
    budget: int,
    *,
    as_json: bool = False,
    person: bool = False,
    hook: tuple[str, str] | None = None,
) -> Answer:
    """`brain prime`: the header and a line per hit within `budget` bytes (or the JSON object);
    logged only when something is said, the hint as `usage.HINT_QUERY`. `hook` is the (harness,
    event name) of a hook event on stdin: a program that reads only JSON from its hooks (Gemini
    CLI: plain text on its stdout is an error) gets the context in its hook form, as pack's."""
    from brain.usage import HINT_QUERY

    body, shown = prime_text(result.hits, budget, hint=result.hint)
    text = prime_json(result, session, body, shown) if as_json else body
    if hook is not None and hook[0] in JSON_ONLY and body and not as_json:
        from brain.hook_event import context_for

        text = dumps(context_for(hook[0], hook[1], body))
    lookup = None
    if body:
        query = result.query if shown else HINT_QUERY
        given = units(result.hits[:shown])
        lookup = Lookup("prime", caller, session, query, shown, vault, given)
    quiet = body or as_json or not person
    note = "" if quiet else "brain: nothing in the vault stands out for this prompt"
    trace = hook_run("prime", hook[0], session, _served(result, shown, body)) if hook else ""
    return Answer(text, note, 0, lookup, trace)


def _served(result: PrimeResult, shown: int, body: str) -> str:
    """What a prime served, or why nothing, as the hooks' log says it."""
    how = f" ({result.mode})" if result.mode else ""
    if shown:
        return f"served {plural(shown, 'unit')}{how}"
    if body:
        return "served the line on `brain find` and `brain recall` (nothing stood out)"
    if result.hits:
        return "nothing: not even the best unit fits the budget"
    if not result.query:
        return "nothing: no words in the prompt worth searching"
    if result.repeated:
        return f"nothing new: {plural(result.repeated, 'unit')} that stood out served earlier"
    return f"nothing stood out{how}"
