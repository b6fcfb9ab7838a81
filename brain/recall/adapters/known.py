"""The adapters brain knows, by name (a module of its own: each adapter imports the package's
helpers, so the package cannot import the adapters back)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brain.recall.adapters import Adapter


def registry() -> dict[str, Adapter]:
    from brain.recall.adapters import claude, codex, gemini  # only when transcripts are read

    adapters: list[Adapter] = [claude.Claude(), codex.Codex(), gemini.Gemini()]
    return {a.name: a for a in adapters}
