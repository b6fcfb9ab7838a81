"""The one place that turns results into output: lines for agents, a listing for people, JSON.

JSON key order is the dataclass or dict order below and is part of the contract (README, tests).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from brain.errors import UsageError
from brain.files import printable

if TYPE_CHECKING:
    from brain.commands.sync import SyncStatus
    from brain.search import Hit  # annotations only: `brain pack` never loads the ranking

T = TypeVar("T")
PROSE_CHARS = 280  # a paragraph is shown by its start; `--raw` or the file has the rest


def out(text: str) -> int:
    """Write to stdout; return the bytes written, which the usage log records."""
    data = text if text.endswith("\n") or not text else text + "\n"
    sys.stdout.write(data)
    sys.stdout.flush()
    return len(data.encode("utf-8", "backslashreplace"))  # as cli.main set stdout to write it


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False)


def doc(obj: Any) -> dict[str, Any]:
    """A result dataclass as a JSON object: its fields, in their declared order."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def error_json(message: str) -> str:
    return dumps({"error": message})


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
    if unreviewed(hit):
        parts.append(UNREVIEWED)
    return " — ".join(parts)


def raw_line(hit: Hit) -> str:
    marks = [m for m in (older(hit), UNREVIEWED if unreviewed(hit) else "") if m]
    mark = f" ({'; '.join(marks)})" if marks else ""
    return f"{locator(hit)}{mark}: {hit.raw}"


def hit_json(hit: Hit) -> dict[str, Any]:
    """A hit as JSON; what a paragraph does not have (a handle, a date...) is null."""
    return {
        "path": hit.path,
        "line": hit.line,
        "kind": hit.kind,
        "handle": hit.handle or None,
        "aliases": list(hit.aliases),
        "text": hit.text,
        "section": hit.section or None,
        "source": hit.source or None,
        "date": hit.date or None,
        "score": hit.score,
        "match": list(hit.match),
        "superseded_by": hit.superseded_by or None,
        "unreviewed": unreviewed(hit),
    }


def find_json(query: str, hits: Sequence[Hit], budget: int) -> tuple[str, int]:
    docs = [hit_json(h) for h in hits]
    # the envelope and the closing newline count against the budget too (counts at their widest)
    n = len(docs)
    envelope = len(dumps({"query": query, "count": n, "omitted": n, "hits": []}).encode()) + 1
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
    return dumps({"query": query, "count": len(kept), "omitted": omitted, "hits": kept}), omitted


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


def find_lines(hits: Sequence[Hit], budget: int, *, raw: bool) -> tuple[str, int]:
    lines = [raw_line(h) if raw else hit_line(h) for h in hits]
    kept, omitted = fit(lines, lambda s: len(s.encode("utf-8")) + 1, budget)
    if not kept and lines and budget >= 5:  # the best hit alone is too long: cut it to fit
        kept, omitted = [_clip_bytes(lines[0], budget)], len(lines) - 1
    return "\n".join(kept), omitted


def _clip_bytes(text: str, budget: int) -> str:
    """`text` cut to fit `budget` bytes with its ellipsis (3 bytes) and newline."""
    data = text.encode("utf-8")[: budget - 4]
    return data.decode("utf-8", errors="ignore") + "…"


def find_listing(query: str, hits: Sequence[Hit], budget: int) -> tuple[str, int]:
    """A readable listing for a person at a terminal (rich markup, rendered by the caller)."""
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
        if unreviewed(h):
            head += f"  [red]{UNREVIEWED}[/red]"
        body = h.text if h.kind == "bullet" else clip(h.text, PROSE_CHARS * 2)
        blocks.append(f"{head}\n  {escape(body)}")
    footer = f"[dim]{len(kept)} of {plural(len(hits), 'hit')} for {escape(query)!s}"
    if omitted:
        footer += f"; {omitted} more over the budget (raise --budget)"
    blocks.append(footer + "[/dim]")
    return "\n".join(blocks), omitted


def print_rich(markup: str) -> int:
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    with console.capture() as cap:
        console.print(markup)
    return out(cap.get())


def noun(n: int, word: str, many: str = "") -> str:
    """`word` for a count of `n`: as given for one, else `many` (default: `word` + "s")."""
    return word if n == 1 else many or word + "s"


def plural(n: int, word: str, many: str = "") -> str:
    """`1 file`, `2 files`: every count brain prints agrees with its noun."""
    return f"{n} {noun(n, word, many)}"


def sync_status(s: SyncStatus) -> str:
    """`brain sync status` for a person: on or off, the remote, what waits on either side."""
    state = "on" if s.sync == "on" else f"off ({s.why})"
    lines = [f"Sync: {state}"]
    if s.remote:
        lines.append(f"Remote: {s.remote} {s.url} (branch {s.branch})")
    else:
        lines.append("Remote: not connected (`brain sync connect URL`)")
    lines.append(f"Here: {s.changes} changed files not written down, {s.ahead} commits not sent")
    if s.remote:
        when = f"as of the fetch at {s.fetched_at}" if s.fetched_at else "never fetched"
        lines.append(f"Remote: {s.behind} commits not received ({when})")
    if s.retry_at:
        lines.append(f"Offline: background passes wait until {s.retry_at}")
    if s.last_summary:
        lines.append(f"Last pass ({s.last_at}): {s.last_summary}")
    return "\n".join(lines)


PRIME_HEADER = (
    "From brain, the user's memory vault: what it holds on this prompt"
    ' (more: `brain find "WORDS"`)'
)
PRIME_HINT = (
    "brain: the user's memory vault has nothing on this prompt; `brain find WORDS` searches it,"
    " `brain recall WORDS` searches past sessions"
)


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


def prime_json(result: Any, session: str, text: str, shown: int) -> str:
    """`brain prime --json`: the result, with the hits `text` holds and `text` itself."""
    hits = result.hits[:shown]
    doc = {
        "query": result.query or None,
        "mode": result.mode or None,
        "session": session or None,
        "count": len(hits),
        "omitted": len(result.hits) - len(hits),
        "repeated": result.repeated,
        "hint": result.hint and not hits and bool(text),
        "tokens": (len(text.encode("utf-8")) + 3) // 4 if text else 0,
        "hits": [hit_json(h) for h in hits],
        "text": text,
    }
    return dumps(doc)
