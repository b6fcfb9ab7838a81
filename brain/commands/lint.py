"""`brain lint`: every core-file bullet parses, ends in a valid date, has a unique handle, and
carries no literal credential; no line the index reads holds what the guard flags (brain/guard.py).
`--staged` checks what the commit will hold, not the work tree."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from brain import gitutil, secrets
from brain import vault as vaultmod
from brain.config import CORE_FILES, SYNONYMS
from brain.errors import BrainError
from brain.search import words


def read_file(vault: Path, rel: str) -> tuple[bytes | None, vaultmod.Problem | None]:
    """A vault file's bytes (None when it does not exist), or None and why it was not read: a link
    out of the vault is not followed, and a file that cannot be read is never taken as clean."""
    path = vault / rel
    why = vaultmod.link_problem(path, vault)
    if why:
        return None, vaultmod.Problem(rel, 0, why)
    try:
        return path.read_bytes(), None
    except (FileNotFoundError, IsADirectoryError):
        return None, None
    except OSError as exc:
        return None, vaultmod.Problem(rel, 0, f"cannot read it ({exc.strerror}); not checked")


@dataclass(frozen=True)
class LintResult:
    files: tuple[str, ...]  # what was checked
    bullets: int
    problems: tuple[vaultmod.Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _inside(vault: Path, path: Path) -> str | None:
    """`path` as a vault-relative '/'-path, or None. Its folder is resolved (the working directory
    may be reached through a link) but not the file itself: a link out of the vault is named as
    what it is when it is read, not as a path outside."""
    absolute = Path(os.path.normpath(path.absolute()))
    for candidate in (absolute, absolute.parent.resolve() / absolute.name):
        if candidate.is_relative_to(vault):
            rel = candidate.relative_to(vault).as_posix()
            return None if rel == "." else rel
    return None


def _normalise(vault: Path, paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        path = Path(p)
        # relative to the working directory, else to the vault (never for an absolute path)
        rel = _inside(vault, path)
        if rel is None and not path.is_absolute():
            rel = _inside(vault, vault / path)
        if rel is None:
            raise BrainError(
                f"{p} is not inside the vault {vault}",
                "name files inside the vault, or none to check them all",
            )
        out.append(rel)
    return out


def _source(
    vault: Path, wanted: set[str] | None, staged: bool, unread: dict[str, vaultmod.Problem]
) -> tuple[list[str], Callable[[str], bytes | None]]:
    """(the files to check, how to read one): the git index, or the work tree, where a file that
    is not read goes into `unread` with the reason."""
    if staged:
        if not gitutil.is_repo(vault):
            raise BrainError(
                f"{vault} is not a git repository, so nothing is staged",
                "run lint without --staged",
            )
        scope = [p for p in gitutil.staged_paths(vault) if wanted is None or p in wanted]
        return scope, lambda rel: gitutil.staged_blob(vault, rel)

    def read(rel: str) -> bytes | None:
        data, skipped = read_file(vault, rel)
        if skipped is not None:
            unread[rel] = skipped
        return data

    if wanted is not None:
        return sorted(wanted), read
    # the core files and synonyms for everything; the notes for the guard, as the index reads them
    notes = [p for p in vaultmod.indexed(vault).files if p not in CORE_FILES and p != SYNONYMS]
    return [*CORE_FILES, SYNONYMS, *notes], read


def lint(vault: Path, paths: list[str] | None = None, *, staged: bool = False) -> LintResult:
    """Check the vault's core files (or the named ones, or the staged ones)."""
    wanted = set(_normalise(vault, paths)) if paths else None
    if wanted and not staged:
        absent = sorted(p for p in wanted if not (vault / p).is_file())
        if absent:
            raise BrainError(f"no such file in the vault: {absent[0]}", "check the path")
    unread: dict[str, vaultmod.Problem] = {}
    scope, read = _source(vault, wanted, staged, unread)
    checked = [p for p in scope if p in CORE_FILES or p == SYNONYMS or p.endswith(".md")]
    problems: list[vaultmod.Problem] = []
    if wanted is None and not staged:
        # what the index skips (links out of the vault, names that are not UTF-8): reindex counts
        # these as problems and sends people here to see them
        problems += [p for p in vaultmod.indexed(vault).skipped if p.path not in checked]
    bullets = 0
    # Handles must be unique across all three core files, so all three are read whatever the scope.
    seen: dict[str, tuple[str, int]] = {}
    for rel in CORE_FILES:
        data = read(rel)
        if data is None:
            continue
        parsed = vaultmod.parse(rel, data)
        text, _ = vaultmod.decode(data, rel)
        lines = text.split("\n")
        in_scope = rel in checked
        if in_scope:
            problems += parsed.problems
        for unit in parsed.units:
            if unit.kind != "bullet":
                continue
            bullets += in_scope
            key = " ".join(words(unit.handle))
            first = seen.get(key)
            if first is None:
                seen[key] = (rel, unit.line)
            elif in_scope:
                problems.append(
                    vaultmod.Problem(
                        rel,
                        unit.line,
                        f"duplicate handle {unit.handle!r} (first at {first[0]}:{first[1]}); "
                        "rename one or merge them",
                    )
                )
            if in_scope:
                for rule, masked in secrets.scan_line(lines[unit.line - 1]):
                    problems.append(
                        vaultmod.Problem(
                            rel,
                            unit.line,
                            f"bullet carries a credential ({rule}: {masked}); remove it and keep "
                            "secrets in a password manager",
                        )
                    )
    for rel in checked:
        if rel in CORE_FILES:
            continue
        data = read(rel)
        if data is None:
            continue
        text, decode_problems = vaultmod.decode(data, rel)
        problems += decode_problems
        if rel == SYNONYMS:
            problems += vaultmod.parse_synonyms(text, rel)[1]
        else:
            problems += vaultmod.guarded(vaultmod.blank_comments(text), rel)
    problems += [p for rel, p in unread.items() if rel in checked]
    problems.sort(key=lambda p: (p.path, p.line))
    return LintResult(tuple(checked), bullets, tuple(problems))
