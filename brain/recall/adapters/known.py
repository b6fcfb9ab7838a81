"""The adapters brain knows, by name (a module of its own: each adapter imports the package's
helpers, so the package cannot import the adapters back)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brain.recall.adapters import Adapter


def registry() -> dict[str, Adapter]:
    # only when transcripts are read
    from brain.recall.adapters import claude, codex, copilot, gemini, opencode, pi

    adapters: list[Adapter] = [
        claude.Claude(),
        codex.Codex(),
        gemini.Gemini(),
        copilot.Copilot(),
        opencode.OpenCode(),
        pi.Pi(),
    ]
    return {a.name: a for a in adapters}
