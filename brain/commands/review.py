"""`brain review before|after`: when a proposal starts answering finds.

`before` (the default): a proposal answers nothing until a person approves it. `after`: it
answers at once, marked unreviewed in every output (`unreviewed` in find's JSON, the word
`unreviewed` in its lines), until it is approved or dropped. The mode is a line of the vault's
AI/config.yaml (`review: after`), committed, so every machine that shares the vault agrees;
BRAIN_REVIEW overrides it on one machine (brain.config.review_mode). With `proposals: team` a
proposal is a branch of the shared remote, which no index reads: it answers once approved, in
either mode, and the mode's line says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from brain.config import (
    REVIEW_MODES,
    VAULT_CONFIG,
    proposals_mode,
    review_mode,
    review_override,
    vault_review_mode,
)
from brain.errors import UsageError

_LINE = re.compile(r"^review\s*:.*$", re.MULTILINE)
_HEAD = "# brain's settings for this vault, shared by every machine (`brain review`).\n"


@dataclass(frozen=True)
class ReviewResult:
    vault: str
    mode: str  # before | after
    mode_changed: bool
    path: str  # AI/config.yaml
    unreviewed_count: int  # proposals answering finds now (0 in mode before)
    set_by: str  # AI/config.yaml, or BRAIN_REVIEW when this machine's environment overrides it
    proposals_mode: (
        str  # local (AI/INBOX.md) or team (branches of the shared remote: never answering)
    )


def review(vault: Path, mode: str | None = None) -> ReviewResult:
    """Show the mode, or set it (a line edit of AI/config.yaml) and bring the index along."""
    from brain import index
    from brain.edits import locked, read, write

    if mode is not None and mode not in REVIEW_MODES:
        raise UsageError(f"unknown review mode {mode!r}", "use `brain review before` or `after`")
    changed = False
    if mode is not None and mode != vault_review_mode(vault):
        with locked(vault):
            current = read(vault, VAULT_CONFIG)
            line = f"review: {mode}"
            if _LINE.search(current):
                text = _LINE.sub(line, current, count=1)
            else:
                text = (current or _HEAD).rstrip("\n") + f"\n{line}\n"
            write(vault, VAULT_CONFIG, text, was=current)
        changed = True
    index.sync(vault)
    now = review_mode(vault)
    count = 0
    if now == "after":
        conn = index.connect(vault)
        try:
            row = conn.execute("SELECT count(*) FROM units WHERE path = 'AI/INBOX.md'").fetchone()
            count = int(row[0])
        finally:
            conn.close()
    by = "BRAIN_REVIEW" if review_override() else VAULT_CONFIG
    return ReviewResult(str(vault), now, changed, VAULT_CONFIG, count, by, proposals_mode(vault))
