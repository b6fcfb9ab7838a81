"""Output of `brain recall`: terse lines, and the JSON objects (key order is the contract)."""

from __future__ import annotations

from typing import Any

from brain.recall.search import Hit
from brain.render import clip

TITLE_CHARS = 32


def hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "session": hit.session,
        "title": hit.title,
        "role": hit.role,
        "ts": hit.ts,
        "cwd": hit.cwd,
        "snippet": hit.snippet,
        "score": hit.score,
        "agent": hit.agent,
    }


def hit_line(hit: Hit) -> str:
    """`id date role [title] snippet`: the id's shortest unique start, which --full takes."""
    title = f" [{clip(hit.title, TITLE_CHARS)}]" if hit.title else ""
    return f"{hit.short or hit.id} {hit.ts[:10]} {hit.role}{title} {hit.snippet}"
