"""The front door holds together: every relative link in README.md and docs/*.md names a file
that exists, and every `#anchor` a heading that GitHub renders with that id."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")  # [text](target); an image's too, below
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and code spans, where a `](` is no link."""
    kept, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(re.sub(r"``.+?``|`[^`]*`", "", line))
    return "\n".join(kept)


def slug(heading: str) -> str:
    """GitHub's id for a heading (github/cmark-gfm's anchor filter, as github.com applies it):
    lower-cased, markup and punctuation other than `-` and `_` dropped, each space a `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's id in `path`, a repeated one suffixed -1, -2 as GitHub numbers them."""
    seen: dict[str, int] = {}
    ids = set()
    for line in prose_with_headings(path.read_text(encoding="utf-8")):
        base = slug(line.lstrip("#"))
        n = seen.get(base, 0)
        seen[base] = n + 1
        ids.add(base if n == 0 else f"{base}-{n}")
    return ids


def prose_with_headings(text: str) -> list[str]:
    """The ATX headings outside fenced code (their code spans kept: they are part of the id)."""
    heads, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            heads.append(line)
    return heads


def links() -> list[tuple[Path, str]]:
    found = []
    for doc in DOCS:
        for target in LINK.findall(prose(doc.read_text(encoding="utf-8"))):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto:: not ours to check
                found.append((doc, target))
    return found


def test_the_docs_have_relative_links_to_check() -> None:
    assert len(links()) > 10  # the walk below reads links at all


@pytest.mark.parametrize(("doc", "target"), links(), ids=[f"{d.name}->{t}" for d, t in links()])
def test_every_relative_link_and_anchor_resolves(doc: Path, target: str) -> None:
    file_part, _, anchor = target.partition("#")
    dest = (doc.parent / file_part).resolve() if file_part else doc
    assert dest.exists(), f"{doc.relative_to(ROOT)}: {target} names no file"
    if anchor:
        assert dest.suffix == ".md", f"{doc.relative_to(ROOT)}: {target}: an anchor in no Markdown"
        assert anchor in anchors(dest), (
            f"{doc.relative_to(ROOT)}: {target}: no heading in {dest.name} has the id #{anchor}"
        )


def test_slug_follows_github() -> None:
    assert slug(" `brain propose` and `brain inbox`") == "brain-propose-and-brain-inbox"
    assert slug(" JSON, exit codes, bytes") == "json-exit-codes-bytes"
    assert slug(" Facts that know when their code moved") == "facts-that-know-when-their-code-moved"
