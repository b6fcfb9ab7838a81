"""`brain lint`: every core-file bullet parses, ends in a valid date, has a unique handle, and
carries no literal credential. `--staged` checks what the commit will hold, not the work tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brain import gitutil, secrets
from brain import vault as vaultmod
from brain.config import CORE_FILES, SYNONYMS
from brain.errors import BrainError
from brain.search import words


@dataclass(frozen=True)
class LintResult:
    files: tuple[str, ...]  # what was checked
    bullets: int
    problems: tuple[vaultmod.Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def _normalise(vault: Path, paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        path = Path(p)
        absolute = path if path.is_absolute() else Path.cwd() / path
        try:
            out.append(absolute.resolve().relative_to(vault).as_posix())
        except ValueError:
            # a vault-relative path; `vault / p` would be `p` itself for an absolute one
            inside = (vault / path).resolve()
            if not path.is_absolute() and inside.is_relative_to(vault):
                out.append(inside.relative_to(vault).as_posix())
            else:
                raise BrainError(
                    f"{p} is not inside the vault {vault}",
                    "name files inside the vault, or none to check them all",
                ) from None
    return out


def lint(vault: Path, paths: list[str] | None = None, *, staged: bool = False) -> LintResult:
    """Check the vault's core files (or the named ones, or the staged ones)."""
    wanted = set(_normalise(vault, paths)) if paths else None
    if wanted and not staged:
        absent = sorted(p for p in wanted if not (vault / p).is_file())
        if absent:
            raise BrainError(f"no such file in the vault: {absent[0]}", "check the path")
    if staged:
        if not gitutil.is_repo(vault):
            raise BrainError(
                f"{vault} is not a git repository, so nothing is staged",
                "run lint without --staged",
            )
        scope = [p for p in gitutil.staged_paths(vault) if wanted is None or p in wanted]

        def read(rel: str) -> bytes | None:
            return gitutil.staged_blob(vault, rel)
    else:
        scope = [*CORE_FILES, SYNONYMS] if wanted is None else sorted(wanted)

        def read(rel: str) -> bytes | None:
            try:
                return (vault / rel).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                return None

    checked = [p for p in scope if p in CORE_FILES or p == SYNONYMS or p.endswith(".md")]
    problems: list[vaultmod.Problem] = []
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
    problems.sort(key=lambda p: (p.path, p.line))
    return LintResult(tuple(checked), bullets, tuple(problems))
