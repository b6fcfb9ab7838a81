"""Output of `brain recall`: terse lines, and the JSON objects (key order is the contract).

Transcripts are what was said, credentials pasted into a chat included: every text shown here goes
through `brain.secrets.redact` first, as the vault's units do when they are indexed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from brain.recall.search import Hit
from brain.render import clip

if TYPE_CHECKING:
    from brain.commands.recall import FullTurn

TITLE_CHARS = 32


def masked(hit: Hit) -> Hit:
    """The hit with credentials in its title and snippet masked (the snippet is an excerpt, cut
    at `…`: a secret cut in two is masked too)."""
    from brain.secrets import redact

    return dataclasses.replace(
        hit, title=redact(hit.title), snippet=redact(hit.snippet, clipped=True)
    )


def masked_turn(turn: FullTurn) -> FullTurn:
    from brain.secrets import redact

    return dataclasses.replace(turn, title=redact(turn.title), body=redact(turn.body))


def hit_json(hit: Hit) -> dict[str, Any]:
    hit = masked(hit)
    return {
        "id": hit.id,
        "session": hit.session,
        "title": hit.title,
        "role": hit.role,
        "at": hit.at,
        "cwd": hit.cwd,
        "snippet": hit.snippet,
        "score": hit.score,
        "agent": hit.agent,
    }


def hit_line(hit: Hit) -> str:
    """`id date role [title] snippet`: the id's shortest unique start, which --full takes."""
    hit = masked(hit)
    title = f" [{clip(hit.title, TITLE_CHARS)}]" if hit.title else ""
    return f"{hit.short or hit.id} {hit.at[:10]} {hit.role}{title} {hit.snippet}"
