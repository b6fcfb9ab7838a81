"""`brain locate HANDLE`: where a bullet lives (`path:line`) and its line as written.

The handle or any alias matches by its handle key (brain.vocab: case, diacritics and what stands
between words do not count: `odeme durumu` finds `Ödeme durumu`, `foo bar` finds `foo-bar`). A
prefix `M#`, `L#` or `T#` (MEMORY, LEARNINGS, TUNINGS) narrows it to one file, the way bullets
are cited (`M#blue green deploys`). No match is an empty `matches` and exit 1, as for find
and recall. With no handle, `where` says which folder the vault is (the paths above start there)
and what named it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from brain import index
from brain.errors import BrainError, UsageError
from brain.vocab import handle_key, split_aliases

FILE_PREFIX = {"M": "AI/MEMORY.md", "L": "AI/LEARNINGS.md", "T": "AI/TUNINGS.md"}
_PREFIX = re.compile(r"^([MLT])#\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Located:
    path: str
    line: int
    handle: str
    aliases: tuple[str, ...]
    date: str
    markdown: str  # the bullet's line as written


@dataclass(frozen=True)
class LocateResult:
    query: str
    count: int
    matches: tuple[Located, ...]


@dataclass(frozen=True)
class VaultFound:
    """`brain locate` with no handle: the vault's folder and what named it."""

    vault: str
    origin: str  # --vault | BRAIN_VAULT | recorded (by `brain install`)


def where(option: str | Path | None = None) -> VaultFound:
    """The vault commands use, as they resolve it (brain.config.which_vault)."""
    from brain.config import which_vault

    path, origin = which_vault(option)
    return VaultFound(str(path), origin)


def split_prefix(query: str) -> tuple[str, str]:
    """(core file or "", name) for `M#name` style citations."""
    m = _PREFIX.match(query.strip())
    if m:
        return FILE_PREFIX[m.group(1).upper()], m.group(2)
    return "", query


def locate(vault: Path, query: str) -> LocateResult:
    path, name = split_prefix(query)
    key = handle_key(name)
    if not key:
        raise UsageError("locate needs a handle", "e.g. brain locate 'blue green deploys'")
    conn = index.open_index(vault)
    try:
        rows = conn.execute(
            "SELECT path, line, handle, aliases, date, raw FROM units WHERE kind = 'bullet'"
            " ORDER BY path, line"
        ).fetchall()
    finally:
        conn.close()
    by_handle: list[Located] = []
    by_alias: list[Located] = []
    for rel, line, handle, aliases, date, raw in rows:
        if path and rel != path:
            continue
        names = split_aliases(aliases)
        found = Located(rel, line, handle, names, date, raw)
        if handle_key(handle) == key:
            by_handle.append(found)
        elif any(handle_key(a) == key for a in names):
            by_alias.append(found)
    matches = tuple(by_handle + by_alias)  # a handle outranks an alias that spells the same
    return LocateResult(query, len(matches), matches)


def missing(result: LocateResult) -> BrainError:
    """What a person reads when nothing matched (JSON answers the empty list instead)."""
    from brain.text import mask_secrets

    path, name = split_prefix(result.query)
    where = f" in {path}" if path else ""
    # masked before repr: an escape it writes (`\\t`) would hide a credential from the output step
    return BrainError(
        f"no bullet is named {mask_secrets(name.strip())!r}{where}",
        f"search for it: brain find {shlex.quote(name.strip())}",
    )
